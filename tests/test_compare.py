"""The comparison engine, one comparator at a time, with its diagnoses."""

from fractions import Fraction

import numpy as np
import pytest
import sympy

from grader.course.limits import parse_size
from grader.course.spec import Compare
from grader.course.units import UnitError, parse_bytes
from grader.judge.compare import compare
from grader.report.messages import render


def spec(kind, **params):
    return Compare(kind, params)


def text(verdict, lang="en", hidden=False):
    return render(verdict.reason, lang, hidden)


# ---------------------------------------------------------------- numbers

def test_number_within_relative_tolerance():
    assert compare(1.0000001, 1.0, spec("number", rtol=1e-6)).passed
    verdict = compare(1.01, 1.0, spec("number", rtol=1e-6))
    assert not verdict.passed and text(verdict) == "expected 1, not 1.01"


def test_number_tolerance_is_stated_in_plain_words():
    verdict = compare(2.0, 1.0, spec("number", rtol=1e-3, atol=1e-9))
    assert render(verdict.tolerance, "en") == (
        "tolerance: relative error up to 0.1%, or absolute error up to 1e-09")
    assert "0.1%" in render(verdict.tolerance, "zh")


def test_number_accepts_fraction_and_exact_sympy():
    assert compare(Fraction(1, 3), 0.3333333333, spec("number", rtol=1e-6)).passed
    exact = sympy.exp(1 / sympy.sqrt(2))
    assert compare(exact, 2.0281149816474726, spec("number", rtol=1e-9)).passed
    assert compare(2.0281149816474726, exact, spec("number", rtol=1e-9)).passed


def test_significant_figures():
    assert compare(0.665, 0.66524, spec("number", sigfigs=3)).passed
    assert not compare(0.67, 0.66524, spec("number", sigfigs=3)).passed


def test_number_diagnoses_wrong_kinds():
    assert "a bool" in text(compare(True, 1, spec("number")))
    assert "a sequence" in text(compare((128, 128), 128, spec("number")))
    assert "formula" in text(compare(sympy.Symbol("n"), 1, spec("number")))
    assert "text" in text(compare("12", 12, spec("number")))


# ---------------------------------------------------------------- arrays

def test_array_shape_is_checked_first():
    verdict = compare(np.zeros((3, 2)), np.zeros((3, 3)), spec("array"))
    assert text(verdict) == "expected shape (3, 3), not (3, 2)"


def test_array_reports_largest_error_and_where():
    want = np.arange(6.0).reshape(2, 3)
    got = want.copy()
    got[1, 2] += 0.5
    got[0, 1] += 0.1
    verdict = compare(got, want, spec("array", rtol=0, atol=1e-3))
    assert text(verdict) == ("2 of 6 elements differ; the largest error is 0.5 at index "
                             "(1, 2) (expected 5, got 5.5)")


def test_array_says_looks_transposed():
    want = np.arange(6.0).reshape(2, 3)
    assert "looks transposed" in text(compare(want.T, want, spec("array")))
    square = np.array([[1.0, 2.0], [3.0, 4.0]])
    verdict = compare(square.T, square, spec("array"))
    assert verdict.reason.code == "transposed"
    assert render(verdict.reason, "en", hidden=True) == "the answer looks transposed"


def test_array_nan_rules():
    want = np.array([1.0, 2.0])
    verdict = compare(np.array([np.nan, 2.0]), want, spec("array"))
    assert text(verdict).startswith("the answer contains NaN")
    both = np.array([np.nan, 1.0])
    assert compare(both, both, spec("array", nan="equal")).passed
    assert not compare(np.array([1.0, 1.0]), both, spec("array", nan="equal")).passed
    assert not compare(both, np.array([0.0, 1.0]), spec("array", nan="fail")).passed


def test_array_accepts_nested_lists_and_sympy_elements():
    half = sympy.Rational(1, 2)
    assert compare([[1, 0], [half, half]], np.array([[1, 0], [.5, .5]]), spec("array")).passed
    assert not compare([[1, 0], [1]], np.eye(2), spec("array")).passed


def test_array_accepts_a_list_of_rows_built_as_arrays_but_not_ragged_ones():
    rows = [np.array([0.21, 0.0]), np.array([0.0, 1.57])]
    assert compare(rows, np.array([[0.21, 0], [0, 1.57]]), spec("array")).passed
    assert compare((np.ones(2), [1, 1]), np.ones((2, 2)), spec("array")).passed
    for ragged in ([np.ones(2), np.ones(3)], [np.ones(2), 1.0], [np.array(["a", "b"])]):
        verdict = compare(ragged, np.ones((2, 2)), spec("array"))
        assert not verdict.passed and verdict.reason.code == "ragged", ragged


def test_array_tolerance_for_hand_rounding():
    exact = np.array([0.4011, 0.1978, 0.4011])
    assert compare([0.40, 0.20, 0.40], exact, spec("array", rtol=0, atol=0.005)).passed
    assert not compare([0.42, 0.16, 0.42], exact, spec("array", rtol=0, atol=0.005)).passed


# ---------------------------------------------------------------- shapes, exact, choices

def test_shape_bare_int_and_reverse_are_their_own_diagnoses():
    verdict = compare(128, (4096, 128), spec("shape"))
    assert verdict.reason.code == "got-int-for-shape"
    verdict = compare((128, 4096), (4096, 128), spec("shape"))
    assert verdict.reason.code == "shape-transposed"
    assert "swapped" in render(verdict.reason, "en", hidden=True)
    assert "4096" not in render(verdict.reason, "en", hidden=True)
    assert compare([4096, 128], (4096, 128), spec("shape")).passed
    assert compare((128, 128), 128, spec("exact")).reason.code == "got-sequence-for-number"


def test_exact_integers_and_bools():
    assert compare(67108864, 67108864, spec("exact")).passed
    assert compare(67108864.0, 67108864, spec("exact")).passed
    assert not compare(67108864.5, 67108864, spec("exact")).passed
    assert not compare(1, True, spec("exact")).passed
    assert compare(False, False, spec("exact")).passed


def test_choice_and_set():
    options = ["q", "k", "v", "weights"]
    assert compare("v", "v", spec("choice", options=options)).passed
    verdict = compare("values", "v", spec("choice", options=options))
    assert verdict.reason.code == "not-an-option"
    assert compare(["v", "k"], {"k", "v"}, spec("set")).passed
    verdict = compare({"q", "k", "v"}, {"k", "v"}, spec("set"))
    assert text(verdict) == "should not include ['q']"   # not "missing []; ..."


# ---------------------------------------------------------------- formulas

def test_formula_simplifies_equivalent_forms():
    L, h, d, b = sympy.symbols("L h d b", positive=True)
    want = 2 * L * h * d * b
    assert compare(L * (h * d) * b + b * d * h * L, want, spec("formula")).passed
    verdict = compare(L * h * d * b, want, spec("formula"))
    assert not verdict.passed and verdict.reason.code == "formula-differs"


def test_formula_diagnoses_numbers_and_foreign_symbols():
    n = sympy.Symbol("n", positive=True)
    assert compare(16, n ** 2, spec("formula")).reason.code == "formula-is-number"
    assert compare(sympy.Symbol("m") ** 2, n ** 2,
                   spec("formula")).reason.code == "formula-foreign-symbols"


def test_formula_spot_checks_when_simplify_times_out():
    n = sympy.Symbol("n", positive=True)
    hard = sympy.expand((n + 1) ** 30)
    assert compare(hard, (n + 1) ** 30, spec("formula", timeout=0.001)).passed
    assert not compare(hard + 1, (n + 1) ** 30, spec("formula", timeout=0.001)).passed


# ---------------------------------------------------------------- bytes, dicts

@pytest.mark.parametrize("answer", [524288, "512 KiB", "0.5 MiB", "512KiB", "524288 B"])
def test_bytes_in_any_unit(answer):
    assert compare(answer, 524288, spec("bytes")).passed


def test_bytes_kb_is_not_kib():
    verdict = compare("512 KB", "512 KiB", spec("bytes"))
    assert text(verdict) == "expected 524288 B (512 KiB), not 512000 B (500 KiB)"


def test_bytes_lowercase_b_means_bits():
    verdict = compare("512 Kb", 524288, spec("bytes"))
    assert verdict.reason.code == "bad-bytes" and "bits" in text(verdict)


@pytest.mark.parametrize("size", ["512Kb", "512 kb", "1 Mb", "2 Gib"])
def test_limit_sizes_read_a_lowercase_b_as_bits_like_answers(size):
    """--memory-limit and a set's limits follow the same rule as a byte answer."""
    with pytest.raises(UnitError) as bits:
        parse_bytes(size)
    with pytest.raises(ValueError) as limit:
        parse_size(size)
    assert str(bits.value) in str(limit.value) and "bits" in str(limit.value)


@pytest.mark.parametrize("size,expected", [("512 KB", 512000), ("512kB", 512000),
                                           ("512KiB", 524288), ("512k", 524288),
                                           ("768MiB", 768 * 1024 ** 2), ("5", 5), (7, 7)])
def test_limit_sizes_in_bytes(size, expected):
    assert parse_size(size) == expected


def test_bytes_rejects_code_and_nonsense():
    assert not compare("__import__('os')", 1, spec("bytes")).passed
    assert not compare("12 parsecs", 1, spec("bytes")).passed


def test_dict_compares_each_value():
    want = {"X": (2000, 4096), "scores": (2000, 2000)}
    assert compare(dict(want), want, spec("dict", each=spec("shape"))).passed
    verdict = compare({"X": (2000, 4096), "scores": (2000, 128)}, want,
                      spec("dict", each=spec("shape")))
    assert text(verdict) == "at key 'scores': expected shape (2000, 2000), not (2000, 128)"
    assert compare({"X": (1, 1)}, want, spec("dict", each=spec("shape"))).reason.code == "keys"


def test_formula_quick_difference_never_overrules_simplify():
    # log(x**2) == 2*log(-x) for negative x, as simplify shows; the random points
    # (which ignore "negative") differ by 2*pi*i: no quick "clearly differ" verdict
    xs = sympy.symbols("a0:3", negative=True)
    plain = sympy.symbols("a0:3")
    got = sum(sympy.log(s ** 2) for s in plain)
    want = sum(2 * sympy.log(-s) for s in xs)
    assert compare(got, want, spec("formula")).passed


def test_formula_spot_checks_sample_inside_the_symbols_assumptions():
    """When simplify gives up, the spot checks decide: at points a negative (or even,
    odd) symbol can take, never at one it cannot."""
    from grader.judge.symbolic import _sample, _spot_check

    xs = sympy.symbols("a0:3", negative=True)
    got = sum(sympy.log(s ** 2) for s in xs)
    want = sum(2 * sympy.log(-s) for s in xs)
    assert _spot_check(got, want, spec("formula"), None).passed
    rng = __import__("random").Random(1)
    for symbol, holds in ((sympy.Symbol("e", integer=True, even=True), "is_even"),
                          (sympy.Symbol("o", integer=True, odd=True), "is_odd"),
                          (sympy.Symbol("n", nonpositive=True), "is_nonpositive")):
        assert all(getattr(_sample(symbol, rng), holds) for _ in range(20)), symbol


@pytest.mark.parametrize("answer, named", [
    ((82.23, 93.33), True),      # both cut where they should round up
    ((82.24, 93.33), True),      # one of them cut
    ((82.24, 93.34), False),     # rounded: right
    ((82.2, 93.3), False),       # one decimal: another slip
    ((0.0, 0.0), False),         # a constant names nothing
    (82.23, False),              # not the answer's shape
    ("82.23", False),
])
def test_a_truncated_answer_is_named_only_where_cutting_differs_from_rounding(answer, named):
    from grader.judge.check import RULES

    expected = (100 * (389120 - 69120) / 389120, 100 * (389120 - 25920) / 389120)
    assert RULES["truncated"](2, answer, expected, None, None) is named


def test_a_list_of_arrays_is_accepted_wherever_an_array_is():
    """row_weights answered as a list of numpy rows lost its check once; a list of rows,
    nested lists and one array are the same answer."""
    from grader import wire

    expected = np.array([[0.25, 0.75], [1.0, 0.0]])
    rows = [np.array([0.25, 0.75]), np.array([1.0, 0.0])]
    for answer in (rows, wire.decode(wire.encode(rows)), tuple(rows), expected.tolist()):
        assert compare(answer, expected, spec("array", rtol=0, atol=1e-9)).passed, answer
    assert not compare([np.array([0.25, 0.75]), np.array([1.0])], expected,
                       spec("array", rtol=0, atol=1e-9)).passed   # ragged: not the shape


@pytest.mark.parametrize("answer, nothing", [
    (None, True), ([], True), ((), True), ("", True), (0, True), (0.0, True),
    ([0, 0], True), (np.zeros((2, 3)), True), ([[0.0], [0.0]], True),
    ([0, 1], False), (2, False), ("0", False), ({"a": 0}, False), (np.ones(2), False),
])
def test_an_answer_that_holds_nothing_is_told_apart(answer, nothing):
    """What the zeros stand-in returns: no misconception is read into it."""
    from grader.judge.values import is_nothing

    assert is_nothing(answer) is nothing
