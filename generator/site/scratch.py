"""Temporary folders of a build and the processes that write them.

A build writes its languages into folders beside ``site/`` whose names carry the id of the process
that made them (``site.tmp-<pid>``, ``site.tmp-<pid>-<lang>``), and the preview builds into a folder
of the system's temporary directory (``whichgpu-serve-<pid>-*``). What a process leaves when it
stops is removed by the process itself when it can (on an error, Ctrl-C or SIGTERM), and otherwise
(SIGKILL, a power cut) by the next build, which removes the folders of processes that no longer run.

The forked workers of a build end with the process that started them: on Linux the kernel kills a
worker when its parent dies (``PR_SET_PDEATHSIG``); elsewhere a thread of the worker watches its
parent's id and ends the worker when the parent is gone.

``site/`` itself is replaced by exchanging it with the new tree in one step where the system can
(Linux' ``renameat2`` with ``RENAME_EXCHANGE``): there is a ``site/`` at every moment, and it stays
a plain folder. Elsewhere it is two renames, with an instant between them when there is none.
"""
from __future__ import annotations

import contextlib
import ctypes
import errno
import os
import platform
import re
import shutil
import signal
import sys
import tempfile
import threading
from pathlib import Path

SERVE_PREFIX = "whichgpu-serve-"


# ------------------------------------------------------------------------------ processes

def running(pid: int) -> bool:
    """Whether a process of this id runs (one of another user counts: it is not ours to remove).
    Where this cannot be asked without sending a signal (Windows), every process counts as running."""
    if os.name == "nt":
        return True
    if pid <= 0:
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def remove_leftovers(folder: Path, pattern: re.Pattern) -> list[Path]:
    """Remove the entries of ``folder`` whose name ``pattern`` matches and whose ``pid`` group names
    a process that no longer runs (nor this one). Returns those removed."""
    removed = []
    try:
        entries = list(os.scandir(folder))
    except OSError:
        return removed
    for entry in entries:
        match = pattern.fullmatch(entry.name)
        if match is None:
            continue
        pid = int(match.group("pid"))
        if pid == os.getpid() or running(pid):
            continue
        path = Path(entry.path)
        if entry.is_dir(follow_symlinks=False):
            shutil.rmtree(path, ignore_errors=True)
        else:
            with contextlib.suppress(OSError):
                path.unlink()
        removed.append(path)
    return removed


def site_leftovers(site: Path) -> re.Pattern:
    """The names of what a build of ``site`` makes beside it (see the module's docstring)."""
    return re.compile(re.escape(site.name) + r"\.(?:tmp|old)-(?P<pid>\d+)(?:-[A-Za-z_-]+)?")


class Terminated(SystemExit):
    """SIGTERM, raised in the main thread, so that what is in progress undoes itself on the way out."""

    def __init__(self):
        super().__init__(128 + signal.SIGTERM)


def _raise_terminated(signum, frame):
    raise Terminated()


@contextlib.contextmanager
def exit_on_sigterm():
    """SIGTERM raises :class:`Terminated` (a SystemExit) in the main thread while this lasts, as
    Ctrl-C raises KeyboardInterrupt: ``finally`` blocks and handlers of BaseException run. Outside
    the main thread, or when a handler of the process' own is set, nothing changes."""
    if threading.current_thread() is not threading.main_thread() or signal.getsignal(signal.SIGTERM) not in (
            signal.SIG_DFL, None):
        yield
        return
    signal.signal(signal.SIGTERM, _raise_terminated)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, signal.SIG_DFL)


PR_SET_PDEATHSIG = 1


def die_with_parent(parent: int) -> None:
    """Run first in a forked worker (``parent``: the id of the process that forks it). The worker
    is killed when its parent dies; Ctrl-C in the terminal is left to the parent (which stops its
    workers), and SIGTERM ends the worker at once."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    if not _kernel_kills_orphan():
        threading.Thread(target=_watch_parent, args=(parent,), name="parent-watch", daemon=True).start()
    if os.getppid() != parent:  # the parent died before the worker could ask
        os._exit(1)


def _kernel_kills_orphan() -> bool:
    """Ask Linux to send SIGKILL to this process when its parent dies; False where it cannot."""
    if not sys.platform.startswith("linux"):
        return False
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        return libc.prctl(PR_SET_PDEATHSIG, int(signal.SIGKILL), 0, 0, 0) == 0
    except (OSError, AttributeError):
        return False


def _watch_parent(parent: int, every: float = 0.5) -> None:
    """End this process once its parent is gone (it is then adopted: another parent id)."""
    stop = threading.Event()
    while not stop.wait(every):
        if os.getppid() != parent:
            os._exit(1)


def _meminfo_kib(key: str) -> int | None:
    try:
        for line in Path("/proc/meminfo").read_text(encoding="ascii").splitlines():
            if line.startswith(key + ":"):
                return int(line.split()[1])
    except (OSError, ValueError, IndexError):
        pass
    return None


def _resident_kib() -> int | None:
    try:
        return int(Path("/proc/self/statm").read_text(encoding="ascii").split()[1]) * os.sysconf("SC_PAGE_SIZE") // 1024
    except (OSError, ValueError, IndexError):
        return None


def workers_that_fit(wanted: int, available_kib: int | None = None, resident_kib: int | None = None) -> int:
    """How many of ``wanted`` forked workers the memory holds: a worker shares this process's pages
    until it writes them, and a language's build comes to about as much again of its own, so each is
    counted at this process's resident size against the memory the system still has available. At
    least one; all of them where the system does not say (no /proc/meminfo)."""
    available = _meminfo_kib("MemAvailable") if available_kib is None else available_kib
    resident = _resident_kib() if resident_kib is None else resident_kib
    if not available or not resident:
        return max(1, wanted)
    return max(1, min(wanted, available // resident))


def stop_workers(pool) -> None:
    """Kill the worker processes of a ``concurrent.futures.ProcessPoolExecutor`` and drop what it
    had not started: a build that stops (an error, Ctrl-C, SIGTERM) does not wait for its
    languages' builds to finish."""
    processes = list((getattr(pool, "_processes", None) or {}).values())
    for process in processes:
        with contextlib.suppress(OSError, ValueError, AttributeError):
            process.kill()
    pool.shutdown(wait=True, cancel_futures=True)


# ------------------------------------------------------------------------------ folders

RENAME_EXCHANGE = 2
AT_FDCWD = -100
_SYSCALL_RENAMEAT2 = {"x86_64": 316, "aarch64": 276, "arm64": 276, "riscv64": 276, "ppc64le": 357, "s390x": 347,
                      "i686": 353, "i386": 353}


def _renameat2():
    """libc's ``renameat2`` (glibc 2.28 and later), else the system call itself on a known
    architecture, as a function of (old, new, flags) that returns 0 or -1 with errno set; None
    outside Linux."""
    if not sys.platform.startswith("linux"):
        return None
    try:
        libc = ctypes.CDLL(None, use_errno=True)
    except OSError:
        return None
    call = getattr(libc, "renameat2", None)
    if call is not None:
        call.argtypes = [ctypes.c_int, ctypes.c_char_p, ctypes.c_int, ctypes.c_char_p, ctypes.c_uint]
        call.restype = ctypes.c_int
        return lambda old, new, flags: call(AT_FDCWD, old, AT_FDCWD, new, flags)
    number = _SYSCALL_RENAMEAT2.get(platform.machine())
    if number is None or not hasattr(libc, "syscall"):
        return None
    syscall = libc.syscall
    syscall.restype = ctypes.c_long
    return lambda old, new, flags: syscall(ctypes.c_long(number), ctypes.c_int(AT_FDCWD), ctypes.c_char_p(old),
                                           ctypes.c_int(AT_FDCWD), ctypes.c_char_p(new), ctypes.c_uint(flags))


_RENAMEAT2 = _renameat2()


def exchange_available() -> bool:
    """Whether this system has the call that exchanges two folders (a file system may still refuse it)."""
    return _RENAMEAT2 is not None


def exchange(a: Path, b: Path) -> bool:
    """Exchange two existing folders' places in one step. False where the system or the file
    system cannot (nothing changed then)."""
    if _RENAMEAT2 is None:
        return False
    if _RENAMEAT2(os.fsencode(a), os.fsencode(b), RENAME_EXCHANGE) == 0:
        return True
    err = ctypes.get_errno()
    if err in (errno.EINVAL, errno.ENOSYS, errno.ENOTSUP, errno.EOPNOTSUPP, errno.EXDEV, errno.EPERM):
        return False
    raise OSError(err, os.strerror(err), str(a), None, str(b))


def swap_in(new: Path, target: Path) -> None:
    """Make the folder ``new`` the folder ``target``; the tree ``target`` held is removed. Where
    the two can be exchanged in one step, ``target`` exists at every moment."""
    if target.is_dir() and not target.is_symlink() and exchange(new, target):
        shutil.rmtree(new, ignore_errors=True)  # now the old tree; a kill here leaves it to the next build
        return
    old = target.with_name(f"{target.name}.old-{os.getpid()}")
    if target.exists() or target.is_symlink():
        target.rename(old)
    new.rename(target)
    if old.exists():
        shutil.rmtree(old, ignore_errors=True)


# ------------------------------------------------------------------------------ the preview's folder

def serve_leftovers() -> re.Pattern:
    return re.compile(re.escape(SERVE_PREFIX) + r"(?P<pid>\d+)-.*")


@contextlib.contextmanager
def serve_folder():
    """A folder of the system's temporary directory for the preview's site, removed when the
    preview stops: normally, on Ctrl-C or on SIGTERM (and, after a SIGKILL, by the next preview)."""
    remove_leftovers(Path(tempfile.gettempdir()), serve_leftovers())
    folder = Path(tempfile.mkdtemp(prefix=f"{SERVE_PREFIX}{os.getpid()}-"))
    try:
        with exit_on_sigterm():
            yield folder
    finally:
        shutil.rmtree(folder, ignore_errors=True)
