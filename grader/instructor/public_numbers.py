"""What a student can read: the numbers a set prints and the data files it ships.

``dev check``'s lookup stand-in learns all of it, so that a hidden check whose
inputs are all public numbers (printed in any prompt, hint or check description
of the set, in either language, in a visible check's inputs, or held in a data
file) is answered from a table and counts against the exercise: such checks
must rest on drawn inputs.
"""

import json
import re
from collections.abc import Iterable
from typing import Any

from ..course.spec import ExerciseSet

# 389,120 and 1,048,576 as one number (and their pieces too); 2²⁰ as 2, 20 and 2**20
_NUMBER = re.compile(r"\d{1,3}(?:,\d{3})+(?![\d.])|\d+(?:\.\d+)?")
_POWER = re.compile(r"(\d+)([⁰¹²³⁴⁵⁶⁷⁸⁹]+)")
_SUPERSCRIPTS = str.maketrans("⁰¹²³⁴⁵⁶⁷⁸⁹", "0123456789")


def data_files(exercise_set: ExerciseSet) -> list[dict[str, Any]]:
    """The JSON mappings shipped under exercises/SET/ (model configs and the like);
    a hidden folder (a student's .attn-grade progress) is not the course's."""
    out = []
    root = exercise_set.exercises_dir
    for path in sorted(root.rglob("*.json")):
        if any(part.startswith(".") for part in path.relative_to(root).parts):
            continue
        try:
            value = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            continue
        if isinstance(value, dict):
            out.append(value)
    return out


def numbers_in(text: str) -> set[float]:
    """Every number a text prints, with its negative (a "−93.3 %" is read either way)."""
    found: set[float] = set()
    for match in _NUMBER.finditer(text):
        token = match.group()
        found.add(float(token.replace(",", "")))
        found.update(float(piece) for piece in token.split(",") if piece)
    for base, exponent in _POWER.findall(text):
        power = int(exponent.translate(_SUPERSCRIPTS))
        found.update((float(power), float(int(base) ** power)))
    return found | {-x for x in found}


def _leaves(value: Any) -> Iterable[Any]:
    if isinstance(value, dict):
        for v in value.values():
            yield from _leaves(v)
    elif isinstance(value, (list, tuple)):
        for v in value:
            yield from _leaves(v)
    else:
        yield value


def _texts(exercise_set: ExerciseSet) -> Iterable[str]:
    """Every text a student reads: prompts, hints, checks' descriptions (``show`` lists
    the hidden checks' too), both languages."""
    for exercise in exercise_set.exercises:
        texts = [exercise.title, exercise.prompt, *exercise.hints,
                 *(c.description for c in exercise.checks if c.description)]
        for text in texts:
            yield text.en
            yield text.zh


def public_numbers(exercise_set: ExerciseSet) -> list[float]:
    """The set's printed numbers, its data files' and its visible checks' numbers, sorted."""
    found: set[float] = set()
    for text in _texts(exercise_set):
        found |= numbers_in(text)
    visible = [(c.args, c.kwargs) for e in exercise_set.exercises for c in e.checks
               if not c.hidden]
    for config in [*data_files(exercise_set), *visible]:
        for leaf in _leaves(config):
            if isinstance(leaf, str):
                found |= numbers_in(leaf)
            elif isinstance(leaf, (int, float)) and not isinstance(leaf, bool):
                found |= {float(leaf), -float(leaf)}
    return sorted(found)
