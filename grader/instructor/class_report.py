"""What the class got wrong: aggregates over a class's results documents.

``read_folder`` is the only part that touches files: it reads a ``grade-all``
output folder (``results/*.json`` and ``gradebook.csv``) or any folder of
Gradescope results documents. ``aggregate`` is a pure function: plain data in
(the documents, the gradebook rows, the misconception messages), plain data
out (what ``class_page`` draws and ``--format json`` writes). Totals are each
document's ``score``, the very number ``grade-all`` writes to the CSV.

An exercise is attempted where a check of it ran the student's code (not "not implemented
yet", not a missing file); the per-exercise table, the failed checks and the
misconceptions count only those, and those who attempted nothing are counted apart.
"""

import csv
import datetime
import functools
import io
import json
import re
import statistics
from pathlib import Path
from typing import Any

from ..course.spec import LANGUAGES, ExerciseSet
from ..judge.notes_numbers import TAG as NOTES_TAG
from ..judge.results import GRADER_TAGS
from ..report.messages import catalogue, render
from .gradebook import FORMULA_STARTS

HISTOGRAM_BINS = 10
NEED_HELP = 10          # students listed as needing help

# Student-side errors, recognised in check output by the catalogue's own phrasings
# (both languages, visible and hidden forms): error kind -> message ids.
ERROR_KINDS = {
    "syntax-error": ("syntax-error",),
    "import-error": ("import-error",),
    "missing-function": ("missing-function",),
    "missing-file": ("missing-file",),
    "not-implemented": ("not-implemented",),
    "raised": ("student-error",),
    "timeout": ("timeout", "import-timeout"),
    "memory": ("memory",),
    "cpu": ("cpu",),
    "crashed": ("crashed",),
    "exited": ("exited",),
}
NOT_GRADED_KINDS = ("not-graded", "empty")   # documents from ``not_graded``
# a failed check whose every line says one of these did not run the student's code
UNATTEMPTED_KINDS = {"not-implemented", "missing-file"}


def read_folder(folder: str | Path) -> tuple[list[dict[str, Any]], list[dict[str, str]] | None]:
    """(entries, gradebook rows or None) of a results folder.

    Each entry: {"file": path relative to ``folder``, "doc": the document,
    "mtime": seconds}. Files that are not results documents are skipped.
    """
    folder = Path(folder)
    results = folder / "results"
    paths = sorted((results if results.is_dir() else folder).glob("*.json"))
    entries = []
    for path in paths:
        try:
            doc = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            continue
        if isinstance(doc, dict) and "score" in doc and isinstance(doc.get("tests", []), list):
            entries.append({"file": path.relative_to(folder).as_posix(), "doc": doc,
                            "mtime": path.stat().st_mtime})
    rows = None
    gradebook = folder / "gradebook.csv"
    if gradebook.is_file():
        rows = list(csv.DictReader(io.StringIO(gradebook.read_text(encoding="utf-8"))))
    return entries, rows


def set_id(entries: list[dict[str, Any]]) -> str | None:
    """The id of the set the documents graded (the most common one), or None."""
    ids = [_extra(e["doc"]).get("set") for e in entries]
    ids = [i for i in ids if isinstance(i, str)]
    return max(sorted(set(ids)), key=ids.count) if ids else None


def set_messages(exercise_set: ExerciseSet) -> dict[str, dict[str, dict[str, str]]]:
    """tag -> exercise id -> {lang: message}, from a loaded set's misconceptions."""
    out: dict[str, dict[str, dict[str, str]]] = {}
    for exercise in exercise_set.exercises:
        for m in exercise.misconceptions:
            out.setdefault(m.tag, {})[exercise.id] = {lang: m.message.get(lang)
                                                      for lang in LANGUAGES}
        if len(exercise.variants) > 1:   # the grader's own tag, worded in the catalogue
            out.setdefault(NOTES_TAG, {})[exercise.id] = {
                lang: render(GRADER_TAGS[NOTES_TAG], lang) for lang in LANGUAGES}
    return out


def aggregate(entries: list[dict[str, Any]], rows: list[dict[str, str]] | None = None,
              messages: dict[str, Any] | None = None, title: Any = None) -> dict[str, Any]:
    """The class report's data. ``entries`` as from ``read_folder``; ``rows``: the
    gradebook; ``messages``: tag -> exercise -> {lang: text} (``set_messages``);
    ``title``: {lang: set title}."""
    messages = messages or {}
    students = [_student(e) for e in entries]
    n = len(students)
    max_score = max((s["max_score"] for s in students), default=0.0)
    totals = [s["score"] for s in students]
    extras = [_extra(e["doc"]) for e in entries]
    mtimes = [float(e["mtime"]) for e in entries if e.get("mtime")]
    return {
        "course": {
            "set": _distinct(x.get("set") for x in extras),
            "title": title,
            "grader_version": _distinct(x.get("grader_version") for x in extras),
            "isolation": _distinct(x.get("isolation") for x in extras),
            "graded_at": (datetime.datetime.fromtimestamp(max(mtimes), datetime.timezone.utc)
                          .strftime("%Y-%m-%d %H:%M UTC") if mtimes else None),
        },
        "students": n,
        "max_score": max_score,
        "scores": {
            "mean": _round(statistics.fmean(totals)) if totals else 0.0,
            "median": _round(statistics.median(totals)) if totals else 0.0,
            "full_marks": sum(1 for s in students if s["max_score"] and
                              s["score"] == s["max_score"]),
            "histogram": histogram(totals, max_score),
        },
        "exercises": _exercises(entries, students),
        "not_attempted": _not_attempted(students),
        "misconceptions": _misconceptions(entries, students, messages),
        "failed_checks": _failed_checks(entries, students),
        "errors": _errors(students),
        "need_help": [{k: s[k] for k in ("student", "file", "score", "max_score", "tags",
                                         "errors")}
                      for s in sorted(students, key=lambda s: (_fraction(s), -len(s["tags"]),
                                                               s["student"]))[:NEED_HELP]
                      if _fraction(s) < 1],
        "roster": students,
        "gradebook_differs": _differs(students, rows),
    }


def histogram(totals: list[float], max_score: float,
              bins: int = HISTOGRAM_BINS) -> dict[str, list[float]]:
    """{"edges": bins + 1 edges from 0 to max_score, "counts": students per bin};
    a bin holds its left edge, the last one also max_score."""
    top = max_score or max(totals, default=0) or 1.0
    edges = [_round(top * i / bins) for i in range(bins + 1)]
    counts = [0] * bins
    for total in totals:
        i = min(bins - 1, max(0, int(total / top * bins))) if top else 0
        while i > 0 and total < edges[i]:      # float edges: the bin that really holds it
            i -= 1
        while i < bins - 1 and total >= edges[i + 1]:
            i += 1
        counts[i] += 1
    return {"edges": edges, "counts": counts}


def _student(entry):
    doc = entry["doc"]
    extra = _extra(doc)
    name = extra.get("student") or Path(entry["file"]).stem
    status = extra.get("status") or ("error" if extra.get("error") else "graded")
    tested = _tested(doc)
    tags = {}
    for test in _tests(doc):
        if test.get("status") != "passed":
            for tag in _list(test.get("tags")):
                tags.setdefault(str(tag), None)
    return {"student": str(name), "file": entry["file"], "score": _num(doc.get("score")),
            "max_score": _num(doc.get("max_score")), "status": str(status),
            "tags": list(tags), "errors": _student_errors(tested, status),
            "attempted": _attempted(tested, status),
            "exercises": {str(e.get("exercise")): _num(e.get("score"))
                          for e in _list(extra.get("exercises")) if isinstance(e, dict)}}


def _tests(doc):
    return [t for t in _list(doc.get("tests")) if isinstance(t, dict)]


def _extra(item):
    extra = item.get("extra_data")
    return extra if isinstance(extra, dict) else {}


def _list(value):
    return value if isinstance(value, list) else []


def _where(test):
    extra = _extra(test)
    name = str(test.get("name", ""))
    exercise, _, check = name.partition(": ")
    return str(extra.get("exercise") or exercise), str(extra.get("check") or check or name)


def _tested(doc):
    """(exercise, passed, the error kinds its output reports) of each test of ``doc``: a
    failed test's lines classified once, for its errors and for what was attempted."""
    out = []
    for test in _tests(doc):
        exercise, _ = _where(test)
        passed = test.get("status") == "passed"
        kinds = () if passed else tuple(dict.fromkeys(
            kind for kind in map(classify, str(test.get("output", "")).splitlines()) if kind))
        out.append((exercise, passed, kinds))
    return out


def _attempted(tested, status):
    """The exercises with a check that ran the student's code."""
    if status != "graded":
        return []
    tried = {exercise for exercise, passed, kinds in tested
             if passed or not UNATTEMPTED_KINDS.intersection(kinds)}
    return [exercise for exercise in dict.fromkeys(e for e, _, _ in tested) if exercise in tried]


def _exercises(entries, students):
    """Per exercise: max score; among the students who attempted it, how many, their mean
    and how many have full marks; and how many did not attempt it."""
    table = {}
    for entry, student in zip(entries, students):
        for e in _list(_extra(entry["doc"]).get("exercises")):
            if not isinstance(e, dict):
                continue
            exercise = str(e.get("exercise"))
            row = table.setdefault(exercise, {"scores": [], "max_score": 0.0})
            row["max_score"] = max(row["max_score"], _num(e.get("max_score")))
            if exercise in student["attempted"]:
                row["scores"].append(_num(e.get("score")))
    out = []
    for exercise, row in table.items():
        tried = len(row["scores"])
        full = sum(1 for s in row["scores"] if row["max_score"] and s >= row["max_score"])
        out.append({"exercise": exercise, "max_score": row["max_score"], "attempted": tried,
                    "not_attempted": len(students) - tried,
                    "mean": _round(sum(row["scores"]) / tried) if tried else 0.0,
                    "full_marks": full, "full_marks_rate": _round(full / tried) if tried else 0.0})
    return out


def _not_attempted(students):
    """Students who attempted no exercise: those who handed in no file, those whose every
    exercise was left as its stub, and those whose submission could not be graded."""
    idle = [s for s in students if not s["attempted"]]
    return {"students": len(idle),
            "empty": sum(1 for s in idle if s["status"] == "empty"),
            "stubs": sum(1 for s in idle if s["status"] == "graded"),
            "not_graded": sum(1 for s in idle if s["status"] not in ("empty", "graded"))}


def _misconceptions(entries, students, messages):
    """Each tag with the students it matched, where, and its message; most frequent first."""
    found = {}
    for entry, student in zip(entries, students):
        for test in _tests(entry["doc"]):
            if test.get("status") == "passed":
                continue
            exercise, check = _where(test)
            if exercise not in student["attempted"]:
                continue
            for tag in _list(test.get("tags")):
                item = found.setdefault(str(tag), {"students": set(), "checks": {}})
                item["students"].add(student["student"])
                item["checks"].setdefault((exercise, check), set()).add(student["student"])
    out = []
    for tag, item in found.items():
        checks = sorted(item["checks"].items(), key=lambda kv: (-len(kv[1]), kv[0]))
        exercises = list(dict.fromkeys(ex for (ex, _), _s in checks))
        by_exercise = messages.get(tag) or {}
        message = next((by_exercise[ex] for ex in exercises if ex in by_exercise),
                       next(iter(by_exercise.values()), None))
        out.append({"tag": tag, "students": len(item["students"]), "exercises": exercises,
                    "checks": [{"exercise": ex, "check": ch, "students": len(s)}
                               for (ex, ch), s in checks],
                    "message": message})
    return sorted(out, key=lambda m: (-m["students"], m["tag"]))


def _failed_checks(entries, students):
    """Checks by the number of students who attempted their exercise and failed them."""
    failed = {}
    for entry, student in zip(entries, students):
        seen = set()
        for test in _tests(entry["doc"]):
            where = _where(test)
            if where[0] not in student["attempted"]:
                continue
            if test.get("status") != "passed" and where not in seen:
                seen.add(where)
                hidden = bool(_extra(test).get("hidden"))
                item = failed.setdefault(where, {"students": 0, "hidden": hidden})
                item["students"] += 1
    return [{"exercise": ex, "check": ch, **item} for (ex, ch), item in
            sorted(failed.items(), key=lambda kv: (-kv[1]["students"], kv[0]))]


def _errors(students):
    """Each kind of student-side error: the students it hit and in which exercises."""
    kinds = {}
    for s in students:
        for kind, exercises in s["errors"].items():
            item = kinds.setdefault(kind, {"students": 0, "exercises": {}})
            item["students"] += 1
            for ex in exercises:
                item["exercises"][ex] = item["exercises"].get(ex, 0) + 1
    return [{"kind": kind, "students": item["students"],
             "exercises": [{"exercise": ex, "students": c} for ex, c in
                           sorted(item["exercises"].items(), key=lambda kv: (-kv[1], kv[0]))]}
            for kind, item in sorted(kinds.items(), key=lambda kv: (-kv[1]["students"], kv[0]))]


def _student_errors(tested, status):
    """kind -> exercises where this student's code hit it."""
    if status == "empty":
        return {"empty": []}
    if status == "error":
        return {"not-graded": []}
    out = {}
    for exercise, _, kinds in tested:
        for kind in kinds:
            exercises = out.setdefault(kind, [])
            if exercise not in exercises:
                exercises.append(exercise)
    return out


def classify(line: str) -> str | None:
    """The error kind an output line reports, or None."""
    line = line.strip()
    for kind, pattern in _patterns():
        if pattern.fullmatch(line):
            return kind
    return None


@functools.cache
def _patterns() -> tuple[tuple[str, re.Pattern[str]], ...]:
    """(error kind, a pattern of its catalogue phrasing) in every language, built once."""
    found = []
    for kind, codes in ERROR_KINDS.items():
        for code in codes:
            for lang in LANGUAGES:
                entry = catalogue(lang)[code]
                forms = [entry["text"]]
                if entry.get("hidden") not in (None, "same"):
                    forms.append(entry["hidden"])
                for template in forms:
                    parts = re.split(r"\{[^}]*\}", template)
                    found.append((kind, re.compile(
                        "(?s)" + ".*?".join(re.escape(p) for p in parts))))
    return tuple(found)


def _differs(students, rows):
    """Students whose gradebook total differs from their results document (none expected)."""
    if rows is None:
        return []
    csv_totals = {_csv_id(r.get("student")): r.get("score") for r in rows}
    out = []
    for s in students:
        cell = csv_totals.get(s["student"])
        try:
            same = cell is not None and float(cell) == s["score"]
        except ValueError:
            same = False
        if not same:
            out.append(s["student"])
    return out


def _csv_id(cell):
    """The student id as written to the gradebook, without the quote that keeps a
    spreadsheet from running it as a formula."""
    if isinstance(cell, str) and cell.startswith("'") and cell[1:].startswith(FORMULA_STARTS):
        return cell[1:]
    return cell


def _fraction(student):
    return student["score"] / student["max_score"] if student["max_score"] else 0.0


def _distinct(values):
    return ", ".join(dict.fromkeys(str(v) for v in values if v not in (None, ""))) or None


def _num(value):
    try:
        return float(value)
    except (TypeError, ValueError):
        return 0.0


def _round(x):
    return round(x, 4)
