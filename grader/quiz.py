"""``attn-grade quiz SET [ID]``: answer the questions typed in, in the terminal.

A question is a visible check of a function without arguments whose answer is a
choice, a set of choices, True/False, a number or a size.  Each answer is read
as plain data (no student code runs), judged at once by the same engine and
shown by the same reveal rules as a grading.  A right answer is written into the
stub file as ``return <answer>``, typed as the reference's answer is, so the file
the grader reads is the record (read back as a literal, never run): editing the
function by hand still works, and a function with code of the student's own is
never replaced unasked.
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
    expected: Any      # the reference's answer


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
            expected = check.expect if check.has_expect else \
                Reference(exercise).call(check.function, (), {}, check)
            if reading == "bool":
                if not isinstance(expected, bool):
                    continue
                options = (True, False)
            out.append(Question(exercise, check,
                                _in_language(docs.get(check.function, check.function), lang),
                                options, expected))
    return out


def parse_answer(question: Question, text: str) -> Any:
    """The typed text as the answer value, of the type the reference's answer has (a set
    of choices as its set, tuple or list), or raise ValueError with what to type."""
    reading = COMPARE_KINDS[question.check.compare.kind].quiz
    assert reading is not None, "questions() asks only kinds the quiz reads"
    value = READINGS[reading](question.options, text.strip())
    if isinstance(value, set) and isinstance(question.expected, (tuple, list, frozenset)):
        return type(question.expected)(sorted(value, key=repr))
    return value


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


def _size(options: tuple, text: str) -> int | str:
    """A whole number of bytes as an int; with a unit, the text as typed ("3 MiB")."""
    if re.fullmatch(r"[0-9]+", text):
        return int(text)
    try:
        parse_bytes(text)
    except UnitError:
        raise ValueError("3 MiB") from None
    return text


def _number(options: tuple, text: str) -> int | float:
    return int(text) if re.fullmatch(r"[+-]?[0-9]+", text) else float(text)


# how a typed answer is read, for each of course.formats.QUIZ_READINGS
READINGS = {"choice": _one_pick, "choices": lambda options, text: set(_picks(options, text)),
            "bool": _one_pick, "number": _number, "size": _size}


def judge_answer(question: Question, answer: Any) -> CheckResult:
    """The CheckResult of a typed answer, and the lines a student sees for it."""
    exercise, check = question.exercise, question.check
    reference = Reference(exercise)
    wrong = [(m, m.wrong and reference.call(m.wrong, (), {}, check))
             for m in exercise.misconceptions if m.applies_to(check)]
    return judge(check, exercise, CallOutcome(Status.OK, value=answer), question.expected,
                 wrong)


# what a function's body is now: the stub's, an answer typed in, or code of one's own
STUB, ANSWER, OWN = "stub", "answer", "own"


def current(stub_path: Path, function: str) -> tuple[str, Any]:
    """(STUB, None), (ANSWER, the value it returns) or (OWN, None) for ``function`` in
    the student's file; a file that cannot be read or parsed is OWN (left alone)."""
    try:
        node = _function(_source(stub_path), function)
    except (OSError, SyntaxError, ValueError, StopIteration):
        return OWN, None
    body = node.body[1:] if _docstring(node) else node.body
    if all(_stub_statement(statement) for statement in body):
        return STUB, None
    if len(body) == 1 and isinstance(body[0], ast.Return) and body[0].value is not None:
        try:
            return ANSWER, _literal(body[0].value)
        except ValueError:
            pass
    return OWN, None


def right_before(question: Question, folder: Path) -> bool:
    """Whether the student's file already holds a right answer to ``question``."""
    state, value = current(folder / question.exercise.file, question.check.function)
    return state == ANSWER and judge_answer(question, value).passed


def in_order(asked: list[Question], folder: Path) -> tuple[list[Question], int]:
    """The questions not yet answered right first, then the others; and how many were."""
    done = [right_before(q, folder) for q in asked]
    return [q for q, d in zip(asked, done) if not d] + \
        [q for q, d in zip(asked, done) if d], sum(done)


def _stub_statement(node: ast.stmt) -> bool:
    """``raise NotImplementedError(...)``, ``pass`` or ``...``: what a stub's body holds."""
    if isinstance(node, ast.Pass):
        return True
    if isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant):
        return node.value.value is Ellipsis
    if isinstance(node, ast.Raise) and node.exc is not None:
        exc = node.exc.func if isinstance(node.exc, ast.Call) else node.exc
        return isinstance(exc, ast.Name) and exc.id == "NotImplementedError"
    return False


def _literal(node: ast.expr) -> Any:
    """The value of a literal, ``set()`` and ``set([...])`` included (never run)."""
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) \
            and node.func.id in ("set", "frozenset") and not node.keywords \
            and len(node.args) <= 1:
        items = ast.literal_eval(node.args[0]) if node.args else ()
        return set(items) if node.func.id == "set" else frozenset(items)
    return ast.literal_eval(node)


def written(value: Any) -> str:
    """``value`` as Python source: a set as ``{...}``, sorted, so the file reads well."""
    if isinstance(value, (set, frozenset)):
        items = ", ".join(repr(v) for v in sorted(value, key=repr))
        if isinstance(value, set):
            return "{" + items + "}" if value else "set()"
        return "frozenset({" + items + "})" if value else "frozenset()"
    return repr(value)


def record(stub_path: Path, function: str, answer: Any) -> None:
    """Write ``return <answer>`` as the body of ``function`` in the stub, docstring kept
    (read and written through no link: the folder may hold anything)."""
    source = _source(stub_path)
    node = _function(source, function)
    body = node.body
    keep = 1 if _docstring(node) else 0
    lines = source.split("\n")
    indent = " " * (body[0].col_offset if body else node.col_offset + 4)
    start = body[keep].lineno - 1 if len(body) > keep else body[-1].end_lineno
    end = body[-1].end_lineno
    lines[start:end] = [f"{indent}return {written(answer)}"]
    write_in(stub_path.parent, stub_path.name, "\n".join(lines).encode("utf-8"))


def _source(stub_path: Path) -> str:
    return read_in(stub_path.parent, stub_path.name, STUB_BYTES).decode("utf-8")


def _function(source: str, function: str) -> ast.FunctionDef:
    return next(n for n in ast.parse(source).body
                if isinstance(n, ast.FunctionDef) and n.name == function)


def _docstring(node: ast.FunctionDef) -> bool:
    first = node.body[0] if node.body else None
    return isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant) \
        and isinstance(first.value.value, str)


def _docstrings(exercise):
    return {name: ast.get_docstring(node) or name
            for name, node in stub_functions(exercise).items()}


def _in_language(doc, lang):
    """The English part of a bilingual docstring, or the part after '中文：' for zh."""
    english, _, chinese = doc.partition("中文：")
    chosen = chinese if lang == "zh" and chinese else english
    return "\n".join(line for line in chosen.strip().splitlines() if line.strip())
