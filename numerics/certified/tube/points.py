"""The tube's point θ-integrals: ∇L and ∇²L at the (tiny) balls z̃(x_j), to the accuracy the tube needs.

∂L/∂a = ∫₀¹ e ∂e/∂a dθ, ∂L/∂b likewise, and ∇²L = ∫₀¹ (∇e ∇eᵀ + e ∇²e) dθ, by ``acb.integral`` of the
generated Arb integrands (:mod:`stumpcheck.numerics.generated.population_arb`, ``analytic`` honoured) over the pieces
of :func:`stumpcheck.numerics.certified.enclosures.theta_integrals.ladder_pieces`, at a relative tolerance set by the caller's working precision p (p = 84 bits at the tube's default 15
digits) instead of the 15 digits of :func:`stumpcheck.numerics.certified.enclosures.theta_integrals.certified_loss_gradient`:
every result is a rigorous enclosure whatever the tolerance (``acb.integral``'s error bound is part of
the ball); the tolerance only sets how wide, and the tube needs less than 15 digits:

* the defect d = z̃' + e^s∇L cancels to ~1e-11 of |F|, so ∇L to 2^−(p − ``GRADIENT_BITS_BELOW``) = 2^−44
  (~6e-14) relative keeps the point defects' balls below the ellipse term of δ;
* the logarithmic norm −e^s λ_min needs λ_min ≈ 0.67e^{−s} (late) from entries ~20 × larger, and the
  monomial form of the interpolant (:func:`stumpcheck.numerics.certified.tube.lognorm.series_hull`) multiplies the
  balls' radii by up to ~1e5: ∇²L to 2^−(p − ``HESSIAN_BITS_BELOW``) = 2^−36 (~1.5e-11).

A re-check at more digits (a larger p) recomputes them tighter, so the recorded bounds are confirmed.
Two real components share one complex integral (f_j·2^{k_j} + i·f_k·2^{k_k}: the integrands are real on
the real segment), the scales 2^k ≈ 1/|component| from a float64 estimate (steering only). The three
Hessian entries take two integrals; the integrand values at θ-balls both visit are computed once.
The working precision is p − ``POINT_BITS_BELOW`` (64 bits at the default), at least 53.
"""

from __future__ import annotations

import math

from flint import acb, arb, ctx

from stumpcheck.numerics.certified.enclosures.theta_integrals import ladder_pieces
from stumpcheck.numerics.generated import population_arb as gen_arb

__all__ = ["point_gradient", "point_hessian", "GRADIENT_BITS_BELOW", "HESSIAN_BITS_BELOW", "POINT_BITS_BELOW"]

GRADIENT_BITS_BELOW = 40
HESSIAN_BITS_BELOW = 48
POINT_BITS_BELOW = 20


def _bits() -> int:
    return max(53, ctx.prec - POINT_BITS_BELOW)


def _tolerance_bits(below: int) -> int:
    return max(16, ctx.prec - below)


def _scale(estimate: float) -> arb:
    """2^k ≈ 1/|estimate| (1 without a usable estimate)."""
    if not (math.isfinite(estimate) and estimate != 0):
        return arb(1)
    return arb(2) ** (-math.floor(math.log2(abs(estimate))))


def _estimates(a: arb, b: arb):
    """(∇L, ∇²L) in float64 at the midpoints, only to scale tolerances (None if they fail)."""
    from stumpcheck.numerics.population.one_head_float64 import loss_gradient_hessian

    try:
        _, gradient, hessian = loss_gradient_hessian(float(a.mid()), float(b.mid()))
        return gradient, hessian
    except ArithmeticError:
        return None


def _integrals(integrands, a: arb, b: arb, tolerance_bits: int) -> list:
    """[∫₀¹ f dθ for f in integrands] (acb balls) on the ladder pieces; ArithmeticError if one is not finite."""
    ends = ladder_pieces(a, b, "one-head", ctx.prec)
    tolerance = arb(2) ** -tolerance_bits
    out = []
    for integrand in integrands:
        total = acb(0)
        for lo, hi in zip(ends, ends[1:]):
            total += acb.integral(integrand, lo, hi, rel_tol=tolerance, abs_tol=tolerance * arb(2) ** -8)
        if not total.is_finite():
            raise ArithmeticError(f"a point θ-integral is not finite at a = {a.str(5)}, b = {b.str(5)}")
        out.append(total)
    return out


def _key(t: acb, analytic) -> tuple:
    return (t.real.mid().man_exp(), t.real.rad().man_exp(), t.imag.mid().man_exp(), t.imag.rad().man_exp(),
            bool(analytic))


def point_gradient(a: arb, b: arb) -> tuple[arb, arb]:
    """Balls containing (∂L/∂a, ∂L/∂b) at every (a, b) of the real balls a × b."""
    tolerance = _tolerance_bits(GRADIENT_BITS_BELOW)
    with ctx.workprec(_bits()):
        estimate = _estimates(a, b)
        wa, wb = (_scale(x) for x in estimate[0]) if estimate is not None else (arb(1), arb(1))

        def integrand(t, analytic):
            e = gen_arb.error_one_head(a, b, t, analytic)
            g = gen_arb.error_gradient_one_head(a, b, t, analytic)
            return e * g[0] * wa + acb(0, 1) * (e * g[1] * wb)

        (total,) = _integrals([integrand], a, b, tolerance)
        return total.real / wa, total.imag / wb


def point_hessian(a: arb, b: arb) -> tuple[arb, arb, arb]:
    """Balls containing (∂²L/∂a², ∂²L/∂a∂b, ∂²L/∂b²) at every (a, b) of the real balls a × b."""
    tolerance = _tolerance_bits(HESSIAN_BITS_BELOW)
    with ctx.workprec(_bits()):
        estimate = _estimates(a, b)
        w = arb(1) if estimate is None else _scale(float(abs(estimate[1]).max()))
        values = {}

        def entries(t, analytic):
            key = _key(t, analytic)
            if key not in values:
                e = gen_arb.error_one_head(a, b, t, analytic)
                g = gen_arb.error_gradient_one_head(a, b, t, analytic)
                h = gen_arb.error_hessian_one_head(a, b, t, analytic)
                values[key] = (g[0] * g[0] + e * h[0], g[0] * g[1] + e * h[1], g[1] * g[1] + e * h[2])
            return values[key]

        def first(t, analytic):
            v = entries(t, analytic)
            return (v[0] + acb(0, 1) * v[1]) * w

        def second(t, analytic):
            return entries(t, analytic)[2] * w

        ab, bb = _integrals([first, second], a, b, tolerance)
        return ab.real / w, ab.imag / w, bb.real / w
