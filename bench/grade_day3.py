"""Wall time of `attn-grade day3 --json` on a correct submission, beside the
bare import of its dependencies, measured in the same run.

    python bench/grade_day3.py [--repeat 5]

Prints the median of each and their ratio.
"""

import argparse
import json
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def timed(argv, check_json=False):
    start = time.perf_counter()
    proc = subprocess.run(argv, cwd=ROOT, capture_output=True, text=True)
    elapsed = time.perf_counter() - start
    if proc.returncode not in (0, 1) or (check_json and json.loads(proc.stdout)["score"] is None):
        sys.exit(f"{' '.join(argv)} failed:\n{proc.stderr}")
    return elapsed


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--isolation", default=None)
    args = parser.parse_args()
    grade = [sys.executable, "-m", "grader", "day3", "--submission", "solutions/day3", "--json"]
    if args.isolation:
        grade += ["--isolation", args.isolation]
    imports = [sys.executable, "-c", "import numpy, sympy, pytest, click, yaml"]
    timed(grade)  # warm the file cache
    grade_times, import_times = [], []
    for _ in range(args.repeat):
        import_times.append(timed(imports))
        grade_times.append(timed(grade, check_json=True))
    g, i = statistics.median(grade_times), statistics.median(import_times)
    print(f"attn-grade day3 --json (correct submission): {g:.3f} s (median of {args.repeat})")
    print(f"python -c 'import numpy, sympy, pytest, click, yaml': {i:.3f} s")
    print(f"ratio: {g / i:.2f}")


if __name__ == "__main__":
    main()
