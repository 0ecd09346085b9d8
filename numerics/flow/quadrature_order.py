"""The Gauss–Legendre order of the high-precision flow field, chosen by a two-order check.

The D-digit field (:class:`stumpcheck.numerics.flow.field_mp.PopulationFlowFieldMP`) sums ∇L and ∇²L by
n-point Gauss–Legendre on each breakpoint piece. An order n is accepted at (a, b) when ∇L and the
three entries of ∇²L at orders n and 1.5·n agree to at least D + 2 significant digits, at the
field's precision (D digits plus guard bits plus :data:`~stumpcheck.numerics.flow.field.FIELD_GUARD_BITS`).
Evidence: high-precision (two orders agree to the stated digits).
"""

from __future__ import annotations

import math

import mpmath

from stumpcheck.numerics.certified.enclosures.arb_quadrature import loss_gradient_hessian_arb
from stumpcheck.numerics.flow.field import FIELD_GUARD_BITS
from stumpcheck.numerics.flow.ode import MPArithmetic
from stumpcheck.numerics.population.quantities import loss_gradient_hessian_gauss_legendre
from stumpcheck.numerics.precision import InputError

__all__ = ["quadrature_agreement", "quadrature_order_for"]


def _quadrature_moments(a, b, order: int, estimator: str, rhs: str) -> list:
    """∇L and the three entries of ∇²L at the current precision (the flow field's integrand)."""
    if rhs == "arb":
        found = loss_gradient_hessian_arb(a, b, order=order, estimator=estimator)
        g, h = found.gradient, found.hessian
    else:
        _, g, h = loss_gradient_hessian_gauss_legendre(a, b, order=order, estimator=estimator)
    return list(g) + [h[0][0], h[0][1], h[1][1]]


def _agreement(current: list, finer: list, bits: int) -> float:
    """Digits two orders' values share, capped at ``bits`` of working precision."""
    return min(min(_digits(x, y) for x, y in zip(current, finer)), bits * math.log10(2))


def _finer(order: int) -> int:
    return order + (order + 1) // 2


def quadrature_agreement(a, b, dps: int, order: int, *, estimator: str = "one-head", rhs: str = "mpmath",
                         guard: int = FIELD_GUARD_BITS) -> float:
    """Significant digits shared by ∇L, ∇²L at orders ``order`` and 1.5·``order`` at (a, b).

    At dps digits plus :func:`stumpcheck.numerics.precision.guard_bits` plus ``guard``
    bits: the precision at which the high-precision flow field evaluates them.
    Capped at that precision when the two agree exactly. Evidence:
    high-precision (two orders).
    """
    bits = MPArithmetic(dps).prec + guard
    with mpmath.workprec(bits):
        z = (mpmath.mpf(a), mpmath.mpf(b))
        return _agreement(_quadrature_moments(z[0], z[1], order, estimator, rhs),
                          _quadrature_moments(z[0], z[1], _finer(order), estimator, rhs), bits)


def quadrature_order_for(a, b, dps: int, *, estimator: str = "one-head", start: int = 10,
                         largest: int = 80, rhs: str = "mpmath", guard: int = FIELD_GUARD_BITS,
                         refine: bool = True) -> tuple[int, float]:
    """(n, digits): an order n whose ∇L and ∇²L agree with order 1.5·n to at least dps + 2
    significant digits at (a, b), at the flow field's precision (dps digits plus guard bits plus ``guard``).

    The first such n of the ladder start, 1.5·start, … (each order's values serve as the finer
    one of the previous comparison); with ``refine``, then the smallest passing order found by
    bisection between the last failing rung and n (each candidate with its own two-order check, so
    the returned order has passed its check whether or not agreement grows monotonically with n).
    ``digits`` is the agreement found (as :func:`quadrature_agreement` measures it).
    ``rhs``: the integrand code, "mpmath" or "arb" (as the flow that uses the order).
    Raises InputError if no order up to ``largest`` suffices.
    """
    bits = MPArithmetic(dps).prec + guard
    n, failed = start, None
    with mpmath.workprec(bits):
        z = (mpmath.mpf(a), mpmath.mpf(b))
        current = _quadrature_moments(z[0], z[1], n, estimator, rhs)
        while n <= largest:
            finer = _quadrature_moments(z[0], z[1], _finer(n), estimator, rhs)
            digits = _agreement(current, finer, bits)
            if digits >= dps + 2:
                break
            failed, n, current = n, _finer(n), finer
        else:
            raise InputError(f"no Gauss-Legendre order up to {largest} reaches {dps + 2} digits at a={a}, b={b}")
        while refine and failed is not None and n - failed > 1:
            middle = (n + failed) // 2
            found = _agreement(_quadrature_moments(z[0], z[1], middle, estimator, rhs),
                               _quadrature_moments(z[0], z[1], _finer(middle), estimator, rhs), bits)
            if found >= dps + 2:
                n, digits = middle, found
            else:
                failed = middle
    return n, digits


def _digits(x, y) -> float:
    if x == y:
        return math.inf
    scale = max(abs(x), abs(y))
    return float(-mpmath.log10(abs(x - y) / scale))
