"""A grading run's own uid: claimed (locked) for the run, and left clean for the next.

As root, each run's children run as a uid/gid of its own (UID_BASE + n), held by
a lock file while the run lasts and kept, locked and clean, by the process that
released it for its next run.  Clean means: no process of the uid left (killed
with one kill(-1) as the uid, then swept), no files of it at the top of the scratch
folders, no keys in its keyrings, no SysV IPC objects or message queues of it.  Its lock
file says so from its release to its next claim, which then has nothing to scrub.
"""

import contextlib
import dataclasses
import errno
import fcntl
import grp
import os
import pwd
import shutil
import stat
from collections.abc import Callable

from ..errors import CourseError
from . import processes
from .inside import confine

UID_BASE, UID_COUNT = 200000, 60000
LOCK_DIRS = ("/run/attn-grade-uids", "/tmp/attn-grade-uids")
SCRATCH_DIRS = ("/tmp", "/var/tmp", "/dev/shm")


class IsolationError(CourseError):
    """The isolation asked for cannot be given, or is weaker than required: exit 2."""


@dataclasses.dataclass
class Identity:
    """An unprivileged uid/gid of its own for one grading run, held by a lock."""

    uid: int
    gid: int
    lock_fd: int = -1
    # every process of the uid runs in a PID namespace of a sandbox's (bubblewrap), where
    # no pid of the grader's can be named (see kill_processes_of)
    sandboxed: bool = False

    def release(self) -> None:
        """Kill what still runs as this uid and delete its scratch files; the uid stays
        locked, clean, for this process's next run (a worker's next student)."""
        if self.lock_fd < 0:
            return
        scrub(self.uid, sandboxed=self.sandboxed)
        _mark_clean(self.lock_fd, True)
        _CLEAN.append(Identity(self.uid, self.gid, self.lock_fd))
        self.lock_fd = -1


# Identities this process released: cleaned then, and locked ever since, so no one else
# ran as them; the next claim takes one without cleaning it again.  A fork starts with
# none: its parent's are still its parent's (two forks of dev check run side by side).
_CLEAN: list[Identity] = []
os.register_at_fork(after_in_child=lambda: _CLEAN.clear())


def claim_identity() -> Identity:
    """A uid/gid (UID_BASE + n) no other grading run holds, locked (until this process
    ends: a released one is kept clean for the next claim)."""
    if _CLEAN:
        kept = _CLEAN.pop()
        _mark_clean(kept.lock_fd, False)
        return kept
    lock_dir = _lock_dir()
    for uid in range(UID_BASE, UID_BASE + UID_COUNT):   # the lowest free: few lock files
        if _named(uid):
            continue
        fd = os.open(os.path.join(lock_dir, f"{uid}.lock"),
                     os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError as exc:
            os.close(fd)
            if exc.errno in (errno.EWOULDBLOCK, errno.EAGAIN):
                continue
            raise
        # what a grader that died left: processes, files (run folders of the group uid
        # too), keys and IPC objects; none where the last holder released it clean
        if not _marked_clean(fd):
            scrub(uid)
        _mark_clean(fd, False)
        return Identity(uid, uid, fd)
    raise IsolationError(f"no free uid in {UID_BASE}..{UID_BASE + UID_COUNT - 1}")


# A uid's lock file says "clean" from its release (after its scrub) until its next claim:
# nothing can run as a uid nobody holds, so that claim has nothing to scrub (a fork and a
# sweep of /proc saved: a fifth of a cold one-exercise grading).  A holder that dies
# leaves it unmarked, and a claim of an unmarked uid scrubs.  Only root writes there.
CLEAN_MARK = b"clean\n"


def _marked_clean(fd: int) -> bool:
    return os.pread(fd, len(CLEAN_MARK) + 1, 0) == CLEAN_MARK


def _mark_clean(fd: int, clean: bool) -> None:
    os.ftruncate(fd, 0)
    if clean:
        os.pwrite(fd, CLEAN_MARK, 0)


def _lock_dir():
    """A root-owned folder for the uid locks, not writable by anyone else."""
    for path in LOCK_DIRS:
        try:
            os.makedirs(path, mode=0o700, exist_ok=True)
            info = os.lstat(path)
        except OSError:
            continue
        if stat.S_ISDIR(info.st_mode) and info.st_uid == 0 and not info.st_mode & 0o022:
            return path
    raise IsolationError("no safe folder for uid locks: " + " or ".join(LOCK_DIRS))


def _named(uid):
    """Whether a user or group of the system already has this number."""
    for lookup in (pwd.getpwuid, grp.getgrgid):
        try:
            lookup(uid)
            return True
        except KeyError:
            pass
    return False


def kill_processes_of(uid: int, sandboxed: bool = False) -> None:
    """SIGKILL every process whose real or effective uid is ``uid`` (until none is left).

    First, as root, kill(-1) running as ``uid``: one call that no fork escapes (a sweep
    of /proc misses what is forked while it runs, and a chain of processes that respawn
    one another outlives any number of sweeps).  From a thread of the grader's only when
    ``sandboxed`` (every process of the uid is in a sandbox's PID namespace): a process
    of the uid that can name that thread (the process level; one a dead grader left)
    may signal it while it runs as the uid, and a SIGKILL or SIGSTOP sent to one thread
    reaches the whole grader.  Elsewhere from a fork, which such a signal ends alone.
    """
    if os.geteuid() == 0:
        (_kill_all_as if sandboxed else _kill_all_in_fork)(uid)
    processes.kill_until_gone(lambda: processes.processes_of(uid))


# setresuid(2)'s system call number: called directly, it changes the calling thread's
# credentials alone (libc's setresuid changes every thread's)
SETRESUID = {"x86_64": 117, "aarch64": 147, "riscv64": 147}


def _kill_all_as(uid: int) -> None:
    """kill(-1, SIGKILL) as ``uid``: every process of ``uid`` at once (root only), from a
    thread that alone becomes ``uid`` (``_as_uid``).  While it runs as ``uid`` a process
    of ``uid`` may signal it (tgkill): only where none can name it (kill_processes_of)."""
    _as_uid(uid, processes.kill_everything, "kill")


def _as_uid(uid: int, action: Callable[[], None], what: str) -> None:
    """``action()`` as ``uid`` (root only): in a thread of this process that alone becomes
    ``uid`` (its capabilities go with root, and its credentials end with it; a fork of a
    grader that imported numpy and pytest costs milliseconds), or in a fork where the
    system call is unknown.  OSError if it could not become ``uid``."""
    import ctypes
    import platform
    import threading

    number = SETRESUID.get(platform.machine())
    if number is None:
        return _in_fork_as(uid, action)
    libc = ctypes.CDLL(None, use_errno=True)
    failed: list[int] = []

    def as_uid():
        if libc.syscall(number, uid, uid, uid) != 0:
            failed.append(ctypes.get_errno())
            return
        action()

    thread = threading.Thread(target=as_uid, name=f"{what}-as-uid")
    thread.start()
    thread.join()
    if failed:
        raise OSError(failed[0], f"could not become uid {uid} to {what}")


def _kill_all_in_fork(uid: int) -> None:
    _in_fork_as(uid, processes.kill_everything)


def _in_fork_as(uid: int, action: Callable[[], None]) -> None:
    def as_uid():
        os.setresuid(uid, uid, uid)
        action()

    pid = processes.fork_call(as_uid)
    # a process of the uid may stop the fork (SIGSTOP) before its action: killed, not
    # waited for forever
    while os.WIFSTOPPED(os.waitpid(pid, os.WUNTRACED)[1]):
        processes.kill(pid)


def scrub(uid: int, sandboxed: bool = False) -> None:
    """Leave nothing of ``uid``'s for its next run (another student): its processes
    (``kill_processes_of``), its files at the top of the scratch folders, and what the
    kernel keeps for it beyond any process (``forget_kernel_state_of``)."""
    kill_processes_of(uid, sandboxed=sandboxed)
    remove_scratch_files_of(uid)
    forget_kernel_state_of(uid)


def forget_kernel_state_of(uid: int) -> None:
    """Empty ``uid``'s keyrings (user, user-session and the persistent one, which the
    kernel keeps for days) and remove its SysV IPC objects and POSIX message queues in
    this IPC namespace (the process level's; a bubblewrap sandbox's own go with it).
    The syscall filter refuses student code all of these (``run.syscalls``); this is
    for a run without one.  Only once no process of ``uid`` is left (its thread runs as
    ``uid``)."""
    if os.geteuid() != 0:
        return
    with contextlib.suppress(OSError):
        _as_uid(uid, _clear_own_keyrings, "clear keyrings")
    _remove_ipc_of(uid)
    _remove_queues_of(uid)


def _clear_own_keyrings() -> None:
    """In a thread running as the uid: its keyrings emptied, as a child empties them."""
    with contextlib.suppress(SystemExit):   # a keyring it could not clear: none to clear
        confine.own_keyrings(join=False)


IPC_RMID = 0
SYSV_IPC = (("shm", "shmid", "shmctl"), ("msg", "msqid", "msgctl"), ("sem", "semid", "semctl"))


def _remove_ipc_of(uid: int) -> None:
    """Remove the SysV shared memory, message queues and semaphores ``uid`` owns or made
    (as /proc/sysvipc lists them, columns by their header)."""
    import ctypes

    libc = ctypes.CDLL(None, use_errno=True)
    for kind, id_column, control in SYSV_IPC:
        try:
            with open(f"/proc/sysvipc/{kind}", encoding="ascii") as f:
                header, *rows = [line.split() for line in f]
        except (OSError, ValueError):
            continue
        for row in rows:
            fields = dict(zip(header, row))
            if str(uid) in (fields.get("uid"), fields.get("cuid")) and \
                    fields.get(id_column, "").isdigit():
                if kind == "sem":
                    libc.semctl(int(fields[id_column]), 0, IPC_RMID, None)
                else:
                    getattr(libc, control)(int(fields[id_column]), IPC_RMID, None)


def _remove_queues_of(uid: int) -> None:
    """Remove the POSIX message queues of ``uid`` where the mqueue file system shows them."""
    for folder in [point for point, kind in processes.mounts() if kind == "mqueue"]:
        try:
            entries = list(os.scandir(folder))
        except OSError:
            continue
        for entry in entries:
            with contextlib.suppress(OSError):
                if entry.stat(follow_symlinks=False).st_uid == uid:
                    os.unlink(entry.path)


def remove_scratch_files_of(uid: int) -> None:
    """Delete what ``uid`` left at the top of /tmp, /var/tmp and /dev/shm, and run
    folders of its group (root:uid) a grader that died left there."""
    import tempfile

    for top in dict.fromkeys([*SCRATCH_DIRS, tempfile.gettempdir()]):   # run folders: TMPDIR
        try:
            entries = list(os.scandir(top))
        except OSError:
            continue
        for entry in entries:
            try:
                info = entry.stat(follow_symlinks=False)
                if uid not in (info.st_uid, info.st_gid):
                    continue
                if entry.is_dir(follow_symlinks=False):
                    shutil.rmtree(entry.path, ignore_errors=True)
                else:
                    os.unlink(entry.path)
            except OSError:
                pass
