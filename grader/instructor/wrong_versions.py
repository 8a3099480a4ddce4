"""``dev check``'s wrong versions: each registered wrong function graded in place of
the function it imitates must fail a check and carry its tag; each variant's
reference must pass its own checks (graded as that variant's student would)."""

import os
import shutil
import tempfile
import time
from collections.abc import Collection
from pathlib import Path

from ..course.spec import ExerciseSet
from ..grading import Warm, grade_set
from ..judge.msg import Msg
from .findings import Finding
from .standins import COURSE_ONLY


def wrong_versions_caught(exercise_set: ExerciseSet, level: str,
                          only: Collection[str] | None, warm: Warm | None,
                          submission: "WrongSubmission") -> list[Finding]:
    """Grade each registered wrong function in place of its graded function."""
    out = []
    for exercise in [v for e in exercise_set.exercises for v in _each_variant(e)]:
        if only is not None and exercise.id not in only:
            continue
        for m in exercise.misconceptions:
            for function in exercise.wrong_targets(m) if m.wrong else ():
                label = Msg("devcheck-wrong-version-variant", wrong=m.wrong, function=function,
                            variant=exercise.variant) if exercise.variant else \
                    Msg("devcheck-wrong-version", wrong=m.wrong, function=function)
                checks = _grade_wrong_version(exercise_set, exercise, m.wrong, function, level,
                                              warm, submission, m.tag)
                failed = [c for c in checks if not c.passed]
                if not failed:
                    out.append(Finding(exercise_set.id, exercise.id,
                                       Msg("devcheck-wrong-escapes", label=label)))
                elif not any(m.tag in c.tags for c in failed):
                    out.append(Finding(exercise_set.id, exercise.id,
                                       Msg("devcheck-wrong-untagged", label=label, tag=m.tag)))
                out += _shadowed_rules(exercise_set.id, exercise.id, label, m.tag, failed)
    return out


def _shadowed_rules(set_id, exercise_id, label, tag, failed):
    """A note when a wrong version also fits another tag's value rule (its own wins)."""
    other = sorted({t for c in failed for t in c.shadowed if t != tag})
    if not other:
        return []
    return [Finding(set_id, exercise_id, Msg("devcheck-wrong-shadowed", label=label,
                                             others=", ".join(other), tag=tag), problem=False)]


def _grade_wrong_version(exercise_set, exercise, wrong, function, level, warm,
                         submission, tag=None):
    """The checks of a submission with ``wrong`` in place of ``function``
    (``submission``: the set's WrongSubmission).

    With a ``tag``, the YAML checks go first: when a failed one already carries the
    tag, the hidden pytest checks cannot change the verdict and are left out (each is
    a pytest session); otherwise the submission is graded whole.
    """
    folder = submission.use(exercise, wrong, function)

    def grade(hidden):
        run = grade_set(exercise_set, folder, level, only={exercise.id},
                        variants={exercise.id: exercise.variant}, warm=warm,
                        hidden_tests=hidden)
        return [c for e in run.exercises for c in e.checks]

    checks = grade(hidden=tag is None)
    if tag is not None and not any(not c.passed and tag in c.tags for c in checks):
        checks = grade(hidden=True)
    return checks


def _each_variant(exercise):
    """The exercise for each of its variants (itself when it has none)."""
    return [exercise.with_variant(i) for i in range(len(exercise.variants))] or [exercise]


def variants_pass(exercise_set: ExerciseSet, level: str, only: Collection[str] | None,
                  warm: Warm | None, submission: "WrongSubmission") -> list[Finding]:
    """Each variant's reference answers its own checks (graded as that student would)."""
    out: list[Finding] = []
    for exercise in exercise_set.exercises:
        if (only is not None and exercise.id not in only) or len(exercise.variants) < 2:
            continue
        for variant in _each_variant(exercise)[1:]:
            checks = _grade_wrong_version(exercise_set, variant, None, None, level, warm,
                                          submission)
            out += [Finding(exercise_set.id, exercise.id,
                            Msg("devcheck-variant-fails", check=c.check, variant=variant.variant))
                    for c in checks if not c.passed]
    return out


class WrongSubmission:
    """One folder of the reference solutions in which one module at a time has a
    function replaced by a wrong version (see ``use``), for a set's whole dev check.

    The folder is made once and changed in place: a new one per wrong version cost
    about a hundred file copies to write and as many again to stage.  Every file it
    rewrites gets an mtime a whole second later than any before, so staging sees each
    change even when two versions have the same size, whatever the file system's
    clock granularity.
    """

    def __init__(self, exercise_set: ExerciseSet):
        self.exercise_set = exercise_set
        self.tmp = Path(tempfile.mkdtemp(prefix="attn-grade-wrong-"))
        self.folder = self.tmp / "submission"
        shutil.copytree(exercise_set.exercises_dir, self.folder, ignore=COURSE_ONLY)
        for stub in exercise_set.exercises_dir.glob("*.py"):
            source = exercise_set.solutions_dir / stub.name
            if source.is_file():
                shutil.copy(source, self.folder / stub.name)
        # each module as it is without a wrong version (its reference, or else its stub)
        self.pristine = {path.name: path.read_text("utf-8") for path in self.folder.glob("*.py")}
        self.changed: list[str] = []   # the module files the last version rewrote
        self._mtime = 0

    def use(self, exercise, wrong, function) -> Path:
        """The reference solutions, with ``function`` of one module replaced by ``wrong``.

        The reference moves to a private module so that a wrong version that calls the
        right function (``softmax(logits * T, T)``) still reaches the right one.  With
        variants, every function is bound to the variant's numbers, as a student of
        that variant would answer.
        """
        self._restore()
        self._put(exercise, wrong, function, self.pristine[exercise.file])
        return self.folder

    def use_sources(self, sources: list) -> Path:
        """The reference solutions with the module of each (exercise, source) holding
        that source (``dev mutants``: a mutant of each at once, since each
        exercise runs in a process of its own)."""
        self._restore()
        for exercise, source in sources:
            self._put(exercise, None, None, source)
        return self.folder

    def _put(self, exercise, wrong, function, source):
        module = Path(exercise.file).stem
        private = f"_attn_grade_reference_{module}"
        names = {f: f for f in exercise.functions}
        if wrong:
            names[function] = wrong
        bound = "".join(f"{name} = _bind(_reference.{target})\n"
                        for name, target in names.items())
        self._write(f"{private}.py", source)
        self._write(exercise.file, f"from {private} import *  # noqa\nimport {private} as "
                                   f"_reference\nPARAMS = {exercise.params!r}\n{BIND}{bound}")
        self.changed += [exercise.file, f"{private}.py"]

    def __enter__(self) -> "WrongSubmission":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        shutil.rmtree(self.tmp, ignore_errors=True)

    def _restore(self):
        for name in self.changed:
            if name in self.pristine:
                self._write(name, self.pristine[name])
            else:
                (self.folder / name).unlink()
        self.changed = []

    def _write(self, name, text):
        path = self.folder / name
        path.write_text(text, encoding="utf-8")
        self._mtime = max(time.time_ns(), self._mtime + 1_000_000_000)
        os.utime(path, ns=(self._mtime, self._mtime))


BIND = """
def _bind(function):
    import functools, inspect
    names = inspect.signature(function).parameters
    given = {k: v for k, v in PARAMS.items() if k in names}
    return functools.partial(function, **given) if given else function


"""
