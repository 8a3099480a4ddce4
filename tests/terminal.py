"""Running the CLI as a student does: on a pseudo-terminal, typing at its prompts."""

import fcntl
import os
import pty
import select
import signal
import subprocess
import sys
import termios
import time

from conftest import ROOT

# how a prompt ends: click's suffix after a colon or a [y/N]; never a printed line's end
PROMPT_ENDS = (b": ", b"] ", "： ".encode())
CTRL_C, CTRL_D = b"\x03", b"\x04"
KEY_DELAY = 0.3   # seconds between a prompt and a key pressed at it


def _own_terminal():
    """The pseudo-terminal becomes the child's own, so Ctrl-C there interrupts it (SIGINT
    at its default, as a terminal's shell starts a command: a shell's background job,
    which may run pytest, starts with it ignored, which Python would keep)."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)
    fcntl.ioctl(0, termios.TIOCSCTTY, 0)


def through_a_terminal(args, answers, timeout=60, env=None):
    """Run the CLI on a pseudo-terminal, typing ``answers`` as prompts appear: a str is a
    line (Enter added), bytes are keys as they are (CTRL_C, CTRL_D).  The exit code and
    everything shown."""
    master, slave = pty.openpty()
    proc = subprocess.Popen([sys.executable, "-m", "grader", *map(str, args)], cwd=ROOT,
                            stdin=slave, stdout=slave, stderr=slave, close_fds=True,
                            env={**os.environ, **(env or {})}, start_new_session=True,
                            preexec_fn=_own_terminal)
    os.close(slave)
    out, pending, deadline = b"", list(answers), time.monotonic() + timeout
    while time.monotonic() < deadline:
        ready, _, _ = select.select([master], [], [], 0.2)
        if ready:
            try:
                chunk = os.read(master, 4096)
            except OSError:
                break
            if not chunk:
                break
            out += chunk
            if pending and out.endswith(PROMPT_ENDS):
                answer = pending.pop(0)
                if isinstance(answer, bytes):
                    # a key, as a person presses it: once the prompt waits for input (a
                    # Ctrl-C that lands between the prompt and its read is not seen by
                    # Python's input until the next key)
                    time.sleep(KEY_DELAY)
                os.write(master, answer if isinstance(answer, bytes)
                         else answer.encode() + b"\n")
        elif proc.poll() is not None:
            break
    try:
        proc.wait(timeout=10)
    except subprocess.TimeoutExpired:   # still running: not left behind
        proc.kill()
        proc.wait()
        raise
    finally:
        os.close(master)
    return proc.returncode, out.decode("utf-8", "replace")

