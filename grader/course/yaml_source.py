"""YAML files read into plain values that remember their line numbers.

PyYAML's composer keeps marks; we convert its nodes ourselves so that every
mapping and list knows the line of each entry, duplicate keys are an error
(PyYAML silently keeps the last), and custom tags such as ``!array`` stay
visible as ``Tagged`` values instead of being constructed.
"""

from pathlib import Path
from typing import Any

import yaml

from ..errors import CourseError


class LocatedDict(dict):
    """A mapping with the line of itself and of each key."""

    line = 0
    key_lines: dict


class LocatedList(list):
    """A list with the line of itself and of each item."""

    line = 0
    item_lines: list


class Tagged:
    """A value written with a local tag, e.g. ``!array [[1, 2]]``."""

    def __init__(self, tag, value, line):
        self.tag, self.value, self.line = tag, value, line

    def __repr__(self):
        return f"Tagged({self.tag!r}, {self.value!r})"


_scalar = yaml.SafeLoader("")
# libyaml's parser where PyYAML was built with it (about 15 times faster: a cold grading
# parses every YAML file of a set); its nodes and marks are the pure parser's
_FAST = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


# PyYAML's problems in the project's words: (what its text holds, code, English)
SYNTAX_PROBLEMS = (
    ("'\\t'", "yaml-tab", "a tab: YAML indents with spaces only"),
    ("mapping values are not allowed", "yaml-colon",
     "a ':' where a value was expected: quote the value (\"a: b\"), or indent this line "
     "as its neighbours"),
    ("expected ',' or '}'", "yaml-brace", "a '{' without its closing '}' (or a ',' missing)"),
    ("expected ',' or ']'", "yaml-bracket", "a '[' without its closing ']' (or a ',' missing)"),
    ("quoted scalar", "yaml-quote", "a quote without its closing quote"),
    ("could not find expected ':'", "yaml-no-colon", "a key without its ':'"),
    ("expected <block end>", "yaml-indent",
     "a line indented unlike the keys around it (each level by the same spaces)"),
    ("did not find expected key", "yaml-indent",
     "a line indented unlike the keys around it (each level by the same spaces)"),
    ("did not find expected '-'", "yaml-indent",
     "a line indented unlike the keys around it (each level by the same spaces)"),
    ("found undefined alias", "yaml-alias", "a '*' that starts a value: quote the value"),
    ("found character '@'", "yaml-reserved", "a value that starts with '@' or '`': quote it"),
    ("found character '`'", "yaml-reserved", "a value that starts with '@' or '`': quote it"),
    ("while parsing a flow", "yaml-flow", "a '[' or '{' left open above this line"),
)


def syntax_problem(problem: str, context: str) -> tuple[str, str]:
    """(catalogue code, English) of a YAML syntax error, from PyYAML's text."""
    for text in (problem, context):
        for needle, code, english in SYNTAX_PROBLEMS:
            if needle in text:
                return code, english
    return "yaml-syntax", "the YAML here cannot be read; check its indentation and quoting"


def load(path: Path) -> Any:
    """Parse one YAML file; syntax errors become CourseError with the line."""
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise CourseError(f"cannot read file ({exc})", path) from None
    try:
        node = yaml.compose(text, Loader=_FAST)
    except yaml.YAMLError:
        node = _composed_or_error(text, path)
    if node is None:
        raise CourseError("the file is empty; expected a mapping", path, 1)
    return _convert(node, path)


def _composed_or_error(text: str, path: Path) -> Any:
    """Parse again with PyYAML's own parser, whose texts SYNTAX_PROBLEMS knows (libyaml
    words its problems otherwise): its CourseError, or its node if it reads the file."""
    try:
        return yaml.compose(text, Loader=yaml.SafeLoader)
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        line = mark.line + 1 if mark else None
        problem = exc.problem or str(exc)
        code, english = syntax_problem(problem, exc.context or "")
        raise CourseError(f"not valid YAML: {english}", path, line, msg=(code, {}),
                          detail=f"PyYAML: {problem}") from None


def _convert(node, path):
    line = node.start_mark.line + 1
    if node.tag.startswith("!") and not node.tag.startswith("!!"):
        plain = type(node)(_default_tag(node), node.value, node.start_mark, node.end_mark)
        return Tagged(node.tag, _convert(plain, path), line)
    if isinstance(node, yaml.MappingNode):
        return _convert_mapping(node, path, line)
    if isinstance(node, yaml.SequenceNode):
        out = LocatedList(_convert(item, path) for item in node.value)
        out.line, out.item_lines = line, [i.start_mark.line + 1 for i in node.value]
        return out
    try:
        return _scalar.construct_object(node, deep=True)
    except yaml.constructor.ConstructorError as exc:
        raise CourseError(f"cannot read value: {exc.problem}", path, line) from None


def _convert_mapping(node, path, line):
    out = LocatedDict()
    out.line, out.key_lines = line, {}
    for key_node, value_node in node.value:
        key = _convert(key_node, path)
        if isinstance(key, (LocatedDict, LocatedList, Tagged)):
            raise CourseError("mapping keys must be plain scalars", path,
                              key_node.start_mark.line + 1)
        if key in out:
            raise CourseError(f"duplicate key {key!r} (first on line {out.key_lines[key]})",
                              path, key_node.start_mark.line + 1)
        out[key] = _convert(value_node, path)
        out.key_lines[key] = key_node.start_mark.line + 1
    return out


def _default_tag(node):
    if isinstance(node, yaml.MappingNode):
        return "tag:yaml.org,2002:map"
    if isinstance(node, yaml.SequenceNode):
        return "tag:yaml.org,2002:seq"
    return _scalar.resolve(yaml.ScalarNode, node.value, (True, False))
