"""What one call into student code produced: a status, a value or the reason why not.

Plain data only.  ``Status`` values are the strings the report and the
hidden-test fork have always used; ``Crash`` says why a child died, as
structured fields (never a string to parse back).  ``outcome_from_answer``
validates the fields of an answer file the child wrote.
"""

import dataclasses
import enum
from typing import Any

from .. import wire
from ..course.limits import describe_size


class Status(str, enum.Enum):
    """How a call ended.  A ``str``: compares, prints and serialises as its value."""

    OK = "ok"                       # it returned a value
    ERROR = "error"                 # the student's code raised
    MISSING = "missing"             # no such function
    UNSUPPORTED = "unsupported"     # a type the wire refuses
    TOO_LARGE = "too_large"         # the encoded answer is over the cap
    TIMEOUT = "timeout"             # over the wall-time limit
    CRASHED = "crashed"             # the child died (see Crash)
    BAD_ANSWER = "bad_answer"       # unreadable answer file, or a tampered work folder
    SKIPPED = "skipped"             # too many restarts
    MISSING_FILE = "missing_file"   # the submission lacks the module

    def __str__(self):
        return self.value

    def __format__(self, spec):
        return format(self.value, spec)


# why an answer could not be read (a BAD_ANSWER's detail), each phrased by the report in
# the student's language: the answer pipe held something else, the child answered requests
# it had not read, the work folder was tampered with, the answer was not data the wire reads
ANSWER_STREAM, REQUESTS_UNREAD, FOLDER_TAMPERED, NOT_DATA = "stream", "unread", "folder", "data"

ANSWER_STATUSES = (Status.OK, Status.ERROR, Status.MISSING, Status.UNSUPPORTED,
                   Status.TOO_LARGE)   # what a child may write in an answer file
LIMITS = ("cpu", "memory", "disk", "processes")


@dataclasses.dataclass(frozen=True)
class Crash:
    """Why a child died before answering.

    kind: "signal" (``signal``: its name, e.g. "SIGSEGV"), "limit" (``limit``:
    cpu, memory, disk or processes; ``value``: that limit in seconds, bytes or
    processes) or "exit" (``exit_code``: it exited by itself).
    """

    kind: str
    signal: str | None = None
    limit: str | None = None
    value: float | int | None = None
    exit_code: int | None = None

    def __post_init__(self):
        if self.kind not in ("signal", "limit", "exit"):
            raise ValueError(f"unknown crash kind {self.kind!r}")
        if self.kind == "limit" and self.limit not in LIMITS:
            raise ValueError(f"unknown limit {self.limit!r}")

    @classmethod
    def by_signal(cls, name: str) -> "Crash":
        return cls("signal", signal=name)

    @classmethod
    def over_limit(cls, limit: str, value: float) -> "Crash":
        return cls("limit", limit=limit, value=value)

    @classmethod
    def exited(cls, code: int) -> "Crash":
        return cls("exit", exit_code=code)

    def __str__(self):
        """A short text for logs and ``CallOutcome.detail`` ("signal:SIGSEGV", "cpu:30")."""
        if self.kind == "signal":
            return f"signal:{self.signal}"
        if self.kind == "exit":
            return f"exit:{self.exit_code}"
        if self.limit == "cpu":
            return f"cpu:{self.value:g}"
        if self.limit == "memory":
            return f"memory:{describe_size(self.value)}"
        return f"{self.limit}:{self.value}"

    def to_plain(self) -> dict[str, Any]:
        return dataclasses.asdict(self)

    @classmethod
    def from_plain(cls, data: dict[str, Any]) -> "Crash":
        fields: dict[str, Any] = {f.name: data.get(f.name) for f in dataclasses.fields(cls)}
        return cls(**fields)


@dataclasses.dataclass(frozen=True)
class CallOutcome:
    """What one call into student code produced, as plain data.

    ``status`` is a Status (a plain string is accepted and converted);
    ``crash`` is set when the status is crashed; ``detail`` is human text
    (the missing function, the refused type, a crash's ``str``, ...).
    """

    status: Status
    value: Any = None
    error: dict = dataclasses.field(default_factory=dict)
    detail: str = ""
    output: str = ""
    output_dropped: int = 0
    mutated_args: bool = False
    inputs_digest: str = ""    # the child's fingerprint of the inputs after the call
    answer_digest: str = ""    # sha256 of the answer file as the child wrote it
    crash: Crash | None = None

    def __post_init__(self):
        object.__setattr__(self, "status", Status(self.status))

    @classmethod
    def crashed(cls, crash: Crash, output: str = "") -> "CallOutcome":
        return cls(Status.CRASHED, detail=str(crash), output=output, crash=crash)

    @property
    def ok(self) -> bool:
        return self.status is Status.OK

    def to_plain(self) -> dict[str, Any]:
        """JSON-able data, the value in wire form (for a hidden-test fork's calls)."""
        return {"status": self.status.value, "value": wire.encode(self.value),
                "error": self.error, "detail": self.detail, "output": self.output,
                "output_dropped": self.output_dropped, "mutated_args": self.mutated_args,
                "crash": self.crash.to_plain() if self.crash else None}

    @classmethod
    def from_plain(cls, data: dict[str, Any]) -> "CallOutcome":
        crash = data.get("crash")
        return cls(Status(data["status"]), value=wire.decode(data["value"]),
                   error=data["error"], detail=data["detail"], output=data["output"],
                   output_dropped=data["output_dropped"], mutated_args=data["mutated_args"],
                   crash=Crash.from_plain(crash) if crash else None)


def outcome_from_answer(raw: Any, answer_digest: str = "") -> CallOutcome:
    """Validate an answer file's fields; only known fields and types pass.
    ``answer_digest``: the file's hash (see CallOutcome)."""
    if type(raw) is not dict or raw.get("status") not in ANSWER_STATUSES:
        raise wire.WireError("answer has no valid status")
    output, dropped = raw.get("output"), raw.get("output_dropped")
    output = output if type(output) is str else ""
    dropped = dropped if type(dropped) is int else 0
    status = Status(raw["status"])
    common: dict[str, Any] = {"output": output[:100_000], "output_dropped": dropped,
                              "answer_digest": answer_digest}
    if status is Status.OK:
        digest = raw.get("inputs_digest")
        return CallOutcome(status, value=wire.decode(raw.get("value"), lazy=True),
                           inputs_digest=digest if type(digest) is str else "", **common)
    if status is Status.ERROR:
        return CallOutcome(status, error=clean_error(raw.get("error")), **common)
    detail = {Status.MISSING: raw.get("function"), Status.UNSUPPORTED: raw.get("type_name"),
              Status.TOO_LARGE: raw.get("size")}[status]
    return CallOutcome(status, detail=str(detail)[:200], **common)


def clean_error(error: Any) -> dict[str, Any]:
    """The known fields of a student exception, each of its type and capped."""
    if type(error) is not dict:
        return {"type": "Exception", "message": ""}
    clean: dict[str, Any] = {}
    for key, kind, cap in (("type", str, 100), ("message", str, 2000), ("file", str, 300),
                           ("code", str, 500), ("line", int, None), ("offset", int, None)):
        value = error.get(key)
        if type(value) is kind:
            clean[key] = value[:cap] if cap and isinstance(value, str) else value
    return clean
