"""Course files on disk -> frozen spec objects, strictly.

Every problem is a CourseError naming the file, the line and what was
expected.  Layout (paths mirror each other, as in rustlings):

  exercises/SET/set.yaml, exercises/SET/ID.yaml, exercises/SET/FILE.py (stub)
  solutions/SET/FILE.py (reference), solutions/SET/ID.hidden.yaml,
  solutions/SET/test_MODULE.py (hidden pytest checks for FILE.py)
"""

from collections.abc import Collection
from pathlib import Path

from ..errors import CourseError
from . import cache, formats, inputs, yaml_source
from .limits import Limits
from .schema import Where, close_match, did_you_mean
from .spec import Check, Course, Exercise, ExerciseSet, Misconception, Rule, Text

HIDDEN_SUFFIX = ".hidden.yaml"


def find_course(start: str | Path | None = None) -> Course:
    """The folder holding exercises/*/set.yaml: ``start`` or one of its parents."""
    here = Path(start or Path.cwd()).resolve()
    for folder in (here, *here.parents):
        if any((folder / "exercises").glob("*/set.yaml")):
            return Course(folder)
    raise CourseError(f"no course found in {here} or its parents (looked for "
                      "exercises/*/set.yaml)", hint="run inside the course folder or "
                      "pass --course DIR",
                      msg=("no-course", {"folder": str(here), "option": "--course DIR",
                                         "pattern": "exercises/*/set.yaml"}))


def load_set(course: Course, set_id: str, seed_offset: int = 0,
             only: Collection[str] | None = None) -> ExerciseSet:
    """Load one exercise set with its exercises (all, or those in ``only``) and
    their hidden checks; from the on-disk cache when no file changed."""
    ex_dir = course.exercises_dir / set_id
    if not (ex_dir / "set.yaml").is_file():
        raise CourseError(f"no exercise set {set_id!r}", hint=did_you_mean(
            set_id, course.set_ids()) or "sets: " + ", ".join(course.set_ids()),
            msg=("no-set", {"set": set_id, "hint": _hint(set_id, course.set_ids())}))
    exercise_set, known = cache.cached(
        course.root, set_id, seed_offset,
        lambda wanted: _parse_set(course, set_id, seed_offset, wanted), only)
    check_ids(set_id, known, only or ())
    return exercise_set


def check_ids(set_id: str, known: Collection[str], wanted: Collection[str]) -> None:
    """CourseError naming the first of ``wanted`` that is not an exercise of the set."""
    for ex_id in wanted:
        if ex_id not in known:
            raise CourseError(f"no exercise {ex_id!r} in set {set_id!r}",
                              hint=did_you_mean(ex_id, known) or "exercises: " + ", ".join(known),
                              msg=("no-exercise", {"exercise": ex_id, "set": set_id,
                                                   "hint": _hint(ex_id, known)}))


def _hint(word: str, known: Collection[str]) -> tuple[str, dict[str, str]]:
    """What to type instead of ``word``, as a message: the near name, else them all."""
    close = close_match(word, known)
    return ("did-you-mean", {"name": close}) if close else \
        ("names-are", {"names": ", ".join(known)})


def _parse_set(course, set_id, seed_offset, only=None):
    """(the set with all its exercises, or only those in ``only``, the ids of all): a cold
    run of one exercise reads its own YAML files, not every file of the set."""
    ex_dir = course.exercises_dir / set_id
    manifest_path = ex_dir / "set.yaml"
    manifest = _validated(manifest_path, formats.SET)
    _check_order(manifest_path, manifest, ex_dir)
    sol_dir = course.solutions_dir / set_id
    exercises = tuple(_load_exercise(ex_dir / f"{ex_id}.yaml", set_id, sol_dir, seed_offset)
                      for ex_id in manifest["order"] if only is None or ex_id in only)
    score = manifest["mutation_score"]
    if score is not None and score > 1:
        Where(manifest_path, _line(manifest_path, "mutation_score") or 1).child(
            "mutation_score").fail("a share from 0 to 1", score)
    return ExerciseSet(set_id, Text(**manifest["title"]), exercises, ex_dir, sol_dir,
                       manifest["released"], score), list(manifest["order"])


def _validated(path, schema):
    data = yaml_source.load(path)
    return schema.validate(data, Where(path, getattr(data, "line", 1)))


def _check_order(path, manifest, ex_dir):
    listed = manifest["order"]
    present = {p.name[:-5] for p in ex_dir.glob("*.yaml") if p.name != "set.yaml"}
    for i, ex_id in enumerate(listed):
        if listed.index(ex_id) != i:
            raise CourseError(f"order: {ex_id!r} is listed twice", path,
                              _line(path, "order", i))
        if ex_id not in present:
            raise CourseError(f"order: no file {ex_id}.yaml for exercise {ex_id!r}", path,
                              _line(path, "order", i), hint=did_you_mean(ex_id, present))
    for stray in sorted(present - set(listed)):
        raise CourseError(f"{stray}.yaml is not listed in order", path, _line(path, "order"),
                          hint="add it to 'order' or remove the file")


def _line(path, key, index=None):
    """The line of ``key`` (of its item ``index``) in the YAML file ``path``, for an error
    found after validation (read again: errors are rare)."""
    data = yaml_source.load(path)
    value = data.get(key) if isinstance(data, dict) else None
    lines = getattr(value, "item_lines", None)
    if index is not None and lines and index < len(lines):
        return lines[index]
    return getattr(data, "key_lines", {}).get(key)


def _load_exercise(path, set_id, sol_dir, seed_offset):
    raw = _validated(path, formats.EXERCISE)
    if raw["id"] != path.stem:
        Where(path, _line(path, "id")).child("id").fail(
            f"the id {path.stem!r} (the file name)", raw["id"])
    file = raw["file"] or raw["id"].replace("-", "_") + ".py"
    if not (path.parent / file).is_file():
        raise CourseError(f"the stub {file} is missing from {path.parent}", path,
                          hint="create the stub file or fix 'file'")
    functions = tuple(raw["functions"])
    # a seed offset draws the hidden checks' inputs only (see draws): what a student is
    # shown, visible checks and their own numbers, is the same in every draw
    checks = [_check(c, functions, "visible", path, 0) for c in raw["checks"]]
    hidden_path = sol_dir / (raw["id"] + HIDDEN_SUFFIX)
    if hidden_path.is_file():
        hidden = _validated(hidden_path, formats.HIDDEN)
        checks += [_check(c, functions, "hidden", hidden_path, seed_offset)
                   for c in hidden["checks"]]
    _unique_ids(checks)
    _check_twins(checks)
    misconceptions = tuple(_misconception(m, functions, checks, path)
                           for m in raw["misconceptions"])
    module = Path(file).stem
    tests = tuple(p for p in [sol_dir / f"test_{module}.py"] if p.is_file())
    return Exercise(
        id=raw["id"], set_id=set_id, title=Text(**raw["title"]), prompt=Text(**raw["prompt"]),
        file=file, functions=functions, points=float(raw["points"]),
        limits=Limits().merged(**raw["limits"]),
        hints=tuple(Text(**h) for h in raw["hints"]), misconceptions=misconceptions,
        checks=tuple(checks), spec_path=path, solution_path=sol_dir / file, test_files=tests,
        submission_points=raw.get("submission_points"),
        variants=tuple(inputs.build(v, path) for v in raw["variants"]),
        seed=seed_offset)


def _check(raw, functions, default_visibility, path, seed_offset):
    line = raw.line
    where = Where(path, line, f"check {raw['id']!r}")
    function = raw["call"]
    if function is None:
        if len(functions) != 1:
            where.fail("'call': the exercise grades several functions ("
                       + ", ".join(functions) + ")")
        function = functions[0]
    elif function not in functions:
        where.fail("'call' to name one of the exercise's functions (" + ", ".join(functions)
                   + ")", function, did_you_mean(function, functions))
    visibility = raw["visibility"] or default_visibility
    if default_visibility == "hidden" and visibility != "hidden":
        where.fail("hidden checks only in a .hidden.yaml file", visibility,
                   "move the check to the exercise file under exercises/")
    return Check(
        id=raw["id"], function=function, args=tuple(inputs.build(raw["args"], path, seed_offset)),
        kwargs=inputs.build(raw["kwargs"], path, seed_offset), compare=raw["compare"],
        visibility=visibility, points=raw["points"], pick=raw["pick"],
        expect=inputs.build(raw["expect"], path, seed_offset),
        has_expect=raw["expect"] is not None,
        description=Text(**raw["description"]) if raw["description"] else None,
        source=path, line=line, reveal=raw["reveal"] or _default_reveal(raw),
        twins=tuple(raw["twins"]))


def _default_reveal(raw):
    """Answers typed in must be worked out: a failure names no answer; a code check
    shows what its compare kind allows (a choice's or a set's failure names none)."""
    typed_in = not raw["args"] and not raw["kwargs"]
    return "diagnosis" if typed_in else formats.COMPARE_KINDS[raw["compare"].kind].reveal


def _check_twins(checks):
    """Each twin a visible check names is a hidden check of the same function."""
    hidden = {c.id: c for c in checks if c.hidden}
    for check in checks:
        if check.twins and check.hidden:
            Where(check.source, check.line, f"check {check.id!r}").child("twins").fail(
                "twins on a visible check only (the hidden checks are the twins)")
        for twin in check.twins:
            if twin not in hidden or hidden[twin].function != check.function:
                Where(check.source, check.line, f"check {check.id!r}").child("twins").fail(
                    f"ids of hidden checks of {check.function}", twin,
                    did_you_mean(twin, [h.id for h in hidden.values()
                                        if h.function == check.function]))


def _unique_ids(checks):
    seen = {}
    for check in checks:
        if check.id in seen:
            raise CourseError(f"duplicate check id {check.id!r} (also in {seen[check.id]})",
                              check.source, check.line)
        seen[check.id] = f"{check.source.name}:{check.line}"


def _misconception(raw, functions, checks, path):
    where = Where(path, raw.line, f"misconception {raw['tag']!r}")
    for name in raw["functions"]:
        if name not in functions:
            where.fail("functions: names of graded functions", name,
                       did_you_mean(name, functions))
    ids = {c.id for c in checks}
    for check_id in raw["checks"]:
        if check_id not in ids:
            where.fail("checks: ids of this exercise's checks", check_id,
                       did_you_mean(check_id, ids))
    rule = Rule(*raw["when"]) if raw["when"] else None
    if rule and rule.kind == "equals":
        rule = Rule("equals", inputs.build(rule.value, path))
    return Misconception(tag=raw["tag"], message=Text(**raw["message"]), wrong=raw["wrong"],
                         rule=rule, functions=tuple(raw["functions"]),
                         checks=tuple(raw["checks"]))
