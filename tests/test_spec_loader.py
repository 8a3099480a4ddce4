"""The spec loader: the bundled course loads; broken files get path, line, hint."""


import os
import time
import types

import pytest
from conftest import GOOD, ROOT, make_course

from grader.course import cache
from grader.course import loader as spec_loader
from grader.course.spec import Course
from grader.errors import CourseError


def load_error(tmp_path, **kwargs):
    with pytest.raises(CourseError) as info:
        spec_loader.load_set(make_course(tmp_path, **kwargs), "demo")
    return info.value


def test_bundled_sets_load():
    course = Course(ROOT)
    for set_id in course.set_ids():
        exercise_set = spec_loader.load_set(course, set_id)
        assert exercise_set.exercises
        for exercise in exercise_set.exercises:
            assert exercise.checks or exercise.test_files


def test_good_file_loads(tmp_path):
    exercise = spec_loader.load_set(make_course(tmp_path), "demo").exercises[0]
    assert exercise.functions == ("double",) and exercise.checks[0].function == "double"
    assert exercise.checks[0].line == 8


CORPUS = {
    "bad indentation": (GOOD.replace("  - id: two\n    args", "  - id: two\n   args"),
                        9, "not valid YAML"),
    "wrong type": (GOOD.replace("points: 2", "points: lots"), 6,
                   "points: expected a number >= 0, got 'lots'"),
    "unknown key": (GOOD.replace("points: 2", "pionts: 2"), 6, "did you mean 'points'?"),
    "unknown compare kind": (GOOD.replace("compare: exact", "compare: exakt"), 10,
                             "did you mean 'exact'?"),
    "missing required": (GOOD.replace("functions: [double]\n", ""), 1,
                         "functions: missing required key"),
    "duplicate key": (GOOD + "points: 3\n", 11, "duplicate key 'points' (first on line 6)"),
    "duplicate check id": (GOOD + "  - id: two\n    args: [3]\n    compare: exact\n", 11,
                           "duplicate check id 'two'"),
    "call of unknown function": (GOOD.replace("args: [2]", "call: dubble\n    args: [2]"), 8,
                                 "did you mean 'double'?"),
    "param not for kind": (GOOD.replace("compare: exact", "compare: {kind: shape, rtol: 1}"),
                           10, "'rtol' does not apply to compare kind 'shape'"),
    "unknown tag": (GOOD.replace("args: [2]", "args: [!arry [1, 2]]"), 9,
                    "did you mean '!array'?"),
    "unquoted comma in flow text": (
        GOOD.replace("{zh: 演示, en: Demo}", "{zh: 演示 1,000, en: Demo}"),
        3, "got keys 'zh', 0, 'en'"),
    "missing bilingual half": (GOOD.replace("{zh: 演示, en: Demo}", "{en: Demo}"), 3,
                               "both 'zh' and 'en'"),
    "wrong format version": (GOOD.replace("format_version: 1", "format_version: 7"), 1,
                             "format_version: expected one of 1"),
    "id differs from file": (GOOD.replace("id: demo", "id: other"), 2,
                             "id: expected the id 'demo'"),
    "misconception without rule": (GOOD + "misconceptions:\n  - tag: oops\n    message: "
                                   "{zh: 错, en: wrong}\n", 12, "exactly one of 'wrong'"),
}


@pytest.mark.parametrize("name", sorted(CORPUS))
def test_broken_exercise_file_names_file_and_line(tmp_path, name):
    text, line, fragment = CORPUS[name]
    error = load_error(tmp_path, exercise=text)
    message = str(error)
    assert error.path.name == "demo.yaml", message
    assert error.line == line, message
    assert message.startswith(f"{error.path}:{line}: "), message
    assert fragment in message


def test_hidden_file_may_not_hold_visible_checks(tmp_path):
    hidden = "format_version: 1\nchecks:\n  - id: h\n    args: [5]\n    compare: exact\n" \
             "    visibility: visible\n"
    error = load_error(tmp_path, hidden=hidden)
    assert error.path.name == "demo.hidden.yaml" and error.line == 3
    assert "hidden checks only" in str(error)


def test_manifest_must_list_every_exercise(tmp_path):
    manifest = "format_version: 1\ntitle: {zh: 演示, en: Demo}\norder: [demo, extra]\n"
    error = load_error(tmp_path, manifest=manifest)
    assert "no file extra.yaml" in str(error) and error.path.name == "set.yaml"


def test_missing_stub_is_reported(tmp_path):
    course = make_course(tmp_path)
    (tmp_path / "exercises" / "demo" / "demo.py").unlink()
    with pytest.raises(CourseError, match="the stub demo.py is missing"):
        spec_loader.load_set(course, "demo")


def test_unknown_set_suggests_a_name(tmp_path):
    with pytest.raises(CourseError) as info:
        spec_loader.load_set(make_course(tmp_path), "dmeo")
    assert "did you mean 'demo'?" in str(info.value)


def test_course_is_found_from_a_subfolder(tmp_path):
    make_course(tmp_path)
    deep = tmp_path / "exercises" / "demo"
    assert spec_loader.find_course(deep).root == tmp_path.resolve()
    with pytest.raises(CourseError, match="no course found"):
        spec_loader.find_course(tmp_path.parent)


def _later(monkeypatch, seconds):
    """The cache's clock ``seconds`` ahead: every file is past its racy window (a file's
    ctime, which says when it last changed, cannot be dated back)."""
    real = time.time_ns
    monkeypatch.setattr(cache, "time", types.SimpleNamespace(
        time_ns=lambda: real() + seconds * 1_000_000_000))


def test_a_process_loads_an_unchanged_set_once_and_sees_any_edit(tmp_path, monkeypatch):
    """A worker or watch loop reloads the set for every grading: an unchanged one costs
    no file read, hash or unpickle; an edit, even of the same size, is a new load."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    monkeypatch.delenv(cache.ENV_SWITCH, raising=False)
    make_course(tmp_path / "course", GOOD.replace("points: 2", "points: 3"))
    course = Course(tmp_path / "course")
    _later(monkeypatch, 60)
    first = spec_loader.load_set(course, "demo").exercises[0]
    second = spec_loader.load_set(course, "demo").exercises[0]   # read from the cache
    monkeypatch.setattr(cache, "_key", lambda *a: pytest.fail("hashed the files again"))
    monkeypatch.setattr(cache, "read", lambda *a: pytest.fail("read the entry again"))
    assert spec_loader.load_set(course, "demo").exercises[0] is second
    assert second.points == first.points == 3
    monkeypatch.undo()
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    yaml_file = course.root / "exercises" / "demo" / "demo.yaml"
    yaml_file.write_text(yaml_file.read_text().replace("points: 3", "points: 4"))
    assert spec_loader.load_set(course, "demo").exercises[0].points == 4
    # rewritten within the clock's grain: same size, same mtime, same inode
    stamp = yaml_file.stat().st_mtime_ns
    yaml_file.write_text(yaml_file.read_text().replace("points: 4", "points: 5"))
    os.utime(yaml_file, ns=(stamp, stamp))
    assert spec_loader.load_set(course, "demo").exercises[0].points == 5


def test_a_set_rewritten_in_place_and_dated_back_is_loaded_again(tmp_path, monkeypatch):
    """cp -p, touch -r, tar or unzip of a bundle with fixed dates: same size, same inode,
    the old mtime; only the ctime tells that the file changed."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    monkeypatch.delenv(cache.ENV_SWITCH, raising=False)
    make_course(tmp_path / "course", GOOD.replace("points: 2", "points: 3"))
    course = Course(tmp_path / "course")
    _later(monkeypatch, 60)
    assert spec_loader.load_set(course, "demo").exercises[0].points == 3
    yaml_file = course.root / "exercises" / "demo" / "demo.yaml"
    before = yaml_file.stat()
    yaml_file.write_text(yaml_file.read_text().replace("points: 3", "points: 7"))
    os.utime(yaml_file, ns=(before.st_atime_ns, before.st_mtime_ns))
    assert yaml_file.stat().st_ino == before.st_ino
    assert spec_loader.load_set(course, "demo").exercises[0].points == 7


def test_a_dangling_link_named_py_does_not_stop_a_load(tmp_path, monkeypatch):
    """Only a Python file's name is in the key: a link to nothing (an editor's, a file
    removed while the set loads) is no reason to fail."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    monkeypatch.delenv(cache.ENV_SWITCH, raising=False)
    make_course(tmp_path / "course", GOOD)
    course = Course(tmp_path / "course")
    (course.root / "exercises" / "demo" / "scratch.py").symlink_to(tmp_path / "gone.py")
    assert spec_loader.load_set(course, "demo").exercises[0].id == "demo"


YAML_SLIPS = {   # a slip in the YAML -> (line, English, Chinese), PyYAML's words as the detail
    "a tab": ("format_version: 1\n\tid: demo\n", 2,
              "not valid YAML: a tab: YAML indents with spaces only",
              "YAML 写法有误：这里有制表符，YAML 只能用空格缩进"),
    "an open brace": ("format_version: 1\ntitle: {zh: 演示, en: Demo\n", 3,
                      "not valid YAML: a '{' without its closing '}' (or a ',' missing)",
                      "YAML 写法有误：'{' 没有对应的 '}'（或少了逗号）"),
    "a second colon": ("format_version: 1\ntitle: a: b\n", 2,
                       "not valid YAML: a ':' where a value was expected",
                       "YAML 写法有误：这里本该是一个值，却出现了冒号"),
    "an open quote": ("format_version: 1\ntitle: 'Demo\n", 3,
                      "not valid YAML: a quote without its closing quote",
                      "YAML 写法有误：引号没有闭合"),
}


@pytest.mark.parametrize("name", sorted(YAML_SLIPS))
def test_a_yaml_slip_is_said_in_our_words_in_each_language(tmp_path, monkeypatch, name):
    from grader.cli import common

    text, line, english, chinese = YAML_SLIPS[name]
    error = load_error(tmp_path, exercise=text)
    assert error.line == line and str(error).startswith(f"{error.path}:{line}: {english}")
    assert "(PyYAML: " in str(error)   # its own words kept, as the detail
    monkeypatch.setattr("sys.argv", ["attn-grade", "demo", "--lang", "zh"])
    said = common._in_language(error)
    assert said.startswith(f"{error.path}:{line}: {chinese}") and "(PyYAML: " in said


@pytest.mark.parametrize("order,line,fragment", [
    ("order:\n  - demo\n  - gone\n", 5, "order: no file gone.yaml"),
    ("order:\n  - demo\n  - demo\n", 5, "order: 'demo' is listed twice"),
    ("order: []\n", 3, "order: expected a list of at least 1 item"),
])
def test_a_set_yaml_problem_names_its_line(tmp_path, order, line, fragment):
    manifest = "format_version: 1\ntitle: {zh: 演示, en: Demo}\n" + order
    error = load_error(tmp_path, manifest=manifest)
    assert error.line == line and fragment in error.message, str(error)


def test_a_cold_load_of_one_exercise_reads_only_its_own_files(tmp_path, monkeypatch):
    """A fresh container (PrairieLearn, a class worker's first student) grading one
    exercise parses the manifest and that exercise's files, not the whole set, and stores
    them; a whole-set load then parses only the rest, and stores it."""
    from grader.course import yaml_source

    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    monkeypatch.delenv(cache.ENV_SWITCH, raising=False)
    course = make_course(tmp_path / "course", manifest=(
        "format_version: 1\ntitle: {zh: 演示, en: Demo}\norder: [demo, other]\n"))
    ex = course.root / "exercises" / "demo"
    (ex / "other.yaml").write_text(GOOD.replace("id: demo", "id: other")
                                   .replace("title:", "file: demo.py\ntitle:", 1))
    read = []
    real_load = yaml_source.load
    monkeypatch.setattr(yaml_source, "load", lambda path: read.append(path.name)
                        or real_load(path))
    _later(monkeypatch, 60)
    one = spec_loader.load_set(course, "demo", only=["other"])
    assert [e.id for e in one.exercises] == ["other"] and sorted(read) == ["other.yaml",
                                                                           "set.yaml"]
    with pytest.raises(CourseError, match="(?s)no exercise .nosuch.*demo, other"):
        spec_loader.load_set(course, "demo", only=["nosuch"])
    read.clear()
    assert [e.id for e in spec_loader.load_set(course, "demo").exercises] == ["demo", "other"]
    assert sorted(read) == ["demo.yaml", "set.yaml"]   # other.yaml was stored
    read.clear()
    cache._LOADED.clear()
    cache._EXERCISES.clear()   # a new process: from the file alone
    assert [e.id for e in spec_loader.load_set(course, "demo").exercises] == ["demo", "other"]
    assert read == []


def test_yaml_read_by_libyaml_keeps_lines_and_pyyamls_words_for_errors(tmp_path):
    """The fast parser gives the same lines; a file it refuses is parsed again by
    PyYAML's own, whose problem texts the catalogue rephrases."""
    import yaml

    from grader.course import yaml_source

    assert yaml_source._FAST is getattr(yaml, "CSafeLoader", yaml.SafeLoader)
    path = tmp_path / "x.yaml"
    path.write_text("a: 1\nb:\n  - 2\n  - !array [3]\n")
    data = yaml_source.load(path)
    assert data.key_lines == {"a": 1, "b": 2} and data["b"].item_lines == [3, 4]
    assert data["b"][1].tag == "!array" and data["b"][1].line == 4
    path.write_text("a: 1\nb:\n\t- 2\n")
    with pytest.raises(CourseError) as info:
        yaml_source.load(path)
    assert info.value.line == 3 and "a tab" in str(info.value)


def test_a_course_named_relatively_is_loaded_with_absolute_paths(tmp_path, monkeypatch):
    """Every process shares the set cache: an entry written by one that named the course
    relatively sent another, in another folder, to files that are not there."""
    from pathlib import Path

    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    make_course(tmp_path / "course")
    monkeypatch.chdir(tmp_path)
    course = Course(Path("course"))
    assert course.root == tmp_path / "course"
    exercise = spec_loader.load_set(course, "demo").exercises[0]
    assert exercise.spec_path.is_absolute() and exercise.solution_path.is_absolute()
