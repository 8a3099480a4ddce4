"""Bad instructor input: exit 2, the path (and line), what to do, no traceback.

Each is found before any student file runs, so the CLI runs in-process (click's CliRunner).
"""

import json
import shutil

import pytest
from conftest import ROOT, run_cli, run_here


@pytest.fixture
def course(tmp_path):
    root = tmp_path / "course"
    shutil.copytree(ROOT / "exercises", root / "exercises")
    shutil.copytree(ROOT / "solutions", root / "solutions")
    return root


def grade(course):
    proc = run_here("day3", "--course", course, "--submission", course / "solutions" / "day3",
                   "--json")
    assert proc.returncode == 2, proc.stdout[-2000:]
    assert "Traceback" not in proc.stderr and proc.stdout == ""
    return proc.stderr


def test_missing_stub(course):
    (course / "exercises" / "day3" / "attention.py").unlink()
    message = grade(course)
    assert "attention.yaml: the stub attention.py is missing" in message


def test_missing_solution(course):
    (course / "solutions" / "day3" / "temperature.py").unlink()
    shutil.copy(ROOT / "solutions" / "day3" / "temperature.py",
                course / "temperature.py")  # keep the submission complete elsewhere
    proc = run_here("day3", "--course", course, "--submission",
                   ROOT / "solutions" / "day3", "--json")
    assert proc.returncode == 2 and "Traceback" not in proc.stderr
    assert "solutions/day3/temperature.py: the reference solution temperature.py is missing" \
        in proc.stderr


def test_function_named_in_yaml_but_absent_from_solution(course):
    path = course / "solutions" / "day3" / "temperature.py"
    path.write_text(path.read_text().replace("def greedy(", "def greedy_renamed("))
    message = grade(course)
    assert "the solution has no function 'greedy'" in message
    assert "solutions/day3/temperature.py" in message


def test_reference_that_raises_names_the_check_and_line(course):
    path = course / "solutions" / "day3" / "temperature.py"
    path.write_text(path.read_text().replace("    return int(np.argmax(np.asarray(logits)))",
                                             "    raise KeyError('oops')"))
    message = grade(course)
    assert "temperature.yaml:" in message and "the reference greedy() raised KeyError" in message
    assert "check 'greedy'" in message


def test_hidden_test_with_undeclared_tag(course):
    path = course / "solutions" / "day3" / "test_temperature.py"
    path.write_text(path.read_text().replace('"temperature-multiplied"', '"no-such-tag"'))
    bad = course / "exercises" / "day3" / "temperature.py"
    bad.write_text(bad.read_text())
    proc = run_here("day3", "--course", course, "--json")
    assert proc.returncode == 2 and "misconception 'no-such-tag' is not declared" in proc.stderr


def test_broken_hidden_test_file(course):
    (course / "solutions" / "day3" / "test_attention.py").write_text("import nosuchmodule\n")
    message = grade(course)
    assert "hidden tests could not be collected" in message and "nosuchmodule" in message


def test_version_has_one_source():
    import grader

    proc = run_cli("--version")
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.split() == ["attn-grade,", "version", grader.__version__]


def test_an_output_file_gets_its_folder_or_a_message_in_the_users_language(tmp_path):
    """``-o`` names a file: a missing folder is made; a path that cannot be written is
    said in --lang, with no traceback."""
    made = tmp_path / "new" / "autograder.zip"
    proc = run_here("export", "gradescope", "day3", "-o", made, "--lang", "zh")
    assert proc.returncode == 0 and made.is_file(), proc.stderr
    assert "已写入" in proc.stdout and "upload" not in proc.stdout
    (tmp_path / "file").write_text("")
    proc = run_here("export", "gradescope", "day3", "-o", tmp_path / "file" / "x.zip",
                  "--lang", "zh")
    assert proc.returncode == 2 and "Traceback" not in proc.stderr
    assert "无法写入" in proc.stderr and "上级文件夹" in proc.stderr
    proc = run_here("export", "gradescope", "day3", "-o", tmp_path, "--lang", "zh")
    assert proc.returncode == 2 and "Traceback" not in proc.stderr, proc.stderr
    assert "无法写入" in proc.stderr and "文件夹" in proc.stderr and "directory" not in proc.stderr
    assert not list(tmp_path.glob("*.tmp"))


def test_an_upload_that_cannot_be_graded_is_told_in_the_students_language(tmp_path):
    """What is wrong with an upload (two files of one name; none of the files) reaches
    the student in --lang, as a Gradescope bundle shows it."""
    upload = tmp_path / "upload"
    (upload / "work").mkdir(parents=True)
    for where in (upload, upload / "work"):
        (where / "attention.py").write_text("")
    proc = run_here("day3", "--upload", upload, "--json", "--lang", "zh")
    output = json.loads(proc.stdout)["output"]
    assert "未评分" in output and "两个名为 attention.py 的文件" in output, output
    assert "upload" not in output
    empty = tmp_path / "empty"
    empty.mkdir()
    output = json.loads(run_here("day3", "--upload", empty, "--json", "--lang", "zh").stdout)[
        "output"]
    assert "没有这些文件中的任何一个" in output and "none of" not in output, output


@pytest.mark.parametrize("lang, said", [("en", "internal error in attn-grade"),
                                        ("zh", "attn-grade 内部错误")])
def test_an_internal_error_exits_3_with_its_traceback(monkeypatch, lang, said):
    """A bug in the grader is neither a failed check (1) nor a course error (2)."""
    from grader.cli import student

    def broken(course_dir):
        raise RuntimeError("a bug")

    monkeypatch.setattr(student, "load_course", broken)
    monkeypatch.setenv("LC_ALL", f"{lang}_XX.UTF-8")
    proc = run_here("list")
    assert proc.returncode == 3
    assert proc.stderr.startswith(said) and "RuntimeError: a bug" in proc.stderr


def test_the_help_and_the_readme_list_the_exit_codes():
    from pathlib import Path

    help_text = run_here("--help").stdout
    readme = (Path(ROOT) / "README.md").read_text(encoding="utf-8")
    for code in range(4):
        assert f"  {code}  " in help_text
        assert f"`{code}`" in readme
    assert "internal error" in help_text and "internal error" in readme


def test_a_grade_job_reads_back_what_it_wrote_and_refuses_anything_else():
    from grader.instructor.grade_job import GradeJob

    job = GradeJob("day3", str(ROOT), "/tmp/ada", "ada", "zh", ("temperature",),
                   "process", "process-user", {"time": 2.0, "memory": 1 << 30})
    assert GradeJob.from_plain(json.loads(json.dumps(job.to_plain()))) == job
    for bad in (["day3"], {"set_id": "day3"}, {**job.to_plain(), "argv": ["--json"]}):
        with pytest.raises(ValueError):
            GradeJob.from_plain(bad)


def test_a_workers_internal_error_is_its_students_row_with_code_3(monkeypatch, capsys):
    """A grade-worker answers a job whose grading hit a bug with exit code 3 and the
    traceback (grade-all then writes that student's error row), and goes on."""
    from grader.cli import worker
    from grader.instructor import grade_job

    def broken(job, warm):
        raise RuntimeError("a bug")

    monkeypatch.setattr(grade_job, "grade", broken)
    plain = grade_job.GradeJob("day3", str(ROOT), str(ROOT / "exercises" / "day3")).to_plain()
    code, document = worker._graded(plain, None)
    assert (code, document) == (3, None)
    assert "RuntimeError: a bug" in capsys.readouterr().err
