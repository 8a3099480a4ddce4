"""``attn-grade dev check``: a course proves its own checks.

For each set: every YAML file loads; no stray files; the stubs fail every
check; the reference solutions get full marks on several input seeds (and we
report how close each check comes to its tolerance); every registered wrong
version fails some check and carries its tag; stand-ins that do nothing (zeros,
a constant, the first argument, a lookup table of what a student can see)
score nothing, or at most half for the lookup table (``standins``); the feedback on
a quiz answer gives away no number the student has to find (``quiz_numbers``).
"""

import contextlib
import json
import os
from collections.abc import Collection, Sequence
from pathlib import Path
from typing import Any

from ..course import loader as spec_loader
from ..course.draws import DRAWS
from ..course.spec import Course, Exercise, ExerciseSet
from ..errors import CourseError
from ..grading import Warm, grade_set
from ..judge.msg import Msg
from ..judge.results import CheckResult, ExerciseResult
from ..run.student import open_run_folder
from ..run.zygote import Zygote
from . import standins
from .findings import Finding
from .fork_map import Crashed, fork_map
from .promises import promises_kept, test_line
from .quiz_numbers import numbers_given_away
from .wrong_versions import WrongSubmission, variants_pass, wrong_versions_caught

SEEDS = tuple(range(DRAWS))   # every draw a submission's hidden inputs can come from
CLOSE_MARGIN = 0.5


def check_course(course: Course, set_ids: Sequence[str], level: str,
                 seeds: Sequence[int] = SEEDS,
                 only: Collection[str] | None = None, zygote: Any = None) -> list[Finding]:
    """All findings for the given sets (problems and notes).

    Each set's two halves (its proofs; its wrong versions) run side by side, each
    in a fork of this process: the gradings mostly wait on student processes.
    ``zygote``: a run.zygote.Zygote the templates fork from (each fork on a socket of
    its own), as a grade-worker's do; None: each run starts its own.
    """
    if not hasattr(os, "fork"):
        return _once([f for set_id in set_ids for f in check_set(course, set_id, level, seeds,
                                                                 only, zygote=zygote)])
    _preload(course, set_ids)
    jobs = [(set_id, part) for set_id in set_ids for part in PARTS]
    sockets = [zygote.adopt() if zygote is not None and zygote.alive() else None
               for _ in jobs]

    def check(n):   # in a fork
        set_id, part = jobs[n]
        own = Zygote.attached(sockets[n].detach()) if sockets[n] is not None else None
        try:
            findings = check_set(course, set_id, level, seeds, only, parts=(part,), zygote=own)
        finally:
            if own is not None:
                own.close()   # its socket only: the zygote serves the others on
        return [f.to_plain() for f in findings]

    try:
        done = fork_map(check, range(len(jobs)))
    finally:
        for sock in sockets:
            if sock is not None:
                sock.close()
    out = []
    for (set_id, _), plain in zip(jobs, done):
        if isinstance(plain, Crashed):
            out.append(Finding(set_id, "", Msg("devcheck-crashed", status=plain.status)))
        else:
            out += [Finding.from_plain(fields) for fields in plain]
    return _once(out)


def _once(findings: list[Finding]) -> list[Finding]:
    """Each finding once: both halves of a set meet a set-wide failure (grading failed)."""
    seen: set[str] = set()
    out = []
    for finding in findings:
        key = json.dumps(finding.to_plain(), sort_keys=True)
        if key not in seen:
            seen.add(key)
            out.append(finding)
    return out


def _preload(course, set_ids):
    """What every fork would import again: sympy (a cached set's formulas), pytest's
    plugins.  Once here, shared."""
    for set_id in set_ids:
        with contextlib.suppress(CourseError):
            spec_loader.load_set(course, set_id)
    from ..judge import hidden

    hidden.preload()


PARTS = ("proofs", "wrong versions")


def check_set(course: Course, set_id: str, level: str, seeds: Sequence[int] = SEEDS,
              only: Collection[str] | None = None, stand_ins: bool = True,
              parts: Sequence[str] = PARTS, zygote: Any = None) -> list[Finding]:
    """``only``: exercise ids to grade (None: all); files are always all checked.
    ``parts``: "proofs" (files, stubs, references, stand-ins) and/or "wrong versions"
    (and the variants' references); ``zygote``: as check_course's."""
    try:
        exercise_set = spec_loader.load_set(course, set_id)
    except CourseError as exc:
        return [_course_problem(set_id, exc, course.root)] if "proofs" in parts else []
    findings = stray_files(exercise_set) + promises_kept(exercise_set, only) \
        + numbers_given_away(exercise_set, course.root) if "proofs" in parts else []
    # every grading below runs the course's own code: one run folder (and so one warm
    # template) and one set of reference answers for all of them
    warm = None
    try:
        warm = Warm(open_run_folder(level, exercise_set.solutions_dir, zygote=zygote),
                    zygote=zygote, replays=True)
        if "proofs" in parts:
            findings += stubs_fail(exercise_set, level, only, warm)
            reference_runs: dict[str, ExerciseResult] = {}
            findings += solutions_pass(course, set_id, level, seeds, only, reference_runs,
                                       warm)
            if stand_ins:
                findings += stand_ins_score_nothing(exercise_set, level, reference_runs,
                                                    only, warm)
        if "wrong versions" in parts:
            with WrongSubmission(exercise_set) as submission:
                findings += wrong_versions_caught(exercise_set, level, only, warm, submission)
                findings += variants_pass(exercise_set, level, only, warm, submission)
    except CourseError as exc:
        findings.append(Finding(set_id, "", Msg("devcheck-grading-failed", reason=str(exc))))
    finally:
        if warm is not None:
            warm.close()
    return findings


def _course_problem(set_id: str, exc: CourseError, root: Path) -> Finding:
    """A set that does not load: said in the catalogue's words where the error has them."""
    if exc.msg is None:
        return Finding(set_id, "", Msg("devcheck-invalid", reason=str(exc)))
    path = os.path.relpath(exc.path, root) if exc.path else ""
    return Finding(set_id, "", Msg(exc.msg[0], **exc.msg[1]), detail=f"  ({exc.detail})",
                   place=f"{path}:{exc.line}" if exc.line else path)


def stray_files(exercise_set: ExerciseSet) -> list[Finding]:
    """Stubs without YAML, solutions without stubs, hidden files without exercise."""
    set_id, out = exercise_set.id, []
    stubs = {e.file for e in exercise_set.exercises}
    modules = {Path(f).stem for f in stubs}
    ids = {e.id for e in exercise_set.exercises}
    for path in sorted(exercise_set.exercises_dir.glob("*.py")):
        if path.name not in stubs:
            out.append(Finding(set_id, "", Msg("devcheck-stub-without-yaml", file=path.name)))
    for path in sorted(exercise_set.solutions_dir.glob("*.py")):
        name = path.name
        if name.startswith("test_") and name[5:-3] not in modules:
            out.append(Finding(set_id, "", Msg("devcheck-test-without-stub", file=name,
                                               pattern="test_MODULE.py")))
        elif not name.startswith("test_") and name != "conftest.py" and name not in stubs:
            out.append(Finding(set_id, "", Msg("devcheck-solution-without-stub", file=name,
                                               folder="exercises/")))
    for path in sorted(exercise_set.solutions_dir.glob("*" + spec_loader.HIDDEN_SUFFIX)):
        if path.name[:-len(spec_loader.HIDDEN_SUFFIX)] not in ids:
            out.append(Finding(set_id, "", Msg("devcheck-hidden-without-exercise",
                                               file=path.name)))
    for exercise in exercise_set.exercises:
        if not exercise.solution_path.is_file():
            out.append(Finding(set_id, exercise.id, Msg("devcheck-no-solution",
                                                        file=exercise.solution_path.name)))
    return out


def stubs_fail(exercise_set: ExerciseSet, level: str,
               only: Collection[str] | None = None, warm: Warm | None = None) -> list[Finding]:
    run = grade_set(exercise_set, exercise_set.exercises_dir, level, only=only, warm=warm)
    root = exercise_set.solutions_dir.parent.parent
    return [Finding(exercise_set.id, c.exercise, Msg("devcheck-stub-passes", check=c.check),
                    place=check_place(e.exercise, c.check, root))
            for e in run.exercises for c in e.checks if c.passed]


def solutions_pass(course: Course, set_id: str, level: str, seeds: Sequence[int],
                   only: Collection[str] | None = None,
                   keep: dict[str, ExerciseResult] | None = None,
                   warm: Warm | None = None) -> list[Finding]:
    """``keep``: a dict that receives the first seed's ExerciseResult of each exercise.

    A seed changes the YAML checks' drawn inputs, not the hidden pytest files (they
    seed their own draws): those run with the first seed only.
    """
    failed: dict[tuple[str, str], tuple[list[int], CheckResult]] = {}
    margins: dict[tuple[str, str], float] = {}
    for seed in seeds:
        exercise_set = spec_loader.load_set(course, set_id, seed_offset=seed)
        run = grade_set(exercise_set, exercise_set.solutions_dir, level, only=only, warm=warm,
                        hidden_tests=seed == seeds[0])
        if keep is not None and seed == seeds[0]:
            keep.update({e.exercise.id: e for e in run.exercises})
        for e in run.exercises:
            for c in e.checks:
                key = (c.exercise, c.check)
                if not c.passed:
                    failed.setdefault(key, ([], c))[0].append(seed)
                elif c.margin is not None:
                    margins[key] = max(margins.get(key, 0.0), c.margin)
    sets = {e.id: e for e in spec_loader.load_set(course, set_id).exercises}
    out = [_reference_fails(set_id, sets[ex], seeds_failed, result, course.root)
           for (ex, _), (seeds_failed, result) in failed.items()]
    return out + margin_notes(set_id, margins)


def _reference_fails(set_id: str, exercise: Exercise, seeds: list[int], result: CheckResult,
                     root: Path) -> Finding:
    """Once for all the seeds it fails on, with the check's line and the first reason
    (for a hidden test, what it raised)."""
    reasons = [m for m in result.lines if m.code != "hidden-failed"]
    place = check_place(exercise, result.check, root)
    return Finding(set_id, exercise.id, Msg(
        "devcheck-reference-fails-why", check=result.check,
        seeds=", ".join(map(str, seeds)), count=len(seeds),
        reason=reasons[0] if reasons else Msg("hidden-failed")), place=place)


def check_place(exercise: Exercise, check_id: str, root: Path) -> str:
    """"file:line" of a YAML check, or of a hidden pytest test's def."""
    for check in exercise.checks:
        if check.id == check_id:
            return f"{os.path.relpath(check.source, root)}:{check.line}"
    for path in exercise.test_files:
        line = test_line(path, check_id)
        if line:
            return f"{os.path.relpath(path, root)}:{line}"
    return ""


def margin_notes(set_id: str, margins: dict[tuple[str, str], float]) -> list[Finding]:
    """The checks whose reference answer comes closest to the tolerance limit."""
    ranked = sorted(margins.items(), key=lambda kv: -kv[1])
    shown = [kv for kv in ranked if kv[1] > CLOSE_MARGIN] or ranked[:1]
    return [Finding(set_id, ex, Msg("devcheck-closest", check=check, share=f"{margin:.1%}"),
                    problem=False)
            for (ex, check), margin in shown]


def stand_ins_score_nothing(exercise_set: ExerciseSet, level: str,
                            reference_runs: dict[str, ExerciseResult],
                            only: Collection[str] | None = None,
                            warm: Warm | None = None) -> list[Finding]:
    """The stand-in table (a note) and a problem for each stand-in that scores too much."""
    scores = standins.grade_standins(exercise_set, level, reference_runs, only, warm)
    if not scores:
        return []
    out = [Finding(exercise_set.id, "", Msg("devcheck-standins"), problem=False,
                   detail="\n".join(standins.table(scores)))]
    for s in scores:
        if s.failing:
            out.append(Finding(exercise_set.id, s.exercise, Msg(
                "devcheck-standin-unbuildable", kind=s.kind, function=s.function,
                reason=str(s.failing))))
        if s.tags and s.kind == "echo":   # returning the input may be the mistake itself
            out.append(Finding(exercise_set.id, s.exercise, Msg(
                "devcheck-echo-tagged", function=s.function, tags=", ".join(s.tags)),
                problem=False))
        elif s.tags:
            out.append(Finding(exercise_set.id, s.exercise, Msg(
                "devcheck-standin-tagged", kind=s.kind, function=s.function,
                tags=", ".join(s.tags))))
        if s.too_high:
            limit = Msg("devcheck-allowed-nothing") if s.kind != "lookup" else \
                Msg("devcheck-allowed-at-most", points=f"{s.allowed:g}")
            exercise = next(e for e in exercise_set.exercises if e.id == s.exercise)
            root = exercise_set.solutions_dir.parent.parent
            out.append(Finding(exercise_set.id, s.exercise, Msg(
                "devcheck-standin-scores", kind=s.kind, function=s.function,
                score=f"{s.score:g}", max_score=f"{s.max_score:g}", limit=limit,
                advice=_STAND_IN_ADVICE[s.kind]), detail="\n".join(
                    f"  {check_place(exercise, check, root)}: {check}" for check in s.passed)))
    return out


_STAND_IN_ADVICE = {"zeros": Msg("devcheck-advice-zeros"),
                    "constant": Msg("devcheck-advice-constant"),
                    "echo": Msg("devcheck-advice-echo"), "lookup": Msg("devcheck-advice-lookup")}
