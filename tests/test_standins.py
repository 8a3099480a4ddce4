"""Stand-ins: dev check proves that doing nothing scores nothing (in-process, fast)."""

import json

import numpy as np
import pytest
import sympy
from conftest import (
    GOOD,
    GOOD_HIDDEN,
    ROOT,
    engine_grade,
    engine_level,
    make_course,
    session_warm,
    session_zygote,
)

from grader.course import inputs
from grader.course import loader as spec_loader
from grader.course.spec import Course
from grader.instructor import public_numbers, standins
from grader.instructor import standin_runtime as rt
from grader.instructor.devcheck import check_set


def _check_set(course, **options):
    return check_set(course, "demo", engine_level(), zygote=session_zygote(), **options)


def _scores(course, only=None):
    exercise_set = spec_loader.load_set(course, "demo")
    reference = engine_grade(exercise_set, exercise_set.solutions_dir)
    runs = {e.exercise.id: e for e in reference.exercises}
    return {(s.function, s.kind): s
            for s in standins.grade_standins(exercise_set, engine_level(), runs, only,
                                                   session_warm())}


def test_a_constant_passes_a_lone_visible_check_and_dev_check_says_so(tmp_path):
    scores = _scores(make_course(tmp_path))
    assert scores["double", "constant"].score == 2 and scores["double", "constant"].too_high
    assert scores["double", "lookup"].too_high        # the right answer for the one input
    assert scores["double", "zeros"].score == 0 and scores["double", "echo"].score == 0
    findings = _check_set(make_course(tmp_path / "again"), seeds=(0,))
    problems = [str(f) for f in findings if f.problem]
    assert any("the constant stand-in of double scores 2 of 2 (allowed: nothing)" in p
               for p in problems), problems
    table = next(str(f) for f in findings if "stand-ins:" in str(f))
    assert "demo.double" in table and "✗2/2" in table


def test_a_proper_check_set_passes(tmp_path):
    course = make_course(tmp_path, hidden=GOOD_HIDDEN)
    findings = _check_set(course, seeds=(0, 1))
    assert not [f for f in findings if f.problem], [str(f) for f in findings]
    table = next(str(f) for f in findings if "stand-ins:" in str(f))
    assert table.splitlines()[-1].split()[1:] == ["0/2", "0/2", "0/2", "0/2"]


def test_typed_in_answers_get_only_the_zeros_stand_in(tmp_path):
    exercise = GOOD.replace("functions: [double]", "functions: [double, answer]") + (
        "  - id: typed\n    call: answer\n    compare: exact\n")
    exercise = exercise.replace("  - id: two\n", "  - id: two\n    call: double\n")
    course = make_course(tmp_path, exercise=exercise, hidden=GOOD_HIDDEN.replace(
        "    args:", "    call: double\n    args:"))
    (tmp_path / "solutions/demo/demo.py").write_text(
        "def double(x):\n    return 2 * x\n\n\ndef answer():\n    return 42\n")
    scores = _scores(course)
    assert {k for f, k in scores if f == "answer"} == {"zeros"}
    assert scores["answer", "zeros"].score == 0
    assert not any(s.too_high for s in scores.values())


def test_a_visible_check_counts_once_a_hidden_check_passes(tmp_path):
    course = make_course(tmp_path, hidden=GOOD_HIDDEN)
    exercise_set = spec_loader.load_set(course, "demo")
    folder = tmp_path / "student"
    folder.mkdir()
    (folder / "demo.py").write_text("def double(x):\n    return 4\n")
    run = engine_grade(exercise_set, folder)
    two = run.exercises[0].checks[0]
    assert two.check == "two" and not two.passed and run.score == 0
    assert two.lines[0].code == "needs-twin"
    (folder / "demo.py").write_text("def double(x):\n    return 4 if x == 2 else 2 * x\n")
    assert engine_grade(exercise_set, folder).score == pytest.approx(2)


def test_zero_like_keeps_the_shape_and_type_with_nothing_in_it():
    assert rt.zero_like(np.ones((2, 3))).tolist() == [[0.0] * 3] * 2
    assert rt.zero_like((np.ones(2), np.ones((2, 2))))[1].shape == (2, 2)
    assert rt.zero_like((4096, 128)) == ()
    assert rt.zero_like({"Q": (5, 8)}) == {"Q": ()}
    assert rt.zero_like(3.5) == 0.0 and rt.zero_like(7) == 0 and rt.zero_like("v") == ""
    assert rt.zero_like({"k", "v"}) == set() and rt.zero_like([1, 2]) == []
    assert rt.zero_like(False) is None and rt.zero_like(np.float64(2.0)) == 0.0
    assert rt.zero_like(sympy.Symbol("n") ** 2) == 0


def test_lookup_compares_arguments_by_value_and_by_name():
    def f(config, n_tokens, bytes_per_elem=2):
        return config["layers"] * n_tokens * bytes_per_elem

    table = [(({"layers": 2}, 10), {}), (({"layers": 3}, np.arange(2)), {"bytes_per_elem": 4})]
    assert rt.lookup(f, table, ({"layers": 2},), {"n_tokens": 10}) == 40
    assert rt.lookup(f, table, ({"layers": 3}, np.arange(2), 4), {}).tolist() == [0, 12]
    assert rt.lookup(f, table, ({"layers": 9}, 10), {}) == 40   # unknown: the first answer
    assert rt.same([1.0, 2.0], (1.0, 2.0)) and not rt.same(np.ones(2), np.ones(3))
    assert rt.echo((5, 6), {}) == 5 and rt.echo((), {"x": 1}) == 1


@pytest.mark.parametrize("value", [
    np.array([[1.5, float("nan")], [float("inf"), -0.0]]), np.arange(6).reshape(2, 3),
    (4096, 128), [1, "two", None, True], {"hidden_size": 4096, "name": "x"}, {"k", "v"},
    sympy.Symbol("n", positive=True), sympy.Symbol("T", integer=True) ** 2 / 3, 0.1, (),
])
def test_arguments_are_rebuilt_from_source(value):
    rebuilt = eval(standins.to_source(value), {"_rt": rt})
    assert rt.same(rebuilt, value) or (isinstance(value, np.ndarray) and np.array_equal(
        rebuilt, value, equal_nan=True) and rebuilt.dtype == value.dtype)
    assert type(rebuilt) is type(value)


KV = """\
format_version: 1
id: demo
title: {zh: 演示, en: Demo}
prompt: {zh: 字节, en: Bytes}
functions: [cache_bytes]
points: 4
checks:
  - id: small
    args: [!json models/small.json, 100]
    compare: exact
"""


def test_the_lookup_table_holds_the_data_files_and_their_sizes(tmp_path):
    make_course(tmp_path, exercise=KV)
    models = tmp_path / "exercises/demo/models"
    models.mkdir()
    for name, layers, ctx in (("small", 2, 512), ("big", 80, 4096)):
        (models / f"{name}.json").write_text(json.dumps(
            {"num_hidden_layers": layers, "max_position_embeddings": ctx}))
    (tmp_path / "exercises/demo/demo.py").write_text(
        "def cache_bytes(config, n_tokens):\n    raise NotImplementedError\n")
    (tmp_path / "solutions/demo/demo.py").write_text(
        "def cache_bytes(config, n_tokens):\n    return config['num_hidden_layers'] * n_tokens\n")
    exercise_set = spec_loader.load_set(Course(tmp_path), "demo")
    exercise = exercise_set.exercises[0]
    calls = standins._visible_calls(exercise, "cache_bytes")
    table = standins._lookup_table(exercise, "cache_bytes", calls,
                                   standins.data_files(exercise_set))
    plain = {(a[0]["num_hidden_layers"], a[1]) for a, _ in table}
    assert {(2, 100), (80, 100), (2, 512), (80, 4096)} <= plain


def test_numbers_are_read_as_a_page_prints_them():
    found = public_numbers.numbers_in("389,120 B a token; 1M = 2²⁰; the official −93.3 %")
    assert {389120, 389, 120, 2, 20, 2 ** 20, 93.3, -93.3, 1} <= found
    assert 389.12 not in found and 3 not in found


PRINTED = GOOD.replace("prompt: {zh: 写一个函数, en: Write a function}",
                       "prompt: {zh: 写一个函数，例如 37, en: Write a function}")


def test_a_lookup_learns_every_number_the_set_prints(tmp_path):
    """37 is printed in the Chinese prompt only, 41 in a data file's note, 43 in a hidden
    check's description (show lists them): hidden checks on such numbers are a table's,
    and so is the visible check they let count: all 2 points."""
    printed = GOOD_HIDDEN.replace("!randint {seed: 1, low: 3, high: 1000}", "37").replace(
        "!randint {seed: 2, low: 3, high: 1000}", "41").replace(
        "en: another drawn number", "en: not 43")   # show lists hidden descriptions too
    course = make_course(tmp_path, exercise=PRINTED, hidden=printed)
    (tmp_path / "exercises/demo/models").mkdir()
    (tmp_path / "exercises/demo/models/page.json").write_text(
        json.dumps({"_source": "the page: 41 layers", "layers": 41}))
    known = public_numbers.public_numbers(spec_loader.load_set(course, "demo"))
    assert {37, 41, 2, 43} <= set(known) and 1000 not in known
    lookup = _scores(course)["double", "lookup"]
    assert lookup.score == pytest.approx(2) and lookup.too_high
    drawn = _scores(make_course(tmp_path / "drawn", exercise=PRINTED, hidden=GOOD_HIDDEN))
    assert drawn["double", "lookup"].score == 0


def test_a_lookup_answers_calls_made_of_public_numbers_only():
    def f(n_layers, config, variant="mha"):
        return n_layers * config["heads"]

    table = [((2, {"heads": 3}), {})]
    known = [2.0, 3.0, 5.0, 0.5]
    assert rt.lookup(f, table, (5, {"heads": 5}), {"variant": "gqa"}, known) == 25
    assert rt.lookup(f, table, (5, {"heads": 7}), {}, known) == 6   # 7 unprinted: the first
    assert rt.lookup(f, table, (5, {"heads": 5}), {}) == 6          # nothing learnt
    assert rt.public([0.5, (2, "x", None)], {0.5, 2.0})
    assert not rt.public(np.full(2, 2.0), {2.0}) and not rt.public(float("nan"), {2.0})


def test_model_sizes_agree_and_never_use_128():
    for seed in range(200):
        m = inputs.model_sizes(seed)
        assert m["d_model"] == m["n_heads"] * m["head_dim"] and m["head_dim"] != 128
        assert m["n_heads"] % m["n_kv_heads"] == 0 and m["n_heads"] > m["n_kv_heads"]
        assert 1 <= m["full_attention_layers"] <= m["n_layers"]
    hf = inputs._model({"seed": 3, "format": "hf", "drop": ["head_dim"]}, None, 0)
    assert "head_dim" not in hf and hf["hidden_size"] == inputs._model(
        {"seed": 3, "field": "d_model"}, None, 0)
    assert inputs._model({"seed": 3}, None, 1) != inputs._model({"seed": 3}, None, 0)
    n = inputs._randint({"seed": 4, "low": 10, "high": 12}, None, 0)
    assert type(n) is int and 10 <= n <= 12


# The hard-coded answers, graded against the bundled course.
HARD_CODED = {
    "head_dim = 128": ("day3", "shapes", "shapes", (
        "    kv_width = n_kv_heads * (d_model // n_heads)\n    return 2",
        "    kv_width = n_kv_heads * 128\n    return 2"), "attention_params_per_layer"),
    "576 written in": ("c3-l2", "kv_variants", "kv_variants", (
        'width = config["kv_lora_rank"] + config["qk_rope_head_dim"]', "width = 576"),
        "mla_bytes_per_token"),
    "head_dim = 128 in decode": ("day3", "shapes", "shapes", (
        "    d_head = d_model // n_heads\n    seen", "    d_head = 128\n    seen"),
        "decode_shapes"),
    "262,144 written in": ("c3-l2", "kv_variants", "kv_variants", (
        '* config["max_position_embeddings"]', "* 262144"), "kv_bytes_full_context"),
    "growth 16": ("day3", "growth", "growth", (
        "    return (n_to / n_from) ** 2\n", "    return 16.0\n"), "growth_factor"),
}


@pytest.mark.parametrize("case", sorted(HARD_CODED))
def test_hard_coded_answers_lose_their_points(tmp_path, case):
    set_id, exercise_id, module, (old, new), function = HARD_CODED[case]
    exercise_set = spec_loader.load_set(Course(ROOT), set_id)
    folder = tmp_path / "student"
    folder.mkdir()
    source = (exercise_set.solutions_dir / f"{module}.py").read_text()
    assert old in source
    (folder / f"{module}.py").write_text(source.replace(old, new))
    run = engine_grade(exercise_set, folder, only={exercise_id})
    checks = [c for c in run.exercises[0].checks if c.function == function]
    earned = sum(c.score for c in checks)
    assert any(not c.passed for c in checks)
    assert earned <= sum(c.max_score for c in checks) / 2, [(c.check, c.passed) for c in checks]


def test_one_global_maximum_fails_rows_of_very_different_scale(tmp_path):
    exercise_set = spec_loader.load_set(Course(ROOT), "day3")
    folder = tmp_path / "student"
    folder.mkdir()
    source = (exercise_set.solutions_dir / "temperature.py").read_text()
    old = "z = z - z.max(axis=-1, keepdims=True)"
    assert old in source
    (folder / "temperature.py").write_text(source.replace(old, "z = z - z.max()", 1))
    run = engine_grade(exercise_set, folder, only={"temperature"})
    failed = {c.check: c.tags for c in run.exercises[0].checks
              if not c.passed and c.kind == "case"}
    assert set(failed) == {"rows-of-different-scale", "rows-of-different-scale-random"}
    assert all(tags == ("softmax-global-max",) for tags in failed.values()), failed


@pytest.mark.parametrize("exercise, wrong, kept, lost", [
    # steps right, updates off by one: the steps' visible check keeps its points
    ("rnn_steps", "rnn_serial_counts = rnn_serial_counts_inclusive", "lesson-steps",
     "lesson-updates"),
    # the whole row's softmax: right for the last token only
    ("row_weights", "masked_row = masked_row_ignores_position", "mask-last", "mask-middle"),
])
def test_a_function_right_in_one_respect_keeps_that_respects_visible_points(
        tmp_path, exercise, wrong, kept, lost):
    """A visible check counts once its twin (the same question on drawn inputs) passes,
    not once any hidden check of its function does."""
    course = Course(ROOT)
    exercise_set = spec_loader.load_set(course, "c3-l2", only=[exercise])
    folder = tmp_path / "student"
    folder.mkdir()
    source = (ROOT / "solutions" / "c3-l2" / f"{exercise}.py").read_text()
    (folder / f"{exercise}.py").write_text(source + f"\n\n{wrong}\n")
    checks = {c.check: c for c in engine_grade(exercise_set, folder).exercises[0].checks}
    assert checks[kept].passed and checks[kept].score > 0
    assert not checks[lost].passed and checks[lost].score == 0


def test_twins_name_hidden_checks_of_the_same_function(tmp_path):
    from grader.errors import CourseError

    course = make_course(tmp_path, GOOD.replace("    args: [2]", "    args: [2]\n"
                                                "    twins: [drawn-x]"), hidden=GOOD_HIDDEN)
    with pytest.raises(CourseError, match="twins: expected ids of hidden checks of double"):
        spec_loader.load_set(course, "demo")


def test_a_constant_that_equals_a_wrong_versions_answer_once_names_no_mistake(tmp_path):
    """kv_head_for returning 2 is what the round-robin and the 1-based versions return on
    one input, not on the others: no tag. The round-robin version itself keeps its tag."""
    course = Course(ROOT)
    exercise_set = spec_loader.load_set(course, "c3-l2", only=["gqa_groups"])
    source = (ROOT / "solutions" / "c3-l2" / "gqa_groups.py").read_text()
    tags = {}
    for name, body in (("constant", "return 2"),
                       ("round-robin", "return kv_head_for_round_robin(h, n_q, n_kv)")):
        folder = tmp_path / name
        folder.mkdir()
        (folder / "gqa_groups.py").write_text(
            source + f"\n\n_kv_head_for = kv_head_for\n\n\ndef kv_head_for(h, n_q, n_kv):\n"
                     f"    {body}\n")
        run = engine_grade(exercise_set, folder)
        tags[name] = {t for c in run.exercises[0].checks for t in c.tags}
    assert tags["constant"] == set()
    assert "gqa-round-robin" in tags["round-robin"]
