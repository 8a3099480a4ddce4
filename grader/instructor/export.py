"""``attn-grade export gradescope``: an autograder.zip for Gradescope.

Gradescope unpacks the zip into /autograder/source, runs ``setup.sh`` once when
it builds the image, then ``run_autograder`` in a fresh container for every
submission. Ours installs the grader with the course it was exported from, builds
into the image what every submission would otherwise make again (``warm_up``: the
grader's bytecode, the course read and its reference answers stored), and
leaves /autograder/results/results.json for every submission it can grade; when the
grader itself fails it leaves none, so that Gradescope records no score (not a zero) and
shows the staff the log.
The root folder can be moved with AUTOGRADER_ROOT, and the interpreter chosen
with PYTHON (the test suite uses both).
"""

import io
import zipfile
from pathlib import Path

from ..course.spec import Course
from ..run.sandbox import BATCH_MINIMUM

SETUP = """\
#!/usr/bin/env bash
# Gradescope runs this once, as root, when it builds the autograder image.
set -euo pipefail
apt-get update
apt-get install -y python3 python3-pip python3-venv bubblewrap || \\
  apt-get install -y python3 python3-pip python3-venv
python3 -m venv /opt/attn-grade
/opt/attn-grade/bin/pip install --upgrade pip
/opt/attn-grade/bin/pip install /autograder/source/course
# the reference solutions and hidden checks: readable by root (the grader) only
chmod -R go-rwx /autograder/source/course/solutions
bash /autograder/source/warm_up
"""

WARM = """\
#!/usr/bin/env bash
# setup.sh runs this once, as root, when it builds the image: every submission runs in
# a fresh container of it, which would otherwise compile the grader and read the course
# (its YAML, its reference answers) again.  Gradings of the stubs and of the references
# leave the course in root's cache; an image without it still grades, only slower.
ROOT="${{AUTOGRADER_ROOT:-/autograder}}"
PYTHON="${{PYTHON:-/opt/attn-grade/bin/python}}"
"$PYTHON" -m compileall -q "$ROOT/source/course/grader" > /dev/null
cd "$ROOT/source/course"
for work in exercises solutions; do
  PYTHONPATH="$ROOT/source/course" "$PYTHON" -m grader {set_id} --course "$ROOT/source/course" \\
    --submission "$ROOT/source/course/$work/{set_id}" --json > /dev/null 2>&1
done
exit 0
"""

RUN = """\
#!/usr/bin/env bash
# Gradescope runs this for every submission; it leaves results/results.json, or none
# when the grader itself fails (Gradescope then records no score, never a zero).
ROOT="${{AUTOGRADER_ROOT:-/autograder}}"
PYTHON="${{PYTHON:-/opt/attn-grade/bin/python}}"
RESULTS="$ROOT/results/results.json"
mkdir -p "$ROOT/results"
# --upload: the grader finds each stub file by name anywhere in the upload (the files
# alone, a folder, a whole release bundle) and grades a private copy of them
cd "$ROOT/source/course"
# the submitter's email picks their per-student numbers (exercises with variants)
STUDENT=$("$PYTHON" -c 'import json, sys
try:
    print(json.load(open(sys.argv[1]))["users"][0]["email"])
except Exception:
    print("")' "$ROOT/submission_metadata.json" 2>/dev/null)
PYTHONPATH="$ROOT/source/course" "$PYTHON" -m grader {set_id} --course "$ROOT/source/course" \\
  --upload "$ROOT/submission" --json --output "$RESULTS" --lang {lang} \\
  --require-isolation {required} --student "$STUDENT" \\
  --hidden-visibility {hidden_visibility} > /dev/null 2> "$ROOT/results/grader.log"
status=$?
if [ "$status" -gt 1 ] || [ ! -s "$RESULTS" ]; then
  # the grader's own failure is not gradable, never a zero: without a results.json
  # Gradescope says "The autograder failed to execute correctly" and records no score,
  # and shows the course staff this script's output (results/stdout)
  rm -f "$RESULTS"
  echo "attn-grade could not grade this submission (its own error, status $status);"
  echo "no score was recorded. Fix the cause and regrade. The grader's log ends:"
  tail -c 4000 "$ROOT/results/grader.log"
  exit 1
fi
exit 0
"""

COURSE_FILES = ("pyproject.toml", "README.md")


def gradescope_zip(course: Course, set_id: str, lang: str = "en",
                   hidden_visibility: str = "after_published",
                   required: str = BATCH_MINIMUM) -> bytes:
    """The bytes of an autograder.zip for one set."""
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        _add_text(archive, "setup.sh", SETUP)
        _add_text(archive, "warm_up", WARM.format(set_id=set_id))
        _add_text(archive, "run_autograder", RUN.format(
            set_id=set_id, lang=lang, hidden_visibility=hidden_visibility,
            required=required))
        for name in COURSE_FILES:
            if (course.root / name).is_file():
                archive.write(course.root / name, f"course/{name}")
        for top in (Path("grader"), Path("exercises") / set_id, Path("solutions") / set_id):
            for path in sorted((course.root / top).rglob("*")):
                parts = path.relative_to(course.root).parts
                if path.is_file() and "__pycache__" not in parts and \
                        not any(p.startswith(".") for p in parts):
                    archive.write(path, f"course/{path.relative_to(course.root)}")
    return buffer.getvalue()


def _add_text(archive, name, text):
    info = zipfile.ZipInfo(name)
    info.external_attr = 0o755 << 16
    archive.writestr(info, text)
