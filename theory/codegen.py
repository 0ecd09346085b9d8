"""Printers that turn the derived expressions into Python for numpy and mpmath.

Each target is its own printer (SymPy's design): a subclass of SymPy's NumPy or
mpmath printer that knows how to print :mod:`theory.special`'s functions as
calls to helpers defined in the generated module itself. Numerically stable
rewrites (log(1 − θ) → log1p(−θ), e^z − 1 → expm1(z)) are applied by SymPy's
``codegen.rewriting`` optimizer before printing, never by editing strings.

The generated modules are self-contained (they import only numpy or mpmath):

* ``trunc_exp_log_mass(beta)`` Λ(β) and ``trunc_exp_cumulant(k, beta)`` κ_k(β);
  numpy: the Taylor polynomial derived by SymPy for |β| < 2 (degree 40, error
  < 1e-19 relative to the series' radius 2π) and SymPy's form in p = 1/(e^{|β|} − 1)
  beyond, with the reflections Λ(−β) = β + Λ(β), κ₁(−β) = 1 − κ₁(β),
  κ_k(−β) = (−1)^k κ_k(β) (k ≥ 2) that :func:`reflection_identities` proves;
  mpmath: the exponential form at the working precision plus
  (k + 2)·log₂(1/|β|) + 20 guard bits, and the Taylor polynomial once
  |β| < 2^{−prec} (where it is exact to the working precision);
* ``softmax_weight(j, *ell)``, with the maximum shifted out;
* one function per derived quantity and estimator.
"""

from __future__ import annotations

import sympy as sp
from sympy.codegen.rewriting import expm1_opt, log1p_opt, optimize
from sympy.printing.numpy import NumPyPrinter
from sympy.printing.pycode import MpmathPrinter

from theory.special import (P, Q, SoftmaxWeight, TruncExpCumulant, TruncExpLogMass,
                            cumulant_exp_form, large_rate_form, log_mass_exp_form,
                            taylor_coefficients)
from theory.symbols import beta

__all__ = ["NumpyModelPrinter", "MpmathModelPrinter", "stabilize", "function_source",
           "special_functions_source", "reflection_identities", "MAX_CUMULANT_ORDER",
           "TAYLOR_DEGREE", "TAYLOR_SWITCH"]

#: Highest κ_k the generated modules provide (the Hessian of e needs κ₃).
MAX_CUMULANT_ORDER = 4
#: Degree of the Taylor polynomials used by the numpy helpers for |β| < TAYLOR_SWITCH.
TAYLOR_DEGREE = 40
TAYLOR_SWITCH = 2


def stabilize(expr: sp.Expr, *, expm1: bool = False) -> sp.Expr:
    """Apply SymPy's log1p rewrite (log(1 − z) → log1p(−z)) and, if asked, expm1.

    The expm1 optimizer factors its argument, which is slow on the large
    derivative trees and useless there (they hold no e^z − 1); it is applied to
    the special functions' exponential forms only.
    """
    return optimize(expr, [log1p_opt, expm1_opt] if expm1 else [log1p_opt])


class _SpecialPrinting:
    def _print_TruncExpLogMass(self, expr):
        return "trunc_exp_log_mass(%s)" % self._print(expr.args[0])

    def _print_TruncExpCumulant(self, expr):
        return "trunc_exp_cumulant(%d, %s)" % (int(expr.args[0]), self._print(expr.args[1]))

    def _print_SoftmaxWeight(self, expr):
        return "softmax_weight(%d, %s)" % (expr.index, ", ".join(self._print(a) for a in expr.log_masses))


class NumpyModelPrinter(_SpecialPrinting, NumPyPrinter):
    """NumPy printer that knows Λ, κ_k and softmax weights."""


class MpmathModelPrinter(_SpecialPrinting, MpmathPrinter):
    """mpmath printer that knows Λ, κ_k and softmax weights."""


def _printer(target: str):
    if target == "numpy":
        return NumpyModelPrinter({"fully_qualified_modules": True})
    if target == "mpmath":
        return MpmathModelPrinter({"fully_qualified_modules": True})
    raise ValueError(f"unknown code target {target!r}; expected 'numpy' or 'mpmath'")


def function_source(name: str, args: tuple[sp.Symbol, ...], exprs, target: str, doc: str) -> str:
    """A Python function ``name(*args)`` returning ``exprs`` (one expression or a tuple).

    Common subexpressions are shared through SymPy's ``cse``.
    """
    printer = _printer(target)
    single = isinstance(exprs, sp.Basic)
    flat = [exprs] if single else list(exprs)
    replacements, reduced = sp.cse([stabilize(e) for e in flat], symbols=sp.numbered_symbols("_x"))
    lines = [f"def {name}({', '.join(str(s) for s in args)}):", f'    """{doc}"""']
    if target == "numpy":
        lines.append("    with numpy.errstate(divide='ignore'):  # log(0) = -inf at θ ∈ {0, 1} is exact")
        indent = "        "
    else:
        indent = "    "
    for sym, sub in replacements:
        lines.append(f"{indent}{sym} = {printer.doprint(sub)}")
    body = [printer.doprint(e) for e in reduced]
    lines.append(f"{indent}return {body[0] if single else '(' + ', '.join(body) + ',)'}")
    return "\n".join(lines) + "\n"


def reflection_identities() -> list[sp.Expr]:
    """Expressions that must simplify to 0: the reflections the helpers rely on.

    Λ(−β) − β − Λ(β), κ₁(−β) − 1 + κ₁(β), κ_k(−β) − (−1)^k κ_k(β) for 2 ≤ k ≤ 4.
    """
    out = [log_mass_exp_form(-beta) - beta - log_mass_exp_form(beta),
           cumulant_exp_form(1, -beta) - 1 + cumulant_exp_form(1, beta)]
    for order in range(2, MAX_CUMULANT_ORDER + 1):
        out.append(cumulant_exp_form(order, -beta) - (-1) ** order * cumulant_exp_form(order, beta))
    return out


def _float_tuple(values) -> str:
    return "(" + ", ".join(repr(float(v)) for v in values) + ",)"


def _rational_tuple(values) -> str:
    return "(" + ", ".join(f"({int(v.p)}, {int(v.q)})" for v in values) + ",)"


def special_functions_source(target: str) -> str:
    """Source of the stable Λ, κ_k and softmax helpers for ``target``."""
    printer = _printer(target)
    orders = range(0, MAX_CUMULANT_ORDER + 1)
    if target == "numpy":
        taylor = "\n".join(
            f"    {k}: {_float_tuple(reversed(taylor_coefficients(k, TAYLOR_DEGREE)))},"
            for k in orders)
        large = "\n".join(
            f"    if order == {k}:\n        return {printer.doprint(stabilize(large_rate_form(k), expm1=True))}"
            for k in orders)
        return _NUMPY_SPECIALS.format(taylor=taylor, large=large, switch=float(TAYLOR_SWITCH),
                                      degree=TAYLOR_DEGREE)
    exact = "\n".join(
        f"    {k}: {_rational_tuple(taylor_coefficients(k, 3))}," for k in orders)
    forms = "\n".join(
        f"    if order == {k}:\n        return {printer.doprint(stabilize(log_mass_exp_form(beta) if k == 0 else cumulant_exp_form(k, beta), expm1=True))}"
        for k in orders)
    return _MPMATH_SPECIALS.format(exact=exact, forms=forms)


_NUMPY_SPECIALS = '''
# Taylor coefficients about 0, highest degree first (numpy.polyval order),
# for order 0 (Λ) and κ_1..κ_4; degree {degree}, used for |β| < {switch}.
_TAYLOR = {{
{taylor}
}}
_SWITCH = {switch}


def _large_rate(order, beta, q, p):
    """κ_order(β) (order 0: Λ(β)) for β ≥ {switch}; q = exp(-β), p = q/(1 - q)."""
{large}
    raise ValueError(f"cumulant order {{order}} is not generated")


def _special(order, beta):
    beta = numpy.asarray(beta, dtype=float)
    size = numpy.abs(beta)
    out = numpy.empty(beta.shape)
    small = size < _SWITCH
    out[small] = numpy.polyval(_TAYLOR[order], beta[small])
    large = ~small
    y = size[large]
    q = numpy.exp(-y)
    value = _large_rate(order, y, q, -q / numpy.expm1(-y))
    positive = beta[large] > 0
    if order == 0:
        value = numpy.where(positive, value, y + value)
    elif order == 1:
        value = numpy.where(positive, value, 1.0 - value)
    elif order % 2 == 1:
        value = numpy.where(positive, value, -value)
    out[large] = value
    return out[()] if out.ndim == 0 else out


def trunc_exp_log_mass(beta):
    """Λ(β) = log((1 - exp(-β))/β), float64, stable for all real β."""
    return _special(0, beta)


def trunc_exp_cumulant(order, beta):
    """κ_order(β), the cumulants of the density ∝ exp(-βτ) on [0, 1]."""
    if order not in _TAYLOR or order == 0:
        raise ValueError(f"cumulant order {{order}} is not generated")
    return _special(order, beta)


def softmax_weight(index, *log_masses):
    """exp(ℓ_index) / Σ exp(ℓ_i), computed with the maximum shifted out."""
    ells = numpy.broadcast_arrays(*[numpy.asarray(ell, dtype=float) for ell in log_masses])
    top = ells[0]
    for ell in ells[1:]:
        top = numpy.maximum(top, ell)
    total = sum(numpy.exp(ell - top) for ell in ells)
    return numpy.exp(ells[index] - top) / total
'''

_MPMATH_SPECIALS = '''
# Exact Taylor coefficients (numerator, denominator) about 0 to degree 3, for
# order 0 (Λ) and κ_1..κ_4, used when |β| < 2**-prec.
_EXACT_TAYLOR = {{
{exact}
}}


def _exp_form(order, beta):
    """κ_order(β) (order 0: Λ(β)) in the exponential form SymPy derived."""
{forms}
    raise ValueError(f"cumulant order {{order}} is not generated")


def _special(order, beta):
    beta = mpmath.mpf(beta)
    prec = mpmath.mp.prec
    if abs(beta) < mpmath.ldexp(1, -prec):
        return mpmath.fsum(mpmath.mpf(p) / q * beta**n for n, (p, q) in enumerate(_EXACT_TAYLOR[order]))
    guard = 20
    if abs(beta) < 1:
        guard += (order + 2) * int(-mpmath.floor(mpmath.log(abs(beta), 2)))
    with mpmath.workprec(prec + guard):
        value = _exp_form(order, beta)
    return +value


def trunc_exp_log_mass(beta):
    """Λ(β) = log((1 - exp(-β))/β) at the working precision."""
    return _special(0, beta)


def trunc_exp_cumulant(order, beta):
    """κ_order(β), the cumulants of the density ∝ exp(-βτ) on [0, 1]."""
    if order not in _EXACT_TAYLOR or order == 0:
        raise ValueError(f"cumulant order {{order}} is not generated")
    return _special(order, beta)


def softmax_weight(index, *log_masses):
    """exp(ℓ_index) / Σ exp(ℓ_i), computed with the maximum shifted out."""
    ells = [mpmath.mpf(ell) for ell in log_masses]
    top = max(ells)
    return mpmath.exp(ells[index] - top) / mpmath.fsum(mpmath.exp(ell - top) for ell in ells)
'''
