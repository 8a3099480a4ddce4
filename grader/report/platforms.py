"""The PrairieLearn and GitHub Classroom documents of a RunResult.

Gradescope's (``render.gradescope``), PrairieLearn's and GitHub Classroom's
documents come from one RunResult, and every check's words from one function,
``render.check_feedback``: a hidden check reads the same on every platform, and
the scores agree. Pure functions: no process is started, nothing is judged.

PrairieLearn (docs/externalGrading.md of PrairieLearn/PrairieLearn): results.json
holds ``gradable``, ``score`` in 0..1, ``format_errors``, ``message``, ``output``,
``images`` and ``tests[]`` of ``name``, ``description``, ``points``, ``max_points``,
``message``, ``output``, ``images``; at most 1 MB. A submission the grader could
not grade is ``gradable: false`` (no attempt counted), never a zero.

GitHub Classroom (classroom-resources/autograding-grading-reporter, src/main.js and
notify-classroom.js; the result shape of autograding-python-grader's runner/data.py):
each step's ``result`` output is the base64 of compact JSON ``{version: 3, status,
message, max_score, tests[]}``; the reporter adds up ``tests[].score``.
"""

import base64
import json
from collections.abc import Sequence
from typing import Any

from .. import __version__
from ..course.spec import Exercise
from ..judge.msg import Msg
from ..judge.results import RunResult
from . import notebook_view
from .messages import render
from .render import call_text, check_feedback, summary

PL_MAX_BYTES = 1_000_000     # PrairieLearn's limit on results.json
PL_TEST_CHARS = 4000         # a test's message, cut to keep many tests under the limit


def _tests(run: RunResult, lang: str):
    """(exercise, check, description, feedback lines) for every check, in exercise order."""
    for ex_result in run.exercises:
        for check in ex_result.checks:
            described, lines = check_feedback(ex_result.exercise, check, lang)
            yield ex_result.exercise, check, described, lines


def isolation_line(run: RunResult, lang: str) -> str:
    """Which isolation level ran, said in every platform's document."""
    return render(Msg("platform-isolation", level=run.isolation), lang)


def prairielearn(run: RunResult, lang: str) -> dict[str, Any]:
    """PrairieLearn's results.json of a grading: the score as a fraction of the points."""
    tests = [{"name": f"{exercise.id}: {check.check}", "description": described,
              "points": round(check.score, 4), "max_points": round(check.max_score, 4),
              "message": _cut("\n".join(lines), PL_TEST_CHARS), "output": "", "images": []}
             for exercise, check, described, lines in _tests(run, lang)]
    fraction = run.score / run.max_score if run.max_score else 0.0
    return {"gradable": True, "score": round(min(max(fraction, 0.0), 1.0), 6),
            "format_errors": [], "message": summary(run, lang),
            "output": isolation_line(run, lang), "images": [], "tests": tests,
            "attn_grade": _extra(run, lang)}


def prairielearn_not_gradable(message: str, output: str = "") -> dict[str, Any]:
    """A submission that was not graded (no stub file, an upload that cannot be read, the
    grader's own failure): ``gradable: false``, so PrairieLearn counts no attempt and no
    zero, and the message says why."""
    return {"gradable": False, "format_errors": [message], "message": message,
            "output": output, "images": [], "tests": []}


def classroom(run: RunResult, lang: str) -> dict[str, Any]:
    """A GitHub Classroom grader step's result. Partial credit is in each test's
    ``score``, rounded to hundredths so the reporter's sums come out even."""
    tests = []
    for exercise, check, _, lines in _tests(run, lang):
        spec = next((c for c in exercise.checks if c.id == check.check), None)
        shows_call = spec is not None and not check.hidden and bool(spec.args or spec.kwargs)
        tests.append({"name": f"{exercise.id}: {check.check}",
                      "status": "pass" if check.passed else "fail",
                      "message": "\n".join(lines),
                      "test_code": call_text(spec) if shows_call and spec else "",
                      "filename": exercise.file, "line_no": 0, "duration": 0,
                      "score": round(check.score, 2), "task_id": 0,
                      "output": ""})   # what the code printed is in the message already
    return {"version": 3, "status": "pass" if run.all_passed else "fail",
            "message": f"{summary(run, lang, final=True)}\n{isolation_line(run, lang)}",
            "max_score": round(run.max_score, 2), "tests": tests}


def classroom_error(message: str, exercises: Sequence[Exercise] = ()) -> dict[str, Any]:
    """A step whose grading failed: status ``error`` and ``max_score`` 0, so the
    reporter fails the run and counts no zero against the student."""
    name = ", ".join(e.id for e in exercises) or "attn-grade"
    return {"version": 3, "status": "error", "message": message, "max_score": 0,
            "tests": [{"name": name, "status": "error", "message": message, "test_code": "",
                       "filename": "", "line_no": 0, "duration": 0, "score": 0,
                       "task_id": 0, "output": ""}]}


def classroom_not_graded(status: str, message: str,
                         exercises: Sequence[Exercise]) -> dict[str, Any]:
    """An upload that was not graded: without the stub files (``empty``) it fails with
    the exercises' points, as on Gradescope; anything else is the grader's ``error``."""
    if status != "empty":
        return classroom_error(message, exercises)
    document = classroom_error(message, exercises)
    document["tests"][0].update(status="fail")
    return {**document, "status": "fail",
            "max_score": round(sum(e.points for e in exercises), 2)}


def classroom_encoded(document: dict[str, Any]) -> str:
    """The step output the reporter decodes: base64 of compact JSON."""
    text = json.dumps(document, ensure_ascii=False, separators=(",", ":"))
    return base64.b64encode(text.encode("utf-8")).decode("ascii")


def fit_prairielearn(document: dict[str, Any]) -> str:
    """The document as JSON text under PrairieLearn's 1 MB, test messages cut if needed."""
    text = json.dumps(document, ensure_ascii=False)
    limit = PL_TEST_CHARS
    while len(text.encode("utf-8")) > PL_MAX_BYTES and limit > 100:
        limit //= 2
        for test in document.get("tests", []):
            test["message"] = _cut(test["message"], limit)
        text = json.dumps(document, ensure_ascii=False)
    return text


def _cut(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[:limit - 1] + "…"


def _extra(run: RunResult, lang: str) -> dict[str, Any]:
    """What PrairieLearn does not read but an instructor may: the set, the isolation,
    each exercise's points, each test's misconception tags."""
    return {"set": run.set_id, "isolation": run.isolation, "lang": lang,
            "grader_version": __version__,
            "tags": {f"{e.exercise.id}: {c.check}": list(c.tags)
                     for e in run.exercises for c in e.checks if c.tags},
            "exercises": [{"exercise": e.exercise.id, "file": e.exercise.file,
                           "score": round(e.score, 4), "max_score": round(e.max_score, 4)}
                          for e in run.exercises]}


FORMATS = ("gradescope", "prairielearn", "classroom", "notebook")   # notebook: ag.check's


def document_text(fmt: str, run: RunResult | None, lang: str,
                  gradescope_document: dict[str, Any],
                  problem: tuple[str, str] | None = None,
                  exercises: Sequence[Exercise] = ()) -> str:
    """The text ``--format FMT`` writes: a grading, or the ``problem`` (status, message)
    that kept an upload from being graded."""
    if fmt == "prairielearn":
        message = problem[1] if problem else ""
        return fit_prairielearn(prairielearn(run, lang) if run
                                else prairielearn_not_gradable(message))
    if fmt == "classroom":
        status, message = problem or ("error", "")
        return classroom_encoded(classroom(run, lang) if run
                                 else classroom_not_graded(status, message, exercises))
    if fmt == "notebook":
        hints = {e["exercise"]: e.get("hints_used", 0)
                 for e in gradescope_document.get("extra_data", {}).get("exercises", [])}
        return json.dumps(notebook_view.document(run, lang, hints) if run
                          else notebook_view.not_graded(problem[1] if problem else ""),
                          ensure_ascii=False)
    return json.dumps(gradescope_document, ensure_ascii=False, indent=2)
