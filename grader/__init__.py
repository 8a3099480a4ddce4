"""attn-grade: auto-graded exercises on transformer self-attention."""

__version__ = "0.1.0"
