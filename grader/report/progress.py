"""A student's progress, kept beside their work in ``.attn-grade/progress.json``.

Per set and exercise: the best score, attempts, hints shown, when first
solved.  It is the student's own record (release and export ignore dot
folders); nothing graded depends on it, so a damaged file starts afresh
rather than stopping a run.  An upload's copy is hostile input: read through no
link and no larger than MAX_BYTES, and every entry that is not of the form below
is dropped (``_valid``); written through no link (``files.write_in``).
"""

import dataclasses
import datetime
import json
import math
from pathlib import Path
from typing import Any

from ..course.spec import Exercise, ExerciseSet
from ..files import read_in, write_in
from ..judge.results import RunResult

FOLDER = ".attn-grade"
FILE = "progress.json"
VERSION = 1
MAX_BYTES = 1024 ** 2
MAX_NAME = 100          # characters of a set's or an exercise's id
MAX_COUNT = 10 ** 6     # attempts, hints


@dataclasses.dataclass
class Record:
    """One exercise's progress."""

    best: float = 0.0
    max_score: float = 0.0
    attempts: int = 0
    hints: int = 0
    solved_at: str | None = None

    @property
    def solved(self) -> bool:
        return self.solved_at is not None


def _count(value: Any) -> bool:
    return type(value) is int and 0 <= value <= MAX_COUNT


def _score(value: Any) -> bool:
    return type(value) in (int, float) and math.isfinite(value) and 0 <= value <= MAX_COUNT


FIELDS = {"best": _score, "max_score": _score, "attempts": _count, "hints": _count,
          "solved_at": lambda v: v is None or (type(v) is str and len(v) <= 40)}


def _name(value: Any) -> bool:
    return type(value) is str and 0 < len(value) <= MAX_NAME


def _valid(data: Any) -> dict[str, Any]:
    """What of ``data`` is a progress file: each set and exercise by a plain name, each
    record's fields of their own types and ranges; the rest is dropped."""
    sets: dict[str, Any] = {}
    if isinstance(data, dict) and data.get("version") == VERSION \
            and isinstance(data.get("sets"), dict):
        for set_id, exercises in data["sets"].items():
            if not _name(set_id) or not isinstance(exercises, dict):
                continue
            sets[set_id] = {
                ex_id: {k: v for k, v in record.items() if k in FIELDS and FIELDS[k](v)}
                for ex_id, record in exercises.items()
                if _name(ex_id) and isinstance(record, dict)}
    return {"version": VERSION, "sets": sets}


class Progress:
    """The progress file of one submission folder."""

    def __init__(self, folder):
        self.folder = Path(folder)
        self.data = self._load()

    def _load(self):
        try:
            return _valid(json.loads(read_in(self.folder, FILE, MAX_BYTES, own=FOLDER)))
        except (OSError, ValueError, RecursionError):   # a link, too large, not JSON
            return _valid(None)

    def record(self, set_id: str, exercise_id: str) -> Record:
        raw = self.data["sets"].get(set_id, {}).get(exercise_id, {})
        fields = {f.name for f in dataclasses.fields(Record)}
        return Record(**{k: v for k, v in raw.items() if k in fields})

    def _store(self, set_id, exercise_id, record):
        self.data["sets"].setdefault(set_id, {})[exercise_id] = dataclasses.asdict(record)

    def graded(self, run: RunResult) -> None:
        """Count one attempt per exercise graded in ``run`` and keep the best score."""
        now = datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds")
        for result in run.exercises:
            record = self.record(run.set_id, result.exercise.id)
            record.attempts += 1
            record.max_score = result.max_score
            record.best = max(record.best, result.score)
            if result.max_score and result.score >= result.max_score and not record.solved:
                record.solved_at = now
            self._store(run.set_id, result.exercise.id, record)

    def hint_shown(self, set_id: str, exercise_id: str) -> int:
        """One more hint of the exercise shown; the count after it."""
        record = self.record(set_id, exercise_id)
        record.hints += 1
        self._store(set_id, exercise_id, record)
        return record.hints

    def hints_used(self, set_id: str) -> dict[str, int]:
        return {ex: self.record(set_id, ex).hints for ex in self.data["sets"].get(set_id, {})}

    def save(self) -> None:
        try:
            write_in(self.folder, FILE, json.dumps(self.data, indent=2).encode(), own=FOLDER)
        except OSError:   # a read-only folder, a link planted: progress is a convenience
            pass


def next_exercise(progress: Progress, exercise_set: ExerciseSet) -> Exercise | None:
    """The first exercise of the set not yet solved, or None."""
    for exercise in exercise_set.exercises:
        if not progress.record(exercise_set.id, exercise.id).solved:
            return exercise
    return None
