"""What a student's folder holds is hostile input (issue 28): a malformed notebook, a
huge one, a crafted progress file, links where the grader writes.  None may cost the
class its gradebook, and the grader never writes outside the folder through a link."""

import csv
import json
import os
import shutil

import pytest
from conftest import EXERCISES, ROOT, SOLUTIONS, run_here

from grader.instructor import notebook_cells
from grader.instructor.uploads import SubmissionError
from grader.report.progress import Progress

NO_STATE = shutil.ignore_patterns(".attn-grade")   # a copy of exercises/ has no progress


def _notebook(cells):
    return {"cells": cells, "metadata": {}, "nbformat": 4, "nbformat_minor": 5}


def _code(source, file=None):
    cell = {"cell_type": "code", "source": source, "metadata": {}, "outputs": []}
    if file:
        cell["metadata"] = {"attn_grade": {"file": file}}
    return cell


TEMPERATURE = (SOLUTIONS / "day3" / "temperature.py").read_text(encoding="utf-8")
MALFORMED = {
    "number-in-source": json.dumps(_notebook([_code(["def f():\n", 7, "    pass\n"])])),
    "deep": "[" * 100_000 + "]" * 100_000,
    "deep-in-cells": json.dumps(_notebook([])).replace('"cells": []',
                                                       '"cells": ' + "[" * 50_000
                                                       + "]" * 50_000),
    "cells-a-dict": json.dumps({"cells": {"source": "x"}}),
    "metadata-a-list": json.dumps(_notebook([{"cell_type": "code", "source": "x = 1",
                                              "metadata": [1, 2]}])),
    "tag-a-number": json.dumps(_notebook([{"cell_type": "code", "source": "x = 1",
                                           "metadata": {"attn_grade": {"file": 3}}}])),
    "not-utf8": b"\xff\xfe{}",
}


@pytest.mark.parametrize("name", sorted(MALFORMED))
def test_a_malformed_notebook_is_the_students_error_never_the_graders(tmp_path, name):
    path = tmp_path / "work.ipynb"
    data = MALFORMED[name]
    path.write_bytes(data if isinstance(data, bytes) else data.encode())
    with pytest.raises(SubmissionError) as caught:
        notebook_cells.collect(path, ("temperature.py",), tmp_path / "out")
    assert caught.value.said("zh") != caught.value.said("en")


@pytest.mark.parametrize("jobs", ["1", "2"])
def test_one_malformed_notebook_costs_the_class_nothing_but_its_own_row(tmp_path, jobs):
    """A notebook whose cell source holds a number, and JSON nested 100,000 deep, beside
    two students who did the work: the gradebook has all four, each result file too."""
    class_dir = tmp_path / "class"
    class_dir.mkdir()
    for student in ("alice", "dave"):
        shutil.copytree(EXERCISES / "day3", class_dir / student, ignore=NO_STATE)
        (class_dir / student / "temperature.py").write_text(TEMPERATURE)
    (class_dir / "bob.ipynb").write_text(MALFORMED["number-in-source"])
    (class_dir / "carol.ipynb").write_text(MALFORMED["deep"])
    out = tmp_path / "out"
    proc = run_here("grade-all", "day3", class_dir, "-o", out, "--jobs", jobs,
                    "--exercise", "temperature", "--lang", "zh")
    assert proc.returncode == 0, proc.stderr
    rows = {row["student"]: row for row in csv.DictReader(open(out / "gradebook.csv"))}
    assert sorted(rows) == ["alice", "bob", "carol", "dave"]
    assert [rows[s]["status"] for s in ("alice", "bob", "carol", "dave")] == \
        ["graded", "error", "error", "graded"]
    assert float(rows["alice"]["score"]) == float(rows["dave"]["score"]) == 10
    said = {student: json.loads((out / "results" / f"{student}.json").read_text())["output"]
            for student in ("bob", "carol")}
    assert said == {"bob": "bob.ipynb 不是能打开的笔记本文件：第 1 个单元格的结构不对",
                    "carol": "carol.ipynb 不是笔记本文件（内容无法按笔记本格式读取）"}


def test_anything_unforeseen_while_preparing_a_student_is_their_row(tmp_path, monkeypatch,
                                                                    capsys):
    from grader.course import loader
    from grader.course.spec import Course
    from grader.instructor import gradebook

    def broken(*args):
        raise RuntimeError("a bug of the grader's")

    monkeypatch.setattr(gradebook, "_prepare", broken)
    exercise_set = loader.load_set(Course(ROOT), "day3")
    student = gradebook.Submission("ana", "ana", (tmp_path,))
    doc, folder, digest = gradebook._prepared(student, exercise_set, exercise_set.exercises,
                                              tmp_path, "zh")
    assert folder is None and digest is None and doc["extra_data"]["status"] == "error"
    assert doc["output"] == "未评分：这份提交无法准备评分（RuntimeError）；详情在教师那里"
    assert doc["max_score"] == 125
    assert "a bug of the grader's" in capsys.readouterr().err   # for the instructor


def test_a_huge_notebook_is_refused_before_it_is_read(tmp_path, monkeypatch):
    """3 GiB of notebook (a sparse file): refused by its size, never read whole."""
    path = tmp_path / "huge.ipynb"
    with open(path, "wb") as f:
        f.truncate(3 * 1024 ** 3)
    read = []
    real_read = os.read

    def counting_read(fd, n):
        read.append(n)
        return real_read(fd, n)

    monkeypatch.setattr(os, "read", counting_read)
    with pytest.raises(SubmissionError) as caught:
        notebook_cells.read(path)
    assert caught.value.msg.code == "upload-too-large"
    assert sum(read) <= notebook_cells.MAX_NOTEBOOK_BYTES + 1


# ------------------------------------------------------------ .attn-grade/ in an upload

@pytest.mark.parametrize("progress", [
    {"version": 1, "sets": {"day3": {"growth": "x"}}},
    {"version": 1, "sets": {"day3": {"temperature": {"hints": "<b>lots</b>", "best": "x"}}}},
    {"version": 1, "sets": {"day3": {"temperature": {"hints": 10 ** 30}}}},
    {"version": 1, "sets": {"day3": ["x"]}},
    {"version": 1, "sets": ["day3"]},
    [1, 2, 3],
])
def test_a_crafted_progress_file_is_ignored_not_an_internal_error(tmp_path, progress):
    folder = tmp_path / "sub"
    shutil.copytree(EXERCISES / "day3", folder, ignore=NO_STATE)
    (folder / ".attn-grade").mkdir()
    (folder / ".attn-grade" / "progress.json").write_text(json.dumps(progress))
    mine = Progress(folder)
    hints = mine.hints_used("day3")
    assert all(type(v) is int and 0 <= v <= 100 for v in hints.values()), hints
    proc = run_here("day3", "--upload", folder, "--exercise", "temperature", "--json",
                    "--lang", "en")
    assert proc.returncode == 1, proc.stderr
    document = json.loads(proc.stdout)
    used = document["extra_data"].get("hints_used", {})
    assert all(type(v) is int for v in used.values()) and "<b>" not in proc.stdout


# ------------------------------------------------------------ links where the grader writes

@pytest.fixture
def outside(tmp_path):
    """A file outside the student's folder that a link would have the grader overwrite."""
    target = tmp_path / "outside.txt"
    target.write_text("precious")
    return target


def _submission(tmp_path):
    folder = tmp_path / "sub"
    shutil.copytree(EXERCISES / "day3", folder, ignore=NO_STATE)
    return folder


@pytest.mark.parametrize("link", ["progress.json.tmp", "progress.json", "folder"])
def test_the_grader_never_writes_through_a_link_in_the_students_folder(tmp_path, outside,
                                                                       link):
    folder = _submission(tmp_path)
    state = folder / ".attn-grade"
    if link == "folder":
        elsewhere = tmp_path / "elsewhere"
        elsewhere.mkdir()
        (elsewhere / "progress.json").symlink_to(outside)
        state.symlink_to(elsewhere)
    else:
        state.mkdir()
        (state / link).symlink_to(outside)
    proc = run_here("day3", "--submission", folder, "--exercise", "temperature",
                    "--lang", "en")
    assert proc.returncode == 1, proc.stderr
    proc = run_here("hint", "day3", "temperature", "--submission", folder, "--lang", "en")
    assert proc.returncode == 0, proc.stderr
    assert outside.read_text() == "precious"
    if link == "folder":   # nothing written where the link leads
        assert [p.name for p in (tmp_path / "elsewhere").iterdir()] == ["progress.json"]
        assert (tmp_path / "elsewhere" / "progress.json").is_symlink()
    else:
        assert (state / link).is_symlink() or link == "progress.json"


def test_progress_is_still_kept_where_no_link_is_planted(tmp_path):
    folder = _submission(tmp_path)
    proc = run_here("hint", "day3", "temperature", "--submission", folder, "--lang", "en")
    assert proc.returncode == 0, proc.stderr
    assert Progress(folder).hints_used("day3") == {"temperature": 1}


# ------------------------------------------------------------ ag.check's grader process

FAKE_CLICK = '''
import json, sys
open({marker!r}, "w").write("imported")
print(json.dumps({{"score": 10, "max_score": 10, "tests": [], "output": "10 / 10 passed"}}))
sys.exit(0)
'''


def test_ag_check_never_imports_what_lies_beside_the_notebook(tmp_path, monkeypatch):
    """A click.py beside the notebook (the grader process's cwd) would be imported first
    by ``python -m grader`` and could print any score for unfilled stubs."""
    from grader import notebook as ag

    marker = tmp_path / "IMPORTED"
    (tmp_path / "click.py").write_text(FAKE_CLICK.format(marker=str(marker)))
    stub = (EXERCISES / "day3" / "temperature.py").read_text(encoding="utf-8")
    (tmp_path / "work.ipynb").write_text(json.dumps(_notebook([
        _code(stub, file="temperature.py"), _code("ag.check('temperature')")])))
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("PYTHONPATH", str(tmp_path))   # what a kernel's environment may hold
    ag.init("day3", path=tmp_path / "work.ipynb", course=ROOT, lang="en")
    result = ag.check("temperature")
    assert not marker.exists()
    assert result.max_score == 10 and result.score == 0, repr(result)


def test_a_result_that_cannot_be_written_or_read_back_is_its_students_row(tmp_path,
                                                                          monkeypatch):
    from grader.course import loader
    from grader.course.spec import Course
    from grader.instructor import gradebook

    exercise_set = loader.load_set(Course(ROOT), "day3")
    (tmp_path / "bad.json").write_text('{"score": "lots", "extra_data": {}}')
    doc = gradebook._read_result(tmp_path / "bad.json", "day3", exercise_set.exercises, "zh")
    assert doc["output"] == "之前的结果 bad.json 无法读取；请加 --force 重新评分"
    class_dir = tmp_path / "class"
    for student in ("ana", "ben"):
        shutil.copytree(EXERCISES / "day3", class_dir / student, ignore=NO_STATE)
    real = gradebook._write_json

    def full_disk(path, document):
        if path.name == "ana.json":
            raise OSError(28, "No space left on device")
        real(path, document)

    monkeypatch.setattr(gradebook, "_write_json", full_disk)
    rows = gradebook.grade_all(Course(ROOT), exercise_set, class_dir, tmp_path / "out", 1,
                               only={"growth"}, lang="en")
    assert [(row["student"], row["status"]) for row in rows] == [("ana", "error"),
                                                                 ("ben", "graded")]
    assert (tmp_path / "out" / "gradebook.csv").is_file()
