"""``attn-grade grade-all``: a class of submissions -> one results JSON each + a CSV.

Each student is graded in a sandbox of its own by one of a few worker processes
(see ``batch``), so a submission that crashes, hangs or breaks every limit costs only
its own row.
A submission's stub files are found by name and copied into a private folder
first (``submission_files``), the same way the Gradescope bundle does it; the
hash of those files is kept in the result, so a re-run grades again exactly the
students whose files changed.
"""

import contextlib
import csv
import dataclasses
import errno
import hashlib
import io
import json
import os
import shutil
import sys
import tempfile
import unicodedata
import zipfile
from collections.abc import Callable, Collection
from pathlib import Path
from typing import Any

from ..course.spec import Course, ExerciseSet
from ..errors import CourseError
from ..files import write_atomic
from ..judge.msg import Msg
from ..report import render as report
from ..run import sandbox
from . import batch, notebook_cells
from . import uploads as submission_files
from .grade_job import GradeJob

MAX_ZIP_BYTES = 64 * 1024 ** 2
MAX_ZIP_FILES = 2000
MAX_ID_CHARS = 100
# spreadsheet programs run a cell that starts with one of these as a formula
FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r", "\n")


@dataclasses.dataclass(frozen=True)
class Submission:
    """One row of the gradebook: a student's folder or zip (or a problem with it)."""

    student: str            # the id shown in the gradebook
    key: str                # results/KEY.json: a safe file name, unique in the class
    paths: tuple            # the folder or .zip (every one of them for a name clash)
    problem: Msg | None = None  # why it cannot be graded (said in grade-all's --lang)


def find_submissions(folder: str | Path) -> list[Submission]:
    """A Submission for each sub-folder, .zip or .ipynb of ``folder`` (hidden folders
    skipped); a notebook's code cells are its stub files (``notebook_cells``).

    A folder and a zip with one name (``alice/``, ``alice.zip``), or names
    differing only in case, are one error row naming all of them: which one is
    the student's work is for a person to decide.
    """
    groups: dict[str, list[tuple[str, Path]]] = {}
    for path in sorted(Path(folder).iterdir()):
        if path.is_dir() and not path.name.startswith("."):
            name = path.name
        elif path.is_file() and path.name.lower().endswith(".zip"):
            name = path.name[:-4]
        elif path.is_file() and path.name.lower().endswith(".ipynb"):
            name = path.name[:-6]
        else:
            continue
        groups.setdefault(name.casefold(), []).append((name, path))
    if not groups:
        raise CourseError("no submissions found (expected one folder, .zip or .ipynb per student)",
                          folder)
    return [submission for group in groups.values() for submission in _submissions(group)]


def _submissions(group):
    """The Submission(s) of entries whose names are the same student id."""
    unsafe = [(name, path) for name, path in group if unsafe_name(name)]
    out = [_unsafe(name, path) for name, path in unsafe]
    safe = [(name, path) for name, path in group if (name, path) not in unsafe]
    if len(safe) > 1:
        names = ", ".join(repr(_entry_name(path)) for _, path in safe)
        out.append(Submission(safe[0][0], safe[0][0], tuple(p for _, p in safe),
                              Msg("class-one-id", names=names)))
    elif safe:
        out.append(Submission(safe[0][0], safe[0][0], (safe[0][1],)))
    return out


def unsafe_name(name: str) -> Msg | None:
    """Why ``name`` cannot be a student id and a file name, or None if it can."""
    if not name:
        return Msg("class-name-empty")
    if name.startswith("."):
        return Msg("class-name-dot")
    if len(name) > MAX_ID_CHARS:
        return Msg("class-name-long", limit=MAX_ID_CHARS)
    if any(c in "/\\" or unicodedata.category(c).startswith("C") for c in name):
        return Msg("class-name-slash")
    return None


def _unsafe(name, path):
    """An error row for an entry whose name is refused; its file name is a hash."""
    shown = _entry_name(path).encode("unicode_escape").decode("ascii")
    digest = hashlib.sha256(_entry_name(path).encode("utf-8", "surrogateescape")).hexdigest()
    return Submission(shown, f"unsafe-name-{digest[:12]}", (path,),
                      Msg("class-rename", why=unsafe_name(name), name=repr(shown)))


def _entry_name(path):
    return path.name + ("/" if path.is_dir() else "")


def unpack(zip_path: Path, into: Path) -> None:
    """Extract a student's zip into the new folder ``into``, refusing unsafe members
    (SubmissionError)."""
    try:
        into.mkdir(mode=0o700)
        with zipfile.ZipFile(zip_path) as archive:
            members = [m for m in archive.infolist() if not m.is_dir()]
            if len(members) > MAX_ZIP_FILES or sum(m.file_size for m in members) > MAX_ZIP_BYTES:
                raise ValueError("the archive is too large")
            for member in members:
                target = (into / member.filename).resolve()
                if not str(target).startswith(str(into.resolve()) + os.sep):
                    raise ValueError(f"unsafe path {member.filename!r}")
                target.parent.mkdir(parents=True, exist_ok=True)
                with archive.open(member) as src, open(target, "wb") as dst:
                    shutil.copyfileobj(src, dst, 1 << 20)
    except (zipfile.BadZipFile, ValueError, OSError):
        raise submission_files.SubmissionError(
            Msg("class-bad-zip", name=zip_path.name)) from None


def grade_all(course: Course, exercise_set: ExerciseSet, submissions_dir: str | Path,
              out_dir: str | Path, jobs: int, job: GradeJob | None = None,
              force: bool = False, progress: Callable[[str], object] | None = None,
              only: Collection[str] | None = None,
              serve: Callable[[], object] | None = None,
              lang: str = "en") -> list[dict[str, Any]]:
    """Grade every submission (the exercises ``only``, or all); the gradebook rows.
    ``job``: what each student's GradeJob has besides their folder and id (isolation,
    limits; none: the defaults, in ``lang``); ``serve``: the CLI's grade-worker, for
    workers forked from this process (batch.Pool); ``lang``: what an upload's problem is
    said in."""
    template = job or GradeJob(exercise_set.id, str(course.root), lang=lang,
                               exercises=tuple(sorted(only or ())))
    exercises = [e for e in exercise_set.exercises if not only or e.id in only]
    results_dir = Path(out_dir) / "results"
    results_dir.mkdir(parents=True, exist_ok=True)
    students = find_submissions(submissions_dir)
    run = _ClassRun(exercise_set, exercises, results_dir, template, force, progress, lang)
    # the copies of the stub files go where run folders go (in memory, where it has room:
    # a journalled disk spent about a tenth of grade-all's own CPU making their inodes)
    with tempfile.TemporaryDirectory(prefix="attn-grade-class-",
                                     dir=sandbox.scratch_folder()) as tmp, \
            contextlib.ExitStack() as stack:
        os.chmod(tmp, 0o711)    # children running as 'nobody' reach their own copy only
        run.grade(students, tmp, jobs, serve, stack)
    max_score = round(sum(e.points for e in exercises), 4)
    rows = [_row(s.student, run.documents.get(s.key) or _read_result(
        results_dir / f"{s.key}.json", exercise_set.id, exercises, lang), max_score)
        for s in students]
    _write_csv(Path(out_dir) / "gradebook.csv", rows)
    return rows


class _ClassRun:
    """A class being graded: its submissions prepared in turn, those to grade given to
    the workers as they are found, and each one's results file written (``settle``)."""

    def __init__(self, exercise_set: ExerciseSet, exercises: list[Any], results_dir: Path,
                 template: GradeJob, force: bool,
                 progress: Callable[[str], object] | None, lang: str):
        self.exercise_set, self.exercises, self.results_dir = exercise_set, exercises, \
            results_dir
        self.template, self.force, self.progress, self.lang = template, force, progress, lang
        self.documents: dict[str, dict[str, Any]] = {}   # by key: what each row is read from
        self.commands: list[tuple[Submission, str, dict[str, Any]]] = []   # given out
        self.pool: batch.Pool | None = None

    def grade(self, students: list[Submission], tmp: str, jobs: int,
              serve: Callable[[], object] | None, stack: contextlib.ExitStack) -> None:
        """Prepare and grade ``students``: the workers start as students to grade are
        found, while the rest are prepared."""
        found = self.to_grade(students, tmp)
        for n, submission, digest, plain in found:
            if self.pool is None:
                self.pool = stack.enter_context(
                    # a run folder a killed worker leaves goes with tmp (Ctrl-C)
                    batch.Pool(min(jobs, len(students) - n), tmp, serve, start=0,
                               scratch=tmp))
            self.pool.add()
            self.commands.append((submission, digest, plain))
            if len(self.pool.workers) >= self.pool.jobs:
                break   # the others are prepared as the workers ask for them

        def grade_jobs():
            yield from [plain for _, _, plain in self.commands]
            for _, submission, digest, plain in found:
                self.commands.append((submission, digest, plain))
                yield plain

        if self.pool is not None:
            self.pool.run(grade_jobs(), on_done=self.done)

    def to_grade(self, students: list[Submission], tmp: str):
        """(index, submission, its hash, its GradeJob as plain data) of each submission
        to grade, prepared in turn; the others are settled here."""
        for n, submission in enumerate(students):
            if self.pool is not None and self.pool.closed:   # Ctrl-C: the pool waits for
                return                                       # this thread before tmp goes
            doc, folder, digest = _prepared(submission, self.exercise_set, self.exercises,
                                            tmp, self.lang)
            path = self.results_dir / f"{submission.key}.json"
            if folder is not None and \
                    (self.force or not _unchanged(path, digest, self.exercises)):
                yield n, submission, digest, dataclasses.replace(
                    self.template, folder=str(folder), student=submission.student).to_plain()
                continue
            if doc is not None:
                self.settle(submission, doc, digest)
            elif self.progress:
                self.progress(submission.student)

    def done(self, i: int, result: batch.RunOutput) -> None:
        submission, digest, _ = self.commands[i]
        self.settle(submission, _graded_document(result, self.exercise_set.id,
                                                 self.exercises, self.lang), digest)

    def settle(self, submission: Submission, doc: dict[str, Any],
               digest: str | None = None) -> None:
        """Write a submission's results file; its document is its row's either way."""
        doc = _stamped(doc, submission, digest)
        self.documents[submission.key] = doc
        try:
            _write_json(self.results_dir / f"{submission.key}.json", doc)
        except OSError as exc:   # that student's row says so; the class goes on
            self.documents[submission.key] = _stamped(report.not_graded(
                self.exercise_set.id, self.exercises, "error", report.render(Msg(
                    "class-cannot-write", path=f"results/{submission.key}.json",
                    code=errno.errorcode.get(exc.errno or 0, type(exc).__name__)),
                    self.lang)), submission, None)
        if self.progress:
            self.progress(submission.student)


def _prepared(submission, exercise_set, exercises, tmp, lang="en"):
    """``_prepare``, where anything unforeseen (a bug, a file system error) is that
    submission's error row, said in ``lang``, and never the class's end; its traceback
    goes to grade-all's stderr for the instructor."""
    try:
        return _prepare(submission, exercise_set, exercises, tmp, lang)
    except Exception as exc:
        import traceback

        print(report.render(Msg("class-prepare-failed-log", student=repr(submission.student)),
                            lang) + "\n" + traceback.format_exc(), file=sys.stderr)
        message = report.render(Msg("not-graded", reason=report.render(
            Msg("class-cannot-prepare", kind=type(exc).__name__), lang)), lang)
        return report.not_graded(exercise_set.id, exercises, "error", message), None, None


def _prepare(submission, exercise_set, exercises, tmp, lang="en"):
    """(document, None, None) for a submission settled without grading, else
    (None, private folder of its stub files, their hash).  An upload's problem is said in
    ``lang``."""
    def not_graded(status, message):
        return report.not_graded(exercise_set.id, exercises, status, message), None, None

    if submission.problem:
        return not_graded("error", report.render(submission.problem, lang))
    work = Path(tempfile.mkdtemp(dir=tmp))   # an unguessable name: classmates cannot look in
    work.chmod(0o711)
    upload = submission.paths[0]
    if upload.is_file() and not upload.name.lower().endswith(".ipynb"):
        try:
            unpack(upload, work / "upload")
        except submission_files.SubmissionError as exc:
            return not_graded("error", exc.said(lang))
        upload = work / "upload"
    names = submission_files.stub_names(exercises)
    try:
        found = notebook_cells.collect(upload, names, work / "files",
                                         exercise_set.exercises_dir)
    except submission_files.SubmissionError as exc:
        return not_graded("error", exc.said(lang))
    finally:
        shutil.rmtree(work / "upload", ignore_errors=True)   # only the copies are graded
    if not found:
        return not_graded("empty", report.render(Msg("upload-empty", files=", ".join(names)),
                                                 lang))
    return None, work / "files", submission_files.content_hash(work / "files", names)


def _unchanged(path, digest, exercises):
    """Whether ``path`` holds a graded result of exactly these files and exercises."""
    try:
        extra = json.loads(path.read_text(encoding="utf-8"))["extra_data"]
        graded = [e["exercise"] for e in extra["exercises"]]
        return (extra.get("status") == "graded" and extra.get("submission_hash") == digest
                and graded == [e.id for e in exercises])
    except (OSError, ValueError, KeyError, TypeError):
        return False


def _graded_document(result, set_id, exercises, lang="en"):
    """The worker's results document, or an error document saying why there is none
    (in ``lang``; the worker's last line of error, the grader's own words, after it)."""
    code, doc, stderr = result
    if not isinstance(doc, dict) or code not in (0, 1):
        detail = (stderr or "").strip().splitlines()[-1:] or [""]
        reason = report.render(Msg("class-grading-failed", detail=detail[0][:300]), lang)
        return report.not_graded(set_id, exercises, "error",
                                 report.render(Msg("not-graded", reason=reason), lang))
    extra = doc.setdefault("extra_data", {})
    if isinstance(extra, dict):
        extra.setdefault("status", "graded")
    return doc


def _read_result(path, set_id, exercises, lang):
    """The results file of a submission graded before (unchanged since), as its row reads
    it; an error document if it cannot be read back."""
    try:
        doc = json.loads(path.read_text(encoding="utf-8"))
        float(doc["score"])
        if isinstance(doc.get("extra_data", {}), dict):
            return doc
    except (OSError, ValueError, KeyError, TypeError):
        pass
    return report.not_graded(set_id, exercises, "error", report.render(
        Msg("class-cannot-read", path=path.name, option="--force"), lang))


def _stamped(doc, submission, digest):
    """``doc`` with the student id and the hash of the files it graded."""
    extra = doc.setdefault("extra_data", {})
    extra["student"] = submission.student
    if digest:
        extra["submission_hash"] = digest
    return doc


def _row(student, doc, max_score):
    extra = doc.get("extra_data", {})
    row = {"student": student, "score": doc["score"], "max_score": max_score,
           "status": extra.get("status") or ("error" if extra.get("error") else "graded")}
    for ex in extra.get("exercises", []):
        if isinstance(ex, dict) and isinstance(ex.get("exercise"), str):
            row[ex["exercise"]] = ex.get("score", "")
    return row


def _write_csv(path, rows):
    exercises = []
    for row in rows:
        exercises += [k for k in row if k not in ("student", "score", "max_score", "status")
                      and k not in exercises]
    buffer = io.StringIO()
    writer = csv.DictWriter(buffer, ["student", "score", "max_score", *exercises, "status"],
                            restval="")
    writer.writeheader()
    writer.writerows({k: _cell(v) for k, v in row.items()} for row in rows)
    write_atomic(path, buffer.getvalue())


def _cell(value):
    """A CSV cell a spreadsheet shows as text, never runs as a formula."""
    if isinstance(value, str) and value.startswith(FORMULA_STARTS):
        return "'" + value
    return value


def _write_json(path, doc):
    write_atomic(path, json.dumps(doc, ensure_ascii=False, indent=2))
