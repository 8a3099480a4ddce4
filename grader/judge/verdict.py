"""A comparison's outcome (``Verdict``) and the base of every compare kind (``Comparison``)."""

import dataclasses
from typing import Any, ClassVar

from ..course.spec import Compare
from .msg import Msg


@dataclasses.dataclass(frozen=True)
class Verdict:
    passed: bool
    reason: Msg | None = None
    tolerance: Msg | None = None
    margin: float | None = None


class NotComparable(Exception):
    """The answer is of the wrong kind; carries the diagnosis."""

    def __init__(self, msg):
        super().__init__(msg.code)
        self.msg = msg


class Comparison:
    """One compare kind on the trusted side, after pytest's ``ApproxScalar``: one object
    owns how an answer is held to the reference and how that tolerance is told.

    Defining a subclass registers it under ``kind``; its course-side half (parameters,
    reveal default, quiz reading) is ``course.formats.COMPARE_KINDS[kind]``.  Nothing
    falls back to a default: a kind without a piece fails where it is defined or in
    ``tests/test_registries.py``.

      plain      judged in the grader's own process: reads no text as a number or a
                 formula and calls no sympy (else a bounded fork judges it)
      same_tree  a formula that is the very tree of the reference passes unevaluated
    """

    kind: ClassVar[str]
    plain: ClassVar[bool]
    same_tree: ClassVar[bool]
    registry: ClassVar[dict[str, "Comparison"]] = {}

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        missing = [name for name in ("kind", "plain", "same_tree") if name not in vars(cls)]
        missing += [name for name in ("compare", "tolerance")
                    if getattr(cls, name) is getattr(Comparison, name)]
        if missing:
            raise TypeError(f"compare kind {cls.__name__} does not say {', '.join(missing)}")
        if cls.kind in Comparison.registry:
            raise TypeError(f"compare kind {cls.kind!r} is defined twice")
        Comparison.registry[cls.kind] = cls()

    def compare(self, answer: Any, expected: Any, spec: Compare) -> Verdict:
        """Pass or fail ``answer``; raise NotComparable for a wrong kind of answer."""
        raise NotImplementedError

    def tolerance(self, spec: Compare) -> Msg:
        """What passes, as a message (shown with every result of the check)."""
        raise NotImplementedError

    def judged_plain(self, spec: Compare) -> bool:
        """Whether this check is ``plain`` (a kind of kinds, such as dict, asks its items)."""
        return self.plain


def tolerances(spec: Compare) -> tuple[float, float]:
    """rtol and atol of a number or array check, with their defaults."""
    return float(spec.param("rtol", 1e-6)), float(spec.param("atol", 1e-9))


def number_tolerance(spec: Compare) -> Msg:
    """The tolerance of a number or an array: significant figures, or rtol and atol."""
    if spec.param("sigfigs"):
        return Msg("tol-sigfigs", n=spec.param("sigfigs"))
    rtol, atol = tolerances(spec)
    if not rtol:
        return Msg("tol-abs", atol=atol)
    if not atol:
        return Msg("tol-rel", rtol=rtol)
    return Msg("tol-rel-abs", rtol=rtol, atol=atol)
