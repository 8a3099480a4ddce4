"""Hosted, cold gradings (issue 27, part 5): every submission is a fresh container there.

    python bench/hosted.py [--repeat 7] [--only prairielearn race]

  prairielearn  the entrypoint of ``export prairielearn day3`` on a correct submission,
                per question (attention, its default) and for --whole-set, each in a
                fresh /grade tree with an empty cache: median seconds, beside the floor
  race          a small attention exercise with three checks (bench/race/), written once
                for attn-grade and once for check50 (``pip install check50``), each run
                cold in the submission folder, alternated: medians and their ratio
Targets: the PrairieLearn question <= 1.0x the floor; attn-grade <= 0.8x check50.
bench/speed.py runs these too (--only prairielearn race).
"""

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
RACE = ROOT / "bench" / "race"
# as on the platform: bytecode written, nothing cached from an earlier run
ENV = {k: v for k, v in os.environ.items() if k not in ("PYTHONDONTWRITEBYTECODE",
                                                          "XDG_CACHE_HOME")}


def seconds(argv, cwd=ROOT, env=None):
    start = time.perf_counter()
    proc = subprocess.run(argv, cwd=cwd, capture_output=True, text=True, env=env or ENV)
    elapsed = time.perf_counter() - start
    if proc.returncode not in (0, 1):
        sys.exit(f"{' '.join(map(str, argv))} failed ({proc.returncode}):\n{proc.stderr[-3000:]}")
    return elapsed, proc


def export(out, *extra):
    """``export prairielearn day3`` into ``out`` (bytecode and all, as an instructor's)."""
    proc = subprocess.run([sys.executable, "-m", "grader", "export", "prairielearn", "day3",
                           "-o", str(out), *extra], cwd=ROOT, capture_output=True, text=True)
    if proc.returncode:
        sys.exit(proc.stderr)
    return out


def grade_tree(tmp, fragment, files):
    """A /grade tree as PrairieLearn lays it out, the student's ``files`` in it."""
    root = Path(tempfile.mkdtemp(dir=tmp, prefix="grade-"))
    for sub in ("student", "tests", "data", "home"):
        (root / sub).mkdir()
    shutil.copytree(fragment / "serverFilesCourse", root / "serverFilesCourse")
    shutil.copytree(root / "serverFilesCourse", root / "shared")
    (root / "data" / "data.json").write_text("{}")
    for path in files:
        shutil.copy(path, root / "student" / path.name)
    return root


def prairielearn_once(tmp, fragment, exercise=None):
    """Seconds of one cold entrypoint run (the copy into /grade is PrairieLearn's, untimed)."""
    solutions = ROOT / "solutions" / "day3"
    files = [solutions / f"{exercise}.py"] if exercise else sorted(solutions.glob("*.py"))
    files = [f for f in files if not f.name.startswith("test_")]
    root = grade_tree(tmp, fragment, files)
    entry = root / "serverFilesCourse" / "attn_grade" / "run_prairielearn"
    env = {**ENV, "ATTN_GRADE_PL_ROOT": str(root), "PYTHON": sys.executable,
           "HOME": str(root / "home")}
    elapsed, _ = seconds(["bash", str(entry), "day3", *([exercise] if exercise else [])],
                         env=env)
    result = json.loads((root / "results" / "results.json").read_text())
    assert result["gradable"] and result["score"] == 1.0, result.get("message")
    shutil.rmtree(root)
    return elapsed


def prairielearn(tmp, repeat):
    """Median seconds of a cold question (attention) and of the whole set."""
    each = export(tmp / "each")
    whole = export(tmp / "whole", "--whole-set", "--upload")
    question = statistics.median(prairielearn_once(tmp, each, "attention")
                                 for _ in range(repeat))
    whole_set = statistics.median(prairielearn_once(tmp, whole) for _ in range(repeat))
    return question, whole_set


def race(tmp, repeat):
    """Median seconds of attn-grade and of check50 on the race's submission, alternated;
    None for check50 where it is not installed."""
    check50 = shutil.which("check50") or (Path(sys.executable).parent / "check50")
    if not Path(check50).is_file():
        return None
    work = tmp / "race"
    shutil.copytree(RACE / "submission", work)
    ours = [sys.executable, "-m", "grader", "race", "--course", str(RACE / "course"),
            "--submission", str(work), "--json"]
    theirs = [str(check50), "--dev", str(RACE / "check50"), "-o", "json"]
    cache = tmp / "race-cache"
    env = {**ENV, "XDG_CACHE_HOME": str(cache)}
    times = {"attn-grade": [], "check50": []}
    for _ in range(repeat):
        shutil.rmtree(cache, ignore_errors=True)   # cold: no spec cache either
        elapsed, proc = seconds(ours, cwd=work, env=env)
        assert json.loads(proc.stdout)["score"] == 3.0, proc.stdout[:2000]
        times["attn-grade"].append(elapsed)
        elapsed, proc = seconds(theirs, cwd=work)
        results = json.loads(proc.stdout)["results"]
        assert len(results) == 3 and all(r["passed"] for r in results), proc.stdout[:2000]
        times["check50"].append(elapsed)
    return {name: statistics.median(values) for name, values in times.items()}


def rows(tmp, repeat, want, base):
    """The table rows of the figures in ``want``."""
    out = []
    if "prairielearn" in want:
        question, whole_set = prairielearn(tmp, repeat)
        out.append(("PrairieLearn question (attention), cold", f"{question:.3f} s",
                    f"{question / base:.2f}x", "<= 1.0x"))
        out.append(("PrairieLearn whole day3, cold", f"{whole_set:.3f} s",
                    f"{whole_set / base:.2f}x", "(none)"))
    if "race" in want:
        medians = race(tmp, repeat)
        if medians is None:
            out.append(("race: check50 is not installed", "pip install check50", "", ""))
        else:
            ratio = medians["attn-grade"] / medians["check50"]
            out.append(("race: attn-grade, 3 checks, cold", f"{medians['attn-grade']:.3f} s",
                        f"{ratio:.2f}x", "<= 0.8x check50"))
            out.append(("race: check50 --dev, 3 checks", f"{medians['check50']:.3f} s", "", ""))
    return out


def main():
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--repeat", type=int, default=7)
    parser.add_argument("--only", nargs="*", default=None)
    args = parser.parse_args()
    # speed's floor and table (speed imports this module for its own rows)
    import speed

    base = speed.floor(args.repeat)
    print(f"import floor: {base:.3f} s (best of {args.repeat})")
    with tempfile.TemporaryDirectory(prefix="attn-grade-hosted-") as tmp:
        speed.print_rows(rows(Path(tmp), args.repeat,
                              set(args.only or ["prairielearn", "race"]), base))


if __name__ == "__main__":
    main()
