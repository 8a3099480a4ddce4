"""Files the grader writes and reads: reports a reader never sees half of, and files in
folders a student controls, where every entry is hostile input.

In a student's folder nothing is written through a link (the file itself, its
temporary twin, or the folder of its own that holds it: ``.attn-grade/``), and nothing
is read before its size is known: ``write_in``, ``read_in`` and ``read_bounded``.
"""

import contextlib
import errno
import os
import secrets
import stat
from pathlib import Path

DIRECTORY = os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC


class NotRegular(OSError):
    """Not a regular file itself (a link, a folder, a device, a pipe)."""


class TooLarge(OSError):
    """Larger than the reader's limit, found before a byte of it was read."""


def write_atomic(path: str | os.PathLike[str], data: str | bytes) -> None:
    """Write text or bytes to ``path`` (one the user named) through a temporary file and
    a rename."""
    path = Path(path)
    tmp = path.with_name(path.name + ".tmp")
    if isinstance(data, bytes):
        tmp.write_bytes(data)
    else:
        tmp.write_text(data, encoding="utf-8")
    os.replace(tmp, path)


def read_bounded(path: str | os.PathLike[str], limit: int, dir_fd: int | None = None) -> bytes:
    """The bytes of the regular file ``path`` (relative to ``dir_fd`` if given), opened
    without following a link, refused (TooLarge) by its size before it is read, and
    read no further than ``limit`` whatever it grows to meanwhile."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC,
                     dir_fd=dir_fd)
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            raise NotRegular(errno.ELOOP, "a link", str(path)) from None
        raise
    with os.fdopen(fd, "rb") as f:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise NotRegular(errno.EINVAL, "not a regular file", str(path))
        if info.st_size > limit:
            raise TooLarge(errno.EFBIG, f"larger than {limit} bytes", str(path))
        data = f.read(limit + 1)
    if len(data) > limit:
        raise TooLarge(errno.EFBIG, f"larger than {limit} bytes", str(path))
    return data


def open_folder(folder: str | os.PathLike[str], own: str | None = None,
                create: bool = False) -> int:
    """A descriptor of ``folder`` (the one the user named), or of the grader's own folder
    ``own`` inside it (``.attn-grade``), made when ``create``; OSError (ELOOP) if that is a
    link: the grader's folder inside a student's is never followed elsewhere."""
    parent = os.open(folder, DIRECTORY)
    if own is None:
        return parent
    try:
        if create:
            try:
                os.mkdir(own, 0o755, dir_fd=parent)
            except FileExistsError:
                pass
        return os.open(own, DIRECTORY | os.O_NOFOLLOW, dir_fd=parent)
    finally:
        os.close(parent)


def read_in(folder: str | os.PathLike[str], file: str, limit: int,
            own: str | None = None) -> bytes:
    """``folder/[own/]file``, read as ``read_bounded`` does, through no link."""
    fd = open_folder(folder, own)
    try:
        return read_bounded(file, limit, dir_fd=fd)
    finally:
        os.close(fd)


def write_in(folder: str | os.PathLike[str], file: str, data: bytes,
             own: str | None = None) -> None:
    """Write ``folder/[own/]file`` atomically through no link: the folder ``own`` made if
    missing and never followed, a new temporary file of an unguessable name beside
    (O_EXCL: a planted one is never written), and a rename that replaces whatever is at
    ``file`` (a link too) instead of writing through it."""
    fd = open_folder(folder, own, create=True)
    try:
        tmp = f".{file}.{secrets.token_hex(8)}.tmp"
        out = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC,
                      0o644, dir_fd=fd)
        try:
            with os.fdopen(out, "wb") as f:
                f.write(data)
            os.rename(tmp, file, src_dir_fd=fd, dst_dir_fd=fd)
        except BaseException:
            with contextlib.suppress(OSError):
                os.unlink(tmp, dir_fd=fd)
            raise
    finally:
        os.close(fd)
