"""What ``dev check`` reports: one finding a line."""

import dataclasses


@dataclasses.dataclass(frozen=True)
class Finding:
    """One line of the dev check report; ``problem`` ones make it exit 1."""

    set_id: str
    exercise: str
    message: str
    problem: bool = True

    def __str__(self):
        where = f"{self.set_id}/{self.exercise}" if self.exercise else self.set_id
        return f"{'✗' if self.problem else '·'} {where}: {self.message}"
