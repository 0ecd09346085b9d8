"""The mpmath target: its printer and the source of its Λ, κ_k and softmax helpers at the working precision.

The generated helpers evaluate Λ(β) and κ_k(β) in the exponential form SymPy
derives, at the working precision plus (2k + 2)·log₂(1/|β|) + 20 guard bits
(the form cancels about 2k·log₂(1/|β|) bits), and from the exact Taylor
polynomial once |β| < 2^{−prec} (where it is exact to the working precision).
"""

from __future__ import annotations

from sympy.printing.pycode import MpmathPrinter

from stumpcheck.theory.codegen_numpy import _SpecialPrinting
from stumpcheck.theory.codegen_rewrites import MAX_CUMULANT_ORDER, stabilize
from stumpcheck.theory.special import cumulant_exp_form, log_mass_exp_form, taylor_coefficients
from stumpcheck.theory.symbols import beta

__all__ = ["MpmathModelPrinter", "mpmath_special_functions_source"]


class MpmathModelPrinter(_SpecialPrinting, MpmathPrinter):
    """mpmath printer that knows Λ, κ_k, softmax weights, ζ (Riemann and Hurwitz) and Li_s, all at the working
    precision (π, e, γ, √2, log 2 are SymPy's own: ``mpmath.pi``, ``mpmath.e``, ``mpmath.euler``, …)."""

    def _print_zeta(self, expr):
        return "%s(%s)" % (self._module_format("mpmath.zeta"), ", ".join(self._print(x) for x in expr.args))

    def _print_polylog(self, expr):
        return "%s(%s)" % (self._module_format("mpmath.polylog"), ", ".join(self._print(x) for x in expr.args))


def _rational_tuple(values) -> str:
    return "(" + ", ".join(f"({int(v.p)}, {int(v.q)})" for v in values) + ",)"


def mpmath_special_functions_source(printer: MpmathModelPrinter) -> str:
    """Source of the mpmath Λ, κ_k and softmax helpers (exact Taylor coefficients and exponential forms printed)."""
    orders = range(0, MAX_CUMULANT_ORDER + 1)
    exact = "\n".join(
        f"    {k}: {_rational_tuple(taylor_coefficients(k, 3))}," for k in orders)
    forms = "\n".join(
        f"    if order == {k}:\n        return {printer.doprint(stabilize(log_mass_exp_form(beta) if k == 0 else cumulant_exp_form(k, beta), expm1=True))}"
        for k in orders)
    return _MPMATH_SPECIALS.format(exact=exact, forms=forms)


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
        guard += (2 * order + 2) * int(-mpmath.floor(mpmath.log(abs(beta), 2)))
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


def softmax_weight_differences(*differences):
    """1 / Σ exp(d_i) for d_i = ℓ_i − ℓ_j (one d_i is 0): the softmax weight of j."""
    ds = [mpmath.mpf(d) for d in differences]
    top = max(ds)
    if top == mpmath.inf:
        return mpmath.mpf(0)
    return mpmath.exp(-top) / mpmath.fsum(mpmath.exp(d - top) for d in ds)
'''
