"""What a student reads: an exercise (``show``), its hints (``hint``), their progress.

Title, prompt, the functions to write with their signatures (read from the
stub), points, each visible check, and how many hidden checks run and what
they check, in words, never with their inputs.
"""

import ast
import string

from ..course.spec import Exercise, ExerciseSet
from ..course.stubs import doc_in_language, stub_functions
from ..judge.msg import Msg, fmt
from ..judge.points import add_points
from .messages import render
from .progress import Progress, next_exercise
from .render import call_text


def exercise_text(exercise: Exercise, lang: str, hints_used: int = 0) -> list[str]:
    """The lines that show one exercise."""
    out = [f"{exercise.id} · {exercise.title.get(lang)}   ({exercise.points:g} "
           + render(Msg("points-word"), lang) + ")", ""]
    out += [line.rstrip() for line in prompt_text(exercise, lang).strip().splitlines()]
    out += ["", render(Msg("show-functions", file=exercise.file), lang)]
    out += [f"  {signature}" for signature in signatures(exercise)]
    visible = [c for c in exercise.checks if not c.hidden]
    if visible:
        out += ["", render(Msg("show-visible"), lang)]
        for check in visible:
            about = f" — {check.description.get(lang)}" if check.description else ""
            out.append(f"  {check.id}: {call_text(check)}{about}")
    hidden = hidden_checks(exercise, lang)
    if hidden:
        out += ["", render(Msg("show-hidden", count=len(hidden)), lang)]
        out += [f"  - {about}" for about in hidden if about]
    left = len(exercise.hints) - hints_used
    if left > 0:
        out += ["", render(Msg("hints-left", count=left,
                               command=f"attn-grade hint {exercise.set_id} {exercise.id}"),
                           lang)]
    return out


def prompt_text(exercise: Exercise, lang: str) -> str:
    """The prompt with this variant's numbers in place of its ``${name}`` fields."""
    shown = {name: fmt(value) for name, value in exercise.params.items()}
    return string.Template(exercise.prompt.get(lang)).safe_substitute(shown)


def signatures(exercise: Exercise) -> list[str]:
    """``def name(args)`` of each graded function, as the stub declares it."""
    found = stub_functions(exercise)
    return [f"def {name}({ast.unparse(found[name].args)})" if name in found
            else f"def {name}(...)" for name in exercise.functions]


def hidden_checks(exercise: Exercise, lang: str) -> list[str]:
    """What each hidden check is about (its description or test docstring; '' if none).

    A test's docstring speaks English, and Chinese after ``中文：`` where it has one; a
    test without it counts in Chinese, unexplained.
    """
    about = [c.description.get(lang) if c.description else "" for c in exercise.checks
             if c.hidden]
    for path in exercise.test_files:
        try:
            tree = ast.parse(path.read_text(encoding="utf-8"))
        except (OSError, SyntaxError):
            continue
        for node in tree.body:
            if isinstance(node, ast.FunctionDef) and node.name.startswith("test"):
                about.append(doc_in_language(ast.get_docstring(node), lang))
    return about


def hint_lines(exercise: Exercise, shown: int, lang: str, start: int = 0) -> list[str]:
    """The hints ``start`` to ``shown`` (of those revealed so far), numbered; once all
    are revealed, a line saying so."""
    total = len(exercise.hints)
    out = []
    for n, hint in enumerate(exercise.hints[start:shown], start + 1):
        out += [render(Msg("hint-shown", n=n, total=total, exercise=exercise.id), lang),
                f"  {hint.get(lang)}", ""]
    if shown >= total:
        out.append(render(Msg("no-more-hints", exercise=exercise.id, total=total), lang))
    return out


def bar(share: float, width: int) -> str:
    """A text bar ``width`` wide, ``share`` (0 to 1) of it filled."""
    filled = round(min(max(share, 0.0), 1.0) * width)
    return "#" * filled + "." * (width - filled)


def progress_lines(progress: Progress, exercise_set: ExerciseSet, lang: str,
                   width: int = 20) -> list[str]:
    """A bar per exercise (best score of its points), the set's total, and the next
    exercise to do."""
    out = []
    for exercise in exercise_set.exercises:
        record = progress.record(exercise_set.id, exercise.id)
        share = record.best / exercise.points if exercise.points else 0.0
        out.append(render(Msg("progress-line", bar=f"[{bar(share, width)}]",
                              exercise=exercise.id,
                              best=f"{record.best:g}", max=f"{exercise.points:g}",
                              attempts=record.attempts, hints=record.hints), lang))
    out += ["", set_total(progress, exercise_set, lang, width)]
    upcoming = next_exercise(progress, exercise_set)
    out.append(render(Msg("progress-next", exercise=upcoming.id, set_id=exercise_set.id), lang)
               if upcoming else render(Msg("progress-done", set_id=exercise_set.id), lang))
    return out


def set_total(progress: Progress, exercise_set: ExerciseSet, lang: str,
              width: int = 20) -> str:
    """One line for the set: best points of its total, exercises solved, attempts, hints."""
    records = [progress.record(exercise_set.id, e.id) for e in exercise_set.exercises]
    best = add_points(min(r.best, e.points) for r, e in zip(records, exercise_set.exercises))
    total = add_points(e.points for e in exercise_set.exercises)
    return render(Msg("progress-total", bar=f"[{bar(best / total if total else 0.0, width)}]",
                      set_id=exercise_set.id, best=f"{best:g}", total=f"{total:g}",
                      solved=sum(r.solved for r in records), exercises=len(records),
                      attempts=sum(r.attempts for r in records),
                      hints=sum(r.hints for r in records)), lang)
