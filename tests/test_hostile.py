"""Hostile submissions, graded through the CLI as an instructor would.

Each attack replaces temperature.py (or attention.py) in an otherwise correct
submission.  For every attack: the attacked file scores 0, every other file
keeps full marks, the run ends well under a minute, stdout is one valid JSON
document, no student process is left running and no course file changed.
"""

import hashlib
import json
import os
import subprocess
import sys
import time

import pytest

from conftest import ROOT, SOLUTIONS, scores_by_exercise

from grader import sandbox

FULL = {"temperature": 10.0, "attention_by_hand": 6.0, "attention": 14.0}
LIMITS = ["--time-limit", "2", "--memory-limit", "768MiB", "--output-limit", "4KiB"]
BWRAP = sandbox.bubblewrap_works()

STUBS = '''
def softmax(logits, T=1.0):
    {body}

def greedy(logits):
    {body}
'''


def funcs(body):
    return STUBS.format(body=body)


ATTACKS = {
    "always-equal object": funcs("""
    class Liar:
        def __eq__(self, other): return True
        def __ne__(self, other): return False
        def __len__(self): return 3
    return Liar()"""),
    "ndarray subclass that lies": """
import numpy as np
class Liar(np.ndarray):
    def __eq__(self, other): return np.ones(np.shape(other), bool)
def softmax(logits, T=1.0):
    return np.zeros(np.shape(logits)).view(Liar)
def greedy(logits):
    return np.zeros(1).view(Liar)
""",
    "monkeypatched numpy math sympy pytest": """
import math, numpy as np, numpy.testing, sympy, pytest
np.allclose = lambda *a, **k: True
np.isclose = lambda a, b, *x, **k: np.ones(np.shape(a), bool)
np.array_equal = lambda *a, **k: True
np.testing.assert_allclose = lambda *a, **k: None
math.isclose = lambda *a, **k: True
sympy.simplify = lambda e, *a, **k: 0
pytest.approx = lambda *a, **k: object()
def softmax(logits, T=1.0):
    return np.zeros(np.shape(logits))
def greedy(logits):
    return -1
""",
    "os._exit at import": "import os\nos._exit(0)\n" + funcs("return 0"),
    "sys.exit in calls": funcs("import sys; sys.exit(0)"),
    "fake report on stdout and stderr": """
import json, os, sys
FAKE = json.dumps({"score": 100, "max_score": 100, "tests": []})
print(FAKE); print(FAKE, file=sys.stderr); os.write(1, FAKE.encode()); os.write(2, FAKE.encode())
def softmax(logits, T=1.0):
    print(FAKE); os.write(1, FAKE.encode())
    raise NotImplementedError
def greedy(logits):
    print(FAKE, file=sys.stderr)
    raise NotImplementedError
""",
    "infinite loop": funcs("while True: pass"),
    "slow import": "import time\ntime.sleep(120)\n" + funcs("return 0"),
    "multi-GiB allocation": funcs("import numpy as np; return np.ones((6, 1 << 27)).sum()"),
    "200 MB of output": """
import os, sys
def softmax(logits, T=1.0):
    chunk = "x" * (1 << 20)
    for _ in range(100):
        sys.stdout.write(chunk)
    for _ in range(100):
        os.write(1, chunk.encode())
    return [0.0, 0.0, 0.0]
def greedy(logits):
    print("y" * (200 << 20))
    return -1
""",
    "segfault": funcs("import ctypes; return ctypes.string_at(0)"),
    "forked children that sleep": """
import os, time
def _spawn():
    for _ in range(3):
        if os.fork() == 0:
            os.setsid()
            if os.fork() == 0:
                time.sleep(300)
            os._exit(0)
def softmax(logits, T=1.0):
    _spawn()
    return [1.0, 0.0, 0.0]
def greedy(logits):
    _spawn()
    return -1
""",
    "syntax error": "def softmax(logits, T=1.0)\n    return logits\n",
    "wrong types": """
def softmax(logits, T=1.0):
    return (x for x in logits)
def greedy(logits):
    return "zero"
""",
    "NaN answers": funcs("import numpy as np; return np.full(np.shape(logits), np.nan)"),
    "huge return value": funcs("import numpy as np; return np.random.rand(6_000_000)"),
}


def course_fingerprint():
    digest = {}
    for top in ("exercises", "solutions", "grader", "pyproject.toml"):
        path = ROOT / top
        files = [path] if path.is_file() else sorted(p for p in path.rglob("*") if p.is_file()
                                                     and "__pycache__" not in p.parts)
        for f in files:
            digest[str(f)] = hashlib.sha256(f.read_bytes()).hexdigest()
    return digest


def child_processes():
    found = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                cmdline = open(f"/proc/{entry}/cmdline", "rb").read()
            except OSError:
                continue
            if b"_attn_grade_child" in cmdline:
                found.append(int(entry))
    return found


def grade_hostile(folder, *extra):
    before = course_fingerprint()
    start = time.monotonic()
    proc = subprocess.run([sys.executable, "-m", "grader", "day3", "--submission", folder,
                           "--json", "--lang", "en", *LIMITS, *extra], cwd=ROOT,
                          capture_output=True, text=True, timeout=120)
    elapsed = time.monotonic() - start
    assert proc.returncode == 1, proc.stderr[-3000:]
    doc = json.loads(proc.stdout)
    assert elapsed < 50, elapsed
    assert child_processes() == []
    assert course_fingerprint() == before
    return doc


def assert_only(doc, exercise):
    scores = scores_by_exercise(doc)
    assert scores[exercise][0] == 0, [t["output"] for t in doc["tests"]
                                      if t["extra_data"]["exercise"] == exercise
                                      and t["status"] == "passed"]
    for other, full in FULL.items():
        if other != exercise:
            assert scores[other] == pytest.approx((full, full)), other


@pytest.mark.parametrize("attack", sorted(ATTACKS))
def test_attack_scores_zero_and_harms_nothing_else(submission, attack):
    folder = submission("day3", temperature=ATTACKS[attack])
    doc = grade_hostile(folder)
    assert_only(doc, "temperature")


def test_messages_name_the_limit_or_problem(submission):
    expectations = {
        "infinite loop": "took longer than 2 s",
        "slow import": "importing temperature.py took longer than 2 s",
        "multi-GiB allocation": "used more than 768 MiB",
        "segfault": "crashed (SIGSEGV)",
        "syntax error": "temperature.py has a syntax error",
        "always-equal object": "returned a Liar, expected a array of numbers",
        "huge return value": "far too large",
        "os._exit at import": "exited (code 0)",
    }
    for attack, fragment in expectations.items():
        folder = submission("day3", temperature=ATTACKS[attack])
        proc = subprocess.run([sys.executable, "-m", "grader", "day3", "--submission", folder,
                               "--exercise", "temperature", "--json", "--lang", "en", *LIMITS],
                              cwd=ROOT, capture_output=True, text=True, timeout=120)
        outputs = "\n".join(t["output"] for t in json.loads(proc.stdout)["tests"])
        assert fragment in outputs, (attack, outputs[:2000])


READ_SOLUTIONS = f'''
import os
SOURCE = None
for path in [{str(SOLUTIONS / "day3" / "temperature.py")!r}, "../solutions/day3/temperature.py",
             "/work/main/solutions/day3/temperature.py"]:
    try:
        SOURCE = open(path).read()
        break
    except OSError:
        pass
if SOURCE is None:
    for top, dirs, files in os.walk("/"):
        if "temperature.py" in files and "solutions" in top:
            SOURCE = open(os.path.join(top, "temperature.py")).read()
            break
        if top.count(os.sep) > 6:
            dirs[:] = []
if SOURCE is None:
    raise NotImplementedError("nothing to read")
exec(SOURCE)
'''

TAMPER = f'''
import os
ROOT = {str(ROOT)!r}
TOUCHED = 0
for top in (ROOT, "/", os.path.dirname(os.path.abspath(__file__))):
    for folder, dirs, files in os.walk(top):
        for name in files:
            if name.endswith((".py", ".yaml", ".toml")):
                try:
                    with open(os.path.join(folder, name), "a") as f:
                        f.write("\\n# tampered\\n")
                    TOUCHED += 1
                except OSError:
                    pass
        if folder.count(os.sep) > 8:
            dirs[:] = []

def softmax(logits, T=1.0):
    raise ValueError(f"touched {{TOUCHED}} files")

def greedy(logits):
    raise ValueError(f"touched {{TOUCHED}} files")
'''


@pytest.mark.skipif(not BWRAP, reason="bubblewrap is not available here")
def test_reference_solutions_are_out_of_reach(submission):
    folder = submission("day3", temperature=READ_SOLUTIONS)
    doc = grade_hostile(folder, "--isolation", "bubblewrap")
    assert doc["extra_data"]["isolation"] == "bubblewrap"
    assert_only(doc, "temperature")


@pytest.mark.skipif(not BWRAP, reason="bubblewrap is not available here")
def test_tampering_changes_no_file(submission):
    folder = submission("day3", temperature=TAMPER)
    before = {p: p.read_bytes() for p in folder.iterdir()}
    doc = grade_hostile(folder, "--isolation", "bubblewrap")
    assert_only(doc, "temperature")
    assert {p: p.read_bytes() for p in folder.iterdir()} == before
    outputs = [t["output"] for t in doc["tests"] if t["visibility"] == "visible"
               and t["extra_data"]["exercise"] == "temperature"]
    assert outputs and all("ValueError: touched 0 files" in o for o in outputs), outputs


@pytest.mark.parametrize("attack", ["forked children that sleep", "multi-GiB allocation",
                                    "200 MB of output", "infinite loop"])
def test_process_level_without_bubblewrap_holds_too(submission, attack):
    folder = submission("day3", temperature=ATTACKS[attack])
    doc = grade_hostile(folder, "--isolation", "process")
    assert doc["extra_data"]["isolation"].startswith("process")
    assert_only(doc, "temperature")
