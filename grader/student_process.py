"""One student module running in a child process, called through files.

The parent writes ``req-ID.json`` into the child's private folder and the id
on the child's stdin; the child writes ``ans-ID.json`` and pokes a pipe.  The
parent reads only that answer file, size-capped and decoded by the strict
wire module; the child's exit code and console output are never results.
A hang, crash or limit kills the whole process group; the next call starts a
fresh child, so one bad call costs only its own check.
"""

import dataclasses
import json
import os
import select
import shutil
import signal
import stat
import subprocess
import tempfile
import time
from pathlib import Path
from typing import Any

from . import sandbox, wire
from .limits import Limits, describe_size

LIVE_CHILDREN = set()   # pids of every student process this grader has running
RUNTIME_FILES = {"_attn_grade_wire.py": "wire.py", "_attn_grade_child.py": "child_main.py"}
MAX_RESTARTS = 3


@dataclasses.dataclass(frozen=True)
class CallOutcome:
    """What one call into student code produced, as plain data.

    status: ok, error (student exception), missing (no such function),
    unsupported (a type the wire refuses), too_large, timeout, crashed,
    bad_answer (unreadable answer file), skipped (too many restarts),
    missing_file (the submission lacks the module).
    """

    status: str
    value: Any = None
    error: dict = dataclasses.field(default_factory=dict)
    detail: str = ""
    output: str = ""
    output_dropped: int = 0
    mutated_args: bool = False

    @property
    def ok(self):
        return self.status == "ok"


class RunFolder:
    """A private temporary folder for one grading run, removed on close."""

    def __init__(self, unprivileged):
        sandbox.become_subreaper()
        self.root = Path(tempfile.mkdtemp(prefix="attn-grade-"))
        self.runtime = self.root / "runtime"
        self.runtime.mkdir()
        for target, source in RUNTIME_FILES.items():
            shutil.copyfile(Path(__file__).with_name(source), self.runtime / target)
        self.unprivileged = unprivileged
        if unprivileged:
            os.chmod(self.root, 0o711)
            os.chmod(self.runtime, 0o755)
            for f in self.runtime.iterdir():
                os.chmod(f, 0o644)
        self._count = 0

    def new_workdir(self):
        self._count += 1
        path = self.root / f"work-{self._count}"
        path.mkdir(mode=0o700)
        if self.unprivileged:
            os.chown(path, sandbox.NOBODY, sandbox.NOBODY)
        return path

    def close(self):
        shutil.rmtree(self.root, ignore_errors=True)


class StudentProcess:
    """Calls into one submission module, restarting its child when needed."""

    def __init__(self, folder, submission, module, limits: Limits, level, public=(),
                 preload=()):
        self.folder, self.module, self.limits, self.level = folder, module, limits, level
        self.public = tuple(str(p) for p in public)
        self.preload = tuple(preload)
        self.submission = str(Path(submission).resolve())
        self.proc = None
        self.restarts = 0
        self.load_failure = None
        self._next_id = 0
        self._pending_load = None
        if not (Path(self.submission) / f"{module}.py").is_file():
            self.load_failure = CallOutcome("missing_file", detail=f"{module}.py")

    # ------------------------------------------------------------ lifecycle
    def _start(self):
        self.workdir = self.folder.new_workdir()
        self._dir_fd = os.open(self.workdir, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
        notify_r, notify_w = os.pipe()
        job = {"submission": self.submission, "module": self.module,
               "output_limit": self.limits.output, "answer_limit": self.limits.answer,
               "library_paths": sandbox.library_paths(), "notify_fd": notify_w,
               "preload": list(self.preload)}
        (self.workdir / "job.json").write_text(json.dumps(job), encoding="utf-8")
        drop = self.folder.unprivileged
        if drop:
            os.chown(self.workdir / "job.json", sandbox.NOBODY, sandbox.NOBODY)
        console = open(self.workdir / "console.log", "wb")
        argv = sandbox.command(self.level, str(self.folder.runtime / "_attn_grade_child.py"),
                               str(self.workdir), self.submission, str(self.folder.runtime),
                               self.public)
        try:
            self.proc = subprocess.Popen(
                argv, cwd=self.workdir, stdin=subprocess.PIPE, stdout=console,
                stderr=subprocess.STDOUT, pass_fds=(notify_w,),
                env=sandbox.child_env(str(self.workdir)), start_new_session=True,
                preexec_fn=sandbox.preexec(self.level, self.limits, drop))
        finally:
            os.close(notify_w)
            console.close()
        LIVE_CHILDREN.add(self.proc.pid)
        self.notify = notify_r

    def close(self):
        """Kill the child and everything it started."""
        if self.proc is None:
            return
        try:
            os.killpg(self.proc.pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass
        self.proc.kill()
        self.proc.wait()
        LIVE_CHILDREN.discard(self.proc.pid)
        try:
            self.proc.stdin.close()
        except OSError:
            pass
        os.close(self.notify)
        os.close(self._dir_fd)
        self.proc = None
        sandbox.reap_strays(LIVE_CHILDREN)

    # ------------------------------------------------------------ calls
    def call(self, function, args=(), kwargs=None):
        """Run ``module.function(*args, **kwargs)`` in the child."""
        ready = self._ensure_loaded()
        if ready is not None:
            return ready
        request = {"op": "call", "function": function, "args": wire.encode(list(args)),
                   "kwargs": wire.encode(dict(kwargs or {}))}
        outcome = self._request(request)
        if outcome.status in ("timeout", "crashed", "bad_answer"):
            self.close()
        return outcome

    def prestart(self):
        """Start the child and its import now, to overlap with other work."""
        if self.load_failure is None and self.proc is None:
            self._start()
            self._pending_load = self._send({"op": "load"})

    def _ensure_loaded(self):
        if self.load_failure is not None:
            return self.load_failure
        if self.proc is not None and self._pending_load is None:
            return None
        if self.proc is None:
            if self.restarts >= MAX_RESTARTS:
                return CallOutcome("skipped",
                                   detail=f"the process was restarted {MAX_RESTARTS} times")
            if self._next_id:
                self.restarts += 1
            self.prestart()
        rid, self._pending_load = self._pending_load, None
        loaded = rid if isinstance(rid, CallOutcome) else self._await(
            rid, time.monotonic() + self.limits.import_time, self.limits.import_time)
        if loaded.ok:
            return None
        self.close()
        self.load_failure = loaded
        return loaded

    def _request(self, request):
        rid = self._send(request)
        if isinstance(rid, CallOutcome):
            return rid
        return self._await(rid, time.monotonic() + self.limits.time)

    def _send(self, request):
        """Write a request and wake the child; its id, or a CallOutcome if it died."""
        self._next_id += 1
        rid = f"{self._next_id:06d}"
        try:
            self._write_new(f"req-{rid}.json", json.dumps(request, allow_nan=False).encode())
        except OSError:   # the child planted a file or link under that name
            return CallOutcome("bad_answer", detail="the work folder was tampered with")
        try:
            self.proc.stdin.write(f"{rid}\n".encode())
            self.proc.stdin.flush()
        except (BrokenPipeError, OSError):
            return self._crashed()
        return rid

    def _write_new(self, name, data):
        """Create a file in the child's folder; never through a link, never over a file."""
        fd = os.open(name, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC,
                     0o644, dir_fd=self._dir_fd)
        try:
            os.write(fd, data)
            if self.folder.unprivileged:
                os.fchown(fd, sandbox.NOBODY, sandbox.NOBODY)
        finally:
            os.close(fd)

    def _read_private(self, name, limit, tail=False):
        """Read at most ``limit`` bytes of a regular file of the child's folder (no links)."""
        fd = os.open(name, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC, dir_fd=self._dir_fd)
        with os.fdopen(fd, "rb") as f:
            info = os.fstat(f.fileno())
            if not stat.S_ISREG(info.st_mode):
                raise OSError("not a regular file")
            if info.st_size > limit and not tail:
                raise OverflowError(info.st_size)
            f.seek(max(0, info.st_size - limit) if tail else 0)
            return f.read(limit)

    def _exists(self, name):
        try:
            os.stat(name, dir_fd=self._dir_fd, follow_symlinks=False)
            return True
        except OSError:
            return False

    def _await(self, rid, deadline, seconds=None):
        answer = f"ans-{rid}.json"
        while True:
            if self._exists(answer):
                return self._read_answer(answer)
            if self.proc.poll() is not None:
                return self._read_answer(answer) if self._exists(answer) else self._crashed()
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                return CallOutcome("timeout",
                                   detail=f"{seconds or self.limits.time:g} s")
            readable, _, _ = select.select([self.notify], [], [], min(remaining, 0.05))
            if readable and not os.read(self.notify, 4096):
                time.sleep(min(remaining, 0.01))  # pipe closed: keep polling

    def _crashed(self):
        self.proc.wait()
        code = self.proc.returncode
        console = self._console_tail()
        if self.level == "bubblewrap" and 128 < code < 128 + 65:
            code = 128 - code   # bwrap reports its child's signal N as exit 128 + N
        if code < 0:
            sig = signal.Signals(-code)
            if sig == signal.SIGXCPU:
                return CallOutcome("crashed", detail=f"cpu:{self.limits.cpu:g}")
            return CallOutcome("crashed", detail=f"signal:{sig.name}", output=console)
        if "MemoryError" in console:
            return CallOutcome("crashed", detail=f"memory:{describe_size(self.limits.memory)}")
        return CallOutcome("crashed", detail=f"exit:{code}", output=console)

    def _console_tail(self, limit=4000):
        try:
            return self._read_private("console.log", limit, tail=True).decode("utf-8", "replace")
        except OSError:
            return ""

    def _read_answer(self, name):
        try:
            text = self._read_private(name, self.limits.answer + 2 * self.limits.output + 65536)
            return _outcome_from_answer(json.loads(text))
        except OverflowError:
            return CallOutcome("too_large", detail="answer file over the size cap")
        except (OSError, ValueError, RecursionError, TypeError, wire.WireError) as exc:
            return CallOutcome("bad_answer", detail=str(exc)[:200])


def _outcome_from_answer(raw):
    """Validate an answer file's fields; only known fields and types pass."""
    if type(raw) is not dict or raw.get("status") not in (
            "ok", "error", "missing", "unsupported", "too_large"):
        raise wire.WireError("answer has no valid status")
    output = raw.get("output") if type(raw.get("output")) is str else ""
    dropped = raw.get("output_dropped") if type(raw.get("output_dropped")) is int else 0
    status = raw["status"]
    common = {"output": output[:100_000], "output_dropped": dropped}
    if status == "ok":
        return CallOutcome("ok", value=wire.decode(raw.get("value")),
                           mutated_args=raw.get("mutated_args") is True, **common)
    if status == "error":
        return CallOutcome("error", error=_clean_error(raw.get("error")), **common)
    detail = {"missing": raw.get("function"), "unsupported": raw.get("type_name"),
              "too_large": raw.get("size")}[status]
    return CallOutcome(status, detail=str(detail)[:200], **common)


def _clean_error(error):
    if type(error) is not dict:
        return {"type": "Exception", "message": ""}
    clean = {}
    for key, kind, cap in (("type", str, 100), ("message", str, 2000), ("file", str, 300),
                           ("code", str, 500), ("line", int, None), ("offset", int, None)):
        value = error.get(key)
        if type(value) is kind:
            clean[key] = value[:cap] if cap else value
    return clean
