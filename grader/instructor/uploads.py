"""Finding a student's stub files in an upload of any layout.

Students upload what they have: the edited stub files alone, the folder they
worked in, or the whole release bundle (``grader/``, ``exercises/SET/``,
README...). Each of the set's stub files is looked for by name, strictly
inside the upload, and copied into a fresh folder of the grader's own, which is
what gets graded. So nothing else in the upload (a folder named like the
course's ``solutions/``, a link out of it, a copy of the grader, an odd file
name) can choose what is graded; two candidates for one file are an error that
names both, never a guess.
"""

import errno
import hashlib
import os
import shutil
import stat
from collections.abc import Iterable
from pathlib import Path

from ..course.limits import STUB_BYTES
from ..course.spec import Exercise
from ..files import NotRegular, TooLarge, read_bounded
from ..judge.msg import Msg
from ..report.render import render

# folders never searched: the grader and solutions are not the student's work
SKIPPED_FOLDERS = frozenset({"grader", "solutions", "__pycache__", "__MACOSX"})
MAX_FILE_BYTES = STUB_BYTES     # a stub file larger than this is refused
MAX_ENTRIES = 20000             # files and folders looked at in one upload


class SubmissionError(Exception):
    """A problem with what a student uploaded, worded for the student: ``msg``, phrased
    in their language by whoever shows it (``str()`` is its English, for logs)."""

    def __init__(self, msg: Msg):
        super().__init__(render(msg, "en"))
        self.msg = msg

    def said(self, lang: str) -> str:
        return render(self.msg, lang)


def stub_names(exercises: Iterable[Exercise]) -> tuple[str, ...]:
    """The file names students edit, e.g. ('attention.py', 'temperature.py')."""
    return tuple(sorted({exercise.file for exercise in exercises}))


def find_stub_files(upload: str | Path, names: Iterable[str]) -> dict[str, Path]:
    """{name: path} of each stub file in the folder ``upload``, links not followed."""
    upload = Path(upload)
    wanted, seen = set(names), 0
    found: dict[str, Path] = {}
    for folder, dirs, files in os.walk(upload, followlinks=False):
        dirs[:] = sorted(d for d in dirs if not _skipped(d))
        seen += len(dirs) + len(files)
        if seen > MAX_ENTRIES:
            raise SubmissionError(Msg("upload-too-many", limit=MAX_ENTRIES))
        for name in sorted(wanted.intersection(files)):
            path = Path(folder) / name
            if not _is_regular(path):
                continue
            if name in found:
                raise SubmissionError(Msg("upload-two-files", name=name,
                                          first=str(found[name].relative_to(upload)),
                                          second=str(path.relative_to(upload))))
            found[name] = path
    return found


def _is_regular(path):
    """A regular file itself, not a link to one (a link could point out of the upload)."""
    try:
        return stat.S_ISREG(os.lstat(path).st_mode)
    except OSError:
        return False


def _skipped(folder_name):
    return folder_name.startswith(".") or folder_name in SKIPPED_FOLDERS


def collect(upload: str | Path, names: Iterable[str], into: Path,
            data_from: Path | None = None) -> list[str]:
    """Copy the stub files found in ``upload`` into the new folder ``into``; their names.

    The data files of the course's ``data_from`` folder (``exercises/SET``:
    ``models/``...) are copied beside them, the course's own and not the
    upload's, so a student's code that reads ``models/`` next to its file still
    works. ``into`` is readable by others, so that a child running as 'nobody'
    (``run.inside.confine.drop_privileges``) can still read it.
    """
    found = find_stub_files(upload, names)
    into = Path(into)
    into.mkdir(mode=0o755)
    into.chmod(0o755)
    if found and data_from is not None:
        _copy_data(Path(data_from), into)
    for name, path in found.items():
        (into / name).write_bytes(_read_regular(path, name))
        (into / name).chmod(0o644)
    return sorted(found)


def _copy_data(source, into):
    """The set's data files and folders: all but YAML, Python and hidden files."""
    def ignored(folder, entries):
        return [e for e in entries if e.startswith(".") or e == "__pycache__"
                or e.endswith((".yaml", ".py"))]

    shutil.copytree(source, into, ignore=ignored, dirs_exist_ok=True)


def _read_regular(path, name):
    """The bytes of a regular file, opened without following a link, bounded."""
    try:
        return read_bounded(path, MAX_FILE_BYTES)
    except NotRegular:
        raise SubmissionError(Msg("upload-not-regular", name=name)) from None
    except TooLarge:
        raise SubmissionError(Msg("upload-too-large", name=name,
                                  limit=MAX_FILE_BYTES // 1024)) from None
    except OSError as exc:
        raise SubmissionError(Msg("upload-unreadable", name=name,
                                  code=errno.errorcode.get(exc.errno or 0, "?"))) from None


def content_hash(folder: str | Path, names: Iterable[str]) -> str:
    """sha256 of the stub files in ``folder`` (names and bytes), to notice a resubmission."""
    digest = hashlib.sha256()
    for name in sorted(names):
        path = Path(folder) / name
        if path.is_file():
            data = _read_regular(path, name)
            digest.update(f"{name}\0{len(data)}\0".encode())
            digest.update(data)
    return digest.hexdigest()
