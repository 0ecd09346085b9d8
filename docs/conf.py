"""Sphinx configuration of the stumpcheck reference.

Build from the repository root, with the package installed (``pip install -e '.[docs]'``):

    python -m sphinx -W --keep-going -b html docs docs/_build/html
    python -m sphinx -W --keep-going -b doctest docs docs/_build/doctest

The pages of docs/ are Markdown (MyST); the reference pages (docs/reference/) are reST, one
``automodule`` per package, whose members are the package's ``__all__``. The doctest builder runs
the ``>>>`` examples of every rendered docstring. No extension fetches anything over the network
(no intersphinx): the build works offline.
"""

import importlib
import sys

from sphinx.domains.python import PythonDomain
from sphinx.errors import PycodeError
from sphinx.pycode import ModuleAnalyzer
from sphinx.util import logging

import stumpcheck

logger = logging.getLogger(__name__)

project = "stumpcheck"
author = "the stumpcheck authors"
copyright = "the stumpcheck authors"
release = stumpcheck.__version__
version = release

extensions = [
    "sphinx.ext.autodoc",
    "sphinx.ext.doctest",
    "myst_parser",
]

source_suffix = {".rst": "restructuredtext", ".md": "markdown"}
root_doc = "index"
# docs/README.md is the page table for readers of the repository (this build's index replaces it);
# readme_excerpt.py and examples/ are scripts, not pages.
exclude_patterns = ["_build", "README.md", "readme_excerpt.py", "examples"]

# The Markdown pages link to each other's sections as `page.md#4-dynamics`: generate the anchors
# GitHub generates, for headings down to level 4.
myst_heading_anchors = 4

# autodoc: members in source order, signatures as written, type hints in the signature only.
autodoc_member_order = "bysource"
autodoc_typehints = "signature"
autodoc_preserve_defaults = True

# The doctest builder runs each docstring's examples in a fresh namespace; examples import what
# they use, so no global setup is needed.

html_theme = "alabaster"
html_title = f"stumpcheck {release}"


class _PythonDomain(PythonDomain):
    """The Python domain, registering a re-exported class's defining name once.

    A class documented where it is re-exported (``stumpcheck.api.Enclosure``, and again in its
    package, ``stumpcheck.numerics.certified.enclosures.Enclosure``) also registers the name of the
    module that defines it (``:canonical:``, autodoc's own choice), so that the docstrings' roles
    to the defining modules resolve. Sphinx warns "duplicate object description" when the second
    page registers that canonical name (sphinx-doc/sphinx#10348), although both pages describe the
    same object under their own public names. The same canonical name means the same class; the
    first page read keeps the target (the pages are read in sorted order, so reference/api comes
    before the package pages). A true duplicate (the same public name on two pages) still warns.
    """

    def note_object(self, name, objtype, node_id, aliased=False, location=None):
        other = self.objects.get(name)
        if aliased and other is not None and other.aliased:
            return
        super().note_object(name, objtype, node_id, aliased=aliased, location=location)


def _check_every_public_name_is_rendered(app, env):
    """Warn for each name in the ``__all__`` of a documented module that no page describes.

    ``automodule`` with ``:members:`` renders the functions and classes of ``__all__``, but data
    (constants, solver instances) only where the module itself assigns it: a package's re-exported
    constants are left out without a word. Their pages list them with ``autodata``; this check keeps
    those lists complete when ``__all__`` grows.
    """
    domain = env.get_domain("py")
    for modname, entry in sorted(domain.modules.items()):
        for name in getattr(importlib.import_module(modname), "__all__", ()):
            if f"{modname}.{name}" not in domain.objects:
                logger.warning("%s.%s is in __all__ but on no page (a re-exported constant needs an "
                               "autodata entry on %s)", modname, name, entry.docname,
                               location=entry.docname, type="stumpcheck", subtype="unrendered")


def _doc_comment(module_name, name, value):
    """The ``#:`` comment above ``name = value``: in ``module_name`` if it has one, else in the module
    of stumpcheck that assigns the same object to that name (where a re-exported constant is defined)."""
    others = sorted(m for m in sys.modules if m.startswith("stumpcheck.") and m != module_name)
    for candidate in [module_name, *others]:
        module = sys.modules.get(candidate)
        if module is None or getattr(module, name, _doc_comment) is not value:
            continue
        try:
            analyzer = ModuleAnalyzer.for_module(candidate)
            analyzer.analyze()
        except PycodeError:
            continue
        if comment := analyzer.attr_docs.get(("", name)):
            return list(comment)
    return None


def _constant_docstring(app, what, name, obj, options, lines):
    """A constant's doc is its ``#:`` comment where it is defined, never its type's docstring.

    autodoc reads the ``#:`` comments of the documented module only (for a package's re-exported
    constant: none) and falls back to ``getdoc(value)``, which for an int, a tuple, a dict or a
    dataclass instance is the docstring of its type (``int([x]) -> integer …``).
    """
    if what != "data":
        return
    module_name, _, short = name.rpartition(".")
    comment = _doc_comment(module_name, short, obj)
    if comment is not None:
        lines[:] = comment
    elif getattr(obj, "__doc__", None) == getattr(type(obj), "__doc__", None):
        lines[:] = []


def setup(app):
    app.connect("autodoc-process-docstring", _constant_docstring)
    app.add_domain(_PythonDomain, override=True)
    app.connect("env-check-consistency", _check_every_public_name_is_rendered)
