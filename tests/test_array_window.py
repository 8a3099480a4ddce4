"""A failed visible array check shows both arrays side by side, the differing cells
marked (in colour on a terminal that has it); a hidden check shows no value."""

import dataclasses
import shutil

import numpy as np
import pytest
from conftest import EXERCISES, ROOT
from terminal import through_a_terminal

from grader.course import loader
from grader.course.spec import Course
from grader.judge.check import judge
from grader.judge.results import CheckResult
from grader.report.arrays import window_of
from grader.report.render import _styler, check_lines
from grader.run.outcome import CallOutcome

CAUSAL = np.array([[1, 0, 0], [0.5, 0.5, 0], [0.2, 0.3, 0.5]])
UNMASKED = np.array([[0.2, 0.3, 0.5], [0.25, 0.25, 0.5], [0.2, 0.3, 0.5]])


@pytest.fixture(scope="module")
def attention():
    exercise = loader.load_set(Course(ROOT), "day3").exercise("attention")
    return exercise, next(c for c in exercise.checks if c.id == "seed-output")


def judged(attention, got, want, **change):
    exercise, check = attention
    check = dataclasses.replace(check, **change)
    return judge(check, exercise, CallOutcome("ok", value=(got, None)), (want, None), [])


def test_a_log_reads_both_arrays_and_a_star_on_each_cell_that_differs(attention):
    assert check_lines(judged(attention, UNMASKED, CAUSAL), "en") == [
        "6 of 9 elements differ; the largest error is 0.5 at index (0, 2) "
        "(expected 0, got 0.5)",
        "your answer beside the expected one; a * marks a cell that differs:",
        "     your answer                expected",
        "          0       1       2          0       1       2",
        "  0  0.2000* 0.3000* 0.5000*    1.0000* 0.0000* 0.0000*",
        "  1  0.2500* 0.2500* 0.5000*    0.5000* 0.5000* 0.0000*",
        "  2  0.2000  0.3000  0.5000     0.2000  0.3000  0.5000",
        "tolerance: relative error up to 0.0001%, or absolute error up to 1e-09"]


def test_a_terminal_in_colour_shows_the_cells_that_differ_in_red(attention):
    red = "\x1b[31m\x1b[1m{}\x1b[0m".format
    lines = check_lines(judged(attention, UNMASKED, CAUSAL), "zh", style=_styler(True))
    assert lines[1:6] == [
        "你的答案和正确答案并排；不同的格子标为红色：",
        "     你的答案                   正确答案",
        "          0       1       2          0       1       2",
        f"  0  {red('0.2000')}  {red('0.3000')}  {red('0.5000')}     {red('1.0000')}  "
        f"{red('0.0000')}  {red('0.0000')}",
        f"  1  {red('0.2500')}  {red('0.2500')}  {red('0.5000')}     {red('0.5000')}  "
        f"{red('0.5000')}  {red('0.0000')}"]
    assert lines[6] == "  2  0.2000  0.3000  0.5000     0.2000  0.3000  0.5000"


def test_a_large_array_shows_the_window_around_its_largest_error(attention):
    want = np.arange(600.0).reshape(20, 30) / 1000
    got = want.copy()
    got[15, 25] += 1
    lines = check_lines(judged(attention, got, want), "en")
    assert lines[1] == ("your answer beside the expected one (rows 11–18 and columns 21–28 "
                        "of 20×30); a * marks a cell that differs:")
    assert lines[3].split() == [str(c) for c in range(21, 29)] * 2
    assert [line.split()[0] for line in lines[4:12]] == [str(r) for r in range(11, 19)]
    assert lines[8].split()[5] == "1.4750*" and lines[8].split()[13] == "0.4750*"
    assert sum(line.count("*") for line in lines[4:12]) == 2


def test_the_window_crosses_a_fork_and_a_hidden_check_has_none(attention):
    result = judged(attention, UNMASKED, CAUSAL)
    again = CheckResult.from_plain(result.to_plain(), exercise="attention", file="attention.py",
                                   check="seed-output", visibility="visible", max_score=1.0)
    assert check_lines(again, "en") == check_lines(result, "en")
    shown = window_of(again)
    assert shown.got[0] == [0.2, 0.3, 0.5] and shown.want[0] == [1.0, 0.0, 0.0]
    assert shown.differs[2] == [False, False, False] and all(shown.differs[0])
    hidden = judged(attention, UNMASKED, CAUSAL, visibility="hidden")
    assert window_of(hidden) is None
    assert not any(m.code == "array-window" for m in hidden.lines)
    assert not any(ch.isdigit() for line in check_lines(hidden, "en") for ch in line)


@pytest.mark.parametrize("env,coloured", [({"NO_COLOR": "1"}, False), ({}, True)])
def test_a_grading_in_a_terminal_respects_no_color(tmp_path, env, coloured):
    work = tmp_path / "work"
    shutil.copytree(EXERCISES / "day3", work, ignore=shutil.ignore_patterns(".*"))
    solution = (ROOT / "solutions" / "day3" / "attention.py").read_text()
    (work / "attention.py").write_text(solution.replace("causal=True", "causal=False", 1))
    code, out = through_a_terminal(["day3", "--submission", work, "--exercise", "attention",
                                    "--lang", "en"], [], env={"NO_COLOR": "", **env})
    assert "your answer beside the expected one" in out, out
    assert ("\x1b[31m" in out) == coloured and ("a * marks a cell" in out) != coloured
