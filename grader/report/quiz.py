"""How a quiz question and the feedback on its answer read (``grader.quiz`` asks
and judges them)."""

from ..judge.msg import Msg
from ..judge.results import CheckResult
from ..quiz import Question
from .messages import render
from .render import check_lines


def prompt_lines(question: Question, number: int, total: int, lang: str) -> list[str]:
    """The question as shown: its number, text and numbered options."""
    head = render(Msg("quiz-question", n=number, total=total, exercise=question.exercise.id),
                  lang)
    out = [head, *[f"  {line}" for line in question.text.splitlines()]]
    out += [f"  {i}) {option}" for i, option in enumerate(question.options, 1)]
    return out


def feedback_lines(result: CheckResult, lang: str) -> list[str]:
    return check_lines(result, lang)
