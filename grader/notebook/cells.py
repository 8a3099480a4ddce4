"""The saved notebook against the kernel: which cells were run but not saved, and
where in a cell a line of a graded stub file lies.

``ag.check`` grades the saved file, so a cell corrected and run but not saved is
graded in its old form; IPython keeps the sources the kernel ran (``_ih``), and a
cell whose functions were last run from code the saved notebook does not hold is
one the student has not saved. An error's ``(attention.py, line 29)`` names a file
the student never sees; it is said as the code cell and its line.
"""

import ast
import re
from collections.abc import Callable, Iterable
from typing import Any

from ..instructor import notebook_cells
from ..judge.msg import Msg
from ..report.messages import render


def unsaved(notebook: dict[str, Any], history: Iterable[str], files: set[str] | None,
            transform: Callable[[str], str] = lambda code: code) -> list[int]:
    """The code cells (numbers among code cells) whose functions or classes the kernel
    last ran from code no saved cell holds.  ``files``: the stub files graded (their
    cells and the untagged ones are looked at), None for all; ``transform``: IPython's
    input transformation, which ``_ih`` holds the sources after."""
    cells = notebook_cells.raw_code_cells(notebook)
    saved = {_same(transform(source)) for _, _, source in cells}
    ran = [(code, _defined(code)) for code in history]
    out = []
    for number, file, source in cells:
        if files is not None and file is not None and file not in files:
            continue
        names = _defined(source)
        last = next((code for code, defined in reversed(ran) if names & defined), None)
        if last is not None and _same(last) not in saved:
            out.append(number)
    return out


def _same(code: str) -> str:
    return "\n".join(line.rstrip() for line in code.strip().split("\n"))


def _defined(code: str) -> set[str]:
    """The top-level functions and classes ``code`` defines."""
    try:
        tree = ast.parse(code)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return set()
    return {node.name for node in tree.body
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))}


def cells_text(numbers: list[int], lang: str) -> str:
    """'code cell 3, code cell 7' in ``lang``."""
    sep = "、" if lang == "zh" else ", "
    return sep.join(render(Msg("notebook-code-cell", number=n), lang) for n in numbers)


SENTINEL = 987654321


def where_in_cells(text: str, notebook: dict[str, Any], files: Iterable[str],
                   lang: str) -> str:
    """``text`` with each ``(FILE, line N)`` of a graded stub file said as its code cell
    and the line there."""
    for name in files:
        pre, post = render(Msg("where", file=name, line=SENTINEL), lang).split(str(SENTINEL))
        if pre not in text:
            continue

        def said(match: re.Match[str], name: str = name) -> str:
            found = notebook_cells.cell_of_line(notebook, name, int(match.group(1)))
            if found is None:
                return match.group(0)
            cell = Msg("notebook-code-cell", number=found[0])
            return render(Msg("notebook-where", cell=cell, line=found[1]), lang)

        text = re.sub(re.escape(pre) + r"(\d+)" + re.escape(post), said, text)
    return text
