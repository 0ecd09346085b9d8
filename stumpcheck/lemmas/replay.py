"""The replay recipe a lemma's result carries (``details["replay"]``): the call that runs the same check again.

A check is determined by the lemma, the level, the seed, the number of examples and the working precision
(:func:`stumpcheck.lemmas.check.check_lemma` seeds Hypothesis and keeps no example database), so the recipe
names each of them and says how to get the lemma back in a fresh interpreter:

* a lemma with a file: ``check_lemma(load_lemma('FILE.py:NAME'), seed=S, max_examples=N)``. The file is the
  one :func:`~stumpcheck.lemmas.load_lemma` loaded it from (:attr:`Lemma.source`), else the module that
  defines its margin function when that module holds the lemma at its top level (a lemma file imported as a
  module, e.g. by pytest), else the module that turned it into a test (:meth:`Lemma.as_test`);
* a built-in lemma: ``check_lemma(get('NAME'), …)`` (:func:`stumpcheck.lemmas.get` knows the registered ones);
* anything else (a lemma made in a notebook): ``check_lemma(<the Lemma 'NAME'>, …)``, the object itself.

The names are those of :mod:`stumpcheck.lemmas` (``from stumpcheck.lemmas import check_lemma, get,
load_lemma``).
"""

from __future__ import annotations

import os
import sys
from collections.abc import Mapping
from pathlib import Path

from stumpcheck.lemmas.definitions import DEFAULT_DPS, Lemma, registered

__all__ = ["lemma_source", "replay_recipe", "shown_path"]


def shown_path(file) -> str:
    """``file`` relative to the working directory when it lies below it, else absolute (a recipe run from the
    same place finds it either way)."""
    path = Path(file).absolute()
    try:
        return path.relative_to(Path.cwd()).as_posix()
    except ValueError:
        return str(path)


def _held_in(namespace, entry: Lemma) -> str | None:
    """``FILE.py:NAME`` for the first top-level name of a module namespace bound to ``entry``."""
    if not isinstance(namespace, Mapping):
        return None
    file = namespace.get("__file__")
    if not isinstance(file, str) or not file.endswith(".py") or not os.path.isfile(file):
        return None
    for name, value in list(namespace.items()):
        if value is entry:
            return f"{shown_path(file)}:{name}"
    return None


def lemma_source(entry: Lemma, namespace=None) -> str | None:
    """The ``FILE.py:NAME`` that :func:`~stumpcheck.lemmas.load_lemma` loads ``entry`` from, or None.

    In order: :attr:`Lemma.source`; the module defining its Python margin, when that module (not one of
    stumpcheck's own) holds the lemma at its top level; ``namespace``, a module's globals (the test module
    of :meth:`Lemma.as_test`).
    """
    if entry.source:
        return entry.source
    module_name = getattr(entry.python_margin, "__module__", None)
    module = sys.modules.get(module_name) if isinstance(module_name, str) else None
    if module is not None and not module_name.startswith("stumpcheck."):
        found = _held_in(vars(module), entry)
        if found:
            return found
    return _held_in(namespace, entry)


def replay_recipe(entry: Lemma, *, level: str, seed: int, max_examples: int, dps: int = DEFAULT_DPS,
                  namespace=None) -> str:
    """The call that replays ``check_lemma(entry, level=level, seed=seed, max_examples=max_examples, dps=dps)``.

    >>> from hypothesis import strategies as st
    >>> from stumpcheck.lemmas import lemma
    >>> @lemma(name="doc_square", statement="x² ≥ 0", domain={"x": st.floats(-1, 1)}, register_it=False)
    ... def doc_square(x):
    ...     return x * x
    >>> replay_recipe(doc_square, level="sampled", seed=3, max_examples=20)
    "check_lemma(<the Lemma 'doc_square'>, seed=3, max_examples=20)"
    """
    source = lemma_source(entry, namespace)
    if source is not None:
        lemma_text = f"load_lemma({source!r})"
    elif registered().get(entry.name) is entry:
        lemma_text = f"get({entry.name!r})"
    else:
        lemma_text = f"<the Lemma {entry.name!r}>"
    options = [f"level={level!r}"] if level != "sampled" else []
    options += [f"seed={seed}", f"max_examples={max_examples}"]
    if dps != DEFAULT_DPS:
        options.append(f"dps={dps}")
    return f"check_lemma({lemma_text}, {', '.join(options)})"
