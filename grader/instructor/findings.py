"""What ``dev check`` reports: one finding a line, phrased in the user's language."""

import dataclasses
from typing import Any

from ..judge.msg import Msg
from ..report.messages import render


@dataclasses.dataclass(frozen=True)
class Finding:
    """One line of the dev check report; ``problem`` ones make it exit 1.  ``detail``:
    lines shown as they are under the message (the stand-ins' table); ``place``: the
    file and line it is about, as a compiler names them."""

    set_id: str
    exercise: str
    message: Msg
    problem: bool = True
    detail: str = ""
    place: str = ""    # "file:line" (relative to the course) of what the message is about

    def render(self, lang: str) -> str:
        where = f"{self.set_id}/{self.exercise}" if self.exercise else self.set_id
        at = f"{self.place}: " if self.place else ""
        text = f"{'✗' if self.problem else '·'} {where}: {at}{render(self.message, lang)}"
        return f"{text}\n{self.detail}" if self.detail else text

    def __str__(self) -> str:
        return self.render("en")

    def to_plain(self) -> dict[str, Any]:
        return {**dataclasses.asdict(self), "message": self.message.to_plain()}

    @classmethod
    def from_plain(cls, data: dict[str, Any]) -> "Finding":
        return cls(str(data["set_id"]), str(data["exercise"]), Msg.from_plain(data["message"]),
                   data.get("problem") is not False, str(data.get("detail") or ""),
                   str(data.get("place") or ""))
