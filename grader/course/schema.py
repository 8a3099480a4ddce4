"""The exercise file format, declared once.

Each type both validates a value read by ``yaml_source`` (with the file and
line for errors) and describes itself as JSON Schema, so ``attn-grade
schema`` and the loader cannot drift apart.
"""

import dataclasses
import difflib
import re
from collections.abc import Iterable
from typing import Any, NoReturn

from ..errors import CourseError
from .yaml_source import LocatedDict, LocatedList, Tagged

FORMAT_VERSION = 1
_MISSING = object()


@dataclasses.dataclass(frozen=True)
class Where:
    """Where a value sits: file, line and its key path (``checks[2].compare``)."""

    path: object
    line: int
    key: str = ""

    def child(self, key: str | int, line: int | None = None) -> "Where":
        joined = f"{self.key}[{key}]" if isinstance(key, int) else (
            f"{self.key}.{key}" if self.key else str(key))
        return Where(self.path, line or self.line, joined)

    def fail(self, expected: str, got: Any = _MISSING, hint: str | None = None) -> NoReturn:
        what = f"{self.key}: " if self.key else ""
        shown = "" if got is _MISSING else f", got {_show(got)}"
        raise CourseError(f"{what}expected {expected}{shown}", self.path, self.line, hint)


class _Shown(str):
    """Text to show as it is in an error message."""


def _show(value):
    if isinstance(value, _Shown):
        return str(value)
    if isinstance(value, Tagged):
        return f"{value.tag} value"
    if isinstance(value, dict):
        return "a mapping"
    if isinstance(value, list):
        return "a list"
    text = repr(value)
    return text if len(text) < 60 else text[:57] + "..."


def did_you_mean(word: object, choices: Iterable[object]) -> str | None:
    close = close_match(word, choices)
    return f"did you mean {close!r}?" if close else None


def close_match(word: object, choices: Iterable[object]) -> str | None:
    """The choice ``word`` was most likely meant to be (a typo), or None."""
    close = difflib.get_close_matches(str(word), [str(c) for c in choices], n=1, cutoff=0.6)
    return close[0] if close else None


class Type:
    description = ""

    def validate(self, value: Any, where: Where) -> Any:
        raise NotImplementedError

    def json_schema(self) -> dict[str, Any]:
        raise NotImplementedError


class Str(Type):
    def __init__(self, pattern=None, what="a string"):
        self.pattern, self.what = pattern and re.compile(pattern), what

    def validate(self, value: Any, where: Where) -> Any:
        if not isinstance(value, str) or (self.pattern and not self.pattern.fullmatch(value)):
            where.fail(self.what, value)
        return value

    def json_schema(self) -> dict[str, Any]:
        schema = {"type": "string"}
        if self.pattern:
            schema["pattern"] = f"^{self.pattern.pattern}$"
        return schema


IDENT = Str(r"[A-Za-z_][A-Za-z0-9_]*", "a Python identifier")
SLUG = Str(r"[a-z0-9]+(?:[-_][a-z0-9]+)*", "an id of lowercase letters, digits and - or _")


class Int(Type):
    def __init__(self, minimum=None):
        self.minimum = minimum

    def validate(self, value: Any, where: Where) -> Any:
        if type(value) is not int or (self.minimum is not None and value < self.minimum):
            bound = f" >= {self.minimum}" if self.minimum is not None else ""
            where.fail(f"a whole number{bound}", value)
        return value

    def json_schema(self) -> dict[str, Any]:
        schema = {"type": "integer"}
        if self.minimum is not None:
            schema["minimum"] = self.minimum
        return schema


class Number(Type):
    """A number; strings like '1e-3' count, since YAML 1.1 reads them as text."""

    def __init__(self, minimum=None):
        self.minimum = minimum

    def validate(self, value: Any, where: Where) -> Any:
        number = value
        if isinstance(value, str):
            try:
                number = float(value)
            except ValueError:
                pass
        if type(number) not in (int, float) or (
                self.minimum is not None and number < self.minimum):
            bound = f" >= {self.minimum}" if self.minimum is not None else ""
            where.fail(f"a number{bound}", value)
        return number

    def json_schema(self) -> dict[str, Any]:
        schema: dict[str, Any] = {"type": ["number", "string"]}
        if self.minimum is not None:
            schema = {"anyOf": [{"type": "number", "minimum": self.minimum},
                                {"type": "string", "pattern": r"^[0-9.eE+-]+$"}]}
        return schema


class Bool(Type):
    def validate(self, value: Any, where: Where) -> Any:
        if type(value) is not bool:
            where.fail("true or false", value)
        return value

    def json_schema(self) -> dict[str, Any]:
        return {"type": "boolean"}


class Enum(Type):
    def __init__(self, *choices):
        self.choices = choices

    def validate(self, value: Any, where: Where) -> Any:
        if value not in self.choices:
            where.fail("one of " + ", ".join(map(str, self.choices)), value,
                       did_you_mean(value, self.choices))
        return value

    def json_schema(self) -> dict[str, Any]:
        return {"enum": list(self.choices)}


class AnyValue(Type):
    """Any YAML value, including tagged inputs such as ``!array``."""

    def validate(self, value: Any, where: Where) -> Any:
        return value

    def json_schema(self) -> dict[str, Any]:
        return {}


class ListOf(Type):
    def __init__(self, item, min_items=0):
        self.item, self.min_items = item, min_items

    def validate(self, value: Any, where: Where) -> Any:
        if not isinstance(value, list) or isinstance(value, Tagged):
            where.fail("a list", value)
        if len(value) < self.min_items:
            where.fail(f"a list of at least {self.min_items} item(s)", value)
        lines = getattr(value, "item_lines", [where.line] * len(value))
        return [self.item.validate(v, where.child(i, lines[i])) for i, v in enumerate(value)]

    def json_schema(self) -> dict[str, Any]:
        return {"type": "array", "items": self.item.json_schema(), "minItems": self.min_items}


class MapOf(Type):
    def __init__(self, key, value):
        self.key, self.value = key, value

    def validate(self, value: Any, where: Where) -> Any:
        if not isinstance(value, dict):
            where.fail("a mapping", value)
        lines = getattr(value, "key_lines", {})
        out = {}
        for k, v in value.items():
            at = where.child(k, lines.get(k))
            out[self.key.validate(k, at)] = self.value.validate(v, at)
        return out

    def json_schema(self) -> dict[str, Any]:
        return {"type": "object", "additionalProperties": self.value.json_schema()}


@dataclasses.dataclass(frozen=True)
class Field:
    type: Type
    doc: str
    required: bool = False
    default: object = None


class Object(Type):
    """A mapping with known keys; unknown keys get a 'did you mean' hint."""

    def __init__(self, fields, doc="", check=None):
        self.fields, self.doc, self.check = fields, doc, check

    def validate(self, value: Any, where: Where) -> Any:
        if not isinstance(value, dict):
            where.fail("a mapping with keys " + ", ".join(self.fields), value)
        lines = getattr(value, "key_lines", {})
        line = getattr(value, "line", where.line)
        for key in value:
            if key not in self.fields:
                at = where.child(key, lines.get(key))
                raise CourseError(f"{at.key}: unknown key", where.path, at.line,
                                  did_you_mean(key, self.fields) or
                                  "allowed keys: " + ", ".join(self.fields))
        out = LocatedDict()
        out.line, out.key_lines = line, lines
        for name, field in self.fields.items():
            if name in value:
                out[name] = field.type.validate(value[name], where.child(name, lines.get(name)))
            elif field.required:
                raise CourseError(f"{where.child(name).key}: missing required key "
                                  f"({field.doc})", where.path, line)
            else:
                out[name] = field.default
        if self.check:
            self.check(out, Where(where.path, line, where.key), lines)
        return out

    def json_schema(self) -> dict[str, Any]:
        return {"type": "object", "description": self.doc, "additionalProperties": False,
                "required": [k for k, f in self.fields.items() if f.required],
                "properties": {k: {**f.type.json_schema(), "description": f.doc}
                               for k, f in self.fields.items()}}


class OneKey(Type):
    """A mapping with exactly one of several keys (a rule such as ``ratio: 8``)."""

    def __init__(self, options):
        self.options = options

    def validate(self, value: Any, where: Where) -> Any:
        if not isinstance(value, dict) or len(value) != 1:
            where.fail("a mapping with exactly one of " + ", ".join(self.options), value)
        (key, inner), = value.items()
        if key not in self.options:
            where.fail("one of " + ", ".join(self.options), key,
                       did_you_mean(key, self.options))
        at = where.child(key, getattr(value, "key_lines", {}).get(key))
        return key, self.options[key].validate(inner, at)

    def json_schema(self) -> dict[str, Any]:
        return {"oneOf": [{"type": "object", "additionalProperties": False,
                           "required": [k], "properties": {k: t.json_schema()}}
                          for k, t in self.options.items()]}


class Bilingual(Type):
    """Text in both course languages: ``{zh: ..., en: ...}``."""

    def validate(self, value: Any, where: Where) -> Any:
        if not isinstance(value, dict) or set(value) != {"zh", "en"}:
            got = value
            if isinstance(value, dict):
                got = _Shown("keys " + ", ".join(map(repr, value)))
            where.fail("a mapping with both 'zh' and 'en' text", got,
                       "in {zh: ..., en: ...} quote any text that contains a comma")
        for lang in ("zh", "en"):
            if not isinstance(value[lang], str) or not value[lang].strip():
                line = getattr(value, "key_lines", {}).get(lang)
                where.child(lang, line).fail("non-empty text", value[lang])
        return dict(value)

    def json_schema(self) -> dict[str, Any]:
        text = {"type": "string", "minLength": 1}
        return {"type": "object", "additionalProperties": False, "required": ["zh", "en"],
                "properties": {"zh": text, "en": text}}


def is_located(value: object) -> bool:
    return isinstance(value, (LocatedDict, LocatedList))
