"""Release, class grading and the Gradescope bundle, through the CLI."""

import csv
import io
import json
import os
import re
import shutil
import subprocess
import sys
import zipfile

import pytest
from conftest import DAY3_MAX, ROOT, SOLUTIONS, answer_own_variant, copy_exercises, run_cli

from grader.course import loader as spec_loader
from grader.course.spec import Course
from grader.run.references import Reference


def _hidden_and_by_hand_answers():
    """What a release must not contain: hidden and by-hand answers, reference code."""
    exercise_set = spec_loader.load_set(Course(ROOT), "day3")
    answers = []
    for exercise in exercise_set.exercises:
        reference = Reference(exercise)
        for check in exercise.checks:
            if check.hidden or not (check.args or check.kwargs):
                answers.append(reference.call(check.function, check.args, check.kwargs, check))
    return answers


def test_release_holds_no_solution_file_and_no_secret_value(day3_release):
    files = [p for p in day3_release.rglob("*") if p.is_file()]
    names = {p.name for p in files}
    assert not any("solutions" in p.parts for p in files)
    assert not any(n.endswith(".hidden.yaml") or n.startswith("test_") for n in names)
    course_files = [p for p in files if "grader" not in p.relative_to(day3_release).parts]
    text = "\n".join(p.read_text(errors="replace") for p in course_files
                     if p.suffix in (".yaml", ".py", ".md", ".toml", ".json"))
    for solution in (SOLUTIONS / "day3").glob("*.py"):
        for line in solution.read_text().splitlines():
            if line.startswith("def ") and ("wrong" in line or "_no_" in line or "_t(" in line):
                assert line not in text, line
    numbers = [a for a in _hidden_and_by_hand_answers() if isinstance(a, int) and a > 1000]
    assert numbers, "expected some integer answers to look for"
    for number in numbers:
        assert not re.search(rf"\b{number}\b", text), number
    assert "524288" not in text and "131072" not in text


def test_release_runs_visible_checks_and_says_hidden_run_at_submission(day3_release,
                                                                      tmp_path):
    bundle = tmp_path / "student"
    shutil.copytree(day3_release, bundle)
    proc = subprocess.run([sys.executable, "-m", "grader", "day3", "--json", "--lang", "en"],
                          cwd=bundle, capture_output=True, text=True,
                          env={**os.environ, "PYTHONPATH": str(bundle)})
    doc = json.loads(proc.stdout)
    assert proc.returncode == 1 and doc["score"] == 0 and doc["extra_data"]["released"]
    assert "more points (hidden checks" in doc["output"]
    assert all(t["visibility"] == "visible" for t in doc["tests"])
    for solution in (SOLUTIONS / "day3").glob("*.py"):
        shutil.copy(solution, bundle / "exercises" / "day3" / solution.name)
    proc = subprocess.run([sys.executable, "-m", "grader", "day3", "--json"], cwd=bundle,
                          capture_output=True, text=True,
                          env={**os.environ, "PYTHONPATH": str(bundle)})
    doc = json.loads(proc.stdout)
    assert proc.returncode == 0 and doc["score"] == doc["max_score"] > 0


def test_release_keeps_naming_mistakes(day3_release, tmp_path):
    bundle = tmp_path / "student"
    shutil.copytree(day3_release, bundle)
    temperature = bundle / "exercises" / "day3" / "temperature.py"
    temperature.write_text((SOLUTIONS / "day3" / "temperature.py").read_text()
                           .replace("/ T\n", "* T\n"))
    proc = subprocess.run([sys.executable, "-m", "grader", "day3", "--json", "--exercise",
                           "temperature"], cwd=bundle, capture_output=True, text=True,
                          env={**os.environ, "PYTHONPATH": str(bundle)})
    tags = {tag for t in json.loads(proc.stdout)["tests"] for tag in t["tags"]}
    assert tags == {"temperature-multiplied"}


def _class(folder):
    """Students: correct, one mistake, syntax error, unfilled, a zip, an endless loop."""
    def student(name, **changes):
        path = folder / name
        copy_exercises("day3", path)
        if changes.get("stubs"):
            return path
        for stub in path.glob("*.py"):
            stub.write_text((SOLUTIONS / "day3" / stub.name).read_text())
        answer_own_variant(path, name)   # grade-all grades each with their own numbers
        for module, (old, new) in changes.items():
            target = path / f"{module}.py"
            assert old in target.read_text(), old
            target.write_text(target.read_text().replace(old, new, 1))
        return path

    student("ada")
    student("ben", attention=("    return _attend(Q, K, V, causal, np.sqrt)\n",
                              "    return _attend(Q, K, V, False, np.sqrt)\n"))
    student("cy", shapes=("def q_vector_length(", "def q_vector_length(("))
    student("dee", stubs=True)
    student("eve", growth=("    return n * n\n", "    while True:\n        pass\n"))
    zipped = student("fay")
    shutil.make_archive(str(folder / "fay"), "zip", zipped)
    shutil.rmtree(zipped)
    (folder / "gus.zip").write_bytes(b"not a zip at all")


@pytest.mark.slow   # 7 whole-set gradings (20 s): run by .ci/run's `pytest -m slow` step
def test_grade_all_writes_matching_csv_and_json_and_resumes(tmp_path):
    submissions, out = tmp_path / "class", tmp_path / "out"
    submissions.mkdir()
    _class(submissions)
    proc = run_cli("grade-all", "day3", submissions, "-o", out, "--jobs", "2",
                   "--time-limit", "2", timeout=600)
    assert proc.returncode == 0, proc.stderr
    rows = {r["student"]: r for r in csv.DictReader(io.StringIO(
        (out / "gradebook.csv").read_text()))}
    assert set(rows) == {"ada", "ben", "cy", "dee", "eve", "fay", "gus"}
    for student, row in rows.items():
        doc = json.loads((out / "results" / f"{student}.json").read_text())
        assert float(row["score"]) == pytest.approx(doc["score"])
        parts = [float(row[k]) for k in row if k not in ("student", "score", "max_score",
                                                          "status") and row[k]]
        assert sum(parts) == pytest.approx(doc["score"])
    assert float(rows["ada"]["score"]) == float(rows["fay"]["score"]) == DAY3_MAX
    assert float(rows["ben"]["attention"]) < 14.0 and float(rows["ben"]["temperature"]) == 10.0
    assert float(rows["cy"]["shapes"]) == 0 and float(rows["dee"]["score"]) == 0
    assert float(rows["eve"]["growth"]) < 6.0 and float(rows["eve"]["kv_cache"]) == 14.0
    assert rows["gus"]["status"] == "error" and float(rows["gus"]["score"]) == 0
    stamp = (out / "results" / "ada.json").stat().st_mtime_ns
    again = run_cli("grade-all", "day3", submissions, "-o", out)
    assert again.returncode == 0
    assert (out / "results" / "ada.json").stat().st_mtime_ns == stamp


def test_gradescope_bundle_in_a_fake_autograder_tree(tmp_path, day3_gradescope_zip):
    archive = day3_gradescope_zip   # conftest's: the CLI export, made once a session
    root = tmp_path / "autograder"
    with zipfile.ZipFile(archive) as z:
        assert {"setup.sh", "run_autograder"} <= set(z.namelist())
        z.extractall(root / "source")
    submission = root / "submission" / "my-work"
    submission.mkdir(parents=True)
    for stub in (ROOT / "exercises" / "day3").glob("*.py"):
        shutil.copy(stub, submission / stub.name)
    shutil.copy(SOLUTIONS / "day3" / "temperature.py", submission / "temperature.py")
    env = {**os.environ, "AUTOGRADER_ROOT": str(root), "PYTHON": sys.executable}
    run = subprocess.run(["bash", str(root / "source" / "run_autograder")], env=env,
                         capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, run.stderr
    results = json.loads((root / "results" / "results.json").read_text())
    assert isinstance(results["score"], (int, float)) and results["score"] == 10.0
    for test in results["tests"]:
        assert isinstance(test["score"], (int, float))
        assert isinstance(test["max_score"], (int, float))
        assert isinstance(test["name"], str) and isinstance(test["output"], str)
        assert test["visibility"] in ("hidden", "after_due_date", "after_published", "visible")
        assert test["status"] in ("passed", "failed")
    assert {t["visibility"] for t in results["tests"]} == {"visible", "after_published"}
    # a grader that cannot run is not gradable, never a zero: no results file (Gradescope
    # then records no score) and the log for the staff on stdout
    (root / "source" / "course" / "exercises" / "day3" / "set.yaml").write_text("broken: [")
    run = subprocess.run(["bash", str(root / "source" / "run_autograder")], env=env,
                         capture_output=True, text=True, timeout=300)
    assert run.returncode == 1 and not (root / "results" / "results.json").exists()
    assert "could not grade" in run.stdout and "set.yaml" in run.stdout, run.stdout
