"""``attn-grade new SET ID``: the three files of a new exercise, ready to fill in.

The YAML is valid from the start; the stub and the reference raise
NotImplementedError, so ``dev check`` fails until the reference is written.
"""

import re
from pathlib import Path

import yaml

from ..course import yaml_source
from ..course.spec import Course
from ..errors import CourseError

YAML = """\
# Exercise {id}. Fill in every TODO, then run:
#   attn-grade dev check {set_id} --exercise {id}
# Reference of every key: README.md, "Exercise YAML reference"; JSON Schema: attn-grade schema
format_version: 1
id: {id}
title:
  zh: TODO 中文标题
  en: TODO English title
prompt:
  zh: |
    TODO 用中文写出任务：要实现什么函数，输入和输出是什么。
  en: |
    TODO State the task: which function to write, what goes in and what comes out.
functions: [{function}]      # the graded functions of the stub
points: 2                    # the exercise's total, shared by its checks
hints:
  - zh: TODO 提示
    en: TODO hint
misconceptions: []
#  - tag: my-mistake          # a stable id, reported in the JSON 'tags'
#    message: {{zh: TODO, en: TODO}}
#    wrong: {function}_wrong  # a wrong version in solutions/{set_id}/{file}
checks:
  - id: example
    args: [3]                # input tags (README): !array, !random, !randint, !model, !json, ...
    compare: exact           # number, array, shape, exact, choice, set, formula, bytes, dict
    description: {{zh: TODO, en: TODO}}
# Hidden checks are in solutions/{set_id}/{id}.hidden.yaml (same format), hidden
# pytest tests go in solutions/{set_id}/test_{module}.py.
"""

HIDDEN = """\
# Hidden checks of exercise {id}: the same format as its visible checks. Draw the
# inputs per seed (!random, !randint, !model) so that nobody can write the answers in:
# dev check grades stand-ins (zeros, a constant, the first argument handed back, a
# table of the visible answers) and each must lose its points.
format_version: 1
checks:
  - id: drawn-a
    args: [!randint {{seed: 1, low: 1, high: 1000}}]
    compare: exact
    description: {{zh: TODO, en: TODO}}   # what it checks (never its inputs or answer)
  - id: drawn-b
    args: [!randint {{seed: 2, low: 1, high: 1000}}]
    compare: exact
    description: {{zh: TODO, en: TODO}}
"""

STUB = '''"""TODO English title / TODO 中文标题."""


def {function}(x):
    """TODO: what to return, in English.

    中文：TODO 要返回什么。
    """
    raise NotImplementedError
'''

SOLUTION = '''"""Reference for {file}: the graded functions, then known wrong versions."""


def {function}(x):
    raise NotImplementedError("TODO: write the reference solution")
'''

SET_YAML = """\
format_version: 1
title:
  zh: TODO 中文标题
  en: TODO English title
order:
  - {id}
"""


# what ``new`` writes for the instructor to replace: dev check finds any left behind
TODO_MARKERS = ("TODO 中文标题", "TODO English title", "TODO 用中文写出任务", "TODO State the task",
                "TODO 提示", "TODO hint", "{zh: TODO, en: TODO}", "TODO: what to return",
                "TODO 要返回什么", "TODO: write the reference solution")


def new_exercise(course: Course, set_id: str, exercise_id: str) -> list[Path]:
    """Write the files of a new exercise and list it in the set; the paths written."""
    if not re.fullmatch(r"[a-z][a-z0-9_]*", exercise_id):
        raise CourseError(f"exercise id {exercise_id!r}: use lowercase letters, digits and _",
                          hint="the id is also the stub's file and module name")
    ex_dir = course.exercises_dir / set_id
    sol_dir = course.solutions_dir / set_id
    file = f"{exercise_id}.py"
    paths = [ex_dir / f"{exercise_id}.yaml", ex_dir / file, sol_dir / file,
             sol_dir / f"{exercise_id}.hidden.yaml"]
    for path in paths:
        if path.exists():
            raise CourseError("already exists; choose another id", path)
    ex_dir.mkdir(parents=True, exist_ok=True)
    sol_dir.mkdir(parents=True, exist_ok=True)
    values = dict(id=exercise_id, set_id=set_id, function=exercise_id, file=file,
                  module=exercise_id)
    paths[0].write_text(YAML.format(**values), encoding="utf-8")
    paths[1].write_text(STUB.format(**values), encoding="utf-8")
    paths[2].write_text(SOLUTION.format(**values), encoding="utf-8")
    paths[3].write_text(HIDDEN.format(**values), encoding="utf-8")
    manifest = ex_dir / "set.yaml"
    if manifest.exists():
        _add_to_order(manifest, exercise_id)
    else:
        manifest.write_text(SET_YAML.format(**values), encoding="utf-8")
    return [*paths, manifest]


def _add_to_order(manifest: Path, exercise_id: str) -> None:
    """Add the id at the end of 'order' (a block list or a flow list, on one line or
    several) without disturbing comments; refuse, naming the line, if that fails."""
    data = yaml_source.load(manifest)
    order = data.get("order")
    line = getattr(data, "key_lines", {}).get("order")

    def refuse(why: str, at: int | None) -> CourseError:
        return CourseError(f"could not add {exercise_id!r} to 'order': {why}", manifest, at,
                           hint=f"the exercise's files are written; add '{exercise_id}' "
                                "to 'order' yourself")

    if not isinstance(order, list) or not order or not hasattr(order, "item_lines"):
        raise refuse("it is not a non-empty list", line)
    text = manifest.read_text(encoding="utf-8")
    node = _order_node(text)
    if node is None or len(node.value) != len(order):
        raise refuse("cannot find the list in the file", line)
    if node.flow_style:   # order: [a, b] on one line or several
        close = node.end_mark.index - 1
        if text[close:close + 1] != "]":
            raise refuse("cannot find the list's closing ']'", node.end_mark.line + 1)
        before = text[:close].rstrip()
        sep = " " if before.endswith(",") else ", "
        new_text = before + sep + exercise_id + text[len(before):]
    else:                 # a block list: one '- item' per line
        lines = text.splitlines(keepends=True)
        last = node.value[-1]
        dash = lines[last.start_mark.line]
        indent = dash[:len(dash) - len(dash.lstrip())]
        if not dash.lstrip().startswith("-"):
            raise refuse("its last item does not start a line with '- '",
                         last.start_mark.line + 1)
        end = last.end_mark.line + (1 if last.end_mark.column else 0)
        if end and not lines[end - 1].endswith("\n"):
            lines[end - 1] += "\n"
        lines.insert(end, f"{indent}- {exercise_id}\n")
        new_text = "".join(lines)
    try:
        added = yaml.safe_load(new_text).get("order")
    except yaml.YAMLError:
        added = None
    if added != [*order, exercise_id]:
        raise refuse("the list is written in a way this command cannot extend", line)
    manifest.write_text(new_text, encoding="utf-8")


def _order_node(text: str) -> yaml.SequenceNode | None:
    """The YAML node of the top-level 'order' list, with its marks."""
    root = yaml.compose(text, Loader=yaml.SafeLoader)
    if isinstance(root, yaml.MappingNode):
        for key, value in root.value:
            if key.value == "order" and isinstance(value, yaml.SequenceNode):
                return value
    return None
