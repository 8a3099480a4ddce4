"""What students upload, on its way to a grade: the Gradescope bundle and grade-all.

Each test reproduces an attack or a bug: a folder name that picks the course's
solutions, a release bundle uploaded whole, zip names that unpack outside the
class folder, a student folder named grader/, two entries for one student,
formulas in the CSV, stale and empty results.
"""

import csv
import io
import json
import os
import shutil
import subprocess
import sys
import zipfile

import pytest

from conftest import EXERCISES, ROOT, SOLUTIONS, run_cli

from grader.submission_files import SubmissionError, find_stub_files

DAY3_MAX = 93.0


# ------------------------------------------------------------ the Gradescope bundle

@pytest.fixture(scope="module")
def autograder_source(tmp_path_factory):
    """The exported day3 autograder, unpacked once (each test copies it)."""
    folder = tmp_path_factory.mktemp("gradescope")
    archive = folder / "autograder.zip"
    proc = run_cli("export", "gradescope", "day3", "-o", archive)
    assert proc.returncode == 0, proc.stderr
    with zipfile.ZipFile(archive) as z:
        z.extractall(folder / "source")
    return folder / "source"


def run_autograder(autograder_source, root, fill):
    """A simulated /autograder at ``root``: ``fill(submission)`` builds the upload."""
    shutil.copytree(autograder_source, root / "source")
    (root / "submission").mkdir()
    fill(root / "submission")
    env = {**os.environ, "AUTOGRADER_ROOT": str(root), "PYTHON": sys.executable}
    run = subprocess.run(["bash", str(root / "source" / "run_autograder")], env=env,
                         capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, run.stderr
    return json.loads((root / "results" / "results.json").read_text())


def _stubs(folder):
    folder.mkdir(parents=True, exist_ok=True)
    for stub in (EXERCISES / "day3").glob("*.py"):
        shutil.copy(stub, folder / stub.name)


@pytest.fixture(scope="module")
def solved_release(tmp_path_factory):
    """The day3 release bundle with every stub replaced by the reference solution."""
    out = tmp_path_factory.mktemp("release") / "bundle"
    proc = run_cli("release", "day3", "-o", out)
    assert proc.returncode == 0, proc.stderr
    for solution in (SOLUTIONS / "day3").glob("*.py"):
        if (out / "exercises" / "day3" / solution.name).exists():
            shutil.copy(solution, out / "exercises" / "day3" / solution.name)
    return out


def test_release_bundle_uploaded_whole_gets_full_marks(autograder_source, solved_release,
                                                     tmp_path):
    results = run_autograder(autograder_source, tmp_path / "autograder",
                             lambda sub: shutil.copytree(solved_release, sub / "attn-day3"))
    assert results["score"] == results["max_score"] == DAY3_MAX, results["output"]
    readme = (solved_release / "README.md").read_text()
    assert "Upload your edited stub files" in readme and "`attention.py`" in readme


def test_folder_name_with_a_newline_cannot_pick_the_course_solutions(autograder_source,
                                                                     tmp_path):
    root = tmp_path / "autograder"

    def fill(sub):
        _stubs(sub)
        # find -printf '%h\n' printed this as a line "0 $ROOT/source/course/solutions/day3"
        trap = sub / "x\n0 " / str(root).lstrip("/") / "source/course/solutions/day3"
        trap.mkdir(parents=True)
        (trap / "z.py").write_text("x = 1\n")

    results = run_autograder(autograder_source, root, fill)
    assert results["score"] == 0 and results["max_score"] == DAY3_MAX


def test_two_copies_of_a_stub_are_a_clear_failure(autograder_source, tmp_path):
    def fill(sub):
        _stubs(sub / "a")
        (sub / "b").mkdir()
        shutil.copy(SOLUTIONS / "day3" / "attention.py", sub / "b" / "attention.py")

    results = run_autograder(autograder_source, tmp_path / "autograder", fill)
    assert results["score"] == 0 and results["max_score"] == DAY3_MAX
    assert "two files named attention.py" in results["output"]
    assert "a/attention.py" in results["output"] and "b/attention.py" in results["output"]


def test_stub_files_are_found_by_name_and_links_are_not_followed(tmp_path):
    upload = tmp_path / "upload"
    (upload / "work" / "grader").mkdir(parents=True)
    (upload / "work" / "grader" / "attention.py").write_text("copy of the grader\n")
    (upload / ".git").mkdir()
    (upload / ".git" / "attention.py").write_text("old\n")
    (upload / "solutions").mkdir()
    (upload / "solutions" / "growth.py").write_text("not the student's\n")
    (upload / "work" / "attention.py").write_text("mine\n")
    (upload / "temperature.py").symlink_to(SOLUTIONS / "day3" / "temperature.py")
    (upload / "linked").symlink_to(SOLUTIONS / "day3", target_is_directory=True)
    names = ("attention.py", "growth.py", "temperature.py", "decode.py")
    assert find_stub_files(upload, names) == {"attention.py": upload / "work" / "attention.py"}
    (upload / "attention.py").write_text("again\n")
    with pytest.raises(SubmissionError, match="attention.py and work/attention.py"):
        find_stub_files(upload, names)
