"""The trusted side: answers against references -> results."""
