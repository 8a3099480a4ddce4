"""The request/answer files in one child's work folder, seen from the grader.

The grader writes ``req-ID.json`` (and ``job.json``) into the child's folder,
never through a link and never over an existing file, and the id on the
child's stdin; the child writes ``ans-ID.json`` and pokes the notify pipe.
The grader reads only regular files there, size-capped, through a descriptor
of the folder (a link the child plants is refused).  It also keeps the
folder under its disk cap.
"""

import enum
import hashlib
import json
import os
import select
import stat
import time
from collections.abc import Callable
from typing import IO, Any

from .. import wire
from .outcome import CallOutcome, Status, outcome_from_answer

SIZE_CHECK_EVERY = 0.2   # seconds between checks of the work folder's size
MAX_WORK_ENTRIES = 10_000


class Waited(enum.Enum):
    """How a wait for an answer ended."""

    ANSWER = "answer"     # the answer file is there
    EXITED = "exited"     # the child is gone and wrote no answer
    DISK = "disk"         # the work folder is over its disk cap
    TIMEOUT = "timeout"   # the deadline passed


class Channel:
    """The files and pipes through which the grader talks to one child.

    ``disk_cap``: bytes the work folder may hold (None: not checked);
    ``identity``: the run's own uid, which gets the files written here;
    ``cap_scope``: the folder the cap counts, when the child may write beyond its own
    (the folder of every child's folder, which its uid owns without a uid of its own).
    """

    def __init__(self, workdir, identity=None, disk_cap=None, cap_scope=None):
        self.workdir, self.identity, self.disk_cap = workdir, identity, disk_cap
        self.stdin = None
        self._dir_fd = os.open(workdir, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
        self._cap_fd = None if cap_scope is None else os.open(
            cap_scope, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
        self.notify, self.notify_w = os.pipe()   # the child gets the write end

    def attach(self, stdin: IO[bytes] | None) -> None:
        """The child started: its stdin is ours, the pipe's write end is its own."""
        self.stdin = stdin
        os.close(self.notify_w)
        self.notify_w = None

    def close(self) -> None:
        for fd in (self.notify, self.notify_w, self._dir_fd, self._cap_fd):
            if fd is not None:
                os.close(fd)
        self.notify = self.notify_w = self._dir_fd = self._cap_fd = None
        if self.stdin is not None:
            try:
                self.stdin.close()
            except OSError:
                pass
            self.stdin = None

    # ------------------------------------------------------------ requests
    def send(self, rid: str, request: dict[str, Any] | bytes) -> bool:
        """Write ``req-ID.json`` (``request``, or its JSON) and the id on the child's stdin.

        False if the request file could not be created (the child planted a
        file or link under that name); BrokenPipeError/OSError if the child is gone.
        """
        try:
            data = request if isinstance(request, bytes) else \
                json.dumps(request, allow_nan=False).encode()
            self.write_new(f"req-{rid}.json", data)
        except OSError:
            return False
        self.stdin.write(f"{rid}\n".encode())
        self.stdin.flush()
        return True

    def write_new(self, name: str, data: bytes) -> None:
        """Create a file in the child's folder; never through a link, never over a file."""
        fd = os.open(name, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC,
                     0o644, dir_fd=self._dir_fd)
        try:
            os.write(fd, data)
            if self.identity is not None:
                os.fchown(fd, self.identity.uid, self.identity.gid)
        finally:
            os.close(fd)

    # ------------------------------------------------------------ answers
    def wait(self, rid: str, deadline: float, exited: Callable[[], bool]) -> Waited:
        """Wait for ``ans-ID.json`` until ``deadline`` (monotonic); a ``Waited``.

        ``exited()``: whether the child is gone (then its answer, if any, counts).
        """
        answer = f"ans-{rid}.json"
        next_size_check = time.monotonic() + SIZE_CHECK_EVERY
        while True:
            if self.exists(answer):
                return Waited.DISK if self.over_disk_cap() else Waited.ANSWER
            if exited():
                return Waited.ANSWER if self.exists(answer) else Waited.EXITED
            now = time.monotonic()
            if now >= next_size_check:
                if self.over_disk_cap():
                    return Waited.DISK
                next_size_check = now + SIZE_CHECK_EVERY
            remaining = deadline - now
            if remaining <= 0:
                return Waited.TIMEOUT
            readable, _, _ = select.select([self.notify], [], [], min(remaining, 0.05))
            if readable and not os.read(self.notify, 4096):
                time.sleep(min(remaining, 0.01))  # pipe closed: keep polling

    def read_answer(self, rid: str, limit: int) -> CallOutcome:
        """The validated outcome in ``ans-ID.json`` (at most ``limit`` bytes); both
        files of the call are removed (read once: free the disk now)."""
        name = f"ans-{rid}.json"
        try:
            text = self.read_private(name, limit)
            return outcome_from_answer(json.loads(text), hashlib.sha256(text).hexdigest())
        except OverflowError:
            return CallOutcome(Status.TOO_LARGE, detail="answer file over the size cap")
        except (OSError, ValueError, RecursionError, TypeError, wire.WireError) as exc:
            return CallOutcome(Status.BAD_ANSWER, detail=str(exc)[:200])
        finally:
            for done in (name, f"req-{rid}.json"):
                try:
                    os.unlink(done, dir_fd=self._dir_fd)
                except OSError:
                    pass

    def read_private(self, name: str, limit: int, tail: bool = False) -> bytes:
        """Read at most ``limit`` bytes of a regular file of the child's folder (no links).

        OverflowError if the file is larger and ``tail`` is false; with ``tail``
        its last ``limit`` bytes.
        """
        fd = os.open(name, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC, dir_fd=self._dir_fd)
        try:
            info = os.fstat(fd)
            if not stat.S_ISREG(info.st_mode):
                raise OSError("not a regular file")
            if info.st_size > limit and not tail:
                raise OverflowError(info.st_size)
            if tail:
                os.lseek(fd, max(0, info.st_size - limit), os.SEEK_SET)
            chunks, left = [], limit
            while left > 0 and (chunk := os.read(fd, left)):   # at most limit, if it grows
                chunks.append(chunk)
                left -= len(chunk)
            return b"".join(chunks)
        finally:
            os.close(fd)

    def console_tail(self, limit: int = 4000) -> str:
        """The end of what the child printed outside calls (for a crash's report)."""
        try:
            return self.read_private("console.log", limit, tail=True).decode("utf-8", "replace")
        except OSError:
            return ""

    def exists(self, name: str) -> bool:
        try:
            os.stat(name, dir_fd=self._dir_fd, follow_symlinks=False)
            return True
        except OSError:
            return False

    # ------------------------------------------------------------ the disk cap
    def over_disk_cap(self) -> bool:
        """Whether the work folder holds more than its cap allows (bytes or entries)."""
        if self.disk_cap is None:
            return False
        scope = self._dir_fd if self._cap_fd is None else self._cap_fd
        used, entries = disk_usage(scope, self.disk_cap, MAX_WORK_ENTRIES)
        return used > self.disk_cap or entries > MAX_WORK_ENTRIES


def disk_usage(dir_fd: int, cap: int, max_entries: int) -> tuple[int, int]:
    """(bytes on disk, entries) under a folder, never following links; stops past a cap."""
    used, entries, stack = 0, 0, [os.dup(dir_fd)]
    try:
        while stack:
            fd = stack.pop()
            try:
                with os.scandir(fd) as it:
                    for entry in it:
                        entries += 1
                        try:
                            info = entry.stat(follow_symlinks=False)
                        except OSError:
                            continue
                        used += info.st_blocks * 512
                        if entry.is_dir(follow_symlinks=False):
                            try:
                                stack.append(os.open(entry.name, os.O_RDONLY | os.O_DIRECTORY
                                                     | os.O_NOFOLLOW | os.O_CLOEXEC, dir_fd=fd))
                            except OSError:
                                pass
                        if used > cap or entries > max_entries:
                            return used, entries
            finally:
                os.close(fd)
    finally:
        for fd in stack:
            os.close(fd)
    return used, entries
