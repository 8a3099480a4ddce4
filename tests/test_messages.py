"""The message catalogue: every message in every language, hidden forms value-free,
no message used that the catalogue lacks, none kept that nothing uses."""

import re
import string
from pathlib import Path

import pytest

from grader.course.formats import COMPARE_KINDS
from grader.report import messages as feedback

GRADER = Path(feedback.__file__).parents[1]
# placeholders that cannot carry a hidden input, an expected value or student-chosen text
SAFE = {"function", "file", "want", "seconds", "limit", "kind", "tag", "text", "safe_type",
        "kept", "functions"}


def placeholders(template):
    return {f[1] for f in string.Formatter().parse(template) if f[1]}


def forms(lang):
    """(id, form, template) for every message of ``lang``; 'same' resolved."""
    for code, entry in feedback.catalogue(lang).items():
        yield code, "text", entry["text"]
        if entry.get("hidden") is not None:
            hidden = entry["text"] if entry["hidden"] == "same" else entry["hidden"]
            yield code, "hidden", hidden


def test_every_language_has_every_message_with_the_same_placeholders():
    shapes = {lang: {(code, form): placeholders(t) for code, form, t in forms(lang)}
              for lang in feedback.LANGUAGES}
    reference = shapes["en"]
    for lang, shape in shapes.items():
        assert shape.keys() == reference.keys(), (lang, shape.keys() ^ reference.keys())
        for key, names in shape.items():
            assert names == reference[key], (lang, key, names ^ reference[key])


@pytest.mark.parametrize("lang", feedback.LANGUAGES)
def test_hidden_forms_carry_no_value(lang):
    for code, form, template in forms(lang):
        if form == "hidden":
            assert placeholders(template) <= SAFE, (lang, code, placeholders(template) - SAFE)


def _codes_in_source(paths=None):
    """``Msg("code", ...)``, and in the course stage, which makes no Msg, the pairs
    ``("code", {...})`` of its errors."""
    pattern = re.compile(r'Msg\(\s*"([a-z0-9-]+)"')
    pairs = re.compile(r'\(\s*"([a-z0-9-]+)",\s*\{')
    codes = set()
    for path in paths or GRADER.rglob("*.py"):
        text = path.read_text(encoding="utf-8")
        codes |= set(pattern.findall(text))
        codes |= set(pairs.findall(text)) if path.parent.name == "course" else set()
    return codes


def _missing(paths=None):
    return _codes_in_source(paths) - set(feedback.catalogue("en"))


def test_every_message_the_grader_uses_is_in_the_catalogue():
    assert not _missing(), f"Msg codes without a catalogue entry: {sorted(_missing())}"


def _unit_error_codes():
    """Codes of course/units.py's UnitError, phrased as ``unit-CODE`` messages."""
    source = (GRADER / "course" / "units.py").read_text(encoding="utf-8")
    raised = re.findall(r'UnitError\((?:[^()]|\([^()]*\))*?,\s*"([a-z-]+)"', source)
    return {f"unit-{code}" for code in raised} | {"unit-unreadable"}   # the default code


def test_every_unit_error_has_its_message():
    assert _unit_error_codes() <= set(feedback.catalogue("en"))


def _yaml_codes():
    """The codes of course/yaml_source.py's syntax problems (said by the CLI)."""
    from grader.course.yaml_source import SYNTAX_PROBLEMS

    return {code for _, code, _ in SYNTAX_PROBLEMS} | {"yaml-syntax"}


def _want_codes():
    """``want-WORD``: what a check wants, for each compare kind and each ``want="WORD"``."""
    pattern = re.compile(r'want="([a-z]+)"|PLAIN_VALUE = "([a-z]+)"')
    words = {a or b for path in GRADER.rglob("*.py")
             for a, b in pattern.findall(path.read_text(encoding="utf-8"))}
    return {f"want-{word}" for word in words | set(COMPARE_KINDS)}


def test_no_message_is_dead():
    dead = (set(feedback.catalogue("en")) - _codes_in_source() - _unit_error_codes()
            - _want_codes() - _yaml_codes())
    assert not dead, f"catalogue entries nothing uses: {sorted(dead)}"


def test_a_missing_message_fails_here_not_in_a_students_run(tmp_path):
    """A comparator that emits an unknown code is caught by the source scan above."""
    module = tmp_path / "new_kind.py"
    module.write_text('from .feedback import Msg\nreason = Msg("brand-new-diagnosis")\n')
    assert _missing([*GRADER.rglob("*.py"), module]) == {"brand-new-diagnosis"}


# words that stay Latin in Chinese text: code, identifiers, units, names of things
ALLOWED_LATIN = {"NaN", "sympy", "NotImplementedError", "exit", "B", "KB", "MB", "GB", "KiB",
                 "MiB", "GiB", "CPU", "softmax", "attn", "grade", "hint", "show", "inf", "Ctrl",
                 "ndarray", "YAML"}


def test_chinese_messages_have_no_english_words():
    """Every zh message, placeholders filled with neutral values, has no Latin word
    except code, identifiers and units."""
    for code, _, template in forms("zh"):
        text = re.sub(r"\{[^}]*\}", "0", template)
        words = set(re.findall(r"[A-Za-z][A-Za-z_]+", text)) - ALLOWED_LATIN
        assert not words, (code, template, words)


def test_a_type_name_gets_its_article_in_english():
    """'returned a int' was how a reference returning 6 for an expected '6' read."""
    from grader.judge.msg import Msg

    assert feedback.render(Msg("got-type", got_type="int", want="str"), "en") \
        .startswith("returned an int, expected")
    assert feedback.render(Msg("got-type", got_type="Liar", want="array"), "en") \
        .startswith("returned a Liar, expected")
    assert "返回了 int" in feedback.render(Msg("got-type", got_type="int", want="str"), "zh")


def test_what_a_hidden_test_raised_is_for_the_instructor_only():
    """dev check shows what a failing hidden test raised; a student never reads it."""
    from grader.judge.msg import Msg
    from grader.judge.results import CheckResult
    from grader.report.render import check_lines

    raised = Msg("hidden-test-raised", raised="AssertionError: assert 12 == 13")
    result = CheckResult(exercise="e", file="e.py", check="test_x", visibility="hidden",
                         passed=False, max_score=1.0, kind="pytest",
                         lines=(Msg("hidden-failed"), raised))
    for lang in ("en", "zh"):
        shown = "\n".join(check_lines(result, lang))
        assert "12" not in shown and "AssertionError" not in shown and shown
    assert "assert 12 == 13" in feedback.render(raised, "en")


def test_every_yaml_syntax_problem_has_its_message():
    for lang in ("en", "zh"):
        assert _yaml_codes() <= set(feedback.catalogue(lang))
