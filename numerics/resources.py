"""Resource limits checked before work starts: memory for large arrays, writable output places.

A request that cannot fit is refused with :class:`~stumpcheck.numerics.precision.InputError`
(one line, exit status 2 in the CLI) *before* anything is allocated or
computed, instead of a MemoryError after minutes of work.

Available memory is the smaller of the kernel's ``MemAvailable`` (Linux
``/proc/meminfo``; ``os.sysconf`` pages elsewhere) and the room left under the
process's address-space limit ``RLIMIT_AS`` (e.g. ``ulimit -v``). When neither
can be read, only the absolute cap :data:`MAX_ARRAY_BYTES` applies.
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

from stumpcheck.numerics.precision import InputError

__all__ = ["MAX_ARRAY_BYTES", "available_memory", "require_memory", "check_writable_dir", "check_writable_file",
           "check_output_files", "check_regular_input"]

#: no single request may ask for more than this, whatever the machine reports (64 GiB)
MAX_ARRAY_BYTES = 64 * 2 ** 30


def _mem_available() -> int | None:
    try:
        with open("/proc/meminfo", encoding="ascii") as handle:
            for line in handle:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        pass
    try:
        return os.sysconf("SC_AVPHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
    except (ValueError, OSError, AttributeError):
        return None


def _address_space_left() -> int | None:
    try:
        import resource
    except ImportError:  # not POSIX
        return None
    soft, _ = resource.getrlimit(resource.RLIMIT_AS)
    if soft == resource.RLIM_INFINITY:
        return None
    used = None
    try:
        with open("/proc/self/statm", encoding="ascii") as handle:
            used = int(handle.read().split()[0]) * os.sysconf("SC_PAGE_SIZE")
    except (OSError, ValueError, IndexError):
        used = 0
    return max(0, soft - used)


def available_memory() -> int | None:
    """Bytes this process can still allocate (the smaller of free memory and RLIMIT_AS room), or None."""
    known = [v for v in (_mem_available(), _address_space_left()) if v is not None]
    return min(known) if known else None


def require_memory(nbytes: int, what: str) -> None:
    """Raise InputError unless ``nbytes`` (an estimate of the peak) fits in memory and under MAX_ARRAY_BYTES."""
    nbytes = int(nbytes)
    if nbytes > MAX_ARRAY_BYTES:
        raise InputError(f"{what} needs about {_gib(nbytes)} of memory, above the limit {_gib(MAX_ARRAY_BYTES)}")
    free = available_memory()
    if free is not None and nbytes > free:
        raise InputError(f"{what} needs about {_gib(nbytes)} of memory; only {_gib(free)} is available")


def _gib(nbytes: int) -> str:
    return f"{nbytes / 2 ** 30:.3g} GiB"


def _probe(folder: Path, label: str) -> None:
    """Create and remove a temporary file in ``folder`` (an existing directory); InputError if that fails."""
    try:
        handle, name = tempfile.mkstemp(prefix=".stumpcheck-probe-", dir=folder)
    except OSError as exc:
        raise InputError(f"{label}: cannot write into {folder}: {exc.strerror or exc}") from None
    os.close(handle)
    os.unlink(name)


def _nearest_existing(path: Path) -> Path:
    current = path
    while not current.exists():
        if current.parent == current:
            break
        current = current.parent
    return current


def check_writable_dir(path, label: str) -> None:
    """InputError unless ``path`` is a writable directory or can be created as one (nothing is left behind).

    An existing folder is probed by writing a temporary file into it; a missing
    one by probing its nearest existing ancestor, which must be a directory.
    """
    path = Path(path)
    if path.exists():
        if not path.is_dir():
            raise InputError(f"{label}: cannot write into {path}: it exists and is not a directory")
        _probe(path, label)
        return
    ancestor = _nearest_existing(path.parent if str(path.parent) else Path("."))
    if not ancestor.is_dir():
        raise InputError(f"{label}: cannot create {path}: {ancestor} is not a directory")
    _probe(ancestor, label)


def check_writable_file(path, label: str) -> None:
    """InputError unless ``path`` can be written as a file: not a directory or another non-regular file (a FIFO
    would block the write), its folder exists and is writable."""
    path = Path(path)
    if path.is_dir():
        raise InputError(f"{label}: cannot write {path}: it is a directory, not a file")
    check_output_files(path.parent if str(path.parent) else Path("."), [path.name], label)  # a FIFO would block
    folder = path.parent if str(path.parent) else Path(".")
    if not folder.is_dir():
        raise InputError(f"{label}: cannot write {path}: the folder {folder} does not exist")
    _probe(folder, label)


def _kind(mode: int) -> str:
    import stat

    return ("a directory" if stat.S_ISDIR(mode) else "a FIFO (named pipe)" if stat.S_ISFIFO(mode)
            else "a socket" if stat.S_ISSOCK(mode) else "a device" if stat.S_ISCHR(mode) or stat.S_ISBLK(mode)
            else "not a regular file")


def check_output_files(folder, names, label: str) -> None:
    """InputError unless every file ``names`` in ``folder`` can be written as a regular file: where one exists, it
    is a regular file (a directory cannot be written, and opening a FIFO for writing blocks until a reader comes)
    and writable. Run with :func:`check_writable_dir` before any work, so that a run never ends unable to write
    its results."""
    import stat

    for name in names:
        path = Path(folder) / name
        try:
            mode = path.stat().st_mode
        except FileNotFoundError:
            continue
        except OSError as exc:
            raise InputError(f"{label}: cannot write {path}: {exc.strerror or exc}") from None
        if not stat.S_ISREG(mode):
            raise InputError(f"{label}: cannot write {path}: it is {_kind(mode)}, not a regular file")
        if not os.access(path, os.W_OK):
            raise InputError(f"{label}: cannot write {path}: permission denied")


def check_regular_input(path, label: str, max_bytes: int | None = None) -> None:
    """InputError unless ``path`` is a regular file (a FIFO would block the read, ``/dev/zero`` never end) of at
    most ``max_bytes`` bytes; checked before it is opened."""
    import stat

    path = Path(path)
    try:
        info = path.stat()
    except OSError as exc:
        raise InputError(f"{label}: cannot read {path}: {exc.strerror or exc}") from None
    if not stat.S_ISREG(info.st_mode):
        raise InputError(f"{label}: cannot read {path}: it is {_kind(info.st_mode)}, not a regular file")
    if max_bytes is not None and info.st_size > max_bytes:
        raise InputError(f"{label}: {path} has {info.st_size} bytes, more than the limit {max_bytes}")
