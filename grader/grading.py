"""Grade one exercise set: spec -> student process -> comparison -> results.

The data flow, in order: the loaded set (``spec_loader``), one student
process per exercise (``student_process``, isolated by ``sandbox``), plain
answers judged against the reference (``judge``, ``compare``), hidden pytest
tests over a proxy (``judge.hidden``), points (``points``), a RunResult.
"""

import contextlib
import dataclasses
import re
import time
from collections.abc import Collection, Iterator
from pathlib import Path
from typing import Any

from . import wire
from .course import cache
from .course.limits import Limits
from .course.spec import Course, Exercise, ExerciseSet
from .judge import credit, hidden, notes_numbers
from .judge.check import check_fields, load_lines
from .judge.jobs import EXERCISE_SECONDS, JudgeJob, judge_bounded
from .judge.points import resolve_points
from .judge.results import CheckResult, ExerciseResult, RunResult
from .run import sandbox
from .run.exercise_processes import ExerciseProcesses
from .run.references import Reference, StoredAnswers
from .run.student import RunFolder, StudentProcess, open_run_folder
from .run.student import request as student_request
from .run.template import widest


def start_run(course: Course, set_id: str, submission: str | Path, level: str,
              required: str | None = None, limit_overrides: dict[str, Any] | None = None,
              only: Collection[str] | None = None, zygote: Any = None) -> "Warm":
    """A run folder whose template is already starting, before the set is loaded.

    bubblewrap, Python and numpy (and sympy, when the cached set says its
    exercises need it) start on another core while this process loads the set;
    grade_set(..., warm=...) then finds the template ready.  Close the Warm.
    """
    folder = open_run_folder(level, course.solutions_dir / set_id, required, zygote)
    try:
        folder.warm(submission, [str(course.exercises_dir / set_id)],
                    Limits().merged(**(limit_overrides or {})),
                    cache.child_modules(course.root, set_id, only) or ())
    except BaseException:
        folder.close()
        raise
    warm = Warm(folder)
    warm.fresh = True   # staged just now: its first grading need not sync it again
    return warm


@contextlib.contextmanager
def warmed(course: Course, set_id: str, folder: str | Path | None, level: str,
           required: str | None = None, limit_overrides: dict[str, Any] | None = None,
           only: Collection[str] | None = None,
           warm: "Warm | None" = None) -> Iterator["Warm | None"]:
    """The Warm to grade the stub files in ``folder`` with: its run folder's template
    starts now, while the caller loads the set (``start_run``), and it shares what
    ``warm`` (a worker's) keeps between students; closed at the end.  No ``folder`` (an
    upload or a notebook, copied once the set is loaded) or no such set: ``warm``."""
    if folder is None or not (course.exercises_dir / set_id / "set.yaml").is_file():
        yield warm
        return
    early = start_run(course, set_id, folder, level, required, limit_overrides, only,
                      warm.zygote if warm else None)
    try:
        if warm:   # what a worker keeps between students
            early.keep_from(warm)
        yield early
    finally:
        early.close()


class Warm:
    """What successive gradings of one set may share, on the trusted side only.

    ``references``: each exercise's reference answers, computed once (a class,
    a watch loop).  ``folder``: a run folder kept open with its warm template
    (a watch loop grading one student's saves); None: each grading has its own.
    Never shared between students: a folder is one student's sandbox.
    ``replays``: hidden tests' finished runs, and judged answers, are kept for the
    next gradings (``hidden.Replays``, ``jobs.memo_key``); a single grading
    has no next one.
    """

    def __init__(self, folder: RunFolder | None = None, zygote: Any = None,
                 replays: bool = False):
        self.references: dict[tuple, Reference] = {}   # by Exercise.copy_key
        self.stored: dict[Path, StoredAnswers | None] = {}   # per set: answers on disk
        # per set: finished hidden tests
        self.replays: dict[Path, hidden.Replays] | None = {} if replays else None
        self.judged: dict[tuple, Any] | None = {} if replays else None   # jobs.memo_key
        self.folder = folder
        self.fresh = False     # its folder was staged just now (start_run)
        self.zygote = zygote   # a worker's run.zygote.Zygote (each run still its own sandbox)

    def keep_from(self, other: "Warm") -> None:
        """Share what ``other`` keeps between gradings (references, stored answers,
        finished tests, judged answers); this Warm keeps its own folder."""
        self.references, self.stored = other.references, other.stored
        self.replays, self.judged = other.replays, other.judged

    def close(self) -> None:
        if self.folder is not None:
            self.folder.close()

    def reference(self, exercise: Exercise, stored: "StoredAnswers | None" = None) -> Reference:
        # per copy (the seed too): a Reference keeps its checks' calls and answers by id
        if exercise.copy_key not in self.references:
            self.references[exercise.copy_key] = Reference(exercise, stored)
        return self.references[exercise.copy_key]

    def stored_answers(self, exercise_set: ExerciseSet) -> "StoredAnswers | None":
        """The set's reference answers kept on disk (read once per Warm)."""
        where = exercise_set.solutions_dir
        if where not in self.stored:
            self.stored[where] = StoredAnswers.of_set(where.parent.parent, exercise_set.id)
        return self.stored[where]


def grade_set(exercise_set: ExerciseSet, submission: str | Path, level: str,
              limit_overrides: dict[str, Any] | None = None,
              only: Collection[str] | None = None, required: str | None = None,
              student: str | None = None, variants: dict[str, int] | None = None,
              warm: Warm | None = None, hidden_tests: bool = True) -> RunResult:
    """Grade ``submission`` (a folder of stub files) against ``exercise_set``.

    ``required``: the weakest isolation acceptable (sandbox.RANKS); a weaker
    run raises sandbox.IsolationError before any student code runs.
    ``student``: whose numbers the exercises with variants use (none: the notes');
    ``variants``: exercise id -> variant index, overriding that (dev check);
    ``warm``: state kept from earlier gradings (see Warm); ``hidden_tests`` False
    leaves the hidden pytest checks out (dev check, when the YAML checks already decide).
    """
    start = time.monotonic()
    submission = Path(submission).resolve()
    warm = warm or Warm()
    exercises = [e.with_variant(variants[e.id]) if variants and e.id in variants
                 else e.for_student(student)
                 for e in exercise_set.exercises if only is None or e.id in only]
    folder = _run_folder(warm, exercise_set, submission, level, required)
    processes = ExerciseProcesses()
    try:
        _start_processes(processes, folder, submission, level, exercise_set, exercises,
                         limit_overrides)
        graded = _graded(exercise_set, exercises, processes, warm, hidden_tests)
    finally:
        processes.close_all(wait=False)
        if folder is not warm.folder:
            folder.close()
    results = tuple(_with_points(e, graded[e.id]) for e in exercises)
    return RunResult(exercise_set.id, exercise_set.title, results,
                     folder.plan.description, str(submission),
                     time.monotonic() - start, exercise_set.released)


def _run_folder(warm: Warm, exercise_set: ExerciseSet, submission: Path, level: str,
                required: str | None) -> RunFolder:
    """The Warm's run folder (a watch loop's, brought up to date with the files saved
    since), else a new one."""
    if warm.folder is None:
        return open_run_folder(level, exercise_set.solutions_dir, required, warm.zygote)
    sandbox.check_required(warm.folder.plan, required, exercise_set.solutions_dir)
    warm.folder.stage(submission, exercise_set.exercises_dir, refresh=not warm.fresh)
    warm.fresh = False
    return warm.folder


def _start_processes(processes: ExerciseProcesses, folder: RunFolder, submission: Path,
                     level: str, exercise_set: ExerciseSet, exercises: list[Exercise],
                     limit_overrides: dict[str, Any] | None) -> None:
    """One student process an exercise, their template warmed with what they import."""
    for exercise in exercises:
        limits = exercise.limits.merged(**(limit_overrides or {}))
        processes.add(exercise.id, StudentProcess(
            folder, submission, exercise.module, limits, level,
            public=[exercise_set.exercises_dir],
            preload=preloaded(exercise, submission / exercise.file)))
    if processes:
        folder.warm(submission, [str(exercise_set.exercises_dir)],
                    widest(*(p.limits for p in processes)),
                    tuple(sorted({m for p in processes for m in p.preload})),
                    light=any(not p.preload for p in processes))


SYMPY_IMPORT = re.compile(rb"^[ \t]*(?:import|from)[ \t]+sympy\b", re.MULTILINE)
SOURCE_READ = 1 << 20   # bytes of a student's file looked at for an import of sympy


def preloaded(exercise: Exercise, source: Path) -> tuple:
    """What an exercise's child imports before the student's module: sympy when its
    checks pass symbols, or when the student's file imports it (exact numbers typed in
    by hand): on the template that has it, the import costs the child nothing."""
    if "sympy" in exercise.child_modules:
        return exercise.child_modules
    try:
        with open(source, "rb") as f:
            text = f.read(SOURCE_READ)
    except OSError:
        return exercise.child_modules
    return (*exercise.child_modules, "sympy") if SYMPY_IMPORT.search(text) \
        else exercise.child_modules


def _graded(exercise_set: ExerciseSet, exercises: list[Exercise],
            processes: ExerciseProcesses, warm: Warm, hidden_tests: bool
            ) -> dict[str, list[tuple[CheckResult | None, float | None]]]:
    """(CheckResult, points) pairs by exercise id: the YAML checks' answers, each
    exercise's hidden tests run on the child its checks used, then every answer judged."""
    budget = max((p.limits.time for p in processes), default=0) + JUDGE_MARGIN
    # each exercise's trusted time on its answers, its hidden tests' and its judging
    allowance = {e.id: EXERCISE_SECONDS for e in exercises}
    # those whose children import only numpy first (their template is ready first,
    # see RunFolder.warm); then those without hidden tests: the session collects
    order = sorted(exercises, key=lambda e: (bool(processes[e.id].preload),
                                             bool(hidden_tests and e.test_files)))
    session = _session(exercise_set, order, processes, warm, budget, allowance) \
        if hidden_tests and any(e.test_files for e in exercises) else None
    stored = warm.stored_answers(exercise_set)
    graded: dict = {}
    pending: list = []   # every exercise's answers, judged in one fork below
    try:
        for exercise in order:
            graded[exercise.id] = _yaml_checks(exercise, processes.current(exercise.id),
                                               warm.reference(exercise, stored), pending)
            if session is not None and exercise.test_files:   # else: wait for no collection
                session.serve(exercise.id)
        hidden = session.finish() if session is not None else []
    finally:
        if session is not None:
            session.close()
    if stored is not None:
        stored.save()
    _judge(pending, graded, budget, warm.judged, allowance)
    for exercise in exercises:
        graded[exercise.id] = credit.with_twins(exercise,
                                                credit.with_told_tags(graded[exercise.id]))
    for exercise, result, points in hidden:
        graded[exercise.id].append((credit.with_substance(result, graded[exercise.id]),
                                    points))
    return graded


def _session(exercise_set: ExerciseSet, order: list[Exercise], processes: ExerciseProcesses,
             warm: Warm, budget: float, allowance: dict[str, float]) -> hidden.Session:
    """The hidden tests' session, collecting at once: each exercise's tests then run on
    the child its YAML checks used (with the run's limits); a fork starved by a child's
    burners is not an overrun (bounded's clock counts the fork's own CPU)."""
    hidden.preload()   # once here, not in each of the session's forks
    replays = None if warm.replays is None else \
        warm.replays.setdefault(exercise_set.solutions_dir, hidden.Replays())
    return hidden.Session([_with_limits(e, processes[e.id].limits) for e in order],
                          processes, budget, replays, allowance)


JUDGE_MARGIN = 2.0   # seconds of trusted work per check, beyond its call time limit


def _yaml_checks(exercise, process, reference, pending):
    """(CheckResult, points) for each YAML check of one exercise; a None result is
    to be judged: its (exercise id, slot, judge arguments) are added to ``pending``."""
    limits = process.limits
    exercise = _with_limits(exercise, limits)
    calls, slot_of = reference.kept(("calls", *(c.id for c in exercise.checks)),
                                    lambda: _distinct_calls(exercise.checks))
    outcomes = process.call_many(calls)
    out = []
    for check, slot in zip(exercise.checks, slot_of):
        outcome = outcomes[slot]
        if outcome is process.load_failure:
            lines = load_lines(process.load_failure, exercise.file, limits)
            out.append((_failed(exercise, check, lines), check.points))
            continue
        expected, wrong = reference.kept(("answers", check.id), lambda check=check: (
            check.expect if check.has_expect else reference.call(
                check.function, check.args, check.kwargs, check),
            list(_wrong_answers(exercise, check, reference))))
        pending.append((exercise.id, len(out), JudgeJob(check, exercise, outcome, expected, wrong)))
        out.append((None, check.points))
    return out


def _distinct_calls(checks):
    """(each distinct call once, the index of each check's call among them)."""
    slots: dict[tuple[str, str], int] = {}
    calls, slot_of = [], []
    for check in checks:
        # the exact inputs (a repr would elide the middle of large arrays)
        key = (check.function, wire.dumps([list(check.args), check.kwargs]))
        if key not in slots:
            slots[key] = len(calls)
            calls.append(student_request(check.function, check.args, check.kwargs))
        slot_of.append(slots[key])
    return calls, slot_of


def _judge(pending, graded, budget, memo=None, allowance=None):
    """Judge every pending answer in one bounded fork (a fork per exercise cost more
    than the judging); each check has ``budget`` seconds (the longest call time
    limit plus a margin) at most, and what its exercise's ``allowance`` has left
    (``jobs.judge_bounded``).  ``memo``: answers judged by earlier gradings."""
    for index, result in judge_bounded([job for _, _, job in pending], budget, memo,
                                       allowance):
        ex_id, slot, _ = pending[index]
        graded[ex_id][slot] = (result, graded[ex_id][slot][1])


def _with_limits(exercise, limits):
    return dataclasses.replace(exercise, limits=limits)


def _wrong_answers(exercise, check, reference):
    """(misconception, its wrong answer or None) for those that apply to ``check``."""
    for m in exercise.misconceptions:
        if m.applies_to(check):
            value = m.wrong and reference.call(m.wrong, check.args, check.kwargs, check,
                                               purpose=f"wrong version for {m.tag}")
            yield m, value
    notes = notes_numbers.notes_answer(exercise, check, reference)
    if notes is not None:
        yield notes_numbers.NOTES_NUMBERS, notes


def _failed(exercise, check, lines):
    return CheckResult(passed=False, lines=tuple(lines), **check_fields(check, exercise))


def _with_points(exercise, pairs):
    points = resolve_points(exercise.points, [p for _, p in pairs], exercise.spec_path)
    return ExerciseResult(exercise, tuple(r.with_points(p) for (r, _), p in zip(pairs, points)))
