"""The speed figures of issue 15, each beside the import floor measured in the same run.

    python bench/speed.py [--repeat 5] [--students 20] [--saves 20] [--only NAME ...]

Figures (names for --only): floor, day3, exercise, class, c3l2, forms, watch, rss,
devcheck, mutants, prairielearn, race.
  floor     python -c "import numpy, sympy, pytest, click, yaml", best of --repeat
  day3      attn-grade day3 --json on the reference solutions, cold process, median; and
            on the student corpus (bench/corpus/day3: correct, and one known mistake a
            file; see student_corpus.py), each checked for its scores
  exercise  the same with --exercise attention
  class     grade-all --jobs 2 on --students correct day3 submissions: seconds per
            student, median of 3 classes (every student must score full marks); and on
            classes of the corpus's correct and mistaken submissions
  c3l2      attn-grade c3-l2 --json, cold, on its references and on its corpus
  forms     the corpus's slowest answer forms: each exercise graded alone, cold, the
            corpus's answers against the references', median of 3 each
  watch     attn-grade watch day3: median seconds from a save to the redrawn verdict
  rss       peak resident memory of one grade-worker after grading the class; with its
            zygotes (root with bubblewrap: numpy, and sympy one layer deeper) also the
            sum of all three, and their PSS
  devcheck  attn-grade dev check of every set, median of 3
  mutants   attn-grade dev mutants of every set, once (issue 26: <= 60 s)
  prairielearn, race
            the hosted cold paths of issue 27 (bench/hosted.py): the PrairieLearn
            entrypoint in a fresh /grade tree, and attn-grade against check50 on a
            three-check exercise (bench/race/)
Runs without PYTHONDONTWRITEBYTECODE (as Python runs on a student's machine: the grader's
modules are compiled once, like the installed libraries of the floor).
Targets (issue 15): day3 <= 1.5x floor, exercise <= 1.0x, class <= 0.25x per student,
watch <= 0.2 s, rss <= 150 MB, devcheck <= 10 s; issue 34: day3 on the correct corpus
<= 1.4x, on the mistaken corpus <= 1.5x; issue 27: a PrairieLearn question, cold,
<= 1.0x floor, attn-grade <= 0.8x check50.
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

import hosted
import student_corpus

ROOT = Path(__file__).resolve().parents[1]
GRADER = [sys.executable, "-m", "grader"]
FLOOR = [sys.executable, "-c", "import numpy, sympy, pytest, click, yaml"]


ENV = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}


def timed(argv, **kwargs):
    start = time.perf_counter()
    proc = subprocess.run(argv, cwd=ROOT, capture_output=True, text=True, env=ENV, **kwargs)
    elapsed = time.perf_counter() - start
    if proc.returncode != 0:
        sys.exit(f"{' '.join(map(str, argv))} failed ({proc.returncode}):\n{proc.stderr[-3000:]}")
    return elapsed, proc


def floor(repeat):
    return min(timed(FLOOR)[0] for _ in range(repeat))


def grade_day3(repeat, *extra):
    argv = [*GRADER, "day3", "--submission", "solutions/day3", "--json", *extra]
    timed(argv)   # the spec cache and the file cache, as a student's second run has them
    times = []
    for _ in range(repeat):
        elapsed, proc = timed(argv)
        doc = json.loads(proc.stdout)
        assert doc["score"] == doc["max_score"], doc["score"]
        times.append(elapsed)
    return statistics.median(times)


def make_class(folder, count):
    """``count`` correct day3 submissions, each answering its own student's variants."""
    sys.path.insert(0, str(ROOT))
    from grader.course import loader
    from grader.course.spec import Course
    from grader.run.references import Reference

    exercises = loader.load_set(Course(ROOT), "day3").exercises
    for i in range(count):
        student = f"s{i:03d}"
        target = folder / student   # a student's work folder: the stubs (and models/) filled in
        shutil.copytree(ROOT / "exercises" / "day3", target,
                        ignore=shutil.ignore_patterns(".attn-grade", "*.yaml"))
        for exercise in exercises:
            shutil.copy(ROOT / "solutions" / "day3" / exercise.file, target / exercise.file)
        for exercise in exercises:
            mine = exercise.for_student(student)
            if not mine.params:
                continue
            with open(target / exercise.file, "a", encoding="utf-8") as f:
                for check in mine.checks:
                    if check.args or check.kwargs or check.hidden:
                        continue
                    value = Reference(mine).call(check.function, (), {}, check)
                    value = value.tolist() if hasattr(value, "tolist") else value
                    f.write(f"\n\ndef {check.function}():\n    return {value!r}\n")


def grade_class(tmp, count, runs=3):
    """Seconds per student of a whole class, the median of ``runs`` gradings (each into
    a fresh output folder: nothing resumed)."""
    make_class(tmp / "class", count)
    times = []
    for run in range(runs):
        out = tmp / f"out-{run}"
        elapsed, _ = timed([*GRADER, "grade-all", "day3", str(tmp / "class"), "-o",
                            str(out), "--jobs", "2"])
        results = list((out / "results").glob("*.json"))
        assert len(results) == count, len(results)
        for path in results:
            doc = json.loads(path.read_text())
            assert doc["score"] == doc["max_score"], (path.name, doc["score"])
        times.append(elapsed)
    return statistics.median(times) / count


def worker_rss(tmp):
    """Peak RSS (VmHWM) of one grade-worker that graded every student of the class."""
    worker = subprocess.Popen([*GRADER, "grade-worker"], cwd=ROOT, stdin=subprocess.PIPE,
                              stdout=subprocess.PIPE, text=True, env=ENV)
    try:
        for student in sorted((tmp / "class").iterdir()):
            worker.stdin.write(json.dumps(["day3", "--course", str(ROOT), "--submission",
                                           str(student), "--json", "--student",
                                           student.name]) + "\n")
            worker.stdin.flush()
            answer = json.loads(worker.stdout.readline())
            assert answer["document"]["score"] == answer["document"]["max_score"]
        # and its zygotes' (root with bubblewrap: they fork each student's templates)
        zygotes = _zygotes_of(worker.pid)
        return (_peak_rss_mb(worker.pid), sum(_peak_rss_mb(pid) for pid in zygotes),
                sum(_pss_mb(pid) for pid in [worker.pid, *zygotes]))
    finally:
        worker.stdin.close()
        worker.wait()


def _peak_rss_mb(pid):
    status = Path(f"/proc/{pid}/status").read_text()
    return int(next(line.split()[1] for line in status.splitlines()
                    if line.startswith("VmHWM:"))) / 1024


def _pss_mb(pid):
    rollup = Path(f"/proc/{pid}/smaps_rollup").read_text()
    return int(next(line.split()[1] for line in rollup.splitlines()
                    if line.startswith("Pss:"))) / 1024


def _zygotes_of(parent):
    """The zygotes ``parent`` started, and the deeper zygotes they forked (sympy's)."""
    children = {}
    for entry in Path("/proc").iterdir():
        try:
            stat = (entry / "stat").read_text()
            cmdline = (entry / "cmdline").read_bytes()
        except OSError:
            continue
        if b"--zygote" in cmdline:
            children.setdefault(int(stat[stat.rfind(")") + 2:].split()[1]), []).append(
                int(entry.name))
    found, parents = [], [parent]
    while parents:
        kids = [pid for p in parents for pid in children.get(p, [])]
        found += kids
        parents = kids
    return found


def watch(tmp, saves):
    """Median seconds from writing a stub file to the end of the redrawn screen."""
    work = tmp / "watch"
    shutil.copytree(ROOT / "exercises" / "day3", work)
    solution = (ROOT / "solutions" / "day3" / "temperature.py").read_text()
    proc = subprocess.Popen([*GRADER, "watch", "day3", "--submission", str(work), "--lang",
                             "en"], cwd=ROOT, stdout=subprocess.PIPE, text=True,
                            env={**ENV, "PYTHONUNBUFFERED": "1"})
    times = []
    try:
        _read_until(proc, "watching")
        for i in range(saves + 1):
            start = time.perf_counter()
            (work / "temperature.py").write_text(solution + f"\n# save {i}\n")
            _read_until(proc, "waiting for the next save")
            if i:   # the first grading also computes the reference answers
                times.append(time.perf_counter() - start)
    finally:
        proc.terminate()
        proc.wait()
    return statistics.median(times)


def _read_until(proc, marker):
    for line in proc.stdout:
        if marker in line:
            return
    sys.exit(f"watch ended before printing {marker!r}")


def main():
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--students", type=int, default=20)
    parser.add_argument("--saves", type=int, default=20)
    parser.add_argument("--only", nargs="*", default=None)
    args = parser.parse_args()
    want = set(args.only or ["day3", "exercise", "class", "c3l2", "forms", "watch", "rss",
                             "devcheck", "mutants", "prairielearn", "race"])
    base = floor(args.repeat)
    print(f"import floor: {base:.3f} s (best of {args.repeat})")
    rows = []
    with tempfile.TemporaryDirectory(prefix="attn-grade-bench-") as tmp:
        tmp = Path(tmp)
        if "day3" in want:
            t = grade_day3(args.repeat)
            rows.append(("day3, cold, references", f"{t:.3f} s", f"{t / base:.2f}x", "<= 1.5x"))
            rows += corpus_rows("day3, cold, corpus", base, {"correct": "<= 1.4x",
                                                            "mistaken": "<= 1.5x"},
                                lambda kind: student_corpus.cold(kind, args.repeat, ENV))
        if "exercise" in want:
            t = grade_day3(args.repeat, "--exercise", "attention")
            rows.append(("one exercise (attention)", f"{t:.3f} s", f"{t / base:.2f}x",
                         "<= 1.0x"))
            rows += corpus_rows("  the corpus's", base, {}, lambda kind: student_corpus.cold(
                kind, args.repeat, ENV, "--exercise", "attention"))
        if want & {"class", "rss"}:
            t = grade_class(tmp, args.students)
            rows.append((f"grade-all --jobs 2, {args.students} students", f"{t:.3f} s/student",
                         f"{t / base:.2f}x", "<= 0.25x"))
        if "class" in want:
            rows += corpus_rows(f"  {args.students} students of the corpus", base, {},
                                lambda kind: student_corpus.grade_class(tmp, kind, args.students,
                                                                        ENV), "s/student")
        if "c3l2" in want:
            for kind in ("references", *student_corpus.KINDS):
                t = student_corpus.cold(kind, args.repeat, ENV, set_id="c3-l2")
                rows.append((f"c3-l2, cold, {kind}", f"{t:.3f} s", f"{t / base:.2f}x",
                             "(none)"))
        if "forms" in want:
            slowest = student_corpus.slowest_forms(3, ENV)
        if "rss" in want:
            worker, zygote, pss = worker_rss(tmp)
            rows.append(("grade-worker peak RSS", f"{worker:.0f} MB", "", "<= 150 MB"))
            if zygote:   # a process of the worker's own: said, not hidden
                rows.append(("  with its zygotes: RSS summed (PSS)",
                             f"{worker + zygote:.0f} ({pss:.0f}) MB", "", "(the same)"))
        if "watch" in want:
            t = watch(tmp, args.saves)
            rows.append((f"watch, save to verdict (median of {args.saves})", f"{t * 1000:.0f} ms",
                         "", "<= 200 ms"))
        if "devcheck" in want:
            t = statistics.median(timed([*GRADER, "dev", "check"])[0] for _ in range(3))
            rows.append(("dev check, both sets (median of 3)", f"{t:.1f} s", "", "<= 10 s"))
        if "mutants" in want:
            t = timed([*GRADER, "dev", "mutants"])[0]
            rows.append(("dev mutants, both sets", f"{t:.1f} s", "", "<= 60 s"))
        rows += hosted.rows(tmp, args.repeat, want, base)
    print_rows(rows)
    if "forms" in want:
        print("slowest answer forms (the corpus's exercise graded alone, cold, beyond the "
              "reference's; median of 3 each):")
        for exercise, forms, extra in slowest:
            print(f"  {extra * 1000:+6.0f} ms  {exercise}: {forms}")


def print_rows(rows):
    """The table: a figure, its value, its ratio to the floor, its target."""
    width = max(len(r[0]) for r in rows)
    for name, value, ratio, target in rows:
        print(f"{name:<{width}}  {value:>14}  {ratio:>7}  target {target}")


def corpus_rows(label, base, targets, measure, unit="s"):
    """A row for each corpus folder: ``measure(kind)`` seconds, beside the floor."""
    rows = []
    for kind in student_corpus.KINDS:
        t = measure(kind)
        rows.append((f"{label} {kind}", f"{t:.3f} {unit}", f"{t / base:.2f}x",
                     targets.get(kind, "(none)")))
    return rows


if __name__ == "__main__":
    main()
