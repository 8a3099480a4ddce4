"""The student's loop: show -> edit -> grade -> hint -> progress.

Commands that need no student process run in-process through click's
CliRunner; gradings go through the real CLI.
"""

import json
import shutil

import pytest
from click.testing import CliRunner
from conftest import EXERCISES, ROOT, SOLUTIONS, run_cli

from grader.cli import main


def cli(*args):
    result = CliRunner().invoke(main, [*map(str, args)], catch_exceptions=False)
    return result.exit_code, result.output


@pytest.fixture
def work(tmp_path):
    """A student's folder: the day3 stubs, with the reference for every file."""
    folder = tmp_path / "work"
    shutil.copytree(EXERCISES / "day3", folder)
    for stub in (EXERCISES / "day3").glob("*.py"):
        shutil.copy(SOLUTIONS / "day3" / stub.name, folder / stub.name)
    return folder


def test_show_prints_the_prompt_the_functions_and_the_hidden_checks():
    code, out = cli("show", "day3", "attention", "--course", ROOT, "--lang", "en")
    assert code == 0
    assert "LAST n_q positions" in out                       # the prompt, conventions included
    assert "def attention(Q, K, V, causal=True)" in out      # the signature, from the stub
    assert "seed-output: attention(" in out                  # a visible check and its call
    assert "hidden checks also run" in out
    assert "Under the causal mask, token 1 sees only itself." in out


def test_show_follows_the_language_and_names_an_unknown_exercise():
    code, out = cli("show", "day3", "attention", "--course", ROOT, "--lang", "zh")
    assert code == 0 and "在 attention.py 里写这些函数" in out
    code, out = cli("show", "day3", "atention", "--course", ROOT)
    assert code == 2 and "attention" in out


def test_hint_reveals_one_more_hint_per_call_and_remembers(work):
    exercise_hints = 1   # attention has one hint today; the ladder grows with the course
    code, first = cli("hint", "day3", "attention", "--submission", work, "--course", ROOT,
                      "--lang", "en")
    assert code == 0 and f"hint 1 of {exercise_hints}" in first
    code, again = cli("hint", "day3", "attention", "--submission", work, "--course", ROOT,
                      "--lang", "en")
    assert "no more hints" in again
    progress = json.loads((work / ".attn-grade" / "progress.json").read_text())
    assert progress["sets"]["day3"]["attention"]["hints"] == exercise_hints


WRONG_BY_HAND = (SOLUTIONS / "day3" / "attention_by_hand.py").read_text() + '''

def selftest_q7_output():
    print("my weights:", [0.2, 0.6, 0.2])
    return [0.5, 0.5, 0.5]
'''


def test_a_failed_grading_offers_hints_and_hides_the_typed_in_answer(work):
    (work / "attention_by_hand.py").write_text(WRONG_BY_HAND)
    proc = run_cli("day3", "--submission", work, "--exercise", "attention_by_hand",
                   "--lang", "en")
    out = proc.stdout
    assert proc.returncode == 1
    assert "[0.5, 0.5, 0.5] is not right" in out
    assert "expected" not in out.split("selftest", 1)[-1].split("\n\n")[0]
    assert "hint(s) available: attn-grade hint day3 attention_by_hand" in out
    assert "hint:" not in out                                  # never printed uninvited
    assert "your code printed:" in out and "my weights: [0.2, 0.6, 0.2]" in out


def test_progress_reflects_three_runs_and_list_marks_what_is_solved(work, tmp_path):
    (work / "growth.py").write_text("def attention_matrix_cells(n):\n    return n\n\n"
                                    "def growth_factor(a, b):\n    return b / a\n")
    run_cli("day3", "--submission", work, "--exercise", "growth", "--lang", "en")
    shutil.copy(SOLUTIONS / "day3" / "growth.py", work / "growth.py")
    for _ in range(2):
        run_cli("day3", "--submission", work, "--exercise", "growth", "--lang", "en")
    code, out = cli("progress", "day3", "--submission", work, "--course", ROOT, "--lang", "en")
    line = next(ln for ln in out.splitlines() if " growth " in ln)
    assert "best 6 / 6, 3 attempt(s)" in line and line.startswith("[####")
    assert "next: temperature" in out
    record = json.loads((work / ".attn-grade" / "progress.json").read_text())
    assert record["sets"]["day3"]["growth"]["solved_at"]


def test_the_json_report_records_hints_used(work):
    cli("hint", "day3", "growth", "--submission", work, "--course", ROOT)
    doc = json.loads(run_cli("day3", "--submission", work, "--exercise", "growth",
                             "--json").stdout)
    growth = next(e for e in doc["extra_data"]["exercises"] if e["exercise"] == "growth")
    assert growth["hints_used"] == 1


def test_a_closed_pipe_ends_quietly():
    import subprocess
    import sys

    proc = subprocess.run(f"{sys.executable} -m grader list --course {ROOT} | head -1",
                          shell=True, capture_output=True, text=True, cwd=ROOT)
    assert proc.stdout.count("\n") == 1 and "internal error" not in proc.stderr
