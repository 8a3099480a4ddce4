"""Which draw of its hidden inputs grades a submission's exercise.

A hidden YAML check's drawn inputs (``!random``, ``!randint``, ``!model``) come from one
of ``DRAWS`` seed offsets, picked for each exercise by a keyed hash: the key is a secret
of the course (a digest of the set's ``solutions/`` folder, which students never see),
the message the exercise's own stub file.  So inputs a student saw once (through a leak
the sandbox missed) are worth nothing after any change to that file, the same file is
always graded on the same inputs (a regrade, ``--exercise`` and the whole set agree), and
nobody without the solutions can tell which draw a file gets.  ``dev check`` proves the
references on every draw (``DRAWS`` seeds at least).  Visible checks and per-student
numbers are never redrawn: what a student is shown is what they are graded on.
"""

import dataclasses
import functools
import hashlib
import hmac
import os
from collections.abc import Collection
from pathlib import Path

from ..files import read_bounded
from . import cache
from .limits import STUB_BYTES
from .spec import Course, ExerciseSet

DRAWS = 4


def drawn(exercise_set: ExerciseSet, folder: str | Path,
          only: Collection[str] | None = None) -> ExerciseSet:
    """``exercise_set`` (loaded with seed offset 0) with each exercise (of ``only``, when
    given) in the draw its file in ``folder`` gets."""
    secret = _secret(str(exercise_set.solutions_dir), _stamp(exercise_set.solutions_dir))
    if not secret:   # no solutions here: no hidden checks to draw for
        return exercise_set
    picks = {e.id: pick(secret, _file_bytes(Path(folder) / e.file))
             if only is None or e.id in only else 0 for e in exercise_set.exercises}
    if not any(picks.values()):
        return exercise_set
    from .loader import load_set

    course = Course(exercise_set.solutions_dir.parent.parent)
    sets = {n: load_set(course, exercise_set.id, seed_offset=n,
                        only=[ex_id for ex_id, k in picks.items() if k == n])
            for n in set(picks.values()) - {0}}
    chosen = {e.id: e for drawn_set in sets.values() for e in drawn_set.exercises}
    return dataclasses.replace(exercise_set, exercises=tuple(
        chosen.get(e.id, e) if picks[e.id] else e for e in exercise_set.exercises))


def pick(secret: bytes, data: bytes) -> int:
    """The draw (0 .. DRAWS-1) of a file with contents ``data``."""
    return int.from_bytes(hmac.new(secret, data, hashlib.sha256).digest()[:8], "big") % DRAWS


def _file_bytes(path: Path) -> bytes:
    """The file's bytes; a file that cannot be read here (a link, too large, missing) is
    drawn by a marker of that.  An upload refuses such a file before grading, but a
    folder graded in place (--submission, watch) still grades a link's target: its draw
    is then fixed (left open, see the issue 28 note)."""
    try:
        return b"file\0" + read_bounded(path, STUB_BYTES)
    except OSError as exc:
        return f"unreadable\0{type(exc).__name__}".encode()


def _stamp(folder: Path) -> tuple:
    """What changes when the solutions do (sizes, inodes, change times), for the memo."""
    out = []
    for path in cache.set_files(folder):
        try:
            info = os.stat(path)
        except OSError:
            continue
        out.append((path, info.st_size, info.st_ino, info.st_ctime_ns))
    return tuple(out)


@functools.lru_cache(maxsize=8)
def _secret(folder: str, stamp: tuple) -> bytes:
    """A digest of every file of the set's solutions/ folder (names and contents)."""
    digest = hashlib.sha256(b"attn-grade draws\0")
    for path, *_ in stamp:
        try:
            data = Path(path).read_bytes()
        except OSError:
            continue
        digest.update(os.path.relpath(path, folder).encode() + b"\0"
                      + hashlib.sha256(data).digest())
    return digest.digest() if stamp else b""
