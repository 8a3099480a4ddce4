"""``python -I -S FOLDER``: the copied package started as a folder.

Python runs this file as a script, with the folder itself first on ``sys.path``;
its siblings import one another relatively, so the package is imported by its
folder's name (``_attn_grade_child``) from the folder above (the run's runtime/,
where the wire module is too), which stays first on ``sys.path`` as the script's
folder did before.
"""

import importlib
import os
import sys

if __name__ == "__main__":
    here = os.path.dirname(os.path.abspath(__file__))
    sys.path[0] = os.path.dirname(here)
    importlib.import_module(os.path.basename(here) + ".start").run()
