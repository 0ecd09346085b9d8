"""stumpcheck: verified numerics and claim checks for arXiv:2610.07074.

The public API is :mod:`stumpcheck.api`; its names are importable from here too (``from stumpcheck import
loss``), each loaded when first used, so that ``import stumpcheck`` loads no numeric library (numpy, mpmath,
SymPy, python-flint). ``stumpcheck.__all__`` lists them. Everything not in ``stumpcheck.__all__`` or in a
subpackage's ``__all__`` is private by convention and may change without notice.

The library lives in :mod:`stumpcheck.theory` (SymPy derivations) and :mod:`stumpcheck.numerics`
(evaluation, corpora, training, certified enclosures, the flow); the checking layer holds the command line
(:mod:`stumpcheck.cli`), the lemmas and their checks (:mod:`stumpcheck.lemmas`), the claims C1–C9
(:mod:`stumpcheck.claims`), the public Hypothesis strategies (:mod:`stumpcheck.strategies`) and the verify
report (:mod:`stumpcheck.report`). ``stumpcheck.__version__`` is the installed distribution's version (the
source tree's pyproject.toml version when it is not installed).

Imported from the repository itself (its root is the current folder of ``python -c``, ``python -m`` or
pytest, or is on ``PYTHONPATH``), this file is the tree's ``stumpcheck/`` folder, and that folder holds
neither ``theory/`` nor ``numerics/``: pyproject.toml's ``package-dir`` maps them in only when the package
is installed. :func:`_map_tree_folders` then maps the tree's own ``theory/`` and ``numerics/`` to
``stumpcheck.theory`` and ``stumpcheck.numerics``, so that the tree's copy is a whole package whatever is
installed (editable or not, or nothing) and is never mixed with an installed copy's modules: the copy that
Python finds first on ``sys.path`` is the one that runs, all of it. An installed copy (its ``numerics/``
beside this file) maps nothing.
"""

import sys


class _TreeFolders:
    """Finds ``stumpcheck.theory`` and ``stumpcheck.numerics`` in the repository's top-level folders."""

    def __init__(self, folders: dict):
        self.folders = folders

    def find_spec(self, fullname, path=None, target=None):
        folder = self.folders.get(fullname)
        if folder is None:
            return None
        from importlib.util import spec_from_file_location

        return spec_from_file_location(fullname, f"{folder}/__init__.py", submodule_search_locations=[folder])


def _map_tree_folders() -> None:
    """In the repository's own ``stumpcheck/`` (not an installed copy): map its sibling ``theory/`` and
    ``numerics/`` into this package (module doc), ahead of any installed mapping."""
    import os

    here = os.path.dirname(os.path.abspath(__file__))
    if os.path.isdir(os.path.join(here, "numerics")):
        return  # an installed copy: its subpackages are inside it
    folders = {f"{__name__}.{name}": os.path.join(os.path.dirname(here), name) for name in ("theory", "numerics")}
    if not all(os.path.isfile(os.path.join(folder, "__init__.py")) for folder in folders.values()):
        return
    if not any(isinstance(finder, _TreeFolders) and finder.folders == folders for finder in sys.meta_path):
        sys.meta_path.insert(0, _TreeFolders(folders))


_map_tree_folders()

from stumpcheck.api import __all__ as _API  # noqa: E402  (after the mapping: api's imports need it)
from stumpcheck.numerics.lazy import lazy_exports  # noqa: E402

__all__ = list(_API)

_lazy_getattr, _lazy_dir = lazy_exports(__name__, dict.fromkeys(_API, "stumpcheck.api"))


def _version() -> str:
    """The installed distribution's version, else the source tree's (pyproject.toml), else "unknown"."""
    from importlib import metadata

    try:
        return metadata.version("stumpcheck")
    except metadata.PackageNotFoundError:
        import tomllib
        from pathlib import Path

        try:
            with open(Path(__file__).resolve().parent.parent / "pyproject.toml", "rb") as handle:
                return str(tomllib.load(handle)["project"]["version"])
        except (OSError, KeyError, tomllib.TOMLDecodeError):
            return "unknown"


def __getattr__(name):
    if name == "__version__":  # read when asked for: importlib.metadata is not needed to start the command line
        globals()["__version__"] = value = _version()
        return value
    return _lazy_getattr(name)


def __dir__():
    return sorted(set(_lazy_dir()) | {"__version__"})
