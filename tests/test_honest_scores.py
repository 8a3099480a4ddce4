"""Honest scores and honest diagnoses: no points for nothing, no tag without evidence.

The engine's parts are tested in-process on the bundled course's own specs;
whole gradings of a few typical mistakes go through the CLI, three at a time.
"""

import json
from fractions import Fraction

import pytest
import sympy
from conftest import (
    DAY3_MAX,
    ROOT,
    SOLUTIONS,
    checks_of,
    engine_grade,
    grade_in_workers,
)

from grader.course import loader as spec_loader
from grader.course.spec import Compare, Course
from grader.judge.check import judge
from grader.judge.compare import compare
from grader.run.student import CallOutcome

COURSE = Course(ROOT)


def _exercise(set_id, exercise_id):
    return spec_loader.load_set(COURSE, set_id).exercise(exercise_id)


def _judge(set_id, exercise_id, check_id, answer, expected):
    exercise = _exercise(set_id, exercise_id)
    check = next(c for c in exercise.checks if c.id == check_id)
    wrong = [(m, None) for m in exercise.misconceptions if m.applies_to(check) and m.rule]
    return judge(check, exercise, CallOutcome("ok", value=answer), expected, wrong)


def test_a_rounded_wrong_answer_is_still_named_within_the_checks_tolerance():
    result = _judge("c3-l2", "proportion", "car-percent", -0.444, -44.44)
    assert not result.passed and result.tags == ("percent-as-fraction",)


def test_a_rounded_size_written_as_text_is_named():
    exercise = _exercise("c3-l2", "kv_variants")
    check = next(c for c in exercise.checks if c.id == "deepseek-67b-by-hand")
    expected = 380 * 1024 ** 3 + Fraction(1, 1)   # any value near 380 GiB will do
    wrong = [(m, None) for m in exercise.misconceptions if m.applies_to(check) and m.rule]
    result = judge(check, exercise, CallOutcome("ok", value="362.4 GiB"), expected, wrong)
    assert "million-is-decimal" in result.tags


def test_an_unrelated_rule_does_not_fire_on_a_near_miss():
    result = _judge("c3-l2", "proportion", "car-percent", -0.30, -44.44)
    assert not result.passed and result.tags == ()


def test_exact_sizes_in_any_exact_form_are_accepted():
    spec = Compare("bytes", {})
    assert compare(sympy.Integer(2) ** 25, "32 MiB", spec).passed
    assert compare(sympy.Pow(2, 25, evaluate=False), "32 MiB", spec).passed
    from decimal import Decimal

    from grader import wire

    assert compare(wire.decode(wire.encode(Decimal(16))), 16, Compare("number", {})).passed


# ---------------------------------------------------------------- through the CLI

ZEROS_ATTENTION = '''
import numpy as np
def attention(Q, K, V, causal=True):
    n_q, n_k = np.shape(Q)[0], np.shape(K)[0]
    return np.zeros((n_q, np.shape(V)[1])), np.full((n_q, n_k), 1.0 / n_k)
'''
ZEROS_DECODE = '''
import numpy as np
def decode_step(q, K_cache, V_cache, k_new, v_new):
    n = np.shape(K_cache)[0] + 1
    return (np.zeros(np.shape(V_cache)[1]), np.zeros((n, np.shape(K_cache)[1])),
            np.zeros((n, np.shape(V_cache)[1])))
'''
EMPTY_MULTIHEAD = '''
import numpy as np
def split_heads(X, n_heads):
    return np.zeros((0,))
def merge_heads(H):
    return np.zeros((0,))
def multi_head_attention(X, Wq, Wk, Wv, Wo, n_heads, n_kv_heads=None, causal=True):
    return np.zeros((0,))
'''
MASK_TOO_MUCH = '''
import numpy as np
def attention(Q, K, V, causal=True):
    Q, K, V = (np.asarray(a, dtype=float) for a in (Q, K, V))
    n_q, n_k, d = Q.shape[0], K.shape[0], Q.shape[1]
    scores = Q @ K.T / np.sqrt(d)
    if causal:
        scores = np.where(np.triu(np.ones((n_q, n_k), bool), k=n_k - n_q), -1e9, scores)
    w = np.exp(scores - scores.max(axis=-1, keepdims=True))
    w = w / w.sum(axis=-1, keepdims=True)
    return w @ V, w
'''


def _split_heads_bug():
    text = (SOLUTIONS / "day3" / "multihead.py").read_text()
    old = "    return X.reshape(n, n_heads, d_model // n_heads).transpose(1, 0, 2)\n"
    assert old in text
    return text.replace(old, "    return X.reshape(n_heads, n, d_model // n_heads)\n", 1)


def _kv_query_heads():
    text = (SOLUTIONS / "day3" / "kv_cache.py").read_text()
    return text + ("\n\ndef kv_cache_bytes(config, n_tokens, bytes_per_elem=2):\n"
                   "    return kv_cache_bytes_used_query_heads(config, n_tokens, bytes_per_elem)\n")


MUTATES_INPUT = '''
import numpy as np
def softmax(logits, T=1.0):
    if isinstance(logits, np.ndarray):
        logits /= T   # in place: the caller's array changes
        z = logits
    else:
        z = np.asarray(logits, dtype=float) / T
    z = z - z.max(axis=-1, keepdims=True)
    e = np.exp(z)
    return e / e.sum(axis=-1, keepdims=True)
def greedy(logits):
    return int(np.argmax(logits))
'''

CASES = {   # name -> (exercise, file, text)
    "zeros attention": ("attention", "attention", ZEROS_ATTENTION),
    "zeros decode": ("decode", "decode", ZEROS_DECODE),
    "empty multihead": ("multihead", "multihead", EMPTY_MULTIHEAD),
    "mask hides too much": ("attention", "attention", MASK_TOO_MUCH),
    "split_heads bug": ("multihead", "multihead", _split_heads_bug()),
    "KV with query heads": ("kv_cache", "kv_cache", _kv_query_heads()),
    "mutates its input": ("temperature", "temperature", MUTATES_INPUT),
}


@pytest.fixture(scope="module")
def case_runs(tmp_path_factory):
    import shutil

    jobs = []
    for exercise, module, text in CASES.values():
        folder = tmp_path_factory.mktemp("case")
        shutil.copytree(ROOT / "exercises" / "day3", folder, dirs_exist_ok=True)
        for stub in (ROOT / "exercises" / "day3").glob("*.py"):
            shutil.copy(SOLUTIONS / "day3" / stub.name, folder / stub.name)
        (folder / f"{module}.py").write_text(text, encoding="utf-8")
        jobs.append(["day3", "--submission", folder, "--json", "--exercise", exercise,
                     "--lang", "en"])
    out = {}
    for name, (code, doc) in zip(CASES, grade_in_workers(jobs)):
        assert code in (0, 1), doc
        out[name] = doc
    return out


@pytest.mark.parametrize("name", ["zeros attention", "zeros decode", "empty multihead"])
def test_doing_nothing_scores_nothing(case_runs, name):
    doc = case_runs[name]
    assert doc["score"] == 0, [(t["name"], t["output"]) for t in doc["tests"]
                               if t["status"] == "passed"]


@pytest.mark.parametrize("name", ["mask hides too much", "split_heads bug", "zeros attention"])
def test_a_failure_with_another_cause_is_not_called_a_missing_mask(case_runs, name):
    doc = case_runs[name]
    assert any(t["status"] == "failed" for t in doc["tests"])
    assert all("no-causal-mask" not in t["tags"] for t in doc["tests"]), \
        [(t["name"], t["tags"]) for t in doc["tests"] if t["tags"]]


def test_the_query_heads_mistake_is_named_as_such_on_grouped_models(case_runs):
    doc = case_runs["KV with query heads"]
    failed = [t for t in checks_of(doc, "kv_cache") if t["status"] == "failed"]
    assert len(failed) >= 3   # Llama-3-8B, Llama-2-70B and TinyLlama group their KV heads
    for test in failed:
        assert test["tags"] == ["kv-used-query-heads"], (test["name"], test["tags"])


def test_a_modified_input_is_seen_by_the_grader_and_is_its_own_check(case_runs):
    doc = case_runs["mutates its input"]
    tests = {t["extra_data"]["check"]: t for t in doc["tests"]}
    assert tests["test_input_not_modified"]["status"] == "failed"
    assert "modified its input arrays" in tests["test_input_not_modified"]["output"]
    others = [t for c, t in tests.items() if c != "test_input_not_modified"]
    assert all(t["status"] == "passed" for t in others), \
        [t["name"] for t in others if t["status"] != "passed"]


# ---------------------------------------------------------------- the release bundle

@pytest.fixture
def release_bundle(day3_release):
    return day3_release   # conftest's, made once a session


def test_the_release_says_how_many_points_wait_for_submission(release_bundle):
    from conftest import run_cli

    proc = run_cli("day3", "--json", "--lang", "en", cwd=release_bundle)
    doc = json.loads(proc.stdout)
    assert doc["max_score"] < DAY3_MAX
    assert f"{DAY3_MAX - doc['max_score']:g} more points" in doc["output"]


def test_the_release_ships_no_formula_and_keeps_diagnoses_of_picked_checks(release_bundle):
    text = "".join(p.read_text() for p in (release_bundle / "exercises" / "day3").glob("*.yaml"))
    assert "kind: formula" not in text and "compare: formula" not in text
    assert "n**2" not in text and "2*L*b*d*h" not in text.replace(" ", "")
    attention = (release_bundle / "exercises" / "day3" / "attention.yaml").read_text()
    assert "no-causal-mask" in attention   # the seed-output check picks item 0


def test_the_notes_kv_formula_slip_shows_in_the_release(release_bundle, tmp_path):
    import shutil

    from conftest import run_cli

    bundle = tmp_path / "bundle"
    shutil.copytree(release_bundle, bundle)
    (bundle / "exercises" / "day3" / "kv_cache.py").write_text(_kv_query_heads())
    doc = json.loads(run_cli("day3", "--json", "--lang", "en", "--exercise", "kv_cache",
                             cwd=bundle).stdout)
    gqa = next(t for t in doc["tests"] if t["extra_data"]["check"] == "cache-tinyllama-gqa")
    assert gqa["status"] == "failed" and gqa["tags"] == ["kv-used-query-heads"]


def test_a_stub_that_passes_a_check_is_not_released(tmp_path):
    import shutil

    from conftest import run_here

    course = tmp_path / "course"
    for top in ("exercises", "solutions"):
        shutil.copytree(ROOT / top, course / top)
    shutil.copy(ROOT / "pyproject.toml", course)
    shutil.copy(SOLUTIONS / "day3" / "growth.py", course / "exercises" / "day3" / "growth.py")
    proc = run_here("release", "day3", "-o", tmp_path / "out", "--course", course)
    assert proc.returncode == 2 and "growth.py: cells-2000" in proc.stderr
    assert not (tmp_path / "out" / "exercises").exists()


def test_the_query_heads_mistake_is_named_on_every_c3_l2_kv_check_it_fails(tmp_path):
    import shutil

    from conftest import grade_in_workers

    folder = tmp_path / "submission"
    shutil.copytree(ROOT / "exercises" / "c3-l2", folder)
    for stub in (ROOT / "exercises" / "c3-l2").glob("*.py"):
        shutil.copy(SOLUTIONS / "c3-l2" / stub.name, folder / stub.name)
    swapped = "".join(f"\n\ndef {f}(*args, **kwargs):\n"
                      f"    return {f}_query_heads(*args, **kwargs)\n"
                      for f in ("kv_bytes_per_token", "kv_bytes_full_context",
                                "anchor_gqa_full_context", "deepseek_67b_million_tokens"))
    with open(folder / "kv_variants.py", "a", encoding="utf-8") as f:
        f.write(swapped)
    [(_, doc)] = grade_in_workers([["c3-l2", "--submission", folder, "--json", "--lang", "en",
                                    "--exercise", "kv_variants"]])
    failed = {t["extra_data"]["check"]: t["tags"] for t in doc["tests"] if t["status"] == "failed"}
    assert {"gqa-anchor", "gqa-model-all-layers-b", "gqa-custom-fp32", "anchor-gqa-full-by-hand",
            "deepseek-67b-by-hand"} <= set(failed)
    assert all(tags == ["kv-used-query-heads"] for tags in failed.values()), failed


def _scored_run(total, explicit, passed):
    """A RunResult of one exercise worth ``total``, its checks' points resolved."""
    from types import SimpleNamespace

    from grader.course.spec import Text
    from grader.judge.points import resolve_points
    from grader.judge.results import CheckResult, ExerciseResult, RunResult

    points = resolve_points(total, explicit, "demo.yaml")
    exercise = SimpleNamespace(id="demo", file="demo.py", checks=(), points=total,
                               submission_points=None, variant=0)
    checks = tuple(CheckResult("demo", "demo.py", f"c{i}", "visible", ok, p)
                   for i, (p, ok) in enumerate(zip(points, passed)))
    return RunResult("s", Text("演示", "Demo"), (ExerciseResult(exercise, checks),),
                     "process", "sub", 0.0)


@pytest.mark.parametrize("explicit", [[None, None, None], [2.2, None, None],
                                      [None, 2.7, None]])
def test_a_14_point_exercise_over_3_checks_scores_exactly_14(explicit):
    from grader.report.render import gradescope

    run = _scored_run(14, explicit, (True, True, True))
    assert run.exercises[0].score == run.exercises[0].max_score == 14
    assert run.score == run.max_score == 14
    doc = json.loads(json.dumps(gradescope(run, "en")))
    assert doc["score"] == doc["max_score"] == 14
    assert doc["extra_data"]["exercises"][0]["score"] == 14
    assert doc["extra_data"]["exercises"][0]["max_score"] == 14
    assert "14 / 14 points" in doc["output"]


def test_partial_scores_add_up_as_written():
    run = _scored_run(4, [None] * 7, (True,) * 7)   # 0.57 * 6 + 0.58
    assert run.max_score == run.score == 4
    run = _scored_run(1, [None] * 5, (True, True, True, False, False))
    assert run.score == 0.6 and run.max_score == 1


def test_a_hidden_test_names_the_limit_the_run_was_given(tmp_path):
    """A limit given on the command line is the one a hidden test's message names, not
    the exercise's own (in-process, at the level that needs no privileges)."""
    import shutil

    from grader.course import loader
    from grader.course.spec import Course

    shutil.copytree(ROOT / "exercises" / "day3", tmp_path, dirs_exist_ok=True)
    right = (SOLUTIONS / "day3" / "attention.py").read_text()
    (tmp_path / "attention.py").write_text(right.replace("def attention(", "def _right(") + """
def attention(Q, K, V, causal=True):
    if V.shape[-1] == 4 and Q.shape[-1] == 8:   # the hidden tests' inputs: hang
        import time
        time.sleep(3600)
    return _right(Q, K, V, causal)
""")
    exercise_set = loader.load_set(Course(ROOT), "day3")
    run = engine_grade(exercise_set, tmp_path, limit_overrides={"time": 0.25},
                       only={"attention"})
    hidden = [c for c in run.exercises[0].checks if c.kind == "pytest"]
    from grader.report.messages import render

    texts = [render(line, "en") for c in hidden for line in c.lines]
    assert hidden and any("0.25 s" in t for t in texts), texts
    assert not any("took longer than 5 s" in t for t in texts), texts


def test_a_hidden_test_says_the_module_could_not_be_imported(tmp_path):
    """An import that overruns its limit reads as such in a hidden test too, with the
    import limit, not as a call that took longer than the call limit."""
    import shutil

    from grader.course import loader
    from grader.course.spec import Course
    from grader.report.messages import render

    shutil.copytree(ROOT / "exercises" / "day3", tmp_path, dirs_exist_ok=True)
    (tmp_path / "attention.py").write_text("import time\ntime.sleep(3)\n")
    exercise_set = loader.load_set(Course(ROOT), "day3")
    run = engine_grade(exercise_set, tmp_path, limit_overrides={"import_time": 0.25},
                       only={"attention"})
    hidden = [c for c in run.exercises[0].checks if c.kind == "pytest"]
    texts = [render(line, "en") for c in hidden for line in c.lines]
    assert hidden and all("importing attention.py took longer than 0.25 s" in t
                          for t in texts), texts


def test_hidden_tests_of_the_same_name_in_two_files_stay_apart(tmp_path):
    """test_temperature.py and test_attention.py both have test_rows_sum_to_one: each
    exercise gets its own file's result (one reported the other's, twice)."""
    import ast
    import shutil

    from grader.course import loader
    from grader.course.spec import Course

    shutil.copytree(ROOT / "exercises" / "day3", tmp_path, dirs_exist_ok=True)
    for name in ("attention.py", "temperature.py"):
        shutil.copy(SOLUTIONS / "day3" / name, tmp_path / name)
    with open(tmp_path / "temperature.py", "a", encoding="utf-8") as f:
        f.write("\n\nsoftmax = softmax_wrong_axis   # rows do not sum to one\n")
    exercise_set = loader.load_set(Course(ROOT), "day3")
    run = engine_grade(exercise_set, tmp_path, only={"attention", "temperature"})
    for result in run.exercises:
        source = (SOLUTIONS / "day3" / f"test_{result.exercise.id}.py").read_text()
        tests = sorted(node.name for node in ast.parse(source).body
                       if isinstance(node, ast.FunctionDef) and node.name.startswith("test_"))
        hidden = {c.check: c.passed for c in result.checks if c.kind == "pytest"}
        assert sorted(hidden) == tests, (result.exercise.id, hidden)
        assert hidden["test_rows_sum_to_one"] is (result.exercise.id == "attention")
