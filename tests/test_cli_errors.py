"""Bad instructor input: exit 2, the path (and line), what to do, no traceback.

Each is found before any student file runs, so the CLI runs in-process (click's CliRunner).
"""

import json
import shutil

import pytest
from conftest import ROOT, invoke, run_cli


@pytest.fixture
def course(tmp_path):
    root = tmp_path / "course"
    shutil.copytree(ROOT / "exercises", root / "exercises")
    shutil.copytree(ROOT / "solutions", root / "solutions")
    return root


def grade(course):
    proc = invoke("day3", "--course", course, "--submission", course / "solutions" / "day3",
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
    proc = invoke("day3", "--course", course, "--submission",
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
    proc = invoke("day3", "--course", course, "--json")
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
    proc = invoke("export", "gradescope", "day3", "-o", made, "--lang", "zh")
    assert proc.returncode == 0 and made.is_file(), proc.stderr
    assert "已写入" in proc.stdout and "upload" not in proc.stdout
    (tmp_path / "file").write_text("")
    proc = invoke("export", "gradescope", "day3", "-o", tmp_path / "file" / "x.zip",
                  "--lang", "zh")
    assert proc.returncode == 2 and "Traceback" not in proc.stderr
    assert "无法写入" in proc.stderr and "上级文件夹" in proc.stderr
    proc = invoke("export", "gradescope", "day3", "-o", tmp_path, "--lang", "zh")
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
    proc = invoke("day3", "--upload", upload, "--json", "--lang", "zh")
    output = json.loads(proc.stdout)["output"]
    assert "未评分" in output and "两个名为 attention.py 的文件" in output, output
    assert "upload" not in output
    empty = tmp_path / "empty"
    empty.mkdir()
    output = json.loads(invoke("day3", "--upload", empty, "--json", "--lang", "zh").stdout)[
        "output"]
    assert "没有这些文件中的任何一个" in output and "none of" not in output, output
