"""Hostile submissions, graded as an instructor would: through grade-all's workers
(each run the CLI's own command line) and, for the attacks aimed at the CLI's stdout,
through the CLI.

Each attack replaces temperature.py in an otherwise correct submission, graded
with one other exercise (concepts, another file in its own process):  the attacked
file scores 0, the other file keeps full marks, the run ends (a hang guard, not a
speed test), stdout is one valid JSON document, no student process is left
running and no course file changed.
"""

import hashlib
import json
import os
import shutil
import sys
import tempfile

import pytest
from conftest import (
    FULL_DAY3,
    HANG_GUARD,
    ROOT,
    SOLUTIONS,
    copy_exercises,
    grade_in_workers,
    grade_many,
    scores_by_exercise,
    system_venv,
    with_course,
)

from grader.run import sandbox

LIMITS = ["--time-limit", "2", "--import-time-limit", "4", "--memory-limit", "768MiB",
          "--output-limit", "4KiB"]
BWRAP = sandbox.bubblewrap_works()
# the attacked exercise and one other: the attack must cost temperature.py alone
# (grading the whole set shows the same for 8 files, at 4 times the cost)
GRADED = ("temperature", "concepts")
SELECTION = [arg for exercise in GRADED for arg in ("--exercise", exercise)]

STUBS = '''
def softmax(logits, T=1.0):
    {body}

def greedy(logits):
    {body}
'''


def funcs(body):
    return STUBS.format(body=body)


CHAIN = """
import ctypes, os, signal, time
SPARED = {spared}
def _hunt():
    for entry in os.listdir("/proc"):
        if entry.isdigit() and int(entry) not in SPARED:
            try:
                status = open(f"/proc/{{entry}}/status").read()
            except OSError:
                continue
            if "Name:\tchainlink" not in status and f"Uid:\t{{os.getuid()}}\t" in status:
                try:
                    os.kill(int(entry), signal.SIGKILL)
                except OSError:
                    pass
def _link():
    os.setsid()
    ctypes.CDLL(None).prctl(15, b"chainlink", 0, 0, 0)
    while True:
        try:
            pid = os.fork()
        except OSError:
            _hunt()
            time.sleep(0.02)
            continue
        if pid == 0:
            os.setsid()
            continue
        while not os.waitpid(pid, os.WNOHANG)[0]:
            _hunt()
            time.sleep(0.02)   # a hunt every 20 ms: soon enough for any child
if os.fork() == 0:
    try:
        _link()
    finally:
        os._exit(0)
time.sleep(0.2)   # the chain grows meanwhile
"""


def chain(spared):
    """A chain of processes that kill every other process of their uid but ``spared``."""
    return CHAIN.format(spared=spared) + funcs("raise NotImplementedError")


ATTACKS = {
    "always-equal object": funcs("""
    class Liar:
        def __eq__(self, other): return True
        def __ne__(self, other): return False
        def __len__(self): return 3
    return Liar()"""),
    "ndarray subclass that lies": """
import numpy as np
class Liar(np.ndarray):
    def __eq__(self, other): return np.ones(np.shape(other), bool)
def softmax(logits, T=1.0):
    return np.zeros(np.shape(logits)).view(Liar)
def greedy(logits):
    return np.zeros(1).view(Liar)
""",
    "monkeypatched numpy math sympy pytest": """
import math, numpy as np, numpy.testing, sympy, pytest
np.allclose = lambda *a, **k: True
np.isclose = lambda a, b, *x, **k: np.ones(np.shape(a), bool)
np.array_equal = lambda *a, **k: True
np.testing.assert_allclose = lambda *a, **k: None
math.isclose = lambda *a, **k: True
sympy.simplify = lambda e, *a, **k: 0
pytest.approx = lambda *a, **k: object()
def softmax(logits, T=1.0):
    return np.zeros(np.shape(logits))
def greedy(logits):
    return -1
""",
    "os._exit at import": "import os\nos._exit(0)\n" + funcs("return 0"),
    "sys.exit in calls": funcs("import sys; sys.exit(0)"),
    "fake report on stdout and stderr": """
import json, os, sys
FAKE = json.dumps({"score": 100, "max_score": 100, "tests": []})
print(FAKE); print(FAKE, file=sys.stderr); os.write(1, FAKE.encode()); os.write(2, FAKE.encode())
def softmax(logits, T=1.0):
    print(FAKE); os.write(1, FAKE.encode())
    raise NotImplementedError
def greedy(logits):
    print(FAKE, file=sys.stderr)
    raise NotImplementedError
""",
    "infinite loop": funcs("while True: pass"),
    "slow import": "import time\ntime.sleep(120)\n" + funcs("return 0"),
    "multi-GiB allocation": funcs("import numpy as np; return np.ones((6, 1 << 27)).sum()"),
    "200 MB of output": """
import os, sys
def softmax(logits, T=1.0):
    chunk = "x" * (1 << 20)
    for _ in range(100):
        sys.stdout.write(chunk)
    for _ in range(100):
        os.write(1, chunk.encode())
    return [0.0, 0.0, 0.0]
def greedy(logits):
    print("y" * (200 << 20))
    return -1
""",
    "segfault": funcs("import ctypes; return ctypes.string_at(0)"),
    "forked children that sleep": """
import os, time
def _spawn():
    for _ in range(3):
        if os.fork() == 0:
            os.setsid()
            if os.fork() == 0:
                time.sleep(300)
            os._exit(0)
def softmax(logits, T=1.0):
    _spawn()
    return [1.0, 0.0, 0.0]
def greedy(logits):
    _spawn()
    return -1
""",
    "syntax error": "def softmax(logits, T=1.0)\n    return logits\n",
    "links planted for the next requests and answers": f"""
import os
for i in range(1, 80):
    for kind in ("req", "ans"):
        try:
            os.symlink({str(ROOT / "solutions" / "day3" / "temperature.py")!r},
                       f"{{kind}}-{{i:06d}}.json")
        except OSError:
            pass
""" + funcs("raise NotImplementedError"),
    "wrong types": """
def softmax(logits, T=1.0):
    return (x for x in logits)
def greedy(logits):
    return "zero"
""",
    "NaN answers": funcs("import numpy as np; return np.full(np.shape(logits), np.nan)"),
    # 24 MB of floats, 32 MB encoded: twice the answer limit (16 MiB)
    "huge return value": funcs("import numpy as np; return np.random.rand(3_000_000)"),
}

# kill(-1): every process the child may signal.  Only where that cannot be the tester's
# own processes: in bubblewrap (its PID namespace) or as root (the run's own uid).
KILL_ALL = funcs("import os, signal; os.kill(-1, signal.SIGKILL)")
KILL_LEVELS = (["bubblewrap"] if BWRAP else []) + (["process"] if os.geteuid() == 0 else [])
# the process level repeats what the default level shows: .ci/run's slow step
KILL_PARAMS = [pytest.param(level, marks=pytest.mark.slow) if level == "process" else level
               for level in KILL_LEVELS]
# a chain of sessions, each link respawning its child, killing every other process of
# its uid: a sweep of /proc kills one link per pass, and the links left would kill the
# next exercise's child (and the template).  Only at KILL_LEVELS, as kill(-1).
CHAINS = {"sweep": chain("(os.getppid(), os.getpid())"),    # spares the template
          "template": chain("(os.getpid(),)")}             # kills it too


def course_fingerprint():
    digest = {}
    for top in ("exercises", "solutions", "grader", "pyproject.toml"):
        path = ROOT / top
        files = [path] if path.is_file() else sorted(p for p in path.rglob("*") if p.is_file()
                                                     and "__pycache__" not in p.parts)
        for f in files:
            digest[str(f)] = hashlib.sha256(f.read_bytes()).hexdigest()
    return digest


def child_processes(marker=b"_attn_grade_child"):
    """Student processes still running; ``marker``: only those whose command line has it
    (the machine may be shared with other graders)."""
    found = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                cmdline = open(f"/proc/{entry}/cmdline", "rb").read()
            except OSError:
                continue
            if b"_attn_grade_child" in cmdline and marker in cmdline:
                found.append(int(entry))
    return found


def assert_only(doc, exercise):
    scores = scores_by_exercise(doc)
    assert set(scores) == set(GRADED), scores
    assert scores[exercise][0] == 0, [t["output"] for t in doc["tests"]
                                      if t["extra_data"]["exercise"] == exercise
                                      and t["status"] == "passed"]
    for other in set(GRADED) - {exercise}:
        full = FULL_DAY3[other]
        assert scores[other] == pytest.approx((full, full)), other


def check_run(proc, elapsed, *_):
    """One hostile run: exit 1, it ended (a hang guard: the limits are seconds, the
    guard generous so that a busy machine does not fail it), one valid JSON document."""
    assert proc.returncode == 1, proc.stderr[-3000:]
    assert elapsed < HANG_GUARD, elapsed
    return json.loads(proc.stdout)


READ_SOLUTIONS = f'''
import os
SOURCE = None
for path in [{str(SOLUTIONS / "day3" / "temperature.py")!r}, "../solutions/day3/temperature.py"]:
    try:
        SOURCE = open(path).read()
        break
    except OSError:
        pass
if SOURCE is None:
    for top, dirs, files in os.walk("/"):
        if "temperature.py" in files and "solutions" in top:
            SOURCE = open(os.path.join(top, "temperature.py")).read()
            break
        if top.count(os.sep) > 6:
            dirs[:] = []
if SOURCE is None:
    raise NotImplementedError("nothing to read")
exec(SOURCE)
'''

TAMPER = f'''
import os
ROOT = {str(ROOT)!r}
TOUCHED = 0
for top in (ROOT, "/", os.path.dirname(os.path.abspath(__file__))):
    for folder, dirs, files in os.walk(top):
        for name in files:
            if name.endswith((".py", ".yaml", ".toml")):
                try:
                    with open(os.path.join(folder, name), "a") as f:
                        f.write("\\n# tampered\\n")
                    TOUCHED += 1
                except OSError:
                    pass
        if folder.count(os.sep) > 8:
            dirs[:] = []

def softmax(logits, T=1.0):
    raise ValueError(f"touched {{TOUCHED}} files")

def greedy(logits):
    raise ValueError(f"touched {{TOUCHED}} files")
'''


PROCESS_LEVEL = ["forked children that sleep", "multi-GiB allocation", "200 MB of output",
                 "infinite loop"]


def limits_with(option, value):
    """LIMITS with ``option``'s value replaced by ``value``."""
    at = LIMITS.index(option)
    return [*LIMITS[:at], option, value, *LIMITS[at + 2:]]


# an endless loop meets a time limit of 0.25 s a call (the others' 2 s): each of its calls
# burns a core until the limit, and the message names the limit it was given
LOOP_LIMITS = limits_with("--time-limit", "0.25")


# for the CPU limit's message, on the first check alone: a loop in every call would burn
# a core-second for each of the child's restarts
LOOP_IN_THE_FIRST_CHECK = """
def softmax(logits, T=1.0):
    if T == 1.0 and list(logits) == [2, 1, 0]:
        while True: pass
    raise NotImplementedError

def greedy(logits):
    raise NotImplementedError
"""


# a slow import meets an import limit of 1 s (the others' 4 s): it sleeps until the
# limit, the longest wait of the hostile runs, and the message names the limit it was given
IMPORT_LIMITS = limits_with("--import-time-limit", "1")


def limits_for(attack):
    return {"infinite loop": LOOP_LIMITS, "slow import": IMPORT_LIMITS}.get(attack, LIMITS)


def hostile_jobs():
    """(key, temperature.py text, extra CLI args) for every hostile run."""
    jobs = [((attack, "default"), ATTACKS[attack], [*limits_for(attack), *SELECTION])
            for attack in sorted(ATTACKS)]
    jobs += [((attack, "process"), ATTACKS[attack],
              [*limits_for(attack), *SELECTION, "--isolation", "process"])
             for attack in PROCESS_LEVEL]
    # a time limit far above the CPU limit: under a loaded CI the loop was starved of a
    # core for 20 s before it had used its 1 s of CPU (the message named the wrong limit)
    jobs.append((("infinite loop", "cpu"), LOOP_IN_THE_FIRST_CHECK,
                 ["--exercise", "temperature", "--time-limit", "60", "--cpu-limit", "1"]))
    jobs += [(("kill every process", level), KILL_ALL,
              [*LIMITS, *SELECTION, "--exercise", "attention", "--isolation", level])
             for level in KILL_LEVELS]
    jobs += [(("chain " + name, level), code, [*LIMITS, *SELECTION, "--isolation", level])
             for name, code in CHAINS.items() for level in KILL_LEVELS]
    if BWRAP:
        slow_walk = [*LIMITS, *SELECTION, "--isolation", "bubblewrap", "--time-limit", "20"]
        jobs += [(("read solutions", "bubblewrap"), READ_SOLUTIONS, slow_walk),
                 (("tamper", "bubblewrap"), TAMPER, slow_walk)]
    return jobs


# the attacks whose runs wait on a limit for seconds (a walk of /, each call's time limit)
LONGEST = ("read solutions", "tamper", "slow import", "infinite loop", "chain sweep",
           "chain template")


def keys_for(item):
    """The hostile runs one collected test reads (so ``-k`` runs only those)."""
    name, param = item.originalname, getattr(item, "callspec", None)
    attack = param.params.get("attack") if param else None
    if name == "test_attack_scores_zero_and_harms_nothing_else":
        return {(attack, "default")}
    if name == "test_messages_name_the_limit_or_problem":
        return {(a, "default") for a in MESSAGES}
    if name == "test_process_level_without_bubblewrap_holds_too":
        return {(attack, "process")}
    if name == "test_killing_every_process_it_may_costs_no_other_exercise":
        return {("kill every process", param.params["level"])}
    if name == "test_a_chain_of_strays_costs_no_other_exercise":
        return {("chain " + param.params["chain"], param.params["level"])}
    return {"test_cpu_limit_is_named": {("infinite loop", "cpu")},
            "test_reference_solutions_are_out_of_reach": {("read solutions", "bubblewrap")},
            "test_tampering_changes_no_file": {("tamper", "bubblewrap")}}.get(name, set())


def process_level_python():
    """As root, the process level needs a Python its own uid can reach: not one in /root."""
    if os.geteuid() == 0 and not sandbox.python_reachable():
        return system_venv()
    return None


# the attacks aimed at the CLI's own stdout, graded by a CLI process of their own; the
# rest through grade-all's workers, which run the same command line, as for a class
AT_THE_CLI = ("fake report on stdout and stderr", "200 MB of output")


def through_the_cli(key):
    """Whether a hostile run gets a CLI process of its own: an attack on its stdout, or
    the process level (a Python its uid can reach, which a worker's need not be)."""
    return key[0] in AT_THE_CLI or key[1] == "process"


def in_workers(argv, runs_dir):
    """(CompletedProcess as the CLI would give, seconds) of each grading, in a pool of
    workers whose run folders are under ``runs_dir``."""
    import subprocess
    import time

    from grader.instructor.batch import Pool

    start = time.monotonic()
    # most attacks wait on a limit, not a core: more workers than cores
    with Pool(min(4, len(argv)), cwd=runs_dir, scratch=runs_dir) as pool:
        outputs = pool.run([with_course(args) for args in argv], timeout=HANG_GUARD)
    took = time.monotonic() - start
    return [(subprocess.CompletedProcess(args, code, json.dumps(doc) if doc else "", err),
             took) for args, (code, doc, err) in zip(argv, outputs)]


@pytest.fixture(scope="module")
def attack_results(request, tmp_path_factory):
    """The hostile runs the selected tests read, a few at a time; course and processes
    checked.

    key -> (CompletedProcess, seconds, submission folder, its files before grading).
    """
    wanted = set().union(*(keys_for(item) for item in request.session.items
                           if item.module is request.module))
    before = course_fingerprint()
    jobs = {True: [], False: []}   # through the CLI or not: [(key, argv, folder)]
    # the runs that wait longest first: the last to start is not the one that takes longest
    for key, code, extra in sorted(hostile_jobs(), key=lambda job: job[0][0] not in LONGEST):
        if key not in wanted:
            continue
        folder = tmp_path_factory.mktemp("attack")
        copy_exercises("day3", folder)
        for stub in folder.glob("*.py"):
            stub.write_text((SOLUTIONS / "day3" / stub.name).read_text())
        (folder / "temperature.py").write_text(code)
        args = ["day3", "--submission", folder, "--json", "--lang", "en", *extra]
        if key[1] == "process":
            args = (args, process_level_python())
        files = {p: p.read_bytes() for p in folder.rglob("*") if p.is_file()}
        jobs[through_the_cli(key)].append((key, args, (folder, files)))
    # these runs' folders (and so their children's command lines) under a folder of their own
    runs_dir = tempfile.mkdtemp(prefix="attn-grade-hostile-")
    os.chmod(runs_dir, 0o755)   # a run's own uid must reach its run folder
    results = {}
    try:
        for cli, batch in jobs.items():
            if not batch:
                continue
            argv = [args for _, args, _ in batch]
            runs = (grade_many(argv, workers=4, env={**os.environ, "TMPDIR": runs_dir})
                    if cli else in_workers(argv, runs_dir))
            results.update({key: (*run, *files) for (key, _, files), run in zip(batch, runs)})
        assert child_processes(runs_dir.encode()) == []
    finally:
        shutil.rmtree(runs_dir, ignore_errors=True)
    assert course_fingerprint() == before
    return results


@pytest.mark.parametrize("attack", sorted(ATTACKS))
def test_attack_scores_zero_and_harms_nothing_else(attack_results, attack):
    doc = check_run(*attack_results[attack, "default"])
    assert_only(doc, "temperature")


MESSAGES = {
    "infinite loop": "took longer than 0.25 s",
    "slow import": "importing temperature.py took longer than 1 s",
    "multi-GiB allocation": "used more than 768 MiB",
    "segfault": "crashed (SIGSEGV)",
    "syntax error": "temperature.py has a syntax error",
    "always-equal object": "returned a Liar, expected an array of numbers",
    "huge return value": "far too large",
    "os._exit at import": "exited (code 0)",
    "200 MB of output": "the other 20",
}


def test_messages_name_the_limit_or_problem(attack_results):
    for attack, fragment in MESSAGES.items():
        doc = check_run(*attack_results[attack, "default"])
        outputs = "\n".join(t["output"] for t in doc["tests"])
        assert fragment in outputs, (attack, outputs[:2000])


@pytest.mark.slow   # an endless loop burning a core for ~10 s: .ci/run's slow step
def test_cpu_limit_is_named(attack_results):
    doc = check_run(*attack_results["infinite loop", "cpu"])
    assert "used more than 1 s of CPU time" in doc["tests"][0]["output"]


@pytest.mark.slow   # the same attacks as the default level: .ci/run's slow step
@pytest.mark.parametrize("attack", PROCESS_LEVEL)
def test_process_level_without_bubblewrap_holds_too(attack_results, attack):
    doc = check_run(*attack_results[attack, "process"])
    assert doc["extra_data"]["isolation"].startswith("process")
    assert_only(doc, "temperature")


@pytest.mark.skipif(not BWRAP, reason="bubblewrap is not available here")
def test_reference_solutions_are_out_of_reach(attack_results):
    doc = check_run(*attack_results["read solutions", "bubblewrap"])
    assert doc["extra_data"]["isolation"] == "bubblewrap"
    assert_only(doc, "temperature")


@pytest.mark.skipif(not BWRAP, reason="bubblewrap is not available here")
def test_tampering_changes_no_file(attack_results):
    proc, elapsed, folder, before = attack_results["tamper", "bubblewrap"]
    doc = check_run(proc, elapsed)
    assert_only(doc, "temperature")
    assert {p: p.read_bytes() for p in folder.rglob("*") if p.is_file()} == before
    outputs = [t["output"] for t in doc["tests"] if t["visibility"] == "visible"
               and t["extra_data"]["exercise"] == "temperature"]
    assert outputs and all("ValueError: touched 0 files" in o for o in outputs), outputs


@pytest.mark.parametrize("level", KILL_PARAMS)
def test_killing_every_process_it_may_costs_no_other_exercise(attack_results, level):
    """The run's exercises share one sandbox (its template forks each child), but only
    one child is alive at a time: kill(-1) reaches the template at most, and the next
    exercise forks from a new one."""
    proc, elapsed, *_ = attack_results["kill every process", level]
    doc = check_run(proc, elapsed)
    scores = scores_by_exercise(doc)
    assert scores["temperature"][0] == 0
    for other in ("concepts", "attention"):
        assert scores[other] == pytest.approx((FULL_DAY3[other],) * 2), (other, scores)


@pytest.mark.slow   # chains burn both cores for seconds at a time: .ci/run's slow step
@pytest.mark.parametrize("level", KILL_LEVELS)
@pytest.mark.parametrize("chain", sorted(CHAINS))
def test_a_chain_of_strays_costs_no_other_exercise(attack_results, chain, level):
    """What a child leaves is killed at once (kill(-1) as the run's uid, in its sandbox or
    from the grader), not swept: the next exercise's child meets none of it, and none
    of it outlives the run (attack_results checks)."""
    doc = check_run(*attack_results["chain " + chain, level])
    assert_only(doc, "temperature")


# Without root, bubblewrap maps the child to the grader's own user: it owns work/, the
# folder that holds every child's folder, and everything the grader writes there.
NOT_ROOT_ATTACKS = {
    "link for the next template's settings": """
import os, signal
WORK = os.path.dirname(os.getcwd())
for name in os.listdir(WORK):
    if name.endswith(".json"):
        os.unlink(os.path.join(WORK, name))
os.symlink(PRECIOUS, os.path.join(WORK, "template.json"))
os.kill(os.getppid(), signal.SIGKILL)
""",
    "files beside its own folder": """
import os
for i in range(12):   # each under the file size limit, 96 MiB in all
    with open(os.path.join(os.path.dirname(os.getcwd()), f"junk{i}"), "wb") as f:
        f.write(b"x" * (8 << 20))
""",
    "work folders locked": """
import os
os.chmod(os.getcwd(), 0)
os.chmod(os.path.dirname(os.getcwd()), 0)
""",
}


def as_nobody():
    os.setgroups([])
    os.setgid(65534)
    os.setuid(65534)


@pytest.mark.skipif(os.geteuid() != 0 or not BWRAP, reason="as root, to run a grader as nobody")
@pytest.mark.parametrize("attack", sorted(NOT_ROOT_ATTACKS))
def test_bubblewrap_without_root_keeps_the_work_folder_the_graders(attack):
    python = system_venv()
    if python is None:
        pytest.skip("no Python that nobody can start")
    top = tempfile.mkdtemp(prefix="attn-grade-not-root-")
    try:
        os.chmod(top, 0o777)
        folder, runs = os.path.join(top, "submission"), os.path.join(top, "runs")
        copy_exercises("day3", folder)
        for stub in os.listdir(folder):
            if stub.endswith(".py"):
                shutil.copy(SOLUTIONS / "day3" / stub, os.path.join(folder, stub))
        precious = os.path.join(top, "precious.txt")
        with open(precious, "w") as f:
            f.write("a file of the grader's user")
        code = f"PRECIOUS = {precious!r}\n" + NOT_ROOT_ATTACKS[attack] \
            + funcs("raise NotImplementedError")
        with open(os.path.join(folder, "temperature.py"), "w") as f:
            f.write(code)
        os.mkdir(runs)
        for path in (top, runs, precious):
            os.chown(path, 65534, 65534)
        env = {"PATH": os.environ["PATH"], "TMPDIR": runs, "XDG_CACHE_HOME": runs,
               "PYTHONPATH": str(ROOT)}
        import subprocess
        import time
        start = time.monotonic()
        proc = subprocess.run(
            [python, "-m", "grader", "day3", "--submission", folder, "--json", "--lang", "en",
             *LIMITS, *SELECTION, "--isolation", "bubblewrap"],
            cwd=ROOT, capture_output=True, text=True, env=env, preexec_fn=as_nobody,
            timeout=HANG_GUARD)
        doc = check_run(proc, time.monotonic() - start)
        assert doc["extra_data"]["isolation"] == "bubblewrap"
        assert_only(doc, "temperature")
        with open(precious) as f:
            assert f.read() == "a file of the grader's user"
        assert [name for name in os.listdir(runs) if name.startswith("attn-grade-")] == []
    finally:
        shutil.rmtree(top, ignore_errors=True)


# ------------------------------------------------------------ a class worker's zygote

THROUGH_ZYGOTE = ("kill every process", "chain sweep", "chain template",
                  "monkeypatched numpy math sympy pytest", "forked children that sleep",
                  "segfault", "os._exit at import")


@pytest.mark.skipif(os.geteuid() != 0 or not BWRAP, reason="a zygote needs root and bubblewrap")
def test_attacks_in_a_class_worker_cost_no_later_student(tmp_path, monkeypatch):
    """grade-all's worker forks each student's template from its zygote into that
    student's own sandbox: an attack scores nothing and harms nothing else, and the
    honest student the same worker grades next still gets every point."""
    codes = {**ATTACKS, "kill every process": KILL_ALL,
             **{"chain " + name: code for name, code in CHAINS.items()}}
    honest = tmp_path / "honest"
    copy_exercises("day3", honest)
    for stub in honest.glob("*.py"):
        stub.write_text((SOLUTIONS / "day3" / stub.name).read_text())
    jobs = []
    for name in THROUGH_ZYGOTE:
        folder = tmp_path / name.replace(" ", "-")
        shutil.copytree(honest, folder)
        (folder / "temperature.py").write_text(codes[name])
        # a chain's every link hunts /proc every 20 ms: up to the default process limit
        # (64) they burn both cores while the exercise is graded; 12 links are as
        # deadly to what the next student runs, at a fraction of the cost
        links = ["--process-limit", "12"] if name.startswith("chain") else []
        for submission, extra in ((folder, links), (honest, [])):
            jobs.append(["day3", "--submission", submission, "--json", "--lang", "en",
                         *LIMITS, *SELECTION, "--isolation", "bubblewrap", *extra])
    runs = tmp_path / "runs"   # the workers' run folders: their processes are known by it
    runs.mkdir(mode=0o755)
    monkeypatch.setenv("TMPDIR", str(runs))
    results = grade_in_workers(jobs, workers=1)   # one worker: each attack, then honesty
    for name, (attacked, after) in zip(THROUGH_ZYGOTE, zip(results[::2], results[1::2])):
        assert attacked[0] == 1 and after[0] == 0, (name, attacked, after)
        assert_only(attacked[1], "temperature")
        scores = scores_by_exercise(after[1])
        for exercise in GRADED:
            full = FULL_DAY3[exercise]
            assert scores[exercise] == pytest.approx((full, full)), (name, exercise)
    assert child_processes(str(runs).encode()) == []
    assert not list(runs.iterdir())   # the zygote's folder and every run folder are gone


@pytest.mark.skipif(os.geteuid() != 0 or not BWRAP, reason="a zygote needs root and bubblewrap")
def test_a_killed_class_worker_leaves_no_zygote_nor_its_folder(tmp_path):
    """SIGKILL gives a worker no time to close its zygote: the zygote ends with it and
    had removed its own folder as soon as it started."""
    import signal
    import subprocess
    import time

    runs = tmp_path / "runs"
    runs.mkdir(mode=0o755)
    honest = tmp_path / "honest"
    copy_exercises("day3", honest)
    for stub in honest.glob("*.py"):
        stub.write_text((SOLUTIONS / "day3" / stub.name).read_text())
    worker = subprocess.Popen([sys.executable, "-m", "grader", "grade-worker"], cwd=ROOT,
                              stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True,
                              env={**os.environ, "TMPDIR": str(runs)})
    job = ["day3", "--course", str(ROOT), "--submission", str(honest), "--json",
           "--exercise", "concepts", "--isolation", "bubblewrap"]
    worker.stdin.write(json.dumps(job) + "\n")
    worker.stdin.flush()
    assert json.loads(worker.stdout.readline())["code"] == 0
    worker.send_signal(signal.SIGKILL)
    worker.wait()
    deadline = time.monotonic() + 10
    while child_processes(str(runs).encode()) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert child_processes(str(runs).encode()) == []
    assert not list(runs.iterdir())
