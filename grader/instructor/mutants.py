"""``attn-grade dev mutants``: do an exercise's checks catch the slips nobody registered?

Each mutant (``mutators``) of a graded function is graded in place of the reference,
as a wrong version is (``WrongSubmission``), and judged:

  killed      it loses points on every draw of the hidden inputs (the checks it
              failed, and the misconception tags that named it, are kept)
  survived    it keeps full marks on some draw (the draw and the checks it passed)
  equivalent  a survivor whose answers equal the reference's (but for float rounding,
              ``ROUNDING``) on the visible inputs and every draw of the hidden ones:
              no check could tell it apart; reported, not counted

Speed: one run folder and one warm template for the set; each grading holds one
mutant of every exercise still to judge (each exercise runs in a process of its own,
so they cannot interfere).  The YAML checks go first; the hidden pytest tests (a
session each grading) only for the mutants that pass them all; other draws only for
mutants that only hidden YAML checks caught, and for survivors (equivalence).
"""

import dataclasses
from collections.abc import Collection, Generator, Sequence
from typing import Any

from ..course import loader as spec_loader
from ..course.draws import DRAWS
from ..course.spec import Course, Exercise
from ..errors import CourseError
from ..grading import Warm, grade_set
from ..judge import hidden
from ..judge.results import CheckResult
from ..judge.verdict import tolerances
from ..run.student import open_run_folder
from .fork_map import Crashed, fork_map
from .mutators import Mutant, mutants
from .wrong_versions import WrongSubmission

ROUNDING = 1e-12   # a relative difference between two answers that only rounding makes
KILLED, SURVIVED, EQUIVALENT = "killed", "survived", "equivalent"


@dataclasses.dataclass(frozen=True)
class Judged:
    """What became of one mutant."""

    exercise: str
    mutant: Mutant
    status: str
    checks: tuple = ()   # killed: the checks it failed; survived: the checks it passed
    tags: tuple = ()     # killed: misconception tags of the failed checks
    draw: int = 0        # survived: a draw it keeps full marks on

    def to_plain(self) -> dict[str, Any]:
        m = self.mutant
        return {"exercise": self.exercise, "status": self.status, "function": m.function,
                "operator": m.operator, "line": m.line, "before": m.before,
                "after": m.after, "checks": list(self.checks), "tags": list(self.tags),
                "draw": self.draw}

    @classmethod
    def from_plain(cls, data: dict[str, Any]) -> "Judged":
        """As ``to_plain`` left it (the mutant's source stays behind)."""
        mutant = Mutant(data["function"], data["operator"], data["line"], data["before"],
                        data["after"], "")
        return cls(data["exercise"], mutant, data["status"], tuple(data["checks"]),
                   tuple(data["tags"]), data["draw"])


Request = tuple[int, bool]   # (draw, with the hidden pytest tests)
Judging = Generator[Request, list[CheckResult], Judged]


@dataclasses.dataclass(frozen=True)
class SetMutants:
    """A set's judged mutants, its figures and its threshold."""

    set_id: str
    judged: tuple
    tallies: tuple       # a Tally per exercise, the set's total last
    threshold: float | None

    @property
    def score(self) -> float:
        return self.tallies[-1].score if self.tallies else 1.0

    @property
    def below(self) -> bool:
        return self.threshold is not None and self.score < self.threshold - 1e-9


def judge_course(course: Course, set_ids: Sequence[str], level: str,
                 only: Collection[str] | None = None) -> list[SetMutants]:
    """Each set's mutants judged (``only``: the exercises to mutate)."""
    sets = [spec_loader.load_set(course, set_id) for set_id in set_ids]
    spec_loader.check_ids(", ".join(set_ids), [e.id for s in sets for e in s.exercises],
                          only or ())
    hidden.preload()   # once here, not in each set's fork

    def work(exercise_set):
        mine = None if only is None else set(only) & {e.id for e in exercise_set.exercises}
        return [j.to_plain() for j in judge_set(course, exercise_set.id, level, mine)]

    out = []
    for exercise_set, plain in zip(sets, fork_map(work, sets)):
        if isinstance(plain, Crashed):
            raise CourseError(f"dev mutants: grading the mutants of {exercise_set.id} failed")
        judged = [Judged.from_plain(fields) for fields in plain]
        order = [e.id for e in exercise_set.exercises]
        out.append(SetMutants(exercise_set.id, tuple(judged),
                              tuple(tally(exercise_set.id, judged, order)),
                              exercise_set.mutation_score))
    return out


def judge_set(course: Course, set_id: str, level: str,
              only: Collection[str] | None = None) -> list[Judged]:
    """Every mutant of the set's graded functions (of ``only``'s exercises), judged."""
    exercise_set = spec_loader.load_set(course, set_id)
    todo = []
    for exercise in exercise_set.exercises:
        if (only is None or exercise.id in only) and exercise.solution_path.is_file():
            source = exercise.solution_path.read_text(encoding="utf-8")
            todo += [(exercise, m) for m in mutants(source, exercise.functions)]
    if not todo:
        return []
    warm = Warm(open_run_folder(level, exercise_set.solutions_dir), replays=True)
    try:
        with WrongSubmission(exercise_set) as submission:
            return _schedule(course, set_id, level, warm, submission, todo)
    finally:
        warm.close()


def _schedule(course, set_id, level, warm, submission, todo):
    """Run each mutant's judging, a grading at a time holding one mutant an exercise."""
    judgings = [(exercise, mutant, _judging(exercise, mutant)) for exercise, mutant in todo]
    waiting: dict[int, Request] = {i: next(j) for i, (_, _, j) in enumerate(judgings)}
    done: dict[int, Judged] = {}
    while waiting:
        batch = _batch(waiting, judgings)
        draw, hidden = waiting[batch[0]]
        exercise_set = spec_loader.load_set(course, set_id, seed_offset=draw)
        drawn = {e.id: e for e in exercise_set.exercises}
        folder = submission.use_sources([(drawn[judgings[i][0].id], judgings[i][1].source)
                                         for i in batch])
        run = grade_set(exercise_set, folder, level, only={judgings[i][0].id for i in batch},
                        warm=warm, hidden_tests=hidden)
        checks = {e.exercise.id: list(e.checks) for e in run.exercises}
        for i in batch:
            try:
                waiting[i] = judgings[i][2].send(checks[judgings[i][0].id])
            except StopIteration as end:
                done[i] = end.value
                del waiting[i]
    return [done[i] for i in range(len(judgings))]


def _batch(waiting, judgings):
    """The mutants of the next grading: the request most of them wait with, one of
    each exercise."""
    counts: dict[Request, int] = {}
    for request in waiting.values():
        counts[request] = counts.get(request, 0) + 1
    request = max(counts, key=lambda r: (counts[r], -r[0], not r[1]))
    out, seen = [], set()
    for i, wanted in waiting.items():
        exercise_id = judgings[i][0].id
        if wanted == request and exercise_id not in seen:
            seen.add(exercise_id)
            out.append(i)
    return out


def _judging(exercise: Exercise, mutant: Mutant) -> Judging:
    """The gradings one mutant needs, asked for one at a time (see the module's text)."""
    yaml = {0: (yield (0, False))}
    failed = [c for c in yaml[0] if not c.passed]
    if any(not c.hidden for c in failed):   # visible checks are the same on every draw
        return _killed(exercise, mutant, failed)
    draw = 0 if not failed else None
    for other in range(1, DRAWS):
        if draw is not None:
            break
        yaml[other] = yield (other, False)
        if all(c.passed for c in yaml[other]):
            draw = other
    if draw is None:
        return _killed(exercise, mutant, failed)
    if exercise.test_files:
        whole = yield (draw, True)
        failed = [c for c in whole if not c.passed]
        if failed:
            return _killed(exercise, mutant, failed)
    passed = tuple(c.check for c in (whole if exercise.test_files else yaml[draw]))
    for other in range(DRAWS):
        if other not in yaml:
            yaml[other] = yield (other, False)
    status = EQUIVALENT if all(_equal(c, exercise) for checks in yaml.values() for c in checks) \
        else SURVIVED
    return Judged(exercise.id, mutant, status, passed, draw=draw)


def _equal(check: CheckResult, exercise: Exercise) -> bool:
    """Whether a passing answer differs from the reference's by float rounding at most:
    its margin (a share of the tolerance) times the tolerance's relative size."""
    if not check.passed or not check.margin:
        return check.passed
    spec = next((c.compare for c in exercise.checks if c.id == check.check), None)
    if spec is None:
        return False
    sigfigs = spec.param("sigfigs")
    rtol, atol = tolerances(spec)
    relative = 5 * 10.0 ** -float(sigfigs) if sigfigs else rtol or atol
    return check.margin * relative <= ROUNDING


def _killed(exercise: Exercise, mutant: Mutant, failed: Sequence[CheckResult]) -> Judged:
    tags = sorted({t for c in failed for t in c.tags})
    return Judged(exercise.id, mutant, KILLED, tuple(c.check for c in failed), tuple(tags))


@dataclasses.dataclass(frozen=True)
class Tally:
    """One exercise's figures."""

    set_id: str
    exercise: str
    generated: int
    killed: int
    survived: int
    equivalent: int

    @property
    def score(self) -> float:
        counted = self.generated - self.equivalent
        return self.killed / counted if counted else 1.0


def tally(set_id: str, judged: Sequence[Judged], order: Sequence[str]) -> list[Tally]:
    """A Tally per exercise (in ``order``) that has mutants, and the set's total last."""
    out = []
    for exercise in [*order, ""]:
        mine = [j for j in judged if j.exercise == exercise or not exercise]
        if not mine:
            continue
        count = {s: sum(1 for j in mine if j.status == s) for s in (KILLED, SURVIVED, EQUIVALENT)}
        out.append(Tally(set_id, exercise, len(mine), count[KILLED], count[SURVIVED],
                         count[EQUIVALENT]))
    return out
