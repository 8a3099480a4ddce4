"""The student's loop: show -> edit -> grade -> hint -> progress.

Commands that need no student process run in-process through click's
CliRunner; gradings go through the real CLI.
"""

import json
import shutil

import pytest
from click.testing import CliRunner
from conftest import EXERCISES, ROOT, SOLUTIONS, grade_in_workers, run_here
from terminal import through_a_terminal

from grader.cli import main


def cli(*args):
    result = CliRunner().invoke(main, [*map(str, args)], catch_exceptions=False)
    return result.exit_code, result.output


@pytest.fixture
def work(tmp_path):
    """A student's folder: the day3 stubs, with the reference for every file."""
    folder = tmp_path / "work"
    shutil.copytree(EXERCISES / "day3", folder, ignore=shutil.ignore_patterns(".*"))
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
    from grader.course import loader
    from grader.course.spec import Course

    total = len(loader.load_set(Course(ROOT), "day3").exercise("attention").hints)
    assert total >= 2   # a ladder: a nudge before the method
    for n in range(1, total + 1):
        code, out = cli("hint", "day3", "attention", "--submission", work, "--course", ROOT,
                        "--lang", "en")
        assert code == 0 and f"hint {n} of {total}" in out and f"hint {n + 1} " not in out
    code, again = cli("hint", "day3", "attention", "--submission", work, "--course", ROOT,
                      "--lang", "en")
    assert "no more hints" in again
    progress = json.loads((work / ".attn-grade" / "progress.json").read_text())
    assert progress["sets"]["day3"]["attention"]["hints"] == total


WRONG_BY_HAND = (SOLUTIONS / "day3" / "attention_by_hand.py").read_text() + '''

def selftest_q7_output():
    print("my weights:", [0.2, 0.6, 0.2])
    return [0.5, 0.5, 0.5]
'''


def test_a_failed_grading_offers_hints_and_hides_the_typed_in_answer(work):
    (work / "attention_by_hand.py").write_text(WRONG_BY_HAND)
    proc = run_here("day3", "--submission", work, "--exercise", "attention_by_hand",
                    "--lang", "en")
    out = proc.stdout
    assert proc.returncode == 1
    assert "[0.5, 0.5, 0.5] is not right" in out
    assert "expected" not in out.split("selftest", 1)[-1].split("\n\n")[0]
    assert "hint(s) available: attn-grade hint day3 attention_by_hand" in out
    assert "hint:" not in out                                  # never printed uninvited
    assert "your code printed:" in out and "my weights: [0.2, 0.6, 0.2]" in out


def test_looking_again_at_the_hints_in_a_terminal_spends_none(work):
    from grader.report.progress import Progress

    code, out = cli("hint", "day3", "attention", "--submission", work, "--course", ROOT,
                    "--lang", "en")   # not a terminal: revealed without asking
    assert code == 0 and "hint 1 of 3" in out
    code, out = through_a_terminal(["hint", "day3", "attention", "--submission", work,
                                    "--lang", "zh"], ["n"])
    assert code == 0, out
    assert "先只为一个 query 写" in out                    # the hint seen, in Chinese
    assert "显示第 2 条提示（共 3 条）吗？还剩 2 条" in out    # asked, saying what it costs
    assert "没有显示新的提示：已显示 1 条" in out and "第 2 条，共 3 条" not in out
    assert Progress(work).record("day3", "attention").hints == 1
    code, out = through_a_terminal(["hint", "day3", "attention", "--submission", work,
                                    "--lang", "en"], ["y"])
    assert "hint 2 of 3" in out and out.count("hint 1 of 3") == 1
    assert Progress(work).record("day3", "attention").hints == 2
    code, out = cli("progress", "day3", "--submission", work, "--course", ROOT, "--lang", "en")
    assert "day3" in out and "/ 125 points, 0 of 14 exercises solved" in out
    assert "2 hint(s)" in out.splitlines()[-2]


def test_progress_without_a_set_totals_every_set():
    code, out = cli("progress", "--course", ROOT, "--lang", "en")
    lines = out.splitlines()
    assert code == 0 and len(lines) == 2
    assert any(line.split()[1] == "day3" and "/ 125 points" in line for line in lines)
    code, out = cli("progress", "--course", ROOT, "--lang", "zh")
    assert "/ 125 分" in out


def test_progress_reflects_three_runs_and_list_marks_what_is_solved(work, tmp_path):
    (work / "growth.py").write_text("def attention_matrix_cells(n):\n    return n\n\n"
                                    "def growth_factor(a, b):\n    return b / a\n")
    run_here("day3", "--submission", work, "--exercise", "growth", "--lang", "en")
    shutil.copy(SOLUTIONS / "day3" / "growth.py", work / "growth.py")
    for _ in range(2):
        run_here("day3", "--submission", work, "--exercise", "growth", "--lang", "en")
    code, out = cli("progress", "day3", "--submission", work, "--course", ROOT, "--lang", "en")
    line = next(ln for ln in out.splitlines() if " growth " in ln)
    assert "best 6 / 6, 3 attempt(s)" in line and line.startswith("[####")
    assert "next: temperature" in out
    record = json.loads((work / ".attn-grade" / "progress.json").read_text())
    assert record["sets"]["day3"]["growth"]["solved_at"]


def test_the_json_report_records_hints_used(work):
    cli("hint", "day3", "growth", "--submission", work, "--course", ROOT)
    [(_, doc)] = grade_in_workers([["day3", "--submission", work, "--exercise", "growth",
                                    "--json"]])
    growth = next(e for e in doc["extra_data"]["exercises"] if e["exercise"] == "growth")
    assert growth["hints_used"] == 1


def test_a_closed_pipe_ends_quietly():
    import subprocess
    import sys

    proc = subprocess.run(f"{sys.executable} -m grader list --course {ROOT} | head -1",
                          shell=True, capture_output=True, text=True, cwd=ROOT)
    assert proc.stdout.count("\n") == 1 and "internal error" not in proc.stderr


def _two_students():
    """Two student ids whose question 7 differs from each other and from the notes."""
    from grader.course import loader
    from grader.course.spec import Course

    exercise = loader.load_set(Course(ROOT), "day3").exercise("attention_by_hand")
    seen = {}
    for n in range(100):
        variant = exercise.for_student(f"student{n}@example.edu").variant
        if variant and variant not in seen:
            seen[variant] = f"student{n}@example.edu"
        if len(seen) == 2:
            return exercise, list(seen.values())
    raise AssertionError("no two variants")


def test_two_students_get_their_own_numbers_and_are_graded_against_them(tmp_path):
    import numpy as np

    exercise, (alice, bob) = _two_students()
    q3 = {s: exercise.for_student(s).params["q3"] for s in (alice, bob)}
    assert q3[alice] != q3[bob] and [0, 2] not in q3.values()
    for student in (alice, bob):
        code, out = cli("show", "day3", "attention_by_hand", "--student", student,
                        "--course", ROOT, "--lang", "en")
        assert f"q3={q3[student]}".replace(" ", "") in out.replace(" ", "")
    code, out = cli("show", "day3", "attention_by_hand", "--course", ROOT, "--lang", "en")
    assert "q3=[0,2]" in out.replace(" ", "")                # no id: the notes' numbers

    def answer(q):   # what a student works out by hand for their q3, to two decimals
        k = np.array([[1, 0], [0, 1], [1, 0]])
        v = np.array([[2, 0], [0, 2], [4, 4]])
        e = np.exp(k @ np.array(q, dtype=float))
        return [round(x, 2) for x in (e / e.sum()) @ v]

    jobs, keys = [], []
    for student in (alice, bob):
        work = tmp_path / student
        shutil.copytree(EXERCISES / "day3", work, ignore=shutil.ignore_patterns(".*"))
        shutil.copy(SOLUTIONS / "day3" / "attention_by_hand.py", work)
        with open(work / "attention_by_hand.py", "a") as f:
            f.write(f"\n\ndef selftest_q7_output():\n    return {answer(q3[student])!r}\n")
        for grader_id in (alice, bob, ""):
            jobs.append(["day3", "--submission", work, "--exercise", "attention_by_hand",
                         "--json", "--student", grader_id, "--lang", "en"])
            keys.append((student, grader_id))
    results = {}
    for key, (code, doc) in zip(keys, grade_in_workers(jobs)):
        assert code in (0, 1), doc
        results[key] = next(t for t in doc["tests"] if t["extra_data"]["check"] == "q7")["status"]
        assert doc["extra_data"]["exercises"][0]["variant"] == \
            exercise.for_student(key[1]).variant
    assert results[alice, alice] == results[bob, bob] == "passed"
    assert results[alice, bob] == results[bob, alice] == "failed"
    assert results[alice, ""] == results[bob, ""] == "failed"   # the notes' q3 is [0, 2]


def test_watch_regrades_the_saved_exercise_and_stops_cleanly_on_ctrl_c(tmp_path):
    import os
    import signal
    import subprocess
    import sys
    import time

    work = tmp_path / "watch"
    shutil.copytree(EXERCISES / "day3", work, ignore=shutil.ignore_patterns(".*"))
    runs = tmp_path / "runs"    # the run folder, and so the sandbox's command line, is here
    runs.mkdir(mode=0o755)
    # Ctrl-C as a terminal delivers it, whoever started pytest: a shell's background job
    # starts with SIGINT ignored, which Python (and so watch) would keep
    proc = subprocess.Popen([sys.executable, "-m", "grader", "watch", "day3", "--submission",
                             str(work), "--lang", "en"], cwd=ROOT, stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT, text=True, bufsize=1,
                            env={**os.environ, "TMPDIR": str(runs)},
                            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))

    def wait_for(text, seconds=60):
        seen, deadline = "", time.monotonic() + seconds
        while time.monotonic() < deadline:
            line = proc.stdout.readline()
            seen += line
            if text in seen:
                return seen
        raise AssertionError(f"no {text!r} in:\n{seen}")

    try:
        wait_for("watching")
        wrong = (SOLUTIONS / "day3" / "temperature.py").read_text().replace(" / T", " * T")
        (work / "temperature.py").write_text(wrong)
        failing = wait_for("waiting for the next save")
        assert "temperature.py — Temperature and softmax" in failing and "✗" in failing
        assert "attention.py" not in failing                    # only the saved exercise
        time.sleep(0.05)
        shutil.copy(SOLUTIONS / "day3" / "temperature.py", work / "temperature.py")
        passing = wait_for("waiting for the next save")
        assert "10 / 10" in passing and "next: attention_by_hand" in passing
    finally:
        proc.send_signal(signal.SIGINT)
        try:
            out, _ = proc.communicate(timeout=30)
        except subprocess.TimeoutExpired:   # not stopped: it and its sandbox must not stay
            proc.kill()
            proc.communicate()
            raise
    assert proc.returncode == 0 and "stopped watching" in out
    for marker in (work, runs):
        children = subprocess.run(["pgrep", "-f", str(marker)], capture_output=True, text=True)
        assert children.stdout.strip() in ("", str(os.getpid())), children.stdout
    assert not list(runs.iterdir())        # the run folder is gone too
