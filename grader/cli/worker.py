"""``attn-grade grade-worker``: grade-all's worker (``instructor.batch``).

Each input line is a job: a student's ``GradeJob`` (what grade-all sends), graded
here by ``grade_job.grade`` with what the worker keeps between students; or, for
tests and benchmarks, an ``attn-grade`` command line (a JSON list), run in-process.
Each gets one JSON answer line: its exit code, its results document, its error text.
Whatever else writes to the real stdout goes to stderr (the worker's log).
"""

import contextlib
import io
import json
import os
import sys
from typing import Any, TextIO

import click

from ..errors import CourseError, ExitCode
from ..grading import Warm
from ..instructor import grade_job
from .common import internal_error, main


@main.command("grade-worker", hidden=True)
def grade_worker() -> None:
    """grade-all's worker: one job (a JSON object, or a command line as a JSON list) per
    input line, run here; one JSON answer line each (code, document, stderr)."""
    answers = os.fdopen(os.dup(1), "w", encoding="utf-8")
    os.dup2(2, 1)
    warm = Warm(zygote=_zygote(), replays=True)
    try:
        _serve_worker(warm, answers)
    finally:
        if warm.zygote is not None:
            warm.zygote.close()


def serve_as_worker() -> None:
    """``attn-grade grade-worker`` in this process: what a worker forked from grade-all
    runs (instructor.forked_worker)."""
    main.main(args=["grade-worker"], prog_name="attn-grade")


def _zygote() -> Any:
    """The zygote grade-all shares among its workers (a descriptor it passed), or one
    of this worker's own, started before any course is loaded so that its imports
    overlap the first student's setup; None where there can be none."""
    from ..run.zygote import Zygote

    if not Zygote.possible():
        return None
    shared = os.environ.pop(Zygote.SHARED, "")
    if shared.isdigit():
        return Zygote.attached(int(shared))
    return Zygote()


def _serve_worker(warm: Warm, answers: TextIO) -> None:
    """The worker's loop: each line a job, run with the worker's Warm."""
    for line in sys.stdin:
        err = io.StringIO()
        request = json.loads(line)
        if isinstance(request, dict):
            with contextlib.redirect_stderr(err):
                code, document = _graded(request, warm)
        else:
            code, document = _command(request, warm, err)
        answers.write(json.dumps({"code": code, "document": document,
                                  "stderr": err.getvalue()}) + "\n")
        answers.flush()


def _graded(plain: dict[str, Any], warm: Warm) -> tuple[int, Any]:
    """(exit code, results document or None) of a GradeJob; its errors to stderr, as
    ``attn-grade SET --json`` says them."""
    try:
        return grade_job.grade(grade_job.GradeJob.from_plain(plain), warm)
    except CourseError as exc:
        click.echo(f"error: {exc}", err=True)
        return ExitCode.USAGE, None
    except Exception:
        try:
            internal_error()
        except SystemExit:
            pass
        return ExitCode.INTERNAL, None


def _command(args: list[str], warm: Warm, err: io.StringIO) -> tuple[int, Any]:
    """(exit code, JSON document printed or None) of an ``attn-grade`` command line."""
    out = io.StringIO()
    code = 0
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            main.main(args=args, prog_name="attn-grade", obj=warm)
        except SystemExit as exc:
            code = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 2)
    try:
        return code, json.loads(out.getvalue()) if out.getvalue().strip() else None
    except ValueError:
        return code, None
