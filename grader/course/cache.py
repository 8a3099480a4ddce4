"""Loaded sets kept on disk, so a grading reads one file instead of parsing YAML.

The key is a hash of everything a load depends on: the grader's version and
its course-loading code, the Python, the course's folder (the spec holds its
paths), the seed offset, and the files of the
set (the contents of every YAML and data file under exercises/SET and
solutions/SET, the names of the Python files there; a student editing a stub
in place does not invalidate it).  A changed file makes a new key.

The course is trusted data, so the entries are pickles; that is safe only
because nobody else can write them: the folder is the grader user's own
(0700) and an entry that is not a regular file of this user, writable by
no one else, is ignored.  Each exercise is pickled on its own, so grading
one exercise unpickles (and imports) only what that exercise needs; its sympy
values (symbolic inputs) are kept as their wire trees (``wire.Lazy``), so that
reading a set imports no sympy (a quarter of a second).
"""

import dataclasses
import hashlib
import io
import os
import pickle
import stat
import sys
import tempfile
import time
from collections.abc import Callable, Collection
from pathlib import Path
from typing import Any

RACY_NS = 2_000_000_000
SKIPPED_FOLDERS = {"__pycache__", ".attn-grade", ".ipynb_checkpoints"}
ENV_SWITCH = "ATTN_GRADE_SPEC_CACHE"   # "off": always parse


def folder() -> Path:
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "attn-grade" / "specs"


# This process's keys, by the stamps (size, mtime, ctime, inode) of the files hashed into them,
# and the entries it read, unpickled: a worker's, watch's or dev check's next load of
# an unchanged set reads and hashes no file and unpickles nothing.
_KEYS: dict[tuple, tuple[tuple, str]] = {}
_LOADED: dict[str, dict[str, Any]] = {}      # by the entry's path
_EXERCISES: dict[tuple[str, str], Any] = {}   # (the entry's path, exercise id) -> Exercise


def key(course_root: Path, set_id: str, seed_offset: int) -> str:
    """The hash that names the cache entry of one loaded set."""
    asked = (str(course_root), set_id, seed_offset)
    files = [path for top in (course_root / "exercises" / set_id,
                              course_root / "solutions" / set_id) for path in set_files(top)]
    now = stamps(files)
    known = _KEYS.get(asked)
    if now is not None and known is not None and known[0] == now:
        return known[1]
    found = _key(course_root, set_id, seed_offset, files)
    if now is not None and settled(now):
        _KEYS[asked] = (now, found)
    return found


def settled(found: tuple) -> bool:
    """Whether no file of these ``stamps`` changed in the last seconds: one that did may
    change again with the same stamps (the clock's grain), so they prove nothing yet
    (git's "racy" files).  Its ctime says when, not its mtime: cp -p, tar or unzip write
    a file and date it back."""
    recent = time.time_ns() - RACY_NS
    return all(ctime < recent for *_, ctime, _ in found)


def stamps(files: list[str]) -> tuple | None:
    """Each file's path, size, mtime, ctime and inode; None if one cannot be read (a
    dangling link named *.py, whose name alone is hashed; a file gone meanwhile)."""
    found = []
    for path in files:
        try:
            info = os.stat(path)
        except OSError:
            return None
        found.append((path, info.st_size, info.st_mtime_ns, info.st_ctime_ns, info.st_ino))
    return tuple(found)


def _key(course_root: Path, set_id: str, seed_offset: int, files: list[str]) -> str:
    """The hash of the set's ``files`` (their paths; the contents of all but its
    Python), of the code that loads them and of how they are loaded."""
    from .. import __version__

    digest = hashlib.sha256()
    for part in (__version__, sys.version, str(course_root.resolve()), set_id, str(seed_offset)):
        digest.update(part.encode() + b"\0")
    code = Path(__file__).parent
    for module in [*sorted(code.glob("*.py")), code.parent / "wire.py"]:
        info = module.stat()
        digest.update(f"{module.name}:{info.st_size}:{info.st_mtime_ns}\0".encode())
    for path in files:
        digest.update(os.path.relpath(path, course_root).encode() + b"\0")
        if not path.endswith(".py"):
            digest.update(hashlib.sha256(Path(path).read_bytes()).digest())
    return digest.hexdigest()


def answers_key(course_root: Path, set_id: str) -> str | None:
    """The name of the entry of a set's reference answers: the set's key, the contents
    of its solutions' Python files, the code that calls them (run/references.py) and
    where numpy and sympy are installed (and when); None when the cache is switched off.
    What else a solution reads (another library, a file outside the set) is not in it."""
    import importlib.util

    if os.environ.get(ENV_SWITCH) == "off":
        return None
    digest = hashlib.sha256(key(course_root, set_id, 0).encode())
    caller = Path(__file__).parents[1] / "run" / "references.py"
    digest.update(hashlib.sha256(caller.read_bytes()).digest())
    for path in set_files(course_root / "solutions" / set_id):
        if path.endswith(".py"):
            digest.update(os.path.basename(path).encode() + b"\0"
                          + hashlib.sha256(Path(path).read_bytes()).digest())
    for library in ("numpy", "sympy"):
        spec = importlib.util.find_spec(library)
        origin = spec.origin if spec is not None and spec.origin else ""
        stamp = os.stat(origin).st_mtime_ns if origin else 0
        digest.update(f"{library}:{origin}:{stamp}\0".encode())
    return "answers-" + digest.hexdigest()


def set_files(top: Path) -> list[str]:
    """The set's files under ``top``, in a fixed order (paths as strings: a worker
    walks them twice a student)."""
    found = []
    for here, dirs, files in os.walk(top):
        dirs[:] = sorted(d for d in dirs if d not in SKIPPED_FOLDERS and not d.startswith("."))
        found += [os.path.join(here, f) for f in sorted(files) if not f.startswith(".")]
    return found


def remembered(fact: str) -> bool:
    """Whether ``fact`` (a file name) was remembered here, in a file safely ours."""
    try:
        info = os.lstat(folder().parent / fact)
    except OSError:
        return False
    return _ours(info) and stat.S_ISREG(info.st_mode)


def remember(fact: str) -> None:
    """Remember a fact that only ever makes a check unnecessary, never a result."""
    try:
        folder().parent.mkdir(mode=0o700, parents=True, exist_ok=True)
        (folder().parent / fact).touch(mode=0o600)
    except OSError:
        pass


def read(name: str) -> dict[str, Any] | None:
    """The entry, if it is there and safely ours; None otherwise."""
    path = folder() / name
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC)
    except OSError:
        return None
    with os.fdopen(fd, "rb") as f:
        if not _ours(os.fstat(f.fileno())) or not _ours(os.stat(path.parent)):
            return None
        try:
            entry = pickle.load(f)
        except Exception:   # a torn or stale entry is a miss, never an error
            return None
    return entry if isinstance(entry, dict) else None


def _ours(info: os.stat_result) -> bool:
    return info.st_uid == os.geteuid() and not info.st_mode & 0o022 and \
        (stat.S_ISREG(info.st_mode) or stat.S_ISDIR(info.st_mode))


def write(name: str, entry: dict[str, Any]) -> None:
    """Store an entry atomically; a cache that cannot be written is no cache."""
    try:
        target = folder()
        target.mkdir(mode=0o700, parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=target, prefix=".tmp-")
        with os.fdopen(fd, "wb") as f:
            pickle.dump(entry, f, protocol=pickle.HIGHEST_PROTOCOL)
        os.replace(tmp, target / name)
    except OSError:
        pass


def cached(course_root: Path, set_id: str, seed_offset: int,
           load: Callable[[Collection[str] | None], tuple[Any, list[str]]],
           only: Collection[str] | None) -> tuple[Any, list[str]]:
    """(the set ``load`` gives, the ids of all its exercises), from the cache when it can
    be.  ``only``: the exercises wanted (all when None), the only ones unpickled.

    ``load(ids)`` parses (the set with those exercises, or all, the ids of all).  An entry
    holds the exercises parsed so far, each on its own: a cold run of one exercise parses
    and stores that one, and a later run parses only what is not stored yet."""
    name = key(course_root, set_id, seed_offset)
    if os.environ.get(ENV_SWITCH) == "off":
        loaded, ids = load(only)
        return _sourced(loaded, name), ids
    where = str(folder() / name)   # the memory mirrors that file
    entry = _LOADED.get(where) or read(name)
    stored = entry["exercises"] if entry else {}
    wanted = entry["ids"] if entry and only is None else only
    missing = None if wanted is None else [i for i in wanted if i not in stored]
    fresh = {}
    if entry is None or missing:
        loaded, ids = load(missing)
        fresh = {e.id: e for e in _sourced(loaded, name).exercises}
        entry = _stored(name, entry, fresh, dataclasses.replace(loaded, exercises=()), ids)
    _LOADED[where] = entry
    exercises = tuple(fresh.get(ex_id) or _exercise(where, ex_id, entry["exercises"][ex_id])
                      for ex_id in entry["ids"]
                      if ex_id in entry["exercises"] and (only is None or ex_id in only))
    return dataclasses.replace(entry["set"], exercises=exercises), list(entry["ids"])


def _stored(name: str, entry: dict[str, Any] | None, fresh: dict[str, Any], bare: Any,
            ids: list[str]) -> dict[str, Any]:
    """``entry`` (or a new one) with the ``fresh`` exercises added, written back; ``bare``:
    the set without its exercises."""
    merged = {"set": bare, "ids": list(ids),
              "exercises": dict(entry["exercises"]) if entry else {},
              "modules": dict(entry["modules"]) if entry else {}}
    for ex_id, exercise in fresh.items():
        merged["exercises"][ex_id] = _dumps(exercise)
        merged["modules"][ex_id] = exercise.child_modules
    write(name, merged)
    return merged


def _sourced(loaded: Any, name: str) -> Any:
    """The set with each exercise marked by the key of the files it came from."""
    return dataclasses.replace(loaded, exercises=tuple(
        dataclasses.replace(e, source=name) for e in loaded.exercises))


def _exercise(where: str, ex_id: str, blob: bytes) -> Any:
    """One exercise of an entry, unpickled once per process (an Exercise is frozen)."""
    if (where, ex_id) not in _EXERCISES:
        _EXERCISES[where, ex_id] = pickle.loads(blob)
    return _EXERCISES[where, ex_id]


def _dumps(exercise: Any) -> bytes:
    buffer = io.BytesIO()
    _LazySympy(buffer, pickle.HIGHEST_PROTOCOL).dump(exercise)
    return buffer.getvalue()


class _LazySympy(pickle.Pickler):
    """Pickles each sympy value as a ``wire.Lazy`` of its tree (the values' own format
    on the wire, which the grader reads without sympy).

    A value that has no tree the wire reads back (``erf(x) + y``, a Matrix, a symbol
    the wire refuses) is pickled whole, as plain pickle does: left to this pickler,
    its parts would become Lazy trees that its own constructor cannot take back.
    """

    def reducer_override(self, obj: Any) -> Any:
        if not (type(obj).__module__ or "").startswith("sympy."):
            return NotImplemented
        from .. import wire

        try:   # the tree, checked as an answer's is (a Lazy is never built unchecked)
            lazy = wire.decode(wire.encode(obj), lazy=True)
        except Exception:   # any sympy object the wire cannot write or read back
            lazy = None
        if type(lazy) is not wire.Lazy:
            return pickle.loads, (pickle.dumps(obj, pickle.HIGHEST_PROTOCOL),)
        return wire.Lazy, (lazy.tree,)


def child_modules(course_root: Path, set_id: str, only: Collection[str] | None) -> tuple | None:
    """What the exercises' processes import besides numpy, from the cache entry alone
    (nothing unpickled, nothing imported); None until every exercise asked is stored."""
    if os.environ.get(ENV_SWITCH) == "off":
        return None
    entry = read(key(course_root, set_id, 0))
    if entry is None or not isinstance(entry.get("modules"), dict):
        return None
    known = entry["modules"]
    wanted = entry.get("ids", known) if only is None else only
    if any(ex_id not in known for ex_id in wanted):   # not all parsed yet
        return None
    return tuple(sorted(set().union(*(known[ex_id] for ex_id in wanted))))
