"""Writing reports so that a reader never sees half a file."""

import os
from pathlib import Path


def write_atomic(path: str | os.PathLike[str], data: str | bytes) -> None:
    """Write text or bytes to ``path`` through a temporary file and a rename."""
    path = Path(path)
    tmp = path.with_name(path.name + ".tmp")
    if isinstance(data, bytes):
        tmp.write_bytes(data)
    else:
        tmp.write_text(data, encoding="utf-8")
    os.replace(tmp, path)
