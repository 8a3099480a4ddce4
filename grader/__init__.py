"""attn-grade: auto-graded exercises on transformer self-attention."""

__version__ = "0.2.0"   # the one version source; pyproject.toml reads it
