"""``attn-grade watch SET``: re-grade the exercise whose file was saved.

One state (the files' modification times and the latest results), one loop:
poll the stub files with ``os.stat``, grade only the exercise that changed,
redraw the screen whole (the exercise's checks, the set's progress bar, the
next unfinished exercise).  Ctrl-C ends it; every student process ends with
the grading that started it.
"""

import os
import time
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

from .course import draws
from .course.spec import Exercise, ExerciseSet
from .grading import Warm, grade_set
from .judge.msg import Msg
from .judge.results import ExerciseResult
from .report.messages import render
from .report.progress import Progress, next_exercise
from .report.render import exercise_block
from .report.student_view import bar
from .run.student import open_run_folder
from .run.template import widest

POLL_SECONDS = 0.05   # os.stat of a dozen files: nothing next to a grading
SETTLE_SECONDS = 0.01   # a changed file is graded once it stays the same this long
CLEAR = "\x1b[2J\x1b[H"


def stamps(folder: Path, exercises: Iterable[Exercise]) -> dict[str, tuple | None]:
    """{exercise id: (mtime_ns, size)} of each exercise's stub file (None if missing)."""
    out: dict[str, tuple | None] = {}
    for exercise in exercises:
        try:
            info = os.stat(folder / exercise.file)
            out[exercise.id] = (info.st_mtime_ns, info.st_size)
        except OSError:
            out[exercise.id] = None
    return out


def changed(before: dict, after: dict) -> list[str]:
    return [ex_id for ex_id, stamp in after.items() if before.get(ex_id) != stamp]


def screen(exercise_set: ExerciseSet, result: ExerciseResult, progress: Progress,
           lang: str) -> list[str]:
    """The whole screen after grading one exercise."""
    out = exercise_block(result, exercise_set.id, lang, progress.hints_used(exercise_set.id))
    total = sum(e.points for e in exercise_set.exercises)
    best = sum(min(progress.record(exercise_set.id, e.id).best, e.points)
               for e in exercise_set.exercises)
    out.append(render(Msg("watch-progress", bar=bar(best / total if total else 0.0, 30),
                          best=f"{best:g}", total=f"{total:g}"), lang))
    upcoming = next_exercise(progress, exercise_set)
    out.append(render(Msg("progress-next", exercise=upcoming.id, set_id=exercise_set.id), lang)
               if upcoming else render(Msg("progress-done", set_id=exercise_set.id), lang))
    out.append(render(Msg("watch-waiting"), lang))
    return out


def watch(exercise_set: ExerciseSet, folder: Path, level: str, lang: str,
          echo: Callable[[str], Any], student: str | None = None, clear: bool = True,
          once: bool = False) -> None:
    """Grade each exercise whose file changes, until interrupted (or one grading, ``once``).

    One run folder for the whole loop: its template (bubblewrap, Python, numpy)
    starts once and forks a fresh child per grading; the reference answers are
    computed once.  Ctrl-C kills it all.
    """
    progress = Progress(folder)
    before = stamps(folder, exercise_set.exercises)
    echo(render(Msg("watch-start", folder=str(folder)), lang))
    run_folder = open_run_folder(level, exercise_set.solutions_dir)
    warm = Warm(run_folder, replays=True)
    try:
        run_folder.warm(folder, [str(exercise_set.exercises_dir)],
                        widest(*(e.limits for e in exercise_set.exercises)))
        while True:
            time.sleep(POLL_SECONDS)
            after = stamps(folder, exercise_set.exercises)
            if after != before:   # a save in progress (truncated, half written) waits
                time.sleep(SETTLE_SECONDS)
                if stamps(folder, exercise_set.exercises) != after:
                    continue
            for ex_id in changed(before, after):
                if after[ex_id] is None:
                    continue
                run = grade_set(draws.drawn(exercise_set, folder, {ex_id}), folder, level,
                                only={ex_id}, student=student, warm=warm)
                progress.graded(run)
                progress.save()
                lines = screen(exercise_set, run.exercises[0], progress, lang)
                echo((CLEAR if clear else "") + "\n".join(lines))
                if once:
                    return
            before = after
    except KeyboardInterrupt:
        echo(render(Msg("watch-stop"), lang))
    finally:
        run_folder.close()
