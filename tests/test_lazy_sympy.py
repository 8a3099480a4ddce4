"""sympy on the trusted side only when a formula must really be compared.

sympy takes a quarter of a second to import.  The set cache keeps symbolic
inputs as wire trees, answers are read as checked trees (``wire.Lazy``), a
formula that is the reference's very tree passes as it is, and reference
answers are kept on disk; any other formula is compared with sympy as before.
"""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
import sympy

from grader import wire
from grader.course import cache, loader
from grader.course.limits import Limits
from grader.course.spec import Compare, Course
from grader.judge import compare as cmp
from grader.run import sandbox
from grader.run.references import Reference, StoredAnswers
from grader.run.student import RunFolder, StudentProcess

ROOT = Path(__file__).resolve().parents[1]
n, d = sympy.symbols("n d", positive=True)
FORMULA = Compare("formula", {})


def lazy(value):
    return wire.decode(wire.encode(value), lazy=True)


def test_a_lazy_answer_is_a_checked_tree_that_rebuilds_the_same_expression():
    answer = lazy(2 * n * d ** 2 + sympy.Rational(1, 3))
    assert type(answer) is wire.Lazy and answer == lazy(d ** 2 * n * 2 + sympy.Rational(1, 3))
    assert answer.value() == 2 * n * d ** 2 + sympy.Rational(1, 3)
    assert wire.encode(answer) == wire.encode(answer.value())
    assert wire.materialized([answer, (1, {"k": answer})]) == [answer.value(),
                                                              (1, {"k": answer.value()})]
    assert str(lazy(n)) == "n"


@pytest.mark.parametrize("tree", [
    ["Symbol", "__import__('os')", {}],
    ["Function", ["Symbol", "x", {}]],
    ["Integer", "12abc"],
    ["Add"] + [["Integer", "1"]] * (wire.MAX_SYMPY_NODES + 1),
])
def test_a_lazy_read_checks_the_tree_as_an_eager_one_does(tree):
    with pytest.raises(wire.WireError):
        wire.decode({"$t": "sympy", "tree": tree}, lazy=True)


@pytest.mark.parametrize("answer, passed", [
    (2 * n * d, True),                     # the very tree
    (n * d + d * n, True),                 # another tree, equal: sympy decides
    (2 * n * d + 1, False),
    (sympy.nan, False),                    # the same tree, but never a right formula
])
def test_formulas_pass_by_their_tree_or_by_sympy(answer, passed):
    expected = sympy.nan if answer is sympy.nan else 2 * n * d
    assert cmp.compare(lazy(answer), lazy(expected), FORMULA).passed is passed


PARENT_SIDE = """
import sys
from grader import wire
from grader.course.spec import Compare
from grader.judge import compare
tree = {"$t": "sympy", "tree": ["Mul", ["Integer", "2"], ["Symbol", "n", {"positive": True}]]}
verdict = compare.compare(wire.decode(tree, lazy=True), wire.decode(tree, lazy=True),
                          Compare("formula", {}))
print(verdict.passed, "sympy" in sys.modules)
"""


def test_judging_the_reference_s_very_tree_imports_no_sympy():
    out = subprocess.run([sys.executable, "-c", PARENT_SIDE], capture_output=True, text=True,
                         cwd=ROOT, check=True).stdout.split()
    assert out == ["True", "False"]


@pytest.fixture
def own_cache(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    monkeypatch.delenv(cache.ENV_SWITCH, raising=False)
    return tmp_path / "cache"


def test_the_set_cache_keeps_symbolic_inputs_as_trees_and_still_knows_they_need_sympy(
        own_cache):
    fresh = loader.load_set(Course(ROOT), "day3").exercise("kv_cache")
    cached = loader.load_set(Course(ROOT), "day3").exercise("kv_cache")
    symbolic = [c for c in fresh.checks if c.args and isinstance(c.args[0], sympy.Basic)]
    assert symbolic, "day3's kv_cache passes symbols"
    again = next(c for c in cached.checks if c.id == symbolic[0].id)
    assert type(again.args[0]) is wire.Lazy and again.args[0].value() == symbolic[0].args[0]
    assert wire.dumps(list(again.args)) == wire.dumps(list(symbolic[0].args))
    assert cached.child_modules == fresh.child_modules == ("sympy",)


def test_stored_reference_answers_need_no_solution_and_follow_its_contents(own_cache,
                                                                           tmp_path):
    exercise = loader.load_set(Course(ROOT), "day3").exercise("kv_cache")
    check = next(c for c in exercise.checks if c.args)
    first = Reference(exercise, StoredAnswers.of_set(ROOT, "day3"))
    value = first.call(check.function, check.args, check.kwargs, check)
    first.stored.save()
    again = Reference(exercise, StoredAnswers.of_set(ROOT, "day3"))
    assert again.call(check.function, check.args, check.kwargs, check) == value
    assert again._module is None     # read, not computed
    course = tmp_path / "course"
    for part in ("exercises", "solutions"):
        (course / part).mkdir(parents=True)
        os.symlink(ROOT / part / "day3", course / part / "day3")
    before = cache.answers_key(course, "day3")
    assert before != cache.answers_key(ROOT, "day3")    # another course, another entry
    os.unlink(course / "solutions" / "day3")
    (course / "solutions" / "day3").mkdir()
    for path in (ROOT / "solutions" / "day3").glob("*.py"):
        text = path.read_text() + ("\n# changed\n" if path.name == "kv_cache.py" else "")
        (course / "solutions" / "day3" / path.name).write_text(text)
    assert cache.answers_key(course, "day3") != before


COLD = """
import json, sys
sys.argv = ["attn-grade", "day3", "--json", "--submission", "solutions/day3"]
from grader.cli import main
try:
    main.main(prog_name="attn-grade")
except SystemExit:
    pass
print(json.dumps({"sympy": "sympy" in sys.modules}))
"""


def test_a_cold_grading_with_its_caches_warm_imports_no_sympy_on_the_trusted_side(own_cache):
    env = {**os.environ, "XDG_CACHE_HOME": str(own_cache)}
    for _ in range(2):   # the first fills the caches
        out = subprocess.run([sys.executable, "-c", COLD], capture_output=True, text=True,
                             cwd=ROOT, env=env, check=True).stdout
        doc = json.JSONDecoder().raw_decode(out)[0]
        assert doc["score"] == doc["max_score"]
        parent = json.loads(out.strip().splitlines()[-1])
    assert parent == {"sympy": False}


NPROC = '''
import resource

def nproc():
    return resource.getrlimit(resource.RLIMIT_NPROC)[0]

def has_sympy():
    import sys
    return "sympy" in sys.modules
'''


@pytest.mark.skipif(not sandbox.bubblewrap_works(), reason="bubblewrap is not available here")
def test_in_bubblewrap_sympy_exercises_get_a_template_of_their_own_counted_in_the_limit(
        tmp_path):
    (tmp_path / "probe.py").write_text(NPROC)
    folder = RunFolder(sandbox.plan("bubblewrap"))
    made = []
    try:
        folder.warm(tmp_path, [], Limits(), ("sympy",))
        for preload in ((), ("sympy",)):
            made.append(StudentProcess(folder, tmp_path, "probe", Limits(), "bubblewrap",
                                       preload=preload))
        plain, symbolic = made
        assert plain.call("has_sympy").value is False
        assert symbolic.call("has_sympy").value is True
        assert plain.proc.pid != symbolic.proc.pid
        # the uid's processes: the student's, and two templates that are not
        assert plain.call("nproc").value == Limits().processes + 2
    finally:
        for process in made:
            process.close()
        folder.close()


def test_a_stand_in_rebuilds_a_symbolic_input_the_set_cache_kept_as_a_tree():
    from grader.instructor import standin_runtime
    from grader.instructor.standins import to_source

    rebuilt = eval(to_source([lazy(n), {"b": lazy(d)}]), {"_rt": standin_runtime})
    assert rebuilt == [n, {"b": d}]


@pytest.mark.parametrize("value", [
    sympy.erf(n) + d,                                   # erf has no tree: its parts do
    sympy.Piecewise((n, n > 1), (0, True)),
    sympy.Matrix([[1, n]]),
    sympy.Symbol("d k") * n,                            # a name the wire refuses
])
def test_the_set_cache_keeps_a_sympy_value_without_a_tree_whole(value):
    import pickle

    again = pickle.loads(cache._dumps({"expect": value, "args": (value, n)}))
    assert again["expect"] == value and again["args"][0] == value
    assert type(again["args"][1]) is wire.Lazy     # what has a tree is still one


def test_a_formula_where_an_array_belongs_is_a_failed_verdict_not_an_error():
    import numpy as np

    for kind in ("array", "number"):
        verdict = cmp.compare(lazy(n), np.array([1.0, 2.0]), Compare(kind, {}))
        assert verdict.passed is False and verdict.reason is not None


def test_a_formula_where_a_tuple_belongs_is_named_by_its_sympy_type():
    from grader.judge.check import pick

    with pytest.raises(cmp.NotComparable) as caught:
        pick(lazy(2 * n * d), 0)
    assert caught.value.msg.values["got_type"] == "Mul"


@pytest.mark.parametrize("head", wire.SYMPY_FUNCTIONS)
def test_a_lazy_read_refuses_the_argument_counts_an_eager_one_cannot_build(head):
    # refused at reading, an answer fails as unreadable (as before), not at judging
    # (or never, in an item that a check's pick leaves out)
    for count in range(4):
        tree = {"$t": "sympy", "tree": [head] + [["Symbol", "x", {}]] * count}
        try:
            wire.decode(tree)
            eager = True
        except wire.WireError:
            eager = False
        try:
            wire.decode(tree, lazy=True)
            lazy_ = True
        except wire.WireError:
            lazy_ = False
        assert lazy_ is eager, (head, count)


def test_every_byte_unit_s_factor_is_sympy_s():
    from sympy.physics import units as su
    from sympy.physics.units import convert_to

    from grader.course import units

    binary = {"kib": su.kibibyte, "mib": su.mebibyte, "gib": su.gibibyte, "tib": su.tebibyte,
              "pib": su.pebibyte}
    decimal = {"kb": su.kilo, "mb": su.mega, "gb": su.giga, "tb": su.tera, "pb": su.peta}
    assert set(units.BINARY) == set(binary) and set(units.DECIMAL) == set(decimal)
    for key, quantity in [*binary.items(), *((k, p * su.byte) for k, p in decimal.items())]:
        exact = convert_to(quantity, su.byte) / su.byte
        for spelling in (key.upper(), key[0].upper() + key[1:-1] + "B"):
            assert units.unit_factor(spelling) == exact, spelling
            assert type(units.unit_factor(spelling)) is int


@pytest.mark.parametrize("unit, code", [("Kb", "bits"), ("Gib", "bits"), ("mB", None),
                                        ("KiBB", "unknown"), ("EiB", "unknown")])
def test_the_unit_table_keeps_the_grammar_bits_refused_and_unknown_units_named(unit, code):
    from grader.course import units

    if code is None:
        assert units.unit_factor(unit) == 10 ** 6
        return
    with pytest.raises(units.UnitError) as caught:
        units.unit_factor(unit)
    assert caught.value.code == code and caught.value.values["unit"] == unit


KV_IN_UNITS = '''
def kv_bytes_per_token(n_layers, n_kv_heads, head_dim, bytes_per_elem=2):
    total = 2 * n_layers * n_kv_heads * head_dim * bytes_per_elem
    return f"{total} B" if isinstance(total, int) else total


def kv_cache_bytes(config, n_tokens, bytes_per_elem=2):
    heads = config["num_attention_heads"]
    kv = config.get("num_key_value_heads", heads)
    dim = config.get("head_dim", config["hidden_size"] // heads)
    total = n_tokens * 2 * config["num_hidden_layers"] * kv * dim * bytes_per_elem
    return f"{total // 1024} KiB" if total % 1024 == 0 else f"{total:,} B"


def llama2_7b_kv_per_token():
    return "512 KiB"


def llama3_8b_kv_per_token():
    return "0.131072 MB"
'''


def test_grading_kv_cache_answered_in_units_imports_no_sympy_on_the_trusted_side(
        own_cache, tmp_path):
    work = tmp_path / "work"
    work.mkdir()
    (work / "kv_cache.py").write_text(KV_IN_UNITS)
    env = {**os.environ, "XDG_CACHE_HOME": str(own_cache)}
    # the first, of the whole set, fills the caches (a cold run of one exercise parses
    # only its own files, storing nothing)
    for only in ([], ["--exercise", "kv_cache"]):
        code = COLD.replace('"solutions/day3"', ", ".join(map(repr, [str(work), *only])))
        out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                             cwd=ROOT, env=env, check=True).stdout
    doc = json.JSONDecoder().raw_decode(out)[0]
    assert doc["score"] == doc["max_score"] > 0
    assert json.loads(out.strip().splitlines()[-1]) == {"sympy": False}


@pytest.mark.parametrize("value", [
    sympy.exp(1 / sympy.sqrt(2)) / (1 + 2 * sympy.exp(1 / sympy.sqrt(2))),
    6 / (2 + sympy.E ** 2), sympy.Rational(-7, 3), sympy.Integer(2) ** 70, sympy.pi / 4,
    sympy.log(8, 2), sympy.sin(1) ** 2 + sympy.cos(1) ** 2, sympy.Float("0.1", 40),
    sympy.Abs(-sympy.tanh(sympy.Rational(1, 3))), (-2) ** sympy.Integer(3),
])
def test_a_symbol_free_answer_is_read_as_sympy_would_without_sympy(value):
    from grader.judge import constants

    got = constants.approximate(lazy(value))
    assert got is not None and got == pytest.approx(float(value.evalf(30)), rel=1e-14)


@pytest.mark.parametrize("value", [
    n + 1,                                              # a formula
    sympy.exp(sympy.Integer(10) ** 6),                  # overflows a float
    (-2) ** sympy.Rational(1, 2) + 1,                   # complex
    sympy.Add(sympy.exp(40), -sympy.exp(40) + sympy.Rational(1, 10 ** 20), evaluate=False),
    sympy.factorial(sympy.Rational(1, 2)),              # a function left to sympy
])
def test_what_floats_cannot_read_as_well_as_sympy_is_left_to_sympy(value):
    from grader.judge import constants

    assert constants.approximate(lazy(value)) is None


NUMBERS_SIDE = """
import sys
import numpy as np
from grader import wire
from grader.course.spec import Check, Compare
from grader.judge import compare
e = ["exp", ["Mul", ["Rational", "1", "2"], ["Pow", ["Integer", "2"], ["Rational", "1", "2"]]]]
third = ["Mul", e, ["Pow", ["Add", ["Integer", "1"], ["Mul", ["Integer", "2"], e]],
                          ["Integer", "-1"]]]
row = wire.decode([{"$t": "sympy", "tree": third}] * 2, lazy=True)
half = wire.decode({"$t": "sympy", "tree": ["Rational", "1", "2"]}, lazy=True)
array, size = Compare("array", {"rtol": 0, "atol": 1e-9}), Compare("bytes", {})
w = np.exp(2 ** -0.5) / (1 + 2 * np.exp(2 ** -0.5))
print(compare.compare(row, np.array([w, w]), Compare("array", {"atol": 1e-12})).passed,
      compare.compare(row, np.array([0.5, 0.5]), array).passed,
      compare.readied(half, size) == 0.5 and type(compare.readied(half, size)).__name__,
      compare.compare(half, "0.5 B", size).passed,
      "sympy" in sys.modules)
"""


def test_numbers_typed_in_sympy_are_judged_without_importing_it():
    out = subprocess.run([sys.executable, "-c", NUMBERS_SIDE], capture_output=True,
                         text=True, cwd=ROOT, check=True).stdout.split()
    assert out == ["True", "False", "Fraction", "True", "False"]


def test_a_student_file_that_imports_sympy_runs_on_the_template_that_has_it(tmp_path):
    from grader.grading import preloaded

    exercises = loader.load_set(Course(ROOT), "day3")
    by_hand, kv = exercises.exercise("attention_by_hand"), exercises.exercise("kv_cache")
    for text, expected in [("import numpy as np\n", ()), ("x = 1  # import sympy\n", ()),
                           ("import sympy\n", ("sympy",)),
                           ("def f():\n    from sympy import Rational\n", ("sympy",))]:
        (tmp_path / "attention_by_hand.py").write_text(text)
        assert preloaded(by_hand, tmp_path / "attention_by_hand.py") == expected, text
    assert preloaded(by_hand, tmp_path / "missing.py") == ()
    assert preloaded(kv, tmp_path / "missing.py") == ("sympy",)   # its checks pass symbols


WINDOW_SIDE = """
import dataclasses, sys
import numpy as np
from grader import wire
from grader.course import loader
from grader.course.spec import Course
from grader.judge.check import judge
from grader.run.outcome import CallOutcome
from pathlib import Path
exercise = loader.load_set(Course(Path(".").resolve()), "day3").exercise("attention")
check = next(c for c in exercise.checks if c.id == "seed-output")
half = {"$t": "sympy", "tree": ["Rational", "1", "2"]}
got = wire.decode([[half, half], [1, 0]], lazy=True)
result = judge(check, exercise, CallOutcome("ok", value=(got, None)),
               (np.array([[1.0, 0.0], [0.5, 0.5]]), None), [])
codes = [line.code for line in result.lines if line is not None]
print(result.passed, "array-window" in codes, "sympy" in sys.modules)
"""


def test_a_wrong_array_typed_in_sympy_numbers_is_shown_beside_the_expected_one():
    out = subprocess.run([sys.executable, "-c", WINDOW_SIDE], capture_output=True,
                         text=True, cwd=ROOT, check=True).stdout.split()
    assert out == ["False", "True", "False"]
