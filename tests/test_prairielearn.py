"""``export prairielearn``: the fragment in an empty PrairieLearn course, and its entrypoint
in a simulated /grade tree (right, wrong, empty, hostile and notebook submissions, and
the grader's own failure), every document checked against platform_schemas."""

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import SOLUTIONS, run_here, schema_valid
from platform_schemas import PRAIRIELEARN_INFO_QUESTION, PRAIRIELEARN_RESULTS
from test_cli_grade import MISTAKES

GRADE = "/grade/serverFilesCourse/"


@pytest.fixture(scope="module")
def fragment(tmp_path_factory):
    """``attn-grade export prairielearn day3`` (per exercise) and ``--whole-set --upload``."""
    out = tmp_path_factory.mktemp("pl")
    for name, extra in (("each", []), ("whole", ["--whole-set", "--upload"])):
        proc = run_here("export", "prairielearn", "day3", "-o", out / name, *extra)
        assert proc.returncode == 0, proc.stderr
    return out


def _course(tmp_path, fragment):
    """An empty PrairieLearn course (infoCourse.json, questions/, serverFilesCourse/) with
    the fragment dropped in."""
    course = tmp_path / "course"
    (course / "questions").mkdir(parents=True)
    (course / "serverFilesCourse").mkdir()
    (course / "infoCourse.json").write_text(json.dumps({
        "uuid": "4c6b5b0e-3c55-4b0e-9f59-0d7c1a0b8f11", "name": "TEST 101", "title": "Test",
        "topics": [{"name": "attn-grade", "color": "blue1"}]}))
    shutil.copytree(fragment / "questions", course / "questions", dirs_exist_ok=True)
    shutil.copytree(fragment / "serverFilesCourse", course / "serverFilesCourse",
                    dirs_exist_ok=True)
    return course


@pytest.mark.parametrize("name", ["each", "whole"])
def test_the_fragment_makes_a_complete_course(tmp_path, fragment, name):
    course = _course(tmp_path, fragment / name)
    questions = sorted(p.parent for p in (course / "questions").rglob("info.json"))
    assert len(questions) == (14 if name == "each" else 1)
    uuids = set()
    for folder in questions:
        info = json.loads((folder / "info.json").read_text())
        schema_valid(info, PRAIRIELEARN_INFO_QUESTION)
        options = info["externalGradingOptions"]
        assert info["gradingMethod"] == "External" and options["enableNetworking"] is False
        uuids.add(info["uuid"])
        entry = options["entrypoint"][0]
        assert entry.startswith(GRADE)
        script = course / "serverFilesCourse" / entry[len(GRADE):]
        assert script.is_file() and os.access(script, os.X_OK)
        for shared in options["serverFilesCourse"]:
            assert (course / "serverFilesCourse" / shared).exists(), shared
        page = (folder / "question.html").read_text()
        assert "<pl-external-grader-results>" in page and "{{" not in page
        assert ("pl-file-upload" in page) == (name == "whole")
        for stub in (page.split('source-file-name="')[1:]):
            assert (folder / stub.split('"')[0]).is_file()
    assert len(uuids) == len(questions)
    server = course / "serverFilesCourse" / "attn_grade"
    assert (server / "solutions" / "day3" / "attention.py").is_file()
    assert not list((course / "questions").rglob("*.hidden.yaml"))
    dockerfile = (fragment / name / "Dockerfile").read_text()
    assert "solutions" not in dockerfile
    # bytecode for the Dockerfile's Python (the exporting one), valid in any copy: every
    # grading is a fresh container, which would compile the grader again
    assert f"FROM python:{sys.version_info[0]}.{sys.version_info[1]}-slim" in dockerfile
    for module in (server / "grader" / "entry.py", server / "solutions" / "day3" / "attention.py",
                   server / "vendor" / "pluggy" / "__init__.py"):
        pyc = module.parent / "__pycache__" / f"{module.stem}.{sys.implementation.cache_tag}.pyc"
        assert pyc.read_bytes()[4:8] == b"\x03\0\0\0", pyc   # hash-checked, not by mtime


def _grade(tmp_path, fragment, files, *entry_args, python=sys.executable, name="each"):
    """Run the entrypoint as PrairieLearn would, in a /grade tree under ``tmp_path``."""
    root = tmp_path / "grade"
    for sub in ("student", "tests", "data"):
        (root / sub).mkdir(parents=True)
    shutil.copytree(fragment / name / "serverFilesCourse", root / "serverFilesCourse")
    # PrairieLearn copies serverFilesCourse to the deprecated /grade/shared too
    shutil.copytree(root / "serverFilesCourse", root / "shared")
    (root / "data" / "data.json").write_text("{}")
    for file_name, content in files.items():
        target = root / "student" / file_name
        if isinstance(content, Path):
            target.symlink_to(content)
        else:
            target.write_text(content)
    entry = root / "serverFilesCourse" / "attn_grade" / "run_prairielearn"
    env = {**os.environ, "ATTN_GRADE_PL_ROOT": str(root), "PYTHON": python}
    proc = subprocess.run(["bash", str(entry), "day3", *entry_args], env=env,
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    text = (root / "results" / "results.json").read_text()
    assert len(text.encode()) <= 1_000_000
    document = json.loads(text)
    schema_valid(document, PRAIRIELEARN_RESULTS)
    return document, proc


def test_a_right_and_a_wrong_submission(tmp_path, fragment):
    right, _ = _grade(tmp_path / "right", fragment,
                      {"attention.py": (SOLUTIONS / "day3" / "attention.py").read_text()},
                      "attention")
    assert right["gradable"] and right["score"] == 1.0
    assert "isolation" in right["output"] and all(t["points"] == t["max_points"]
                                                  for t in right["tests"])
    wrong_code = MISTAKES["no-scaling"][1]
    wrong, _ = _grade(tmp_path / "wrong", fragment, {"attention.py": wrong_code}, "attention")
    assert wrong["gradable"] and 0 <= wrong["score"] < 1
    assert "no-scaling" in {t for tags in wrong["attn_grade"]["tags"].values() for t in tags}


def test_the_graders_own_failure_is_not_gradable(tmp_path, fragment):
    document, proc = _grade(tmp_path, fragment, {"attention.py": "x = 1\n"}, "attention",
                            python=str(tmp_path / "no-python"))
    assert document["gradable"] is False and "score" not in document
    assert document["format_errors"]


@pytest.mark.slow
def test_empty_hostile_and_notebook_submissions(tmp_path, fragment):
    nothing, _ = _grade(tmp_path / "nothing", fragment, {}, "attention")
    assert nothing["gradable"] is False and "attention.py" in nothing["message"]
    empty, _ = _grade(tmp_path / "empty", fragment, {"attention.py": ""}, "attention")
    assert empty["gradable"] and empty["score"] == 0
    linked, _ = _grade(tmp_path / "link", fragment,
                       {"attention.py": SOLUTIONS / "day3" / "attention.py"}, "attention")
    assert linked["gradable"] is False       # a link is never followed
    root = tmp_path / "hostile" / "grade"
    secret = root / "serverFilesCourse" / "attn_grade" / "solutions" / "day3" / "attention.py"
    hostile = ("import os\n"
               f"try:\n    print(open({str(secret)!r}).read())\nexcept OSError:\n    pass\n"
               f"try:\n    open({str(root / 'results' / 'results.json')!r}, 'w')"
               ".write('{\"score\": 1}')\nexcept OSError:\n    pass\n"
               "def attention(Q, K, V, causal=True):\n"
               "    raise NotImplementedError\n")
    attack, _ = _grade(tmp_path / "hostile", fragment, {"attention.py": hostile}, "attention")
    assert attack["gradable"] and attack["score"] == 0
    assert "Reference" not in json.dumps(attack)
    cells = [{"cell_type": "code", "metadata": {}, "outputs": [], "execution_count": None,
              "source": (SOLUTIONS / "day3" / "temperature.py").read_text()}]
    notebook = {"nbformat": 4, "nbformat_minor": 5, "metadata": {}, "cells": cells}
    graded, _ = _grade(tmp_path / "notebook", fragment, {"day3.ipynb": json.dumps(notebook)},
                       "temperature", name="whole")
    assert graded["gradable"] and graded["score"] == 1.0


# what PrairieLearn's stock image (prairielearn/grader-python) has of the grader's needs,
# from its graders/python/requirements.txt: no pytest, no pyseccomp
STOCK_PACKAGES = ("numpy", "numpy.libs", "sympy", "mpmath", "packaging", "click", "yaml",
                  "_yaml", "pygments")


@pytest.fixture
def reachable_folder():
    """A folder other users can enter, like the container's /grade (pytest's are 0700)."""
    import tempfile

    folder = Path(tempfile.mkdtemp(prefix="attn-grade-pl-"))
    folder.chmod(0o755)
    yield folder
    shutil.rmtree(folder, ignore_errors=True)


@pytest.fixture
def stock_python(venv_python, reachable_folder):
    """A Python with only the stock image's packages (links into the test venv's)."""
    if os.geteuid() != 0:
        pytest.skip("the process level as root (process-user) needs root")
    site = Path(subprocess.run([venv_python, "-c", "import sysconfig; "
                                "print(sysconfig.get_paths()['purelib'])"],
                               capture_output=True, text=True, check=True).stdout.strip())
    venv = reachable_folder / "venv"
    subprocess.run([os.path.realpath(venv_python), "-m", "venv", "--without-pip", venv],
                   check=True)
    target = next((venv / "lib").glob("python3*")) / "site-packages"
    for name in STOCK_PACKAGES:
        if (site / name).exists():
            (target / name).symlink_to(site / name)
    return venv / "bin" / "python"


@pytest.mark.slow
def test_the_entrypoint_in_the_stock_image_at_the_process_level(fragment, stock_python,
                                                                 reachable_folder,
                                                                 monkeypatch):
    monkeypatch.setenv("ATTN_GRADE_ISOLATION", "process")
    right, _ = _grade(reachable_folder / "right", fragment,
                      {"attention.py": (SOLUTIONS / "day3" / "attention.py").read_text()},
                      "attention", python=str(stock_python))
    assert right["gradable"] and right["score"] == 1.0, right
    assert "process-user" in right["output"]
    assert right["attn_grade"]["isolation"].startswith("process-user")
    secret = (reachable_folder / "peek" / "grade" / "serverFilesCourse" / "attn_grade" /
              "solutions" / "day3" / "attention.py")
    peek = (f"def attention(Q, K, V, causal=True):\n"
            f"    return open({str(secret)!r}).read()\n")
    attack, _ = _grade(reachable_folder / "peek", fragment, {"attention.py": peek},
                       "attention", python=str(stock_python))
    assert secret.is_file()
    assert attack["gradable"] and attack["score"] == 0
    assert "Reference" not in json.dumps(attack)
    assert "Permission denied" in json.dumps(attack)
    shared = (reachable_folder / "via-shared" / "grade" / "shared" / "attn_grade" /
              "solutions" / "day3" / "attention.py")
    attack, _ = _grade(reachable_folder / "via-shared", fragment,
                       {"attention.py": peek.replace(str(secret), str(shared))},
                       "attention", python=str(stock_python))
    assert shared.is_file()
    assert attack["score"] == 0 and "Permission denied" in json.dumps(attack)
