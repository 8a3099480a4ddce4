"""Per-student numbers answered with the notes' own: a known, nameable mistake.

An exercise with ``variants`` gives each student their own numbers; the first
variant is the notes' example.  A student who works out the notes' example
instead of their own answers what the reference answers at the first variant.
That answer is offered to the judge as one more wrong version, under a tag of
the grader's own (worded in the catalogue, not in each exercise's YAML), on
every check whose function takes the variant's numbers: the judge names it
only where the student's answer equals it and it differs from the right one.
"""

from typing import Any

from .. import wire
from ..course.spec import Check, Exercise, Misconception
from ..run.references import Reference

TAG = "notes-numbers"

# the grader's own misconception: its words are results.GRADER_TAGS' (the catalogue's)
NOTES_NUMBERS = Misconception(tag=TAG, message=None, wrong=None, rule=None,
                              functions=(), checks=())


def notes_answer(exercise: Exercise, check: Check, reference: Reference) -> Any:
    """The reference's answer to ``check`` at the notes' numbers, or None where the
    student has the notes' numbers or the check does not depend on them."""
    if len(exercise.variants) < 2 or exercise.variant == 0 or check.has_expect \
            or not reference.available:
        return None
    notes = {k: v for k, v in reference.takes(check.function, exercise.variants[0]).items()
             if k not in check.kwargs}
    mine = reference.takes(check.function, exercise.params)
    if not notes or wire.dumps(notes) == wire.dumps({k: mine.get(k) for k in notes}):
        return None
    return reference.call(check.function, check.args, {**check.kwargs, **notes}, check,
                          purpose="the notes' numbers")
