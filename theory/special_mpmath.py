"""Λ, κ_k and softmax weights at any mpmath precision, and the checked evaluation behind their ``evalf``.

The functions here evaluate the exponential forms of :mod:`stumpcheck.theory.special_forms` as
the mpmath target's printed helpers do (:mod:`stumpcheck.theory.codegen_mpmath`): with guard bits
for the cancellation near β = 0, and the exact Taylor polynomial once |β| < 2^−prec. They are what
``sp.lambdify(..., "mpmath")`` calls for :class:`stumpcheck.theory.special.TruncExpLogMass`,
:class:`~stumpcheck.theory.special.TruncExpCumulant` and
:class:`~stumpcheck.theory.special.SoftmaxWeight`, and what their ``_eval_evalf`` runs, through
:func:`evalf_checked`, at raised precisions until two results agree.
"""

from __future__ import annotations

from functools import cache

import mpmath
import sympy as sp
from sympy.codegen.rewriting import expm1_opt, log1p_opt, optimize

from stumpcheck.theory.special_forms import cumulant_exp_form, log_mass_exp_form, taylor_coefficients, value_at_zero
from stumpcheck.theory.symbols import beta

__all__ = ["trunc_exp_log_mass_mpmath", "trunc_exp_cumulant_mpmath", "softmax_weight_differences_mpmath",
           "special_mpmath", "evalf_checked", "absolute_mpf", "GUARD_BITS"]

#: Bits added to the requested precision by :func:`evalf_checked`, doubled until two evaluations agree.
GUARD_BITS = 20
_MAX_EXTRA_BITS = 1 << 14


@cache
def _exp_form_mpmath(order: int):
    """κ_order (Λ for order 0) in exponential form as an mpmath function of β, log1p and expm1 rewritten."""
    form = log_mass_exp_form(beta) if order == 0 else cumulant_exp_form(order, beta)
    return sp.lambdify(beta, optimize(form, [log1p_opt, expm1_opt]), "mpmath")


def special_mpmath(order: int, value) -> mpmath.mpf:
    """κ_order(β) (order 0: Λ(β)) at the working precision of mpmath, for real β.

    The exponential form cancels about 2k·log₂(1/|β|) bits for |β| < 1: it is evaluated with
    (2k + 2)·log₂(1/|β|) + 20 guard bits, and once |β| < 2^−prec the exact Taylor polynomial of
    degree 3 is used instead (its remainder is below the working precision). Far from 0 nothing
    cancels, and mpmath's exponent range has no overflow.
    """
    x = mpmath.mpf(value)
    if not mpmath.isfinite(x):
        raise ValueError(f"the rate must be finite, got {x}")
    if x == 0:
        exact = value_at_zero(order) if order else sp.S.Zero
        return mpmath.mpf(int(exact.p)) / int(exact.q)
    prec = mpmath.mp.prec
    if abs(x) < mpmath.ldexp(1, -prec):
        return mpmath.fsum(mpmath.mpf(int(c.p)) / int(c.q) * x**n for n, c in enumerate(taylor_coefficients(order, 3)))
    guard = GUARD_BITS
    if abs(x) < 1:
        guard += (2 * order + 2) * int(-mpmath.floor(mpmath.log(abs(x), 2)))
    with mpmath.workprec(prec + guard):
        result = _exp_form_mpmath(order)(x)
    return +result


def trunc_exp_log_mass_mpmath(rate) -> mpmath.mpf:
    """Λ(β) = log((1 − e^{−β})/β) for real β, to the working precision of mpmath (``mpmath.mp``)."""
    return special_mpmath(0, rate)


def trunc_exp_cumulant_mpmath(order, rate) -> mpmath.mpf:
    """κ_k(β) = (−1)^k Λ^{(k)}(β), k = ``order`` ≥ 1, for real β, to the working precision of mpmath."""
    if isinstance(order, bool) or not isinstance(order, (int, sp.Integer)) or order < 1:
        raise ValueError(f"cumulant order must be a positive integer, got {order!r}")
    return special_mpmath(int(order), rate)


def softmax_weight_differences_mpmath(*differences) -> mpmath.mpf:
    """1 / Σ_i e^{d_i} for d_i = ℓ_i − ℓ_j (d_j = 0): the softmax weight w_j, the largest d_i shifted out.

    Differences, not the ℓ_i, so that what the log-masses share cancels before the call
    (symbolically where SymPy prints them, see ``SoftmaxWeight._mpmathcode``).
    """
    ds = [mpmath.mpf(d) for d in differences]
    top = max(ds)
    if top == mpmath.inf:
        return mpmath.mpf(0)
    return mpmath.exp(-top) / mpmath.fsum(mpmath.exp(d - top) for d in ds)


def absolute_mpf(number: sp.Expr, bits: int) -> mpmath.mpf:
    """A real SymPy number as an mpf with absolute error about 2^−bits (relative error 2^−bits if |x| < 1)."""
    if number == 0:
        return mpmath.mpf(0)
    rough = number._to_mpmath(30)
    return number._to_mpmath(bits + max(0, int(mpmath.mag(rough))))


def evalf_checked(compute, prec: int):
    """compute(bits) evaluated with prec + 20, + 40, … bits until two results agree to prec bits.

    Returned as a Float of prec bits (None when the arguments are not real numbers). The doubling
    stops at 2^14 extra bits, where the last result is returned.
    """
    try:
        extra = GUARD_BITS
        previous = compute(prec + extra)
        while True:
            extra *= 2
            current = compute(prec + extra)
            with mpmath.workprec(prec + extra):  # mpmath rounds every result to the context's precision
                agree = abs(current - previous) <= mpmath.ldexp(abs(current), -prec - 2)
            if agree or extra >= _MAX_EXTRA_BITS:
                break
            previous = current
        if not isinstance(current, mpmath.mpf):
            return None
    except (TypeError, ValueError):  # complex or non-finite arguments: leave the function unevaluated
        return None
    with mpmath.workprec(prec):
        return sp.Float._new((+current)._mpf_, prec)
