"""``attn-grade export github-classroom``: a GitHub Classroom template repository.

The repository is the student release (``release.make_release``: the grader, the
stubs, the visible checks with their answers baked in, no solutions) plus
``.github/workflows/classroom.yml``. The workflow grades one exercise per step with
``attn-grade SET --exercise ID --format classroom``, each step's ``result`` output
being what classroom-resources/autograding-grading-reporter reads (src/main.js: the
base64 JSON in ``{STEP_ID_UPPERCASE}_RESULTS``; notify-classroom.js adds up
``tests[].score`` against ``max_score``; it needs ``checks: write``).

Hidden checks are not in the students' repository. Either the workflow fetches the
course from a private repository the instructor names (``hidden_from``) with a token
kept as a secret, or it grades only what the release holds. A student can edit the
workflow of their own repository, so neither keeps a determined student from reading
or bypassing what the workflow runs: the README says so.
"""

import re
from pathlib import Path
from typing import Any

import yaml

from ..course import loader as spec_loader
from ..course.spec import Course, ExerciseSet
from ..judge.msg import Msg
from ..report.messages import render
from ..report.platforms import classroom_encoded, classroom_error
from .release import make_release

WORKFLOW = Path(".github") / "workflows" / "classroom.yml"
COURSE_CHECKOUT = ".attn-grade-course"
TOKEN_SECRET = "ATTN_GRADE_COURSE_TOKEN"
# every action the workflow names, at the major version GitHub Classroom's own uses
ACTIONS = {"checkout": "actions/checkout@v4", "python": "actions/setup-python@v5",
           "reporter": "classroom-resources/autograding-grading-reporter@v1"}


def write_template(course: Course, exercise_set: ExerciseSet, out: str | Path, level: str,
                   lang: str, hidden_from: str | None = None, zygote: Any = None) -> Path:
    """Write the template repository of ``exercise_set`` into the folder ``out``
    (``zygote``: as make_release's)."""
    out = make_release(course, exercise_set, out, level, zygote)
    released = spec_loader.load_set(Course(out), exercise_set.id)
    graded = list(exercise_set.exercises) if hidden_from else \
        [e for e in released.exercises if e.checks]
    graded_here = HIDDEN_HERE if hidden_from else VISIBLE_ONLY
    (out / "README.md").write_text(STUDENT_README.format(set_id=exercise_set.id,
                                                         graded_here=graded_here),
                                   encoding="utf-8")
    workflow = out / WORKFLOW
    workflow.parent.mkdir(parents=True)
    workflow.write_text(workflow_text(exercise_set.id, graded, lang, hidden_from),
                        encoding="utf-8")
    return out


def runner_ids(exercise_ids: list[str]) -> list[str]:
    """A step id per exercise, letters and digits only (the reporter's ``runners``
    pattern), unique."""
    ids: list[str] = []
    for exercise_id in exercise_ids:
        base = re.sub(r"[^A-Za-z0-9]", "", exercise_id) or "exercise"
        name, n = base, 2
        while name in ids:
            name, n = f"{base}{n}", n + 1
        ids.append(name)
    return ids


def workflow_text(set_id: str, exercises: list, lang: str, hidden_from: str | None) -> str:
    """classroom.yml: checkout, Python, the grader, one step per exercise, the reporter."""
    # the steps' names, in the student's language: their repository's Actions page shows them
    steps: list[dict[str, Any]] = [
        {"name": render(Msg("classroom-step-checkout"), lang), "uses": ACTIONS["checkout"]},
        {"name": render(Msg("classroom-step-python", name="Python"), lang),
         "uses": ACTIONS["python"], "with": {"python-version": "3.12"}}]
    source = "."
    if hidden_from:
        steps.append({"name": render(Msg("classroom-step-fetch"), lang),
                      "uses": ACTIONS["checkout"],
                      "with": {"repository": hidden_from, "path": COURSE_CHECKOUT,
                               "token": "${{ secrets." + TOKEN_SECRET + " }}"}})
        source = f"./{COURSE_CHECKOUT}"
    steps.append({"name": render(Msg("classroom-step-install"), lang),
                  "run": f"python -m pip install {source}"})
    ids = runner_ids([e.id for e in exercises])
    for step_id, exercise in zip(ids, exercises):
        steps.append({"name": f"{exercise.id}: {exercise.title.get(lang)}", "id": step_id,
                      "run": _grade_command(set_id, exercise, step_id, lang, hidden_from)})
    steps.append({"name": render(Msg("classroom-step-reporter", platform="GitHub Classroom"),
                                 lang), "uses": ACTIONS["reporter"],
                  "env": {f"{i.upper()}_RESULTS": "${{ steps." + i + ".outputs.result }}"
                          for i in ids},
                  "with": {"runners": ",".join(ids)}})
    document = {"name": "Autograding Tests",
                "on": ["push", "workflow_dispatch", "repository_dispatch"],
                "permissions": {"checks": "write", "actions": "read", "contents": "read"},
                "jobs": {"run-autograding-tests": {
                    "runs-on": "ubuntu-latest",
                    "if": "github.actor != 'github-classroom[bot]'",
                    "env": {"GRADER_ERROR_RESULT": classroom_encoded(classroom_error(
                        render(Msg("platform-not-gradable"), lang)))},
                    "steps": steps}}}
    head = ("# Generated by attn-grade export github-classroom: one step per exercise, "
            "then the reporter.\n")
    return head + yaml.dump(document, Dumper=_Dumper, sort_keys=False, allow_unicode=True,
                            width=100)


class _Dumper(yaml.SafeDumper):
    """Safe YAML, with a step's several lines of shell as a literal block."""


_Dumper.add_representer(str, lambda dumper, text: dumper.represent_scalar(
    "tag:yaml.org,2002:str", text, style="|" if "\n" in text else None))


def _grade_command(set_id: str, exercise, step_id: str, lang: str,
                   hidden_from: str | None) -> str:
    """One exercise's step: grade it (its feedback in the log), and always output a
    result: the grader's own failure is the reporter's ``error``, not a zero."""
    where = f" --course {COURSE_CHECKOUT} --submission exercises/{set_id}" \
        if hidden_from else ""
    result = f'"$RUNNER_TEMP/{step_id}.result"'
    return (f"attn-grade {set_id} --exercise {exercise.id} --lang {lang}{where} "
            f"--format classroom --output {result} || true\n"
            f'[ -s {result} ] || echo "$GRADER_ERROR_RESULT" > {result}\n'
            f'echo "result=$(cat {result})" >> "$GITHUB_OUTPUT"\n')


STUDENT_README = """\
# attn-grade: {set_id}

```sh
python3 -m pip install -e . && attn-grade {set_id}
```

Fill in the stub functions in `exercises/{set_id}/`, then run `attn-grade {set_id}`
(`--lang zh` for Chinese feedback, `--exercise ID` for one exercise).

## Handing in

Commit your edited stub files in `exercises/{set_id}/` and push. Each push runs the
autograding workflow (`.github/workflows/classroom.yml`, the Actions tab): one step per
exercise prints the same feedback as `attn-grade {set_id} --exercise ID`, and the last
step reports your points to GitHub Classroom. {graded_here} Do not edit the workflow.
"""

VISIBLE_ONLY = ("The workflow runs the visible checks you can run yourself; answers worked "
                "out by hand are not graded by it.")
HIDDEN_HERE = "The workflow also runs hidden checks, with inputs you do not see."
