"""``dev check`` holds each exercise to what its YAML promises of its files: every graded
function is in the stub (taking the arguments its checks pass) and in the reference,
every wrong version is in the reference, every hidden check says in both languages what
it checks, and nothing that ``new`` wrote to be replaced is left.  A finding names the
file and line; none of this runs any code."""

import ast
import os
from collections.abc import Collection, Iterator
from pathlib import Path

from ..course.spec import LANGUAGES, Check, Exercise, ExerciseSet
from ..course.stubs import ZH_MARK, doc_in_language, stub_functions
from ..judge.msg import Msg
from .findings import Finding
from .scaffold import TODO_MARKERS

LANGUAGE_NAMES = {"zh": Msg("language-zh"), "en": Msg("language-en")}


def promises_kept(exercise_set: ExerciseSet,
                  only: Collection[str] | None = None) -> list[Finding]:
    """The findings of every exercise (of ``only``, when given) and of ``set.yaml``."""
    out: list[Finding] = []
    root = exercise_set.solutions_dir.parent.parent
    for exercise in exercise_set.exercises:
        if only is not None and exercise.id not in only:
            continue
        def found(msg: Msg, path: Path, line: int, ex_id: str = exercise.id,
                  problem: bool = True) -> None:
            out.append(Finding(exercise_set.id, ex_id, msg, problem,
                               place=_place(root, path, line)))

        _functions(exercise, found)
        _descriptions(exercise, found)
        for path in exercise.test_files:
            for node in _test_functions(path):
                if not _asserts(node):
                    found(Msg("devcheck-test-asserts-nothing", test=node.name), path,
                          node.lineno)
        for path in _files_of(exercise):
            for line, marker in _markers(path):
                found(Msg("devcheck-todo-left", marker=marker), path, line)
    for line, marker in _markers(exercise_set.exercises_dir / "set.yaml"):
        out.append(Finding(exercise_set.id, "", Msg("devcheck-todo-left", marker=marker),
                           place=_place(root, exercise_set.exercises_dir / "set.yaml", line)))
    return out


def _functions(exercise: Exercise, found) -> None:
    """Each graded function in the stub, binding every check's arguments, and in the
    reference; each wrong version in the reference."""
    stub = exercise.spec_path.with_name(exercise.file)
    stub_defs = stub_functions(exercise)
    reference = _names(exercise.solution_path)
    functions_line = _key_line(exercise.spec_path, "functions")
    for name in exercise.functions:
        if name not in stub_defs:
            found(Msg("devcheck-stub-lacks", function=name, file=stub.name),
                  exercise.spec_path, functions_line)
        if reference is not None and name not in reference:
            found(Msg("devcheck-reference-lacks", function=name,
                      file=exercise.solution_path.name), exercise.spec_path, functions_line)
    for check in exercise.checks:
        node = stub_defs.get(check.function)
        if node is not None and not _binds(node.args, check):
            found(Msg("devcheck-signature", function=check.function, check=check.id,
                      file=stub.name, line=node.lineno), check.source, check.line)
    for m in exercise.misconceptions:
        if m.wrong and reference is not None and m.wrong not in reference:
            found(Msg("devcheck-wrong-missing", wrong=m.wrong, tag=m.tag,
                      file=exercise.solution_path.name), exercise.spec_path,
                  _key_line(exercise.spec_path, "wrong", m.wrong))


def _descriptions(exercise: Exercise, found) -> None:
    """``show`` tells a student what the hidden checks check: each YAML check by its
    ``description`` in every language, each pytest test by its docstring (English, then a
    paragraph that starts with ``中文：``)."""
    checks = [c for c in exercise.checks if c.hidden]
    for check in checks:
        missing = [LANGUAGE_NAMES[lang] for lang in LANGUAGES
                   if not check.description or not (check.description.get(lang) or "").strip()]
        if missing:
            found(Msg("devcheck-no-description", check=check.id,
                      langs=Msg("devcheck-and", first=missing[0], second=missing[1])
                      if len(missing) == 2 else missing[0]), check.source, check.line)
    tests = [(path, node) for path in exercise.test_files for node in _test_functions(path)]
    for path, node in tests:
        doc = ast.get_docstring(node)
        if not doc_in_language(doc, "en"):
            found(Msg("devcheck-test-no-doc", test=node.name), path, node.lineno)
        elif not doc_in_language(doc, "zh"):
            found(Msg("devcheck-hidden-unexplained", test=node.name, lang=LANGUAGE_NAMES["zh"],
                      mark=ZH_MARK), path, node.lineno)


def _asserts(test: ast.FunctionDef) -> bool:
    """Whether a test can fail on its own: an ``assert``, or ``pytest.raises`` / ``fail``
    (a test without one passes for any function; the stand-ins pass it too)."""
    for node in ast.walk(test):
        if isinstance(node, ast.Assert):
            return True
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) \
                and node.func.attr in ("raises", "fail", "warns"):
            return True
        if isinstance(node, ast.Raise):
            return True
    return False


def _binds(args: ast.arguments, check: Check) -> bool:
    """Whether a def with ``args`` accepts the check's positional and keyword arguments."""
    positional = [a.arg for a in (*args.posonlyargs, *args.args)]
    given = len(check.args)
    if given > len(positional) and args.vararg is None:
        return False
    required = positional[:len(positional) - len(args.defaults)]
    named = set(check.kwargs)
    keywords = {a.arg for a in args.args} | {a.arg for a in args.kwonlyargs}
    if args.kwarg is None and not named <= keywords:
        return False
    if any(name not in named for name in required[given:]):
        return False
    needed = [a.arg for a, d in zip(args.kwonlyargs, args.kw_defaults) if d is None]
    return all(name in named for name in needed)


def _names(path: Path) -> set[str] | None:
    """The names a module defines at its top (defs, assignments, imports); None when it
    cannot be read (another finding says so)."""
    tree = _parse(path)
    if tree is None:
        return None
    names: set[str] = set()
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.ClassDef)):
            names.add(node.name)
        elif isinstance(node, ast.Assign):
            names |= {t.id for t in node.targets if isinstance(t, ast.Name)}
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            names |= {(a.asname or a.name).split(".")[0] for a in node.names}
    return names


def _test_functions(path: Path) -> Iterator[ast.FunctionDef]:
    tree = _parse(path)
    for node in tree.body if tree is not None else ():
        if isinstance(node, ast.FunctionDef) and node.name.startswith("test"):
            yield node
        elif isinstance(node, ast.ClassDef) and node.name.startswith("Test"):
            yield from (n for n in node.body if isinstance(n, ast.FunctionDef)
                        and n.name.startswith("test"))


def test_line(path: Path, name: str) -> int:
    """The line of the hidden test ``name``'s def in ``path``; 0 if none."""
    return next((node.lineno for node in _test_functions(path) if node.name == name), 0)


def _parse(path: Path) -> ast.Module | None:
    try:
        return ast.parse(path.read_text(encoding="utf-8"))
    except (OSError, SyntaxError, UnicodeDecodeError, ValueError):
        return None


def _files_of(exercise: Exercise) -> list[Path]:
    hidden = exercise.solution_path.with_name(f"{exercise.id}.hidden.yaml")
    return [exercise.spec_path, exercise.spec_path.with_name(exercise.file),
            exercise.solution_path, hidden]


def _markers(path: Path) -> Iterator[tuple[int, str]]:
    """(line, marker) of each TODO that ``new`` wrote still in ``path`` (YAML comments,
    which keep ``new``'s examples, aside)."""
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except (OSError, UnicodeDecodeError):
        return
    for number, line in enumerate(lines, 1):
        if path.suffix == ".yaml" and line.lstrip().startswith("#"):
            continue
        for marker in TODO_MARKERS:
            if marker in line:
                yield number, marker
                break


def _key_line(path: Path, key: str, value: str | None = None) -> int:
    """The first line of ``path`` that holds ``key:`` (and ``value``, if given); 0 if none."""
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except (OSError, UnicodeDecodeError):
        return 0
    for number, line in enumerate(lines, 1):
        if line.lstrip().startswith(f"{key}:") or f" {key}:" in line.split("#")[0]:
            if value is None or value in line:
                return number
    return 0


def _place(root: Path, path: Path, line: int) -> str:
    shown = os.path.relpath(path, root) if path.is_absolute() else str(path)
    return f"{shown}:{line}" if line else shown
