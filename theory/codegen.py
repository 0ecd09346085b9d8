"""Printers that turn the derived expressions into Python for numpy, mpmath and Arb: the shared machinery.

Each target is its own printer (SymPy's design): a subclass of SymPy's NumPy or
mpmath printer that knows how to print :mod:`stumpcheck.theory.special`'s functions as
calls to helpers defined in the generated module itself. Numerically stable
rewrites (log(1 − θ) → log1p(−θ), e^z − 1 → expm1(z)) are applied by SymPy's
``codegen.rewriting`` optimizer before printing, never by editing strings
(:mod:`stumpcheck.theory.codegen_rewrites`, with the other identities applied before printing).

The generated modules are self-contained (they import only numpy or mpmath):

* ``trunc_exp_log_mass(beta)`` Λ(β) and ``trunc_exp_cumulant(k, beta)`` κ_k(β),
  whose helpers each target prints from its own module:
  :mod:`stumpcheck.theory.codegen_numpy` (float64: Taylor polynomial and large-rate form),
  :mod:`stumpcheck.theory.codegen_mpmath` (exponential form with guard bits) and
  :mod:`stumpcheck.theory.codegen_arb` (rigorous ``acb`` balls);
* ``softmax_weight(j, *ell)``, with the maximum shifted out;
* one function per derived quantity and estimator (:func:`function_source`:
  common subexpressions shared, Λ and κ_k of one rate from one
  ``trunc_exp_jet`` call).

The helpers need only the imports :data:`TARGET_IMPORTS` states; :func:`helper_namespace` runs
them once per process, for a user's own expressions (:mod:`stumpcheck.theory.evaluate`), which may also be
printed for JAX (:data:`USER_TARGETS`; :mod:`stumpcheck.theory.codegen_jax`, never a generated module).

Every public name of the target and rewrite modules is importable from here too.
"""

from __future__ import annotations

import linecache
from functools import cache

import sympy as sp

from stumpcheck.theory.codegen_arb import (ARB_SERIES_CAP, ARB_SERIES_SWITCH, ArbModelPrinter, arb_special_functions_source,
                                cumulants_from_moments, moment_series_coefficient)
from stumpcheck.theory.codegen_jax import JaxModelPrinter, jax_special_functions_source
from stumpcheck.theory.codegen_mpmath import MpmathModelPrinter, mpmath_special_functions_source
from stumpcheck.theory.codegen_numpy import TAYLOR_DEGREE, TAYLOR_SWITCH, NumpyModelPrinter, numpy_special_functions_source
from stumpcheck.theory.codegen_rewrites import (MAX_CUMULANT_ORDER, ONE_MINUS_THETA, FactoredSoftmaxWeight,
                                     SoftmaxFromDifferences, canonical_rates, complement_theta,
                                     factor_softmax_weights, factored_rates, reflection_identities,
                                     softmax_as_differences, stabilize)
from stumpcheck.theory.special import TruncExpCumulant, TruncExpLogMass
from stumpcheck.theory.symbols import theta

__all__ = ["NumpyModelPrinter", "MpmathModelPrinter", "ArbModelPrinter", "JaxModelPrinter", "stabilize",
           "factor_softmax_weights", "FactoredSoftmaxWeight", "canonical_rates", "complement_theta", "factored_rates", "function_source",
           "special_functions_source",
           "reflection_identities", "moment_series_coefficient", "cumulants_from_moments",
           "MAX_CUMULANT_ORDER", "TAYLOR_DEGREE", "TAYLOR_SWITCH", "ARB_SERIES_SWITCH",
           "ARB_SERIES_CAP", "TARGETS", "USER_TARGETS", "ONE_MINUS_THETA", "SoftmaxFromDifferences", "softmax_as_differences",
           "numpy_special_functions_source", "mpmath_special_functions_source", "arb_special_functions_source",
           "jax_special_functions_source",
           "TARGET_IMPORTS", "helper_namespace"]

#: The code targets of the generated modules, each with its own printer.
TARGETS = ("numpy", "mpmath", "arb")
#: The targets a user's own expression may be printed for (:mod:`stumpcheck.theory.evaluate`): also JAX, an
#: optional extra (:mod:`stumpcheck.theory.codegen_jax`), which no generated module uses.
USER_TARGETS = TARGETS + ("jax",)

#: The imports the printed code of each target needs, and all it needs (the generated modules' header).
TARGET_IMPORTS = {
    "numpy": "import math\n\nimport numpy",
    "mpmath": "import mpmath",
    "arb": "import math\n\nfrom flint import acb, acb_poly, arb, ctx, fmpq",
    "jax": "import math\n\nimport jax.numpy\nimport jax.scipy.special",
}


def _printer(target: str):
    if target == "numpy":
        return NumpyModelPrinter({"fully_qualified_modules": True})
    if target == "mpmath":
        return MpmathModelPrinter({"fully_qualified_modules": True})
    if target == "arb":
        return ArbModelPrinter({"fully_qualified_modules": True})
    if target == "jax":
        return JaxModelPrinter({"fully_qualified_modules": True})
    raise ValueError(f"unknown code target {target!r}; expected one of {', '.join(USER_TARGETS)}")


def _special_jets(flat: list) -> tuple[list, list]:
    """Replace every Λ(r), κ_k(r) by a symbol, one group per rate r: (expressions, [(names, r, max k)]).

    Each group is printed as one ``trunc_exp_jet(r, max k)`` call (numpy), which
    shares exp(−|r|) and the Taylor pass between the orders.
    """
    highest: dict = {}
    for expr in flat:
        for node in expr.atoms(TruncExpLogMass, TruncExpCumulant):
            order = 0 if isinstance(node, TruncExpLogMass) else int(node.args[0])
            rate = node.args[-1]
            highest[rate] = max(highest.get(rate, 0), order)
    mapping, calls = {}, []
    for i, rate in enumerate(sorted(highest, key=sp.default_sort_key)):
        names = [sp.Symbol(f"_lam{i}")] + [sp.Symbol(f"_kappa{k}_{i}") for k in range(1, highest[rate] + 1)]
        mapping[TruncExpLogMass(rate)] = names[0]
        for k in range(1, highest[rate] + 1):
            mapping[TruncExpCumulant(k, rate)] = names[k]
        calls.append((names, rate, highest[rate]))
    return [expr.xreplace(mapping) for expr in flat], calls


def function_source(name: str, args: tuple[sp.Symbol, ...], exprs, target: str, doc: str,
                    *, split_theta: bool = False, jets: bool = False, printer=None, rewrite=None) -> str:
    """A Python function ``name(*args)`` returning ``exprs`` (one expression or a tuple).

    Common subexpressions are shared through SymPy's ``cse``. With
    ``split_theta`` (numpy target) the function takes 1 − θ as a further
    argument ``one_minus_theta`` (default ``1 - theta``) and uses it wherever
    the expressions hold 1 − θ: near θ = 1 a caller that knows 1 − θ to full
    relative precision (a quadrature node placed by its distance from 1) then
    resolves layers narrower than the spacing of doubles there (1.1e-16); sums
    c·k + d·k·θ are printed through 1 − θ (:func:`complement_theta`, e.g. the
    pooled a − b + bθ as a − b·(1 − θ)); and
    the Λ, κ_k of each rate come from one ``trunc_exp_jet`` call. ``jets``
    does the latter alone, for the Arb target. ``printer`` replaces the target's own
    printer (a subclass of it, e.g. the margin printer of :mod:`stumpcheck.theory.codegen_margins`), and
    ``rewrite`` (expr → expr) is applied after the target's own rewrites, before printing.
    """
    printer = printer or _printer(target)
    single = isinstance(exprs, sp.Basic)
    flat = [exprs] if single else list(exprs)
    if split_theta:
        if target != "numpy":
            raise ValueError("split_theta is for the numpy target (Arb computes 1 − θ as a ball itself)")
        flat = [complement_theta(e.xreplace({1 - theta: ONE_MINUS_THETA, theta - 1: -ONE_MINUS_THETA}))
                for e in flat]
    if target == "arb":
        # 1 − θ becomes one symbol, computed once (exactly rounded) in the prologue, so that
        # sums such as (1 − θ) + θ·e^{…} do not recompute it with an absolute error
        flat = [factor_softmax_weights(factored_rates(e)).xreplace(
            {1 - theta: ONE_MINUS_THETA, theta - 1: -ONE_MINUS_THETA}) for e in flat]
    else:
        flat = [softmax_as_differences(e) for e in flat]
    if rewrite is not None:
        flat = [rewrite(e) for e in flat]
    jet_calls = []
    if split_theta or (target == "arb" and jets):
        flat, jet_calls = _special_jets(flat)
    replacements, reduced = sp.cse([stabilize(e) for e in flat], symbols=sp.numbered_symbols("_x"))
    if target == "arb":
        names = ", ".join(str(s) for s in args)
        lines = [f"def {name}({names + ', ' if args else ''}analytic=False):", f'    """{doc}"""']
        if args:
            lines.append(f"    {names}{',' if len(args) == 1 else ''} = {', '.join(f'acb({s})' for s in args)}"
                         f"{',' if len(args) == 1 else ''}")
        if theta in args:
            lines.append(f"    {ONE_MINUS_THETA} = 1 - {theta}")
    elif split_theta:
        lines = [f"def {name}({', '.join(str(s) for s in args)}, {ONE_MINUS_THETA}=None):", f'    """{doc}"""',
                 f"    if {ONE_MINUS_THETA} is None:", f"        {ONE_MINUS_THETA} = 1 - {theta}"]
    else:
        lines = [f"def {name}({', '.join(str(s) for s in args)}):", f'    """{doc}"""']
    if target == "numpy":
        lines.append("    with numpy.errstate(divide='ignore'):  # log(0) = -inf at θ ∈ {0, 1} is exact")
        indent = "        "
    else:
        indent = "    "
    flag = ", analytic" if target == "arb" else ""
    for names, rate, max_order in jet_calls:
        lines.append(f"{indent}{', '.join(str(n) for n in names)} = "
                     f"trunc_exp_jet({printer.doprint(rate)}, {max_order}{flag})")
    for sym, sub in replacements:
        lines.append(f"{indent}{sym} = {printer.doprint(sub)}")
    body = [printer.doprint(e) for e in reduced]
    lines.append(f"{indent}return {body[0] if single else '(' + ', '.join(body) + ',)'}")
    return "\n".join(lines) + "\n"


def special_functions_source(target: str) -> str:
    """Source of the stable Λ, κ_k and softmax helpers for ``target``."""
    printer = _printer(target)
    if target == "numpy":
        return numpy_special_functions_source(printer)
    if target == "arb":
        return arb_special_functions_source(printer)
    if target == "jax":
        return jax_special_functions_source(printer)
    return mpmath_special_functions_source(printer)


@cache
def _helper_code(target: str):
    source = TARGET_IMPORTS[target] + "\n" + special_functions_source(target)
    filename = f"<stumpcheck helpers: {target}>"
    linecache.cache[filename] = (len(source), None, source.splitlines(True), filename)  # tracebacks show the line
    return compile(source, filename, "exec")


def helper_namespace(target: str) -> dict:
    """A fresh namespace holding the target's imports and its Λ, κ_k and softmax helpers.

    The helpers' source (:func:`special_functions_source`) is printed and compiled once per process
    and run in a new dictionary on each call, so that the functions defined in one namespace cannot
    change another's. It is the code of the generated modules without their derived functions.
    """
    if target not in USER_TARGETS:
        raise ValueError(f"unknown code target {target!r}; expected one of {', '.join(USER_TARGETS)}")
    namespace: dict = {"__name__": f"stumpcheck_helpers_{target}"}
    exec(_helper_code(target), namespace)  # noqa: S102 - our own printed source, with its stated imports
    return namespace
