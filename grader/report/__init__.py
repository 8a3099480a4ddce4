"""Phrasing results for people: messages, terminal, JSON."""
