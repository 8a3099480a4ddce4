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
from pathlib import Path
from unittest import mock

import pytest
from conftest import DAY3_MAX, EXERCISES, ROOT, SOLUTIONS, run_cli, run_here

from grader.course import loader
from grader.course.spec import Course
from grader.instructor import batch, gradebook
from grader.instructor.uploads import SubmissionError, find_stub_files

# ------------------------------------------------------------ the Gradescope bundle

def _autograder_env(root):
    """The simulated image's: its root, this Python, root's cache (``cache/``) its own."""
    return {**os.environ, "AUTOGRADER_ROOT": str(root), "PYTHON": sys.executable,
            "XDG_CACHE_HOME": str(root / "cache")}


@pytest.fixture(scope="module")
def autograder_root(tmp_path_factory, day3_gradescope_zip):
    """A simulated /autograder with the exported day3 autograder unpacked in its source/,
    once for the module, and built as setup.sh builds the image (its warm_up: the grader
    compiled, the course read): as Gradescope's image, it grades each test's upload in
    turn, each in the state the image left."""
    root = tmp_path_factory.mktemp("gradescope") / "autograder"
    with zipfile.ZipFile(day3_gradescope_zip) as z:
        z.extractall(root / "source")
    warm = subprocess.run(["bash", str(root / "source" / "warm_up")], env=_autograder_env(root),
                          capture_output=True, text=True, timeout=300)
    assert warm.returncode == 0, warm.stderr
    return root


def run_autograder(root, fill):
    """The autograder at ``root`` on a fresh upload: ``fill(submission)`` builds it."""
    for folder in ("submission", "results"):   # the previous test's upload and results
        shutil.rmtree(root / folder, ignore_errors=True)
    (root / "submission").mkdir()
    fill(root / "submission")
    run = subprocess.run(["bash", str(root / "source" / "run_autograder")],
                         env=_autograder_env(root), capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, run.stderr
    return json.loads((root / "results" / "results.json").read_text())


def test_the_image_holds_the_grader_compiled_and_the_course_read(autograder_root):
    """setup.sh ends with warm_up: a submission's fresh container finds the grader's
    bytecode and the course's cache (its YAML and reference answers) in the image, and
    makes neither again."""
    assert setup_lines(autograder_root)[-1] == "bash /autograder/source/warm_up"
    compiled = autograder_root / "source" / "course" / "grader" / "__pycache__"
    assert list(compiled.glob("grading.*.pyc"))
    cache = autograder_root / "cache" / "attn-grade"
    image = {p: p.stat().st_mtime_ns for p in cache.rglob("*") if p.is_file()}
    assert image
    results = run_autograder(autograder_root, _stubs)
    assert results["max_score"] == DAY3_MAX
    assert {p: p.stat().st_mtime_ns for p in cache.rglob("*") if p.is_file()} == image


def setup_lines(root):
    return [line for line in (root / "source" / "setup.sh").read_text().splitlines()
            if line and not line.startswith("#")]


def _stubs(folder):
    folder.mkdir(parents=True, exist_ok=True)
    for stub in (EXERCISES / "day3").glob("*.py"):
        shutil.copy(stub, folder / stub.name)


@pytest.fixture(scope="module")
def solved_release(tmp_path_factory, day3_release):
    """The day3 release bundle with every stub replaced by the reference solution."""
    out = tmp_path_factory.mktemp("release") / "bundle"
    shutil.copytree(day3_release, out)
    for solution in (SOLUTIONS / "day3").glob("*.py"):
        if (out / "exercises" / "day3" / solution.name).exists():
            shutil.copy(solution, out / "exercises" / "day3" / solution.name)
    return out


def test_release_bundle_uploaded_whole_gets_full_marks(autograder_root, solved_release):
    results = run_autograder(autograder_root,
                             lambda sub: shutil.copytree(solved_release, sub / "attn-day3"))
    assert results["score"] == results["max_score"] == DAY3_MAX, results["output"]
    readme = (solved_release / "README.md").read_text()
    assert "Upload your edited stub files" in readme and "`attention.py`" in readme


def test_folder_name_with_a_newline_cannot_pick_the_course_solutions(autograder_root):
    root = autograder_root

    def fill(sub):
        _stubs(sub)
        # find -printf '%h\n' printed this as a line "0 $ROOT/source/course/solutions/day3"
        trap = sub / "x\n0 " / str(root).lstrip("/") / "source/course/solutions/day3"
        trap.mkdir(parents=True)
        (trap / "z.py").write_text("x = 1\n")

    results = run_autograder(root, fill)
    assert results["score"] == 0 and results["max_score"] == DAY3_MAX


def test_two_copies_of_a_stub_are_a_clear_failure(autograder_root):
    def fill(sub):
        _stubs(sub / "a")
        (sub / "b").mkdir()
        shutil.copy(SOLUTIONS / "day3" / "attention.py", sub / "b" / "attention.py")

    results = run_autograder(autograder_root, fill)
    assert results["score"] == 0 and results["max_score"] == DAY3_MAX
    assert "two files named attention.py" in results["output"]
    assert "a/attention.py" in results["output"] and "b/attention.py" in results["output"]


def test_an_upload_without_stub_files_scores_zero_of_the_sets_total(autograder_root):
    def fill(sub):
        (sub / "notes.txt").write_text("my answers are on paper\n")

    results = run_autograder(autograder_root, fill)
    assert results["score"] == 0 and results["max_score"] == DAY3_MAX
    assert "none of the files" in results["output"] and "attention.py" in results["output"]
    assert results["extra_data"]["status"] == "empty"


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


# ------------------------------------------------------------ grade-all

def _solved(folder, *modules):
    """A student folder: the day3 stubs, ``modules`` replaced by the reference."""
    _stubs(folder)
    for module in modules:
        shutil.copy(SOLUTIONS / "day3" / f"{module}.py", folder / f"{module}.py")
    return folder


def _zip(path, files):
    with zipfile.ZipFile(path, "w") as archive:
        for name, text in files.items():
            archive.writestr(name, text)


def _grade_all(submissions, out, *extra, cwd=None, argv=None, env=None):
    """grade-all's rows and gradebook: in this process (run_here) unless the test is
    about the process it runs in (``cwd``: started in that folder; ``argv``, ``env``)."""
    args = ["grade-all", "day3", submissions, "-o", out, "--course", ROOT, "--jobs", "2",
            *extra]
    if argv is None and cwd is None:
        proc = run_here(*args)
    elif argv is None:
        proc = run_cli(*args, cwd=cwd, timeout=300)
    else:
        proc = subprocess.run([*argv, *map(str, args)], cwd=cwd or ROOT, capture_output=True,
                              text=True, timeout=300, env=env)
    assert proc.returncode == 0, proc.stderr
    text = (out / "gradebook.csv").read_text()
    return {r["student"]: r for r in csv.DictReader(io.StringIO(text))}, text


def _doc(out, name):
    return json.loads((out / "results" / f"{name}.json").read_text())


def test_dot_zip_names_are_refused_and_unpack_nowhere(tmp_path):
    submissions, out, scratch = tmp_path / "class", tmp_path / "out", tmp_path / "tmp"
    submissions.mkdir()
    scratch.mkdir()
    solved = {"temperature.py": (SOLUTIONS / "day3" / "temperature.py").read_text()}
    for name in ("..zip", "...zip", ".zip"):
        _zip(submissions / name, solved)
    _solved(submissions / "ada", "temperature")
    rows, _ = _grade_all(submissions, out, "--exercise", "temperature",
                         env={**os.environ, "TMPDIR": str(scratch)},
                         argv=[sys.executable, "-m", "grader"])
    assert set(rows) == {"ada", "..zip", "...zip", ".zip"}
    assert float(rows["ada"]["score"]) == 10.0 and rows["ada"]["status"] == "graded"
    for name in ("..zip", "...zip", ".zip"):
        assert rows[name]["status"] == "error" and float(rows[name]["score"]) == 0
        assert float(rows[name]["max_score"]) == 10.0
    assert not list(scratch.iterdir()), "a zip unpacked outside its own folder"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["class", "out", "tmp"]
    assert sorted(p.name for p in submissions.iterdir()) == ["...zip", "..zip", ".zip", "ada"]
    files = [p.name for p in (out / "results").iterdir()]
    assert len(files) == 4 and not any(name.startswith(".") for name in files)
    messages = [json.loads((out / "results" / f).read_text())["output"] for f in files]
    assert sum("rename it" in m for m in messages) == 3


EVIL_INIT = """\
import json, os, sys
open({marker!r}, "w").write("imported")
argv = sys.argv
sub = argv[argv.index("--submission") + 1] if "--submission" in argv else ""
score = 10.0 if os.path.basename(sub) == "grader" else 0.0
doc = {{"score": score, "max_score": 10.0, "output": "mine", "tests": [],
       "extra_data": {{"exercises": [{{"exercise": "temperature", "file": "temperature.py",
                                       "score": score, "max_score": 10.0}}]}}}}
if "--output" in argv:
    open(argv[argv.index("--output") + 1], "w").write(json.dumps(doc))
print(json.dumps(doc))
sys.exit(0)
"""


def test_a_student_folder_named_grader_is_never_imported(tmp_path):
    submissions, out, marker = tmp_path / "class", tmp_path / "out", tmp_path / "PWNED"
    evil = submissions / "grader"
    evil.mkdir(parents=True)
    (evil / "__init__.py").write_text(EVIL_INIT.format(marker=str(marker)))
    (evil / "__main__.py").write_text("")
    _solved(submissions / "ada", "temperature")
    # an instructor's attn-grade (this worktree's) run from inside the class folder
    parent = [sys.executable, "-c",
              f"import sys; sys.path[:] = [{str(ROOT)!r}] + [p for p in sys.path if p]; "
              "from grader.cli import main; "
              "main(prog_name='attn-grade')"]
    rows, _ = _grade_all(submissions, out, "--exercise", "temperature", cwd=submissions,
                         argv=parent)
    assert not marker.exists(), "the student's grader/ was imported"
    assert float(rows["ada"]["score"]) == 10.0
    assert float(rows["grader"]["score"]) == 0 and rows["grader"]["status"] == "empty"
    # the child grader imports this worktree's grader, whatever the current folder
    probe = subprocess.run([sys.executable, "-c", batch.IMPORT_GRADER
                            + "; import json; print(json.dumps([grader.__file__, sys.path]))"],
                           cwd=submissions, capture_output=True, text=True)
    imported, path = json.loads(probe.stdout)
    assert imported == str(ROOT / "grader" / "__init__.py"), probe.stderr
    assert "" not in path and str(submissions) not in path


def test_grade_all_and_its_workers_in_a_class_folder_never_import_from_it(tmp_path):
    """grade-all run as ``python -m grader`` from inside the class folder has that folder
    on its path; what it and its workers (forks of it) import later (sympy, to read the
    set's symbols on a cold cache and to judge a wrong formula) comes from the installed
    libraries, never from a student's folder."""
    submissions, out, marker = tmp_path / "class", tmp_path / "out", tmp_path / "PWNED"
    (submissions / "sympy").mkdir(parents=True)
    (submissions / "sympy" / "__init__.py").write_text(
        f"open({str(marker)!r}, 'w').write('imported')\n")
    (submissions / "ada").mkdir()
    (submissions / "ada" / "growth.py").write_text(
        "def attention_matrix_cells(n):\n    return n * n + 1\n\n\n"
        "def growth_factor(n_from, n_to):\n    return (n_to / n_from) ** 2\n")
    # the class folder first on the path, as ``python -m`` puts the current folder
    parent = [sys.executable, "-c", "import os, sys; "
              f"sys.path[:0] = [os.getcwd(), {str(ROOT)!r}]; "
              "from grader.cli import main; main(prog_name='attn-grade')"]
    rows, _ = _grade_all(submissions, out, "--exercise", "growth", cwd=submissions,
                         argv=parent, env={**os.environ, "XDG_CACHE_HOME": str(tmp_path)})
    assert not marker.exists(), "the student's sympy/ was imported"
    assert rows["ada"]["status"] == "graded"
    assert 0 < float(rows["ada"]["score"]) < float(rows["ada"]["max_score"])
    assert rows["sympy"]["status"] == "empty"


def test_forked_workers_hold_no_descriptor_of_another_and_stop_cleanly(tmp_path):
    """A worker forked from grade-all keeps its own pipes only: one that held another
    worker's stdin would keep that worker from ever seeing the end of its input."""
    script = f"""
import json, os, sys
sys.path.insert(0, {str(ROOT)!r})
from grader.cli import serve_as_worker
from grader.instructor import batch, forked_worker
assert forked_worker.possible()
pool = batch.Pool(2, {str(tmp_path)!r}, serve_as_worker)
for worker in pool.workers:
    assert worker.grade(["--version"], 60)[0] == 0   # running: its descriptors are closed
held = {{w.proc.pid: [os.readlink(f"/proc/{{w.proc.pid}}/fd/{{fd}}")
                      for fd in os.listdir(f"/proc/{{w.proc.pid}}/fd")] for w in pool.workers}}
ends = [os.readlink(f"/proc/self/fd/{{f.fileno()}}")
        for w in pool.workers for f in (w.stdin, w.stdout)]
procs = [w.proc for w in pool.workers]
pool.close()
print(json.dumps({{"held": held, "ends": ends, "codes": [p.returncode for p in procs],
                  "forked": [type(p).__name__ for p in procs]}}))
"""
    proc = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                          timeout=120)
    assert proc.returncode == 0, proc.stderr
    found = json.loads(proc.stdout)
    assert found["forked"] == ["ForkedProcess", "ForkedProcess"]
    assert found["codes"] == [0, 0]   # each ended at the end of its input, not killed
    for n, held in enumerate(found["held"].values()):
        others = found["ends"][:2 * n] + found["ends"][2 * n + 2:]
        assert not set(held) & set(others), held


def test_a_class_runs_each_worker_on_a_cpu_of_its_own(tmp_path):
    """The CPUs a class may use are dealt out to its workers (batch.pin_cpus); one
    worker alone, or more workers than CPUs, are not pinned."""
    script = f"""
import json, os, sys
sys.path.insert(0, {str(ROOT)!r})
from grader.instructor import batch

def serve():
    sys.stdin.read()

found = {{}}
for jobs in (1, 2, 3):
    pool = batch.Pool(jobs, {str(tmp_path)!r}, serve)
    found[jobs] = [sorted(os.sched_getaffinity(w.proc.pid)) for w in pool.workers]
    pool.close()
print(json.dumps(found))
"""
    proc = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                          timeout=120)
    assert proc.returncode == 0, proc.stderr
    found = json.loads(proc.stdout)
    cpus = sorted(os.sched_getaffinity(0))
    assert found["1"] == [cpus]
    if len(cpus) == 2:
        assert found["2"] == [[cpus[0]], [cpus[1]]]
        assert found["3"] == [cpus, cpus, cpus]
    assert batch.pin_cpus(1) is None
    with mock.patch.object(os, "sched_getaffinity", lambda pid: {0, 1, 2, 3}):
        assert batch.pin_cpus(2) == [{0, 2}, {1, 3}]
        assert batch.pin_cpus(3) == [{0, 3}, {1}, {2}]
        assert batch.pin_cpus(5) is None
    with mock.patch.object(os, "sched_getaffinity", lambda pid: {5}):
        assert batch.pin_cpus(2) is None


def test_a_class_workers_run_folders_go_in_its_temporary_folder(tmp_path):
    """A worker's run folders go where grade-all says ($TMPDIR: the class's temporary
    folder), not where grade-all itself would put one: a worker killed while it removes
    one (Ctrl-C) leaves it there, and grade-all's own cleanup takes it."""
    scratch = tmp_path / "class-tmp"
    scratch.mkdir()
    script = f"""
import os, sys, tempfile
sys.path.insert(0, {str(ROOT)!r})
from grader.instructor import batch
from grader.run import sandbox

sandbox.scratch_folder()   # grade-all found its own before it forked

def serve():
    with open("made", "w") as f:
        f.write(tempfile.mkdtemp(prefix="attn-grade-", dir=sandbox.scratch_folder()))
    sys.stdin.read()

pool = batch.Pool(1, {str(tmp_path)!r}, serve, scratch={str(scratch)!r})
pool.close()
"""
    proc = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                          timeout=60)
    assert proc.returncode == 0, proc.stderr
    assert Path((tmp_path / "made").read_text()).parent == scratch


def test_grade_all_from_a_class_folder_preloads_nothing_of_a_students(tmp_path):
    """What grade-all imports for its forks (pytest, pdb) is imported as a fork would,
    without the current folder: run from inside the class folder, grade-all imported a
    student's ``_pytest/`` or ``pdb/`` as root, and every fork inherited it."""
    submissions, out = tmp_path / "class", tmp_path / "out"
    for name in ("_pytest", "pdb"):
        (submissions / name).mkdir(parents=True)
        (submissions / name / "__init__.py").write_text(
            f"open({str(tmp_path / ('PWNED-' + name))!r}, 'w').write('imported')\n")
    _solved(submissions / "ada", "temperature")
    parent = [sys.executable, "-c", "import os, sys; "
              f"sys.path[:0] = [os.getcwd(), {str(ROOT)!r}]; "
              "from grader.cli import main; main(prog_name='attn-grade')"]
    rows, _ = _grade_all(submissions, out, "--exercise", "temperature", cwd=submissions,
                         argv=parent)
    assert not list(tmp_path.glob("PWNED-*")), "a student's folder was imported"
    assert float(rows["ada"]["score"]) == 10.0
    assert rows["_pytest"]["status"] == rows["pdb"]["status"] == "empty"


def test_a_forked_worker_that_fails_leaves_its_traceback_in_its_log(tmp_path):
    """A fork ends with os._exit, which flushes nothing: its traceback, which says why a
    student was not graded, must still reach its log."""
    script = f"""
import sys
sys.path.insert(0, {str(ROOT)!r})
from grader.instructor import batch

def serve():
    raise RuntimeError("the worker broke here")

pool = batch.Pool(1, {str(tmp_path)!r}, serve)
code = pool.workers[0].proc.wait(60)
print(code, type(pool.workers[0].proc).__name__)
pool.close()
"""
    proc = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                          timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.split() == ["1", "ForkedProcess"]
    assert "RuntimeError: the worker broke here" in (tmp_path / "worker-0.log").read_text()


def test_a_worker_whose_output_ends_died_even_before_it_can_be_waited_for(tmp_path):
    """A killed worker's pipes close a moment before it can be waited for: its student
    is reported as a dead worker's, never as one that took longer than the time limit."""
    log = tmp_path / "worker.log"
    log.write_text("the last words\n")
    worker = batch.Worker.__new__(batch.Worker)   # a worker that closes its output, then lingers
    worker.log, worker._buffer, worker.ended = log, b"", False
    worker.proc = subprocess.Popen(
        [sys.executable, "-c", "import os, sys, time; sys.stdin.readline(); os.close(1); "
                               "time.sleep(2)"],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE)
    worker.stdin, worker.stdout = worker.proc.stdin, worker.proc.stdout
    code, doc, why = worker.grade(["--version"], 60)
    assert code is None and doc is None
    assert why.startswith("the grading worker died:") and "the last words" in why, why
    assert worker.proc.returncode is not None


def test_a_worker_whose_pipes_the_pool_closed_is_a_failed_row_not_a_traceback(tmp_path):
    """On Ctrl-C the pool closes its workers' pipes while a thread still grades: that
    thread's student is a failed row, not a ValueError printed from the thread."""
    worker = batch.Worker.__new__(batch.Worker)
    worker.log, worker._buffer, worker.ended = tmp_path / "worker.log", b"", False
    worker.proc = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(30)"],
                                   stdin=subprocess.PIPE, stdout=subprocess.PIPE)
    worker.stdin, worker.stdout = worker.proc.stdin, worker.proc.stdout
    worker.stdin.close()
    code, doc, why = worker.grade(["--version"], 60)
    assert code is None and doc is None and why.startswith("the grading worker died")
    assert worker.proc.returncode is not None


def test_a_closed_pool_takes_no_more_students_and_starts_no_worker(tmp_path, monkeypatch):
    """Ctrl-C closes the pool while its threads grade: they take no next student, start
    no replacement for the worker they lost, and raise nothing."""
    import threading
    import time

    started = []

    class Slow:   # a worker that is closed under its thread while it grades
        def __init__(self, *args, **kwargs):
            self.up = True
            started.append(self)

        def alive(self):
            return self.up

        def send(self, args):
            pass

        def receive(self, timeout):
            time.sleep(0.2)
            self.up = False
            return None, None, "the grading worker died"

        def stop(self, graceful=True):
            self.up = False

    monkeypatch.setattr(batch, "Worker", Slow)
    monkeypatch.setattr(batch, "_shared_zygote", lambda jobs: None)
    pool = batch.Pool(2, tmp_path, start=2)
    rows, errors = [], []

    def run():
        try:
            pool.run([["day3"]] * 10, on_done=lambda i, result: rows.append(i))
        except BaseException as exc:
            errors.append(exc)

    thread = threading.Thread(target=run)
    thread.start()
    time.sleep(0.05)
    pool.close()
    thread.join(10)
    assert not thread.is_alive() and errors == []
    assert len(started) == 2 and rows == []


def _stand_in_worker(started=None, graded=None):
    """A Worker class that grades nothing (each student scores 0 of temperature);
    ``started`` gets each one made, ``graded`` each student it is given."""
    class StandIn:
        def __init__(self, *args, **kwargs):
            if started is not None:
                started.append(self)

        def alive(self):
            return True

        def send(self, job):   # a worker starts grading as its job comes
            if graded is not None:
                graded(job["student"])

        def receive(self, timeout):
            return 0, {"score": 0, "max_score": 10, "tests": [], "extra_data": {
                "exercises": [{"exercise": "temperature", "score": 0, "max_score": 10}]}}, ""

        def stop(self, graceful=True):
            pass

    return StandIn


def test_a_class_starts_a_worker_per_student_to_grade_up_to_its_jobs(tmp_path, monkeypatch):
    """Workers start as students to grade are found: a re-run where one student changed
    starts one, however many students come after it unchanged."""
    started = []
    monkeypatch.setattr(batch, "Worker", _stand_in_worker(started))
    monkeypatch.setattr(batch, "_shared_zygote", lambda jobs: None)
    submissions, out = tmp_path / "class", tmp_path / "out"
    for name in ("ada", "bob", "cy"):
        _solved(submissions / name)
    course = Course(ROOT)

    def grade_all():
        started.clear()
        gradebook.grade_all(course, loader.load_set(course, "day3"), submissions, out, 3,
                            only={"temperature"})
        return len(started)

    assert grade_all() == 3
    shutil.copy(SOLUTIONS / "day3" / "temperature.py", submissions / "ada" / "temperature.py")
    assert grade_all() == 1   # ada changed; bob and cy, after her, did not


def test_a_class_is_graded_while_the_rest_of_it_is_prepared(tmp_path, monkeypatch):
    """The first student is graded as soon as there are as many students to grade as
    workers; the others are prepared one ahead, while a worker grades (it gets its next
    student as soon as it is done), and a failure to prepare one is that student's
    error row: the others are graded and the gradebook written (issue 28)."""
    events = []
    prepare = gradebook._prepare

    def prepared(submission, *args):
        if submission.student == "cy" and fail:
            raise OSError("no room left")
        events.append(("prepare", submission.student))
        return prepare(submission, *args)

    monkeypatch.setattr(gradebook, "_prepare", prepared)
    monkeypatch.setattr(batch, "Worker",
                        _stand_in_worker(graded=lambda student: events.append(("grade", student))))
    monkeypatch.setattr(batch, "_shared_zygote", lambda jobs: None)
    submissions = tmp_path / "class"
    for name in ("ada", "bob", "cy"):
        _solved(submissions / name)
    course = Course(ROOT)
    exercise_set = loader.load_set(course, "day3")
    fail = False
    gradebook.grade_all(course, exercise_set, submissions, tmp_path / "out", 1,
                        only={"temperature"})
    assert events == [("prepare", "ada"), ("grade", "ada"), ("prepare", "bob"),
                      ("grade", "bob"), ("prepare", "cy"), ("grade", "cy")]
    fail = True
    events.clear()
    rows = gradebook.grade_all(course, exercise_set, submissions, tmp_path / "again", 1,
                               only={"temperature"}, force=True)
    assert [(row["student"], row["status"]) for row in rows] == \
        [("ada", "graded"), ("bob", "graded"), ("cy", "error")]
    assert ("grade", "cy") not in events and (tmp_path / "again" / "gradebook.csv").is_file()


def test_a_pool_closed_while_its_next_command_is_prepared_waits_and_starts_nothing(
        tmp_path, monkeypatch):
    """Ctrl-C while a thread prepares the next student (a generator's next): close()
    returns once that thread ended, and the thread neither fails (the workers it would
    index are gone) nor starts a worker."""
    import threading
    import time

    started, events, errors = [], [], []

    monkeypatch.setattr(batch, "Worker", _stand_in_worker(started))
    monkeypatch.setattr(batch, "_shared_zygote", lambda jobs: None)
    monkeypatch.setattr(threading, "excepthook", lambda args: errors.append(args.exc_value))
    pool = batch.Pool(1, tmp_path, start=1)
    preparing = threading.Event()

    def commands():
        yield ["ada"]
        preparing.set()
        time.sleep(0.3)   # copying bob's files when Ctrl-C comes
        events.append("prepared bob")
        yield ["bob"]

    thread = threading.Thread(target=pool.run, args=(commands(),))
    thread.start()
    preparing.wait(10)
    pool.close()
    events.append("closed")
    thread.join(10)
    assert events == ["prepared bob", "closed"] and errors == [] and len(started) == 1


def test_ctrl_c_while_the_rest_of_a_class_is_prepared_leaves_no_class_folder(
        tmp_path, monkeypatch):
    """Ctrl-C while a worker's thread prepares the next student: grade-all removes its
    class folder only once that thread is done with it (an rmtree racing the copy
    failed, 'Directory not empty', and left the folder), and prepares no one else."""
    import signal
    import tempfile
    import threading
    import time

    events, pools = [], []
    prepare = gradebook._prepare
    main = threading.main_thread().ident

    class Recorded(batch.Pool):
        def __init__(self, *args, **kwargs):
            super().__init__(*args, **kwargs)
            pools.append(self)

    def prepared(submission, *args):
        if submission.student == "cy":
            signal.pthread_kill(main, signal.SIGINT)
            deadline = time.monotonic() + 30   # until the main thread has closed the pool
            while not (pools and pools[0].closed) and time.monotonic() < deadline:
                time.sleep(0.01)
        try:
            out = prepare(submission, *args)
        except BaseException as exc:
            events.append(("failed", submission.student, type(exc).__name__))
            raise
        events.append(("prepared", submission.student))
        return out

    monkeypatch.setattr(gradebook, "_prepare", prepared)
    monkeypatch.setattr(batch, "Worker", _stand_in_worker())
    monkeypatch.setattr(batch, "Pool", Recorded)
    monkeypatch.setattr(batch, "_shared_zygote", lambda jobs: None)
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path / "tmp"))
    (tmp_path / "tmp").mkdir()
    submissions = tmp_path / "class"
    for name in ("ada", "bob", "cy", "dan"):
        _solved(submissions / name)
    course = Course(ROOT)
    exercise_set = loader.load_set(course, "day3")
    # Ctrl-C as in a terminal, whoever started pytest (a shell's background job ignores it)
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        with pytest.raises(KeyboardInterrupt):
            gradebook.grade_all(course, exercise_set, submissions, tmp_path / "out", 1,
                                only={"temperature"})
    finally:
        signal.signal(signal.SIGINT, previous)
    events.append("raised")
    time.sleep(0.5)
    assert events == [("prepared", "ada"), ("prepared", "bob"), ("prepared", "cy"), "raised"]
    assert list((tmp_path / "tmp").iterdir()) == []


def test_a_folder_and_a_zip_of_one_name_are_an_error_row_naming_both(tmp_path):
    submissions, out = tmp_path / "class", tmp_path / "out"
    _solved(submissions / "alice", "temperature")
    _zip(submissions / "alice.zip", {"temperature.py": "def softmax(x, T=1.0):\n    pass\n"})
    (submissions / "Bob").mkdir()
    (submissions / "bob").mkdir()
    rows, _ = _grade_all(submissions, out, "--exercise", "temperature")
    assert set(rows) == {"alice", "Bob"}
    for student in ("alice", "Bob"):
        assert rows[student]["status"] == "error" and float(rows[student]["score"]) == 0
    message = _doc(out, "alice")["output"]
    assert "'alice/'" in message and "'alice.zip'" in message
    assert "'Bob/'" in _doc(out, "Bob")["output"] and "'bob/'" in _doc(out, "Bob")["output"]


def test_student_ids_cannot_be_spreadsheet_formulas(tmp_path):
    submissions, out = tmp_path / "class", tmp_path / "out"
    names = ['=HYPERLINK("evil.example","grades")', "+1", "-2", "@SUM(A1)"]
    for name in names:
        (submissions / name).mkdir(parents=True)
    rows, text = _grade_all(submissions, out)
    assert set(rows) == {"'" + name for name in names}
    for line in text.splitlines()[1:]:
        assert line.startswith(("'", "\"'")), line
    assert all(row["status"] == "empty" for row in rows.values())


def test_a_resubmission_is_graded_again_and_an_unchanged_one_is_not(tmp_path, monkeypatch):
    submissions, out = tmp_path / "class", tmp_path / "out"
    ada = _solved(submissions / "ada")
    rows, _ = _grade_all(submissions, out, "--exercise", "temperature")
    assert float(rows["ada"]["score"]) == 0
    first = _doc(out, "ada")["extra_data"].get("submission_hash")
    shutil.copy(SOLUTIONS / "day3" / "temperature.py", ada / "temperature.py")
    rows, _ = _grade_all(submissions, out, "--exercise", "temperature")
    assert float(rows["ada"]["score"]) == 10.0
    assert first and _doc(out, "ada")["extra_data"]["submission_hash"] != first
    stamp = (out / "results" / "ada.json").stat().st_mtime_ns
    (ada / "notes.txt").write_text("not graded, not a change\n")
    # nothing to grade: no worker (nor zygote) is even started
    monkeypatch.setattr(batch, "Pool", lambda *a, **k: pytest.fail("workers were started"))
    course = Course(ROOT)
    rows_again = gradebook.grade_all(course, loader.load_set(course, "day3"), submissions, out,
                                     2, only={"temperature"})
    assert [r["student"] for r in rows_again] == ["ada"]
    assert (out / "results" / "ada.json").stat().st_mtime_ns == stamp


def test_empty_corrupt_and_ambiguous_submissions_keep_the_sets_max_score(tmp_path):
    submissions, out = tmp_path / "class", tmp_path / "out"
    (submissions / "empty-folder").mkdir(parents=True)
    (submissions / "empty-folder" / "notes.txt").write_text("I will do it later\n")
    _zip(submissions / "empty-zip.zip", {"readme.md": "nothing"})
    (submissions / "corrupt.zip").write_bytes(b"PK\x03\x04 not really a zip")
    _zip(submissions / "twice.zip", {"a/growth.py": "x = 1\n", "b/growth.py": "x = 2\n"})
    rows, _ = _grade_all(submissions, out)
    expected = {"empty-folder": "empty", "empty-zip": "empty", "corrupt": "error",
                "twice": "error"}
    assert {s: r["status"] for s, r in rows.items()} == expected
    for student, row in rows.items():
        doc = _doc(out, student)
        assert float(row["score"]) == doc["score"] == 0
        assert float(row["max_score"]) == doc["max_score"] == DAY3_MAX
    assert "a/growth.py and b/growth.py" in _doc(out, "twice")["output"]
    assert "cannot unpack" in _doc(out, "corrupt")["output"]


def test_a_worker_that_cannot_be_replaced_costs_no_graded_row_and_ends_the_run(
        tmp_path, monkeypatch):
    """A worker gets its next student before its row is written: when the worker died
    and no new one can be started in its place, the student it graded still gets the
    row that says why, and run() raises that failure (no student left silently
    ungraded)."""
    made = []

    class Dies:   # the first dies grading its student; none can be started after it
        def __init__(self, *args, **kwargs):
            if made:
                raise OSError("no more processes")
            made.append(self)
            self.up = True

        def alive(self):
            return self.up

        def send(self, args):
            pass

        def receive(self, timeout):
            self.up = False
            return None, None, "the grading worker died"

        def stop(self, graceful=True):
            self.up = False

    monkeypatch.setattr(batch, "Worker", Dies)
    monkeypatch.setattr(batch, "_shared_zygote", lambda jobs: None)
    rows = []
    with batch.Pool(1, tmp_path, start=1) as pool, \
            pytest.raises(OSError, match="no more processes"):
        pool.run([["ada"], ["bob"]], on_done=lambda i, result: rows.append((i, result[2])))
    assert rows == [(0, "the grading worker died")]


def test_grade_all_says_what_it_graded_in_the_users_language(tmp_path):
    """Its last line, counts and all, and why a submission was not graded follow --lang."""
    submissions, out = tmp_path / "class", tmp_path / "out"
    _solved(submissions / "ada", "temperature")
    (submissions / "bob").mkdir()
    (submissions / "cy.zip").write_text("not a zip")
    proc = run_cli("grade-all", "day3", submissions, "-o", out, "--course", ROOT, "--jobs",
                   "1", "--exercise", "temperature", "--lang", "zh", timeout=300)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip().splitlines()[-1] == (
        f"已评分 3 份提交，写入 {out / 'gradebook.csv'}；其中 1 份无法评分；1 份为空")
    assert _doc(out, "cy")["output"].startswith("无法解压 cy.zip")
    assert "没有这些文件中的任何一个" in _doc(out, "bob")["output"]
