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
import stat
from collections.abc import Collection
from pathlib import Path

from . import cache
from .limits import STUB_BYTES
from .spec import Course, ExerciseSet

DRAWS = 4


def drawn(exercise_set: ExerciseSet, folder: str | Path,
          only: Collection[str] | None = None) -> ExerciseSet:
    """``exercise_set`` (loaded with seed offset 0) with each exercise (of ``only``, when
    given) in the draw its file in ``folder`` gets."""
    secret = course_secret(exercise_set.solutions_dir)
    if not secret:   # no solutions here: no hidden checks to draw for
        return exercise_set
    picks = {e.id: pick(secret, _file_bytes(Path(folder) / e.file))
             if only is None or e.id in only else 0 for e in exercise_set.exercises}
    if not any(picks.values()):
        return exercise_set
    from .loader import load_set

    course = Course(exercise_set.solutions_dir.parent.parent)
    # each draw's exercises only (a cold run stores them for the next, which reads them
    # instead of parsing, and importing sympy for symbolic inputs)
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
    """What the grading imports from ``path``, to draw by: a link that stays in its folder
    is read through (the staged copy keeps the link, which resolves there too); a file
    over STUB_BYTES by its first STUB_BYTES and its size; a link out of the folder, or a
    file that cannot be read, by a marker of that (the sandbox cannot import it either).
    Only a digest of this leaves here, never the bytes."""
    folder = os.path.realpath(path.parent)
    real = os.path.realpath(path)
    if not real.startswith(folder + os.sep):
        return b"outside\0"
    try:
        fd = os.open(real, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
    except OSError as exc:
        return f"unreadable\0{type(exc).__name__}".encode()
    with os.fdopen(fd, "rb") as f:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            return b"not a file\0"
        data = f.read(STUB_BYTES)
    return b"file\0" + data + (b"" if info.st_size <= STUB_BYTES else b"\0%d" % info.st_size)


def course_secret(folder: Path) -> bytes:
    """A digest of every file of the set's solutions/ folder (names and contents); b""
    without any.  Kept while the files' stamps stay the same (and have settled)."""
    files = cache.set_files(folder)
    found = cache.stamps(files)
    if found is not None and cache.settled(found):
        return _kept_secret(str(folder), found)
    return _digest(str(folder), files)


@functools.lru_cache(maxsize=8)
def _kept_secret(folder: str, found: tuple) -> bytes:
    return _digest(folder, [entry[0] for entry in found])


def _digest(folder: str, files: list[str]) -> bytes:
    digest = hashlib.sha256(b"attn-grade draws\0")
    for path in files:
        try:
            data = Path(path).read_bytes()
        except OSError:
            continue
        digest.update(os.path.relpath(path, folder).encode() + b"\0"
                      + hashlib.sha256(data).digest())
    return digest.digest() if files else b""
