"""One student module running in a child process, called through files.

``RunFolder`` is one grading run's private folder, its sandboxed template
and its live processes; ``StudentProcess`` calls into one submission module:
it has the template fork its child lazily (or ahead, ``prestart``), forks
again after a hang or crash, and turns each call into a ``CallOutcome``.
The pieces under it:

  outcome   Status, Crash, CallOutcome; validation of an answer file
  channel   the request files in the child's folder, its answer pipe, the
            folder's disk cap
  template  the run's one sandbox: a warm process that forks the children
  child     start/kill/wait the template's process; why a process died

A hang, crash or limit kills the whole process group; the next call starts a
fresh child, so one bad call costs only its own check.  The child's exit code
and console output are never results.
"""

import contextlib
import dataclasses
import errno
import json
import os
import shutil
import stat
import subprocess
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from .. import wire
from ..course.limits import Limits
from ..errors import CourseError
from . import bubblewrap, sandbox
from .channel import Channel, Waited
from .outcome import FOLDER_TAMPERED, REQUESTS_UNREAD, CallOutcome, Crash, Status
from .processes import Reaper
from .template import ForkedChild, Template, TemplateGone, fits
from .zygote_process import copy_runtime

__all__ = ["CallOutcome", "Crash", "RunFolder", "Status", "StudentProcess"]

MAX_RESTARTS = 3
# requests written ahead of the child's answers, in bytes: request files count
# against the child's disk cap, so the window stays a small share of any cap
PIPELINE_BYTES = 256 * 1024
# and in requests: each id written ahead waits in the child's stdin pipe, which the
# child may shrink to one page (F_SETPIPE_SZ) before it hangs in a call.  256 ids of up
# to 8 bytes fit in 4 KiB; a line that does not fit (the last one was left unread)
# breaks the stream (Channel.send): the grader's write never blocks.
PIPELINE_REQUESTS = 256


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
        _share(path, self.identity.gid)

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
            _check_size(path)
            target = self.files / path.lstrip(os.sep)
            gid = None if self.identity is None else self.identity.gid
            if target.is_dir():
                _sync_tree(path, str(target), gid)
            else:
                self._make_parents(target.parent)
                _copy_tree(path, str(target), gid)
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
            _unlock(self.work)   # a child that owns it may have taken our access away
            for entry in os.scandir(self.work):
                if entry.path not in self._live:
                    if entry.is_dir(follow_symlinks=False):
                        _remove_tree(entry.path)
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
        _remove_tree(path)

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
        _remove_tree(self.root)


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


@dataclasses.dataclass(frozen=True)
class Request:
    """One call as it is sent: its JSON and the fingerprint of its inputs, made once
    (a class sends the same calls to every student)."""

    data: bytes
    digest: str


def request(function: str, args: Sequence[Any] = (),
            kwargs: dict[str, Any] | None = None) -> Request:
    return wire_request(function, wire.encode(list(args)), wire.encode(dict(kwargs or {})))


def wire_request(function: str, args: Any, kwargs: Any) -> Request:
    """A Request of arguments already in wire form (a list, a dict): a hidden test's,
    as its fork sent them, need not be decoded to be encoded again."""
    digest = wire.digest(args, kwargs)   # the child returns it when they stay as sent
    encoded = {"op": "call", "function": function, "args": args, "kwargs": kwargs,
               "digest": digest}
    return Request(json.dumps(encoded, allow_nan=False).encode(), digest)


def _judged_inputs(outcome, sent):
    """Whether the call changed its inputs, judged here from what was sent (not by
    the child's own verdict)."""
    mutated = outcome.inputs_digest != sent.digest
    if not outcome.ok or mutated == outcome.mutated_args:   # a copy only to change it
        return outcome
    return dataclasses.replace(outcome, mutated_args=mutated)


def _unlock(folder):
    """Give the grader's user its access to ``folder`` back (not through a link)."""
    with contextlib.suppress(OSError):
        if not os.path.islink(folder) and os.geteuid() == os.lstat(folder).st_uid:
            os.chmod(folder, 0o700)


def _remove_tree(path):
    """rmtree, after giving back access to folders a child (same uid) locked; a link
    (a child's folder renamed and replaced) is removed, never followed."""
    if os.path.islink(path):
        with contextlib.suppress(OSError):
            os.unlink(path)
        return
    if os.geteuid() != 0:   # root needs no access given back
        _unlock(path)
        for top, dirs, _ in os.walk(path):
            for name in dirs:
                _unlock(os.path.join(top, name))
    shutil.rmtree(path, ignore_errors=True)


MAX_STAGED_ENTRIES = 20_000


def _copy_bytes(src: int, out: int) -> None:
    try:
        while os.sendfile(out, src, None, 1 << 30):
            pass
    except OSError as exc:   # a file system without sendfile: by hand, from the start
        if exc.errno not in (errno.EINVAL, errno.ENOSYS, errno.ENOTSUP, errno.EOPNOTSUPP):
            raise
        os.lseek(src, 0, os.SEEK_SET)
        os.ftruncate(out, 0)
        os.lseek(out, 0, os.SEEK_SET)
        while chunk := os.read(src, 1 << 20):
            os.write(out, chunk)


def _check_size(path):
    """CourseError for a folder far larger than any submission (a home folder)."""
    count = 0
    for _, dirs, files in os.walk(path):
        count += len(dirs) + len(files)
        if count > MAX_STAGED_ENTRIES:
            raise CourseError(f"{path} holds more than {MAX_STAGED_ENTRIES} files and "
                              "folders: too many to be a submission",
                              hint="grade the folder that holds your stub files")


def _sync_tree(source: str, target: str, gid: int | None) -> None:
    """Make ``target`` a copy of ``source`` again, keeping its folders' inodes."""
    wanted = {entry.name: _kind(entry) for entry in os.scandir(source)}
    for entry in os.scandir(target):
        if wanted.get(entry.name) != _kind(entry):
            if entry.is_dir(follow_symlinks=False):
                shutil.rmtree(entry.path)
            else:
                os.unlink(entry.path)
    for entry in os.scandir(source):
        dest = os.path.join(target, entry.name)
        if entry.is_dir(follow_symlinks=False) and os.path.isdir(dest) \
                and not os.path.islink(dest):
            _sync_tree(entry.path, dest, gid)
        elif not os.path.lexists(dest):
            _copy_entry(entry, dest, gid)
        elif entry.is_file(follow_symlinks=False) and not entry.is_symlink() \
                and _stamp(entry.stat(follow_symlinks=False)) != _stamp(os.lstat(dest)):
            os.unlink(dest)
            _copy_entry(entry, dest, gid)


def _stamp(info):
    return info.st_size, info.st_mtime_ns


def _kind(entry):
    if entry.is_symlink():
        return "link"
    return "dir" if entry.is_dir(follow_symlinks=False) else "file"


def _share(path: str | Path, gid: int) -> None:
    """Root's, readable by the run's gid only (never writable by the child)."""
    os.chown(path, 0, gid, follow_symlinks=False)
    if not os.path.islink(path):
        os.chmod(path, 0o750 if os.path.isdir(path) else 0o640)


def _copy_tree(source: str, target: str, gid: int | None) -> None:
    os.mkdir(target, 0o750)
    if gid is not None:
        _share(target, gid)
    for entry in os.scandir(source):
        _copy_entry(entry, os.path.join(target, entry.name), gid)


def _copy_entry(entry: os.DirEntry, dest: str, gid: int | None) -> None:
    """One entry of a staged folder: links kept as links, special files left out."""
    if entry.is_symlink():
        os.symlink(os.readlink(entry.path), dest)
        if gid is not None:
            _share(dest, gid)
    elif entry.is_dir(follow_symlinks=False):
        _copy_tree(entry.path, dest, gid)
    elif entry.is_file(follow_symlinks=False):
        _copy_file(entry.path, dest, gid)


def _copy_file(source: str, dest: str, gid: int | None) -> None:
    """A regular file's bytes, mode (0640 with a gid) and times, never through a link;
    a file that turned into anything else meanwhile is left out.  The times are how a
    later sync sees a change.  (shutil.copy2 took about 9 stat calls a file.)"""
    src = os.open(source, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
    try:
        info = os.fstat(src)
        if not stat.S_ISREG(info.st_mode):
            return
        out = os.open(dest, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC,
                      0o600)
        try:
            _copy_bytes(src, out)
            if gid is not None:
                os.fchown(out, 0, gid)
            os.fchmod(out, 0o640 if gid is not None else stat.S_IMODE(info.st_mode))
            os.utime(out, ns=(info.st_atime_ns, info.st_mtime_ns))
        finally:
            os.close(out)
    finally:
        os.close(src)


class StudentProcess:
    """Calls into one submission module, restarting its child when needed."""

    def __init__(self, folder, submission, module, limits: Limits, level=None, public=(),
                 preload=()):
        self.folder, self.module, self.limits = folder, module, limits
        self.plan = folder.plan
        self.level = level or self.plan.level
        if self.level != self.plan.level:
            raise ValueError(f"level {self.level!r} differs from the run's {self.plan.level!r}")
        self.public = tuple(str(p) for p in public)
        self.preload = tuple(preload)
        self.submission = os.path.realpath(submission)
        self.child: ForkedChild | None = None   # while a child runs
        self.channel: Channel | None = None
        self.template: Template | None = None
        self.workdir: Path | None = None
        self.restarts = 0
        self.load_failure = None
        self._next_id = 0
        self._loading = ""   # the id of the running child's import
        self._pending_load: CallOutcome | str | None = None
        if not (Path(self.submission) / f"{module}.py").is_file():
            self.load_failure = CallOutcome(Status.MISSING_FILE, detail=f"{module}.py")

    @property
    def proc(self) -> subprocess.Popen | None:
        """While a child runs, the Popen of the sandboxed template it was forked from."""
        if self.child is None or self.template is None:
            return None
        return self.template.process.popen

    # ------------------------------------------------------------ lifecycle
    def _start(self):
        submission, *_ = self.folder.stage(self.submission, *self.public)
        try:
            return self._fork(submission)
        except TemplateGone:   # killed by an earlier child: not this one's failure
            return self._fork(submission)

    def _fork(self, submission):
        self.template = self.folder.template(self.limits, self.preload)
        self.workdir = self.folder.new_workdir()
        disk_cap = None if self.level == "none" else \
            self.limits.tmp + bubblewrap.file_size_cap(self.limits)
        # without a uid of its own the child may write in work/ beside its folder: count it
        channel = Channel(self.workdir, self.folder.identity, disk_cap,
                          self.folder.work if self.folder.identity is None else None)
        stdin_r, stdin_w = os.pipe()
        self._next_id += 1   # the id of its import's answer: it imports as it starts
        self._loading = f"{self._next_id:06d}"
        try:
            job = {"submission": submission, "module": self.module, "load": self._loading,
                   "output_limit": self.limits.output, "answer_limit": self.limits.answer}
            console = os.open(self.workdir / "console.log",
                              os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC, 0o600)
            try:
                self.child = self.template.fork(self.workdir, self.limits, self.preload,
                                                stdin_r, channel.answers_w, console, job)
                self.folder.remove_retired()   # the fork confirmed their children's deaths
            finally:
                os.close(console)
                os.close(stdin_r)
        except BaseException:
            os.close(stdin_w)
            channel.close()
            self.folder.remove_workdir(self.workdir)
            raise
        self.child.stdin = os.fdopen(stdin_w, "wb")
        channel.attach(self.child.stdin)
        self.channel = channel

    def close(self, wait: bool = False) -> None:
        """Kill the child and everything it started; delete its work folder.

        ``wait``: now, once the kill is confirmed (a child that failed: what it
        wrote goes at once); otherwise by the next fork, which confirms it.
        """
        if self.child is None:
            return
        child, self.child = self.child, None
        child.kill(wait)
        if self.channel is not None:
            self.channel.close()
        self.channel = None
        if self.workdir is not None:
            self.folder.retire_workdir(self.workdir, child)
            if wait:
                self.folder.remove_retired()

    # ------------------------------------------------------------ calls
    def call(self, function: str, args: Sequence[Any] = (),
             kwargs: dict[str, Any] | None = None) -> CallOutcome:
        """Run ``module.function(*args, **kwargs)`` in the child."""
        return self.call_many([(function, args, kwargs)])[0]

    def call_many(self, calls: Sequence[tuple[str, Sequence[Any], dict[str, Any] | None]
                                        | Request]) -> list[CallOutcome]:
        """Each (function, args, kwargs) in turn, as ``call`` would, with the requests
        written ahead (up to PIPELINE_BYTES and PIPELINE_REQUESTS): the child starts the
        next call as soon as it answers one.  Each call has its own time limit, from its
        predecessor's answer; after a call that kills or hangs the child, the rest go to a
        fresh one.  A call may come as a ``Request`` made before."""
        requests = [c if isinstance(c, Request) else request(*c) for c in calls]
        outcomes: list[CallOutcome] = []
        while len(outcomes) < len(requests):
            ready = self._ensure_loaded()
            if ready is not None:
                return outcomes + [ready] * (len(requests) - len(outcomes))
            for rid, sent in self._send_ahead(requests[len(outcomes):]):
                outcome = rid if isinstance(rid, CallOutcome) else \
                    self._await(rid, time.monotonic() + self.limits.time)
                outcomes.append(_judged_inputs(outcome, sent))
                if outcome.status in (Status.TIMEOUT, Status.CRASHED, Status.BAD_ANSWER) \
                        or (self.channel is not None and self.channel.broken):
                    self.close(wait=True)
                    break
        return outcomes

    def _send_ahead(self, requests):
        """(id or CallOutcome, request) for the first requests that fit the window, all
        in one file; a send that fails ends it (the child is gone: its outcome says so)."""
        window, size = [], 0
        for one in requests:
            size += len(one.data)
            if window and (size > PIPELINE_BYTES or len(window) >= PIPELINE_REQUESTS):
                break
            window.append(one)
        if len(window) == 1:
            return [(self._send(window[0].data), window[0])]
        rids = self._send(b"[" + b",".join(one.data for one in window) + b"]", len(window))
        if isinstance(rids, CallOutcome):
            return [(rids, window[0])]
        return list(zip(rids, window))

    def prestart(self) -> None:
        """Start the child and its import now, to overlap with other work."""
        if self.load_failure is None and self.child is None:
            try:
                self._start()
            except BlockingIOError:   # RLIMIT_NPROC: the run's uid has too many processes
                self._pending_load = CallOutcome.crashed(
                    Crash.over_limit("processes", self.limits.processes))
                return
            except TemplateGone:      # killed by the student: the next start makes a new one
                self._pending_load = CallOutcome.crashed(Crash.by_signal("SIGKILL"))
                return
            self._pending_load = self._loading

    def _ensure_loaded(self):
        if self.load_failure is not None:
            return self.load_failure
        if self.child is not None and self._pending_load is None:
            return None
        if self.child is None:
            if self.restarts >= MAX_RESTARTS:
                return CallOutcome(Status.SKIPPED,
                                   detail=f"restarted {MAX_RESTARTS} times")
            if self._next_id:
                self.restarts += 1
            self.prestart()
        rid, self._pending_load = self._pending_load, None
        loaded = rid if isinstance(rid, CallOutcome) else self._await(
            rid, time.monotonic() + self.limits.import_time, self.limits.import_time)
        if loaded.ok:
            return None
        self.close(wait=True)
        self.load_failure = loaded
        return loaded

    def _send(self, request, count=None):
        """Write a request and wake the child; its id, or a CallOutcome if it died.
        ``count``: ``request`` is the JSON list of that many; their ids."""
        first = self._next_id + 1
        self._next_id += count or 1
        rids = [f"{n:06d}" for n in range(first, self._next_id + 1)]
        try:
            if not self.channel.send(rids[0], request, rids[1:]):   # a file or link planted
                return CallOutcome(Status.BAD_ANSWER, detail=(
                    REQUESTS_UNREAD if self.channel.broken else FOLDER_TAMPERED))
        except (BrokenPipeError, OSError):
            return self._crashed()
        return rids if count else rids[0]

    def _await(self, rid, deadline, seconds=None):
        limit = self.limits.answer + 2 * self.limits.output + 65536
        waited = self.channel.wait(deadline, self.child.exited, limit)
        if waited is Waited.ANSWER:
            return self._unstaged(self.channel.read_answer(rid, limit))
        if waited is Waited.EXITED:
            return self._crashed()
        if waited is Waited.DISK:
            return CallOutcome.crashed(Crash.over_limit("disk", self.limits.tmp))
        return CallOutcome(Status.TIMEOUT, detail=f"{seconds or self.limits.time:g} s")

    def _crashed(self):
        """The outcome of a child that died: its Crash, and for a signal or an exit of
        its own, the end of its console (shown to whoever reads the log, never judged)."""
        crash = self.child.crash()
        output = self.channel.console_tail() if crash.kind in ("signal", "exit") else ""
        return self._unstaged(CallOutcome.crashed(crash, output=output))

    def _unstaged(self, outcome: CallOutcome) -> CallOutcome:
        """The student's own paths where the child printed (or raised with) the paths of
        the staged copy it runs (``.../files/home/ana/day3/attention.py``)."""
        staged = str(self.folder.files)
        message = outcome.error.get("message") if outcome.error else None
        if staged not in outcome.output and not (isinstance(message, str) and staged in message):
            return outcome
        error = dict(outcome.error)
        if isinstance(message, str):
            error["message"] = message.replace(staged, "")
        return dataclasses.replace(outcome, output=outcome.output.replace(staged, ""),
                                   error=error)
