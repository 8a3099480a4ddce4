"""The stub file an exercise hands out, read as the course wrote it."""

import ast

from .spec import Exercise


def stub_functions(exercise: Exercise) -> dict[str, ast.FunctionDef]:
    """The stub file's top-level functions by name ({} if it cannot be read)."""
    stub = exercise.spec_path.with_name(exercise.file)
    try:
        tree = ast.parse(stub.read_text(encoding="utf-8"))
    except (OSError, SyntaxError):
        return {}
    return {node.name: node for node in tree.body if isinstance(node, ast.FunctionDef)}


def first_paragraph(doc: str | None) -> str:
    """A docstring's first paragraph as one line (a sentence may run onto a second)."""
    return " ".join((doc or "").strip().split("\n\n")[0].split())


ZH_MARK = "中文："   # a bilingual docstring: the English, then this, then the Chinese


def doc_in_language(doc: str | None, lang: str) -> str:
    """A docstring's first paragraph in ``lang``: the part after ZH_MARK in Chinese; a
    docstring without one is English only ('' in Chinese)."""
    english, _, chinese = (doc or "").partition(ZH_MARK)
    return first_paragraph(chinese if lang == "zh" else english)
