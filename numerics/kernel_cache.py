"""Compiled kernels cached under a hash of the sources they are compiled from, so that an edit recompiles them.

numba's own on-disk cache (``cache=True``) keys a compiled function on the file that defines it (and on the
function's bytecode). A kernel also compiles in what it calls and the constants it reads from other
modules: after an edit of ``certified/fast/rounding.py`` numba went on serving the callers' old machine code,
and after a ``git pull`` a re-check could run code that is not in the tree. Here every kernel of the package
is cached in a folder named by :func:`source_key`: the SHA-256 of the kernel sources, namely every module of
``stumpcheck.numerics`` that imports numba and every module of the package that those import, transitively
(:func:`kernel_sources`; found by reading their ``import`` lines). Change one byte of any of them and the
key changes: every kernel compiles anew, into a new folder, on first use.

Where (:func:`cache_root`): numba's ``NUMBA_CACHE_DIR`` when it is set, else the user's cache folder
(``~/.cache/stumpcheck/kernels`` on Linux), else, where that cannot be written, the package's own
``__pycache__`` or the temporary folder. The key names the sources, not the installation, so a new
environment of the same tree (a fresh venv, an editable or a wheel install) finds the kernels an earlier
one compiled, and does not compile them again. numba's index inside the folder still checks its own
version, the function's bytecode, the argument types and the processor. Folders not used for
:data:`PRUNE_DAYS` days are removed when a new one is made.

:func:`install` puts :class:`TreeLocator` first among numba's cache locators; it is called when
``numba.core.caching`` is first imported in a process that has imported ``stumpcheck.numerics``
(:func:`install_when_numba_loads`, from the package's ``__init__``), so that numba is never imported
just to install it and every kernel module (a submodule, imported after its package) is covered.
"""

from __future__ import annotations

import functools
import hashlib
import os
import re
import sys
from pathlib import Path

__all__ = ["KERNEL_ROOT", "PRUNE_DAYS", "cache_root", "install", "install_when_numba_loads", "kernel_folder",
           "kernel_sources", "source_key"]

#: the folder of ``stumpcheck.numerics``: the kernels' sources live under it
KERNEL_ROOT = Path(__file__).resolve().parent
#: a key's folder not used for this many days is removed when a new key's folder is made
PRUNE_DAYS = 30

_NUMBA = re.compile(rb"^[ \t]*(?:import numba|from numba[ \t.])", re.M)
_IMPORT = re.compile(rb"^[ \t]*(?:from[ \t]+stumpcheck\.numerics((?:\.\w+)*)[ \t]+import[ \t]+(\([^)]*\)|[^\n]*)"
                     rb"|import[ \t]+stumpcheck\.numerics((?:\.\w+)*))", re.M)


def _modules(root: Path, texts: dict) -> dict[str, Path]:
    """Dotted name below the package ("" for the package itself) -> its file (a module or ``__init__.py``)."""
    names = {}
    for path in texts:
        parts = path.relative_to(root).with_suffix("").parts
        names[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = path
    return names


def _imports(text: bytes, modules: dict[str, Path]) -> set[Path]:
    """The package's modules named by the import lines of a module's source (a package's ``__init__`` when a
    name imported from it is not a module)."""
    found = set()
    for match in _IMPORT.finditer(text):
        module = (match.group(1) or match.group(3) or b"").decode().lstrip(".")
        listed = match.group(2).decode().split("#")[0].strip("() \t\n") if match.group(2) else ""
        names = [part.split()[0] for part in listed.replace("\n", " ").split(",") if part.split()]
        for name in names:
            found.add(modules.get(f"{module}.{name}".lstrip(".")) or modules.get(module))
        if not names:
            found.add(modules.get(module))
    found.discard(None)
    return found


def _sources(root: Path) -> dict[Path, bytes]:
    return {path: path.read_bytes() for path in sorted(root.rglob("*.py")) if "__pycache__" not in path.parts}


def kernel_sources(root: Path = KERNEL_ROOT) -> list[Path]:
    """The modules a compiled kernel of ``root``'s package can depend on: those that import numba and, transitively,
    the package's modules they import; sorted paths."""
    return sorted(_kernel_texts(root))


def _kernel_texts(root: Path) -> dict[Path, bytes]:
    texts = _sources(root)
    modules = _modules(root, texts)
    todo = [path for path, text in texts.items() if b"numba" in text and _NUMBA.search(text)]
    seen = set(todo)
    while todo:
        for target in _imports(texts[todo.pop()], modules):
            if target not in seen:
                seen.add(target)
                todo.append(target)
    return {path: texts[path] for path in seen}


@functools.lru_cache(maxsize=None)
def source_key(root: Path = KERNEL_ROOT) -> str:
    """SHA-256 (hex) of the kernel sources (:func:`kernel_sources`): each one's path below ``root`` and bytes."""
    digest = hashlib.sha256()
    for path, text in sorted(_kernel_texts(root).items()):
        digest.update(path.relative_to(root).as_posix().encode() + b"\0" + str(len(text)).encode() + b"\0" + text)
    return digest.hexdigest()


def _writable(folder: Path) -> bool:
    import tempfile

    try:
        folder.mkdir(parents=True, exist_ok=True)
        tempfile.TemporaryFile(dir=folder).close()
        return True
    except OSError:
        return False


@functools.lru_cache(maxsize=None)
def cache_root() -> Path:
    """The folder that holds one subfolder per source key (module doc); the first writable of the candidates."""
    import tempfile

    candidates = []
    configured = os.environ.get("NUMBA_CACHE_DIR")
    if configured:
        candidates.append(Path(configured) / "stumpcheck-kernels")
    if sys.platform == "win32":
        base = os.environ.get("LOCALAPPDATA")
    elif sys.platform == "darwin":
        base = str(Path.home() / "Library" / "Caches")
    else:
        base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    if base:
        candidates.append(Path(base) / "stumpcheck" / "kernels")
    candidates.append(KERNEL_ROOT / "__pycache__" / "stumpcheck-kernels")
    candidates.append(Path(tempfile.gettempdir()) / f"stumpcheck-kernels-{os.getuid() if hasattr(os, 'getuid') else 0}")
    for folder in candidates:
        if _writable(folder):
            return folder
    return candidates[-1]


@functools.lru_cache(maxsize=None)
def kernel_folder() -> Path:
    """This tree's folder: ``cache_root() / source_key()[:16]``, created and marked used (older ones pruned)."""
    folder = cache_root() / source_key()[:16]
    new = not folder.exists()
    folder.mkdir(parents=True, exist_ok=True)
    try:
        os.utime(folder)
    except OSError:
        pass
    if new:
        _prune(folder)
    return folder


def _prune(keep: Path) -> None:
    import shutil
    import time

    limit = time.time() - PRUNE_DAYS * 86400
    for other in keep.parent.iterdir():
        try:
            if other != keep and other.is_dir() and other.stat().st_mtime < limit:
                shutil.rmtree(other, ignore_errors=True)
        except OSError:
            pass


_LOCATOR: list = []


def install() -> None:
    """Put :class:`TreeLocator` first among numba's cache locators (imports numba's cache module; idempotent)."""
    from numba.core import caching

    if not _LOCATOR:
        _LOCATOR.append(_locator_class(caching))
    if _LOCATOR[0] not in caching.CacheImpl._locator_classes:
        caching.CacheImpl._locator_classes.insert(0, _LOCATOR[0])


def _locator_class(caching):
    class TreeLocator(caching._CacheLocator):
        """numba cache locator of the package's kernels: :func:`kernel_folder`, then the module's folder below
        the package; its source stamp is :func:`source_key` (other functions are left to numba's locators)."""

        def __init__(self, py_func, py_file: Path):
            self._lineno = py_func.__code__.co_firstlineno
            self._cache_path = str(kernel_folder() / py_file.parent.relative_to(KERNEL_ROOT))

        def get_cache_path(self):
            return self._cache_path

        def get_source_stamp(self):
            return source_key()

        def get_disambiguator(self):
            return str(self._lineno)

        @classmethod
        def from_function(cls, py_func, py_file):
            try:
                path = Path(py_file).resolve()
                path.relative_to(KERNEL_ROOT)
            except (OSError, ValueError):
                return None
            self = cls(py_func, path)
            try:
                self.ensure_cache_path()
            except OSError:
                return None
            return self

    return TreeLocator


class _AfterNumbaCaching:
    """A meta path finder that runs :func:`install` right after ``numba.core.caching`` is executed."""

    name = "numba.core.caching"

    def find_spec(self, fullname, path=None, target=None):
        if fullname != self.name:
            return None
        from importlib.machinery import PathFinder

        spec = PathFinder.find_spec(fullname, path)
        if spec is None or spec.loader is None or not hasattr(spec.loader, "exec_module"):
            return spec
        loader, execute = spec.loader, spec.loader.exec_module

        def exec_module(module):
            execute(module)
            install()
            if self in sys.meta_path:  # done: no more imports to look at
                sys.meta_path.remove(self)

        loader.exec_module = exec_module
        return spec


def install_when_numba_loads() -> None:
    """:func:`install` now if numba's cache module is loaded, else as soon as it is (without importing numba)."""
    if "numba.core.caching" in sys.modules:
        install()
    elif not any(isinstance(finder, _AfterNumbaCaching) for finder in sys.meta_path):
        sys.meta_path.insert(0, _AfterNumbaCaching())
