"""Renderers: a RunResult as a Gradescope results.json document or as text.

Pure functions of the result and a language; the CLI only chooses one.
On hidden checks only value-free phrasings are used (see ``feedback``).
"""

import dataclasses
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from .. import __version__
from ..course.spec import Check, Exercise, Text
from ..course.stubs import doc_in_language
from ..judge.msg import Msg, fmt, printable
from ..judge.results import CheckResult, ExerciseResult, RunResult
from .arrays import window_lines
from .messages import render

GRADESCOPE_VISIBILITY = ("visible", "hidden", "after_due_date", "after_published")


def check_lines(result: CheckResult, lang: str, check_spec: Check | None = None,
                style: Callable[..., str] | None = None) -> list[str]:
    """The feedback sentences of one check, as shown to the student.

    A hidden check shows value-free phrasings only; a visible check whose answer
    the student must work out (``reveal: diagnosis``) shows their own answer and
    what is wrong with it, never the expected one; ``reveal: nothing`` shows no
    more than that it failed.  A failed visible array check shows both arrays
    (``style``: a terminal's colours, else the differing cells are marked).
    """
    hidden = result.hidden
    mode = "hidden" if hidden else result.reveal
    lines = []
    if hidden and not result.passed:
        lines.append(render(Msg("hidden-failed"), lang))
    elif hidden:
        lines.append(render(Msg("hidden-passed"), lang))
    elif result.passed:
        lines.append(render(Msg("passed"), lang))
    elif mode == "nothing":
        return [render(Msg("no-feedback"), lang)]
    for msg in result.lines:
        if hidden and msg.code == "hidden-failed":
            continue
        if msg.code == "array-window":
            lines += [] if hidden else window_lines(msg, lang, style)
            continue
        text = render(msg, lang, hidden=mode != "answer" and msg.code != "not-right")
        if text:
            lines.append(text)
    if not result.passed and not hidden and result.answered and check_spec is not None:
        lines.append(render(Msg("call", call=call_text(check_spec)), lang))
    if not result.passed and not hidden and result.output:
        lines += own_output(result.output, lang)
    return lines


OUTPUT_LINES = 20


def own_output(text: str, lang: str) -> list[str]:
    """What the student's code printed during a failed visible check, marked as theirs."""
    printed = text.rstrip("\n").split("\n")
    shown = [f"  | {printable(line, 200)}" for line in printed[:OUTPUT_LINES]]
    more = len(printed) - OUTPUT_LINES
    tail = [render(Msg("output-more", lines=more), lang)] if more > 0 else []
    return [render(Msg("your-output"), lang), *shown, *tail]


CALL_CHARS = 240   # a longer call line shows its arrays by shape


def call_text(check: Check) -> str:
    """``f(args)`` as the student would write it; long arrays shown by their shape."""
    text = _call(check, fmt)
    return text if len(text) <= CALL_CHARS else _call(check, _short)


def _call(check, show):
    args = [show(a) for a in check.args]
    args += [f"{k}={show(v)}" for k, v in check.kwargs.items()]
    return f"{check.function}({', '.join(args)})"


def _short(value):
    shape = getattr(value, "shape", None)
    return f"<array {tuple(shape)}>" if shape and len(shape) >= 1 and value.size > 4 else \
        printable(fmt(value), 60)


def _check_spec(exercise, check_id):
    return next((c for c in exercise.checks if c.id == check_id), None)


def check_feedback(exercise: Exercise, check: CheckResult, lang: str) -> tuple[str, list[str]]:
    """A check's description and its feedback lines: what every platform's document shows
    of one check (Gradescope's, PrairieLearn's, GitHub Classroom's), phrased once here."""
    return (_describe(check.description, lang),
            check_lines(check, lang, _check_spec(exercise, check.check)))


def gradescope(run: RunResult, lang: str, hidden_visibility: str = "hidden",
               hints_used: Mapping[str, int] | None = None) -> dict[str, Any]:
    """The Gradescope results.json document. ``hints_used``: exercise id -> hints shown."""
    tests = []
    hints_used = hints_used or {}
    for ex_result in run.exercises:
        exercise = ex_result.exercise
        for check in ex_result.checks:
            described, lines = check_feedback(exercise, check, lang)
            output = [described, *lines] if described else lines
            tests.append({
                "name": f"{exercise.id}: {check.check}",
                "score": round(check.score, 4), "max_score": round(check.max_score, 4),
                "status": "passed" if check.passed else "failed",
                "visibility": hidden_visibility if check.hidden else "visible",
                "output": "\n".join(output), "tags": list(check.tags),
                "extra_data": {"exercise": exercise.id, "file": exercise.file,
                               "check": check.check, "kind": check.kind,
                               "hidden": check.hidden}})
    return {
        "score": round(sum(t["score"] for t in tests), 4),
        "max_score": round(sum(t["max_score"] for t in tests), 4),
        "output": summary(run, lang), "visibility": "visible",
        "stdout_visibility": "hidden", "execution_time": round(run.seconds, 3),
        "tests": tests,
        "extra_data": {"set": run.set_id, "isolation": run.isolation, "lang": lang,
                       "grader_version": __version__, "released": run.released,
                       "exercises": [{"exercise": e.exercise.id, "file": e.exercise.file,
                                      "score": round(e.score, 4),
                                      "max_score": round(e.max_score, 4),
                                      "hints_used": hints_used.get(e.exercise.id, 0),
                                      "variant": e.exercise.variant}
                                     for e in run.exercises]}}


def not_graded(set_id: str, exercises: Sequence[Exercise], status: str,
               message: str) -> dict[str, Any]:
    """A valid results.json for a submission that was not graded (``empty`` or ``error``).

    It carries the set's real max_score, so a gradebook or Gradescope shows
    "0 of 93", not "0 of 0", and the message says what to fix.
    """
    return {
        "score": 0.0, "max_score": round(sum(e.points for e in exercises), 4),
        "output": message, "visibility": "visible", "stdout_visibility": "hidden",
        "tests": [],
        "extra_data": {"set": set_id, "status": status, "error": message,
                       "grader_version": __version__,
                       "exercises": [{"exercise": e.id, "file": e.file, "score": 0.0,
                                      "max_score": round(e.points, 4)} for e in exercises]}}

def _describe(description, lang):
    """A check's description in ``lang``; a hidden test's is its docstring (English, and
    Chinese after ``中文：`` where it has one)."""
    if isinstance(description, Text):
        return description.get(lang)
    return doc_in_language(description, lang) if isinstance(description, str) else ""


def summary(run: RunResult, lang: str, final: bool = False) -> str:
    """The run's one-line total. A student release's run (``run.released``) says what is
    graded at submission; ``final``: this run is the grading (GitHub Classroom grading a
    release), so it says what is not graded at all."""
    graded = [e for e in run.exercises if e.checks]
    full = sum(1 for e in graded if e.score == e.max_score)
    later = _points_at_submission(run) - run.max_score
    if lang == "zh":
        text = (f"{run.title.get(lang)}：得分 {run.score:g} / {run.max_score:g}，"
                f"{len(graded)} 道练习中 {full} 道全对")
        if run.released and final:
            text += (f"。另有 {later:g} 分（隐藏测试、手算答案和公式）在这里不评分"
                     if later > 0 else "。隐藏测试在这里不运行")
        elif run.released:
            text += (f"。另有 {later:g} 分（隐藏测试、手算答案和公式）在正式提交时评分"
                     if later > 0 else "。隐藏测试会在正式提交时运行")
        return text
    text = (f"{run.title.get(lang)}: {run.score:g} / {run.max_score:g} points, "
            f"{full} of {len(graded)} exercises fully correct")
    if run.released and final:
        text += (f". {later:g} more points (hidden checks, answers worked out by hand, "
                 "formulas) are not graded here" if later > 0
                 else ". Hidden checks do not run here")
    elif run.released:
        text += (f". {later:g} more points (hidden checks, answers worked out by hand, "
                 "formulas) are graded when you submit" if later > 0
                 else ". Hidden checks run when you submit")
    return text


def _points_at_submission(run):
    return round(sum(e.exercise.submission_points if e.exercise.submission_points is not None
                     else e.max_score for e in run.exercises), 2)


def _next_steps(set_id, exercise, used, lang):
    """Where to read the exercise again, and how many hints are left to ask for."""
    out = ["  " + render(Msg("see-exercise", command=f"attn-grade show {set_id} {exercise.id}"),
                         lang)]
    left = len(exercise.hints) - used
    if left > 0:
        out.append("  " + render(Msg("hints-left", count=left,
                                     command=f"attn-grade hint {set_id} {exercise.id}"), lang))
    return out


@dataclasses.dataclass
class Group:
    """One line of an exercise's report: a check, or failing checks sharing one problem."""

    passed: bool
    labels: list[str]
    lines: list[str]          # the first is the line shown beside the labels
    checks: list[CheckResult]


def check_groups(ex_result: ExerciseResult, lang: str,
                 style: Callable[..., str] | None = None) -> list[Group]:
    """An exercise's checks as the report shows them: failing checks that share a single
    problem share a line (the terminal's and the notebook's grouping, made once here)."""
    fixed = render(Msg("hidden-failed"), lang)
    groups: dict[str, Group] = {}
    out: list[Group] = []
    for check in ex_result.checks:
        lines = check_lines(check, lang, _check_spec(ex_result.exercise, check.check), style)
        label = render(Msg("hidden-label", check=check.check), lang) if check.hidden \
            else check.check
        problem = [line for line in lines if line != fixed]
        if not check.passed and len(problem) == 1:
            if problem[0] not in groups:
                groups[problem[0]] = Group(False, [], problem, [])
                out.append(groups[problem[0]])
            groups[problem[0]].labels.append(label)
            groups[problem[0]].checks.append(check)
            continue
        out.append(Group(check.passed, [label], lines if not check.passed else lines[:1],
                         [check]))
    return out


def _check_lines(ex_result, lang, style):
    """One line per check; failing checks that share a single problem share a line."""
    out = []
    for group in check_groups(ex_result, lang, None if style is _plain else style):
        mark = style("✓", fg="green") if group.passed else style("✗", fg="red")
        out.append(f"  {mark} {labels_text(group.labels, lang)}: {group.lines[0]}")
        out += [f"      {line}" for line in group.lines[1:]]
    return out


def labels_text(labels: list[str], lang: str) -> str:
    """A group's labels: one, or their count and the first three."""
    if len(labels) == 1:
        return labels[0]
    more = len(labels) - 3
    shown = ", ".join(labels[:3]) + (render(Msg("more-label", count=more), lang)
                                     if more > 0 else "")
    return render(Msg("checks-label", count=len(labels), shown=shown), lang)


def terminal(run: RunResult, lang: str, color: bool = False,
             hints_used: Mapping[str, int] | None = None) -> str:
    """Plain-text report for a terminal. Hints are never printed uninvited: a failed
    exercise says how many are left and the command that shows the next one."""
    style = _styler(color)
    out = [style(f"attn-grade {run.set_id}", bold=True) + f"  ({run.isolation})", ""]
    for ex_result in run.exercises:
        out += exercise_block(ex_result, run.set_id, lang, hints_used, style) + [""]
    out.append(style(summary(run, lang), bold=True))
    return "\n".join(out)


def exercise_block(ex_result: ExerciseResult, set_id: str, lang: str,
                   hints_used: Mapping[str, int] | None = None,
                   style: Callable[..., str] | None = None) -> list[str]:
    """One exercise's lines: its head and score, its checks, and what to do next."""
    style = style or _styler(False)
    exercise = ex_result.exercise
    head = f"{exercise.file} — {exercise.title.get(lang)}"
    out = [style(head, bold=True) + f"   {ex_result.score:g} / {ex_result.max_score:g}"]
    if not ex_result.checks:
        out.append("  " + render(Msg("at-submission"), lang))
    out += _check_lines(ex_result, lang, style)
    if ex_result.score < ex_result.max_score:
        out += _next_steps(set_id, exercise, (hints_used or {}).get(exercise.id, 0), lang)
    return out


def _styler(color: bool) -> Callable[..., str]:
    if not color:
        return _plain

    def style(text: str, **kw: Any) -> str:
        import click

        return click.style(text, **kw)

    return style


def _plain(text: str, **kw: Any) -> str:
    return text
