"""The student's commands: grade (``attn-grade SET``), list, show, hint, quiz, watch,
progress."""

import contextlib
import json
import sys
import tempfile
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import click

from .. import grading
from ..course import draws
from ..course import loader as spec_loader
from ..errors import ExitCode
from ..instructor.submission import submission_folder
from ..judge.msg import Msg
from ..report import render as report
from ..report.platforms import FORMATS, document_text
from ..report.progress import Progress
from ..run import sandbox, zygote
from .common import (
    EPILOG,
    caller_warm,
    colour,
    confirm,
    load_course,
    main,
    output_checked,
    say,
    write_output,
)
from .options import (
    course_option,
    exercise_option,
    hidden_visibility_option,
    isolation_option,
    lang_option,
    limit_options,
    require_isolation_option,
    student_loop_options,
    student_option,
)
from .usage import SaidUsageError, StudentCommand


@main.command(cls=StudentCommand, epilog=EPILOG)
@click.argument("set_id", metavar="SET")
@click.option("--submission", type=click.Path(exists=True),
              help="Folder with your versions of the stub files "
                   "(default: exercises/SET/, edited in place), or your notebook (.ipynb).")
@click.option("--upload", type=click.Path(exists=True, file_okay=False),
              help="A folder as a student uploaded it, in any layout (stub files, their "
                   "work folder, a whole release bundle, or one notebook): each stub file is "
                   "found by name and graded from a private copy.")
@click.option("--json", "as_json", is_flag=True,
              help="Print a Gradescope results.json document (and nothing else).")
@click.option("--output", "-o", type=click.Path(), metavar="FILE",
              help="Also write the JSON report to this file.")
@click.option("--format", "fmt", type=click.Choice(FORMATS), default="gradescope",
              show_default=True,
              help="The document of --json and --output: Gradescope's results.json, "
                   "PrairieLearn's results.json, a GitHub Classroom step's result "
                   "(base64), or the notebook's (what ag.check shows).")
@lang_option()
@exercise_option()
@course_option
@isolation_option()
@require_isolation_option()
@limit_options
@hidden_visibility_option("hidden", "Gradescope visibility of hidden checks in the JSON.")
@student_option
def grade(set_id: str, submission: str | None, upload: str | None, as_json: bool,
          output: str | None, fmt: str, lang: str, exercises: tuple[str, ...],
          course_dir: str | None, isolation: str | None, required: str | None,
          limits: dict[str, Any], hidden_visibility: str, student: str | None) -> None:
    """Grade the exercise set SET."""
    notebook = _notebook(submission, upload)
    output_checked(output, lang)
    course = load_course(course_dir)
    level = isolation or sandbox.strongest_available()
    only = set(exercises) or None
    # a folder of stub files: its sandbox starts now, while the set loads
    stubs = None if upload or notebook else (submission or course.exercises_dir / set_id)
    run = None
    with _early_zygote() as early, \
            grading.warmed(course, set_id, stubs, level, required, limits, only,
                           caller_warm() or early) as warm, \
            tempfile.TemporaryDirectory(prefix="attn-grade-upload-") as tmp:
        exercise_set = spec_loader.load_set(course, set_id, only=exercises or None)
        selected = list(exercise_set.exercises)
        folder, problem = submission_folder(exercise_set, selected, submission, upload, tmp,
                                            lang)
        if folder is not None:
            run = grading.grade_set(draws.drawn(exercise_set, folder), folder, level, limits,
                                    only, required, student, warm=warm)
    mine = Progress(upload or (Path(submission).parent if submission and notebook
                               else submission)
                    or exercise_set.exercises_dir)
    if run is None:
        assert problem is not None
        document = report.not_graded(exercise_set.id, selected, *problem)
    else:
        document = report.gradescope(run, lang, hidden_visibility, mine.hints_used(set_id))
        # a student's own run (in a terminal, or a notebook's check): remember it
        if (not as_json or fmt == "notebook") and not upload:
            mine.graded(run)
            mine.save()
    if output:
        write_output(output, document_text(fmt, run, lang, document, problem, selected), lang)
    if as_json and fmt != "gradescope":
        click.echo(document_text(fmt, run, lang, document, problem, selected))
    elif as_json:   # for people, indented; for a worker's parent, compact (C-encoded)
        click.echo(json.dumps(document, ensure_ascii=False, indent=None if caller_warm() else 2))
    else:
        click.echo(report.terminal(run, lang, color=colour(),
                                   hints_used=mine.hints_used(set_id)) if run
                   else document["output"])
    sys.exit(ExitCode.PASSED if run and run.all_passed else ExitCode.FAILED)


def _notebook(submission: str | None, upload: str | None) -> bool:
    """Whether ``--submission`` names a notebook; a usage error for what it cannot be."""
    if submission and upload:
        raise SaidUsageError(Msg("usage-submission-or-upload", submission="--submission",
                                 upload="--upload"))
    notebook = bool(submission and Path(submission).is_file())
    if notebook and not str(submission).lower().endswith(".ipynb"):
        raise SaidUsageError(Msg("usage-submission-kind", submission="--submission",
                                 ext=".ipynb", path=repr(submission)))
    return notebook


@contextlib.contextmanager
def _early_zygote() -> Iterator[grading.Warm | None]:
    """A Warm with the zygote grader.entry started before the imports (root with
    bubblewrap): the run's templates fork from it, numpy and sympy already imported
    on the other core meanwhile (a cold grading's last exercises waited for sympy's)."""
    if not zygote.started_early():
        yield None
        return
    shared = zygote.Zygote()
    try:
        yield grading.Warm(zygote=shared)
    finally:
        shared.close()


@main.command("list", cls=StudentCommand)
@course_option
@lang_option()
def list_sets(course_dir: str | None, lang: str) -> None:
    """List the exercise sets and their exercises with points."""
    course = load_course(course_dir)
    for set_id in course.set_ids():
        exercise_set = spec_loader.load_set(course, set_id)
        total = sum(e.points for e in exercise_set.exercises)
        points = report.render(Msg("points-word"), lang)
        click.echo(f"{set_id}  {exercise_set.title.get(lang)}  ({total:g} {points})")
        mine = Progress(exercise_set.exercises_dir)
        for ex in exercise_set.exercises:
            done = "✓" if mine.record(set_id, ex.id).solved else " "
            click.echo(f"{done} {ex.id:<24} {ex.file:<24} {ex.points:>5g}  "
                       f"{ex.title.get(lang)}")


def student_set(course_dir, set_id, exercise_id=None):
    """(course, set, exercise or None) for the student commands; errors are for people."""
    course = load_course(course_dir)
    exercise_set = spec_loader.load_set(course, set_id)
    if exercise_id is not None:
        spec_loader.check_ids(set_id, [e.id for e in exercise_set.exercises], [exercise_id])
        return course, exercise_set, exercise_set.exercise(exercise_id)
    return course, exercise_set, None


def student_command(name: str, exercise: str | None = None,
                    set_id: str = "required") -> Callable[[Any], Any]:
    """A command of the student's loop: SET (unless ``set_id`` is "optional"), then ID when
    ``exercise`` is "required" or "optional", and the options every such command takes."""
    def wrap(function: Any) -> Any:
        function = student_loop_options(function)
        if exercise:
            function = click.argument("exercise_id", required=exercise == "required",
                                      metavar="ID" if exercise == "required" else "[ID]"
                                      )(function)
        return main.command(name, cls=StudentCommand)(click.argument(
            "set_id", required=set_id == "required",
            metavar="SET" if set_id == "required" else "[SET]")(function))
    return wrap


@student_command("show", "optional")
def show(set_id: str, exercise_id: str | None, submission: str | None, course_dir: str | None,
         lang: str, student: str | None) -> None:
    """Show an exercise (or the whole set) as you should read it before coding."""
    from ..report.student_view import exercise_text

    _, exercise_set, one = student_set(course_dir, set_id, exercise_id)
    used = Progress(submission or exercise_set.exercises_dir).hints_used(set_id)
    for exercise in [one] if one else exercise_set.exercises:
        click.echo("\n".join(exercise_text(exercise.for_student(student), lang,
                                           used.get(exercise.id, 0))))
        click.echo("")


@student_command("hint", "required")
@click.option("--yes", "-y", is_flag=True,
              help="Reveal the next hint without asking (as when input is not a terminal).")
def hint(set_id: str, exercise_id: str, submission: str | None, course_dir: str | None,
         lang: str, student: str | None, yes: bool) -> None:
    """Show the hints of exercise ID you revealed before, then reveal the next one (in a
    terminal, after asking: each hint you reveal is recorded in your progress)."""
    from ..report.student_view import hint_lines

    _, exercise_set, exercise = student_set(course_dir, set_id, exercise_id)
    mine = Progress(submission or exercise_set.exercises_dir)
    before, total = mine.record(set_id, exercise_id).hints, len(exercise.hints)
    start = 0
    if before < total:
        if before:
            click.echo("\n".join(hint_lines(exercise, before, lang)))
        if not (yes or not sys.stdin.isatty() or confirm(
                Msg("hint-ask", n=before + 1, total=total, left=total - before), lang)):
            say(Msg("hint-kept", shown=before, left=total - before), lang)
            return
        mine.hint_shown(set_id, exercise_id)
        mine.save()
        start = before
    click.echo("\n".join(hint_lines(exercise, before + (before < total), lang, start)))


@student_command("watch")
@isolation_option()
def watch(set_id: str, submission: str | None, course_dir: str | None, lang: str,
          student: str | None, isolation: str | None) -> None:
    """Re-grade an exercise each time you save its file; Ctrl-C to stop."""
    from ..watch import watch as watch_loop

    _, exercise_set, _ = student_set(course_dir, set_id)
    watch_loop(exercise_set, Path(submission or exercise_set.exercises_dir),
               isolation or sandbox.strongest_available(), lang, click.echo, student,
               clear=sys.stdout.isatty())


@student_command("progress", set_id="optional")
def progress(set_id: str | None, submission: str | None, course_dir: str | None,
             lang: str, student: str | None) -> None:
    """Your progress in SET: best score, attempts and hints per exercise, the set's total,
    and what's next; without SET, the total of every set."""
    from ..report.student_view import progress_lines, set_total

    if set_id is None:
        course = load_course(course_dir)
        for each in course.set_ids():
            exercise_set = spec_loader.load_set(course, each)
            mine = Progress(submission or exercise_set.exercises_dir)
            click.echo(set_total(mine, exercise_set, lang))
        return
    _, exercise_set, _ = student_set(course_dir, set_id)
    mine = Progress(submission or exercise_set.exercises_dir)
    click.echo("\n".join(progress_lines(mine, exercise_set, lang)))
