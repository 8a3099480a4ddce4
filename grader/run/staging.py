"""Copies of a student's folders as the run's children see them (``RunFolder.stage``),
and the removal of what a child may have locked (its work folder, the run folder).

A copy keeps links as links and leaves special files out; with a uid of the run's
own it is root's, readable by the run's gid only, never writable.  A folder with
more than MAX_STAGED_ENTRIES files is refused before any copy.
"""

import contextlib
import errno
import os
import shutil
import stat
from pathlib import Path

from ..errors import CourseError


def unlock(folder):
    """Give the grader's user its access to ``folder`` back (not through a link)."""
    with contextlib.suppress(OSError):
        if not os.path.islink(folder) and os.geteuid() == os.lstat(folder).st_uid:
            os.chmod(folder, 0o700)


def remove_tree(path):
    """rmtree, after giving back access to folders a child (same uid) locked; a link
    (a child's folder renamed and replaced) is removed, never followed."""
    if os.path.islink(path):
        with contextlib.suppress(OSError):
            os.unlink(path)
        return
    if os.geteuid() != 0:   # root needs no access given back
        unlock(path)
        for top, dirs, _ in os.walk(path):
            for name in dirs:
                unlock(os.path.join(top, name))
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


def check_size(path):
    """CourseError for a folder far larger than any submission (a home folder)."""
    count = 0
    for _, dirs, files in os.walk(path):
        count += len(dirs) + len(files)
        if count > MAX_STAGED_ENTRIES:
            raise CourseError(f"{path} holds more than {MAX_STAGED_ENTRIES} files and "
                              "folders: too many to be a submission",
                              hint="grade the folder that holds your stub files")


def sync_tree(source: str, target: str, gid: int | None) -> None:
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
            sync_tree(entry.path, dest, gid)
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


def share(path: str | Path, gid: int) -> None:
    """Root's, readable by the run's gid only (never writable by the child)."""
    os.chown(path, 0, gid, follow_symlinks=False)
    if not os.path.islink(path):
        os.chmod(path, 0o750 if os.path.isdir(path) else 0o640)


def copy_tree(source: str, target: str, gid: int | None) -> None:
    os.mkdir(target, 0o750)
    if gid is not None:
        share(target, gid)
    for entry in os.scandir(source):
        _copy_entry(entry, os.path.join(target, entry.name), gid)


def _copy_entry(entry: os.DirEntry, dest: str, gid: int | None) -> None:
    """One entry of a staged folder: links kept as links, special files left out."""
    if entry.is_symlink():
        os.symlink(os.readlink(entry.path), dest)
        if gid is not None:
            share(dest, gid)
    elif entry.is_dir(follow_symlinks=False):
        copy_tree(entry.path, dest, gid)
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
