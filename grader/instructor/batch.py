"""Many gradings at once, each in its own ``attn-grade`` process.

A separate process per submission keeps one student's crash, memory or
pytest state away from the next; a few run at a time because most of a
grading is spent waiting on student processes.
"""

import json
import subprocess
import sys
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor, as_completed
from pathlib import Path
from typing import Any

# the folder that holds this grader package (a worktree, a course, site-packages)
# One grading's (exit code or None on a timeout, its JSON document or None, stderr).
RunOutput = tuple[int | None, Any, str]

PACKAGE_ROOT = str(Path(__file__).resolve().parents[2])

# How a child imports the grader: ``-m grader`` would put the current folder
# first on sys.path, and run from a class folder that imports a student's
# folder named grader/ (or numpy/, yaml/) on the trusted side. So the child
# drops the current-folder entry, imports exactly this package, and then
# takes PACKAGE_ROOT off sys.path again (the package's own modules load
# through its __path__).
IMPORT_GRADER = (
    "import sys; sys.path[:] = [p for p in sys.path if p]; "
    f"sys.path.insert(0, {PACKAGE_ROOT!r}); import grader.cli; del sys.path[0]")


def grader_argv(*args: object) -> list[str]:
    """argv that runs ``attn-grade ARGS`` with this very grader package."""
    return [sys.executable, "-c", IMPORT_GRADER + "; grader.cli.main(prog_name='attn-grade')",
            *map(str, args)]


def grade_command(set_id: str, submission: str | Path, course: str | Path,
                  *extra: object) -> list[str]:
    return grader_argv(set_id, "--course", course, "--submission", submission, "--json",
                       *extra)


def run_many(commands: Sequence[Sequence[str]], jobs: int,
             on_done: Callable[[int, RunOutput], object] | None = None,
             timeout: float = 3600, cwd: str | Path | None = None) -> list[RunOutput]:
    """Run ``commands`` with ``jobs`` at a time (in the folder ``cwd``); results in order.

    Each result is (exit code, parsed JSON document or None, stderr). Give a
    ``cwd`` the caller trusts: relative entries of PYTHONPATH resolve there.
    """
    def one(argv):
        try:
            proc = subprocess.run(argv, capture_output=True, text=True, timeout=timeout,
                                  cwd=cwd)
        except subprocess.TimeoutExpired:
            return None, None, f"grading took longer than {timeout} s"
        try:
            doc = json.loads(proc.stdout) if proc.stdout.strip() else None
        except ValueError:
            doc = None
        return proc.returncode, doc, proc.stderr

    results: dict[int, RunOutput] = {}
    with ThreadPoolExecutor(max_workers=max(1, jobs)) as pool:
        futures = {pool.submit(one, argv): i for i, argv in enumerate(commands)}
        for future in as_completed(futures):
            results[futures[future]] = future.result()
            if on_done:
                on_done(futures[future], results[futures[future]])
    return [results[i] for i in range(len(commands))]
