"""Many gradings at once, each in its own ``attn-grade`` process.

A separate process per submission keeps one student's crash, memory or
pytest state away from the next; a few run at a time because most of a
grading is spent waiting on student processes.
"""

import json
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor, as_completed


def grade_command(set_id, submission, course, *extra):
    return [sys.executable, "-m", "grader", set_id, "--course", str(course),
            "--submission", str(submission), "--json", *map(str, extra)]


def run_many(commands, jobs, on_done=None, timeout=3600):
    """Run ``commands`` with ``jobs`` at a time; results in order.

    Each result is (exit code, parsed JSON document or None, stderr).
    """
    def one(argv):
        try:
            proc = subprocess.run(argv, capture_output=True, text=True, timeout=timeout)
        except subprocess.TimeoutExpired:
            return None, None, f"grading took longer than {timeout} s"
        try:
            doc = json.loads(proc.stdout) if proc.stdout.strip() else None
        except ValueError:
            doc = None
        return proc.returncode, doc, proc.stderr

    results = [None] * len(commands)
    with ThreadPoolExecutor(max_workers=max(1, jobs)) as pool:
        futures = {pool.submit(one, argv): i for i, argv in enumerate(commands)}
        for future in as_completed(futures):
            results[futures[future]] = future.result()
            if on_done:
                on_done(futures[future], results[futures[future]])
    return results
