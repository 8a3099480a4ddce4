"""Time limits for trusted-side computations that might not end (sympy), and one
deadline for a whole answer's judging: every limit inside ``deadline`` ends by it too,
so an answer of many elements, each just under its own limit, compared again with each
known wrong version, still costs no more than the deadline in all."""

import contextlib
import signal
import sys
import threading
import time
from collections.abc import Iterator

_deadline: list[float] = []   # the innermost deadline (time.monotonic), if any


class TimeLimitExceeded(Exception):
    pass


def expired() -> bool:
    """Whether the innermost ``deadline`` has passed."""
    return bool(_deadline) and time.monotonic() >= _deadline[-1]


@contextlib.contextmanager
def deadline(seconds: float) -> Iterator[None]:
    """The block, interrupted (TimeLimitExceeded) after ``seconds``, and every
    ``time_limit`` inside it shortened to end by then."""
    end = time.monotonic() + seconds
    _deadline.append(min(end, _deadline[-1]) if _deadline else end)
    try:
        with time_limit(seconds):
            yield
    finally:
        _deadline.pop()


@contextlib.contextmanager
def time_limit(seconds: float) -> Iterator[None]:
    """Raise TimeLimitExceeded inside the block after ``seconds`` (or at the enclosing
    ``deadline``, if that comes first: at once if it has passed).

    Uses SIGALRM, so it only works in the main thread; elsewhere the block
    runs unbounded (grade-all parallelises with processes, not threads).  An enclosing
    limit's timer is set again, for what is left of it, when the block ends.
    """
    if _deadline:
        seconds = min(seconds, _deadline[-1] - time.monotonic())
        if seconds <= 0:
            raise TimeLimitExceeded()
    if threading.current_thread() is not threading.main_thread() or seconds <= 0:
        yield
        return

    def expire(signum, frame):
        raise TimeLimitExceeded()

    previous = signal.signal(signal.SIGALRM, expire)
    start = time.monotonic()
    outer, _ = signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)
        if outer:   # the enclosing limit's alarm, for what is left of it
            _rearm(start + outer, raising=sys.exc_info()[1] is not None)


DUE = 0.05   # seconds: an alarm this close after a passed deadline is that deadline's


def _rearm(fires: float, raising: bool) -> None:
    """Set the enclosing limit's alarm again for ``fires`` (time.monotonic).  Not where
    this block is raising because the deadline has passed and that alarm was due at it:
    the exception in flight is that interruption, and an alarm a moment later would
    land in the handler that catches it (an element found unreadable, the next tried)."""
    if raising and expired() and fires <= _deadline[-1] + DUE:
        return
    left = fires - time.monotonic()
    if left > 0:
        signal.setitimer(signal.ITIMER_REAL, left)
    elif not raising:   # it is over too (else already raising)
        raise TimeLimitExceeded()
