"""One grading run's private folder: its runtime files, the staged copies of the
student's folders, the children's work folders, its templates and live processes.
"""

import contextlib
import os
import shutil
import tempfile
from pathlib import Path

from ..course.limits import Limits
from . import sandbox, staging
from .bubblewrap import copy_runtime
from .processes import Reaper
from .template import ForkedChild, Template, fits


class RunFolder:
    """A private temporary folder for one grading run, removed on close.

    With a uid of its own (``plan.identity``) the folder is root's, group the
    run's gid, mode 0750: the run's children can read the runtime files and the
    copy of the submission, no other user (another student's run) can enter.
    Closing it also releases the run's uid (kills what still runs as it).
    ``reaper`` knows the run's live processes (its templates).
    """

    def __init__(self, plan=None, zygote=None):
        self.reaper = Reaper()
        self.zygote = zygote   # a worker's Zygote: templates forked into this run's sandbox
        self.plan = plan or sandbox.Plan("none", "none", "none")
        self.identity = self.plan.identity
        self.root = Path(tempfile.mkdtemp(prefix="attn-grade-", dir=sandbox.scratch_folder()))
        self.runtime = self.root / "runtime"
        self.work = self.root / "work"    # the children's folders: one bind for all
        self.files = self.root / "files"  # the staged copies: one read-only bind for all
        try:   # a Ctrl-C meanwhile (a class's workers get it too) leaves no folder
            self.runtime.mkdir()
            copied = copy_runtime(self.runtime)
            self.work.mkdir()
            self.files.mkdir()
            if self.identity is not None:
                for path in (self.root, self.runtime, self.work, self.files, *copied):
                    self._share(path)
                # the run's uid may enter work/ but not list it: no child finds another's
                # folder (each has an unguessable name) to leave something in for it
                os.chmod(self.work, 0o710)
        except BaseException:
            shutil.rmtree(self.root, ignore_errors=True)
            raise
        self._count = 0
        self._staged: dict[str, str] = {}
        self._real: dict[str, str] = {}
        self._live: set[str] = set()   # the work folders of children not yet closed
        self._retired: list[tuple[Path, ForkedChild]] = []   # killed, death not yet seen
        self._templates: list[Template] = []

    def write_new_shared(self, prefix: str, data: bytes) -> Path:
        """A new file in runtime/ (never through a link) the run's children may read and
        not change; its path."""
        fd, name = tempfile.mkstemp(prefix=prefix, suffix=".json", dir=self.runtime)
        with os.fdopen(fd, "wb") as f:
            f.write(data)
        os.chmod(name, 0o644)
        if self.identity is not None:
            self._share(Path(name))
        return Path(name)

    def template(self, limits: Limits, preload: tuple[str, ...] = (),
                 companions: int | None = None) -> Template:
        """A live template whose limits allow ``limits`` (it sees everything staged)
        and that has ``preload`` imported, or will import it before it forks.

        In bubblewrap a template lacking ``preload`` is not used: another one starts
        (in a sandbox of its own).  Elsewhere one template serves the run: a second
        one's kill(-1) would reach the first.  ``companions``: the other templates
        that will live beside a new one (default: those alive now).  A zygote's
        template none of whose children still runs (a class grades its numpy-only
        exercises first) hands its sandbox over to the deeper zygote's: it ends, and
        the next template is entered in its place, without a second bubblewrap.
        """
        live = [t for t in self._templates if fits(limits, t.limits) and t.alive()]
        for template in live:
            if set(preload) <= template.preloaded:
                return template
        if live and self.plan.level != "bubblewrap":
            return live[0]
        after = next((t for t in live if t.holder is not None and t.idle()), None)
        if after is not None and not (self.zygote is not None
                                      and self.zygote.serves(self.plan, preload)
                                      and after.retire()):
            after = None
        live = [t for t in live if t is not after]
        template = Template(self, limits, preload,   # a retired one may still be counted
                            len(live) + (after is not None) if companions is None
                            else companions, after)
        self._templates.append(template)
        return template

    def warm(self, submission: str | Path, public: list[str], limits: Limits,
             preload: tuple[str, ...] = (), light: bool = True) -> None:
        """Stage the folders and start the template now, so its imports overlap the
        grader's own work.  ``light``: some exercises need numpy alone (grade_set
        grades those first); true unless the caller knows otherwise.

        In bubblewrap, exercises that need more than numpy (sympy: a quarter of a
        second) get a second template, started at once beside a numpy-only one, which
        serves the others sooner.  A zygote's numpy-only template serves those first,
        then hands its sandbox to the second one, entered when the first exercise that
        needs it comes (``template``).
        """
        self.stage(submission, *public)
        zygote = self.zygote is not None and self.zygote.serves(self.plan, preload)
        if zygote and light:   # counting the second one, which may live beside it later
            self.template(limits, (), companions=1 if preload else 0)
        elif zygote:
            self.template(limits, preload)
        elif preload and light and self.plan.level == "bubblewrap":
            self.template(limits, (), companions=1)
            self.template(limits, preload, companions=1)
        else:
            self.template(limits, preload)

    def _share(self, path):
        staging.share(path, self.identity.gid)

    def stage(self, *paths: str | Path, refresh: bool = False) -> list[str]:
        """Folders as the child sees them: copies under ``files/`` at their absolute
        paths (a solution that finds ``../../exercises/SET`` from its own folder still
        does), made once; ``refresh`` brings them up to date in place (a watch loop's
        next grading), so the template's sandbox, which binds ``files/``, sees them.

        Links are kept as links, special files left out.  With a uid of its own
        the copies are readable by that uid alone, never writable.  Copies, not
        the folders themselves: the template starts before it knows every folder
        it will need (dev check grades many), and a child cannot change what the
        grader reads later.
        """
        real = [self._realpath(str(p), refresh) for p in paths]
        for path in sorted(real, key=len):
            covered = any(path == done or path.startswith(done + os.sep)
                          for done in self._staged)
            if covered and not refresh:
                continue
            staging.check_size(path)
            target = self.files / path.lstrip(os.sep)
            gid = None if self.identity is None else self.identity.gid
            if target.is_dir():
                staging.sync_tree(path, str(target), gid)
            else:
                self._make_parents(target.parent)
                staging.copy_tree(path, str(target), gid)
            self._staged.setdefault(path, str(target))
        return [str(self.files / p.lstrip(os.sep)) for p in real]

    def _realpath(self, path: str, refresh: bool) -> str:
        """os.path.realpath, once a path a run (each exercise stages the same folders),
        again when asked to ``refresh``."""
        if refresh or path not in self._real:
            self._real[path] = os.path.realpath(path)
        return self._real[path]

    def _make_parents(self, folder):
        missing = []
        while not folder.exists():
            missing.append(folder)
            folder = folder.parent
        for path in reversed(missing):
            path.mkdir()
            if self.identity is not None:
                self._share(path)

    def new_workdir(self) -> Path:
        """A fresh folder for one child; an unpredictable name (a child may know the
        folder that holds them: it cannot make the next one first).

        Without a uid of the run's own, a child owns work/ too: what it left there
        (beside the folders of live children) goes first, so no child is charged for it.
        """
        if self.identity is None:
            staging.unlock(self.work)   # a child that owns it may have taken our access away
            for entry in os.scandir(self.work):
                if entry.path not in self._live:
                    if entry.is_dir(follow_symlinks=False):
                        staging.remove_tree(entry.path)
                    else:
                        with contextlib.suppress(OSError):
                            os.unlink(entry.path)
        self._count += 1
        path = Path(tempfile.mkdtemp(prefix=f"{self._count}-", dir=self.work))
        if self.identity is not None:
            os.chown(path, self.identity.uid, self.identity.gid)
        self._live.add(str(path))
        return path

    def remove_workdir(self, path: Path) -> None:
        self._live.discard(str(path))
        staging.remove_tree(path)

    def retire_workdir(self, path: Path, child: ForkedChild) -> None:
        """The folder of a child told to die: removed once its template has reported
        the death (by the next fork), never while the child may still write in it."""
        self._retired.append((path, child))

    def remove_retired(self) -> None:
        waiting = []
        for path, child in self._retired:
            if child.exited():
                self.remove_workdir(path)
            else:
                waiting.append((path, child))
        self._retired = waiting

    def close(self) -> None:
        for template in self._templates:
            template.stop()
        self.plan.release()
        staging.remove_tree(self.root)


def open_run_folder(level: str, solutions_dir: str | Path | None = None,
                    required: str | None = None, zygote=None) -> RunFolder:
    """A RunFolder for a new plan (sandbox.plan); the plan's uid is released if the
    folder cannot be made.  ``zygote``: a worker's Zygote, when it has one."""
    plan = sandbox.plan(level, solutions_dir, required)
    try:
        return RunFolder(plan, zygote)
    except BaseException:
        plan.release()
        raise
