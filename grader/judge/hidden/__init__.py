"""Hidden pytest checks: instructors' pytest files run on the trusted side.

A test asks for the ``student`` fixture and calls the student's functions
through it; each call goes to the student's process and comes back as plain
values, so assertions run here, out of the student's reach.  Markers:

  @pytest.mark.points(2)                 points of this test (default: a share)
  @pytest.mark.misconception("no-causal-mask")   tag named when it fails *and*
      the student's answers in that test are the tag's wrong version's answers

The session runs in a fork of the grader under a deadline (``bounded``): an
answer that makes an assertion run for minutes fails its own test only.  The
fork reports each test as a typed event (``events``); the grader (``session``)
rebuilds the results, and keeps finished runs to replay (``replays``).
"""

from .plugin import UNUSED_PLUGINS, preload
from .replays import Replays
from .session import Session, StudentCalls

__all__ = ["UNUSED_PLUGINS", "Replays", "Session", "StudentCalls", "preload"]
