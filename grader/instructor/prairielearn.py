"""``attn-grade export prairielearn``: a PrairieLearn course fragment for one set.

What PrairieLearn needs (docs/externalGrading.md and the infoQuestion schema of
PrairieLearn/PrairieLearn): each question folder holds ``info.json`` (``gradingMethod:
External`` and ``externalGradingOptions``: the image, the entrypoint, the
``serverFilesCourse`` entries copied to ``/grade/serverFilesCourse``, ``timeout``,
``enableNetworking``) and ``question.html``. The container gets the student's files in
``/grade/student`` and must leave ``/grade/results/results.json``.

``serverFilesCourse/attn_grade/`` holds the grader, the set and its solutions (the hidden
checks); the entrypoint closes them to other users before any student code runs, and
grades at the isolation level the container allows (root there: ``process-user``).
The Dockerfile's image holds only the dependencies, never the course, so it may be public.
"""

import html
import importlib.metadata
import json
import shutil
import sys
import uuid
from pathlib import Path

from ..course.spec import Course, Exercise, ExerciseSet
from ..errors import CourseError
from ..judge.msg import Msg
from ..report.messages import render
from ..report.platforms import prairielearn_not_gradable
from ..report.student_view import prompt_text
from ..run.sandbox import BATCH_MINIMUM
from .uploads import stub_names

STOCK_IMAGE = "prairielearn/grader-python"
# the Dockerfile's Python: the exporting one, whose bytecode the export ships
PYTHON_VERSION = "{}.{}".format(*sys.version_info[:2])
SERVER_DIR = "attn_grade"           # serverFilesCourse/attn_grade
QUESTIONS_DIR = Path("questions") / "attn_grade"
ENTRYPOINT = f"/grade/serverFilesCourse/{SERVER_DIR}/run_prairielearn"
TIMEOUT = {"exercise": 60, "set": 180}   # seconds; PrairieLearn allows up to 600
UUID_SPACE = uuid.UUID("5a1d5c36-27f0-4b8e-9b1f-6a1f1e5e2b27")   # stable ids across exports
# What the grader needs that PrairieLearn's stock Python image lacks: its
# graders/python/requirements.txt has numpy, sympy, Pygments and packaging, and click and
# PyYAML through nltk and bokeh, but not pytest (nor pluggy and iniconfig, its own needs).
VENDORED = ("pytest", "pluggy", "iniconfig")


def write_fragment(course: Course, exercise_set: ExerciseSet, out: str | Path, lang: str,
                   image: str = STOCK_IMAGE, whole_set: bool = False, upload: bool = False,
                   required: str = BATCH_MINIMUM) -> Path:
    """Write the fragment (questions/, serverFilesCourse/, Dockerfile) into ``out``."""
    out = Path(out)
    if out.exists() and any(out.iterdir()):
        raise CourseError("the output folder is not empty", out, hint="choose a new folder")
    server = out / "serverFilesCourse" / SERVER_DIR
    _copy_course(course, exercise_set.id, server)
    _vendor(server / "vendor")
    _compile(server)
    entry = server / "run_prairielearn"
    entry.write_text(entrypoint_script(lang, required), encoding="utf-8")
    entry.chmod(0o755)
    (out / "Dockerfile").write_text(DOCKERFILE.format(python=PYTHON_VERSION), encoding="utf-8")
    groups = [(exercise_set.id, list(exercise_set.exercises))] if whole_set else \
        [(e.id, [e]) for e in exercise_set.exercises]
    for name, exercises in groups:
        folder = out / QUESTIONS_DIR / exercise_set.id / name
        folder.mkdir(parents=True)
        only = None if whole_set else name
        info = question_info(exercise_set, exercises, image, only, lang)
        (folder / "info.json").write_text(json.dumps(info, ensure_ascii=False, indent=2) + "\n",
                                          encoding="utf-8")
        (folder / "question.html").write_text(question_html(exercises, lang, upload),
                                              encoding="utf-8")
        for stub in stub_names(exercises):
            shutil.copy(exercise_set.exercises_dir / stub, folder / stub)
    return out


def question_info(exercise_set: ExerciseSet, exercises: list[Exercise], image: str,
                  exercise_id: str | None, lang: str = "en") -> dict:
    """A question's info.json: graded externally, by our entrypoint, without network.
    Its uuid is derived from the set and exercise, so an export again updates it."""
    key = f"attn-grade/{exercise_set.id}/{exercise_id or ''}"
    title = (exercises[0].title if exercise_id else exercise_set.title).get(lang)
    entry = [ENTRYPOINT, exercise_set.id, *([exercise_id] if exercise_id else [])]
    return {"uuid": str(uuid.uuid5(UUID_SPACE, key)), "title": title,
            "topic": "attn-grade", "tags": ["attn-grade", exercise_set.id], "type": "v3",
            "singleVariant": True, "gradingMethod": "External",
            "externalGradingOptions": {
                "image": image, "entrypoint": entry, "serverFilesCourse": [f"{SERVER_DIR}/"],
                "timeout": TIMEOUT["exercise" if exercise_id else "set"],
                "enableNetworking": False}}


def question_html(exercises: list[Exercise], lang: str, upload: bool) -> str:
    """The page: each exercise's prompt in ``lang`` and its functions, then the editors
    (or one upload element, which also takes a notebook), then the results."""
    parts = ["<pl-question-panel>"]
    for exercise in exercises:
        functions = render(Msg("pl-functions", names=", ".join(exercise.functions)), lang)
        parts += [f"  <h4>{_text(exercise.title.get(lang))}</h4>",
                  f'  <div style="white-space: pre-wrap">{_text(prompt_text(exercise, lang))}'
                  "</div>",
                  f"  <p>{_text(functions)}</p>"]
    stubs = stub_names(exercises)
    if upload:
        parts.append(f'  <pl-file-upload optional-file-names="{", ".join(stubs)}" '
                     'optional-file-patterns="*.ipynb"></pl-file-upload>')
    else:
        parts += [f'  <pl-file-editor file-name="{stub}" ace-mode="ace/mode/python" '
                  f'source-file-name="{stub}"></pl-file-editor>' for stub in stubs]
    parts += ["</pl-question-panel>", "", "<pl-submission-panel>",
              "  <pl-external-grader-results></pl-external-grader-results>",
              "  <pl-file-preview></pl-file-preview>", "</pl-submission-panel>", ""]
    return "\n".join(parts)


def _text(text: str) -> str:
    """Course text on the page: HTML-escaped, and no braces for PrairieLearn's Mustache."""
    return html.escape(text).replace("{", "&#123;").replace("}", "&#125;")


def _copy_course(course: Course, set_id: str, target: Path) -> None:
    """The grader, the set and its solutions, without caches or hidden files."""
    ignore = shutil.ignore_patterns("__pycache__", ".*")
    shutil.copytree(Path(__file__).parents[1], target / "grader", ignore=ignore)
    for top in (Path("exercises") / set_id, Path("solutions") / set_id):
        shutil.copytree(course.root / top, target / top, ignore=ignore)
    for name in ("pyproject.toml",):
        if (course.root / name).is_file():
            shutil.copy(course.root / name, target / name)


def _vendor(target: Path) -> None:
    """Copies of the pure-Python packages the stock image lacks (their Python files)."""
    for name in VENDORED:
        try:
            dist = importlib.metadata.distribution(name)
        except importlib.metadata.PackageNotFoundError:
            continue
        for file in dist.files or ():
            parts = file.parts
            if parts[0].endswith((".dist-info", ".egg-info")) or parts[0] == ".." or \
                    file.suffix not in (".py", ".typed") or "__pycache__" in parts:
                continue
            dest = target.joinpath(*parts)
            dest.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy(Path(str(file.locate())), dest)


def _compile(server: Path) -> None:
    """Bytecode of the grader, its vendored packages and the references, for this Python
    (the Dockerfile's): every grading is a fresh container, which would otherwise compile
    them again (a third of a second).  Hash-checked, so a copy with new mtimes still
    validates; another Python ignores them."""
    import compileall
    import py_compile

    for top in ("grader", "vendor", "solutions"):
        if (server / top).is_dir():
            compileall.compile_dir(server / top, quiet=2, workers=1,
                                   invalidation_mode=py_compile.PycInvalidationMode.CHECKED_HASH)


def entrypoint_script(lang: str, required: str) -> str:
    """The container's entrypoint: grade /grade/student, always leave results.json."""
    fallback = json.dumps(prairielearn_not_gradable(
        render(Msg("platform-not-gradable"), lang)), ensure_ascii=False)
    return ENTRY_SCRIPT.format(lang=lang, required=required, fallback=fallback)


ENTRY_SCRIPT = """\
#!/bin/bash
# PrairieLearn runs this in the grading container: run_prairielearn SET [EXERCISE].
# It grades the files in /grade/student and always leaves a valid
# /grade/results/results.json: the grader's own failure is "gradable": false, never a zero.
# ATTN_GRADE_PL_ROOT moves /grade and PYTHON chooses the interpreter (the tests use both).
SET="$1"
EXERCISE="${{2:-}}"
ROOT="${{ATTN_GRADE_PL_ROOT:-/grade}}"
HERE="$ROOT/serverFilesCourse/{server}"
RESULTS="$ROOT/results/results.json"
mkdir -p "$ROOT/results"
rm -f "$RESULTS"
# the reference solutions, hidden checks and the job's data: the grader's (root's) only;
# PrairieLearn also copies serverFilesCourse to the deprecated /grade/shared
chmod -R go-rwx "$HERE/solutions" "$ROOT/shared" "$ROOT/tests" "$ROOT/data" 2>/dev/null
PYTHON="${{PYTHON:-$(command -v python3)}}"
LOG="$(mktemp)"
ARGS=(--upload "$ROOT/student" --course "$HERE" --format prairielearn --output "$RESULTS"
      --lang {lang} --require-isolation {required})
if [ -n "$EXERCISE" ]; then ARGS+=(--exercise "$EXERCISE"); fi
# a level to use instead of the strongest available (info.json's "environment" may set it)
if [ -n "${{ATTN_GRADE_ISOLATION:-}}" ]; then ARGS+=(--isolation "$ATTN_GRADE_ISOLATION"); fi
# the vendored packages come last on the grader's path (ATTN_GRADE_VENDOR): the image's
# own first where it has them (the stock image lacks pytest; an image built from our
# Dockerfile has it, compiled), without a Python start to ask it
cd "$HERE" && ATTN_GRADE_VENDOR="$HERE/vendor" PYTHONPATH="$HERE" \\
  "$PYTHON" -m grader "$SET" "${{ARGS[@]}}" > /dev/null 2> "$LOG"
status=$?
cat "$LOG" >&2    # the job's log, for the course staff
rm -f "$LOG"
if [ "$status" -gt 1 ] || [ ! -s "$RESULTS" ]; then
  cat > "$RESULTS" <<'EOF'
{fallback}
EOF
fi
exit 0
""".replace("{server}", SERVER_DIR)

DOCKERFILE = """\
# The grading image of attn-grade's PrairieLearn questions. Build it once and push it:
#   docker build -t YOU/attn-grade . && docker push YOU/attn-grade
# then export again with --image YOU/attn-grade. It holds the grader's dependencies only:
# the grader, the course and its hidden checks come from serverFilesCourse at each grading,
# so the image may be public. Its Python is the one that exported (the bytecode shipped in
# serverFilesCourse is for it).
FROM python:{python}-slim
RUN apt-get update \\
    && apt-get install -y --no-install-recommends bubblewrap libseccomp2 \\
    && rm -rf /var/lib/apt/lists/*
RUN python -m pip install --no-cache-dir "numpy>=1.24" "sympy>=1.12" "pytest>=7.4" \\
    "click>=8.1" "pyyaml>=6.0" "pyseccomp>=0.1.2"
ENV PYTHON=/usr/local/bin/python3
"""
