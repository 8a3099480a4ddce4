"""The system calls a student's process may not make, as a seccomp filter.

No exercise needs the kernel's keyrings, new namespaces, mounts, SysV IPC or
message queues, a look into another process, or the kernel's own surfaces (BPF,
perf, userfaultfd, io_uring, modules, kexec); several of them keep state per uid
beyond any process, which would be a channel from one student to the next.  Each
is refused with EPERM (``clone3`` with ENOSYS: its flags sit in memory a filter
cannot read, and the C library then falls back to ``clone``, whose namespace flags
are refused).  ``sched_setaffinity`` too: a pinned worker's students stay on its
CPUs (``instructor.batch.pin_cpus``).

The filter is written with libseccomp (the system's library, through ``pyseccomp``),
which knows each architecture's numbers and its compat ABIs (i386 and x32 on
x86_64, arm on aarch64); it is compiled once on the trusted side and kept on disk,
and the sandbox's template installs the compiled program (``inside.confine``) before
any student code runs, for itself and every process it forks.
"""

import errno
import functools
import hashlib
import os
import platform
import tempfile

POLICY_VERSION = "1"

REFUSED = (
    # the kernel's keyrings: kept per uid for days (the persistent keyring), beyond any run
    "keyctl", "add_key", "request_key",
    # namespaces, mounts, another process's namespaces or root
    "unshare", "setns", "mount", "umount2", "pivot_root", "chroot", "open_tree",
    "move_mount", "fsopen", "fsconfig", "fsmount", "fspick", "mount_setattr",
    # SysV IPC and POSIX message queues: kept per IPC namespace, beyond any process
    "ipc", "shmget", "shmat", "shmdt", "shmctl", "msgget", "msgsnd", "msgrcv", "msgctl",
    "semget", "semop", "semtimedop", "semctl",
    "mq_open", "mq_unlink", "mq_timedsend", "mq_timedreceive", "mq_notify", "mq_getsetattr",
    # looking into, or steering, another process
    "ptrace", "process_vm_readv", "process_vm_writev", "pidfd_getfd", "kcmp",
    # the kernel's own surfaces
    "bpf", "perf_event_open", "userfaultfd", "io_uring_setup", "io_uring_enter",
    "io_uring_register", "kexec_load", "kexec_file_load", "init_module", "finit_module",
    "delete_module", "acct", "swapon", "swapoff", "reboot", "syslog", "quotactl",
    "lookup_dcookie", "open_by_handle_at", "name_to_handle_at", "fanotify_init",
    # a pinned worker's CPUs: no child may leave them
    "sched_setaffinity",
)
NOT_THERE = ("clone3",)   # ENOSYS: the C library falls back to clone
# clone(2)'s flags that make a namespace (its first argument on every architecture here)
NAMESPACE_FLAGS = {"CLONE_NEWNS": 0x00020000, "CLONE_NEWCGROUP": 0x02000000,
                   "CLONE_NEWUTS": 0x04000000, "CLONE_NEWIPC": 0x08000000,
                   "CLONE_NEWUSER": 0x10000000, "CLONE_NEWPID": 0x20000000,
                   "CLONE_NEWNET": 0x40000000}
# the ABIs a process of this machine may call the kernel through, besides its own
COMPAT = {"x86_64": ("X86", "X32"), "aarch64": ("ARM",)}


def program() -> bytes | None:
    """The filter as a classic BPF program (8 bytes an instruction), or None where it
    cannot be built (no libseccomp): the report then says so (``sandbox.plan``)."""
    return _program(platform.machine())


@functools.cache
def _program(machine: str) -> bytes | None:
    from ..course import cache

    name = _cache_name(machine)
    if name is not None:
        entry = cache.read(name)
        if entry is not None and type(entry.get("program")) is bytes:
            return entry["program"]
    built = _compile(machine)
    if built is not None and name is not None:
        cache.write(name, {"program": built})
    return built


def _cache_name(machine: str) -> str | None:
    """The cache entry of the compiled program: this policy, this machine and this
    libseccomp (its file, size and time); None where no libseccomp is found."""
    library = _libseccomp_file()
    if library is None:
        return None
    info = os.stat(library)
    key = repr((POLICY_VERSION, REFUSED, NOT_THERE, sorted(NAMESPACE_FLAGS.items()), machine,
                os.path.realpath(library), info.st_size, info.st_mtime_ns, info.st_ino))
    return "seccomp-" + hashlib.sha256(key.encode()).hexdigest()[:24]


LIBRARY_DIRS = ("/lib", "/usr/lib", "/lib64", "/usr/lib64", "/usr/local/lib")


def _libseccomp_file() -> str | None:
    """The libseccomp.so.2 the dynamic loader would find, by a look in the usual folders
    (ctypes.util.find_library runs ldconfig: tens of milliseconds each grading)."""
    return _library_file("libseccomp.so.2")


def _library_file(name: str) -> str | None:
    """The shared library ``name`` in the usual folders (of this machine's triplet)."""
    triplets = [f"{platform.machine()}-linux-gnu", ""]
    for top in LIBRARY_DIRS:
        for sub in triplets:
            path = os.path.join(top, sub, name)
            if os.path.exists(path):
                return path
    return None


def _import_pyseccomp():
    """pyseccomp, imported with the libraries it looks up (libc, libseccomp) found the
    way _libseccomp_file finds them: its own ctypes.util.find_library runs ldconfig
    twice, tens of milliseconds of a cold grading (a fresh container compiles the
    filter every time). A library not found so is looked up as pyseccomp would."""
    import ctypes.util

    known = {"seccomp": _libseccomp_file(), "c": _library_file("libc.so.6")}
    original = ctypes.util.find_library

    def find_library(name: str) -> str | None:
        return known.get(name) or original(name)

    ctypes.util.find_library = find_library
    try:
        import pyseccomp
    finally:
        ctypes.util.find_library = original
    return pyseccomp


def _compile(machine: str) -> bytes | None:
    """The policy compiled by libseccomp for ``machine`` and its compat ABIs."""
    try:
        seccomp = _import_pyseccomp()
    except (ImportError, RuntimeError, OSError):   # not installed, or no libseccomp
        return None
    action_eperm, action_enosys = seccomp.ERRNO(errno.EPERM), seccomp.ERRNO(errno.ENOSYS)
    rules = seccomp.SyscallFilter(seccomp.ALLOW)
    for arch in COMPAT.get(machine, ()):
        try:
            rules.add_arch(getattr(seccomp.Arch, arch))
        except OSError:   # a libseccomp that does not know it
            pass
    for name in REFUSED:
        _add(rules, action_eperm, name)
    for name in NOT_THERE:
        _add(rules, action_enosys, name)
    for flag in NAMESPACE_FLAGS.values():
        _add(rules, action_eperm, "clone", seccomp.Arg(0, seccomp.MASKED_EQ, flag, flag))
    with tempfile.TemporaryFile() as out:
        rules.export_bpf(out)
        out.seek(0)
        return out.read()


def _add(rules, action, name, *args) -> None:
    """One rule; a call this kernel's architecture does not have is left out."""
    try:
        rules.add_rule(action, name, *args)
    except (OSError, ValueError):   # unknown on every ABI of this machine
        pass
