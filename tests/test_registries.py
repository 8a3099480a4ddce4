"""Every extension point is declared once, and every declared kind is complete:
implemented, worded in every language, in the JSON Schema and in the README.

A forgotten piece fails here, never in a student's run.
"""

import re

import click
from conftest import ROOT

from grader import cli
from grader.course import formats, inputs
from grader.course.spec import LANGUAGES, Compare, Text
from grader.judge.check import RULES
from grader.judge.compare import COMPARATORS
from grader.judge.verdict import tolerance_of
from grader.report import messages

README = (ROOT / "README.md").read_text(encoding="utf-8")


def compare_kind_problems(kinds, comparators, words, readme):
    """What is missing for each declared compare kind."""
    problems = []
    for kind in kinds:
        if kind not in comparators:
            problems.append(f"compare kind {kind!r} has no comparator")
        if kind not in words:
            problems.append(f"compare kind {kind!r} has no word in report.messages.KIND_WORDS")
        if f"`{kind}`" not in readme:
            problems.append(f"compare kind {kind!r} is not documented in the README")
        for lang in LANGUAGES:
            try:
                messages.render(tolerance_of(Compare(kind, {})), lang)
            except KeyError as exc:
                problems.append(f"compare kind {kind!r}: no {lang} message {exc}")
    problems += [f"comparator {k!r} is not a declared kind" for k in comparators if k not in kinds]
    return problems


def test_every_compare_kind_is_complete():
    assert compare_kind_problems(formats.COMPARE_KINDS, COMPARATORS, messages.KIND_WORDS,
                                 README) == []
    schema = formats.json_schema()["$defs"]["compare"]["anyOf"][0]["enum"]
    assert schema == list(formats.COMPARE_KINDS)


def test_a_new_compare_kind_without_its_pieces_fails_here():
    kinds = {**formats.COMPARE_KINDS, "angle": formats.CompareKind("an angle in degrees")}
    problems = compare_kind_problems(kinds, COMPARATORS, messages.KIND_WORDS, README)
    assert any("'angle' has no comparator" in p for p in problems)
    assert any("'angle' has no word" in p for p in problems)
    assert any("'angle' is not documented" in p for p in problems)


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
