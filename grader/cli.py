"""The ``attn-grade`` command: a thin click layer over plain functions.

Exit codes: 0 every check passed, 1 some check failed, 2 usage or course
error (bad YAML, missing files, unknown set).
"""

import errno
import json
import os
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any, NoReturn

import click

from . import __version__
from .course import draws
from .course import loader as spec_loader
from .course.limits import parse_size
from .course.spec import LANGUAGES
from .errors import CourseError, ExitCode
from .files import write_atomic
from .instructor import notebook_cells
from .instructor import uploads as submission_files
from .judge.msg import Msg
from .report import render as report
from .report.progress import Progress
from .run import sandbox

EPILOG = """\b
Exit codes:
  0  every check passed
  1  some check failed
  2  usage error or a problem in the course (bad YAML, missing file)
"""


def default_lang() -> str:
    for var in ("LC_ALL", "LC_MESSAGES", "LANG"):
        value = os.environ.get(var, "")
        if value:
            return "zh" if value.lower().startswith("zh") else "en"
    return "en"


class SetOrCommand(click.Group):
    """``attn-grade SET`` grades a set; other first words are subcommands."""

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        if args and args[0] not in self.commands and not args[0].startswith("-"):
            args = ["grade", *args]
        return super().parse_args(ctx, args)

    def invoke(self, ctx: click.Context) -> Any:
        """A bug in the grader must never look like a failed check (exit 1)."""
        try:
            return super().invoke(ctx)
        except (click.exceptions.ClickException, click.exceptions.Exit, click.Abort,
                SystemExit):
            raise
        except CourseError as exc:   # the one place course errors become exit 2
            _fail(exc)
        except BrokenPipeError:   # `attn-grade list | head`: the reader left; end quietly
            os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
            sys.exit(ExitCode.PASSED)
        except Exception:
            import traceback

            click.echo("internal error in attn-grade (please report it):\n"
                       + traceback.format_exc(), err=True)
            sys.exit(ExitCode.USAGE)

    def format_usage(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        formatter.write_usage("attn-grade", "SET [OPTIONS]  |  attn-grade COMMAND [ARGS]")


class SizeType(click.ParamType):
    name = "SIZE"

    def convert(self, value: Any, param: click.Parameter | None,
                ctx: click.Context | None) -> int:
        try:
            return parse_size(value)
        except ValueError as exc:
            self.fail(str(exc), param, ctx)


def require_isolation_option(
        default: str | None = None) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """The ``--require-isolation LEVEL`` option (parameter ``required``), for any command.

    grade-all and the Gradescope bundle: ``require_isolation_option(sandbox.BATCH_MINIMUM)``
    and pass ``sandbox.require_isolation_args(required)`` to each ``grade`` they run.
    """
    return click.option(
        "--require-isolation", "required", type=click.Choice(sandbox.RANKS), default=default,
        show_default=default is not None,
        help="Refuse (exit 2) to grade with isolation weaker than this; levels, weakest "
             "first: " + " < ".join(sandbox.RANKS) + ". grade-all and Gradescope should "
             f"require {sandbox.BATCH_MINIMUM}.")


COURSE_OPTION = click.option(
    "--course", "course_dir", type=click.Path(exists=True, file_okay=False),
    help="Course folder (default: found from the current folder up).")
STUDENT_OPTION = click.option(
    "--student", envvar="ATTN_GRADE_STUDENT", metavar="ID",
    help="Whose numbers exercises with per-student variants use (default: "
         "$ATTN_GRADE_STUDENT; none: the notes' own numbers).")
LANG_OPTION = click.option(
    "--lang", type=click.Choice(LANGUAGES), default=None,
    help="Language of everything shown (default: from the locale).")


def _course(course_dir):
    return spec_loader.Course(Path(course_dir).resolve()) if course_dir else \
        spec_loader.find_course()


def _fail(exc: Exception) -> NoReturn:
    click.echo(f"error: {exc}", err=True)
    sys.exit(ExitCode.USAGE)


def _write_output(output: str | Path, data: str | bytes, lang: str) -> None:
    """A file the user named (``-o``): its folder made if missing; a failure said in
    ``lang``, not a traceback."""
    path = Path(output)
    try:
        _not_a_folder(path)
        path.parent.mkdir(parents=True, exist_ok=True)
        write_atomic(path, data)
    except OSError as exc:
        _cannot_write(path, exc, lang)


def _not_a_folder(path: Path) -> None:
    """Raise EISDIR for an existing folder named as ``-o``'s file (said in --lang, not in
    click's English; checked before a run, and again before the write)."""
    if path.is_dir():
        raise IsADirectoryError(errno.EISDIR, os.strerror(errno.EISDIR), str(path))


def _output_checked(output: str | None, lang: str) -> None:
    """A folder named as ``-o``'s file refused at once, before any work."""
    if output:
        try:
            _not_a_folder(Path(output))
        except OSError as exc:
            _cannot_write(Path(output), exc, lang)


def _cannot_write(path: Path, exc: OSError, lang: str) -> NoReturn:
    code = errno.errorcode.get(exc.errno or 0, "")
    why = WRITE_FAILURES.get(code, Msg("cannot-write", code=code or type(exc).__name__))
    click.echo(report.render(Msg(why.code, **why.values, path=str(path)), lang), err=True)
    sys.exit(ExitCode.USAGE)


# why a file could not be written, by errno name (else the name is said)
WRITE_FAILURES = {"EACCES": Msg("cannot-write-denied"), "EPERM": Msg("cannot-write-denied"),
                  "EROFS": Msg("cannot-write-read-only"), "ENOSPC": Msg("cannot-write-full"),
                  "EDQUOT": Msg("cannot-write-full"), "EISDIR": Msg("cannot-write-folder"),
                  "ENOTDIR": Msg("cannot-write-not-folder"),
                  "EEXIST": Msg("cannot-write-not-folder")}


def run() -> NoReturn:
    """The program's entry point: ``main``, then an exit that skips the interpreter's
    teardown of its modules (tens of ms with numpy, sympy and pytest loaded).  Every
    command closes its own folders and processes before it returns; output is flushed
    here.  ``main`` itself (tests, a grade-worker) exits as usual."""
    try:
        main()
        code: Any = 0
    except SystemExit as exc:
        code = exc.code
    if code is None:
        code = 0
    elif not isinstance(code, int):   # sys.exit("message"), as Python would show it
        print(code, file=sys.stderr)
        code = 1
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):   # a closed pipe: nothing more can be said there
            pass
    os._exit(code)


@click.group(cls=SetOrCommand, epilog=EPILOG,
             context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(version=__version__, prog_name="attn-grade")
def main() -> None:
    """Auto-graded exercises on transformer self-attention.

    \b
    attn-grade day3                       grade your stubs in exercises/day3/
    attn-grade day3 --submission DIR      grade another folder of the same files
    attn-grade day3 --json                print a Gradescope results.json
    attn-grade list                       sets and exercises with points
    \b
    For instructors:
    attn-grade new SET ID                 start an exercise (YAML, stub, reference,
                                          hidden checks)
    attn-grade dev check [SET]            prove stubs fail, references pass, wrong
                                          versions are caught, doing nothing scores
                                          nothing
    attn-grade release SET -o DIR         student bundle without solutions
    attn-grade grade-all SET DIR -o OUT   grade a class into a CSV gradebook
    attn-grade report OUT                 the class report: scores, misconceptions
    attn-grade export gradescope SET      a Gradescope autograder.zip
    """


@main.command(epilog=EPILOG)
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
@LANG_OPTION
@click.option("--exercise", "exercises", multiple=True, metavar="ID",
              help="Grade only this exercise (repeatable).")
@COURSE_OPTION
@click.option("--isolation", type=click.Choice(sandbox.LEVELS), default=None,
              help="How student code is isolated (default: the strongest available).")
@require_isolation_option()
@click.option("--time-limit", type=float, help="Seconds of wall time per call.")
@click.option("--import-time-limit", type=float,
              help="Seconds of wall time to import a student's module (default 10).")
@click.option("--cpu-limit", type=float, help="Seconds of CPU time per student process.")
@click.option("--memory-limit", type=SizeType(), help="Memory per student process, e.g. 1GiB.")
@click.option("--output-limit", type=SizeType(), help="Printed characters kept per call.")
@click.option("--process-limit", type=click.IntRange(1), help="Processes and threads a run's "
              "children may have at once (enforced when they run as their own uid, and "
              "in bubblewrap).")
@click.option("--tmp-limit", type=SizeType(), help="Scratch space: bubblewrap's /tmp, and the "
              "work folder beyond one answer (default 64MiB).")
@click.option("--hidden-visibility", type=click.Choice(report.GRADESCOPE_VISIBILITY),
              default="hidden", show_default=True,
              help="Gradescope visibility of hidden checks in the JSON.")
@STUDENT_OPTION
def grade(set_id: str, submission: str | None, upload: str | None, as_json: bool,
          output: str | None, lang: str | None, exercises: tuple[str, ...],
          course_dir: str | None, isolation: str | None, required: str | None,
          time_limit: float | None, import_time_limit: float | None, cpu_limit: float | None,
          memory_limit: int | None, output_limit: int | None, process_limit: int | None,
          tmp_limit: int | None, hidden_visibility: str, student: str | None) -> None:
    """Grade the exercise set SET."""
    from .grading import grade_set, start_run

    if submission and upload:
        raise click.UsageError("give --submission or --upload, not both")
    notebook = bool(submission and Path(submission).is_file())
    if notebook and not str(submission).lower().endswith(".ipynb"):
        raise click.UsageError("--submission is a folder or a notebook (.ipynb), not "
                               f"{submission!r}")
    lang = lang or default_lang()
    _output_checked(output, lang)
    run = None
    course = _course(course_dir)
    level = isolation or sandbox.strongest_available()
    limits = dict(time=time_limit, import_time=import_time_limit, cpu=cpu_limit,
                  memory=memory_limit, output=output_limit, processes=process_limit,
                  tmp=tmp_limit)
    warm = _warm()
    early = None
    try:
        if not upload and not notebook and \
                (course.exercises_dir / set_id / "set.yaml").is_file():
            # a folder of stub files: its sandbox starts now, while the set loads
            early = start_run(course, set_id, submission or course.exercises_dir / set_id,
                              level, required, limits, set(exercises) or None,
                              warm.zygote if warm else None)
            if warm:   # what a worker keeps between students
                early.keep_from(warm)
            warm = early
        exercise_set = spec_loader.load_set(course, set_id, only=exercises or None)
        selected = list(exercise_set.exercises)
        with tempfile.TemporaryDirectory(prefix="attn-grade-upload-") as tmp:
            folder, problem = _submission_folder(exercise_set, selected, submission, upload,
                                                 tmp, lang)
            if problem is None:
                run = grade_set(draws.drawn(exercise_set, folder), folder, level, limits,
                                set(exercises) or None, required, student, warm=warm)
    finally:
        if early is not None:
            early.close()
    mine = Progress(upload or (Path(submission).parent if submission and notebook
                               else submission)
                    or exercise_set.exercises_dir)
    if run is None:
        document = report.not_graded(exercise_set.id, selected, *problem)
    else:
        document = report.gradescope(run, lang, hidden_visibility, mine.hints_used(set_id))
        if not as_json and not upload:   # a student's own run: remember it
            mine.graded(run)
            mine.save()
    if output:
        _write_output(output, json.dumps(document, ensure_ascii=False, indent=2), lang)
    if as_json:   # for people, indented; for a worker's parent, compact (C-encoded)
        click.echo(json.dumps(document, ensure_ascii=False, indent=None if _warm() else 2))
    else:
        click.echo(report.terminal(run, lang, color=sys.stdout.isatty(),
                                   hints_used=mine.hints_used(set_id)) if run
                   else document["output"])
    sys.exit(ExitCode.PASSED if run and run.all_passed else ExitCode.FAILED)


def _warm():
    """The reference answers a grade-worker keeps between students (see batch)."""
    from .grading import Warm

    obj = click.get_current_context().find_root().obj
    return obj if isinstance(obj, Warm) else None


@main.command("grade-worker", hidden=True)
def grade_worker() -> None:
    """grade-all's worker: one ``attn-grade SET ... --json`` command line (a JSON
    list) per input line, run here; one JSON answer line each (code, document,
    stderr).  Whatever else writes to the real stdout goes to stderr.
    """
    from .grading import Warm

    answers = os.fdopen(os.dup(1), "w", encoding="utf-8")
    os.dup2(2, 1)
    warm = Warm(zygote=_zygote(), replays=True)
    try:
        _serve_worker(warm, answers)
    finally:
        if warm.zygote is not None:
            warm.zygote.close()


def serve_as_worker() -> None:
    """``attn-grade grade-worker`` in this process: what a worker forked from grade-all
    runs (instructor.forked_worker)."""
    main.main(args=["grade-worker"], prog_name="attn-grade")


def _zygote():
    """The zygote grade-all shares among its workers (a descriptor it passed), or one
    of this worker's own, started before any course is loaded so that its imports
    overlap the first student's setup; None where there can be none."""
    from .run.template import Zygote

    if not Zygote.possible():
        return None
    shared = os.environ.pop(Zygote.SHARED, "")
    if shared.isdigit():
        return Zygote.attached(int(shared))
    return Zygote()


def _serve_worker(warm, answers):
    """The worker's loop: each line a command, run with the worker's Warm."""
    import contextlib
    import io

    for line in sys.stdin:
        out, err = io.StringIO(), io.StringIO()
        code = 0
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            try:
                main.main(args=json.loads(line), prog_name="attn-grade", obj=warm)
            except SystemExit as exc:
                code = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 2)
        try:
            document = json.loads(out.getvalue()) if out.getvalue().strip() else None
        except ValueError:
            document = None
        answers.write(json.dumps({"code": code, "document": document,
                                  "stderr": err.getvalue()}) + "\n")
        answers.flush()


def _submission_folder(exercise_set, selected, submission, upload, tmp, lang="en"):
    """(folder to grade, None), or (None, (status, message)) for an upload not to grade.

    An upload's stub files are copied into ``tmp`` (see ``submission_files``).
    """
    notebook = submission is not None and Path(submission).is_file()
    if not upload and not notebook:
        return (Path(submission) if submission else exercise_set.exercises_dir), None
    os.chmod(tmp, 0o711)     # a child running as 'nobody' must reach the copy
    folder = Path(tmp) / "submission"
    # a notebook's cells become every stub file of the set (a multihead may import attention)
    names = submission_files.stub_names(exercise_set.exercises if notebook else selected)
    try:
        found = notebook_cells.collect(upload or submission, names, folder,
                                       exercise_set.exercises_dir)
    except notebook_cells.NotebookError as exc:
        if exc.cell is not None:   # said as a mistake in the student's own code
            return None, ("error", exc.said(lang))
        return None, ("error", _not_graded(exc.said(lang), lang))
    except submission_files.SubmissionError as exc:
        return None, ("error", _not_graded(exc.said(lang), lang))
    if not found:
        return None, ("empty", _not_graded(
            report.render(Msg("upload-empty", files=", ".join(names)), lang), lang))
    return folder, None


def _not_graded(reason: str, lang: str) -> str:
    return report.render(Msg("not-graded", reason=reason), lang)


@main.command("list")
@COURSE_OPTION
@LANG_OPTION
def list_sets(course_dir: str | None, lang: str | None) -> None:
    """List the exercise sets and their exercises with points."""
    lang = lang or default_lang()
    course = _course(course_dir)
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


def _student_set(course_dir, set_id, exercise_id=None):
    """(course, set, exercise or None) for the student commands; errors are for people."""
    course = _course(course_dir)
    exercise_set = spec_loader.load_set(course, set_id)
    if exercise_id is not None:
        spec_loader.check_ids(set_id, [e.id for e in exercise_set.exercises], [exercise_id])
        return course, exercise_set, exercise_set.exercise(exercise_id)
    return course, exercise_set, None


SUBMISSION_OPTION = click.option(
    "--submission", type=click.Path(exists=True, file_okay=False),
    help="The folder you work in (default: exercises/SET/); your progress is kept there.")


def student_command(name: str, exercise: str | None = None) -> Callable[[Any], Any]:
    """A command of the student's loop: SET, then ID when ``exercise`` is "required" or
    "optional", and the options every such command takes."""
    def wrap(function: Any) -> Any:
        function = STUDENT_OPTION(LANG_OPTION(COURSE_OPTION(SUBMISSION_OPTION(function))))
        if exercise:
            function = click.argument("exercise_id", required=exercise == "required",
                                      metavar="ID" if exercise == "required" else "[ID]"
                                      )(function)
        return main.command(name)(click.argument("set_id", metavar="SET")(function))
    return wrap


@student_command("show", "optional")
def show(set_id: str, exercise_id: str | None, submission: str | None, course_dir: str | None,
         lang: str | None, student: str | None) -> None:
    """Show an exercise (or the whole set) as you should read it before coding."""
    from .report.student_view import exercise_text

    lang = lang or default_lang()
    _, exercise_set, one = _student_set(course_dir, set_id, exercise_id)
    used = Progress(submission or exercise_set.exercises_dir).hints_used(set_id)
    for exercise in [one] if one else exercise_set.exercises:
        click.echo("\n".join(exercise_text(exercise.for_student(student), lang,
                                           used.get(exercise.id, 0))))
        click.echo("")


@student_command("hint", "required")
def hint(set_id: str, exercise_id: str, submission: str | None, course_dir: str | None,
         lang: str | None, student: str | None) -> None:
    """Show the next hint of exercise ID (and the ones shown before). Hints go from a
    nudge to a near-answer; each one you ask for is recorded."""
    from .report.student_view import hint_lines

    lang = lang or default_lang()
    _, exercise_set, exercise = _student_set(course_dir, set_id, exercise_id)
    mine = Progress(submission or exercise_set.exercises_dir)
    shown = mine.record(set_id, exercise_id).hints
    if shown < len(exercise.hints):
        shown = mine.hint_shown(set_id, exercise_id)
        mine.save()
    click.echo("\n".join(hint_lines(exercise, shown, lang)))


@student_command("quiz", "optional")
def quiz(set_id: str, exercise_id: str | None, submission: str | None, course_dir: str | None,
         lang: str | None, student: str | None) -> None:
    """Answer SET's typed-in questions here: choices by number, True/False, numbers and
    sizes. Each answer is checked at once and saved into your stub file."""
    from .report.quiz import (
        feedback_lines,
        judge_answer,
        parse_answer,
        prompt_lines,
        questions,
        record,
    )

    lang = lang or default_lang()
    _, exercise_set, _ = _student_set(course_dir, set_id, exercise_id)
    folder = Path(submission or exercise_set.exercises_dir)
    asked = questions(exercise_set, lang, {exercise_id} if exercise_id else None, student)
    right = 0
    for number, question in enumerate(asked, 1):
        click.echo("\n".join(prompt_lines(question, number, len(asked), lang)))
        answer = _ask(question, lang, parse_answer)
        result = judge_answer(question, answer)
        right += result.passed
        click.echo("\n".join(f"  {line}" for line in feedback_lines(result, lang)) + "\n")
        record(folder / question.exercise.file, question.check.function, answer)
    files = ", ".join(sorted({q.exercise.file for q in asked}))
    click.echo(report.render(Msg("quiz-done", right=right, total=len(asked), files=files),
                             lang))


def _ask(question: Any, lang: str, parse: Callable[[Any, str], Any]) -> Any:
    """Prompt until the typed text is an answer of the right form."""
    while True:
        text = click.prompt(report.render(Msg("quiz-answer"), lang), prompt_suffix=" ")
        try:
            return parse(question, text)
        except ValueError as exc:
            click.echo(report.render(Msg("quiz-invalid", expect=str(exc)), lang))


@student_command("watch")
@click.option("--isolation", type=click.Choice(sandbox.LEVELS), default=None,
              help="How student code is isolated (default: the strongest available).")
def watch(set_id: str, submission: str | None, course_dir: str | None, lang: str | None,
          student: str | None, isolation: str | None) -> None:
    """Re-grade an exercise each time you save its file; Ctrl-C to stop."""
    from .watch import watch as watch_loop

    lang = lang or default_lang()
    _, exercise_set, _ = _student_set(course_dir, set_id)
    watch_loop(exercise_set, Path(submission or exercise_set.exercises_dir),
               isolation or sandbox.strongest_available(), lang, click.echo, student,
               clear=sys.stdout.isatty())


@student_command("progress")
def progress(set_id: str, submission: str | None, course_dir: str | None,
             lang: str | None, student: str | None) -> None:
    """Your progress in SET: best score, attempts and hints per exercise, and what's next."""
    from .report.student_view import progress_lines

    lang = lang or default_lang()
    _, exercise_set, _ = _student_set(course_dir, set_id)
    mine = Progress(submission or exercise_set.exercises_dir)
    click.echo("\n".join(progress_lines(mine, exercise_set, lang)))


@main.group()
def dev() -> None:
    """Tools for instructors who write exercises."""


@dev.command("check")
@click.argument("set_ids", metavar="[SET]...", nargs=-1)
@COURSE_OPTION
@click.option("--isolation", type=click.Choice(sandbox.LEVELS), default=None,
              help="How student code is isolated (default: the strongest available).")
@click.option("--seeds", type=click.IntRange(draws.DRAWS, 20), default=draws.DRAWS,
              show_default=True,
              help="Draws of the hidden checks' inputs the reference solutions must pass "
                   f"on (at least the {draws.DRAWS} a submission can be graded on).")
@click.option("--exercise", "exercises", multiple=True, metavar="ID",
              help="Grade only this exercise (repeatable); files are still all checked.")
def dev_check(set_ids: tuple[str, ...], course_dir: str | None, isolation: str | None,
              seeds: int, exercises: tuple[str, ...]) -> None:
    """Prove a course's checks: valid YAML, no stray files, every stub fails,
    every reference passes on every draw of the hidden inputs, every registered wrong version is
    caught and tagged, stand-ins that do nothing (zeros, a constant, the first
    argument, a table of the visible answers) score nothing. Exits 1 with a list
    of what to fix."""
    from .instructor.devcheck import check_course

    course = _course(course_dir)
    set_ids = set_ids or course.set_ids()
    findings = check_course(course, set_ids, isolation or sandbox.strongest_available(),
                            tuple(range(seeds)), set(exercises) or None)
    for finding in findings:
        click.echo(str(finding))
    problems = [f for f in findings if f.problem]
    sets = ", ".join(set_ids)
    if problems:
        click.echo(f"dev check: {len(problems)} problem(s) to fix in {sets}")
        sys.exit(ExitCode.FAILED)
    click.echo(f"dev check: {sets} OK (stubs fail, references pass on {seeds} draws of the "
               "hidden inputs, every wrong version is caught, doing nothing scores nothing)")


@main.command("new")
@click.argument("set_id", metavar="SET")
@click.argument("exercise_id", metavar="EXERCISE_ID")
@COURSE_OPTION
def new(set_id: str, exercise_id: str, course_dir: str | None) -> None:
    """Start a new exercise: YAML skeleton, stub and reference solution."""
    from .instructor.scaffold import new_exercise

    for path in new_exercise(_course(course_dir), set_id, exercise_id):
        click.echo(f"wrote {path}")
    click.echo(f"next: fill in the TODOs, then run: attn-grade dev check {set_id} "
               f"--exercise {exercise_id}")


@main.command("schema")
def schema() -> None:
    """Print the JSON Schema of an exercise YAML file (for editor completion)."""
    from .course.formats import json_schema

    click.echo(json.dumps(json_schema(), ensure_ascii=False, indent=2))


@main.command("grade-all")
@click.argument("set_id", metavar="SET")
@click.argument("submissions", type=click.Path(exists=True, file_okay=False))
@click.option("--output", "-o", "out_dir", type=click.Path(file_okay=False), required=True,
              help="Folder for gradebook.csv and results/STUDENT.json.")
@click.option("--jobs", "-j", type=click.IntRange(1), default=os.cpu_count() or 1,
              show_default=True, help="Worker processes, each grading one submission at a "
                                       "time (each student in a sandbox of their own); "
                                       "with no more workers than CPUs, each on CPUs of its "
                                       "own.")
@click.option("--force", is_flag=True,
              help="Grade every student again, even those whose files did not change.")
@click.option("--exercise", "exercises", multiple=True, metavar="ID",
              help="Grade only this exercise (repeatable).")
@COURSE_OPTION
@LANG_OPTION
@click.option("--isolation", type=click.Choice(sandbox.LEVELS), default=None,
              help="How student code is isolated (default: the strongest available).")
@require_isolation_option(sandbox.BATCH_MINIMUM)
@click.option("--time-limit", type=float, help="Seconds of wall time per call.")
@click.option("--import-time-limit", type=float,
              help="Seconds of wall time to import a student's module (default 10).")
@click.option("--cpu-limit", type=float, help="Seconds of CPU time per student process.")
@click.option("--memory-limit", type=SizeType(), help="Memory per student process.")
@click.option("--output-limit", type=SizeType(), help="Printed characters kept per call.")
@click.option("--process-limit", type=click.IntRange(1),
              help="Processes and threads one student's run may have at once.")
@click.option("--tmp-limit", type=SizeType(), help="Scratch space per student process.")
@click.option("--report", "with_report", is_flag=True,
              help="Also write the class report OUT/report.html (needs the [report] extra).")
def grade_all_command(set_id: str, submissions: str, out_dir: str, jobs: int, force: bool,
                      exercises: tuple[str, ...], course_dir: str | None, lang: str | None,
                      isolation: str | None, required: str | None,
                      time_limit: float | None, import_time_limit: float | None,
                      cpu_limit: float | None, memory_limit: int | None,
                      output_limit: int | None, process_limit: int | None,
                      tmp_limit: int | None, with_report: bool) -> None:
    """Grade a class: one sub-folder or .zip per student in SUBMISSIONS.

    Writes results/STUDENT.json (Gradescope format) and gradebook.csv (student,
    total, per-exercise scores). A re-run grades only students whose stub files
    changed.
    """
    from .instructor.forked_worker import current_folder_off_path
    from .instructor.gradebook import grade_all

    click.get_current_context().with_resource(current_folder_off_path())
    lang = lang or default_lang()
    if with_report:
        _require_matplotlib(lang)     # before grading, not after
    extra: list[object] = ["--lang", lang]
    extra += ["--isolation", isolation] if isolation else []
    extra += sandbox.require_isolation_args(required) if required else []
    for flag, value in (("--time-limit", time_limit), ("--import-time-limit", import_time_limit),
                        ("--cpu-limit", cpu_limit), ("--memory-limit", memory_limit),
                        ("--output-limit", output_limit), ("--process-limit", process_limit),
                        ("--tmp-limit", tmp_limit)):
        extra += [flag, value] if value is not None else []
    for ex_id in exercises:
        extra += ["--exercise", ex_id]
    course = _course(course_dir)
    exercise_set = spec_loader.load_set(course, set_id)
    spec_loader.check_ids(set_id, [e.id for e in exercise_set.exercises], exercises)
    with _progress(submissions) as tick:
        rows = grade_all(course, exercise_set, submissions, out_dir, jobs, extra, force,
                         tick, set(exercises), serve=serve_as_worker, lang=lang)
    problems = {status: sum(1 for r in rows if r["status"] == status)
                for status in ("error", "empty")}
    click.echo(report.render(Msg("class-graded", count=len(rows),
                                 path=str(Path(out_dir) / "gradebook.csv")), lang)
               + (report.render(Msg("class-graded-errors", count=problems["error"]), lang)
                  if problems["error"] else "")
               + (report.render(Msg("class-graded-empty", count=problems["empty"]), lang)
                  if problems["empty"] else ""))
    if with_report:
        _class_report(Path(out_dir), Path(out_dir) / "report.html", lang, "html", course,
                      exercise_set)


def _require_matplotlib(lang):
    from .instructor.class_page import INSTALL_COMMAND, matplotlib_available

    if not matplotlib_available():
        click.echo(report.render(Msg("class-needs-matplotlib", command=INSTALL_COMMAND), lang),
                   err=True)
        sys.exit(ExitCode.USAGE)


def _class_report(folder, output, lang, fmt, course, exercise_set=None):
    """Write the class report of the results in ``folder`` to ``output``."""
    from .instructor import class_report

    if fmt == "html":
        _require_matplotlib(lang)
    entries, rows = class_report.read_folder(folder)
    if not entries:
        raise CourseError(report.render(Msg("class-no-results", folder=folder), lang))
    if exercise_set is None and course is not None:
        set_id = class_report.set_id(entries)
        try:
            exercise_set = spec_loader.load_set(course, set_id) \
                if set_id in course.set_ids() else None
        except CourseError:
            exercise_set = None     # the course is not the one graded: tags alone
    data = class_report.aggregate(
        entries, rows, class_report.set_messages(exercise_set) if exercise_set else {},
        {lang: exercise_set.title.get(lang) for lang in LANGUAGES} if exercise_set else None)
    if fmt == "json":
        text = json.dumps(data, ensure_ascii=False, indent=2)
    else:
        from .instructor.class_page import href_to, page

        text = page(data, lang, href_to(folder.resolve(), output.resolve()))
    _write_output(output, text, lang)
    click.echo(report.render(Msg("class-wrote", path=output), lang))


@main.command("report")
@click.argument("folder", metavar="OUT", type=click.Path(exists=True, file_okay=False))
@click.option("--output", "-o", type=click.Path(), metavar="FILE",
              help="Where to write the page (default: OUT/report.html, or OUT/report.json).")
@click.option("--format", "fmt", type=click.Choice(["html", "json"]), default="html",
              show_default=True, help="A page with charts, or the same aggregates as data.")
@COURSE_OPTION
@LANG_OPTION
def class_report_command(folder: str, output: str | None, fmt: str, course_dir: str | None,
                         lang: str | None) -> None:
    """The class report of a grade-all output folder OUT (or any folder of Gradescope
    results JSON files): scores, misconceptions, failed checks, recurring errors and
    students who need help, as one self-contained HTML page."""
    lang = lang or default_lang()
    _output_checked(output, lang)
    try:
        course = _course(course_dir)
    except CourseError:
        if course_dir:
            raise
        course = None       # no course here: misconceptions are shown by tag
    root = Path(folder)
    _class_report(root, Path(output) if output else root / f"report.{fmt}", lang, fmt, course)


def _progress(submissions):
    """A progress bar on a terminal; silent otherwise."""
    import contextlib

    from .instructor.gradebook import find_submissions

    if not sys.stderr.isatty():
        return contextlib.nullcontext(None)
    total = len(find_submissions(submissions))

    @contextlib.contextmanager
    def bar():
        with click.progressbar(length=total, label="grading", file=sys.stderr) as b:
            yield lambda student: b.update(1)

    return bar()


@main.group()
def export() -> None:
    """Package a set for another grading platform."""


@export.command("gradescope")
@click.argument("set_id", metavar="SET")
@click.option("--output", "-o", type=click.Path(), metavar="FILE", default="autograder.zip",
              show_default=True, help="Where to write the zip.")
@COURSE_OPTION
@click.option("--lang", type=click.Choice(LANGUAGES), default="en", show_default=True,
              help="Feedback language on Gradescope.")
@click.option("--hidden-visibility", type=click.Choice(report.GRADESCOPE_VISIBILITY),
              default="after_published", show_default=True,
              help="When students see hidden checks on Gradescope.")
@require_isolation_option(sandbox.BATCH_MINIMUM)
def export_gradescope(set_id: str, output: str, course_dir: str | None, lang: str,
                      hidden_visibility: str, required: str) -> None:
    """Write a Gradescope autograder.zip (setup.sh, run_autograder, the course)."""
    from .instructor.export import gradescope_zip

    _output_checked(output, lang)
    course = _course(course_dir)
    spec_loader.load_set(course, set_id)
    data = gradescope_zip(course, set_id, lang, hidden_visibility, required)
    _write_output(output, data, lang)
    click.echo(report.render(Msg("export-wrote", path=str(output), size=len(data) // 1024,
                                 set=set_id), lang))


@main.command("notebook")
@click.argument("set_id", metavar="SET")
@click.option("--output", "-o", type=click.Path(dir_okay=False), required=True,
              help="The notebook to write (FILE.ipynb).")
@LANG_OPTION
@COURSE_OPTION
def notebook_command(set_id: str, output: str, lang: str | None,
                     course_dir: str | None) -> None:
    """Write SET's student notebook: each exercise's prompt, its stub functions to fill
    in, and a cell that grades them (needs the notebook extra)."""
    from . import notebook

    lang = lang or default_lang()
    if not notebook.nbformat_available():
        click.echo(report.render(Msg("notebook-needs-extra", command=notebook.INSTALL_COMMAND),
                                 lang), err=True)
        sys.exit(ExitCode.USAGE)
    exercise_set = spec_loader.load_set(_course(course_dir), set_id)
    path = notebook.write(exercise_set, output, lang)
    click.echo(report.render(Msg("notebook-wrote", path=str(path)), lang))


@main.command("release")
@click.argument("set_id", metavar="SET")
@click.option("--output", "-o", "out_dir", type=click.Path(file_okay=False), required=True,
              help="An empty or new folder for the student bundle.")
@COURSE_OPTION
@click.option("--isolation", type=click.Choice(sandbox.LEVELS), default=None,
              help="Isolation for grading the stubs and references before writing.")
def release(set_id: str, out_dir: str, course_dir: str | None, isolation: str | None) -> None:
    """Write the student bundle of SET: grader, stubs, visible checks; no solutions.

    Refuses when a stub passes a check (it would ship an answer)."""
    from .instructor.release import make_release

    course = _course(course_dir)
    make_release(course, spec_loader.load_set(course, set_id), out_dir,
                 isolation or sandbox.strongest_available())
    click.echo(f"wrote the {set_id} release to {out_dir}: students run "
               f"'python3 -m pip install -e . && attn-grade {set_id}' there")
