"""Instructor tools: dev check, new, schema, and the one grading of a new exercise, each
through the CLI's commands, in-process through click's CliRunner (conftest.run_here)."""

import json
import shutil

import pytest
from conftest import GOOD, GOOD_HIDDEN, ROOT, make_course, run_here, schema_valid

from grader.course import yaml_source
from grader.course.formats import EXERCISE
from grader.course.spec import Course


def dev_check(course, *args):
    """``attn-grade dev check`` in-process (CliRunner): its student processes are started
    as the CLI starts them, without a Python start and imports per call."""
    return run_here("dev", "check", "--course", course, *args)


def test_tiny_course_passes(tmp_path):
    make_course(tmp_path, hidden=GOOD_HIDDEN)
    proc = dev_check(tmp_path)
    assert proc.returncode == 0, proc.stdout + proc.stderr


@pytest.fixture
def template_starts(tmp_path, monkeypatch):
    """A file with a line (the level) for each template started as a Python of its own,
    written in forks too; skips where there is no zygote to fork templates from."""
    from conftest import session_zygote

    from grader.run.template import Template

    if session_zygote() is None:
        pytest.skip("a zygote needs root and bubblewrap")
    started = tmp_path / "started"
    started.touch()
    real = Template._start

    def logged(self, *args):
        with open(started, "a") as log:
            log.write(f"{self.folder.plan.level}\n")
        return real(self, *args)

    monkeypatch.setattr(Template, "_start", logged)
    return started


def test_dev_check_given_a_zygote_forks_every_template_from_it(template_starts, tmp_path):
    """A grade-worker's (or a test process's) zygote serves both halves of dev check,
    each fork on a socket of its own: no run starts a sandbox and a Python of its own."""
    from conftest import session_zygote

    from grader.instructor.devcheck import check_course

    make_course(tmp_path / "course", hidden=GOOD_HIDDEN)
    findings = check_course(Course(tmp_path / "course"), ["demo"], "bubblewrap", seeds=(0,),
                            zygote=session_zygote())
    assert not [f for f in findings if f.problem], [str(f) for f in findings]
    assert template_starts.read_text() == ""
    assert session_zygote().alive()   # each fork closed its own socket, not the zygote's
    check_course(Course(tmp_path / "course"), ["demo"], "bubblewrap", seeds=(0,))
    assert template_starts.read_text().startswith("bubblewrap\n")   # without it: their own


def test_a_release_given_a_zygote_forks_every_template_from_it(template_starts, tmp_path):
    """release (and the GitHub Classroom export, which makes one) grades the stubs and the
    references: with a grade-worker's zygote, neither starts a Python of its own."""
    from conftest import session_zygote

    from grader.course import loader
    from grader.instructor.release import make_release

    make_course(tmp_path / "course", hidden=GOOD_HIDDEN)
    shutil.copy(ROOT / "pyproject.toml", tmp_path / "course")   # the bundle's install file
    course = Course(tmp_path / "course")
    make_release(course, loader.load_set(course, "demo"), tmp_path / "a", "bubblewrap",
                 zygote=session_zygote())
    assert (tmp_path / "a" / "exercises" / "demo").is_dir()
    assert template_starts.read_text() == ""
    make_release(course, loader.load_set(course, "demo"), tmp_path / "b", "bubblewrap")
    assert template_starts.read_text().startswith("bubblewrap\n")   # without it: their own


def test_tiny_course_without_hidden_checks_lets_a_constant_through(tmp_path):
    make_course(tmp_path)
    proc = dev_check(tmp_path)
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert "the constant stand-in of double scores 2 of 2" in proc.stdout
    assert "\n  exercises/demo/demo.yaml:8: two\n" in proc.stdout   # the check it scored on


@pytest.mark.parametrize("break_it,expected", [
    (lambda root: (root / "exercises/demo/demo.py").write_text(
        "def double(x):\n    return 2 * x\n"),
     "✗ demo/demo: exercises/demo/demo.yaml:8: the stub passes check 'two'"),
    (lambda root: (root / "exercises/demo/demo.yaml").write_text(
        GOOD.replace("args: [2]", "args: [2]\n    expect: 5")),
     "✗ demo/demo: exercises/demo/demo.yaml:8: the reference fails check 'two' (seed 0, 1, 2, "
     "3): expected 5, not 4"),
    (lambda root: (root / "exercises/demo/demo.yaml").write_text(
        GOOD.replace("points: 2", "points: [")),
     "✗ demo: exercises/demo/demo.yaml:8: not valid YAML: a '[' or '{' left open above this "
     "line"),
    (lambda root: (root / "exercises/demo/extra.py").write_text("x = 1\n"),
     "✗ demo: stub extra.py has no exercise YAML"),
    (lambda root: (root / "solutions/demo/other.py").write_text("x = 1\n"),
     "✗ demo: solution other.py has no stub in exercises/"),
])
def test_dev_check_names_what_to_fix(tmp_path, break_it, expected):
    make_course(tmp_path)
    break_it(tmp_path)
    proc = dev_check(tmp_path)
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert expected in proc.stdout


@pytest.mark.parametrize("slip,expected", [
    (lambda root: (root / "exercises/demo/demo.py").write_text(
        "def triple(x):\n    raise NotImplementedError\n"),
     "✗ demo/demo: exercises/demo/demo.yaml:5: double is a graded function, but the stub "
     "demo.py does not define it"),
    (lambda root: (root / "solutions/demo/demo.py").write_text(
        "def twice(x):\n    return 2 * x\n"),
     "✗ demo/demo: exercises/demo/demo.yaml:5: double is a graded function, but the "
     "reference demo.py does not define it"),
    (lambda root: (root / "exercises/demo/demo.py").write_text(
        "def double():\n    raise NotImplementedError\n"),
     "✗ demo/demo: exercises/demo/demo.yaml:8: check 'two' calls double with arguments its "
     "definition in demo.py (line 1) does not take"),
    (lambda root: (root / "exercises/demo/demo.yaml").write_text(
        GOOD.replace("title: {zh: 演示, en: Demo}", "title: {zh: 演示, en: TODO English title}")),
     "✗ demo/demo: exercises/demo/demo.yaml:3: 'TODO English title' is still here, as new "
     "wrote it"),
    (lambda root: (root / "exercises/demo/demo.yaml").write_text(
        GOOD + "misconceptions:\n  - tag: adds\n    message: {zh: 错, en: wrong}\n"
               "    wrong: double_by_adding\n"),
     "✗ demo/demo: exercises/demo/demo.yaml:14: the wrong version double_by_adding of 'adds' "
     "is not defined in the reference demo.py"),
    (lambda root: (root / "solutions/demo/test_demo.py").write_text(
        'def test_doubles(student):\n    """Doubles."""\n    student.double(2)\n'),
     "✗ demo/demo: solutions/demo/test_demo.py:1: hidden test test_doubles asserts nothing"),
    (lambda root: (root / "exercises/demo/demo.yaml").write_text(
        GOOD + "misconceptions:\n  - tag: gave-four\n    message: {zh: 四, en: four}\n"
               "    when: {equals: 4}\n"),
     "✗ demo/demo: the constant stand-in of double is taken for gave-four"),
    (lambda root: (root / "solutions/demo/test_demo.py").write_text(
        'def test_doubles(student):\n    """Doubles."""\n    assert student.double(2) == 4\n'),
     "✗ demo/demo: solutions/demo/test_demo.py:1: hidden test test_doubles says what it "
     "checks in English only"),
    (lambda root: (root / "solutions/demo/demo.hidden.yaml").write_text(
        GOOD_HIDDEN.replace("    description: {zh: 随机抽取的数, en: a drawn number}\n", "")
        .replace("    description: {zh: 另一个随机抽取的数, en: another drawn number}\n", "")),
     "✗ demo/demo: solutions/demo/demo.hidden.yaml:3: hidden check 'drawn-a' says nothing of "
     "what it checks in English and Chinese"),
])
def test_dev_check_holds_the_yaml_to_its_files_naming_file_and_line(tmp_path, slip, expected):
    make_course(tmp_path, hidden=GOOD_HIDDEN)
    slip(tmp_path)
    proc = dev_check(tmp_path)
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert expected in proc.stdout, proc.stdout
    assert proc.stdout.count(expected) == 1


@pytest.mark.parametrize("slip,expected", [
    (lambda root: (root / "exercises/demo/demo.yaml").write_text(
        GOOD.replace("args: [2]", 'args: [2]\n    expect: "4"')),
     "exercises/demo/demo.yaml:8: the reference fails check 'two' (seed 0, 1, 2, 3): returned "
     "an int, expected str"),
    (lambda root: (root / "solutions/demo/test_demo.py").write_text(
        'def test_calls_a_missing_function(student):\n    """Calls."""\n'
        "    assert student.triple(2) == 6\n"),
     "solutions/demo/test_demo.py:1: the reference fails check 'test_calls_a_missing_function' "
     "(seed 0): `triple` is not defined in demo.py"),
    (lambda root: (root / "solutions/demo/test_demo.py").write_text(
        'def test_wrong_claim(student):\n    """Claims."""\n'
        "    assert student.double(2) == 5, 'four is not five'\n"),
     "solutions/demo/test_demo.py:1: the reference fails check 'test_wrong_claim' (seed 0): "
     "the test raised: AssertionError: four is not five"),
])
def test_a_failing_reference_says_why_once_with_its_line(tmp_path, slip, expected):
    make_course(tmp_path, hidden=GOOD_HIDDEN)
    slip(tmp_path)
    proc = dev_check(tmp_path, "--seeds", "4")
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert expected in proc.stdout and proc.stdout.count("the reference fails") == 1, \
        proc.stdout


def test_dev_check_says_its_findings_in_chinese(tmp_path):
    make_course(tmp_path, hidden=GOOD_HIDDEN)
    (tmp_path / "exercises/demo/demo.py").write_text(
        "def triple(x):\n    raise NotImplementedError\n")
    proc = dev_check(tmp_path, "--lang", "zh")
    assert proc.returncode == 1
    assert "double 是要评分的函数，但起始文件 demo.py 没有定义它" in proc.stdout, proc.stdout


def test_wrong_version_that_escapes_is_reported(tmp_path):
    exercise = GOOD + ("misconceptions:\n  - tag: adds-instead\n    message: {zh: 错, en: wrong}\n"
                       "    wrong: double_by_adding\n")
    make_course(tmp_path, exercise=exercise)
    (tmp_path / "solutions/demo/demo.py").write_text(
        "def double(x):\n    return 2 * x\n\n\ndef double_by_adding(x):\n    return x + x\n")
    proc = dev_check(tmp_path)
    assert proc.returncode == 1
    assert "wrong version double_by_adding (as double) escapes every check" in proc.stdout
    (tmp_path / "solutions/demo/demo.py").write_text(
        "import random\n\ndef double(x):\n    return 2 * x\n\n\n"
        "def double_by_adding(x):   # differs run to run: never recognised\n"
        "    return random.random()\n")
    proc = dev_check(tmp_path)
    assert proc.returncode == 1
    assert "fails but is never tagged 'adds-instead'" in proc.stdout


def test_new_exercise_following_the_readme_passes_dev_check(tmp_path):
    course = tmp_path / "course"
    shutil.copytree(ROOT / "exercises", course / "exercises")
    shutil.copytree(ROOT / "solutions", course / "solutions")
    proc = run_here("new", "day3", "head_count", "--course", course)
    assert proc.returncode == 0, proc.stderr
    assert "  - head_count\n" in (course / "exercises/day3/set.yaml").read_text()
    assert dev_check(course, "day3", "--exercise", "head_count").returncode == 1
    yaml_path = course / "exercises/day3/head_count.yaml"
    filled = yaml_path.read_text().replace("args: [3]", "args: [4096, 128]")
    for marker in ("TODO 中文标题", "TODO English title", "TODO 用中文写出任务",
                   "TODO State the task", "TODO 提示", "TODO hint", "TODO"):   # all filled in
        filled = filled.replace(marker, "written")
    yaml_path.write_text(filled)
    (course / "exercises/day3/head_count.py").write_text(
        'def head_count(d_model, d_head):\n    """How many heads? / 几个头？"""\n'
        "    raise NotImplementedError\n")
    (course / "solutions/day3/head_count.py").write_text(
        "def head_count(d_model, d_head):\n    return d_model // d_head\n")
    assert dev_check(course, "day3", "--exercise", "head_count").returncode == 1
    (course / "solutions/day3/head_count.hidden.yaml").write_text(
        "format_version: 1\nchecks:\n"
        "  - id: drawn-model\n"
        "    args: [!model {seed: 1, field: d_model}, !model {seed: 1, field: head_dim}]\n"
        "    compare: exact\n"
        "    description: {zh: 一个随机模型的头数, en: the heads of a drawn model}\n")
    proc = dev_check(course, "day3", "--exercise", "head_count")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    proc = run_here("day3", "--course", course, "--exercise", "head_count",
                    "--submission", course / "solutions/day3")
    assert proc.returncode == 0, proc.stdout


ORDER_HEAD = "format_version: 1\ntitle: {zh: 演示, en: Demo}\n"


@pytest.mark.parametrize("order,expected", [
    ("order: [demo]\n", "order: [demo, extra]\n"),
    ("order: [demo]   # the only one\n", "order: [demo, extra]   # the only one\n"),
    ("order: [demo,\n        other]\n", "order: [demo,\n        other, extra]\n"),
    ("order: [\n  demo,\n  other,\n]\n", "order: [\n  demo,\n  other, extra\n]\n"),
    ("order:\n  - demo\n  - other  # last\n", "order:\n  - demo\n  - other  # last\n  - extra\n"),
    ("order:\n- demo\n- other\nnotes: 1\n", "order:\n- demo\n- other\n- extra\nnotes: 1\n"),
    ("order:\n  - demo", "order:\n  - demo\n  - extra\n"),
])
def test_new_adds_the_id_to_a_flow_or_block_order(tmp_path, order, expected):
    make_course(tmp_path, manifest=ORDER_HEAD + order)
    proc = run_here("new", "demo", "extra", "--course", tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert (tmp_path / "exercises/demo/set.yaml").read_text() == ORDER_HEAD + expected


def test_new_refuses_an_order_it_cannot_extend_naming_the_line(tmp_path):
    make_course(tmp_path, manifest=ORDER_HEAD + "order: []\n")
    proc = run_here("new", "demo", "extra", "--course", tmp_path)
    assert proc.returncode == 2 and "Traceback" not in proc.stderr
    assert "set.yaml:3: could not add 'extra' to 'order'" in proc.stderr
    assert "add 'extra' to 'order' yourself" in proc.stderr


def test_new_refuses_an_existing_exercise(tmp_path):
    make_course(tmp_path)
    proc = run_here("new", "demo", "demo", "--course", tmp_path)
    assert proc.returncode == 2 and "already exists" in proc.stderr


def test_schema_is_in_sync_with_the_loader():
    proc = run_here("schema")
    schema = json.loads(proc.stdout)
    assert set(schema["properties"]) == set(EXERCISE.fields)
    assert set(schema["required"]) == {k for k, f in EXERCISE.fields.items() if f.required}
    check = schema["properties"]["checks"]["items"]
    assert set(check["properties"]) == set(EXERCISE.fields["checks"].type.item.fields)


def _plain(value):
    if isinstance(value, yaml_source.Tagged):
        return _plain(value.value)
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_plain(v) for v in value]
    return value


def test_schema_accepts_every_bundled_exercise_and_rejects_a_typo():
    jsonschema = pytest.importorskip(
        "jsonschema", reason="needs the test extra: pip install -e '.[test]'")
    schema = json.loads(run_here("schema").stdout)
    files = [p for p in (ROOT / "exercises").glob("*/*.yaml") if p.name != "set.yaml"]
    assert files
    for path in files:
        schema_valid(_plain(yaml_source.load(path)), schema)
    broken = _plain(yaml_source.load(files[0]))
    broken["pionts"] = broken.pop("points")
    with pytest.raises(jsonschema.ValidationError):
        schema_valid(broken, schema)


def test_the_wrong_version_folder_changes_in_place_and_staging_sees_each_change():
    """dev check's one folder per set: each version's files get an mtime a whole second
    past any before (two versions of one size still differ to staging), and the next
    version finds the others as they were."""
    from grader.course import loader
    from grader.course.spec import Course
    from grader.instructor.devcheck import WrongSubmission

    exercise_set = loader.load_set(Course(ROOT), "day3")
    temperature = exercise_set.exercise("temperature")
    submission = WrongSubmission(exercise_set)
    try:
        folder = submission.use(temperature, "softmax_times_t", "softmax")
        first = (folder / "temperature.py").stat().st_mtime_ns
        assert "softmax = _bind(_reference.softmax_times_t)" in (folder / "temperature.py"
                                                                  ).read_text()
        folder = submission.use(exercise_set.exercise("attention"), None, None)
        assert (folder / "temperature.py").stat().st_mtime_ns >= first + 10 ** 9
        assert (folder / "temperature.py").read_text() == submission.pristine["temperature.py"]
        assert not (folder / "_attn_grade_reference_temperature.py").exists()
    finally:
        submission.close()
