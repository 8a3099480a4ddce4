"""The call server: a child's whole life inside the sandbox, once forked.

A child imports its module at once and answers that as its first call; then it
reads request ids on stdin, with their requests after a tab on the same line, or
in ``req-ID.json`` when they are large (of the line's first id: one request, or the
list of several written ahead), runs each call and sends its answer on the
answer pipe (``ID LENGTH``, then the JSON).  Nothing it prints is read as a
result: the grader reads that pipe only, and decodes it with the same strict wire
module (the copy beside this package, ``_attn_grade_wire``).
"""

import gc
import importlib
import importlib.util
import io
import json
import os
import sys
import traceback
from collections.abc import Sequence
from typing import Any

wire: Any = None   # the wire module, imported once the library paths are known (main)
WIRE = "_attn_grade_wire"   # the copy of grader/wire.py beside this package


def import_wire(library_paths: list[str]) -> None:
    """The wire module beside this package; numpy from ``library_paths`` (a venv's too)."""
    global wire
    here = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    sys.path[:] = [here] + sys.path + [p for p in library_paths if p not in sys.path]
    wire = importlib.import_module(WIRE)
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


class CallServer:
    """One child's calls into its student module: each runs with its output captured
    (up to a cap), and its answer (a value, an error, a refusal) made for the wire."""

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
            self.module = import_student(self.job["module"], self.job["submission"])
            return {"status": "ok"}
        func = getattr(self.module, request["function"], None)
        if func is None or not callable(func):
            return {"status": "missing", "function": request["function"]}
        args = wire.decode(request["args"])
        kwargs = wire.decode(request["kwargs"])
        before: list[tuple[Any, Any]] = []
        _snapshot((args, kwargs), before)
        value = func(*args, **kwargs)
        sent = request.get("digest") if not _changed(before) else None
        return self.value_answer(value, args, kwargs, sent)

    def value_answer(self, value: Any, args: Any, kwargs: Any,
                     sent: str | None = None) -> dict[str, Any]:
        """``sent``: the digest of the arguments as the grader sent them, when the call
        left them as they came (else they are encoded again for the grader to compare)."""
        size = _array_bytes(value)
        if size > self.job["answer_limit"]:   # refused before spending seconds encoding it
            return {"status": "too_large", "size": size}
        try:
            encoded = wire.encode(value)
        except wire.WireError as exc:
            return {"status": "unsupported", "type_name": exc.type_name or str(exc),
                    "where": exc.where}
        text = json.dumps(encoded, allow_nan=False)
        if len(text) > self.job["answer_limit"]:
            return {"status": "too_large", "size": len(text)}
        try:   # the grader compares this with what it sent
            inputs = sent if isinstance(sent, str) else \
                wire.digest(wire.encode(args), wire.encode(kwargs))
        except (wire.WireError, ValueError):
            inputs = "unreadable"
        return {"status": "ok", "value": encoded, "inputs_digest": inputs}


def import_student(name: str, folder: str) -> Any:
    """The student's file ``folder/name.py`` itself, imported as ``name``: a search of
    ``sys.path`` (a finder for the new folder, its listing) was a fifth of a fresh
    fork's import, and could find a module of that name elsewhere."""
    spec = importlib.util.spec_from_file_location(name, os.path.join(folder, name + ".py"))
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module   # as an import would: the module may import itself
    try:
        spec.loader.exec_module(module)
    except BaseException:
        sys.modules.pop(name, None)
        raise
    return sys.modules.get(name, module)   # a module may put another object in its place


def _snapshot(value: Any, seen: list[tuple[Any, Any]]) -> None:
    """What a call could change in place in its arguments: each array's shape, type and
    bytes, each list's, dict's and set's items (by identity).  Far cheaper than
    encoding them again (about a third of a call's own cost in a child)."""
    kind = type(value)
    numpy = sys.modules.get("numpy")
    if numpy is not None and kind is numpy.ndarray:
        seen.append((value, (value.shape, value.dtype.str, value.tobytes())))
    elif kind is list or kind is tuple:
        if kind is list:
            seen.append((value, list(value)))
        for item in value:
            _snapshot(item, seen)
    elif kind is dict:
        seen.append((value, list(value.items())))
        for item in value.values():
            _snapshot(item, seen)
    elif kind is set:
        seen.append((value, set(value)))


def _changed(seen: list[tuple[Any, Any]]) -> bool:
    """Whether anything ``_snapshot`` saw differs now (a call that wrote the same
    values back counts as a change here: the encoding then decides, as before)."""
    for value, before in seen:
        kind = type(value)
        if kind is list:
            if len(value) != len(before) or any(a is not b for a, b in zip(value, before)):
                return True
        elif kind is dict:   # the same keys, in the same order, each with the same value
            if list(value) != [key for key, _ in before] or any(
                    value[key] is not item for key, item in before):
                return True
        elif kind is set:
            if value != before:
                return True
        elif (value.shape, value.dtype.str, value.tobytes()) != before:
            return True
    return False


def _array_bytes(value: Any) -> int:
    """The encoded size of the numpy arrays in an answer (at its top, or one level
    down in a tuple or list), without encoding them: base64 takes 4 bytes per 3."""
    items = value if type(value) in (tuple, list) else (value,)
    numpy = sys.modules.get("numpy")
    if numpy is None:
        return 0
    return sum(v.nbytes * 4 // 3 for v in items[:1000] if type(v) is numpy.ndarray)


def write_answer(answers: int, rid: str, answer: dict[str, Any]) -> None:
    """One frame on the answer pipe: ``ID LENGTH``, a newline, the JSON."""
    text = json.dumps(answer, allow_nan=False).encode()   # dumps: C-encoded, unlike dump
    frame = memoryview(b"%s %d\n" % (rid.encode("ascii"), len(text)) + text)
    while frame:
        frame = frame[os.write(answers, frame):]


def serve(workdir: str, answers: int, job: dict[str, Any]) -> None:
    """Import the module, then answer requests until stdin closes (a forked child's
    whole life)."""
    requests = os.fdopen(0, "rb", closefd=False)
    sys.stdin = io.StringIO("")
    sys.path[:] = [job["submission"]] + sys.path
    child = CallServer(job)
    write_answer(answers, job["load"], child.handle({"op": "load"}))
    for line in requests:   # ids, then a tab and their requests, or ids of a request file
        ids, tab, inline = line.partition(b"\t")
        rids = ids.decode("ascii").split()
        if tab:
            batch = json.loads(inline)
        else:
            with open(os.path.join(workdir, f"req-{rids[0]}.json"), "rb") as f:
                batch = json.loads(f.read())
        for rid, request in zip(rids, batch if len(rids) > 1 else [batch]):
            write_answer(answers, rid, child.handle(request))


def import_all(names: Sequence[str]) -> None:
    """Import ``names`` with the collector off: an import makes few cycles, and the
    collector walked its new objects again and again (about a sixth of numpy's and
    sympy's import time).  What a template imports is then frozen, never collected."""
    gc.disable()
    try:
        for name in names:
            importlib.import_module(name)
    finally:
        gc.enable()


def warm_up() -> None:
    """Take one call's path (wire, digest, answer JSON, an error's frame) once here,
    so the lazy imports and caches it fills are the template's, shared by every fork
    (a child that filled them itself paid about 8 ms on its first call)."""
    child = CallServer({"submission": "/", "output_limit": 100, "answer_limit": 1 << 20})
    values = [1, 2.5, "a", (1,), {"k": [True, None]}]
    numpy = sys.modules.get("numpy")
    if numpy is not None:
        values.append(numpy.arange(3.0))
    sympy = sys.modules.get("sympy")
    if sympy is not None:   # its first product imports 16 more modules: ~50 ms a child
        n = sympy.Symbol("n", positive=True)
        values.append(2 * n * n + n / 3)
    encoded = wire.encode(values)
    json.dumps(child.value_answer(wire.decode(encoded), [encoded], {}), allow_nan=False)
    try:
        raise ValueError("warm-up")
    except ValueError as exc:
        error_answer(exc, "/")
