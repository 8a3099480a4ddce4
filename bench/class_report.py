"""`attn-grade report` on a class of generated results documents (no grading).

    python bench/class_report.py [--count 200] [--limit 5]

Writes COUNT plausible Gradescope results documents for the nine day3
exercises (correct ones, known mistakes with their tags, syntax errors,
timeouts, stubs, not-graded uploads) and a matching gradebook.csv, then times
`attn-grade report OUT` (the HTML page with its charts) and `--format json`.
Exits 1 when the page takes longer than LIMIT seconds.
"""

import argparse
import csv
import json
import random
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from grader.course import loader  # noqa: E402
from grader.report import render as report  # noqa: E402

PROBLEMS = [   # (weight, exercise or None for any, tag, output line)
    (6, "attention", "no-causal-mask", None),
    (4, "temperature", "temperature-multiplied", None),
    (3, "attention", "no-scaling", None),
    (2, "temperature", "softmax-overflow", None),
    (2, "multihead", "kv-head-tiled", None),
    (2, None, None, "{file} has a syntax error: invalid syntax ({file}, line 3)"),
    (1, None, None, "{function} took longer than 5 s (the time limit)"),
    (1, None, None, "`{function}` is not defined in {file} — did you rename it?"),
    (2, None, None, "not implemented yet: {function} still raises NotImplementedError"),
]


def make_results(out, count, seed=1):
    """COUNT results documents in OUT/results and OUT/gradebook.csv; the totals."""
    rng = random.Random(seed)
    exercise_set = loader.load_set(loader.Course(ROOT), "day3")
    results = out / "results"
    results.mkdir(parents=True)
    rows = []
    for i in range(count):
        student = f"student{i:03d}"
        if i % 50 == 49:      # an upload that could not be graded
            doc = report.not_graded("day3", exercise_set.exercises, "error",
                                    "not graded: cannot unpack: bad zip")
        else:
            doc = _graded(rng, exercise_set)
        doc["extra_data"]["student"] = student
        (results / f"{student}.json").write_text(json.dumps(doc, ensure_ascii=False))
        row = {"student": student, "score": doc["score"], "max_score": doc["max_score"]}
        row.update({e["exercise"]: e["score"] for e in doc["extra_data"]["exercises"]})
        rows.append({**row, "status": doc["extra_data"].get("status", "graded")})
    with open(out / "gradebook.csv", "w", newline="") as f:
        writer = csv.DictWriter(f, list(rows[0]) if rows else ["student"])
        writer.writeheader()
        writer.writerows(rows)
    return rows


def _graded(rng, exercise_set):
    tests, exercises = [], []
    for exercise in exercise_set.exercises:
        wrong = [p for p in PROBLEMS if p[1] in (None, exercise.id)
                 and rng.random() < p[0] / 40]
        score = 0.0
        share = round(exercise.points / max(1, len(exercise.checks)), 4)
        for n, check in enumerate(exercise.checks):
            failed = [p for p in wrong if n % (2 + len(wrong)) != 0] if wrong else []
            lines, tags = [], []
            for _, _, tag, line in failed:
                if tag:
                    tags.append(tag)
                    lines.append(f"likely mistake [{tag}]: ...")
                else:
                    lines.append(line.format(file=exercise.file, function=exercise.functions[0]))
            passed = not failed
            score += share if passed else 0.0
            tests.append({"name": f"{exercise.id}: {check.id}",
                          "score": share if passed else 0.0, "max_score": share,
                          "status": "passed" if passed else "failed",
                          "visibility": "visible", "output": "\n".join(lines or ["passed"]),
                          "tags": tags,
                          "extra_data": {"exercise": exercise.id, "file": exercise.file,
                                         "check": check.id, "kind": "case",
                                         "hidden": bool(getattr(check, "hidden", False))}})
        score = round(min(score, exercise.points), 4)
        exercises.append({"exercise": exercise.id, "file": exercise.file, "score": score,
                          "max_score": exercise.points, "hints_used": 0})
    total = round(sum(e["score"] for e in exercises), 4)
    return {"score": total, "max_score": round(sum(e.points for e in exercise_set.exercises), 4),
            "output": "", "visibility": "visible", "tests": tests,
            "extra_data": {"set": "day3", "isolation": "bubblewrap", "lang": "en",
                           "grader_version": "0.1.0", "released": False, "status": "graded",
                           "exercises": exercises}}


def timed(*args):
    start = time.monotonic()
    proc = subprocess.run([sys.executable, "-m", "grader", *map(str, args)], cwd=ROOT,
                          capture_output=True, text=True)
    seconds = time.monotonic() - start
    if proc.returncode != 0:
        sys.exit(f"attn-grade {' '.join(map(str, args))} failed:\n{proc.stderr}")
    return seconds


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--count", type=int, default=200)
    parser.add_argument("--limit", type=float, default=5.0)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="attn-grade-bench-report-") as tmp:
        out = Path(tmp) / "out"
        rows = make_results(out, args.count)
        page = timed("report", out, "--lang", "en")
        data_seconds = timed("report", out, "--format", "json", "--lang", "en")
        data = json.loads((out / "report.json").read_text())
        size = (out / "report.html").stat().st_size
        assert data["students"] == len(rows) and not data["gradebook_differs"]
    print(f"attn-grade report on {args.count} results documents: page {page:.2f} s "
          f"({size // 1024} KiB), --format json {data_seconds:.2f} s "
          f"(limit {args.limit:g} s)")
    if page > args.limit:
        sys.exit(1)


if __name__ == "__main__":
    main()
