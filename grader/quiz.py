"""``attn-grade quiz SET [ID]``: answer the questions typed in, in the terminal.

A question is a visible check of a function without arguments whose answer is a
choice, a set of choices, True/False, a number or a size.  Each answer is read
as plain data (no student code runs), judged at once by the same engine and
shown by the same reveal rules as a grading, and written into the stub file
as ``return <answer>``, so the file the grader reads is the record: editing
the function by hand still works.
"""

import ast
import dataclasses
import re
from collections.abc import Collection
from pathlib import Path
from typing import Any

from .course.formats import COMPARE_KINDS
from .course.limits import STUB_BYTES
from .course.spec import Check, Exercise, ExerciseSet
from .course.stubs import stub_functions
from .course.units import UnitError, parse_bytes
from .files import read_in, write_in
from .judge.check import judge
from .judge.results import CheckResult
from .run.outcome import CallOutcome, Status
from .run.references import Reference


@dataclasses.dataclass(frozen=True)
class Question:
    exercise: Exercise
    check: Check
    text: str          # the stub's docstring, in the chosen language
    options: tuple     # choices to number, () for free text


def questions(exercise_set: ExerciseSet, lang: str, only: Collection[str] | None = None,
              student: str | None = None) -> list[Question]:
    """The set's questions a student types in, in course order (their variant's)."""
    out = []
    for exercise in exercise_set.exercises:
        if only and exercise.id not in only:
            continue
        exercise = exercise.for_student(student)
        docs = _docstrings(exercise)
        for check in exercise.checks:
            reading = COMPARE_KINDS[check.compare.kind].quiz
            if check.args or check.kwargs or check.hidden or reading is None:
                continue
            options = tuple(check.compare.param("options") or ())
            if reading == "bool":
                expected = Reference(exercise).call(check.function, (), {}, check)
                if not isinstance(expected, bool):
                    continue
                options = (True, False)
            out.append(Question(exercise, check,
                                _in_language(docs.get(check.function, check.function), lang),
                                options))
    return out


def parse_answer(question: Question, text: str) -> Any:
    """The typed text as the answer value, or raise ValueError with what to type."""
    reading = COMPARE_KINDS[question.check.compare.kind].quiz
    assert reading is not None, "questions() asks only kinds the quiz reads"
    return READINGS[reading](question.options, text.strip())


def _picks(options: tuple, text: str) -> list:
    """The options picked by their numbers; without options, the words typed."""
    picks = [p for p in re.split(r"[,\s]+", text) if p]
    if not options and picks:
        return picks
    if not picks or not all(p.isdigit() and 1 <= int(p) <= len(options) for p in picks):
        raise ValueError(f"1-{len(options)}")
    return [options[int(p) - 1] for p in picks]


def _one_pick(options: tuple, text: str) -> Any:
    chosen = _picks(options, text) if options else [text]
    if len(chosen) != 1 or not text:
        raise ValueError(f"1-{len(options)}")
    return chosen[0]


def _size(options: tuple, text: str) -> str:
    try:
        parse_bytes(text)
    except UnitError:
        raise ValueError("3 MiB") from None
    return text


def _number(options: tuple, text: str) -> float:
    return float(text)


# how a typed answer is read, for each of course.formats.QUIZ_READINGS
READINGS = {"choice": _one_pick, "choices": lambda options, text: set(_picks(options, text)),
            "bool": _one_pick, "number": _number, "size": _size}


def judge_answer(question: Question, answer: Any) -> CheckResult:
    """The CheckResult of a typed answer, and the lines a student sees for it."""
    exercise, check = question.exercise, question.check
    reference = Reference(exercise)
    expected = check.expect if check.has_expect else reference.call(check.function, (), {},
                                                                    check)
    wrong = [(m, m.wrong and reference.call(m.wrong, (), {}, check))
             for m in exercise.misconceptions if m.applies_to(check)]
    return judge(check, exercise, CallOutcome(Status.OK, value=answer), expected, wrong)


def record(stub_path: Path, function: str, answer: Any) -> None:
    """Write ``return <answer>`` as the body of ``function`` in the stub, docstring kept
    (read and written through no link: the folder may hold anything)."""
    source = read_in(stub_path.parent, stub_path.name, STUB_BYTES).decode("utf-8")
    tree = ast.parse(source)
    node = next(n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name == function)
    body = node.body
    first = body[0] if body else None
    keep = 1 if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant) \
        and isinstance(first.value.value, str) else 0
    lines = source.split("\n")
    indent = " " * (body[0].col_offset if body else node.col_offset + 4)
    start = body[keep].lineno - 1 if len(body) > keep else body[-1].end_lineno
    end = body[-1].end_lineno
    value = sorted(answer) if isinstance(answer, set) else answer
    new = [f"{indent}return {value!r}" if not isinstance(answer, set)
           else f"{indent}return set({value!r})"]
    lines[start:end] = new
    write_in(stub_path.parent, stub_path.name, "\n".join(lines).encode("utf-8"))


def _docstrings(exercise):
    return {name: ast.get_docstring(node) or name
            for name, node in stub_functions(exercise).items()}


def _in_language(doc, lang):
    """The English part of a bilingual docstring, or the part after '中文：' for zh."""
    english, _, chinese = doc.partition("中文：")
    chosen = chinese if lang == "zh" and chinese else english
    return "\n".join(line for line in chosen.strip().splitlines() if line.strip())
