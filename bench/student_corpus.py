"""The speed figures on what students write (issue 34): bench/corpus/SET/correct, answers
written independently of solutions/ in the forms students use (each file's docstring
says which, in a "Forms:" line), and bench/corpus/SET/mistaken, one known mistake a
file.  Used by speed.py; each figure checks its scores (correct: full marks; mistaken:
every exercise short of them)."""

import ast
import json
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
CORPUS = ROOT / "bench" / "corpus"
GRADER = [sys.executable, "-m", "grader"]
KINDS = ("correct", "mistaken")


def folder(kind, set_id="day3"):
    """A corpus folder, or ("references") the set's solutions."""
    return ROOT / "solutions" / set_id if kind == "references" else CORPUS / set_id / kind


def run(argv, env):
    """(seconds, the JSON document) of one grading; a mistaken submission exits 1."""
    start = time.perf_counter()
    proc = subprocess.run(argv, cwd=ROOT, capture_output=True, text=True, env=env)
    elapsed = time.perf_counter() - start
    if proc.returncode not in (0, 1):
        sys.exit(f"{' '.join(map(str, argv))} failed ({proc.returncode}):\n{proc.stderr[-3000:]}")
    return elapsed, json.loads(proc.stdout)


def check_scores(doc, kind, where):
    """Full marks for the correct corpus; every exercise short of them for the mistaken."""
    if kind != "mistaken":
        assert doc["score"] == doc["max_score"], (where, doc["score"])
        return
    whole = [e["exercise"] for e in doc["extra_data"]["exercises"]
             if e["score"] >= e["max_score"]]
    assert not whole, f"{where}: no mistake found in {whole}"


def cold(kind, repeat, env, *extra, set_id="day3"):
    """Median seconds of attn-grade SET --json on one corpus folder, cold process."""
    argv = [*GRADER, set_id, "--submission", str(folder(kind, set_id)), "--json", *extra]
    run(argv, env)   # the caches, as a student's second run has them
    times = []
    for _ in range(repeat):
        elapsed, doc = run(argv, env)
        check_scores(doc, kind, folder(kind, set_id))
        times.append(elapsed)
    return statistics.median(times)


def variant_zero_students(count, set_id="day3"):
    """``count`` student ids that draw every exercise's first variant (the notes' own
    numbers, which the corpus's hand-worked answers are for)."""
    sys.path.insert(0, str(ROOT))
    from grader.course import loader
    from grader.course.spec import Course

    exercises = loader.load_set(Course(ROOT), set_id).exercises
    found, i = [], 0
    while len(found) < count:
        name = f"s{i:04d}"
        if all(e.for_student(name).variant == 0 for e in exercises):
            found.append(name)
        i += 1
    return found


def make_class(target, kind, count, set_id="day3"):
    """A class of ``count`` copies of one corpus folder, in the exercises' folder layout."""
    for student in variant_zero_students(count, set_id):
        shutil.copytree(ROOT / "exercises" / set_id, target / student,
                        ignore=shutil.ignore_patterns(".attn-grade", "*.yaml"))
        for path in folder(kind, set_id).glob("*.py"):
            shutil.copy(path, target / student / path.name)


def grade_class(tmp, kind, count, env, runs=3):
    """Seconds per student of grade-all --jobs 2 on a class of one corpus folder."""
    make_class(tmp / f"class-{kind}", kind, count)
    times = []
    for n in range(runs):
        out = tmp / f"out-{kind}-{n}"
        start = time.perf_counter()
        subprocess.run([*GRADER, "grade-all", "day3", str(tmp / f"class-{kind}"), "-o",
                        str(out), "--jobs", "2"], cwd=ROOT, capture_output=True, env=env,
                       check=True)
        times.append(time.perf_counter() - start)
        results = list((out / "results").glob("*.json"))
        assert len(results) == count, len(results)
        for path in results:
            check_scores(json.loads(path.read_text()), kind, path.name)
    return statistics.median(times) / count


def forms(path):
    """The answer forms a corpus file says it uses (its docstring's "Forms:" line)."""
    doc = ast.get_docstring(ast.parse(path.read_text(encoding="utf-8"))) or ""
    line = next((ln for ln in doc.splitlines() if ln.startswith("Forms:")), "Forms: ?")
    return line.removeprefix("Forms:").strip()


def slowest_forms(repeat, env, top=5, set_id="day3"):
    """(exercise, its forms, seconds the correct corpus's answers take beyond the
    references', cold --exercise runs, median of ``repeat`` each), slowest first."""
    rows = []
    for path in sorted(folder("correct", set_id).glob("*.py")):
        mine, theirs = ([*GRADER, set_id, "--submission", str(where), "--json", "--exercise",
                         path.stem] for where in (folder("correct", set_id),
                                                  ROOT / "solutions" / set_id))
        run(mine, env)
        run(theirs, env)
        pairs = [(run(mine, env)[0], run(theirs, env)[0]) for _ in range(repeat)]   # in turn
        rows.append((path.stem, forms(path), statistics.median(a - b for a, b in pairs)))
    return sorted(rows, key=lambda r: -r[2])[:top]
