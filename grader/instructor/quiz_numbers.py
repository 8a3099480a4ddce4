"""``dev check``: feedback on a typed-in answer names the mistake, never the number the
student has to find.

A misconception message of a quiz question (a check ``attn-grade quiz`` asks) is
reported when it states, in either language, a number that neither the question
nor the exercise's prompt nor its stub file states, and that the reference's answer
depends on: the answer itself (to the digits written) or, for a whole answer, one of
its factors ("only 8 KV heads" of 131072 bytes).  A number inside a name
(Llama-3-8B, BF16) is a name, not a number; the powers of 1000 and 1024 (KB and KiB,
MB and MiB...) are no fact of a question, and a message may name them.
"""

import contextlib
import re
from fractions import Fraction
from pathlib import Path
from typing import Any

from ..course.spec import LANGUAGES, Exercise, ExerciseSet
from ..course.units import UnitError, parse_bytes
from ..judge.msg import Msg
from ..quiz import Question, questions
from ..report.student_view import prompt_text
from .findings import Finding

# a number standing alone (not in Llama-3-8B, BF16, x2), its power (2²⁰) and the byte
# unit after it, if any
NUMBER = re.compile(r"(?<![A-Za-z0-9_.,])(?<![A-Za-z]-)([0-9]{1,3}(?:,[0-9]{3})+|[0-9]+"
                    r"(?:\.[0-9]+)?)(?![A-Za-z0-9_]|[.,][0-9])([⁰¹²³⁴⁵⁶⁷⁸⁹]*)"
                    r"(?:\s*([KMG]i?B)(?![A-Za-z]))?")
POWERS = str.maketrans("⁰¹²³⁴⁵⁶⁷⁸⁹", "0123456789")
SIZE_CONSTANTS = {Fraction(base) ** n for base in (1000, 1024) for n in range(1, 7)}


def numbers_given_away(exercise_set: ExerciseSet, root: Path) -> list[Finding]:
    """One finding per misconception message, language and number it gives away."""
    out = []
    for lang in LANGUAGES:
        for question in questions(exercise_set, lang):
            answer = _numeric(question.expected)
            if answer is None:
                continue
            told = set(stated(_what_the_student_reads(question, lang)).values())
            for misconception in question.exercise.misconceptions:
                if not misconception.applies_to(question.check):
                    continue
                text = misconception.message.get(lang)
                for shown, value in stated(text).items():
                    if value not in told and depends(value, shown, answer):
                        out.append(_finding(exercise_set.id, question, misconception.tag,
                                            shown, lang, text, root))
    return out


def stated(text: str) -> dict[str, Fraction]:
    """The numbers ``text`` states, as written -> value (a size in bytes)."""
    found = {}
    for match in NUMBER.finditer(text):
        number, power, unit = match.groups()
        value = Fraction(number.replace(",", "")) ** int(power.translate(POWERS) or 1)
        if unit:
            with contextlib.suppress(UnitError):
                value = Fraction(parse_bytes(f"{value} {unit}"))
        found[match.group(0).strip()] = value
    return found


def depends(value: Fraction, shown: str, answer: Fraction) -> bool:
    """Whether the answer is ``value`` (to the decimals shown), or a whole answer is a
    multiple of it; never for a constant of sizes."""
    if value in SIZE_CONSTANTS:
        return False
    number = shown.split()[0]
    if abs(answer) == value or ("." in number
                                and round(abs(answer), len(number.split(".")[1])) == value):
        return True
    return answer.denominator == 1 and value.denominator == 1 and value > 1 \
        and answer % value == 0


def _numeric(expected: Any) -> Fraction | None:
    """The reference's answer as a number (a size in bytes), or None for a choice."""
    if isinstance(expected, bool):
        return None
    if isinstance(expected, (int, float)):
        return Fraction(expected)
    if isinstance(expected, str):
        try:
            return Fraction(parse_bytes(expected))
        except UnitError:
            return None
    return None


def _what_the_student_reads(question: Question, lang: str) -> str:
    """The question, the exercise's prompt and the stub file as handed out."""
    exercise: Exercise = question.exercise
    try:
        stub = exercise.spec_path.with_name(exercise.file).read_text(encoding="utf-8")
    except OSError:
        stub = ""
    return "\n".join((question.text, prompt_text(exercise, lang), stub))


def _finding(set_id: str, question: Question, tag: str, shown: str, lang: str, text: str,
             root: Path) -> Finding:
    path = question.exercise.spec_path
    start = text.strip()[:12]   # where the message begins (YAML may fold the rest)
    lines = path.read_text(encoding="utf-8").splitlines()
    line = next((i for i, row in enumerate(lines, 1) if start in row), 0)
    where = path.relative_to(root) if path.is_relative_to(root) else path
    return Finding(set_id, question.exercise.id,
                   Msg("devcheck-gives-number", tag=tag, lang=lang, number=shown,
                       function=question.check.function),
                   place=f"{where}:{line}" if line else str(where))
