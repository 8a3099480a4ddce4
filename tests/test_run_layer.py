"""The run layer's pieces in-process: statuses, crashes, the file channel, the reaper."""

import json
import os
import signal
import tempfile
import time

import pytest

from grader.course.limits import Limits
from grader.judge.check import outcome_lines
from grader.report.messages import render
from grader.run.channel import INLINE_BYTES, Channel, Waited
from grader.run.child import diagnose
from grader.run.inside import EXIT_OUT_OF_MEMORY
from grader.run.outcome import CallOutcome, Crash, Status, outcome_from_answer
from grader.run.student import RunFolder, StudentProcess
from grader.wire import WireError

MiB = 1024 ** 2
LIMITS = Limits(cpu=30.0, memory=768 * MiB, tmp=8 * MiB, processes=2)


# ------------------------------------------------------------ Status and CallOutcome

@pytest.mark.parametrize("status", list(Status))
def test_status_round_trips_as_its_old_string(status):
    assert Status(status.value) is status
    assert status == status.value and str(status) == f"{status}" == status.value
    assert json.loads(json.dumps({"s": status})) == {"s": status.value}
    assert CallOutcome(status.value).status is status


def test_unknown_status_is_refused():
    with pytest.raises(ValueError):
        CallOutcome("exploded")
    with pytest.raises(WireError):
        outcome_from_answer({"status": "crashed"})   # a child cannot claim a crash


def test_a_crash_crosses_the_hidden_test_fork_as_plain_data():
    outcome = CallOutcome.crashed(Crash.over_limit("memory", 768 * MiB))
    data = json.loads(json.dumps(outcome.to_plain()))
    assert data["status"] == "crashed"
    back = CallOutcome.from_plain(data)
    assert back.status is Status.CRASHED and back.crash == outcome.crash
    assert CallOutcome.from_plain(json.loads(json.dumps(CallOutcome("ok", 3).to_plain()))).ok


# ------------------------------------------------------------ Crash and its message

@pytest.mark.parametrize("crash, detail, words", [
    (Crash.over_limit("cpu", 30.0), "cpu:30", "CPU limit"),
    (Crash.over_limit("memory", 768 * MiB), "memory:768 MiB", "used more than 768 MiB"),
    (Crash.over_limit("disk", 8 * MiB), f"disk:{8 * MiB}", "disk limit"),
    (Crash.over_limit("processes", 2), "processes:2", "process limit"),
    (Crash.by_signal("SIGSEGV"), "signal:SIGSEGV", "crashed (SIGSEGV)"),
    (Crash.exited(3), "exit:3", "exited (code 3)"),
])
def test_crash_renders_through_outcome_lines(crash, detail, words):
    outcome = CallOutcome.crashed(crash)
    assert outcome.detail == detail
    [line] = outcome_lines(outcome, "f", "f.py", LIMITS)
    assert words in render(line, "en")


def test_crash_fields_are_checked():
    with pytest.raises(ValueError):
        Crash("melted")
    with pytest.raises(ValueError):
        Crash.over_limit("patience", 1)


@pytest.mark.parametrize("code, level, crash", [
    (-signal.SIGSEGV, "process", Crash.by_signal("SIGSEGV")),
    (-signal.SIGXCPU, "process", Crash.over_limit("cpu", 30.0)),
    (128 + signal.SIGKILL, "bubblewrap", Crash.by_signal("SIGKILL")),
    (128 + signal.SIGKILL, "process", Crash.exited(128 + signal.SIGKILL)),
    (EXIT_OUT_OF_MEMORY, "process", Crash.over_limit("memory", 768 * MiB)),
    (0, "none", Crash.exited(0)),
])
def test_diagnosis_reads_the_exit_status_and_the_limits(code, level, crash):
    assert diagnose(code, level, LIMITS) == crash


# ------------------------------------------------------------ the channel

def test_channel_refuses_a_planted_link_and_reads_answers_from_its_pipe_only(tmp_path):
    secret = tmp_path / "secret.txt"
    secret.write_text("answer key")
    work = tmp_path / "work"
    work.mkdir()
    (work / "req-000001.json").symlink_to(secret)
    (work / "ans-000002.json").write_text(json.dumps({"status": "ok", "value": 1}))
    channel = Channel(work)
    try:
        large = {"op": "call", "args": "x" * INLINE_BYTES}   # too large for its line: a file
        assert channel.send("000001", large) is False   # never written through
        assert secret.read_text() == "answer key"
        # a file the child wrote is not an answer: only its pipe is read
        assert channel.wait(time.monotonic() + 0.1, lambda: False, 1000) is Waited.TIMEOUT
        assert channel.wait(time.monotonic() + 5, lambda: True, 1000) is Waited.EXITED
    finally:
        channel.close()


def _frame(rid, payload):
    body = payload if isinstance(payload, bytes) else json.dumps(payload).encode()
    return f"{rid} {len(body)}\n".encode() + body


@pytest.fixture
def channel(tmp_path):
    channel = Channel(tmp_path, disk_cap=4096)
    yield channel
    channel.close()


def test_requests_written_ahead_share_one_line_or_one_file(channel, tmp_path):
    """A window of requests goes on one line of the child's stdin (ids, a tab, the JSON
    list); one too large for a line goes in a file named by its first id."""
    child_end = os.dup(channel.answers_w)   # the child's, kept past attach()
    read, write = os.pipe()
    channel.attach(os.fdopen(write, "wb"))
    try:
        assert channel.send("000001", b'[{"op": "a"}, {"op": "b"}]', ["000002"])
        assert os.read(read, 100) == b'000001 000002\t[{"op": "a"}, {"op": "b"}]\n'
        assert list(tmp_path.iterdir()) == []
        large = b"[" + b",".join([b'{"op": "%s"}' % (b"x" * (INLINE_BYTES // 2))] * 2) + b"]"
        assert channel.send("000003", large, ["000004"])
        assert os.read(read, 100) == b"000003 000004\n"
        assert [p.name for p in tmp_path.iterdir()] == ["req-000003.json"]
        for rid in ("000001", "000002", "000003", "000004"):
            os.write(child_end, _frame(rid, {"status": "ok", "value": int(rid)}))
        for rid in ("000001", "000002", "000003", "000004"):
            assert channel.wait(time.monotonic() + 5, lambda: False, 100) is Waited.ANSWER
            assert channel.read_answer(rid, 100).value == int(rid)
        assert list(tmp_path.iterdir()) == []   # read: the file went with its first answer
    finally:
        os.close(child_end)
        os.close(read)


def test_channel_reads_frames_in_order_also_in_pieces(channel):
    first, second = _frame("000001", {"status": "ok", "value": 1}), _frame("000002", {
        "status": "ok", "value": 2})
    os.write(channel.answers_w, first[:5])
    assert channel.wait(time.monotonic() + 0.05, lambda: False, 1000) is Waited.TIMEOUT
    os.write(channel.answers_w, first[5:] + second)
    soon = time.monotonic() + 5
    assert channel.wait(soon, lambda: False, 1000) is Waited.ANSWER
    assert channel.read_answer("000001", 1000).value == 1
    assert channel.wait(soon, lambda: False, 1000) is Waited.ANSWER
    assert channel.read_answer("000002", 1000).value == 2
    assert not channel.broken
    assert channel.wait(time.monotonic() + 0.05, lambda: False, 1000) is Waited.TIMEOUT
    assert channel.wait(time.monotonic() + 0.05, lambda: True, 1000) is Waited.EXITED


@pytest.mark.parametrize("stream, status, broken", [
    (_frame("000002", {"status": "ok", "value": 1}), Status.BAD_ANSWER, True),   # another's
    (_frame("000001", {"status": "ok", "value": "x" * 200}), Status.TOO_LARGE, True),
    (b"000001 twelve\n{}", Status.BAD_ANSWER, True),
    (b"0" * 100, Status.BAD_ANSWER, True),                                  # no header at all
    (_frame("000001", b"{not json"), Status.BAD_ANSWER, False),   # read whole: still in step
])
def test_a_frame_that_cannot_be_read_is_a_bad_answer(channel, stream, status, broken):
    os.write(channel.answers_w, stream)
    assert channel.wait(time.monotonic() + 5, lambda: False, 100) is Waited.ANSWER
    assert channel.read_answer("000001", 100).status is status
    assert channel.broken is broken   # broken: nothing more is read from this child


def test_the_grader_reads_no_more_than_one_frame_ahead(channel):
    os.write(channel.answers_w, _frame("000001", {"status": "ok", "value": 1}) + b"9" * 60_000)
    assert channel.wait(time.monotonic() + 5, lambda: False, 100) is Waited.ANSWER
    assert len(channel._buffer) <= 40 + 100 + 1
    assert channel.read_answer("000001", 100).value == 1


def test_a_half_frame_from_a_child_that_ended_is_no_answer(channel):
    os.write(channel.answers_w, _frame("000001", {"status": "ok", "value": 1})[:-3])
    os.close(channel.answers_w)
    channel.answers_w = None
    assert channel.wait(time.monotonic() + 5, lambda: True, 100) is Waited.EXITED


def test_channel_caps_the_work_folder_and_times_out(channel, tmp_path):
    assert channel.wait(time.monotonic(), lambda: False, 100) is Waited.TIMEOUT
    assert channel.wait(time.monotonic(), lambda: True, 100) is Waited.EXITED
    channel.write_new("job.json", b"{}")
    with pytest.raises(OSError):
        channel.write_new("job.json", b"again")   # never over a file
    (tmp_path / "big").write_bytes(os.urandom(64 * 1024))
    assert channel.over_disk_cap()
    os.write(channel.answers_w, _frame("000001", {"status": "ok", "value": 1}))
    assert channel.wait(time.monotonic() + 5, lambda: False, 100) is Waited.DISK


# ------------------------------------------------------------ a real child

CODE = '''
import os, signal

def segv():
    os.kill(os.getpid(), signal.SIGSEGV)

def claims_memory_error():
    os.write(2, b"MemoryError\\n")
    os._exit(1)

def ok():
    return 1

def memory_after_the_call():
    import sys

    def write_answer(*args):   # the child's own answer writer runs out of memory
        raise MemoryError
    sys.modules["_attn_grade_child.calls"].write_answer = write_answer   # from the next answer on
    return 1
'''


@pytest.fixture
def process(tmp_path):
    (tmp_path / "mod.py").write_text(CODE)
    folder = RunFolder()
    child = StudentProcess(folder, tmp_path, "mod", Limits(time=5.0), "none")
    yield child
    child.close()
    folder.close()


def test_a_crash_by_signal_is_a_structured_crash(process):
    outcome = process.call("segv")
    assert outcome.status is Status.CRASHED
    assert outcome.crash == Crash.by_signal("SIGSEGV") and outcome.detail == "signal:SIGSEGV"
    assert process.call("ok").value == 1   # a fresh child


def test_what_a_child_prints_does_not_decide_its_crash(process):
    outcome = process.call("claims_memory_error")
    assert outcome.crash == Crash.exited(1)
    assert "MemoryError" in outcome.output   # shown, not believed


def test_out_of_memory_outside_a_call_is_the_memory_limit(process):
    assert process.call("memory_after_the_call").ok
    outcome = process.call("ok")
    assert outcome.crash == Crash.over_limit("memory", process.limits.memory)
    assert outcome.output == ""


def test_the_run_folder_owns_its_live_processes(process):
    """The children are forks of the run's one template; the folder owns the template,
    a closed student process leaves it warm for the next, a closed folder kills it."""
    reaper = process.folder.reaper
    assert not reaper.live
    assert process.call("ok").ok
    template = process.proc.pid
    assert reaper.live == {template}
    process.close()
    assert process.proc is None and reaper.live == {template}
    assert process.call("ok").ok and process.proc.pid == template   # forked, not started
    process.folder.close()
    assert not reaper.live


def test_the_reaper_spares_the_graders_own_forks_and_kills_strays():
    """A stray (a student process that left its group) is killed; the grader's own
    fork (judging, hidden tests) lives in the grader's session and is spared."""
    import os
    import signal
    import time

    from grader.run import processes

    if not processes.become_subreaper():
        pytest.skip("no subreaper on this platform")
    own = os.fork()
    if own == 0:
        time.sleep(30)
        os._exit(0)
    stray = os.fork()
    if stray == 0:
        os.setsid()
        time.sleep(30)
        os._exit(0)
    try:
        deadline = time.monotonic() + 5
        while os.getsid(stray) == os.getsid(0) and time.monotonic() < deadline:
            time.sleep(0.01)   # until the stray has left the grader's session
        processes.reap_strays(keep=set())
        with pytest.raises(ChildProcessError):   # killed and reaped
            os.waitpid(stray, os.WNOHANG)
        assert os.waitpid(own, os.WNOHANG) == (0, 0)   # still running
    finally:
        os.kill(own, signal.SIGKILL)
        os.waitpid(own, 0)


def test_an_orphan_that_comes_back_to_the_grader_is_found_and_killed():
    """A student's double fork: the middle process ends, its child comes back to the
    grader (a subreaper) and is found in the grader's own list of children; where the
    kernel keeps no such list, every process is looked at instead."""
    import os
    import time

    from grader.run import processes

    if not processes.become_subreaper():
        pytest.skip("no subreaper on this platform")
    read, write = os.pipe()
    middle = os.fork()
    if middle == 0:
        os.setsid()
        orphan = os.fork()
        if orphan == 0:
            time.sleep(30)
            os._exit(0)
        os.write(write, str(orphan).encode())
        os._exit(0)
    os.waitpid(middle, 0)
    orphan = int(os.read(read, 32))
    os.close(read)
    os.close(write)
    assert str(orphan) in processes.child_pids(os.getpid())
    processes.reap_strays(keep=set())
    with pytest.raises(ChildProcessError):   # killed and reaped
        os.waitpid(orphan, os.WNOHANG)
    assert str(os.getpid()) in processes.child_pids(2 ** 22 + 1)   # no such process: all


def test_run_folders_go_where_tmpdir_says_and_else_into_memory_when_it_has_room(
        monkeypatch, tmp_path):
    """$TMPDIR wins; without it a tmpfs /dev/shm with room holds run folders (each call
    writes and removes two files: cheaper in memory than on a journalled disk)."""
    from grader.run import sandbox

    monkeypatch.setenv("TMPDIR", str(tmp_path))
    sandbox.scratch_folder.cache_clear()
    monkeypatch.setattr(tempfile, "tempdir", None)
    try:
        folder = RunFolder()
        assert folder.root.parent == tmp_path
        folder.close()
        monkeypatch.delenv("TMPDIR")
        sandbox.scratch_folder.cache_clear()
        monkeypatch.setattr(sandbox, "MEMORY_FOLDER_ROOM", 1 << 60)   # never that much room
        assert sandbox.scratch_folder() is None
    finally:
        sandbox.scratch_folder.cache_clear()


def test_an_answer_read_before_is_the_same_outcome_and_only_answers_are_kept(monkeypatch):
    from grader.run import channel as channel_module

    monkeypatch.setattr(channel_module, "_seen", {})
    monkeypatch.setattr(channel_module, "SEEN_MAX", 2)
    ok = json.dumps({"status": "ok", "value": 1, "inputs_digest": "d"}).encode()
    error = json.dumps({"status": "error", "error": {"type": "ValueError"}}).encode()
    first = channel_module.read_outcome(ok)
    assert channel_module.read_outcome(ok) is first and first.value == 1
    assert channel_module.read_outcome(error) is not channel_module.read_outcome(error)
    assert channel_module.read_outcome(b"{not json").status is Status.BAD_ANSWER
    for n in range(3):   # a full memory starts again
        channel_module.read_outcome(json.dumps({"status": "ok", "value": n}).encode())
    assert len(channel_module._seen) <= 2
    import numpy as np

    from grader import wire

    array = json.dumps({"status": "ok", "value": wire.encode(np.zeros(3))}).encode()
    kept = channel_module.read_outcome(array).value
    with pytest.raises(ValueError):   # shared by every identical answer: nobody changes it
        kept[0] = 1.0


def test_a_frame_over_its_cap_is_too_large_by_the_size_it_announced(channel):
    """Said as a child's own "too_large" answer says it (a size the message shows in
    the student's language), not in English words."""
    frame = _frame("000001", {"status": "ok", "value": "x" * 200})
    os.write(channel.answers_w, frame)
    assert channel.wait(time.monotonic() + 5, lambda: False, 100) is Waited.ANSWER
    outcome = channel.read_answer("000001", 100)
    assert outcome.status is Status.TOO_LARGE and outcome.detail == frame.split(b" ")[1].split(
        b"\n")[0].decode()
