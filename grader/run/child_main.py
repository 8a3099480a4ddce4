"""The student process: imports one submission module and answers calls.

Runs as a script in a fresh folder, beside a copy of the wire module, never
inside the grader.  For each request id read from stdin it reads
``req-ID.json``, runs the call, writes ``ans-ID.json`` atomically and pokes
the notify pipe.  Nothing it prints is read as a result: the parent reads
answer files only, and decodes them with the same strict wire module.
"""

import importlib
import io
import json
import os
import resource
import sys
import traceback
from typing import Any

wire: Any = None   # the wire module, imported once the library paths are known (main)
# The exit code of a child that ran out of memory outside any call (a MemoryError
# a call raises is that call's error answer); the grader reads it as the memory limit.
EXIT_OUT_OF_MEMORY = 86


def drop_privileges(argv: list[str]) -> None:
    """``--nproc N`` and ``--user UID:GID`` (bubblewrap as root): limit, then switch.

    Runs before anything else, so no student code ever runs with the grader's
    uid or capabilities; the kernel counts RLIMIT_NPROC for the new uid.
    """
    args = dict(zip(argv[::2], argv[1::2]))
    if "--nproc" in args:
        n = int(args["--nproc"])
        resource.setrlimit(resource.RLIMIT_NPROC, (n, n))
    if "--user" in args:
        uid, gid = map(int, args["--user"].split(":"))
        os.setgroups([])
        os.setgid(gid)
        os.setuid(uid)
        if (os.getuid(), os.geteuid(), os.getgid(), os.getegid()) != (uid, uid, gid, gid) \
                or os.getgroups() or _capabilities():
            raise SystemExit("attn-grade child: could not switch user")
    if "--cwd" in args:
        os.chdir(args["--cwd"])


def _capabilities():
    """Whether this process still holds any capability (permitted, effective, ambient)."""
    with open("/proc/self/status", "rb") as f:
        for line in f:
            if line.startswith((b"CapPrm:", b"CapEff:", b"CapAmb:")) and int(line.split()[1], 16):
                return True
    return False


def import_wire(library_paths: list[str]) -> None:
    """The wire module beside this script; numpy from ``library_paths`` (a venv's too)."""
    global wire
    here = os.path.dirname(os.path.abspath(__file__))
    sys.path[:] = [here] + sys.path + [p for p in library_paths if p not in sys.path]
    wire = importlib.import_module("_attn_grade_wire")
    del sys.path[0]


class CappedText(io.TextIOBase):
    """Keeps the first ``limit`` characters printed during a call."""

    def __init__(self, limit):
        self.limit, self.parts, self.kept, self.dropped = limit, [], 0, 0

    def writable(self) -> bool:
        return True

    def write(self, text: str) -> int:
        text = str(text)
        room = max(0, self.limit - self.kept)
        self.parts.append(text[:room])
        self.kept += min(room, len(text))
        self.dropped += max(0, len(text) - room)
        return len(text)

    def text(self) -> str:
        return "".join(self.parts)


def student_frame(tb_or_exc: BaseException, submission: str) -> dict[str, Any]:
    """The innermost traceback entry inside the submission folder."""
    if isinstance(tb_or_exc, SyntaxError) and tb_or_exc.filename:
        exc = tb_or_exc
        return {"file": os.path.basename(str(exc.filename)), "line": exc.lineno,
                "code": (exc.text or "").rstrip("\n"), "offset": exc.offset}
    found = None
    for frame in traceback.extract_tb(tb_or_exc.__traceback__):
        path = os.path.abspath(frame.filename)
        if path.startswith(submission + os.sep):
            found = {"file": os.path.relpath(path, submission), "line": frame.lineno,
                     "code": (frame.line or "").strip()}
    return found or {}


def error_answer(exc: BaseException, submission: str) -> dict[str, Any]:
    return {"status": "error", "error": {
        "type": type(exc).__name__, "message": str(exc)[:2000],
        **student_frame(exc, submission)}}


class Child:
    def __init__(self, job):
        self.job = job
        self.submission = os.path.realpath(job["submission"])
        self.module = None

    def handle(self, request: dict[str, Any]) -> dict[str, Any]:
        capture = CappedText(self.job["output_limit"])
        saved = sys.stdout, sys.stderr
        sys.stdout = sys.stderr = capture
        try:
            answer = self.dispatch(request)
        except BaseException as exc:  # the student's code may raise anything
            answer = error_answer(exc, self.submission)
        finally:
            sys.stdout, sys.stderr = saved
        answer["output"] = capture.text()
        answer["output_dropped"] = capture.dropped
        return answer

    def dispatch(self, request: dict[str, Any]) -> dict[str, Any]:
        if request["op"] == "load":
            self.module = importlib.import_module(self.job["module"])
            return {"status": "ok"}
        func = getattr(self.module, request["function"], None)
        if func is None or not callable(func):
            return {"status": "missing", "function": request["function"]}
        args = wire.decode(request["args"])
        kwargs = wire.decode(request["kwargs"])
        value = func(*args, **kwargs)
        return self.value_answer(value, args, kwargs)

    def value_answer(self, value: Any, args: Any, kwargs: Any) -> dict[str, Any]:
        try:
            encoded = wire.encode(value)
        except wire.WireError as exc:
            return {"status": "unsupported", "type_name": exc.type_name or str(exc),
                    "where": exc.where}
        text = json.dumps(encoded, allow_nan=False)
        if len(text) > self.job["answer_limit"]:
            return {"status": "too_large", "size": len(text)}
        try:   # the grader compares this with what it sent
            inputs = wire.digest(wire.encode(args), wire.encode(kwargs))
        except (wire.WireError, ValueError):
            inputs = "unreadable"
        return {"status": "ok", "value": encoded, "inputs_digest": inputs}


def write_answer(workdir: str, rid: str, answer: dict[str, Any]) -> None:
    path = os.path.join(workdir, f"ans-{rid}.json")
    tmp = path + ".tmp"
    with open(tmp, "w", encoding="utf-8") as f:
        json.dump(answer, f, allow_nan=False)
    os.replace(tmp, path)


def main() -> None:
    drop_privileges(sys.argv[1:])
    workdir = os.getcwd()
    with open(os.path.join(workdir, "job.json"), encoding="utf-8") as f:
        job = json.load(f)
    import_wire(job["library_paths"])
    notify = os.fdopen(job["notify_fd"], "wb", buffering=0)
    requests = sys.stdin.buffer
    sys.stdin = io.StringIO("")
    sys.path[:] = [job["submission"]] + sys.path
    for name in job.get("preload", ()):
        importlib.import_module(name)   # e.g. sympy, when the checks pass symbols
    child = Child(job)
    for line in requests:
        rid = line.strip().decode("ascii")
        with open(os.path.join(workdir, f"req-{rid}.json"), encoding="utf-8") as f:
            request = json.load(f)
        write_answer(workdir, rid, child.handle(request))
        notify.write(b".")


if __name__ == "__main__":
    try:
        main()
    except MemoryError:   # no traceback: printing it may need memory too
        os._exit(EXIT_OUT_OF_MEMORY)
