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

__all__ = ["MAX_ARRAY_BYTES", "available_memory", "require_memory", "check_writable_dir", "check_writable_file"]

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
    """InputError unless ``path`` can be written as a file: not a directory, its folder exists and is writable."""
    path = Path(path)
    if path.is_dir():
        raise InputError(f"{label}: cannot write {path}: it is a directory, not a file")
    folder = path.parent if str(path.parent) else Path(".")
    if not folder.is_dir():
        raise InputError(f"{label}: cannot write {path}: the folder {folder} does not exist")
    _probe(folder, label)
