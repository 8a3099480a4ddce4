"""Stand-in submissions: ``dev check`` proves that doing nothing scores nothing.

For every graded function F of an exercise, F is replaced (in a copy of the
reference solutions, as a wrong version is) by:

  zeros     the reference's answer with zeros in it (np.zeros_like, 0, "", (),
            an empty set or list, a tuple of such items)
  constant  the answer of F's first visible check, whatever the arguments
  echo      the first argument, handed back
  lookup    the right answer for the arguments of every visible check, for
            the course's data files (each model config swapped in for a dict
            argument, its sizes for parameters named like them) and for any
            call whose numbers are all public (printed in a prompt, hint or
            check description of the set, either language, in a visible
            check's inputs or in a data file:
            ``public_numbers``), else the first answer: what a student who
            hard-codes everything they can read gets

Functions without arguments (answers typed in by hand) get only ``zeros``.
The first three must score nothing of F's checks (its YAML checks and the
hidden pytest tests that call it); ``lookup`` may keep at most a quarter of
F's points.

Speed: one submission per kind holds the stand-in of every function of every
exercise at once (each check calls one function, and a hidden test that calls
F fails with F's value checks), so a set costs four gradings; a function
whose stand-in passes all its value checks but has hidden tests is graded
again alone, so those tests are judged with the other functions right.
"""

import dataclasses
import inspect
import math
import shutil
import tempfile
from collections.abc import Collection, Iterable, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from ..course.spec import Exercise, ExerciseSet
from ..errors import CourseError
from ..grading import Warm, grade_set
from ..judge.results import ExerciseResult
from ..run.references import Reference
from ..wire import Lazy
from .public_numbers import data_files, public_numbers

KINDS = ("zeros", "constant", "echo", "lookup")
RUNTIME = "_attn_grade_standin"

# parameter names -> the config.json keys a student might read them from
MODEL_KEYS = {
    "d_model": "hidden_size", "hidden_size": "hidden_size",
    "n_heads": "num_attention_heads", "num_heads": "num_attention_heads",
    "n_kv_heads": "num_key_value_heads", "num_kv_heads": "num_key_value_heads",
    "n_layers": "num_hidden_layers", "num_layers": "num_hidden_layers",
    "head_dim": "head_dim", "d_head": "head_dim",
    "n_tokens": "max_position_embeddings", "T": "max_position_embeddings",
    "n": "max_position_embeddings", "n_cached": "max_position_embeddings",
    "context": "max_position_embeddings",
}


@dataclasses.dataclass(frozen=True)
class Score:
    """What one stand-in of one function scored."""

    set_id: str
    exercise: str
    function: str
    kind: str
    score: float
    max_score: float
    failing: str = ""   # why it could not be built, if so
    passed: tuple = ()  # the ids of the checks it scored on
    tags: tuple = ()    # the misconceptions its answers were taken for (none should be)

    @property
    def allowed(self) -> float:
        return self.max_score / 4 if self.kind == "lookup" else 0.0

    @property
    def too_high(self) -> bool:
        return not self.failing and self.score > self.allowed + 1e-9


def grade_standins(exercise_set: ExerciseSet, level: str,
                   reference_runs: dict[str, ExerciseResult],
                   only: Collection[str] | None = None,
                   warm: Warm | None = None) -> list[Score]:
    """A Score for every (function, stand-in kind) of the set's exercises.

    ``reference_runs``: {exercise id: the reference's ExerciseResult}, which
    says which hidden tests call which function.
    """
    exercises = [e for e in exercise_set.exercises if only is None or e.id in only]
    plans = {e.id: _plan(e) for e in exercises}
    uses = {e.id: _test_uses(reference_runs.get(e.id)) for e in exercises}
    scores = []
    data = data_files(exercise_set)
    for kind in KINDS:
        jobs: dict[str, list[str]] = {}
        for e in exercises:
            for f, kinds in plans[e.id].items():
                if kind not in kinds:
                    continue
                try:
                    standin_source(e, f, kind, data)
                except CourseError as exc:
                    scores.append(Score(exercise_set.id, e.id, f, kind, 0.0, 0.0,
                                        failing=exc.message))
                    continue
                jobs.setdefault(e.id, []).append(f)
        if not jobs:
            continue
        run = _grade(exercise_set, level, {ex: {f: kind for f in fs} for ex, fs in jobs.items()},
                     warm)
        for ex_id, functions in jobs.items():
            checks = run[ex_id]
            for function in functions:
                tests = uses[ex_id].get(function, set())
                yaml = [c for c in checks if c.kind == "case" and c.function == function]
                if tests and all(c.passed for c in yaml):
                    alone = _grade(exercise_set, level, {ex_id: {function: kind}}, warm)
                    checks_alone = alone[ex_id]
                else:
                    checks_alone = None
                scores.append(_score(exercise_set.id, ex_id, function, kind, yaml, tests,
                                     checks, checks_alone))
    return scores


def _score(set_id, ex_id, function, kind, yaml, tests, checks, alone):
    max_score = sum(c.max_score for c in yaml) + sum(
        c.max_score for c in checks if c.kind == "pytest" and c.check in tests)
    if alone is not None:
        scored = [c for c in alone if c.score and (
            (c.kind == "case" and c.function == function)
            or (c.kind == "pytest" and c.check in tests))]
    else:   # a failed value check fails every hidden test that calls the function
        scored = [c for c in yaml if c.score]
    got = sum(c.score for c in scored)
    own = [*yaml, *(c for c in checks if c.kind == "pytest" and c.check in tests)]
    return Score(set_id, ex_id, function, kind, round(got, 2), round(max_score, 2),
                 passed=tuple(c.check for c in scored),
                 tags=tuple(sorted({t for c in own for t in c.tags})))


def _test_uses(exercise_result):
    """{function: names of the hidden tests that call it} in the reference's run."""
    out = {}
    for c in exercise_result.checks if exercise_result is not None else ():
        if c.kind == "pytest":
            for function in c.uses:
                out.setdefault(function, set()).add(c.check)
    return out


def _plan(exercise):
    """{function: the stand-in kinds that apply}."""
    reference = Reference(exercise)
    per_student = {name for variant in exercise.variants for name in variant}
    out = {}
    for function in exercise.functions:
        func = reference.function(function)
        try:   # a variant's numbers are the reference's to take, not the student's
            params = [p for p in inspect.signature(func).parameters if p not in per_student]
        except (TypeError, ValueError):
            params = ["?"]
        out[function] = KINDS if params else ("zeros",)
    return out


def _grade(exercise_set, level, replace, warm=None):
    """Grade a submission where ``replace`` = {exercise id: {function: kind}}."""
    with tempfile.TemporaryDirectory(prefix="attn-grade-standin-") as tmp:
        folder = build_submission(exercise_set, replace, Path(tmp) / "submission")
        run = grade_set(exercise_set, folder, level, only=set(replace), warm=warm)
    return {e.exercise.id: e.checks for e in run.exercises}


# what a graded folder never needs: the YAML is read from the course, not the submission
COURSE_ONLY = shutil.ignore_patterns("*.yaml", ".attn-grade", "__pycache__")


def build_submission(exercise_set: ExerciseSet, replace: dict[str, Any],
                     folder: Path) -> Path:
    """The reference solutions, with each function of ``replace`` swapped for its stand-in."""
    shutil.copytree(exercise_set.exercises_dir, folder, ignore=COURSE_ONLY)
    for stub in exercise_set.exercises_dir.glob("*.py"):
        source = exercise_set.solutions_dir / stub.name
        if source.is_file():
            shutil.copy(source, folder / stub.name)
    shutil.copy(Path(__file__).with_name("standin_runtime.py"), folder / f"{RUNTIME}.py")
    data, known = data_files(exercise_set), public_numbers(exercise_set)
    for exercise in exercise_set.exercises:
        if exercise.id not in replace:
            continue
        module = exercise.module
        private = f"_attn_grade_reference_{module}"
        (folder / exercise.file).rename(folder / f"{private}.py")
        lines = [f"from {private} import *  # noqa", f"import {private} as _ref",
                 f"import {RUNTIME} as _rt", ""]
        for function, kind in replace[exercise.id].items():
            lines += standin_source(exercise, function, kind, data, known)
        (folder / exercise.file).write_text("\n".join(lines) + "\n", encoding="utf-8")
    return folder


def standin_source(exercise: Exercise, function: str, kind: str,
                   data: Sequence[Any] = (), known: Sequence[float] = ()) -> list[str]:
    """Source lines defining ``function`` as the ``kind`` stand-in (``data``: the set's
    data files, ``known``: its public numbers, what a lookup learns)."""
    f = function
    if kind == "zeros":
        return [f"def {f}(*a, **k):", f"    return _rt.zero_like(_ref.{f}(*a, **k))", ""]
    if kind == "echo":
        return [f"def {f}(*a, **k):", "    return _rt.echo(a, k)", ""]
    calls = _visible_calls(exercise, function)
    if kind == "constant":
        args, kwargs = calls[0]
        return [f"def {f}(*a, **k):",
                f"    return _ref.{f}(*{to_source(tuple(args))}, **{to_source(kwargs)})", ""]
    if kind == "lookup":
        table = _lookup_table(exercise, function, calls, data)
        entries = ",\n    ".join(f"({to_source(tuple(a))}, {to_source(k)})" for a, k in table)
        return [f"_TABLE_{f} = [\n    {entries},\n]", f"_KNOWN_{f} = {to_source(list(known))}",
                f"def {f}(*a, **k):",
                f"    return _rt.lookup(_ref.{f}, _TABLE_{f}, a, k, _KNOWN_{f})", ""]
    raise ValueError(kind)


def _visible_calls(exercise, function):
    """(args, kwargs) of the function's visible checks (its hidden ones if none is visible)."""
    checks = [c for c in exercise.checks if c.function == function]
    visible = [c for c in checks if not c.hidden] or checks
    if not visible:
        raise CourseError(f"{function} has no check", exercise.spec_path)
    out = []
    for c in visible:
        call = (list(c.args), dict(c.kwargs))
        if not any(_same_call(call, o) for o in out):
            out.append(call)
    return out


def _model_sizes(config):
    """A config's sizes under the parameter names a function may use."""
    sizes = dict(config)
    if "head_dim" not in sizes and "hidden_size" in sizes and sizes.get("num_attention_heads"):
        sizes["head_dim"] = sizes["hidden_size"] // sizes["num_attention_heads"]
    return {param: sizes[key] for param, key in MODEL_KEYS.items() if key in sizes}


def _lookup_table(exercise, function, calls, data):
    """The visible calls, then each with a data file or a model's sizes swapped in."""
    func = Reference(exercise).function(function)
    try:
        params = list(inspect.signature(func).parameters)
    except (TypeError, ValueError):
        params = []
    table = [(list(a), dict(k)) for a, k in calls]
    for args, kwargs in calls:
        for config in data:
            sizes = _model_sizes(config)
            dict_swapped = [config if isinstance(a, dict) else a for a in args]
            named = [sizes.get(params[i], a) if i < len(params) and not isinstance(a, dict)
                     else a for i, a in enumerate(args)]
            both = [config if isinstance(a, dict) else n for a, n in zip(args, named)]
            for candidate in (dict_swapped, named, both):
                call = (candidate, dict(kwargs))
                if not any(_same_call(call, t) for t in table) and _answers(func, call):
                    table.append(call)
    return table


def _answers(func, call):
    try:
        func(*call[0], **call[1])
        return True
    except Exception:
        return False


def _same_call(a, b):
    from .standin_runtime import same

    return same(list(a[0]), list(b[0])) and same(a[1], b[1])


def to_source(value: Any) -> str:
    """Python source that rebuilds ``value`` in the stand-in module."""
    if isinstance(value, np.ndarray):
        flat = ", ".join(_scalar(v) for v in value.ravel().tolist())
        return f"_rt.arr([{flat}], {str(value.dtype)!r}, {tuple(value.shape)!r})"
    if isinstance(value, np.generic):
        return to_source(value.item())
    if isinstance(value, (bool, int, str, type(None))):
        return repr(value)
    if isinstance(value, float):
        return _scalar(value)
    if isinstance(value, tuple):
        return "(" + "".join(to_source(v) + ", " for v in value) + ")"
    if isinstance(value, list):
        return "[" + ", ".join(map(to_source, value)) + "]"
    if isinstance(value, (set, frozenset)):
        return "{" + ", ".join(map(to_source, value)) + "}" if value else "set()"
    if isinstance(value, dict):
        return "{" + ", ".join(f"{to_source(k)}: {to_source(v)}" for k, v in value.items()) + "}"
    if type(value) is Lazy:   # a symbolic input as the set cache keeps it
        return to_source(value.value())
    if (type(value).__module__ or "").startswith("sympy"):
        import sympy

        return f"_rt.sym({sympy.srepr(value)!r})"
    raise CourseError(f"a stand-in cannot rebuild an argument of type {type(value).__name__}")


def _scalar(v):
    if isinstance(v, float):
        if math.isnan(v):
            return "float('nan')"
        if math.isinf(v):
            return "float('inf')" if v > 0 else "float('-inf')"
        return repr(v)
    if isinstance(v, complex):
        return f"complex({v.real!r}, {v.imag!r})"
    return repr(v)


def table(scores: Iterable[Score]) -> list[str]:
    """The dev check's compact table: one line per function, a column per kind."""
    rows: dict[tuple[str, str, str], dict[str, Score]] = {}
    out: list[str] = []
    for s in scores:
        rows.setdefault((s.set_id, s.exercise, s.function), {})[s.kind] = s
    width = max((len(f"{ex}.{f}") for _, ex, f in rows), default=10)
    out.append(f"  {'function':<{width}}  " + "  ".join(f"{k:>10}" for k in KINDS))
    for (_set_id, ex, f), kinds in rows.items():
        cells = []
        for kind in KINDS:
            cell = kinds.get(kind)
            if cell is None:
                cells.append(f"{'-':>10}")
                continue
            if cell.failing:
                cells.append(f"{'✗?':>10}")
                continue
            mark = "✗" if cell.too_high else " "
            cells.append(f"{mark}{cell.score:g}/{cell.max_score:g}".rjust(10))
        out.append(f"  {f'{ex}.{f}':<{width}}  " + "  ".join(cells))
    return out
