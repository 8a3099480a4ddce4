"""Trusted work on student answers, in a fork of the grader with a hard deadline.

Judging an answer is real computation on data the student chose: sympy
simplification, evaluating an expression to a float, numpy comparisons, an
instructor's hidden pytest assertions.  A crafted answer (``3**(10**8)``
built lazily, ``Abs`` nested 400 deep) can make any of them run for minutes
inside C code, where SIGALRM never fires.  So that work runs in a forked
copy of the grader: the parent reads its events, one JSON line each, and
kills it when no event arrives in time.  The fork also gets an address-space
cap, so an answer cannot make the grader itself run out of memory.

Events are plain JSON (the parent never unpickles what a fork sends).  Each
event restarts the clock with ``budget`` seconds; time the parent spends
answering an event (a call into the student's process, under that call's
own limits) is not the fork's.
"""

import gc
import json
import os
import select
import time
from collections.abc import Callable, Iterator
from typing import Any

from ..run import processes

MAX_EVENT_BYTES = 4 * 1024 ** 2
EXTRA_MEMORY = 1024 ** 3          # address space a fork may add to the grader's


class Overrun(Exception):
    """The fork sent nothing in time, died, or sent an unreadable event."""

    def __init__(self, why, detail=""):
        super().__init__(why)
        self.why, self.detail = why, detail


def can_fork() -> bool:
    return hasattr(os, "fork")


def events(target: Callable[[Any], None], budget: float) -> Iterator["Event"]:
    """Run ``target(channel)`` in a fork; yield each event it emits (a dict).

    ``channel.emit(event)`` sends an event; ``channel.ask(event)`` sends one
    and waits for the parent's ``reply`` (the parent does what only it may do,
    such as calling into a student process it owns).  Raises Overrun when an
    event is late, the fork dies before finishing, or an event is not a JSON
    object.  The fork is always killed and reaped.
    """
    fork = Fork(target, budget)
    try:
        yield from fork
    finally:
        fork.close()


class Fork:
    """``events`` with the fork started at once: its work overlaps the parent's until
    the parent first reads an event (hidden tests collect while the YAML checks run).
    Iterate it like ``events``; close it when done (it is closed on Overrun or end)."""

    def __init__(self, target: Callable[[Any], None], budget: float):
        up_read, up_write = os.pipe()
        down_read, down_write = os.pipe()
        self.pid = processes.fork_call(
            lambda: _run_child(target, up_write, down_read, (up_read, down_write)))
        os.close(up_write)
        os.close(down_read)
        self._up: int | None = up_read
        # the seconds the fork has for its next event: its reader may change it as it
        # goes (a hidden test of an exercise with less trusted time left)
        self.budget = budget
        self._replies = os.fdopen(down_write, "w", encoding="utf-8")
        self._events = _read_events(up_read, lambda: self.budget, self._replies, self.pid)

    def __iter__(self) -> "Fork":
        return self

    def __next__(self) -> "Event":
        try:
            return next(self._events)
        except BaseException:
            self.close()
            raise

    def close(self) -> None:
        if self._up is None:
            return
        os.close(self._up)
        self._up = None
        try:
            self._replies.close()
        except OSError:
            pass
        processes.kill_and_reap(self.pid)


class Event(dict):
    """An event from the fork; ``reply`` answers an ``ask``."""

    def __init__(self, data, replies):
        super().__init__(data)
        self._replies = replies

    def reply(self, data: object) -> None:
        try:
            self._replies.write(json.dumps(data, ensure_ascii=True) + "\n")
            self._replies.flush()
        except OSError:   # the fork died; the next read says so
            pass


class _Channel:   # pragma: no cover - runs in the fork
    def __init__(self, up, down):
        self.up = os.fdopen(up, "w", encoding="utf-8", errors="backslashreplace")
        self.down = os.fdopen(down, "r", encoding="utf-8")

    def emit(self, event):
        self.up.write(json.dumps(event, ensure_ascii=True) + "\n")
        self.up.flush()

    def ask(self, event):
        self.emit(event)
        line = self.down.readline()
        if not line:
            os._exit(1)
        return json.loads(line)


def _run_child(target, up, down, theirs):   # pragma: no cover - runs in the fork
    """The fork's life (``processes.fork_call`` exits with what it returns)."""
    for fd in theirs:
        os.close(fd)
    # a short life: no collection, which would walk (and so copy) the whole inherited heap
    gc.disable()
    try:
        processes.cap_address_space(EXTRA_MEMORY)
        channel = _Channel(up, down)
        target(channel)
        channel.emit({"done": True})
        return 0
    except BaseException:   # a bug on the trusted side: the parent says where
        try:
            import traceback

            channel.emit({"crash": traceback.format_exc()[-4000:]})
        except BaseException:
            pass
        return 1


def _read_events(fd, budget, replies, pid):
    """The fork's events; ``budget()``: the seconds it has for the next one."""
    buffer = b""
    clock = _Clock(pid, budget())
    while True:
        newline = buffer.find(b"\n")
        if newline >= 0:
            line, buffer = buffer[:newline], buffer[newline + 1:]
            event = _parse(line)
            if event.get("done") is True:
                return
            if "crash" in event:
                raise Overrun("crash", str(event["crash"]))
            yield Event(event, replies)
            clock = _Clock(pid, budget())
            continue
        if len(buffer) > MAX_EVENT_BYTES:
            raise Overrun("event too large")
        remaining = clock.remaining()
        if remaining <= 0:
            raise Overrun("timeout")
        readable, _, _ = select.select([fd], [], [], remaining)
        if readable:
            chunk = os.read(fd, 1 << 16)
            if not chunk:
                raise Overrun("died")
            buffer += chunk


STARVED_FACTOR = 10   # wall time a starved fork may take: this many budgets


class _Clock:
    """The fork's budget in its own CPU seconds, where /proc says them: burners a
    student's child left running (each in a session, so a scheduling group, of its
    own) can starve the fork of the CPU, and that must not read as an overrun.  A
    fork that uses no CPU (asleep, stuck) still ends after STARVED_FACTOR budgets."""

    def __init__(self, pid, budget):
        self.pid, self.budget = pid, budget
        self.start = time.monotonic()
        self.cpu = processes.cpu_seconds(pid)

    def remaining(self) -> float:
        elapsed = time.monotonic() - self.start
        if elapsed < self.budget:
            return self.budget - elapsed
        cpu = processes.cpu_seconds(self.pid)
        if self.cpu is None or cpu is None or elapsed >= self.budget * STARVED_FACTOR:
            return 0.0
        return max(0.0, min(self.budget - (cpu - self.cpu), 0.25))


def _parse(line):
    try:
        event = json.loads(line)
    except ValueError:
        raise Overrun("unreadable event") from None
    if type(event) is not dict:
        raise Overrun("unreadable event")
    return event
