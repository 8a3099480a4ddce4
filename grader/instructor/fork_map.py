"""Instructor work spread over forks of this process, a few at a time.

The gradings of a course's sets mostly wait on student processes: two sets side by
side take little longer than one.  A fork shares what this process has imported
(pytest's plugins, sympy) and sends back plain JSON.
"""

import dataclasses
import json
import os
import select
from collections.abc import Callable, Sequence
from typing import Any

from ..run import processes


@dataclasses.dataclass(frozen=True)
class Crashed:
    """What a fork that ended without its result gives: its exit status."""

    status: int


def fork_map(work: Callable[[Any], Any], items: Sequence[Any]) -> list[Any]:
    """``[work(item) for item in items]``, each in a fork (JSON-able results), as many
    at once as there are cores (two at least); an item whose fork ended without its
    result gives a Crashed.  In this process where there is no fork."""
    if not hasattr(os, "fork") or len(items) < 2:
        return [work(item) for item in items]
    at_once = max(2, os.cpu_count() or 1)
    queue = list(enumerate(items))
    running: dict[int, tuple[int, int]] = {}   # read end -> (index, pid)
    out: list[Any] = [None] * len(items)
    while queue or running:
        while queue and len(running) < at_once:   # the next as soon as a slot is free
            index, item = queue.pop(0)
            pid, read = _start(work, item)
            running[read] = (index, pid)
        read = select.select(list(running), [], [])[0][0]   # a fork writes as it ends
        index, pid = running.pop(read)
        out[index] = _finish(pid, read)
    return out


def _start(work, item):
    read, write = os.pipe()

    def run():   # pragma: no cover - runs in the fork
        os.close(read)
        processes.become_subreaper.cache_clear()   # a fork is no subreaper until it asks
        result = work(item)
        with os.fdopen(write, "w", encoding="utf-8") as out:
            json.dump(result, out)

    pid = processes.fork_call(run)
    os.close(write)
    return pid, read


def _finish(pid, read):
    with os.fdopen(read, encoding="utf-8") as f:
        text = f.read()
    _, status = os.waitpid(pid, 0)
    code = os.waitstatus_to_exitcode(status)
    if code != 0 or not text:
        return Crashed(code)
    return json.loads(text)
