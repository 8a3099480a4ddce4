"""The three YAML file kinds of a course, declared with ``schema`` types.

  exercises/SET/set.yaml            the set manifest (title, order)
  exercises/SET/EXERCISE.yaml       one exercise: text, functions, visible checks
  solutions/SET/EXERCISE.hidden.yaml  its hidden checks (never shipped to students)
"""

from typing import Any

from ..errors import CourseError
from .inputs import TAGS
from .limits import LIMIT_FIELDS, SIZE_FIELDS, parse_size
from .schema import (
    FORMAT_VERSION,
    IDENT,
    SLUG,
    AnyValue,
    Bilingual,
    Bool,
    Enum,
    Field,
    Int,
    ListOf,
    MapOf,
    Number,
    Object,
    OneKey,
    Str,
    Type,
    Where,
    did_you_mean,
)

# how the quiz reads a typed answer: an option's number, several, a number, a size
QUIZ_READINGS = ("choice", "choices", "bool", "number", "size")


class CompareKind:
    """The course side of one compare kind: its tolerance parameters, one line of
    documentation, what a failed code check of it may show by default (``reveal``:
    "answer" or "diagnosis"; an answer typed in shows a diagnosis whatever the kind)
    and how the quiz reads a typed answer of it (``quiz``: one of QUIZ_READINGS, or
    None: not asked in the quiz).

    The judge's half is the ``judge.verdict.Comparison`` subclass of that kind; the
    catalogue words its tolerance (``tol-*``) and what it wants (``want-KIND``); the
    README documents it.  ``tests/test_registries.py`` fails on any piece left out.
    """

    def __init__(self, doc: str, *, reveal: str, quiz: str | None, **params: Type) -> None:
        if reveal not in ("answer", "diagnosis") or quiz not in (*QUIZ_READINGS, None):
            raise ValueError(f"CompareKind: reveal {reveal!r}, quiz {quiz!r}")
        self.doc, self.reveal, self.quiz, self.params = doc, reveal, quiz, params


COMPARE_KINDS = {
    "number": CompareKind("a number within rtol/atol, or to sigfigs significant figures",
                          reveal="answer", quiz="number",
                          rtol=Number(0), atol=Number(0), sigfigs=Int(1)),
    "array": CompareKind("an array: same shape, then every element within rtol/atol",
                         reveal="answer", quiz=None,
                         rtol=Number(0), atol=Number(0), nan=Enum("fail", "equal")),
    "shape": CompareKind("a shape: a tuple of whole numbers", reveal="answer", quiz=None),
    "exact": CompareKind("exact equality of whole numbers, strings, bools",
                         reveal="answer", quiz="bool"),
    "choice": CompareKind("one of the listed options", reveal="diagnosis", quiz="choice",
                          options=ListOf(AnyValue(), 1)),
    "set": CompareKind("a collection compared as a set", reveal="diagnosis", quiz="choices",
                       options=ListOf(AnyValue(), 1)),
    "formula": CompareKind("a sympy formula equal to the reference for all symbol values",
                           reveal="answer", quiz=None,
                           samples=Int(1), timeout=Number(0), rtol=Number(0)),
    "bytes": CompareKind("a byte count, as an int or a string with a unit such as '512 KiB'",
                         reveal="answer", quiz="size", rtol=Number(0)),
    "dict": CompareKind("a mapping with the same keys, each value compared by 'each'",
                        reveal="answer", quiz=None),
}
COMPARE_PARAMS = {kind: k.params for kind, k in COMPARE_KINDS.items()}
COMPARE_DOC = {kind: k.doc for kind, k in COMPARE_KINDS.items()}


class CompareType(Type):
    """``compare: array`` or ``compare: {kind: array, rtol: 1e-6}``."""

    def validate(self, value: Any, where: Where) -> Any:
        from .spec import Compare

        if isinstance(value, str):
            value = {"kind": value}
        if not isinstance(value, dict) or "kind" not in value:
            where.fail("a compare kind (" + ", ".join(COMPARE_PARAMS) + ") or a mapping "
                       "with 'kind' and its tolerances", value)
        lines = getattr(value, "key_lines", {})
        kind = Enum(*COMPARE_PARAMS).validate(value["kind"], where.child("kind", lines.get("kind")))
        params = {}
        for key, raw in value.items():
            if key == "kind":
                continue
            allowed = COMPARE_PARAMS[kind]
            at = where.child(key, lines.get(key))
            if key == "each" and kind == "dict":
                params[key] = self.validate(raw, at)
            elif key in allowed:
                params[key] = allowed[key].validate(raw, at)
            else:
                raise CourseError(f"{at.key}: '{key}' does not apply to compare kind "
                                  f"'{kind}'", where.path, at.line,
                                  did_you_mean(key, allowed) or
                                  f"{kind} takes: {', '.join(allowed) or 'no parameters'}")
        if kind == "dict" and "each" not in params:
            where.fail("compare kind 'dict' to say how values compare, e.g. each: shape")
        return Compare(kind, params)

    def json_schema(self) -> dict[str, Any]:
        return {"anyOf": [{"enum": list(COMPARE_PARAMS)}, {
            "type": "object", "required": ["kind"],
            "properties": {"kind": {"enum": list(COMPARE_PARAMS),
                                    "description": "; ".join(f"{k}: {d}" for k, d in
                                                             COMPARE_DOC.items())},
                           "each": {"$ref": "#/$defs/compare"},
                           **{p: t.json_schema() for params in COMPARE_PARAMS.values()
                              for p, t in params.items()}}}]}


class LimitsType(Type):
    """``limits: {time: 2, memory: 512MiB}``."""

    def validate(self, value: Any, where: Where) -> Any:
        raw = Object({name: Field(AnyValue(), name) for name in LIMIT_FIELDS}).validate(
            value, where)
        out = {}
        for name, v in raw.items():
            if v is None:
                continue
            at = where.child(name, value.key_lines.get(name))
            if name in SIZE_FIELDS:
                try:
                    out[name] = parse_size(v)
                except ValueError as exc:
                    at.fail("a size such as 512MiB", v, str(exc))
            elif name == "processes":
                out[name] = Int(1).validate(v, at)
            else:
                out[name] = Number(0.01).validate(v, at)
        return out

    def json_schema(self) -> dict[str, Any]:
        size = {"type": ["integer", "string"]}
        return {"type": "object", "additionalProperties": False, "properties": {
            "time": {"type": "number", "description": "seconds of wall time per call"},
            "import_time": {"type": "number",
                            "description": "seconds of wall time to import the module"},
            "cpu": {"type": "number", "description": "seconds of CPU time per process"},
            "memory": size, "output": size, "answer": size,
            "processes": {"type": "integer"}}}


TAG = Str(r"[a-z0-9]+(?:-[a-z0-9]+)*", "a tag id such as no-causal-mask")
VISIBILITY = Enum("visible", "hidden")

CHECK = Object({
    "id": Field(SLUG, "unique id of the check within the exercise", required=True),
    "call": Field(IDENT, "the graded function to call (default: the exercise's only one)"),
    "args": Field(ListOf(AnyValue()), "positional arguments; input tags: " + ", ".join(TAGS),
                  default=[]),
    "kwargs": Field(MapOf(IDENT, AnyValue()), "keyword arguments; input tags: "
                    + ", ".join(TAGS), default={}),
    "compare": Field(CompareType(), "how the answer is compared", required=True),
    "visibility": Field(VISIBILITY, "visible: the student sees inputs and expected value"),
    "points": Field(Number(0), "points of this check (default: an equal share)"),
    "pick": Field(AnyValue(), "compare only item/key PICK of the answer (e.g. 0 of a tuple)"),
    "expect": Field(AnyValue(), "the expected answer (default: the reference's answer)"),
    "description": Field(Bilingual(), "what the check is about, shown with its result"),
    "twins": Field(ListOf(SLUG), "a visible check's hidden twins: the same question on "
                   "drawn inputs; the check counts once one of them passes (default: the "
                   "hidden checks of its function with the same pick)", default=[]),
    "reveal": Field(Enum("answer", "diagnosis", "nothing"),
                    "what a failure may show: the expected answer, only what is wrong, or "
                    "nothing (default: diagnosis for answers typed in and for choices, "
                    "answer for code checks)"),
}, "one graded call")

MISCONCEPTION_RULES = {
    "ratio": Number(), "equals": AnyValue(), "contains": AnyValue(), "nonfinite": Bool(),
    "transposed": Bool(), "truncated": Number(),
}

def _one_way_to_detect(out, where, lines):
    if (out["wrong"] is None) == (out["when"] is None):
        where.fail("exactly one of 'wrong' (a function) or 'when' (a rule)")


MISCONCEPTION = Object({
    "tag": Field(TAG, "stable id reported in the JSON 'tags'", required=True),
    "message": Field(Bilingual(), "what the student got wrong", required=True),
    "wrong": Field(IDENT, "a wrong function in the solution module, same signature"),
    "when": Field(OneKey(MISCONCEPTION_RULES), "a value rule: ratio (answer / expected), "
                  "equals (a value), contains (an item of a collection answer), "
                  "nonfinite (NaN or inf), transposed, truncated (decimals cut off, "
                  "not rounded: how many were asked for)"),
    "functions": Field(ListOf(IDENT), "graded functions it applies to (default: all)",
                       default=[]),
    "checks": Field(ListOf(SLUG), "check ids it applies to (default: all)", default=[]),
}, "a known wrong answer", check=_one_way_to_detect)

EXERCISE = Object({
    "format_version": Field(Enum(FORMAT_VERSION), "exercise format version", required=True),
    "id": Field(SLUG, "the exercise id; must match the file name", required=True),
    "title": Field(Bilingual(), "short title", required=True),
    "prompt": Field(Bilingual(), "the task as the student reads it", required=True),
    "file": Field(Str(r"[A-Za-z_][A-Za-z0-9_]*\.py", "a file name like attention.py"),
                  "the stub file (default: ID.py with - as _)"),
    "functions": Field(ListOf(IDENT, 1), "the graded functions in the stub", required=True),
    "points": Field(Number(0), "total points of the exercise", required=True),
    "submission_points": Field(Number(0), "written by 'attn-grade release': the exercise's "
                               "points when the work is submitted (hidden checks included)"),
    "limits": Field(LimitsType(), "resource limits for the student's code", default={}),
    "hints": Field(ListOf(Bilingual()), "hints shown when a check fails", default=[]),
    "variants": Field(ListOf(MapOf(IDENT, AnyValue()), 1),
                      "per-student numbers: a list of {name: value}; the first holds the "
                      "notes' own numbers (used without a student id); prompts show them as "
                      "${name}; the reference receives them as keyword arguments", default=[]),
    "misconceptions": Field(ListOf(MISCONCEPTION), "known wrong answers", default=[]),
    "checks": Field(ListOf(CHECK), "visible checks", default=[]),
}, "an exercise file: exercises/SET/ID.yaml")

HIDDEN = Object({
    "format_version": Field(Enum(FORMAT_VERSION), "exercise format version", required=True),
    "checks": Field(ListOf(CHECK, 1), "hidden checks", required=True),
}, "hidden checks: solutions/SET/ID.hidden.yaml")

SET = Object({
    "format_version": Field(Enum(FORMAT_VERSION), "exercise format version", required=True),
    "title": Field(Bilingual(), "title of the set", required=True),
    "order": Field(ListOf(SLUG, 1), "exercise ids in the order students meet them",
                   required=True),
    "released": Field(Bool(), "written by 'attn-grade release': a student bundle", default=False),
    "mutation_score": Field(Number(0), "the share (0 to 1) of its mutants 'attn-grade dev "
                            "mutants' must find killed; none: no threshold"),
}, "a set manifest: exercises/SET/set.yaml")


def json_schema() -> dict[str, Any]:
    """JSON Schema of an exercise file, for editors."""
    schema = EXERCISE.json_schema()
    return {"$schema": "https://json-schema.org/draft/2020-12/schema",
            "title": "attn-grade exercise", **schema,
            "$defs": {"compare": CompareType().json_schema()}}
