"""One student module running in a child process, called through files.

The parent writes ``req-ID.json`` into the child's private folder and the id
on the child's stdin; the child writes ``ans-ID.json`` and pokes a pipe.  The
parent reads only that answer file, size-capped and decoded by the strict
wire module; the child's exit code and console output are never results.
A hang, crash or limit kills the whole process group; the next call starts a
fresh child, so one bad call costs only its own check.
"""

import dataclasses
import json
import os
import select
import shutil
import signal
import stat
import subprocess
import tempfile
import time
from pathlib import Path

from . import sandbox, wire
from .child_main import EXIT_OUT_OF_MEMORY
from .limits import Limits
from .run_outcome import CallOutcome, Crash, Status, outcome_from_answer

LIVE_CHILDREN = set()   # pids of every student process this grader has running
RUNTIME_FILES = {"_attn_grade_wire.py": "wire.py", "_attn_grade_child.py": "child_main.py"}
MAX_RESTARTS = 3
SIZE_CHECK_EVERY = 0.2   # seconds between checks of the work folder's size
MAX_WORK_ENTRIES = 10_000


class RunFolder:
    """A private temporary folder for one grading run, removed on close.

    With a uid of its own (``plan.identity``) the folder is root's, group the
    run's gid, mode 0750: the run's children can read the runtime files and the
    copy of the submission, no other user (another student's run) can enter.
    Closing it also releases the run's uid (kills what still runs as it).
    """

    def __init__(self, plan=None):
        sandbox.become_subreaper()
        self.plan = plan or sandbox.Plan("none", "none", "none")
        self.identity = self.plan.identity
        self.root = Path(tempfile.mkdtemp(prefix="attn-grade-"))
        self.runtime = self.root / "runtime"
        self.runtime.mkdir()
        for target, source in RUNTIME_FILES.items():
            shutil.copyfile(Path(__file__).with_name(source), self.runtime / target)
        if self.identity is not None:
            for path in (self.root, self.runtime, *self.runtime.iterdir()):
                self._share(path)
        self._count = 0
        self._staged = {}

    def _share(self, path):
        """Root's, readable by the run's gid only (never writable by the child)."""
        os.chown(path, 0, self.identity.gid, follow_symlinks=False)
        if not path.is_symlink():
            os.chmod(path, 0o750 if path.is_dir() else 0o640)

    def stage(self, *paths):
        """Folders as the child should see them (the submission, the public folder).

        With a uid of its own: copies readable by that uid alone (links kept as
        links, special files left out), under ``files/`` at their absolute paths,
        so a solution that finds ``../../exercises/SET`` from its own folder still
        does.  Without one, the folders themselves.
        """
        paths = [os.path.realpath(p) for p in paths]
        if self.identity is None:
            return paths
        files = self.root / "files"
        for path in sorted(paths, key=len):
            if any(path == done or path.startswith(done + os.sep) for done in self._staged):
                continue
            target = files / path.lstrip(os.sep)
            self._make_parents(target.parent)
            _copy_tree(Path(path), target)
            for copied in [target, *target.rglob("*")]:
                self._share(copied)
            self._staged[path] = str(target)
        return [str(files / p.lstrip(os.sep)) for p in paths]

    def _make_parents(self, folder):
        missing = []
        while not folder.exists():
            missing.append(folder)
            folder = folder.parent
        for path in reversed(missing):
            path.mkdir()
            self._share(path)

    def new_workdir(self):
        self._count += 1
        path = self.root / f"work-{self._count}"
        path.mkdir(mode=0o700)
        if self.identity is not None:
            os.chown(path, self.identity.uid, self.identity.gid)
        return path

    def close(self):
        self.plan.release()
        shutil.rmtree(self.root, ignore_errors=True)


def _copy_tree(source, target):
    target.mkdir(mode=0o750)
    for entry in os.scandir(source):
        dest = target / entry.name
        if entry.is_symlink():
            os.symlink(os.readlink(entry.path), dest)
        elif entry.is_dir(follow_symlinks=False):
            _copy_tree(Path(entry.path), dest)
        elif entry.is_file(follow_symlinks=False):
            shutil.copyfile(entry.path, dest, follow_symlinks=False)


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
        self.submission = str(Path(submission).resolve())
        self.proc = None
        self.workdir = None
        self.restarts = 0
        self.load_failure = None
        self._next_id = 0
        self._pending_load = None
        if not (Path(self.submission) / f"{module}.py").is_file():
            self.load_failure = CallOutcome(Status.MISSING_FILE, detail=f"{module}.py")

    # ------------------------------------------------------------ lifecycle
    def _start(self):
        submission, *public = self.folder.stage(self.submission, *self.public)
        self.workdir = self.folder.new_workdir()
        self._dir_fd = os.open(self.workdir, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
        notify_r, notify_w = os.pipe()
        job = {"submission": submission, "module": self.module,
               "output_limit": self.limits.output, "answer_limit": self.limits.answer,
               "library_paths": sandbox.library_paths(), "notify_fd": notify_w,
               "preload": list(self.preload)}
        self._write_new("job.json", json.dumps(job).encode())
        console = open(self.workdir / "console.log", "wb")
        argv = sandbox.command(self.plan, str(self.folder.runtime / "_attn_grade_child.py"),
                               str(self.workdir), submission, str(self.folder.runtime),
                               self.limits, public)
        try:
            self.proc = subprocess.Popen(
                argv, cwd=self.workdir, stdin=subprocess.PIPE, stdout=console,
                stderr=subprocess.STDOUT, pass_fds=(notify_w,),
                env=sandbox.child_env(str(self.workdir)), start_new_session=True,
                preexec_fn=sandbox.preexec(self.plan, self.limits))
        except BaseException:
            os.close(notify_r)
            os.close(self._dir_fd)
            shutil.rmtree(self.workdir, ignore_errors=True)
            raise
        finally:
            os.close(notify_w)
            console.close()
        LIVE_CHILDREN.add(self.proc.pid)
        self.notify = notify_r

    def close(self):
        """Kill the child and everything it started; delete its work folder."""
        if self.proc is None:
            return
        try:
            os.killpg(self.proc.pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass
        self.proc.kill()
        self.proc.wait()
        LIVE_CHILDREN.discard(self.proc.pid)
        try:
            self.proc.stdin.close()
        except OSError:
            pass
        os.close(self.notify)
        os.close(self._dir_fd)
        self.proc = None
        sandbox.reap_strays(LIVE_CHILDREN)
        shutil.rmtree(self.workdir, ignore_errors=True)

    # ------------------------------------------------------------ calls
    def call(self, function, args=(), kwargs=None):
        """Run ``module.function(*args, **kwargs)`` in the child."""
        ready = self._ensure_loaded()
        if ready is not None:
            return ready
        request = {"op": "call", "function": function, "args": wire.encode(list(args)),
                   "kwargs": wire.encode(dict(kwargs or {}))}
        outcome = self._request(request)
        if outcome.ok:   # judged here, from what was sent, not by the child's own verdict
            sent = wire.digest(request["args"], request["kwargs"])
            outcome = dataclasses.replace(outcome, mutated_args=outcome.inputs_digest != sent)
        if outcome.status in (Status.TIMEOUT, Status.CRASHED, Status.BAD_ANSWER):
            self.close()
        return outcome

    def prestart(self):
        """Start the child and its import now, to overlap with other work."""
        if self.load_failure is None and self.proc is None:
            try:
                self._start()
            except BlockingIOError:   # RLIMIT_NPROC: the run's uid has too many processes
                self._pending_load = CallOutcome.crashed(
                    Crash.over_limit("processes", self.limits.processes))
                return
            self._pending_load = self._send({"op": "load"})

    def _ensure_loaded(self):
        if self.load_failure is not None:
            return self.load_failure
        if self.proc is not None and self._pending_load is None:
            return None
        if self.proc is None:
            if self.restarts >= MAX_RESTARTS:
                return CallOutcome(Status.SKIPPED,
                                   detail=f"the process was restarted {MAX_RESTARTS} times")
            if self._next_id:
                self.restarts += 1
            self.prestart()
        rid, self._pending_load = self._pending_load, None
        loaded = rid if isinstance(rid, CallOutcome) else self._await(
            rid, time.monotonic() + self.limits.import_time, self.limits.import_time)
        if loaded.ok:
            return None
        self.close()
        self.load_failure = loaded
        return loaded

    def _request(self, request):
        rid = self._send(request)
        if isinstance(rid, CallOutcome):
            return rid
        return self._await(rid, time.monotonic() + self.limits.time)

    def _send(self, request):
        """Write a request and wake the child; its id, or a CallOutcome if it died."""
        self._next_id += 1
        rid = f"{self._next_id:06d}"
        try:
            self._write_new(f"req-{rid}.json", json.dumps(request, allow_nan=False).encode())
        except OSError:   # the child planted a file or link under that name
            return CallOutcome(Status.BAD_ANSWER, detail="the work folder was tampered with")
        try:
            self.proc.stdin.write(f"{rid}\n".encode())
            self.proc.stdin.flush()
        except (BrokenPipeError, OSError):
            return self._crashed()
        return rid

    def _write_new(self, name, data):
        """Create a file in the child's folder; never through a link, never over a file."""
        fd = os.open(name, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC,
                     0o644, dir_fd=self._dir_fd)
        try:
            os.write(fd, data)
            if self.folder.identity is not None:
                os.fchown(fd, self.folder.identity.uid, self.folder.identity.gid)
        finally:
            os.close(fd)

    def _read_private(self, name, limit, tail=False):
        """Read at most ``limit`` bytes of a regular file of the child's folder (no links)."""
        fd = os.open(name, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC, dir_fd=self._dir_fd)
        with os.fdopen(fd, "rb") as f:
            info = os.fstat(f.fileno())
            if not stat.S_ISREG(info.st_mode):
                raise OSError("not a regular file")
            if info.st_size > limit and not tail:
                raise OverflowError(info.st_size)
            f.seek(max(0, info.st_size - limit) if tail else 0)
            return f.read(limit)

    def _exists(self, name):
        try:
            os.stat(name, dir_fd=self._dir_fd, follow_symlinks=False)
            return True
        except OSError:
            return False

    def _await(self, rid, deadline, seconds=None):
        answer = f"ans-{rid}.json"
        next_size_check = time.monotonic() + SIZE_CHECK_EVERY
        while True:
            if self._exists(answer):
                return self._over_disk_cap() or self._read_answer(rid)
            if self.proc.poll() is not None:
                return self._read_answer(rid) if self._exists(answer) else self._crashed()
            now = time.monotonic()
            if now >= next_size_check:
                over = self._over_disk_cap()
                if over:
                    return over
                next_size_check = now + SIZE_CHECK_EVERY
            remaining = deadline - now
            if remaining <= 0:
                return CallOutcome(Status.TIMEOUT,
                                   detail=f"{seconds or self.limits.time:g} s")
            readable, _, _ = select.select([self.notify], [], [], min(remaining, 0.05))
            if readable and not os.read(self.notify, 4096):
                time.sleep(min(remaining, 0.01))  # pipe closed: keep polling

    def _over_disk_cap(self):
        """A crash outcome if the work folder holds more than the scratch cap allows."""
        if self.level == "none":
            return None
        cap = self.limits.tmp + sandbox.file_size_cap(self.limits)
        used, entries = _disk_usage(self._dir_fd, cap, MAX_WORK_ENTRIES)
        if used > cap or entries > MAX_WORK_ENTRIES:
            return CallOutcome.crashed(Crash.over_limit("disk", self.limits.tmp))
        return None

    def _crashed(self):
        self.proc.wait()
        code = self.proc.returncode
        console = self._console_tail()
        if self.level == "bubblewrap" and 128 < code < 128 + 65:
            code = 128 - code   # bwrap reports its child's signal N as exit 128 + N
        if code < 0:
            sig = signal.Signals(-code)
            if sig == signal.SIGXCPU:
                return CallOutcome.crashed(Crash.over_limit("cpu", self.limits.cpu))
            return CallOutcome.crashed(Crash.by_signal(sig.name), output=console)
        if code == EXIT_OUT_OF_MEMORY:   # child_main: a MemoryError outside any call
            return CallOutcome.crashed(Crash.over_limit("memory", self.limits.memory))
        return CallOutcome.crashed(Crash.exited(code), output=console)

    def _console_tail(self, limit=4000):
        try:
            return self._read_private("console.log", limit, tail=True).decode("utf-8", "replace")
        except OSError:
            return ""

    def _read_answer(self, rid):
        name = f"ans-{rid}.json"
        try:
            text = self._read_private(name, self.limits.answer + 2 * self.limits.output + 65536)
            return outcome_from_answer(json.loads(text))
        except OverflowError:
            return CallOutcome(Status.TOO_LARGE, detail="answer file over the size cap")
        except (OSError, ValueError, RecursionError, TypeError, wire.WireError) as exc:
            return CallOutcome(Status.BAD_ANSWER, detail=str(exc)[:200])
        finally:
            for done in (name, f"req-{rid}.json"):   # read once: free the disk now
                try:
                    os.unlink(done, dir_fd=self._dir_fd)
                except OSError:
                    pass


def _disk_usage(dir_fd, cap, max_entries):
    """(bytes on disk, entries) under a folder, never following links; stops past a cap."""
    used, entries, stack = 0, 0, [os.dup(dir_fd)]
    try:
        while stack:
            fd = stack.pop()
            try:
                with os.scandir(fd) as it:
                    for entry in it:
                        entries += 1
                        try:
                            info = entry.stat(follow_symlinks=False)
                        except OSError:
                            continue
                        used += info.st_blocks * 512
                        if entry.is_dir(follow_symlinks=False):
                            try:
                                stack.append(os.open(entry.name, os.O_RDONLY | os.O_DIRECTORY
                                                     | os.O_NOFOLLOW | os.O_CLOEXEC, dir_fd=fd))
                            except OSError:
                                pass
                        if used > cap or entries > max_entries:
                            return used, entries
            finally:
                os.close(fd)
    finally:
        for fd in stack:
            os.close(fd)
    return used, entries
