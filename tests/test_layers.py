"""The package's stages import only downwards, and nothing imports in a circle.

Every import is read, including those inside functions (a lazy import is
still a dependency).  Stages, lowest first: the base modules, course, run,
judge, grading, report, instructor, the CLI, and the light entry point on top.
"""

import ast
import functools
import subprocess
import sys
from pathlib import Path

import pytest

GRADER = Path(__file__).resolve().parents[1] / "grader"
STAGES = {   # first part of the module's path inside grader/ -> stage
    "errors": 0, "files": 0, "wire": 0, "__init__": 0,
    "course": 1, "run": 2, "judge": 3, "grading": 4, "quiz": 4, "report": 5, "instructor": 6,
    "watch": 7, "cli": 7, "notebook": 7, "entry": 8, "__main__": 8,
}


def module_name(path):
    parts = list(path.relative_to(GRADER.parent).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def stage(module):
    parts = module.split(".")[1:] or ["__init__"]
    if parts[0] not in STAGES:
        raise AssertionError(f"{module}: not in a known stage; add it to STAGES")
    return STAGES[parts[0]]


def imports(path):
    """The grader modules ``path`` imports, anywhere in the file."""
    name = module_name(path)
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found |= {a.name for a in node.names if a.name.split(".")[0] == "grader"}
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")
                anchor = anchor[:len(anchor) - node.level + 1]
                base = ".".join([*anchor, base] if base else anchor)
            if base.split(".")[0] != "grader":
                continue
            for alias in node.names:
                candidate = f"{base}.{alias.name}"
                found.add(candidate if _is_module(candidate) else base)
    return found - {name}


def _is_module(name):
    rel = Path(*name.split(".")[1:])
    return (GRADER / rel).with_suffix(".py").is_file() or (GRADER / rel / "__init__.py").is_file()


def graph():
    return _graph(GRADER)


@functools.cache   # read once for the several rules below (GRADER: a test's fake too)
def _graph(root):
    return {module_name(p): imports(p) for p in root.rglob("*.py")
            if "__pycache__" not in p.parts}


# the sandbox's side runs inside the sandbox, copied whole beside a copy of wire only
INSIDE = GRADER / "run" / "inside"
CHILD_RUNTIME = {module_name(p) for p in INSIDE.glob("*.py")}


def test_every_import_runs_downwards():
    upward = [(m, d) for m, deps in graph().items() for d in deps
              if m not in CHILD_RUNTIME and stage(d) > stage(m)]
    assert not upward, "imports that run upward:\n" + "\n".join(f"  {m} -> {d}"
                                                             for m, d in sorted(upward))


def test_no_import_circle():
    edges = graph()
    state, cycles = {}, []

    def visit(module, trail):
        state[module] = "open"
        for dep in sorted(edges.get(module, ())):
            if state.get(dep) == "open":
                cycles.append(trail[trail.index(dep):] + [dep] if dep in trail else [module, dep])
            elif dep not in state:
                visit(dep, trail + [dep])
        state[module] = "done"

    for module in sorted(edges):
        if module not in state:
            visit(module, [module])
    assert not cycles, "import circles:\n" + "\n".join(" -> ".join(c) for c in cycles)


# what the judge and the report may take from the stages below them: data and the
# reference solutions, never a student's process (grading owns those) or the judging
# (run.processes: the primitives its own bounded forks use, no student's process)
JUDGE_MAY_USE_FROM_RUN = {"grader.run.outcome", "grader.run.references", "grader.run.processes"}
REPORT_MAY_USE = {"grader.judge.msg", "grader.judge.results", "grader.judge.points"}


def _imports_of(prefix):
    return [(m, d) for m, deps in graph().items() if m.startswith(prefix) for d in deps]


def test_the_judge_starts_no_student_process():
    """The judge compares answers; the hidden tests reach the student's processes only
    through the ``StudentCalls`` the grading hands them."""
    wrong = [(m, d) for m, d in _imports_of("grader.judge")
             if d.startswith("grader.run") and d not in JUDGE_MAY_USE_FROM_RUN]
    assert not wrong, "the judge imports the run stage:\n" + "\n".join(
        f"  {m} -> {d}" for m, d in sorted(wrong))


def test_the_report_runs_and_judges_nothing():
    """A renderer phrases results it is given: it starts no process, calls no reference
    solution and judges no answer (the quiz asks and judges in ``grader.quiz``)."""
    wrong = [(m, d) for m, d in _imports_of("grader.report")
             if (d.startswith(("grader.run", "grader.judge", "grader.grading"))
                 and d not in REPORT_MAY_USE)]
    assert not wrong, "the report runs or judges:\n" + "\n".join(
        f"  {m} -> {d}" for m, d in sorted(wrong))


def test_the_layer_rules_see_a_break(monkeypatch):
    fake = {"grader.judge.x": {"grader.run.student"}, "grader.report.y": {"grader.judge.check"}}
    monkeypatch.setattr(__import__(__name__), "graph", lambda: fake)
    with pytest.raises(AssertionError, match="grader.judge.x -> grader.run.student"):
        test_the_judge_starts_no_student_process()
    with pytest.raises(AssertionError, match="grader.report.y -> grader.judge.check"):
        test_the_report_runs_and_judges_nothing()


def test_the_stages_are_folders():
    folders = {p.name for p in GRADER.iterdir() if p.is_dir() and p.name != "__pycache__"}
    assert {"course", "run", "judge", "report", "instructor"} <= folders


def test_the_checker_sees_an_upward_import(tmp_path, monkeypatch):
    fake = tmp_path / "grader"
    (fake / "course").mkdir(parents=True)
    (fake / "report").mkdir()
    for init in (fake / "__init__.py", fake / "course" / "__init__.py",
                 fake / "report" / "__init__.py"):
        init.write_text("")
    (fake / "report" / "text.py").write_text("X = 1\n")
    (fake / "course" / "spec.py").write_text("def f():\n    from ..report import text\n")
    monkeypatch.setattr(__import__(__name__), "GRADER", fake)
    with pytest.raises(AssertionError, match="grader.course.spec -> grader.report.text"):
        test_every_import_runs_downwards()


def test_the_sandbox_side_imports_only_its_siblings_and_the_standard_library():
    """Every file of ``run/inside`` (copied whole into the sandbox, where no grader is)
    imports its siblings (relatively), names of its ``__init__`` and the standard
    library; the wire module only by the copy's name, at run time."""
    siblings = {p.stem for p in INSIDE.glob("*.py")}
    package_names = {t.id for node in ast.parse((INSIDE / "__init__.py").read_text()).body
                     if isinstance(node, ast.Assign) for t in node.targets
                     if isinstance(t, ast.Name)}
    wrong = []
    for path in sorted(INSIDE.glob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                wrong += [(path.name, a.name) for a in node.names
                          if a.name.split(".")[0] not in sys.stdlib_module_names]
            elif isinstance(node, ast.ImportFrom) and node.level == 0:
                if (node.module or "").split(".")[0] not in sys.stdlib_module_names:
                    wrong.append((path.name, node.module))
            elif isinstance(node, ast.ImportFrom):
                names = [node.module] if node.module else [a.name for a in node.names]
                if node.level != 1 or not all(
                        n.split(".")[0] in siblings or (not node.module and n in package_names)
                        for n in names):
                    wrong.append((path.name, "." * node.level + (node.module or ",".join(names))))
    assert siblings >= {"__init__", "__main__", "confine", "calls", "forks", "zygote"}
    assert not wrong, "the sandbox's side imports beyond itself:\n" + "\n".join(
        f"  {f}: {m}" for f, m in wrong)


def test_the_copied_sandbox_side_imports_without_the_grader(tmp_path):
    """The copy a run gets imports (every module) in a Python that cannot see the
    grader, with nothing beside it but the wire module's copy."""
    from grader.run import bubblewrap, sandbox

    made = bubblewrap.copy_runtime(tmp_path)
    package = tmp_path / bubblewrap.CHILD
    assert sorted(p.name for p in package.iterdir()) == sorted(
        p.name for p in INSIDE.glob("*.py"))
    assert set(made) == {package, *package.iterdir(), tmp_path / bubblewrap.WIRE_COPY}
    names = ", ".join(f"{bubblewrap.CHILD}.{p.stem}" for p in INSIDE.glob("*.py")
                      if p.stem != "__main__")
    # as the sandbox's Python has them: no site, the libraries' folders (numpy for wire)
    paths = [str(tmp_path), *sandbox.library_paths()]
    code = (f"import sys; sys.path[:] = [p for p in sys.path if p] + {paths!r}; "
            f"import {names}, _attn_grade_wire; "
            "assert not [m for m in sys.modules if m.split('.')[0] == 'grader'], 'grader'")
    done = subprocess.run([sys.executable, "-I", "-S", "-c", code], cwd=tmp_path,
                          capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
