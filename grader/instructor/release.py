"""``attn-grade release SET -o DIR``: the bundle students get.

It holds the grader, the set's stubs, data files and visible checks, and no
file of solutions/. The visible checks carry their expected answers (they are
shown on failure anyway), except where the answer is one the student is meant
to work out by hand (a function without arguments, or the same value): those
checks run at submission only. Wrong versions become value rules, so the
feedback still names mistakes. In a release, ``attn-grade SET`` says that
hidden checks run when the work is submitted.
"""

import shutil
from fractions import Fraction
from pathlib import Path
from typing import Any

import numpy as np
import yaml

from ..course import yaml_source
from ..course.spec import Course, Exercise, ExerciseSet
from ..errors import CourseError
from ..grading import Warm, grade_set
from ..judge.check import pick
from ..judge.compare import same_value
from ..run.references import Reference
from ..wire import materialized, symbolic
from .uploads import stub_names

BUNDLE_FILES = ("pyproject.toml",)


def make_release(course: Course, exercise_set: ExerciseSet, out: str | Path,
                 level: str, zygote: Any = None) -> Path:
    """Write the student bundle of ``exercise_set`` into the folder ``out``.

    ``zygote``: a grade-worker's (``cli.common.caller_warm``): the two gradings' templates
    fork from it, each still in a sandbox of its own, instead of starting a Python each."""
    out = Path(out)
    if out.exists() and any(out.iterdir()):
        raise CourseError("the output folder is not empty", out, hint="choose a new folder")
    warm = Warm(zygote=zygote)   # the references, computed once for both gradings
    _refuse_answers_in_stubs(exercise_set, level, warm)
    points = _points_at_submission(exercise_set, level, warm)
    target = out / "exercises" / exercise_set.id
    shutil.copytree(exercise_set.exercises_dir, target,
                    ignore=shutil.ignore_patterns("*.yaml", "__pycache__", ".*"))
    shutil.copytree(Path(__file__).parents[1], out / "grader",
                    ignore=shutil.ignore_patterns("__pycache__"))
    for name in BUNDLE_FILES:
        shutil.copy(course.root / name, out / name)
    files = ", ".join(f"`{name}`" for name in stub_names(exercise_set.exercises))
    (out / "README.md").write_text(STUDENT_README.format(set_id=exercise_set.id, files=files),
                                   encoding="utf-8")
    manifest = yaml_source.load(exercise_set.exercises_dir / "set.yaml")
    _dump(target / "set.yaml", {**_plain(manifest), "released": True})
    for exercise in exercise_set.exercises:
        _dump(target / exercise.spec_path.name, released_exercise(exercise, points))
    return out


def _refuse_answers_in_stubs(exercise_set, level, warm):
    """A stub that passes a check would hand out its answer (an instructor's filled-in
    copy left in exercises/): refuse, naming each such check."""
    run = grade_set(exercise_set, exercise_set.exercises_dir, level, warm=warm)
    passing = [f"{c.file}: {c.check}" for e in run.exercises for c in e.checks if c.passed]
    if passing:
        raise CourseError("these stubs pass checks, so the release would ship answers: "
                          + ", ".join(passing), exercise_set.exercises_dir,
                          hint="restore the stubs (each graded function raises "
                               "NotImplementedError) and release again")


def _points_at_submission(exercise_set, level, warm):
    """Each check's points in a full grading (hidden checks included), by (exercise, check)."""
    run = grade_set(exercise_set, exercise_set.solutions_dir, level, warm=warm)
    return {(c.exercise, c.check): c.max_score for e in run.exercises for c in e.checks}


def released_exercise(exercise: Exercise,
                      points: dict[tuple[str, str], float]) -> dict[str, Any]:
    """The exercise YAML data with expected answers baked into visible checks; each
    kept check keeps the points it has at submission, so local scores are honest."""
    raw = _plain(yaml_source.load(exercise.spec_path))
    reference = Reference(exercise)
    by_hand = [reference.call(c.function, c.args, c.kwargs, c) for c in exercise.checks
               if not c.args and not c.kwargs]
    checks, rules = [], []
    for check, raw_check in zip(exercise.checks, raw.get("checks", [])):
        if (not check.args and not check.kwargs) or check.compare.kind == "formula":
            continue   # worked out by hand, or a formula: graded at submission only
        expected = materialized(check.expect if check.has_expect else reference.call(
            check.function, check.args, check.kwargs, check))
        if any(same_value(expected, answer) for answer in by_hand):
            continue
        checks.append({**raw_check, "expect": expected,
                       "points": points[(exercise.id, check.id)]})
        rules += _wrong_answer_rules(exercise, check, reference)
    kept = {c["id"] for c in checks}
    misconceptions = [_only_kept(m, kept) for m in raw.get("misconceptions", [])
                      if "wrong" not in m] + rules
    return {**raw, "checks": checks, "points": round(sum(c["points"] for c in checks), 2),
            "submission_points": exercise.points,
            "misconceptions": [m for m in misconceptions if m is not None]}


def _only_kept(misconception, kept):
    """A value rule restricted to the checks still in the release (None if none is)."""
    if "checks" not in misconception:
        return misconception
    ids = [i for i in misconception["checks"] if i in kept]
    return {**misconception, "checks": ids} if ids else None


def _wrong_answer_rules(exercise, check, reference):
    """Each wrong version's answer on ``check``, as an 'equals' rule for that check."""
    rules = []
    for m in exercise.misconceptions:
        if m.wrong and m.applies_to(check):
            value = materialized(pick(reference.call(
                m.wrong, check.args, check.kwargs, check, purpose=f"wrong version for {m.tag}"),
                check.pick))
            rules.append({"tag": m.tag, "message": {"zh": m.message.zh, "en": m.message.en},
                          "when": {"equals": value}, "checks": [check.id]})
    return rules


def _plain(value):
    """yaml_source values back to plain YAML data (tags kept as Tagged)."""
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_plain(v) for v in value]
    if isinstance(value, yaml_source.Tagged):
        return yaml_source.Tagged(value.tag, _plain(value.value), value.line)
    return value


class _Dumper(yaml.SafeDumper):
    pass


def _represent_tagged(dumper, tagged):
    value = tagged.value
    if isinstance(value, dict):
        return dumper.represent_mapping(tagged.tag, value)
    if isinstance(value, list):
        return dumper.represent_sequence(tagged.tag, value)
    return dumper.represent_scalar(tagged.tag, str(value))


def _represent_array(dumper, arr):
    return dumper.represent_mapping("!array", {"data": arr.tolist(), "dtype": str(arr.dtype)})


def _represent_other(dumper, value):
    if isinstance(value, tuple):
        return dumper.represent_sequence("!tuple", list(value))
    if isinstance(value, (set, frozenset)):
        return dumper.represent_sequence("!set", sorted(value, key=str))
    if isinstance(value, Fraction):
        return dumper.represent_scalar("!expr", f"{value.numerator}/{value.denominator}")
    if isinstance(value, np.generic):
        return dumper.represent_data(value.item())
    if symbolic(value):
        return dumper.represent_scalar("!expr", str(value))
    raise CourseError(f"cannot write {type(value).__name__} into a release")


def _represent_str(dumper, text):
    style = "|" if "\n" in text else None
    return dumper.represent_scalar("tag:yaml.org,2002:str", text, style=style)


_Dumper.add_representer(str, _represent_str)
_Dumper.add_representer(yaml_source.Tagged, _represent_tagged)
_Dumper.add_representer(np.ndarray, _represent_array)
_Dumper.add_multi_representer(object, _represent_other)


def _dump(path, data):
    text = yaml.dump(data, Dumper=_Dumper, allow_unicode=True, sort_keys=False, width=100)
    path.write_text("# Generated by attn-grade release; edit the course, not this file.\n"
                    + text, encoding="utf-8")


STUDENT_README = """\
# attn-grade: {set_id}

```sh
python3 -m pip install -e . && attn-grade {set_id}
```

Fill in the stub functions in `exercises/{set_id}/`, then run `attn-grade {set_id}`
(`--lang zh` for Chinese feedback, `--exercise ID` for one exercise). This bundle runs the
visible checks; hidden checks, and the answers you work out by hand, are graded when you
submit your files.

## What to upload

Upload your edited stub files: {files}. Either the files alone or the whole
folder you worked in (this bundle included) works: the autograder finds each file by its
name and ignores everything else (`grader/`, the `.yaml` files, `models/`). Keep one copy
of each file in what you upload; two files with the same name are not graded.
"""
