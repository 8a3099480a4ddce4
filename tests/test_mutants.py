"""dev mutants: slips of a reference graded in its place, over a tiny course."""

import dataclasses
import json
import textwrap

from conftest import engine_level, make_course, run_here

from grader.instructor.fork_map import Crashed, fork_map
from grader.instructor.mutants import EQUIVALENT, KILLED, SURVIVED, judge_course
from grader.instructor.mutators import mutants

# the mutants are the course's own code: they run at conftest's engine level, where
# isolation is not the point

# area(r): the reference takes abs(r) first, which no check's input (all positive)
# can tell from leaving it out (equivalent); a tolerance of 50 % lets a constant
# moved by one through (survivors)
AREA = """\
format_version: 1
id: demo
title: {zh: 面积, en: Area}
prompt: {zh: 圆的面积, en: The area of a circle}
functions: [area]
points: 2
checks:
  - id: two
    args: [2]
    compare: {kind: number, rtol: 0.5}
"""

AREA_HIDDEN = """\
format_version: 1
checks:
  - id: drawn
    args: [!randint {seed: 1, low: 3, high: 50}]
    compare: {kind: number, rtol: 0.5}
    description: {zh: 随机抽取的半径, en: a drawn radius}
"""

REFERENCE = "def area(r):\n    r = abs(r)\n    return 3.14159 * r * r\n"


def _course(tmp_path, threshold=None):
    manifest = textwrap.dedent("""\
        format_version: 1
        title: {zh: 演示, en: Demo}
        order: [demo]
        """) + (f"mutation_score: {threshold}\n" if threshold is not None else "")
    course = make_course(tmp_path, exercise=AREA, manifest=manifest, hidden=AREA_HIDDEN)
    (tmp_path / "exercises" / "demo" / "demo.py").write_text(
        "def area(r):\n    raise NotImplementedError\n")
    (tmp_path / "solutions" / "demo" / "demo.py").write_text(REFERENCE)
    return course


def test_survivors_equivalents_and_the_killed_are_told_apart(tmp_path):
    [result] = judge_course(_course(tmp_path), ["demo"], engine_level())
    status = {j.mutant.after: j.status for j in result.judged}
    assert status["return 4.14159 * r * r"] == SURVIVED      # 32 % off, within 50 %
    assert status["return 3.14159 * r + r"] == KILLED          # right at r = 2 only
    assert status["pass"] == EQUIVALENT                        # abs(r) left out
    survivor = next(j for j in result.judged if j.mutant.after == "return 4.14159 * r * r")
    assert survivor.mutant.diff == "3: return 3.14159 * r * r  →  return 4.14159 * r * r"
    assert set(survivor.checks) == {"two", "drawn"}
    exercise, total = result.tallies
    assert exercise == dataclasses.replace(total, exercise="demo")
    assert total.generated == len(result.judged) == len(mutants(REFERENCE, ["area"]))
    counted = total.generated - total.equivalent
    assert total.score == total.killed / counted < 1
    assert total.killed + total.survived + total.equivalent == total.generated


def test_the_exit_code_follows_the_sets_threshold(tmp_path):
    below = run_here("dev", "mutants", "--course", _course(tmp_path / "a", 1).root,
                     "--isolation", engine_level(), "--lang", "zh")
    assert below.returncode == 1, below.stderr
    assert "✗ demo/demo: area, 3: return 3.14159 * r * r  →  return 4.14159 * r * r" \
        in below.stdout
    assert "低于清单中变异得分门槛 100.0%" in below.stdout
    reached = run_here("dev", "mutants", "--course", _course(tmp_path / "b", 0.5).root,
                       "--isolation", engine_level(), "--json")
    assert reached.returncode == 0, reached.stderr
    [document] = json.loads(reached.stdout)
    assert document["mutation_score"] == 0.5 and 0.5 <= document["score"] < 1
    assert not document["below"]
    assert {m["status"] for m in document["mutants"]} == {KILLED, SURVIVED, EQUIVALENT}


def test_the_operators_make_the_slips_of_the_notes():
    source = textwrap.dedent("""\
        import numpy as np

        def weights(Q, K, T):
            s = Q @ K.T / np.sqrt(T)
            s = np.where(np.triu(np.ones(s.shape, dtype=bool), k=1), -np.inf, s)
            e = np.exp(s - s.max(axis=-1, keepdims=True))
            return e / e.sum(axis=-1, keepdims=True)
        """)
    after = {m.after for m in mutants(source, ["weights"])}
    for slip in ("s = Q @ K / np.sqrt(T)",                       # K where K.T belongs
                 "s = Q @ K.T / T",                              # np.sqrt dropped
                 "s = Q @ K.T",                                  # the scaling dropped
                 "s = np.where(np.triu(np.ones(s.shape, dtype=bool), k=1 - 1), -np.inf, s)",
                 "e = np.exp(s - s.max(axis=0, keepdims=True))",  # the wrong axis
                 "e = np.exp(s)",                                # no subtraction of the max
                 "pass",                                         # the mask left out
                 "return s",                                     # an intermediate returned
                 "return e / e.sum(axis=-1, keepdims=False)"):
        assert slip in after, slip


def test_fork_map_keeps_the_order_and_says_which_fork_crashed():
    def work(n):
        return {"half": 1 / n}   # n = 0 raises in its fork

    assert fork_map(work, [2, 0, 4]) == [{"half": 0.5}, Crashed(1), {"half": 0.25}]
