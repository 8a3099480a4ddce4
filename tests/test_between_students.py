"""Nothing one student leaves behind reaches another (issue 28).

A run's uid is reused: every single run takes the lowest free one, and a grade-all
worker keeps one for all its students.  So whatever the kernel keeps per uid beyond
a process (its keyrings, SysV IPC, message queues, files at the top of /tmp) would be
a channel from one student to the next.  A colluder leaves its own source there; a
free rider whose stub is empty looks for it and runs it.  The free rider must score 0.
"""

import json
import os
import platform
import shutil

import pytest
from conftest import EXERCISES, SOLUTIONS, run_cli

from grader.run import identity as uids
from grader.run import sandbox

AS_ROOT = pytest.mark.skipif(os.geteuid() != 0, reason="a run's own uid needs root")
KEY_CALLS = {"x86_64": (248, 250), "aarch64": (217, 219)}   # add_key, keyctl
KEYRINGS = pytest.mark.skipif(platform.machine() not in KEY_CALLS, reason="syscall numbers")

# what both use: the persistent keyring of their uid (KEYCTL_GET_PERSISTENT), which the
# kernel keeps for days whatever runs as the uid
KEYRING = '''
import ctypes, platform
_libc = ctypes.CDLL(None, use_errno=True)
_libc.syscall.restype = ctypes.c_long
_ADD_KEY, _KEYCTL = {"x86_64": (248, 250), "aarch64": (217, 219)}[platform.machine()]
def _persistent():
    # KEYCTL_GET_PERSISTENT, linked into the process keyring
    return _libc.syscall(_KEYCTL, 22, ctypes.c_long(-1), ctypes.c_long(-2))
'''

COLLUDER_TAIL = KEYRING + '''
def _leave():
    ring = _persistent()
    data = open(__file__, "rb").read()
    if ring > 0:
        _libc.syscall(_ADD_KEY, b"user", b"attn-answer", data, len(data), ctypes.c_long(ring))
_leave()
'''

FREE_RIDER = KEYRING + '''
def _take():
    ring = _persistent()
    key = _libc.syscall(_KEYCTL, 10, ctypes.c_long(ring), b"user", b"attn-answer", 0) \\
        if ring > 0 else -1
    if key <= 0:
        return None
    buf = ctypes.create_string_buffer(1 << 16)
    n = _libc.syscall(_KEYCTL, 11, ctypes.c_long(key), buf, 1 << 16)
    return buf.raw[:n].decode() if n > 0 else None
_code = _take()
if _code:
    exec(_code.split("ctypes.CDLL", 1)[0].rsplit("import ctypes", 1)[0], globals())
else:
    def softmax(logits, T=1.0):
        raise NotImplementedError
    def greedy(logits):
        raise NotImplementedError
'''


def _student(folder, temperature):
    shutil.copytree(EXERCISES / "day3", folder)
    (folder / "temperature.py").write_text(temperature, encoding="utf-8")
    return folder


def _colluder(tmp_path):
    right = (SOLUTIONS / "day3" / "temperature.py").read_text(encoding="utf-8")
    return _student(tmp_path / "a-colluder", right + COLLUDER_TAIL)


def _temperature_score(document):
    return sum(t["score"] for t in document["tests"]
               if t["extra_data"]["exercise"] == "temperature")


@AS_ROOT
@KEYRINGS
def test_a_key_left_in_the_persistent_keyring_reaches_no_later_run(tmp_path):
    colluder = _colluder(tmp_path)
    rider = _student(tmp_path / "b-rider", FREE_RIDER)
    scores = []
    for folder in (colluder, rider):
        proc = run_cli("day3", "--submission", folder, "--exercise", "temperature", "--json",
                       "--lang", "en")
        assert proc.returncode in (0, 1), proc.stderr
        scores.append(_temperature_score(json.loads(proc.stdout)))
    assert scores == [10, 0]


@AS_ROOT
@KEYRINGS
def test_a_key_left_in_the_persistent_keyring_reaches_no_later_student_of_a_worker(
        tmp_path):
    """One grade-all worker grades both, one after the other, as one uid."""
    class_dir = tmp_path / "class"
    class_dir.mkdir()
    _colluder(class_dir)
    _student(class_dir / "b-rider", FREE_RIDER)
    out = tmp_path / "out"
    proc = run_cli("grade-all", "day3", class_dir, "-o", out, "--jobs", "1",
                   "--exercise", "temperature", "--lang", "en", timeout=300)
    assert proc.returncode == 0, proc.stderr
    rows = {line.split(",")[0]: line.split(",")[1]
            for line in (out / "gradebook.csv").read_text().splitlines()[1:]}
    assert float(rows["a-colluder"]) == 10
    assert float(rows["b-rider"]) == 0



def _as(uid, action):
    """``action()`` in a fork running as ``uid``; its exit code (0: it returned True)."""
    pid = os.fork()
    if pid == 0:
        code = 1
        try:
            os.setresgid(uid, uid, uid)
            os.setresuid(uid, uid, uid)
            code = 0 if action() else 3
        finally:
            os._exit(code)
    return os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1])


def _keyctl():
    import ctypes

    libc = ctypes.CDLL(None, use_errno=True)
    libc.syscall.restype = ctypes.c_long
    return libc, KEY_CALLS[platform.machine()]


def _leave_a_key_and_a_segment():
    import ctypes

    libc, (add_key, keyctl) = _keyctl()
    ring = libc.syscall(keyctl, 22, ctypes.c_long(-1), ctypes.c_long(-2))
    key = libc.syscall(add_key, b"user", b"left", b"secret", 6, ctypes.c_long(ring))
    segment = libc.shmget(0, 4096, 0o1600)   # IPC_PRIVATE, IPC_CREAT | 0600
    return ring > 0 and key > 0 and segment >= 0


def _persistent_keyring_is_empty():
    import ctypes

    libc, (_, keyctl) = _keyctl()
    ring = libc.syscall(keyctl, 22, ctypes.c_long(-1), ctypes.c_long(-2))
    buf = ctypes.create_string_buffer(64)
    return ring > 0 and libc.syscall(keyctl, 11, ctypes.c_long(ring), buf, 64) == 0


def _segments_of(uid):
    with open("/proc/sysvipc/shm") as f:
        header, *rows = [line.split() for line in f]
    return [row for row in rows if dict(zip(header, row))["uid"] == str(uid)]


@AS_ROOT
@KEYRINGS
def test_a_released_uid_keeps_no_key_and_no_ipc_object_for_its_next_run():
    """Without the syscall filter (a machine with no libseccomp, or an older grader's
    run), what a run left in the kernel goes when its uid is released."""
    identity = uids.claim_identity()
    try:
        assert _as(identity.uid, _leave_a_key_and_a_segment) == 0
        assert _segments_of(identity.uid)
    finally:
        identity.release()
    assert _as(identity.uid, _persistent_keyring_is_empty) == 0
    assert _segments_of(identity.uid) == []


# ------------------------------------------------------------ one exercise to the next

WRITER = '''
import os

def leave(text):
    """What one exercise's code could log of its calls (a hidden check's inputs)."""
    left = []
    for folder in ("/tmp", "/var/tmp", "/dev/shm", os.path.dirname(os.getcwd())):
        try:
            with open(os.path.join(folder, "exercise-a-left.txt"), "w") as f:
                f.write(text)
            left.append(folder)
        except OSError:
            pass
    os.makedirs("/tmp/exercise-a-dir/locked", exist_ok=True)
    os.chmod("/tmp/exercise-a-dir", 0)
    return left
'''

READER = '''
import os

def found():
    """Whatever an earlier exercise of the run left where this one could look."""
    seen = {}
    work = os.path.dirname(os.getcwd())
    for folder in ("/tmp", "/var/tmp", "/dev/shm", work):
        try:
            names = os.listdir(folder)
        except OSError:
            names = []
        seen[folder] = sorted(n for n in names if n.startswith("exercise-a-"))
        path = os.path.join(folder, "exercise-a-left.txt")
        if os.path.exists(path):
            seen[folder].append(open(path).read())
    return {folder: names for folder, names in seen.items() if names}
'''

EXERCISE_LEVELS = [
    pytest.param("process", marks=AS_ROOT),
    pytest.param("bubblewrap", marks=pytest.mark.skipif(
        not sandbox.bubblewrap_works(), reason="bubblewrap is not available here")),
    pytest.param("zygote", marks=pytest.mark.skipif(
        os.geteuid() != 0 or not sandbox.bubblewrap_works(),
        reason="a zygote needs root and bubblewrap")),
]


@pytest.mark.parametrize("level", EXERCISE_LEVELS)
def test_what_one_exercise_leaves_in_a_scratch_folder_no_later_one_finds(tmp_path, level,
                                                                        request):
    """One exercise's code logs a call's arguments where it can write; a later exercise
    of the same run prints what it finds there (its output is shown): nothing."""
    from conftest import HANG_GUARD

    from grader.course.limits import Limits
    from grader.run.student import RunFolder, StudentProcess

    if level == "process":
        request.getfixturevalue("reachable_python")
    zygote = None
    if level == "zygote":   # this test process's, which its other gradings share
        from conftest import session_zygote

        zygote = session_zygote()
    tmp_path.chmod(0o755)
    (tmp_path / "writer.py").write_text(WRITER)
    (tmp_path / "reader.py").write_text(READER)
    folder = RunFolder(sandbox.plan("bubblewrap" if level == "zygote" else level), zygote)
    limits = Limits(time=HANG_GUARD)
    try:
        writer = StudentProcess(folder, tmp_path, "writer", limits, folder.plan.level)
        left = writer.call("leave", ["[[0.25, -1.5]]"])
        writer.close()
        reader = StudentProcess(folder, tmp_path, "reader", limits, folder.plan.level)
        found = reader.call("found")
        reader.close()
    finally:
        folder.close()
    assert left.ok and "/tmp" in left.value, left
    assert found.ok and found.value == {}, found
