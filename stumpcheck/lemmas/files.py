"""Loading a lemma from a user's file: ``stumpcheck verify --lemma FILE.py:NAME`` (:func:`load_lemma`), and
every lemma of a file (:func:`load_lemmas`, for the pytest plugin's lemma files).

:func:`load_lemma` imports the file by path (as a module of its own, never added to ``sys.path``) and
returns its :class:`~stumpcheck.lemmas.Lemma` ``NAME``. While it runs, the file's ``@lemma`` definitions are
kept out of the registry (they are checked only when named, and may reuse a built-in name). Everything that
can go wrong in the user's file (a missing name, an exception or ``sys.exit`` at import, a lemma refused by
its definition's checks) is bad input: :class:`~stumpcheck.numerics.precision.InputError`, one line. ``verify`` imports
the file in a child process (:mod:`stumpcheck.lemmas.process`), so that code at its top level that loops or
ends the process cannot hang or end the check silently.
"""

from __future__ import annotations

import importlib.util
import re
import sys
from pathlib import Path

from stumpcheck.numerics.precision import InputError
from stumpcheck.lemmas.definitions import _LOADING_USER_FILE, Lemma, _short_text, registered

__all__ = ["load_lemma", "load_lemmas"]


def _split(spec) -> tuple[str, str]:
    if not isinstance(spec, str) or ":" not in spec:
        raise InputError(f"--lemma must be FILE.py:NAME, got {spec!r}")
    path_text, _, name = spec.rpartition(":")
    if not path_text or not name:
        raise InputError(f"--lemma must be FILE.py:NAME, got {spec!r}")
    return path_text, name


def _import_file(path_text: str, label: str = "--lemma"):
    """The module of the file ``path_text``, imported by path with its ``@lemma`` entries kept out of the registry."""
    path = Path(path_text)
    if not path.is_file():
        raise InputError(f"{label}: no such file {path_text!r}")
    module_name = "stumpcheck_user_lemma_" + re.sub(r"\W", "_", str(path.resolve()))
    module_spec = importlib.util.spec_from_file_location(module_name, path)
    if module_spec is None or module_spec.loader is None:
        raise InputError(f"{label}: cannot import {path_text!r} as a Python file")
    module = importlib.util.module_from_spec(module_spec)
    sys.modules[module_name] = module
    _LOADING_USER_FILE.append(path_text)  # register() keeps a user file's @lemma entries out of the registry
    try:
        module_spec.loader.exec_module(module)
    except SystemExit as exc:  # the user's file called sys.exit: bad input, not stumpcheck's exit status
        sys.modules.pop(module_name, None)
        raise InputError(f"{label}: importing {path_text!r} called sys.exit({exc.code!r})") from None
    except Exception as exc:  # the user's file: report it in one line
        sys.modules.pop(module_name, None)
        raise InputError(f"{label}: importing {path_text!r} failed: {type(exc).__name__}: "
                         f"{_short_text(str(exc))}") from None
    finally:
        _LOADING_USER_FILE.pop()
    return module


def _with_source(entry: Lemma, path_text: str, name: str) -> Lemma:
    # the lemma object belongs to this load of the file (each load imports it afresh)
    object.__setattr__(entry, "source", f"{path_text}:{name}")
    return entry


def load_lemma(spec: str) -> Lemma:
    """Import ``"path/to/file.py:name"`` by path and return its :class:`Lemma` ``name``.

    The file's ``@lemma`` definitions are not added to the registry (they are
    checked only when named with ``--lemma``), and may reuse a registered name.
    The lemma's :attr:`~Lemma.source` is ``spec``, so that the replay recipe of its
    results loads the same file.

    InputError (one line) if the spec is malformed, the file is missing or does
    not import, the name is missing, or the object is not a Lemma.
    """
    path_text, name = _split(spec)
    module = _import_file(path_text)
    if not hasattr(module, name):
        raise InputError(f"--lemma: {path_text!r} has no attribute {name!r}")
    entry = getattr(module, name)
    if not isinstance(entry, Lemma):
        raise InputError(f"--lemma: {path_text}:{name} is a {type(entry).__name__}, not a Lemma "
                         "(decorate the margin function with @stumpcheck.lemmas.lemma(...))")
    return _with_source(entry, path_text, name)


def load_lemmas(path) -> dict[str, Lemma]:
    """The lemmas the file ``path`` defines at its top level, by attribute name, in definition order (each with
    its :attr:`~Lemma.source`); the file is imported as by :func:`load_lemma`. A lemma bound to two names is
    listed once, under the first; one the file imports is left out (its margin function is another module's,
    or it is a registered one, e.g. a built-in)."""
    path_text = str(path)
    module = _import_file(path_text, "lemma file")
    registry = registered()
    found: dict[str, Lemma] = {}
    for name, value in list(vars(module).items()):
        if not isinstance(value, Lemma) or any(value is other for other in found.values()):
            continue
        function = value.python_margin
        imported = (getattr(function, "__module__", None) != module.__name__ if function is not None
                    else registry.get(value.name) is value)
        if not imported:
            found[name] = _with_source(value, path_text, name)
    return found
