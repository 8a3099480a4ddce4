"""Instructor tools: dev check, release, class grading, Gradescope."""
