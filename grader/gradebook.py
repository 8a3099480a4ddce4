"""``attn-grade grade-all``: a class of submissions -> one results JSON each + a CSV.

Each student is graded by its own ``attn-grade`` process (see ``batch``), so a
submission that crashes, hangs or breaks every limit costs only its own row.
Results are written as they finish; a re-run skips students already graded.
"""

import csv
import io
import json
import os
import shutil
import tempfile
import zipfile
from pathlib import Path

from . import batch
from .errors import CourseError
from .files import write_atomic

MAX_ZIP_BYTES = 64 * 1024 ** 2
MAX_ZIP_FILES = 2000


def find_submissions(folder):
    """(student id, folder or zip path) for each sub-folder or .zip, sorted."""
    entries = []
    for path in sorted(Path(folder).iterdir()):
        if path.is_dir() and not path.name.startswith("."):
            entries.append((path.name, path))
        elif path.suffix == ".zip":
            entries.append((path.stem, path))
    if not entries:
        raise CourseError("no submissions found (expected one folder or .zip per student)",
                          folder)
    return entries


def unpack(zip_path, into):
    """Extract a student's zip safely; the folder that holds its .py files."""
    try:
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
    except (zipfile.BadZipFile, ValueError, OSError) as exc:
        raise CourseError(f"cannot unpack: {exc}", zip_path) from None
    py = sorted(into.rglob("*.py"), key=lambda p: len(p.parts))
    return py[0].parent if py else into


def error_document(student, message):
    """A valid results document for a submission that could not be graded."""
    return {"score": 0.0, "max_score": 0.0, "output": f"not graded: {message}",
            "tests": [], "extra_data": {"student": student, "error": message}}


def grade_all(course, set_id, submissions_dir, out_dir, jobs, extra_args=(), force=False,
              progress=None):
    """Grade every submission; returns the gradebook rows (dicts)."""
    out_dir = Path(out_dir)
    results_dir = out_dir / "results"
    results_dir.mkdir(parents=True, exist_ok=True)
    students = find_submissions(submissions_dir)
    todo = [(s, p) for s, p in students if force or not (results_dir / f"{s}.json").exists()]
    with tempfile.TemporaryDirectory(prefix="attn-grade-class-") as tmp:
        commands, failures = [], {}
        for student, path in todo:
            folder = path
            if path.suffix == ".zip":
                try:
                    folder = unpack(path, Path(tmp) / student)
                except CourseError as exc:
                    failures[student] = str(exc)
                    continue
            commands.append((student, batch.grade_command(
                set_id, folder, course.root, "--output", results_dir / f"{student}.json",
                *extra_args)))
        for student, message in failures.items():
            _write_json(results_dir / f"{student}.json", error_document(student, message))
            progress and progress(student)

        def done(i, result):
            student = commands[i][0]
            code, doc, stderr = result
            if doc is None or code not in (0, 1):
                reason = (stderr or "").strip().splitlines()[-1:] or ["grading failed"]
                _write_json(results_dir / f"{student}.json", error_document(student, reason[0]))
            progress and progress(student)

        batch.run_many([argv for _, argv in commands], jobs, on_done=done)
    rows = [_row(student, results_dir / f"{student}.json") for student, _ in students]
    _write_csv(out_dir / "gradebook.csv", rows)
    return rows


def _row(student, path):
    doc = json.loads(path.read_text(encoding="utf-8"))
    row = {"student": student, "score": doc["score"], "max_score": doc["max_score"],
           "status": doc.get("extra_data", {}).get("error") and "error" or "graded"}
    for ex in doc.get("extra_data", {}).get("exercises", []):
        row[ex["exercise"]] = ex["score"]
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
    writer.writerows(rows)
    write_atomic(path, buffer.getvalue())


def _write_json(path, doc):
    write_atomic(path, json.dumps(doc, ensure_ascii=False, indent=2))
