"""A child's requests, its answer pipe and its work folder, seen from the grader.

The grader writes a child's requests on its stdin, a line each window: their ids,
then a tab and their JSON; a window too large for one line goes in ``req-ID.json``
in the child's folder (never through a link, never over an existing file), and the
line holds the ids alone.  The child answers on its answer pipe: a line
``ID LENGTH`` and that many bytes of JSON, one frame a call, in the order of the
requests (a pipe, not a file a call: two files, a rename and a wake-up less a
call, on both sides).  The grader reads at most one frame's cap ahead and refuses
a frame for another id, or over the cap; the stream is then broken and the child
is not asked again.  It also keeps the folder under its disk cap.
"""

import enum
import hashlib
import json
import os
import select
import stat
import time
from collections.abc import Callable, Sequence
from typing import IO, Any

import numpy as np

from .. import wire
from .outcome import ANSWER_STREAM, NOT_DATA, CallOutcome, Status, outcome_from_answer

SIZE_CHECK_EVERY = 0.2   # seconds between checks of the work folder's size
MAX_WORK_ENTRIES = 10_000
HEADER_BYTES = 40        # "ID LENGTH\n": an id of the grader's and a length
# a line of requests on a child's stdin, at most: under PIPE_BUF, so written whole,
# and it fits in a pipe the child shrank to a page once it read the line before
INLINE_BYTES = 3584
READ_BYTES = 1 << 16


class Waited(enum.Enum):
    """How a wait for an answer ended."""

    ANSWER = "answer"     # a whole frame is there (or one that cannot be read)
    EXITED = "exited"     # the child is gone and sent no answer
    DISK = "disk"         # the work folder is over its disk cap
    TIMEOUT = "timeout"   # the deadline passed


class Channel:
    """The files and pipes through which the grader talks to one child.

    ``broken``: a frame could not be read (another id, over the cap, no header);
    nothing more is read from this child.

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
        self.answers, self.answers_w = os.pipe()   # the answers; the child gets the write end
        os.set_blocking(self.answers, False)
        self._buffer = bytearray()
        self._eof = False
        self.broken = False
        self._over_cap: int | None = None   # the size a frame over its cap announced
        self._requests: set[str] = set()   # the ids that name a request file

    def attach(self, stdin: IO[bytes] | None) -> None:
        """The child started: its stdin is ours, the pipe's write end is its own.

        Our end never blocks: a child that answers ids it guessed without reading
        them lets its stdin fill (shrunk to a page, in a few windows), and a blocking
        write would then wait for good."""
        self.stdin = stdin
        if stdin is not None:
            os.set_blocking(stdin.fileno(), False)
        os.close(self.answers_w)
        self.answers_w = None

    def close(self) -> None:
        for fd in (self.answers, self.answers_w, self._dir_fd, self._cap_fd):
            if fd is not None:
                os.close(fd)
        self.answers = self.answers_w = self._dir_fd = self._cap_fd = None
        if self.stdin is not None:
            try:
                self.stdin.close()
            except OSError:
                pass
            self.stdin = None

    # ------------------------------------------------------------ requests
    def send(self, rid: str, request: dict[str, Any] | bytes, then: Sequence[str] = ()) -> bool:
        """Send ``request`` (or its JSON) with its id on one line of the child's stdin:
        after a tab when the line stays under INLINE_BYTES, else in ``req-ID.json``.
        ``then``: the ids of more requests sent with it (``request`` is then the JSON
        list of them all), on the same line.

        False if the request file could not be created (the child planted a file or
        link under that name), or if the line does not fit in its stdin (it left the
        last one unread: a child that reads its requests has read every line before it
        answers the ids on it; the stream is then broken); BrokenPipeError/OSError if
        the child is gone.
        """
        data = request if isinstance(request, bytes) else \
            json.dumps(request, allow_nan=False).encode()
        line = " ".join((rid, *then)).encode()
        if len(line) + len(data) + 2 <= INLINE_BYTES:   # JSON text holds no raw tab
            line += b"\t" + data
        else:
            try:
                self.write_new(f"req-{rid}.json", data)
            except OSError:
                return False
            self._requests.add(rid)
        line += b"\n"   # under PIPE_BUF: written all or nothing
        try:
            written = os.write(self.stdin.fileno(), line)
        except BlockingIOError:
            written = 0
        if written != len(line):
            self.broken = True
            return False
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
    def wait(self, deadline: float, exited: Callable[[], bool], limit: int) -> Waited:
        """Wait for the next frame until ``deadline`` (monotonic); a ``Waited``.

        ``exited()``: whether the child is gone (then a frame it sent still counts);
        ``limit``: the most bytes a frame may hold.
        """
        next_size_check = time.monotonic() + SIZE_CHECK_EVERY
        while True:
            if self.broken or self._frame(limit) is not None:
                return Waited.DISK if self.over_disk_cap() else Waited.ANSWER
            now = time.monotonic()
            if now >= next_size_check:
                if self.over_disk_cap():
                    return Waited.DISK
                next_size_check = now + SIZE_CHECK_EVERY
            remaining = deadline - now
            if self._eof:   # no frame can come now: wait for the child's end
                if exited():
                    return Waited.EXITED
                if remaining <= 0:
                    return Waited.TIMEOUT
                time.sleep(min(remaining, 0.01))
                continue
            readable, _, _ = select.select([self.answers], [], [], max(0, min(remaining, 0.05)))
            if readable:
                self._fill(limit)
            elif exited():   # what it sent before it ended was readable: none came
                return Waited.EXITED
            elif remaining <= 0:
                return Waited.TIMEOUT

    def _fill(self, limit: int) -> None:
        """Read what the pipe holds, never more than one frame's cap ahead."""
        room = HEADER_BYTES + limit + 1 - len(self._buffer)
        try:
            data = os.read(self.answers, max(1, min(room, READ_BYTES)))
        except BlockingIOError:
            return
        if data:
            self._buffer += data
        else:
            self._eof = True

    def _frame(self, limit: int) -> tuple[str, int, int] | None:
        """(id, start, end) of the whole frame at the buffer's head, None while it is
        incomplete; a header that cannot be read breaks the stream."""
        newline = self._buffer.find(b"\n", 0, HEADER_BYTES)
        if newline < 0:
            if len(self._buffer) >= HEADER_BYTES:
                self.broken = True
            return None
        parts = bytes(self._buffer[:newline]).split(b" ")
        if len(parts) != 2 or not parts[0].isdigit() or not parts[1].isdigit():
            self.broken = True
            return None
        size = int(parts[1])
        if size > limit:
            self.broken, self._over_cap = True, size
            return None
        end = newline + 1 + size
        return (parts[0].decode(), newline + 1, end) if len(self._buffer) >= end else None

    def read_answer(self, rid: str, limit: int) -> CallOutcome:
        """The validated outcome of the frame for ``rid`` (at most ``limit`` bytes);
        its request file is removed (read once: free the disk now)."""
        if rid in self._requests:
            self._requests.discard(rid)
            try:
                os.unlink(f"req-{rid}.json", dir_fd=self._dir_fd)
            except OSError:
                pass
        frame = None if self.broken else self._frame(limit)
        if frame is None or frame[0] != rid:
            self.broken = True
            # the size it announced, as a child's own "too_large" answer gives it
            return CallOutcome(Status.TOO_LARGE, detail=str(self._over_cap)) \
                if self._over_cap is not None else \
                CallOutcome(Status.BAD_ANSWER, detail=ANSWER_STREAM)
        _, start, end = frame
        text = bytes(self._buffer[start:end])
        del self._buffer[:end]
        return read_outcome(text)

    def console_tail(self, limit: int = 4000) -> str:
        """The end of what the child printed outside calls (for a crash's report): the
        last ``limit`` bytes of its console, a regular file (never through a link)."""
        try:
            fd = os.open("console.log", os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC,
                         dir_fd=self._dir_fd)
        except OSError:
            return ""
        try:
            info = os.fstat(fd)
            if not stat.S_ISREG(info.st_mode):
                return ""
            os.lseek(fd, max(0, info.st_size - limit), os.SEEK_SET)
            chunks, left = [], limit
            while left > 0 and (chunk := os.read(fd, left)):   # at most limit, if it grows
                chunks.append(chunk)
                left -= len(chunk)
            return b"".join(chunks).decode("utf-8", "replace")
        except OSError:
            return ""
        finally:
            os.close(fd)

    # ------------------------------------------------------------ the disk cap
    def over_disk_cap(self) -> bool:
        """Whether the work folder holds more than its cap allows (bytes or entries)."""
        if self.disk_cap is None:
            return False
        scope = self._dir_fd if self._cap_fd is None else self._cap_fd
        used, entries = disk_usage(scope, self.disk_cap, MAX_WORK_ENTRIES)
        return used > self.disk_cap or entries > MAX_WORK_ENTRIES


# Answers read before in this process, by the hash of their text: the same bytes are
# the same outcome (most answers of a class, every child's import), decoded once.
# Only answers (status ok), and small ones (1 KiB of text decodes to at most a few
# tens of KiB); their arrays are made read-only, as nobody who reads one may change it.
SEEN_MAX, SEEN_TEXT = 1024, 1024
_seen: dict[str, CallOutcome] = {}


def read_outcome(text: bytes) -> CallOutcome:
    """The validated outcome of an answer's JSON text."""
    digest = hashlib.sha256(text).hexdigest()
    known = _seen.get(digest)
    if known is not None:
        return known
    try:
        outcome = outcome_from_answer(json.loads(text), digest)
    except (ValueError, RecursionError, TypeError, wire.WireError):
        return CallOutcome(Status.BAD_ANSWER, detail=NOT_DATA)
    if outcome.ok and len(text) <= SEEN_TEXT:
        for value in outcome.value if type(outcome.value) in (tuple, list) \
                else (outcome.value,):
            if isinstance(value, np.ndarray):
                value.flags.writeable = False
        if len(_seen) >= SEEN_MAX:
            _seen.clear()
        _seen[digest] = outcome
    return outcome


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
