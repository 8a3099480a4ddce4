"""Print the README's set-up commands, one a line, for .ci/run to type as a newcomer would:
the line that makes a virtual environment (from the README's first block that makes one),
then the two lines of the block the README opens with (install and grade the Day 3 stubs;
run the tests).  Exits 1, saying why, when the README does not have them in that shape."""

import re
import sys
from pathlib import Path

README = Path(__file__).resolve().parents[1] / "README.md"
FENCE = re.compile(r"^```sh\n(.*?)^```", re.S | re.M)


def blocks(text: str) -> list[list[str]]:
    """The lines of each ```sh block, in order (comments and blank lines left out)."""
    return [[line for line in body.splitlines() if line.strip() and not line.startswith("#")]
            for body in FENCE.findall(text)]


def commands(text: str) -> list[str]:
    """[venv line, install-and-grade line, test line]; ValueError if the README lacks one."""
    found = blocks(text)
    if not found or len(found[0]) != 2:
        raise ValueError("the README must open with a ```sh block of exactly two lines")
    opening = found[0]
    if "attn-grade day3" not in opening[0] or "pytest" not in opening[1]:
        raise ValueError("the opening block's lines must grade day3, then run pytest")
    venv = next((line for block in found for line in block if "-m venv" in line), None)
    if venv is None:
        raise ValueError("no ```sh block of the README makes a virtual environment")
    return [venv, *opening]


if __name__ == "__main__":
    try:
        print("\n".join(commands(README.read_text(encoding="utf-8"))))
    except ValueError as exc:
        sys.exit(f"README.md: {exc}")
