"""``attn-grade quiz SET [ID]``: the questions typed in, asked one by one.

Only a right answer is written into the student's file; an empty line skips a
question; ``q``, Ctrl-D (the end of piped input) and Ctrl-C stop, and every way
out ends with what was answered, saved and left.  Exit 1 only when an answer was
wrong, as a grading would.
"""

import dataclasses
import sys
from pathlib import Path
from typing import Any

import click

from ..errors import ExitCode
from ..judge.msg import Msg
from ..quiz import (
    ANSWER,
    STUB,
    Question,
    current,
    in_order,
    judge_answer,
    parse_answer,
    questions,
    record,
    written,
)
from ..report import render as report
from ..report.quiz import feedback_lines, prompt_lines
from .common import confirm, say
from .student import student_command, student_set

STOP_WORDS = ("q", "quit", "exit", "退出")


class Stop(Exception):
    """The student asked to stop (``q``, Ctrl-D, Ctrl-C)."""


@dataclasses.dataclass
class Tally:
    """What happened to the questions of one quiz."""

    asked: int
    right: int = 0
    wrong: int = 0
    saved: int = 0
    files: set = dataclasses.field(default_factory=set)

    def summary(self) -> Msg:
        answered = self.right + self.wrong
        counts = {"answered": answered, "right": self.right, "wrong": self.wrong,
                  "left": self.asked - answered}
        if not self.saved:
            return Msg("quiz-done-unsaved", **counts)
        return Msg("quiz-done", **counts, saved=self.saved, files=", ".join(sorted(self.files)))


@student_command("quiz", "optional")
def quiz(set_id: str, exercise_id: str | None, submission: str | None, course_dir: str | None,
         lang: str, student: str | None) -> None:
    """Answer SET's typed-in questions here: choices by number, True/False, numbers and
    sizes. Each answer is checked at once; a right one is saved into your stub file.
    An empty line skips a question; q, Ctrl-D or Ctrl-C stops."""
    _, exercise_set, _ = student_set(course_dir, set_id, exercise_id)
    folder = Path(submission or exercise_set.exercises_dir)
    asked, before = in_order(questions(exercise_set, lang, {exercise_id} if exercise_id
                                       else None, student), folder)
    if before:
        say(Msg("quiz-right-before", count=before), lang)
    tally = Tally(len(asked))
    try:
        for number, question in enumerate(asked, 1):
            click.echo("\n".join(prompt_lines(question, number, len(asked), lang)))
            _one(question, folder, lang, tally)
    except Stop:
        pass
    say(tally.summary(), lang)
    sys.exit(ExitCode.FAILED if tally.wrong else ExitCode.PASSED)


def _one(question: Question, folder: Path, lang: str, tally: Tally) -> None:
    """Ask, judge and (when right) save one question."""
    answer = _ask(question, lang)
    if answer is None:
        say(Msg("quiz-skipped"), lang)
        click.echo("")
        return
    result = judge_answer(question, answer)
    click.echo("\n".join(f"  {line}" for line in feedback_lines(result, lang)))
    if not result.passed:
        tally.wrong += 1
        say(Msg("quiz-not-saved", file=question.exercise.file), lang)
    else:
        tally.right += 1
        if _save(question, folder, answer, lang):
            tally.saved += 1
            tally.files.add(question.exercise.file)
    click.echo("")


def _ask(question: Question, lang: str) -> Any:
    """The typed answer; None for an empty line; Stop for q, Ctrl-D or Ctrl-C."""
    while True:
        try:
            text = click.prompt(report.render(Msg("quiz-answer"), lang), default="",
                                show_default=False, prompt_suffix=" ")
        except click.Abort:   # Ctrl-C, or Ctrl-D / the end of the input
            click.echo("")
            raise Stop from None
        if not sys.stdin.isatty():   # piped: the answer on its line, as a terminal shows it
            click.echo(text)
        if not text.strip():
            return None
        if text.strip().lower() in STOP_WORDS:
            raise Stop
        try:
            return parse_answer(question, text)
        except ValueError as exc:
            say(Msg("quiz-invalid", expect=str(exc)), lang)


def _save(question: Question, folder: Path, answer: Any, lang: str) -> bool:
    """Write a right answer over the stub's body; over anything else (code of the
    student's own, another answer they wrote) only when they say yes (a terminal asks;
    piped input keeps what they wrote)."""
    path, function = folder / question.exercise.file, question.check.function
    state, value = current(path, function)
    where = {"file": question.exercise.file, "function": function, "value": written(answer)}
    if state == ANSWER and written(value) == written(answer):
        say(Msg("quiz-saved", **where), lang)
        return True
    if state != STUB and not (sys.stdin.isatty() and confirm(
            Msg("quiz-replace", code=f"return {where['value']}", **where), lang)):
        say(Msg("quiz-kept-own", **where), lang)
        return False
    try:
        record(path, function, answer)
    except (OSError, SyntaxError, ValueError, StopIteration):
        say(Msg("quiz-kept-own", **where), lang)
        return False
    say(Msg("quiz-saved", **where), lang)
    return True
