"""One RunResult, three documents: Gradescope's, PrairieLearn's and GitHub Classroom's agree
on every score and every visible message, over the mistake matrix (graded in this
process), and each validates against its platform's schema (platform_schemas.py)."""

import base64
import json
from collections import defaultdict

import pytest
from conftest import ROOT, copy_exercises, schema_valid, session_warm
from platform_schemas import CLASSROOM_RESULT, GRADESCOPE_RESULTS, PRAIRIELEARN_RESULTS
from test_cli_grade import ALL_MISTAKES, solution

from grader.course import loader
from grader.course.spec import Course
from grader.grading import grade_set
from grader.report import platforms
from grader.report.render import gradescope, not_graded
from grader.run import sandbox


def _rounds():
    """The mistake matrix as a few submissions: round k holds each exercise's k-th mistake
    (exercises are graded apart, so one submission carries one mistake per exercise)."""
    by_exercise = defaultdict(list)
    for (set_id, tag), (exercise, code) in sorted(ALL_MISTAKES.items()):
        by_exercise[set_id, exercise].append((tag, code))
    rounds = defaultdict(dict)
    for (set_id, exercise), mistakes in by_exercise.items():
        for k, (tag, code) in enumerate(mistakes):
            rounds[set_id, k][exercise] = (tag, code)
    return sorted(rounds.items())


ROUNDS = _rounds()


def _graded(tmp_path_factory, set_id, mistakes):
    folder = tmp_path_factory.mktemp(f"{set_id}-matrix")
    copy_exercises(set_id, folder)
    for stub in (ROOT / "exercises" / set_id).glob("*.py"):
        (folder / stub.name).write_text(solution(stub.stem, set_id))
    for exercise, (_, code) in mistakes.items():
        (folder / f"{exercise}.py").write_text(code)
    exercise_set = loader.load_set(Course(ROOT), set_id)
    return grade_set(exercise_set, folder, sandbox.strongest_available(), only=set(mistakes),
                     warm=session_warm())


@pytest.fixture(scope="module")
def first_round(tmp_path_factory):
    """One shared grading: the first round of mistakes (c3-l2's)."""
    (set_id, _), mistakes = ROUNDS[0]
    return _graded(tmp_path_factory, set_id, mistakes), mistakes


def _check_agreement(run, mistakes, lang):
    """The three documents of ``run`` agree, validate, and keep each mistake's tag."""
    scope = gradescope(run, lang)
    prairie = platforms.prairielearn(run, lang)
    classroom = platforms.classroom(run, lang)
    schema_valid(scope, GRADESCOPE_RESULTS)
    schema_valid(prairie, PRAIRIELEARN_RESULTS)
    schema_valid(classroom, CLASSROOM_RESULT)
    assert len(scope["tests"]) == len(prairie["tests"]) == len(classroom["tests"]) > 0
    for gs, pl, gc in zip(scope["tests"], prairie["tests"], classroom["tests"]):
        assert gs["name"] == pl["name"] == gc["name"]
        assert gs["score"] == pl["points"] and gs["max_score"] == pl["max_points"]
        assert gc["score"] == pytest.approx(gs["score"], abs=0.005)
        assert (gs["status"] == "passed") == (gc["status"] == "pass")
        shown = "\n".join(filter(None, [pl["description"], pl["message"]]))
        assert gs["output"] == shown, gs["name"]
        assert pl["message"] == gc["message"], gs["name"]
        assert gs["tags"] == prairie["attn_grade"]["tags"].get(gs["name"], [])
    assert prairie["score"] == pytest.approx(scope["score"] / scope["max_score"], abs=1e-6)
    assert sum(t["score"] for t in classroom["tests"]) == pytest.approx(scope["score"],
                                                                       abs=0.01)
    assert classroom["max_score"] == pytest.approx(scope["max_score"], abs=0.01)
    assert run.isolation in prairie["output"] and run.isolation in classroom["message"]
    for exercise, (tag, _) in mistakes.items():
        tags = [t for gs in scope["tests"] if gs["extra_data"]["exercise"] == exercise
                for t in gs["tags"]]
        assert tag in tags, (exercise, tag)


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_the_three_documents_agree_on_a_graded_mistake_round(first_round, lang):
    run, mistakes = first_round
    _check_agreement(run, mistakes, lang)


@pytest.mark.parametrize("key", [key for key, _ in ROUNDS[1:]], ids=str)
def test_the_three_documents_agree_over_the_mistake_matrix(tmp_path_factory, key):
    mistakes = dict(ROUNDS)[key]
    _check_agreement(_graded(tmp_path_factory, key[0], mistakes), mistakes, "en")


def test_hidden_checks_read_as_on_gradescope(first_round):
    """A hidden check's words are Gradescope's value-free ones on every platform."""
    run, _ = first_round
    hidden = {f"{c.exercise}: {c.check}" for e in run.exercises for c in e.checks if c.hidden}
    assert hidden
    scope = {t["name"]: t["output"] for t in gradescope(run, "en")["tests"]}
    for test in platforms.prairielearn(run, "en")["tests"] + \
            platforms.classroom(run, "en")["tests"]:
        if test["name"] in hidden:
            assert scope[test["name"]].endswith(test["message"])
            assert "expected" not in test["message"].replace("its inputs and expected", "")


def test_a_document_not_graded_is_never_a_zero():
    exercises = loader.load_set(Course(ROOT), "day3").exercises
    message = "not graded: the upload holds none of the files attention.py"
    prairie = json.loads(platforms.document_text("prairielearn", None, "en", {},
                                                 ("empty", message), exercises))
    schema_valid(prairie, PRAIRIELEARN_RESULTS)
    assert prairie["gradable"] is False and "score" not in prairie
    assert prairie["format_errors"] == [message]
    error = json.loads(base64.b64decode(platforms.document_text(
        "classroom", None, "en", {}, ("error", "broken"), exercises)))
    schema_valid(error, CLASSROOM_RESULT)
    assert error["status"] == "error" and error["max_score"] == 0
    empty = json.loads(base64.b64decode(platforms.document_text(
        "classroom", None, "en", {}, ("empty", message), exercises)))
    schema_valid(empty, CLASSROOM_RESULT)
    assert empty["status"] == "fail" and empty["max_score"] == sum(e.points for e in exercises)
    schema_valid(not_graded("day3", exercises, "empty", message), GRADESCOPE_RESULTS)


def test_prairielearn_results_stay_under_one_megabyte(first_round):
    run, _ = first_round
    document = platforms.prairielearn(run, "en")
    document["tests"] = document["tests"] * 30     # about a thousand checks
    for test in document["tests"]:
        test["message"] = "x" * 4000
    text = platforms.fit_prairielearn(document)
    assert len(text.encode()) <= platforms.PL_MAX_BYTES
    schema_valid(json.loads(text), PRAIRIELEARN_RESULTS)
