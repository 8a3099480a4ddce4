"""Every extension point is declared once, and every declared kind is complete:
implemented, worded in every language, in the JSON Schema and in the README.

A forgotten piece fails here, never in a student's run.
"""

import re

import click
import pytest
from conftest import ROOT

from grader import cli, quiz
from grader.course import formats, inputs
from grader.course.spec import LANGUAGES, Compare, Text
from grader.judge.check import RULES
from grader.judge.compare import KINDS, compare, judged_plain, same_tree, tolerance_of
from grader.judge.msg import Msg
from grader.judge.verdict import Comparison, Verdict
from grader.report import messages

README = (ROOT / "README.md").read_text(encoding="utf-8")


def compare_kind_problems(kinds, comparisons, readme):
    """What is missing for each declared compare kind, and each comparison declared
    nowhere: the judge's class, the catalogue's words in every language, the README."""
    problems = []
    for kind in kinds:
        if kind not in comparisons:
            problems.append(f"compare kind {kind!r} has no Comparison class")
        if f"`{kind}`" not in readme:
            problems.append(f"compare kind {kind!r} is not documented in the README")
        for lang in LANGUAGES:
            if f"want-{kind}" not in messages.catalogue(lang):
                problems.append(f"compare kind {kind!r}: no {lang} catalogue line want-{kind}")
            if kind in comparisons:
                try:
                    spec = Compare(kind, {"each": Compare("number", {})})   # dict's items
                    messages.render(comparisons[kind].tolerance(spec), lang)
                except KeyError as exc:
                    problems.append(f"compare kind {kind!r}: no {lang} message {exc}")
    problems += [f"comparison {k!r} is not a declared kind" for k in comparisons if k not in kinds]
    return problems


def test_every_compare_kind_is_complete():
    assert compare_kind_problems(formats.COMPARE_KINDS, KINDS, README) == []
    schema = formats.json_schema()["$defs"]["compare"]["anyOf"][0]["enum"]
    assert schema == list(formats.COMPARE_KINDS)
    assert set(quiz.READINGS) == set(formats.QUIZ_READINGS)


def test_every_tolerance_of_every_kind_renders_in_every_language():
    each = Compare("number", {"rtol": 0.01})
    specs = [Compare("number", {"sigfigs": 3}), Compare("number", {"rtol": 0}),
             Compare("array", {"atol": 0}), Compare("bytes", {"rtol": 0.05}),
             Compare("dict", {"each": each}),
             *(Compare(kind, {"each": each}) for kind in KINDS)]
    for spec in specs:
        for lang in LANGUAGES:
            assert messages.render(tolerance_of(spec), lang).strip(), (spec, lang)


# a kind no course has: these tests declare it for a moment (a real one may be "angle")
def test_a_new_compare_kind_without_its_pieces_fails_here():
    kinds = {**formats.COMPARE_KINDS,
             "sketch-angle": formats.CompareKind("an angle in degrees", reveal="answer", quiz=None)}
    problems = compare_kind_problems(kinds, KINDS, README)
    assert any("'sketch-angle' has no Comparison class" in p for p in problems)
    assert any("'sketch-angle': no en catalogue line want-sketch-angle" in p for p in problems)
    assert any("'sketch-angle': no zh catalogue line want-sketch-angle" in p for p in problems)
    assert any("'sketch-angle' is not documented" in p for p in problems)


def test_a_comparison_class_without_a_piece_cannot_be_defined():
    with pytest.raises(TypeError, match="does not say plain"):
        class NoPlain(Comparison):
            kind, same_tree = "sketch-angle", False
    with pytest.raises(TypeError, match="does not say tolerance"):
        class NoTolerance(Comparison):
            kind, plain, same_tree = "sketch-angle", True, False

            def compare(self, answer, expected, spec):
                raise NotImplementedError
    with pytest.raises(TypeError, match="defined twice"):
        class AnotherNumber(Comparison):
            kind, plain, same_tree = "number", True, False

            def compare(self, answer, expected, spec):
                raise NotImplementedError

            def tolerance(self, spec):
                return Msg("tol-exact")
    assert "sketch-angle" not in KINDS


def test_a_complete_comparison_class_is_judged_as_it_says():
    class Angle(Comparison):
        kind, plain, same_tree = "sketch-angle", True, False

        def tolerance(self, spec):
            return Msg("tol-abs", atol=1)

        def compare(self, answer, expected, spec):
            return Verdict(abs((answer - expected + 180) % 360 - 180) <= 1,
                           tolerance=self.tolerance(spec))
    try:
        spec = Compare("sketch-angle", {})
        assert compare(359.5, 0.0, spec).passed and not compare(10, 0, spec).passed
        assert judged_plain(spec) and not same_tree(1, 1, spec)
        assert compare("ten", 0, Compare("number", {})).reason.code == "got-text-for-number"
    finally:
        del KINDS["sketch-angle"]


def test_a_compare_kind_declaration_says_its_reveal_and_its_quiz_reading():
    with pytest.raises(TypeError):
        formats.CompareKind("an angle in degrees")   # neither said: no default
    with pytest.raises(ValueError):
        formats.CompareKind("an angle in degrees", reveal="everything", quiz=None)
    with pytest.raises(ValueError):
        formats.CompareKind("an angle in degrees", reveal="answer", quiz="degrees")


def test_every_input_tag_has_a_builder_a_usage_line_and_a_readme_line():
    for tag, (builder, usage) in inputs.INPUT_TAGS.items():
        assert callable(builder) and usage.startswith(f"write {tag}")
        assert f"`{tag}" in README, f"{tag} is not documented in the README"
    assert inputs.TAGS == tuple(inputs.INPUT_TAGS)


def test_every_rule_kind_has_its_test_and_a_readme_line():
    assert set(RULES) == set(formats.MISCONCEPTION_RULES)
    for kind in formats.MISCONCEPTION_RULES:
        assert re.search(rf"when: \{{{kind}:", README), f"rule {kind!r} is not in the README"


def test_every_language_has_a_catalogue_texts_and_a_cli_choice():
    assert set(LANGUAGES) == {f.name for f in Text.__dataclass_fields__.values()}
    for lang in LANGUAGES:
        assert messages.catalogue(lang)
    for command in cli.main.commands.values():
        for leaf in getattr(command, "commands", {}).values() or [command]:
            for param in leaf.params:
                if param.name == "lang":
                    assert isinstance(param.type, click.Choice)
                    assert set(param.type.choices) == set(LANGUAGES), leaf.name
