"""The grader side's process primitives, written once: reading ``/proc``, killing and
reaping, forking to call a function, resource limits, and the reaper of strays.

Used by the run layer (the run's uid, the template's sandbox, the children), by the
bounded forks of the trusted side (``judge.bounded``) and by the instructor's forks
(``instructor.devcheck``, ``instructor.forked_worker``).  The sandbox's own side has
its twins of a few of these (``inside``): it can import nothing of the grader's.
"""

import functools
import os
import resource
import signal
import sys
import time
from collections.abc import Callable, Collection

# ------------------------------------------------------------ /proc


def stat_fields(pid: int | str) -> list[bytes] | None:
    """The fields of ``/proc/PID/stat`` after the command's name (state, ppid, pgrp,
    session, ...: ``proc(5)``'s third field on), or None if it cannot be read."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            text = f.read()
    except OSError:
        return None
    return text[text.rfind(b")") + 2:].split()


def cpu_seconds(pid: int) -> float | None:
    """User and system CPU seconds of a live process, None where /proc cannot tell."""
    fields = stat_fields(pid)
    try:
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")  # type: ignore[index]
    except (TypeError, ValueError, IndexError):
        return None


def memory_in_use() -> int | None:
    """This process's address space in bytes (``/proc/self/statm``), or None."""
    try:
        with open("/proc/self/statm", encoding="ascii") as f:
            return int(f.read().split()[0]) * os.sysconf("SC_PAGE_SIZE")
    except (OSError, ValueError, IndexError):
        return None


def mounts() -> list[tuple[str, str]]:
    """(mount point, file system type) of each mount this process sees, or none if
    ``/proc/self/mounts`` cannot be read."""
    try:
        with open("/proc/self/mounts", encoding="utf-8") as f:
            return [(fields[1], fields[2]) for fields in map(str.split, f) if len(fields) > 2]
    except OSError:
        return []


def processes_of(uid: int) -> list[int]:
    """The live processes whose real or effective uid is ``uid`` (a zombie is left to
    its parent)."""
    found = []
    wanted = str(uid).encode()
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/status", "rb") as f:
                for line in f:
                    if line.startswith(b"State:") and line.split()[1:2] == [b"Z"]:
                        break   # dead already: its parent reaps it
                    if line.startswith(b"Uid:"):
                        if wanted in line.split()[1:3]:
                            found.append(int(entry))
                        break
        except OSError:
            continue
    return found


def children_of(parent: int, not_session: int) -> list[int]:
    """Children of ``parent`` that are not in the session ``not_session``."""
    found = []
    for entry in child_pids(parent):
        fields = stat_fields(entry)   # state ppid pgrp session ...
        if fields is not None and len(fields) > 3 and fields[1] == str(parent).encode() \
                and fields[3] != str(not_session).encode():
            found.append(int(entry))
    return found


def child_pids(parent: int) -> list[str]:
    """The pids that may be children of ``parent``: its threads' lists of children
    (an orphan comes back to any thread of a subreaper), or every process where the
    kernel keeps no such list."""
    try:
        tasks = os.listdir(f"/proc/{parent}/task")
        listed = []
        for task in tasks:
            with open(f"/proc/{parent}/task/{task}/children", "rb") as f:
                listed.extend(f.read().split())
        return [pid.decode() for pid in listed]
    except FileNotFoundError:
        return [entry for entry in os.listdir("/proc") if entry.isdigit()]


# ------------------------------------------------------------ kill and reap

def kill(pid: int, group: bool = False) -> None:
    """SIGKILL ``pid`` (and, with ``group``, its process group first), if it is there
    and may be signalled."""
    for send in ((os.killpg, os.kill) if group else (os.kill,)):
        try:
            send(pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass


def reap(pid: int) -> None:
    """Wait for child ``pid`` to end, if it is still a child of this process."""
    try:
        os.waitpid(pid, 0)
    except ChildProcessError:
        pass


def kill_and_reap(pid: int, group: bool = False) -> None:
    kill(pid, group)
    reap(pid)


def kill_everything() -> None:
    """kill(-1, SIGKILL): every process this one may signal, in one call."""
    try:
        os.kill(-1, signal.SIGKILL)
    except ProcessLookupError:   # none
        pass


def kill_until_gone(find: Callable[[], list[int]], rounds: int = 20,
                    pause: float = 0.01) -> None:
    """SIGKILL what ``find()`` lists until it lists none (at most ``rounds`` looks)."""
    for _ in range(rounds):
        found = find()
        if not found:
            return
        for pid in found:
            kill(pid)
        time.sleep(pause)


# ------------------------------------------------------------ fork and call

def fork_call(action: Callable[[], int | None], stdio: bool = False) -> int:
    """Fork; the fork runs ``action()`` and exits, never returning here: with its
    result (0 for None), a SystemExit's code, or 1 if it raised.  ``stdio``: the
    fork's stdout and stderr are its own (a worker's log): a traceback is printed
    there and both are flushed before it exits (``os._exit`` flushes nothing).  The
    pid, in the parent."""
    pid = os.fork()
    if pid:
        return pid
    code = 1   # pragma: no cover - runs in the fork
    try:
        result = action()
        code = 0 if result is None else result
    except SystemExit as exc:
        code = exc.code if isinstance(exc.code, int) else 0 if exc.code is None else 1
    except BaseException:
        if stdio:
            import traceback

            traceback.print_exc()
    finally:
        if stdio:
            for stream in (sys.stdout, sys.stderr):
                try:
                    stream.flush()
                except BaseException:
                    pass
        os._exit(code)


# ------------------------------------------------------------ resource limits

def set_limit(which: int, soft: int, hard: int | None = None) -> None:
    """Set a resource limit, never above the hard limit already in place."""
    _, current_hard = resource.getrlimit(which)
    hard = soft if hard is None else hard
    if current_hard != resource.RLIM_INFINITY:
        soft, hard = min(soft, current_hard), min(hard, current_hard)
    resource.setrlimit(which, (soft, hard))


def cap_address_space(extra: int) -> None:
    """This process's address space: what it uses now and ``extra`` bytes more, at
    most (its hard limit stays)."""
    current = memory_in_use()
    if current is None:
        return
    soft, hard = resource.getrlimit(resource.RLIMIT_AS)
    cap = current + extra
    if hard != resource.RLIM_INFINITY:
        cap = min(cap, hard)
    resource.setrlimit(resource.RLIMIT_AS, (cap, hard))


# ------------------------------------------------------------ the reaper

PR_SET_CHILD_SUBREAPER = 36


@functools.cache
def become_subreaper() -> bool:
    """Make orphans of student processes re-parent to the grader (Linux); whether it is one.

    A student may fork and setsid() to leave the child's process group; as a
    subreaper the grader still finds such processes and kills them.  bubblewrap
    does not need this: its PID namespace dies with it.  Asked once per process
    (a fork asks again: ``become_subreaper.cache_clear()``).
    """
    if not sys.platform.startswith("linux"):
        return False
    import ctypes

    try:
        libc = ctypes.CDLL(None, use_errno=True)
        return libc.prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) == 0
    except (OSError, AttributeError):
        return False


def reap_strays(keep: Collection[int]) -> None:
    """Kill and reap processes re-parented to the grader that it did not start.

    Nothing unless the grader is a subreaper; ``keep`` must hold every child
    the grader started and still runs.  Only processes outside the grader's
    session are strays: every student process starts a session of its own,
    while the grader's own forks (judging, hidden tests) stay in its session.
    """
    if not become_subreaper():
        return
    me, session = os.getpid(), os.getsid(0)
    for _ in range(20):
        strays = [pid for pid in children_of(me, session) if pid not in keep]
        if not strays:
            return
        for pid in strays:
            kill(pid)
        for pid in strays:
            reap(pid)


class Reaper:
    """The live children of one grading run, and the killing of strays.

    Makes the grader a subreaper (once per process), so what a student
    detaches from its child's process group still comes back to be killed.
    """

    def __init__(self) -> None:
        become_subreaper()
        self.live: set[int] = set()

    def started(self, pid: int) -> None:
        self.live.add(pid)

    def ended(self, pid: int) -> None:
        self.live.discard(pid)
        reap_strays(self.live)
