"""attn-grade: auto-graded exercises on transformer self-attention."""

import os as _os

__version__ = "0.2.0"   # the one version source; pyproject.toml reads it

# The grader's own numpy works on small arrays: one BLAS thread.  Idle BLAS threads
# spin for a while after each call, and every fork of a threaded process (the
# judge's, the hidden tests') copies a process that is busy elsewhere.  Set before
# numpy is imported; a value the user set wins.
for _name in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    _os.environ.setdefault(_name, "1")
