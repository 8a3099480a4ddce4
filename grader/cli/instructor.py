"""The instructor's commands: dev check, new, schema, grade-all, report, export,
notebook, release.  Every sentence they print comes from the message catalogue."""

import json
import os
import shlex
import sys
from pathlib import Path

import click

from ..course import draws
from ..course import loader as spec_loader
from ..errors import CourseError, ExitCode, Refusal
from ..judge.msg import Msg
from ..report import render as report
from ..run import sandbox
from .common import caller_zygote, load_course, main, output_checked, say, write_output
from .options import (
    course_option,
    exercise_option,
    hidden_visibility_option,
    isolation_option,
    lang_option,
    limit_options,
    require_isolation_option,
)
from .worker import serve_as_worker


@main.group()
def dev() -> None:
    """Tools for instructors who write exercises."""


@dev.command("check")
@click.argument("set_ids", metavar="[SET]...", nargs=-1)
@course_option
@isolation_option()
@click.option("--seeds", type=click.IntRange(draws.DRAWS, 20), default=draws.DRAWS,
              show_default=True,
              help="Draws of the hidden checks' inputs the reference solutions must pass "
                   f"on (at least the {draws.DRAWS} a submission can be graded on).")
@exercise_option("Grade only this exercise (repeatable); files are still all checked.")
@lang_option()
def dev_check(set_ids: tuple[str, ...], course_dir: str | None, isolation: str | None,
              seeds: int, exercises: tuple[str, ...], lang: str) -> None:
    """Prove a course's checks: valid YAML, no stray files, every stub fails,
    every reference passes on every draw of the hidden inputs, every registered wrong version is
    caught and tagged, stand-ins that do nothing (zeros, a constant, the first
    argument, a table of the visible answers) score nothing. Exits 1 with a list
    of what to fix."""
    from ..instructor.devcheck import check_course

    course = load_course(course_dir)
    set_ids = set_ids or tuple(course.set_ids())
    findings = check_course(course, set_ids, isolation or sandbox.strongest_available(),
                            tuple(range(seeds)), set(exercises) or None, caller_zygote())
    for finding in findings:
        click.echo(finding.render(lang))
    problems = [f for f in findings if f.problem]
    sets = ", ".join(set_ids)
    if problems:
        say(Msg("devcheck-problems", count=len(problems), sets=sets), lang)
        sys.exit(ExitCode.FAILED)
    say(Msg("devcheck-ok", sets=sets, seeds=seeds), lang)


@dev.command("mutants")
@click.argument("set_ids", metavar="[SET]...", nargs=-1)
@course_option
@isolation_option()
@exercise_option("Mutate only this exercise's functions (repeatable).")
@click.option("--killed", "show_killed", is_flag=True,
              help="Also list each killed mutant with the tags that named it.")
@click.option("--json", "as_json", is_flag=True, help="Print the figures and mutants as JSON.")
@lang_option()
def dev_mutants(set_ids: tuple[str, ...], course_dir: str | None, isolation: str | None,
                exercises: tuple[str, ...], show_killed: bool, as_json: bool,
                lang: str) -> None:
    """Grade slips of the reference solutions (mutants: an operator swapped, an axis
    changed, a .T dropped, a statement left out...) in place of each graded function:
    each must lose points. Prints per exercise the mutants generated, killed, survived
    and equivalent (same answers as the reference on every input of the checks), and
    each survivor as a one-line diff. Exits 1 when a set scores below the
    mutation_score of its set.yaml."""
    from ..instructor import mutant_report
    from ..instructor.mutants import judge_course

    course = load_course(course_dir)
    set_ids = set_ids or tuple(course.set_ids())
    results = judge_course(course, set_ids, isolation or sandbox.strongest_available(),
                           set(exercises) or None)
    below = [r for r in results if r.below]
    if as_json:
        click.echo(json.dumps([mutant_report.plain(r) for r in results], ensure_ascii=False,
                              indent=2))
    for r in results if not as_json else ():
        for line in mutant_report.table(r, lang) + mutant_report.details(r, lang, show_killed):
            click.echo(line)
        say(mutant_report.verdict(r), lang)
    if below:
        sys.exit(ExitCode.FAILED)


@main.command("new")
@click.argument("set_id", metavar="SET")
@click.argument("exercise_id", metavar="EXERCISE_ID")
@course_option
@lang_option()
def new(set_id: str, exercise_id: str, course_dir: str | None, lang: str) -> None:
    """Start a new exercise: YAML skeleton, stub and reference solution."""
    from ..instructor.scaffold import new_exercise

    course = load_course(course_dir)
    for path in new_exercise(course, set_id, exercise_id):   # as the course names them
        say(Msg("new-wrote", path=os.path.relpath(path, course.root)), lang)
    where = f" --course {shlex.quote(course_dir)}" if course_dir else ""
    say(Msg("new-next", command=f"attn-grade dev check {set_id} --exercise {exercise_id}"
                                f"{where}"), lang)


@main.command("schema")
def schema() -> None:
    """Print the JSON Schema of an exercise YAML file (for editor completion)."""
    from ..course.formats import json_schema

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
@exercise_option()
@course_option
@lang_option()
@isolation_option()
@require_isolation_option(sandbox.BATCH_MINIMUM)
@limit_options
@click.option("--report", "with_report", is_flag=True,
              help="Also write the class report OUT/report.html (needs the [report] extra).")
def grade_all_command(set_id: str, submissions: str, out_dir: str, jobs: int, force: bool,
                      exercises: tuple[str, ...], course_dir: str | None, lang: str,
                      isolation: str | None, required: str | None, limits: dict[str, object],
                      with_report: bool) -> None:
    """Grade a class: one sub-folder or .zip per student in SUBMISSIONS.

    Writes results/STUDENT.json (Gradescope format) and gradebook.csv (student,
    total, per-exercise scores). A re-run grades only students whose stub files
    changed.
    """
    from ..instructor.class_output import require_matplotlib
    from ..instructor.forked_worker import current_folder_off_path
    from ..instructor.grade_job import GradeJob
    from ..instructor.gradebook import grade_all

    click.get_current_context().with_resource(current_folder_off_path())
    if with_report:
        require_matplotlib(lang)     # before grading, not after
    course = load_course(course_dir)
    exercise_set = spec_loader.load_set(course, set_id)
    spec_loader.check_ids(set_id, [e.id for e in exercise_set.exercises], exercises)
    job = GradeJob(set_id, str(course.root), lang=lang, exercises=exercises,
                   isolation=isolation, required=required,
                   limits={k: v for k, v in limits.items() if v is not None})
    with _progress(submissions) as tick:
        rows = grade_all(course, exercise_set, submissions, out_dir, jobs, job, force,
                         tick, set(exercises), serve=serve_as_worker, lang=lang)
    count = {status: sum(1 for r in rows if r["status"] == status)
             for status in ("error", "empty")}
    said = [Msg("class-graded", count=len(rows), path=str(Path(out_dir) / "gradebook.csv"))]
    said += [Msg("class-graded-errors", count=count["error"])] if count["error"] else []
    said += [Msg("class-graded-empty", count=count["empty"])] if count["empty"] else []
    click.echo("".join(report.render(msg, lang) for msg in said))
    if with_report:
        _write_class_report(Path(out_dir), Path(out_dir) / "report.html", lang, "html", course,
                            exercise_set)


def _progress(submissions: str):
    """A progress bar on a terminal; silent otherwise."""
    import contextlib

    from ..instructor.gradebook import find_submissions

    if not sys.stderr.isatty():
        return contextlib.nullcontext(None)
    total = len(find_submissions(submissions))

    @contextlib.contextmanager
    def bar():
        with click.progressbar(length=total, label="grading", file=sys.stderr) as b:
            yield lambda student: b.update(1)

    return bar()


def _write_class_report(folder: Path, output: Path, lang: str, fmt: str, course,
                        exercise_set=None) -> None:
    """Write the class report of the results in ``folder`` to ``output``, and say so."""
    from ..instructor.class_output import class_report_text

    write_output(output, class_report_text(folder, output, lang, fmt, course, exercise_set),
                 lang)
    say(Msg("class-wrote", path=output), lang)


@main.command("report")
@click.argument("folder", metavar="OUT", type=click.Path(exists=True, file_okay=False))
@click.option("--output", "-o", type=click.Path(), metavar="FILE",
              help="Where to write the page (default: OUT/report.html, or OUT/report.json).")
@click.option("--format", "fmt", type=click.Choice(["html", "json"]), default="html",
              show_default=True, help="A page with charts, or the same aggregates as data.")
@course_option
@lang_option()
def class_report_command(folder: str, output: str | None, fmt: str, course_dir: str | None,
                         lang: str) -> None:
    """The class report of a grade-all output folder OUT (or any folder of Gradescope
    results JSON files): scores, misconceptions, failed checks, recurring errors and
    students who need help, as one self-contained HTML page."""
    output_checked(output, lang)
    try:
        course = load_course(course_dir)
    except CourseError:
        if course_dir:
            raise
        course = None       # no course here: misconceptions are shown by tag
    root = Path(folder)
    _write_class_report(root, Path(output) if output else root / f"report.{fmt}", lang, fmt,
                        course)


@main.group()
def export() -> None:
    """Package a set for another grading platform."""


@export.command("gradescope")
@click.argument("set_id", metavar="SET")
@click.option("--output", "-o", type=click.Path(), metavar="FILE", default="autograder.zip",
              show_default=True, help="Where to write the zip.")
@course_option
@lang_option("en", "Feedback language on Gradescope.")
@hidden_visibility_option("after_published", "When students see hidden checks on Gradescope.")
@require_isolation_option(sandbox.BATCH_MINIMUM)
def export_gradescope(set_id: str, output: str, course_dir: str | None, lang: str,
                      hidden_visibility: str, required: str) -> None:
    """Write a Gradescope autograder.zip (setup.sh, run_autograder, the course)."""
    from ..instructor.export import gradescope_zip

    output_checked(output, lang)
    course = load_course(course_dir)
    spec_loader.load_set(course, set_id)
    data = gradescope_zip(course, set_id, lang, hidden_visibility, required)
    write_output(output, data, lang)
    say(Msg("export-wrote", path=str(output), size=len(data) // 1024, set=set_id), lang)


@export.command("prairielearn")
@click.argument("set_id", metavar="SET")
@click.option("--output", "-o", "out_dir", type=click.Path(file_okay=False), required=True,
              help="An empty or new folder for the course fragment.")
@click.option("--image", default="prairielearn/grader-python", show_default=True,
              help="The grading image the questions name (build ours from the fragment's "
                   "Dockerfile and give its name here).")
@click.option("--whole-set", is_flag=True, help="One question for the whole set, not one "
                                                "per exercise.")
@click.option("--upload", is_flag=True, help="An upload element (the stub files, or a "
                                             "notebook) instead of file editors.")
@course_option
@lang_option("en", "The language of the prompts and the feedback on PrairieLearn.")
@require_isolation_option(sandbox.BATCH_MINIMUM)
def export_prairielearn(set_id: str, out_dir: str, image: str, whole_set: bool, upload: bool,
                        course_dir: str | None, lang: str, required: str) -> None:
    """Write a PrairieLearn course fragment: questions/, serverFilesCourse/, Dockerfile."""
    from ..instructor.prairielearn import write_fragment

    course = load_course(course_dir)
    write_fragment(course, spec_loader.load_set(course, set_id), out_dir, lang, image,
                   whole_set, upload, required)
    say(Msg("export-prairielearn-wrote", platform="PrairieLearn", set=set_id,
            folder=out_dir, questions="questions/", files="serverFilesCourse/",
            dockerfile=str(Path(out_dir) / "Dockerfile")), lang)


@export.command("github-classroom")
@click.argument("set_id", metavar="SET")
@click.option("--output", "-o", "out_dir", type=click.Path(file_okay=False), required=True,
              help="An empty or new folder for the template repository.")
@click.option("--hidden-from", metavar="OWNER/REPO",
              help="A private repository holding this course: the workflow fetches it (with "
                   "the secret ATTN_GRADE_COURSE_TOKEN) to run the hidden checks too.")
@course_option
@isolation_option("Isolation for grading the stubs and references before writing.")
@lang_option("en", "Feedback language in the workflow's log.")
def export_github_classroom(set_id: str, out_dir: str, hidden_from: str | None,
                            course_dir: str | None, isolation: str | None, lang: str) -> None:
    """Write a GitHub Classroom template repository: the release and its workflow."""
    from ..instructor.classroom import write_template

    course = load_course(course_dir)
    write_template(course, spec_loader.load_set(course, set_id), out_dir,
                   isolation or sandbox.strongest_available(), lang, hidden_from,
                   caller_zygote())
    say(Msg("export-classroom-wrote", platform="GitHub Classroom", set=set_id,
            folder=out_dir), lang)


@main.command("notebook")
@click.argument("set_id", metavar="SET")
@click.option("--output", "-o", type=click.Path(dir_okay=False), required=True,
              help="The notebook to write (FILE.ipynb).")
@lang_option()
@course_option
def notebook_command(set_id: str, output: str, lang: str, course_dir: str | None) -> None:
    """Write SET's student notebook: each exercise's prompt, its stub functions to fill
    in, and a cell that grades them (needs the notebook extra)."""
    from .. import notebook

    if not notebook.nbformat_available():
        raise Refusal(report.render(Msg("notebook-needs-extra",
                                               command=notebook.INSTALL_COMMAND), lang))
    exercise_set = spec_loader.load_set(load_course(course_dir), set_id)
    path = notebook.write(exercise_set, output, lang)
    say(Msg("notebook-wrote", path=str(path)), lang)


@main.command("release")
@click.argument("set_id", metavar="SET")
@click.option("--output", "-o", "out_dir", type=click.Path(file_okay=False), required=True,
              help="An empty or new folder for the student bundle.")
@course_option
@isolation_option("Isolation for grading the stubs and references before writing.")
@lang_option()
def release(set_id: str, out_dir: str, course_dir: str | None, isolation: str | None,
            lang: str) -> None:
    """Write the student bundle of SET: grader, stubs, visible checks; no solutions.

    Refuses when a stub passes a check (it would ship an answer)."""
    from ..instructor.release import make_release

    course = load_course(course_dir)
    make_release(course, spec_loader.load_set(course, set_id), out_dir,
                 isolation or sandbox.strongest_available(), caller_zygote())
    say(Msg("release-wrote", set=set_id, folder=out_dir,
            command=f"python3 -m pip install -e . && attn-grade {set_id}"), lang)
