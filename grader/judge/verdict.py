"""A comparison's outcome (``Verdict``) and the tolerance it was held to."""

import dataclasses

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


def tolerance_of(spec: Compare) -> Msg:
    kind = spec.kind
    if kind in ("number", "array"):
        if spec.param("sigfigs"):
            return Msg("tol-sigfigs", n=spec.param("sigfigs"))
        rtol, atol = _tolerances(spec)
        if not rtol:
            return Msg("tol-abs", atol=atol)
        if not atol:
            return Msg("tol-rel", rtol=rtol)
        return Msg("tol-rel-abs", rtol=rtol, atol=atol)
    if kind == "formula":
        return Msg("tol-formula")
    if kind == "bytes":
        rtol = spec.param("rtol", 0)
        return Msg("tol-bytes-rel", rtol=rtol) if rtol else Msg("tol-bytes-exact")
    if kind == "set":
        return Msg("tol-set")
    return Msg("tol-exact")


def _tolerances(spec):
    return float(spec.param("rtol", 1e-6)), float(spec.param("atol", 1e-9))
