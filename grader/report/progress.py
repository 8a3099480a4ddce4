"""A student's progress, kept beside their work in ``.attn-grade/progress.json``.

Per set and exercise: the best score, attempts, hints shown, when first
solved.  It is the student's own record (release and export ignore dot
folders); nothing graded depends on it, so a damaged file starts afresh
rather than stopping a run.
"""

import dataclasses
import datetime
import json
from pathlib import Path

from ..course.spec import Exercise, ExerciseSet
from ..files import write_atomic
from ..judge.results import RunResult

FOLDER = ".attn-grade"
VERSION = 1


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


class Progress:
    """The progress file of one submission folder."""

    def __init__(self, folder):
        self.path = Path(folder) / FOLDER / "progress.json"
        self.data = self._load()

    def _load(self):
        try:
            data = json.loads(self.path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return {"version": VERSION, "sets": {}}
        if not isinstance(data, dict) or data.get("version") != VERSION:
            return {"version": VERSION, "sets": {}}
        return data

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
            self.path.parent.mkdir(exist_ok=True)
            write_atomic(self.path, json.dumps(self.data, indent=2))
        except OSError:   # a read-only folder: progress is a convenience, not a result
            pass


def next_exercise(progress: Progress, exercise_set: ExerciseSet) -> Exercise | None:
    """The first exercise of the set not yet solved, or None."""
    for exercise in exercise_set.exercises:
        if not progress.record(exercise_set.id, exercise.id).solved:
            return exercise
    return None
