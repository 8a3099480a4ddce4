"""The run's warm template: one sandbox per run, a fresh fork per student process.

In-process, at the level that needs no privileges; the hostile suite runs the
same attacks through the CLI in bubblewrap.
"""

import os
import tempfile

import pytest

from grader.course.limits import Limits
from grader.run import sandbox
from grader.run.outcome import Status
from grader.run.student import RunFolder, StudentProcess
from grader.run.template import fits, widest

PATCHES = '''
import math
import numpy as np

np.dot = lambda *args, **kwargs: 42.0
np.sum = lambda *args, **kwargs: -7.0
math.sqrt = lambda x: -1.0

def patched():
    return float(np.dot([1.0, 2.0], [3.0, 4.0]))
'''

CLEAN = '''
import math
import numpy as np

def clean():
    return [float(np.dot([1.0, 2.0], [3.0, 4.0])), math.sqrt(16.0),
            float(np.sum([1.0, 2.0]))]

def hang():
    while True:
        pass

def die():
    import os
    os._exit(3)
'''


@pytest.fixture
def run(tmp_path):
    (tmp_path / "patches.py").write_text(PATCHES)
    (tmp_path / "clean.py").write_text(CLEAN)
    folder = RunFolder(sandbox.plan("none"))
    made = []

    def process(module, **limits):
        made.append(StudentProcess(folder, tmp_path, module, Limits(**limits), "none"))
        return made[-1]

    yield folder, process
    for p in made:
        p.close()
    folder.close()


def test_monkeypatching_numpy_in_one_exercise_does_not_reach_the_next(run):
    folder, process = run
    patched, clean = process("patches"), process("clean")
    assert patched.call("patched").value == 42.0
    assert clean.call("clean").value == [11.0, 4.0, 3.0]
    assert clean.proc.pid == patched.proc.pid     # both forks of the run's one template


def test_a_hung_or_dead_child_is_replaced_by_a_fork_not_a_new_sandbox(run):
    folder, process = run
    child = process("clean", time=0.5)
    assert child.call("clean").ok
    template = child.proc.pid
    assert child.call("hang").status is Status.TIMEOUT
    assert child.call("die").status is Status.CRASHED
    assert child.call("clean").value == [11.0, 4.0, 3.0]
    assert child.proc.pid == template and folder.reaper.live == {template}


def test_a_template_serves_only_limits_it_can_pass_on():
    small, large = Limits(memory=256 * 1024 ** 2), Limits(memory=2 * 1024 ** 3, time=60)
    assert fits(small, large) and not fits(large, small)
    assert fits(Limits(time=60), Limits(time=1))   # wall time is the grader's, not its
    assert widest(small, large).memory == large.memory


def test_a_process_that_needs_wider_limits_gets_a_template_of_its_own(run):
    folder, process = run
    narrow = process("clean", memory=512 * 1024 ** 2)
    wide = process("clean", memory=2 * 1024 ** 3)
    assert narrow.call("clean").ok and wide.call("clean").ok
    assert narrow.proc.pid != wide.proc.pid
    assert folder.reaper.live == {narrow.proc.pid, wide.proc.pid}


RESPAWNING = '''
import os, time

def leave_a_chain():
    """Sessions that respawn one another: a sweep of /proc kills one per pass."""
    if os.fork() == 0:
        os.setsid()
        while True:
            try:
                if os.fork() == 0:
                    os.setsid()
                    continue
                os.wait()
            except OSError:
                time.sleep(0.001)
    time.sleep(0.3)

def others():
    """The processes of this uid besides this one and the template."""
    mine = (os.getpid(), os.getppid())
    found = []
    for entry in os.listdir("/proc"):
        if entry.isdigit() and int(entry) not in mine:
            try:
                status = open(f"/proc/{entry}/status").read()
            except OSError:
                continue
            if f"Uid:\\t{os.getuid()}\\t" in status and "State:\\tZ" not in status:
                found.append(int(entry))
    return found
'''


@pytest.mark.skipif(not (sandbox.bubblewrap_works() and os.geteuid() == 0),
                    reason="needs bubblewrap as root (a uid and a PID namespace of the run's)")
def test_a_chain_a_child_leaves_is_gone_before_the_next_fork(tmp_path, monkeypatch):
    monkeypatch.setattr(tempfile, "tempdir", None)
    monkeypatch.setenv("TMPDIR", str(tmp_path))
    tmp_path.chmod(0o755)
    (tmp_path / "sub").mkdir(mode=0o755)
    (tmp_path / "sub" / "respawning.py").write_text(RESPAWNING)
    folder = RunFolder(sandbox.plan("bubblewrap"))
    try:
        first = StudentProcess(folder, tmp_path / "sub", "respawning", Limits(), "bubblewrap")
        assert first.call("leave_a_chain").ok
        first.close()
        second = StudentProcess(folder, tmp_path / "sub", "respawning", Limits(), "bubblewrap")
        assert second.call("others").value == []
        second.close()
    finally:
        folder.close()
