"""Resource limits for one student process, and how to read them from text."""

import dataclasses
import re
from typing import Any

from .units import UnitError, unit_factor

# A bare number is bytes and a bare prefix is binary (512M, as ulimit reads it); every
# other unit is units.unit_factor's, so both parsers agree: KB = 1000 B, KiB = 1024 B,
# and 'Kb' (lowercase b) is refused as bits.
_SHORTHAND = {"": 1, "k": 1024, "m": 1024 ** 2, "g": 1024 ** 3}
_SIZE = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*([a-zA-Z]*)\s*$")
STUB_BYTES = 1024 ** 2   # a stub file larger than this is refused (an upload's, the quiz's)


@dataclasses.dataclass(frozen=True)
class Limits:
    """Per-call wall time, per-process CPU time, memory, output, answer and scratch caps."""

    time: float = 5.0          # seconds of wall time per call
    import_time: float = 10.0  # seconds of wall time to import the student's module
    cpu: float = 30.0          # seconds of CPU time for the whole process
    memory: int = 1024 ** 3    # bytes of address space
    output: int = 64 * 1024    # characters of printed output kept per call
    answer: int = 16 * 1024 ** 2  # bytes of encoded answer per call
    processes: int = 64        # processes (and threads) the run's children may have at once
    tmp: int = 64 * 1024 ** 2  # bytes of scratch space: bubblewrap's /tmp, and the work
                               # folder beyond one answer file

    def merged(self, **overrides: Any) -> "Limits":
        """A copy with the given fields replaced; None leaves a field alone."""
        return dataclasses.replace(self, **{k: v for k, v in overrides.items()
                                            if v is not None})


LIMIT_FIELDS = tuple(f.name for f in dataclasses.fields(Limits))
SIZE_FIELDS = ("memory", "output", "answer", "tmp")


def parse_size(text: str | int) -> int:
    """'512 MiB' -> 536870912; a bare number is bytes. ValueError if unreadable."""
    if isinstance(text, int) and not isinstance(text, bool):
        return text
    expected = f"expected a size such as 512MiB or 1GiB, got {text!r}"
    match = _SIZE.match(str(text))
    if not match:
        raise ValueError(expected)
    number, unit = match.groups()
    try:
        factor = _SHORTHAND.get(unit.lower()) or unit_factor(unit)
    except UnitError as exc:
        raise ValueError(f"{expected}: {exc}") from None
    return int(float(number) * factor)


def describe_size(n: float) -> str:
    """A short human size for messages: 1073741824 -> '1 GiB'."""
    for unit, factor in (("GiB", 1024 ** 3), ("MiB", 1024 ** 2), ("KiB", 1024)):
        if n >= factor:
            return f"{n / factor:g} {unit}"
    return f"{n} bytes"
