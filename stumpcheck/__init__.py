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
"""

from stumpcheck.api import __all__ as _API
from stumpcheck.numerics.lazy import lazy_exports

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
