"""A notebook's code cells as stub files: the one path ``ag.check()``, ``--submission
work.ipynb``, ``--upload`` and grade-all share.

Pure: reads the notebook as JSON (no nbformat needed), writes nothing but the
folder it is given. Each stub file is the concatenation, in notebook order, of
the code cells that belong to it (a cell tagged ``attn_grade.file`` with that
name, taken whole) and of the definitions in every untagged code cell: its
imports, functions, classes and constants (``NAME = literal``), so a helper
written anywhere comes along, while a scratch line (``out, w = attention(Q, Q, Q)``,
a print) runs only in the kernel and never costs another exercise its marks; an
untagged cell that does not parse is left out. Lines that only make sense in a
kernel are blanked, keeping line numbers: the ``ag.`` lines and the ``from grader
import notebook`` import, IPython magics (``%``, ``%%`` cells) and shell lines
(``!``). Cells are numbered among code cells, as "code cell N".
"""

import ast
import errno
import json
import re
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from ..files import NotRegular, TooLarge, read_bounded
from ..judge.msg import Msg
from .uploads import MAX_FILE_BYTES, SubmissionError, _copy_data, find_stub_files
from .uploads import collect as collect_files

# column-0 lines dropped from the graded code (replaced by empty lines)
KERNEL_ONLY = re.compile(r"^(ag\.|from\s+grader\b|import\s+grader\b|%|!)")
META_KEY = "attn_grade"


class NotebookError(SubmissionError):
    """A notebook that cannot be graded; ``cell``: the one whose code does not parse."""

    def __init__(self, msg: Msg, cell: int | None = None):
        super().__init__(msg)
        self.cell = cell


MAX_NOTEBOOK_BYTES = 8 * MAX_FILE_BYTES   # outputs (plots) make notebooks larger than code


def read(path: str | Path) -> dict[str, Any]:
    """The notebook at ``path`` as a dict: refused by its size before it is read, read
    through no link, and checked for the shape of every cell (``_cell_problem``)."""
    name = Path(path).name
    try:
        data = read_bounded(path, MAX_NOTEBOOK_BYTES)
    except TooLarge:
        raise NotebookError(Msg("upload-too-large", name=name,
                                limit=MAX_NOTEBOOK_BYTES // 1024)) from None
    except NotRegular:
        raise NotebookError(Msg("upload-not-regular", name=name)) from None
    except OSError as exc:
        raise NotebookError(Msg("upload-unreadable", name=name,
                                code=errno.errorcode.get(exc.errno or 0, "?"))) from None
    try:
        notebook = json.loads(data.decode("utf-8"))
    except (UnicodeDecodeError, ValueError, RecursionError):   # RecursionError: [[[[...
        raise NotebookError(Msg("notebook-not-json", name=name)) from None
    if not isinstance(notebook, dict) or not isinstance(notebook.get("cells"), list):
        raise NotebookError(Msg("notebook-no-cells", name=name))
    for number, cell in enumerate(notebook["cells"], 1):
        if not _cell_is_well_formed(cell):
            raise NotebookError(Msg("notebook-bad-cell", name=name, cell=number))
    return notebook


def _cell_is_well_formed(cell: Any) -> bool:
    """A cell as nbformat writes it, in what this module reads: a dict with a string
    ``cell_type``, ``source`` a string or a list of strings, ``metadata`` a dict whose
    ``attn_grade`` entry, if any, is a dict naming its ``file`` with a string."""
    if not isinstance(cell, dict) or not isinstance(cell.get("cell_type"), str):
        return False
    source = cell.get("source", "")
    if not (isinstance(source, str) or (isinstance(source, list)
                                        and all(isinstance(line, str) for line in source))):
        return False
    meta = cell.get("metadata", {})
    if not isinstance(meta, dict):
        return False
    tag = meta.get(META_KEY, {})
    return isinstance(tag, dict) and isinstance(tag.get("file", ""), str)


def _source(cell):
    source = cell.get("source", "")
    return "".join(source) if isinstance(source, list) else source


def raw_code_cells(notebook: dict[str, Any]) -> list[tuple[int, str | None, str]]:
    """(code cell number, tagged file or None, source as typed) of each code cell;
    numbered from 1 among the code cells, top to bottom."""
    cells = [c for c in notebook["cells"] if isinstance(c, dict)
             and c.get("cell_type") == "code"]
    return [(number, cell.get("metadata", {}).get(META_KEY, {}).get("file"),  # checked by read
             _source(cell)) for number, cell in enumerate(cells, 1)]


def code_cells(notebook: dict[str, Any]) -> list[tuple[int, str | None, str]]:
    """(code cell number, tagged file or None, graded code) of each code cell but
    ``%%`` cells; kernel-only lines blanked."""
    return [(number, file, "\n".join("" if KERNEL_ONLY.match(line) else line
                                     for line in text.split("\n")))
            for number, file, text in raw_code_cells(notebook)
            if not text.lstrip().startswith("%%")]


def check_syntax(cells: Iterable[tuple[int, str | None, str]]) -> None:
    """Raise NotebookError naming the first cell (and its line) whose code does not parse."""
    for number, _, code in cells:
        try:
            ast.parse(code)
        except SyntaxError as exc:
            raise NotebookError(Msg("notebook-bad-code", cell=number, line=exc.lineno,
                                    error=(exc.text or "").rstrip() or exc.msg),
                                number) from None


DEFINITIONS = (ast.Import, ast.ImportFrom, ast.FunctionDef, ast.AsyncFunctionDef,
               ast.ClassDef)


def definitions_only(code: str) -> str:
    """An untagged cell's imports, functions, classes and constants, every other line
    blanked (line numbers kept); "" if the cell does not parse (nor did it run)."""
    try:
        tree = ast.parse(code)
    except SyntaxError:
        return ""
    keep: set[int] = set()
    drop: set[int] = set()
    for node in tree.body:
        first = min([node.lineno, *(d.lineno for d in getattr(node, "decorator_list", []))])
        lines = set(range(first, (node.end_lineno or node.lineno) + 1))
        (keep if _is_definition(node) else drop).update(lines)
    return "\n".join(line if number in keep - drop else ""
                     for number, line in enumerate(code.split("\n"), 1))


def _is_definition(node: ast.stmt) -> bool:
    if isinstance(node, DEFINITIONS):
        return True
    if isinstance(node, (ast.Assign, ast.AnnAssign)) and node.value is not None:
        try:
            ast.literal_eval(node.value)
        except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
            return False
        return True
    return False


def _parts(notebook: dict[str, Any], name: str) -> list[tuple[int, str]]:
    """(code cell number, code) of what goes into the stub file ``name``."""
    return [(number, code if file == name else definitions_only(code))
            for number, file, code in code_cells(notebook) if file in (None, name)]


def _joined(parts: list[tuple[int, str]]) -> str:
    return "\n".join(f"# cell {number}\n{code}\n" for number, code in parts)


def stub_sources(notebook: dict[str, Any], names: Iterable[str]) -> dict[str, str]:
    """{stub file name: graded code} for each of ``names``: its own cells and the untagged
    ones' definitions, in notebook order. Raises NotebookError if a tagged code cell
    does not parse."""
    check_syntax(cell for cell in code_cells(notebook) if cell[1] is not None)
    return {name: _joined(_parts(notebook, name)) for name in names}


def cell_of_line(notebook: dict[str, Any], name: str, line: int) -> tuple[int, int] | None:
    """(code cell number, line in that cell) of line ``line`` of the stub file ``name``
    as ``stub_sources`` writes it; None for a line of no cell (a header)."""
    start = 1
    for number, code in _parts(notebook, name):
        count = code.count("\n") + 1
        if start < line <= start + count:
            return number, line - start
        start += count + 2   # the header, the code, its newline and the join's
    return None


def write_submission(notebook_path: str | Path, names: Iterable[str], into: Path,
                     data_from: Path | None = None) -> list[str]:
    """Write the stub files of the notebook at ``notebook_path`` into the new folder
    ``into`` (with the course's data files of ``data_from``, as ``uploads.collect``);
    the names written."""
    sources = stub_sources(read(notebook_path), names)
    into = Path(into)
    into.mkdir(mode=0o755)
    into.chmod(0o755)
    if data_from is not None:
        _copy_data(Path(data_from), into)
    for name, text in sources.items():
        (into / name).write_text(text, encoding="utf-8")
        (into / name).chmod(0o644)
    return sorted(sources)


def find_notebook(folder: str | Path) -> Path | None:
    """The one .ipynb in ``folder`` or below (checkpoints and hidden folders skipped);
    None if there is none; SubmissionError if there are several."""
    found = sorted(p for p in Path(folder).rglob("*.ipynb")
                   if p.is_file() and not p.is_symlink()
                   and not any(part.startswith(".") for part in
                               p.relative_to(folder).parts))
    if len(found) > 1:
        raise SubmissionError(Msg("upload-several-notebooks", names=", ".join(
            str(p.relative_to(folder)) for p in found[:5])))
    return found[0] if found else None


def collect(upload: str | Path, names: Iterable[str], into: Path,
            data_from: Path | None = None) -> list[str]:
    """``uploads.collect``, where the upload may also be a notebook: a .ipynb file, or
    a folder holding no stub file but one notebook."""
    upload, names = Path(upload), tuple(names)
    if upload.is_file() and upload.name.lower().endswith(".ipynb"):
        return write_submission(upload, names, into, data_from)
    if upload.is_dir() and not find_stub_files(upload, names):
        notebook = find_notebook(upload)
        if notebook is not None:
            return write_submission(notebook, names, into, data_from)
    return collect_files(upload, names, into, data_from)
