"""Sphinx configuration of the stumpcheck reference.

Build from the repository root, with the package installed (``pip install -e '.[docs]'``):

    python -m sphinx -n -W --keep-going -b html docs docs/_build/html
    python -m sphinx -W --keep-going -b doctest docs docs/_build/doctest

The pages of docs/ are Markdown (MyST); the reference pages (docs/reference/) are reST, one
``automodule`` per package, whose members are the package's ``__all__``. The doctest builder runs
the ``>>>`` examples of every rendered docstring. No extension fetches anything over the network
(no intersphinx): the build works offline.

Cross-references are kept resolvable (CI builds with ``-n``, nitpicky: an unresolved reference is an
error; tests/test_docs_build.py does the same). A docstring may name the module that defines an object
(``:func:`stumpcheck.numerics.population.quantities.error```, an engine) where a page renders the same
object under its package's public name: :func:`_resolve_by_object` links such a reference to that
rendering. Every module of the package has a target (with its docstring's first paragraph) on
reference/modules, and a reference to a module, or to an existing name no page renders, links to the
nearest rendered class or module that holds it. A reference to a name
that does not exist stays unresolved. Names of other projects cannot be linked offline: they are listed
in ``nitpick_ignore``, one by one.
"""

import ast
import importlib
import os
import pkgutil
import sys
from pathlib import Path

from docutils import nodes
from sphinx import addnodes
from sphinx.domains.python import PythonDomain
from sphinx.errors import PycodeError
from sphinx.pycode import ModuleAnalyzer
from sphinx.util import logging
from sphinx.util.docutils import SphinxDirective
from sphinx.util.nodes import make_refnode

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

# Names of other projects (numpy, mpmath, python-flint, SymPy, Hypothesis, matplotlib, the standard
# library) that docstrings and signatures refer to: without network access intersphinx cannot fetch
# their inventories, so they render as text. Each is listed; a new one fails the nitpicky build until
# it is added here.
nitpick_ignore = [
    *[("py:class", name) for name in (
        "numpy.ndarray", "np.ndarray", "numpy.random._generator.Generator", "mpmath.mpf", "mpmath.ctx_mp_python.mpf",
        "flint.types.arb.arb", "flint.types.acb.acb", "sympy.core.expr.Expr",
        "hypothesis.strategies.SearchStrategy", "hypothesis.errors.InvalidArgument",
        "fractions.Fraction", "decimal.Decimal", "pathlib.Path", "collections.abc.Callable",
    )],
    ("py:meth", "matplotlib.figure.Figure.tight_layout"),
]

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
        if entry.docname == _MODULES_PAGE:  # a module's target only: its names are rendered elsewhere or private
            continue
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


_MODULES_PAGE = "reference/modules"
_ROOTS = ("stumpcheck", "stumpcheck.theory", "stumpcheck.numerics")
_ATOMS = (bool, int, float, complex, str, bytes, type(None))


def _modules():
    """Every module of the package, by name: (its file, the first paragraph of its docstring, on one line).

    Read from the source with :mod:`ast`, not imported (an optional dependency may be missing)."""
    found = {}
    for root in _ROOTS:
        package = importlib.import_module(root)
        found[root] = package.__file__
        for info in pkgutil.walk_packages(package.__path__, root + "."):
            spec = info.module_finder.find_spec(info.name)
            if spec is not None and spec.origin:
                found[info.name] = spec.origin
    out = {}
    for name, origin in sorted(found.items()):
        try:
            doc = ast.get_docstring(ast.parse(Path(origin).read_text(encoding="utf-8"))) or ""
        except (OSError, SyntaxError, ValueError):
            doc = ""
        out[name] = (origin, " ".join(doc.strip().split("\n\n")[0].split()))
    return out


class _EveryModule(SphinxDirective):
    """``.. stumpcheck-modules::``: a target for each module that no ``automodule`` of reference/ renders,
    with its file and the first paragraph of its docstring as plain text (not parsed: a module's private
    docstring need not be reST)."""

    def run(self):
        rendered = set()
        for page in Path(self.env.srcdir, "reference").glob("*.rst"):
            rendered |= {line.split("::", 1)[1].strip() for line in page.read_text(encoding="utf-8").splitlines()
                         if line.startswith(".. automodule::")}
        domain = self.env.get_domain("py")
        items = nodes.bullet_list()
        repository = Path(self.env.srcdir).resolve().parent
        for name, (origin, first) in _modules().items():
            if name in rendered:
                continue
            node_id = f"module-{name}"
            domain.note_module(name, node_id, first, "", False)
            domain.note_object(name, "module", node_id, location=(self.env.docname, self.lineno))
            target = nodes.target("", "", ids=[node_id], ismod=True)
            self.state.document.note_explicit_target(target)
            relative = Path(origin).resolve()
            if relative.is_relative_to(repository):
                relative = relative.relative_to(repository)
            paragraph = nodes.paragraph("", "", target, nodes.literal(name, name),
                                        nodes.Text(f" ({relative.as_posix()})" + (f": {first}" if first else "")))
            items += nodes.list_item("", paragraph)
        return [items]


_DOCUMENTED = {}  # for one environment: id(object) → the names a page renders it under


def _documented_names(env):
    """id(object) → the names under which a page renders it (imported when first asked, once per
    environment; kept out of the environment, which is pickled, since ids are of this process)."""
    if _DOCUMENTED.get("env") is not env:
        names = {}
        for name, entry in env.get_domain("py").objects.items():
            obj = _import_object(name) if entry.objtype != "module" else None
            if obj is not None and not isinstance(obj, _ATOMS):
                names.setdefault(id(obj), []).append(name)
        _DOCUMENTED.update(env=env, names=names)
    return _DOCUMENTED["names"]


def _import_object(name):
    """The object of the package that ``name`` names (a module, or an attribute path inside one), else
    None: also None when the path leaves the package (``stumpcheck.x.mpmath.mpf`` is mpmath's ``mpf``,
    which module x merely imports)."""
    parts = name.split(".")
    for cut in range(len(parts), 0, -1):
        try:
            obj = importlib.import_module(".".join(parts[:cut]))
        except Exception:  # not a module (or one that cannot be imported here): try a shorter prefix
            continue
        for part in parts[cut:]:
            try:
                obj = getattr(obj, part)
            except Exception:
                return None
            owner = obj.__name__ if isinstance(obj, type(sys)) else getattr(obj, "__module__", None)
            if isinstance(owner, str) and owner.partition(".")[0] != "stumpcheck":
                return None
        return obj
    return None


def _defining_modules(node):
    """The modules that define the object whose description holds ``node`` (a package may render an
    object that one of its modules defines; a constant: every module that binds it to its name)."""
    parent = node.parent
    while parent is not None and not isinstance(parent, addnodes.desc):
        parent = parent.parent
    if parent is None:
        return []
    for signature in parent.findall(addnodes.desc_signature):
        name = signature.get("fullname", "")
        obj = _import_object(f"{signature.get('module')}.{name}")
        if obj is None:
            continue
        if getattr(obj, "__module__", None):
            return [obj.__module__]
        return [candidate for candidate in sorted(m for m in sys.modules if m.startswith("stumpcheck."))
                if candidate != signature.get("module") and _import_object(f"{candidate}.{name}") is obj]
    return []


def _resolve_by_object(app, env, node, contnode):
    """Resolve a Python reference that Sphinx did not: to the page that renders the same object under
    another name (the longest shared prefix wins), else, for a name that exists in the package but that
    no page renders, to the nearest rendered class or module that holds it (a private module: its entry
    on reference/modules). A name that does not exist is left unresolved (the nitpicky build reports it).
    Tried in turn: the target as written, inside the current class and module, inside the module that
    defines the described object."""
    if node.get("refdomain") != "py":
        return None
    target = node["reftarget"].lstrip("~.")
    module, cls = node.get("py:module"), node.get("py:class")
    candidates = [target]
    if module:
        candidates += [f"{module}.{cls}.{target}"] * bool(cls) + [f"{module}.{target}"]
    # a short name in a docstring is a name of the module that defines the documented object
    candidates += [f"{defining}.{target}" for defining in _defining_modules(node)]
    domain = env.get_domain("py")
    for name in candidates:
        if not name.startswith("stumpcheck"):
            continue
        obj = _import_object(name)
        if obj is None:
            continue
        if not isinstance(obj, _ATOMS):
            names = _documented_names(env).get(id(obj), [])
            if names:
                best = max(sorted(names), key=lambda other: len(os.path.commonprefix([other, name])))
                entry = domain.objects[best]
                return make_refnode(app.builder, node["refdoc"], entry.docname, entry.node_id, contnode, best)
        parts = name.split(".")
        for cut in range(len(parts) - 1, 0, -1):  # the nearest rendered class or module that holds it
            holder = ".".join(parts[:cut])
            entry = domain.objects.get(holder)
            if entry is not None and entry.objtype in ("class", "exception", "module"):
                return make_refnode(app.builder, node["refdoc"], entry.docname, entry.node_id, contnode, name)
    return None


def setup(app):
    app.add_directive("stumpcheck-modules", _EveryModule)
    app.connect("missing-reference", _resolve_by_object)
    app.connect("autodoc-process-docstring", _constant_docstring)
    app.add_domain(_PythonDomain, override=True)
    app.connect("env-check-consistency", _check_every_public_name_is_rendered)
