"""Answers crafted against the trusted side, graded through the CLI.

Each attack is a student file whose answers are meant to crash, hang or fool
the grader's own work on them (comparing, simplifying, evaluating, hidden
pytest assertions, writing the report).  Every one must fail only its own
checks, inside a bounded time, with a valid report; none may earn a point it
did not earn honestly, and none may show a hidden input.
"""

import json
import re
import time

import pytest
from conftest import (
    HANG_GUARD,
    ROOT,
    SOLUTIONS,
    checks_of,
    grade_in_workers,
    grade_many,
    run_here,
)

LIMITS = ("--time-limit", "2", "--lang", "en")
SET = "day3"

GROWTH = '''
import sympy
def attention_matrix_cells(n):
    {cells}
def growth_factor(n_from, n_to):
    {factor}
'''


def growth(cells="return n * n", factor="return (n_to / n_from) ** 2"):
    return GROWTH.format(cells=cells, factor=factor)


PATCHED_WIRE = '''
import _attn_grade_wire as wire
_encode = wire.encode
def _forged(value, *a, **k):
    if value == 16.0:
        return {forged}
    return _encode(value, *a, **k)
wire.encode = _forged
''' + growth()

LAZY_BIG = ("big = sympy.Pow(3, sympy.Integer(10**8), evaluate=False)\n"
            "    m = sympy.Symbol('n')\n"
            "    return sympy.Mul(big, m*m, sympy.Pow(big, -1, evaluate=False), evaluate=False)"
            " if isinstance(n, sympy.Symbol) else n * n")
NESTED_ABS = ("e = sympy.Integer(16)\n    for _ in range(420):\n"
              "        e = sympy.Abs(e, evaluate=False)\n    return e")

# name -> (exercise, files, what the grading must show)
ATTACKS = {
    "NaN in a formula": ("growth", {"growth": growth(
        cells="return n * n + sympy.Mul(sympy.nan, n, evaluate=False)")}, "cells-formula"),
    "a number beyond the float range": ("growth", {"growth": growth(
        factor="return 10 ** 400")}, "self-test-q4"),
    "a one-element complex array": ("growth", {"growth": growth(
        factor="import numpy as np; return np.array([16 + 0j])")}, "self-test-q4"),
    "Abs nested 420 deep": ("growth", {"growth": growth(factor=NESTED_ABS)}, "self-test-q4"),
    "a fraction over zero in the answer file": ("growth", {"growth": PATCHED_WIRE.format(
        forged='{"$t": "frac", "n": "1", "d": "0"}')}, "self-test-q4"),
    "a complex with a 400-digit part": ("growth", {"growth": PATCHED_WIRE.format(
        forged='{"$t": "complex", "re": int("9" * 400), "im": 0}')}, "self-test-q4"),
    "a lone surrogate in an exception": ("growth", {"growth": growth(
        factor='raise ValueError("bad \\ud800 value")')}, "self-test-q4"),
    "a 5000-digit byte count": ("kv_cache", {"kv_cache": '"9" * 5000'}, "llama3-by-hand"),
    "an honest 1.048.576 B": ("kv_cache", {"kv_cache": '"1.048.576 B"'}, "llama3-by-hand"),
    "a formula that costs 3**(10**8)": ("growth", {"growth": growth(cells=LAZY_BIG)},
                                        "cells-formula"),
}


LONGEST = "a formula that costs 3**(10**8)"
# its judging burns a core until the fork's budget (the call limit + 2 s) ends it: the
# shortest call limit makes that budget 2.5 s, not 4 s
LONGEST_LIMITS = ("--time-limit", "0.5", "--lang", "en")

# checks of the functions an attack leaves alone: they keep their points
INTACT = {"self-test-q4": ("cells-2000", "cells-formula", "cells-random-a"),
          "cells-formula": ("self-test-q4", "growth-random-a", "growth-random-b"),
          "llama3-by-hand": ("llama2-by-hand", "per-token-llama2", "cache-llama2-4096")}


def _kv_cache_with(body_by_hand):
    source = (SOLUTIONS / SET / "kv_cache.py").read_text()
    return source + f"\n\ndef llama3_8b_kv_per_token():\n    return {body_by_hand}\n"


LEVELS = ("default", "process")
# the attacks aim at the grader's own work, done in the parent whatever the level: the
# process-level runs (half the gradings) are run by .ci/run's slow step
LEVEL_PARAMS = ["default", pytest.param("process", marks=pytest.mark.slow)]


def _process_level_python():
    """As root, the process level needs a Python its own uid can reach (not one in /root)."""
    import os

    from conftest import system_venv

    from grader.run import sandbox

    if os.geteuid() == 0 and not sandbox.python_reachable():
        return system_venv()
    return None


def _wanted(item):
    """The (name, level) runs one collected test reads (so ``-m``/``-k`` run only those)."""
    callspec = getattr(item, "callspec", None)
    if item.originalname == "test_an_answer_against_the_trusted_side_fails_only_its_checks":
        return {(callspec.params["name"], callspec.params["level"])}
    return {(name, "default") for name in ATTACKS} if "attack_runs" in item.fixturenames \
        else set()


@pytest.fixture(scope="module")
def attack_runs(request, tmp_path_factory):
    """Grade every attack the selected tests read, at each level they read; (document,
    seconds) by (name, level)."""
    import shutil

    wanted = set().union(*(_wanted(item) for item in request.session.items
                           if item.module is request.module))
    jobs, names = [], []
    # the run that waits longest first (its answer's time limit): not the last to start
    first = sorted(ATTACKS.items(), key=lambda attack: attack[0] != LONGEST)
    for (name, (exercise, files, _)), level in [(a, lv) for a in first for lv in LEVELS]:
        if (name, level) not in wanted:
            continue
        folder = tmp_path_factory.mktemp("attack")
        shutil.copytree(ROOT / "exercises" / SET, folder, dirs_exist_ok=True)
        for stub in (ROOT / "exercises" / SET).glob("*.py"):
            shutil.copy(SOLUTIONS / SET / stub.name, folder / stub.name)
        for module, text in files.items():
            text = _kv_cache_with(text) if module == "kv_cache" else text
            (folder / f"{module}.py").write_text(text, encoding="utf-8")
        args = [SET, "--submission", folder, "--json", "--exercise", exercise,
                *(LONGEST_LIMITS if name == LONGEST else LIMITS)]
        if level == "process":
            args = (args + ["--isolation", "process"], _process_level_python())
        jobs.append(args)
        names.append((name, level))
    # the default level in grade-all's workers (the CLI's command, without a start-up a
    # run), the process level's through the CLI with its own Python; (document, seconds)
    in_workers = [n for n, (name, level) in enumerate(names) if level == "default"]
    start = time.monotonic()
    graded = grade_in_workers([jobs[n] for n in in_workers])
    seconds = time.monotonic() - start   # each run's at most
    runs = {}
    for n, (code, doc) in zip(in_workers, graded):
        assert code in (0, 1), f"{names[n]}: exit {code}\n{doc}"
        runs[names[n]] = (doc, seconds)
    others = [n for n in range(len(names)) if n not in in_workers]
    for n, (proc, took) in zip(others, grade_many([jobs[n] for n in others])):
        assert proc.returncode in (0, 1), f"{names[n]}: exit {proc.returncode}\n{proc.stderr}"
        runs[names[n]] = (json.loads(proc.stdout), took)
    return runs


@pytest.mark.parametrize("level", LEVEL_PARAMS)
@pytest.mark.parametrize("name", ATTACKS)
def test_an_answer_against_the_trusted_side_fails_only_its_checks(attack_runs, name, level):
    exercise, _, attacked = ATTACKS[name]
    doc, seconds = attack_runs[name, level]
    assert doc["extra_data"]["isolation"] != "none"
    assert seconds < HANG_GUARD, f"{name} held the grader {seconds:.0f} s"   # a hang guard
    tests = {t["extra_data"]["check"]: t for t in checks_of(doc, exercise)}
    assert tests[attacked]["status"] == "failed", tests[attacked]["output"]
    others = [tests[c] for c in INTACT[attacked]]
    assert all(t["status"] == "passed" for t in others), \
        [(t["name"], t["output"]) for t in others if t["status"] != "passed"]
    json.dumps(doc, ensure_ascii=False).encode("utf-8")   # writable as UTF-8


def test_an_overrun_says_the_check_took_too_long(attack_runs):
    doc, _ = attack_runs["a formula that costs 3**(10**8)", "default"]
    test = next(t for t in doc["tests"] if t["extra_data"]["check"] == "cells-formula")
    # the fork's CPU budget (the 0.5 s call limit + 2) ends it first on a quiet machine; on
    # a loaded one the fork gets less CPU than wall time and the answer's own 5 s ends it
    assert re.search(r"took longer than (2\.5|5) s", test["output"]), test["output"]


def test_nan_formula_is_named(attack_runs):
    doc, _ = attack_runs["NaN in a formula", "default"]
    test = next(t for t in doc["tests"] if t["extra_data"]["check"] == "cells-formula")
    assert "NaN or infinity" in test["output"]


def test_lone_surrogate_is_escaped_in_the_report(attack_runs):
    doc, _ = attack_runs["a lone surrogate in an exception", "default"]
    test = next(t for t in doc["tests"] if t["extra_data"]["check"] == "self-test-q4")
    assert "\\ud800" in test["output"]


def _submission(tmp_path, **files):
    import shutil

    folder = tmp_path / "submission"
    shutil.copytree(ROOT / "exercises" / SET, folder)
    for stub in (ROOT / "exercises" / SET).glob("*.py"):
        shutil.copy(SOLUTIONS / SET / stub.name, folder / stub.name)
    for module, text in files.items():
        (folder / f"{module}.py").write_text(text, encoding="utf-8")
    return folder


def test_thousands_separators_are_read_exactly():
    from grader.course.units import UnitError, parse_bytes

    assert parse_bytes("1.048.576 B") == parse_bytes("1,048,576 B") == 1024 ** 2
    assert parse_bytes("0.5 MiB") == 512 * 1024
    for unreadable in ("1,5 MiB", "1.04.576 B", "9" * 5000):
        with pytest.raises(UnitError):
            parse_bytes(unreadable)


HOSTILE_MESSAGES = '''
import numpy as np
class Evil(Exception):
    pass
Evil.__name__ = "Evil\\x1b[2J\\x1b[H"
def softmax(logits, T=1.0):
    raise ValueError("\\x1b[2J\\x1b[Hattn-grade day3\\r\\n93 / 93 points\\n"
                     + repr(np.asarray(logits).tolist()))
def greedy(logits):
    raise Evil("\\r\\x1b[1A93 / 93 points")
'''


def test_control_characters_from_the_student_are_escaped_and_hidden_inputs_unshown(tmp_path):
    folder = _submission(tmp_path, temperature=HOSTILE_MESSAGES)
    proc = run_here(SET, "--submission", folder, "--exercise", "temperature", *LIMITS)
    assert "\x1b" not in proc.stdout and "\r" not in proc.stdout
    assert not any(line.startswith("93 / 93") for line in proc.stdout.splitlines())
    [(_, doc)] = grade_in_workers([[SET, "--submission", folder, "--json", "--exercise",
                                    "temperature", *LIMITS]])
    for test in doc["tests"]:
        if test["visibility"] != "visible":
            assert "93 / 93" not in test["output"], test["output"]
            assert not re.search(r"\d\.\d", test["output"]), test["output"]
            assert "Evil" not in test["output"]


def test_printed_output_counts_do_not_leak_from_hidden_checks(tmp_path):
    folder = _submission(tmp_path, temperature='''
import numpy as np
def softmax(logits, T=1.0):
    print("x" * (5000 + int(abs(float(np.sum(logits))) * 1000)))
    return np.zeros(np.shape(logits))
def greedy(logits):
    raise ValueError("no")
''')
    [(_, doc)] = grade_in_workers([[SET, "--submission", folder, "--json", "--exercise",
                                    "temperature", "--output-limit", "4KiB", *LIMITS]])
    hidden = [t for t in doc["tests"] if t["visibility"] != "visible"]
    assert hidden and all("were dropped" not in t["output"] for t in hidden)
    assert any("the rest was dropped" in t["output"] for t in hidden)


def test_a_huge_answer_string_makes_a_small_report(tmp_path):
    folder = _submission(tmp_path, temperature='''
def softmax(logits, T=1.0):
    return "x" * 4_000_000
def greedy(logits):
    return "y" * 4_000_000
''')
    out = tmp_path / "results.json"
    start = time.monotonic()
    run_here(SET, "--submission", folder, "--json", "--exercise", "temperature",
             "--output", out, *LIMITS)
    assert out.stat().st_size < 200_000
    assert time.monotonic() - start < HANG_GUARD   # a hang guard


def test_a_crash_inside_a_hidden_test_is_named_as_a_crash(tmp_path):
    """Closing a crashed child must not take the grader's hidden-test fork with it."""
    source = (SOLUTIONS / SET / "attention.py").read_text() + '''

_attention = attention


def attention(Q, K, V, causal=True):
    import os
    if getattr(Q, "shape", None) == (5, 8) and getattr(V, "shape", None) == (5, 4):
        os._exit(3)   # only the hidden pytest tests call with these shapes
    return _attention(Q, K, V, causal)
'''
    folder = _submission(tmp_path, attention=source)
    [(_, doc)] = grade_in_workers([[SET, "--submission", folder, "--json", "--exercise",
                                    "attention", *LIMITS]])
    crashed = [t for t in doc["tests"] if t["extra_data"]["kind"] == "pytest"
               and t["status"] == "failed"]
    assert crashed and all("exited before answering" in t["output"] for t in crashed), \
        [t["output"] for t in crashed]


# ------------------------------------------------------------ the trusted fork's clock

def _stalled_then_done(channel):
    channel.ask({"ready": True})   # the parent stops this fork before it replies
    sum(range(10 ** 5))
    channel.emit({"after": True})


def _spins(channel):
    channel.emit({"ready": True})
    while True:
        pass


def test_a_starved_trusted_fork_is_not_an_overrun_and_a_busy_one_is():
    """The budget counts the fork's own CPU seconds: burners a student's child left
    (each in a session, so a scheduling group, of its own) may starve it; a fork
    stopped (the extreme of starved) for three budgets still finishes.  A fork that
    spends its budget computing overruns it as before."""
    import os
    import signal
    import threading

    from grader.judge import bounded

    fork = bounded.Fork(_stalled_then_done, 0.15)
    try:
        ready = next(fork)
        os.kill(fork.pid, signal.SIGSTOP)
        resume = threading.Timer(0.45, os.kill, (fork.pid, signal.SIGCONT))
        resume.start()
        ready.reply("go")
        assert list(fork) == [{"after": True}]
        resume.join()
    finally:
        fork.close()
    start = time.monotonic()
    with pytest.raises(bounded.Overrun, match="timeout"):
        list(bounded.events(_spins, 0.15))
    assert time.monotonic() - start < 2


SLOW_ELEMENTS = '''
import sympy as S

# each element evaluates in about half a second, under the per-element limit (2 s); the
# test gives an answer's deadline and an exercise's allowance an eighth of the grader's
SLOW = S.sin(S.Pow(S.Integer(10), S.Integer(100000), evaluate=False), evaluate=False)


def softmax(logits, T=1.0):
    return [SLOW] * len(logits)


def greedy(logits):
    return SLOW
'''
REPORTS_WITHIN = 60   # seconds: one such answer must not hold a whole set's grading longer
# The CLI with an answer's deadline and an exercise's allowance an eighth of the grader's
# (5 s and 10 s): two such elements outlast an answer's deadline, two answers the
# exercise's allowance; the same story in an eighth of the trusted CPU seconds.
QUARTER_ALLOWANCE = """
import sys
from grader import grading
from grader.judge import jobs
assert (jobs.ANSWER_SECONDS, jobs.EXERCISE_SECONDS, grading.EXERCISE_SECONDS) == (5, 10, 10)
jobs.ANSWER_SECONDS, jobs.EXERCISE_SECONDS, grading.EXERCISE_SECONDS = 0.625, 1.25, 1.25
from grader.cli import main
main(prog_name="attn-grade")
"""


def test_answers_slow_to_read_cost_their_own_exercise_a_bounded_time(submission):
    """Arrays whose every element takes just under the per-element limit to evaluate,
    judged again for every known wrong version: each answer has one deadline in all,
    and its exercise one allowance; the set's other exercises keep their marks."""
    import subprocess
    import sys

    from conftest import DAY3_MAX, FULL_DAY3

    folder = submission(SET, temperature=SLOW_ELEMENTS)
    proc = subprocess.run([sys.executable, "-c", QUARTER_ALLOWANCE, SET, "--submission", folder,
                           "--json", "--lang", "en"], cwd=ROOT, capture_output=True,
                          text=True, timeout=REPORTS_WITHIN)
    assert proc.returncode == 1, proc.stderr
    doc = json.loads(proc.stdout)
    assert doc["score"] == pytest.approx(DAY3_MAX - FULL_DAY3["temperature"])
    said = " ".join(t["output"] for t in checks_of(doc, "temperature"))
    assert "in all, so this one was not checked" in said


def test_an_alarm_due_at_a_passed_deadline_is_not_set_again_while_it_is_raised(monkeypatch):
    """A limit cut by its deadline raises; the enclosing alarm, due at that same deadline,
    is not set again for the moment left of it (it went off in the handler that caught
    the first: an element found unreadable, the next one tried; seen once in CI). One
    still running, or a block that ends without raising, gets its alarm back."""
    from grader.judge import timelimit

    armed = []
    monkeypatch.setattr(timelimit.signal, "setitimer", lambda _, seconds: armed.append(seconds))
    monkeypatch.setattr(timelimit, "_deadline", [time.monotonic() - 0.001])   # passed
    timelimit._rearm(time.monotonic() + 0.002, raising=True)
    assert armed == []
    timelimit._rearm(time.monotonic() + 0.002, raising=False)
    assert len(armed) == 1
    monkeypatch.setattr(timelimit, "_deadline", [time.monotonic() + 5])   # still running
    timelimit._rearm(time.monotonic() + 1, raising=True)
    assert len(armed) == 2 and 0 < armed[-1] <= 1


def test_a_deadline_ends_every_time_limit_inside_it():
    """An answer's elements each get their own limit, but none outlives the answer's:
    the first is cut at the deadline, every later one fails before it starts."""
    from grader.judge import timelimit

    started = failed = 0
    with timelimit.deadline(0.2):
        for _ in range(20):
            try:
                with timelimit.time_limit(2.0):
                    started += 1
                    while True:
                        pass
            except timelimit.TimeLimitExceeded:
                failed += 1   # as sympy_to_float does: this element is unreadable; next
        assert timelimit.expired()
    assert (started, failed) == (1, 20) and not timelimit.expired()
