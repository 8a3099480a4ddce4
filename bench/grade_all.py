"""`attn-grade grade-all` on generated class submissions, --jobs 1 against --jobs 2.

    python bench/grade_all.py [--count 50]

Submissions: correct ones, ones with known mistakes, broken ones (syntax error,
unfilled stubs, an endless loop). Prints the wall time of each run and checks that
the gradebook CSV totals match the per-student JSON.
"""

import argparse
import csv
import json
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
EX, SOL = ROOT / "exercises" / "day3", ROOT / "solutions" / "day3"

KINDS = {
    "correct": {},
    "no-mask": {"attention": ("k=n_k - n_q + 1", "k=n_k + 99")},
    "times-t": {"temperature": ("/ T\n", "* T\n")},
    "tile": {"multihead": ("return h // (n_heads // n_kv_heads)", "return h % n_kv_heads")},
    "syntax": {"shapes": ("def q_vector_length(", "def q_vector_length((")},
    "stubs": None,
    "loop": {"growth": ("    return n * n\n", "    while True:\n        pass\n")},
}


def make_class(folder, count):
    names = list(KINDS)
    for i in range(count):
        kind = names[i % len(names)]
        student = folder / f"student{i:03d}-{kind}"
        shutil.copytree(EX, student)
        if KINDS[kind] is None:
            continue
        for stub in EX.glob("*.py"):
            text = (SOL / stub.name).read_text()
            old_new = KINDS[kind].get(stub.stem)
            if old_new:
                text = text.replace(*old_new)
            (student / stub.name).write_text(text)


def run(folder, out, jobs):
    start = time.perf_counter()
    subprocess.run([sys.executable, "-m", "grader", "grade-all", "day3", str(folder), "-o",
                    str(out), "--jobs", str(jobs), "--time-limit", "2"], cwd=ROOT, check=True,
                   capture_output=True)
    return time.perf_counter() - start


def check_totals(out):
    rows = list(csv.DictReader(open(out / "gradebook.csv")))
    for row in rows:
        doc = json.loads((out / "results" / f"{row['student']}.json").read_text())
        assert abs(float(row["score"]) - doc["score"]) < 1e-9, row["student"]
        parts = sum(float(row[k]) for k in row if k not in ("student", "score", "max_score",
                                                              "status") and row[k])
        assert abs(parts - doc["score"]) < 1e-6, row["student"]
    return len(rows)


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--count", type=int, default=50)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        make_class(tmp / "class", args.count) if (tmp / "class").mkdir() is None else None
        times = {}
        for jobs in (1, 2):
            out = tmp / f"out{jobs}"
            times[jobs] = run(tmp / "class", out, jobs)
            rows = check_totals(out)
            print(f"grade-all --jobs {jobs}: {times[jobs]:.1f} s for {rows} submissions "
                  f"({times[jobs] / rows:.2f} s each); CSV totals match the JSON")
        print(f"speed-up of --jobs 2: {times[1] / times[2]:.2f}x")


if __name__ == "__main__":
    main()
