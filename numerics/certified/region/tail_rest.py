"""The rest Ê_a = b⁴E_a, Ê_b = b⁴E_b of the tail enclosed by Arb for every b ≥ 1/ε₁ (docs/tail.md §4).

E_x = ∫₀¹ h_x dθ − ∫_{−∞}^0 g_x dθ with h_x, g_x polynomials in atoms, split into four θ-zones
(:mod:`stumpcheck.theory.tail_rest`). In each zone every atom has an explicit bound, for b ≥ 1000 and
|w| ≤ 1 (so r = ε²·e^{(ρ₁ − w)ε} ∈ [ε², q₁ε²], q₁ = e^{(ρ₁ + 1)ε₁}, checked here in Arb):

================  ====================================================================================
zone              bounds (b ≥ b₀ = 1/ε₁ ≥ 1000)
================  ====================================================================================
``left``          θ ≤ ½, U ≤ 1, η ≤ e^{−b/2} (v ≥ b/2), t₁, t₂ ≤ 1/(1 − e^{−b₀/2}); width ½
``right_far``     θ ≤ 1, U ≤ e^{−b/2} (u ≥ b/2), η ≤ e^{−1} (v ≥ 1), t₁, t₂ ≤ 1/(1 − e^{−1}); width ½
``right_near``    v ≤ 1, U ≤ e^{1−b}, E_v ≤ e, d₁ ≤ 1/r ≤ b², d₂ ≤ 1/(r(1 − U)) ≤ b²/(1 − e^{1−b₀});
                  width 1/b (v ∈ [0, 1])
``negative``      θ = −κ/b, η = e^{−b−κ}, t₁ ≤ 1/(1 − e^{−b₀}); ∫ over θ < 0 = ∫₀^∞ dκ/b, and
                  ∫₀^∞ κ^k e^{−κ} dκ = k!
================  ====================================================================================

So |integrand| ≤ Σ_terms |c|·Π(atom bounds), with the zone's exponentially small atom (η in ``left`` and
``negative``, U in the right zones) raised to its least exponent over the terms, which must be ≥ 1 (checked),
and its other powers bounded by 1. That gives |Ê_x| ≤ Σ_z Σ_p C_{z,p}·b^p·e^{−β_z b} (exact rational powers p,
Arb constants C), each term non-increasing for b ≥ p/β_z (checked at b₀), hence at most its value at b₀: that
sum is :func:`rest_bound`. No step is by hand; the only theorem used beyond algebra and the triangle inequality is
the Leibniz rule for the θ < 0 integral, whose domination hypothesis is the ``negative`` zone's bound itself.
"""

from __future__ import annotations

import hashlib
import math
from fractions import Fraction
from functools import cache

from flint import arb, ctx, fmpq

from stumpcheck.numerics.precision import InputError

__all__ = ["REST_B_MIN", "rest_bound", "rest_terms", "rest_record", "REST_STATEMENT"]

#: the rest's enclosure holds for b ≥ this (and |w| ≤ 1)
REST_B_MIN = Fraction(1000)
#: what the tail certificate states of the rest (no assumption: proved by :func:`rest_bound`)
REST_STATEMENT = ("with L = F(1/b, e^{b−a}) + E(a, b), F the right-layer loss (ε/2)(ε + I(ε, r)): for b >= 1/ε₁ >= 1000 "
                  "and |b·(a − calibration_a(b))| <= 1, |b⁴·∂E/∂a| and |b⁴·∂E/∂b| are at most rest_bound(ε₁), "
                  "a sum over four θ-zones of terms C·b₀^p·e^{−β·b₀} at b₀ = 1/ε₁ (each non-increasing in b "
                  "there), every C a term-by-term bound of the integrands SymPy derives (docs/tail.md §4)")
_BITS = 128


def _q(x: Fraction) -> arb:
    return arb(fmpq(x.numerator, x.denominator))


@cache
def _rho1() -> arb:
    """ρ₁ of the derived calibration relation, as a ball (the tail's own: the same SymPy expression)."""
    from stumpcheck.numerics.certified.enclosures.balls import sympy_constant_ball
    from stumpcheck.numerics.certified.region.bounds import _rho1 as rho1_expression
    from stumpcheck.theory import margin_quantities as mq
    from stumpcheck.theory.symbols import b as b_symbol

    return sympy_constant_ball(rho1_expression(mq.relation_expression("calibration_a"), b_symbol))


def _zone_bounds(zone: str, b0: Fraction, q1: arb) -> tuple:
    """({atom: (constant ball, power of b)}, small atom, its rate β (e^{−βb} per unit exponent), the constant
    and power of b of the small atom's bound, the zone's width (constant, power of b))."""
    one = arb(1)
    e = arb(1).exp()
    if zone == "left":
        return ({"theta": (arb(1) / 2, 0), "r": (q1, -2), "U": (one, 0),
                 "t_1": (1 / (1 - (-_q(b0) / 2).exp()), 0), "t_2": (1 / (1 - (-_q(b0) / 2).exp()), 0)},
                "eta", Fraction(1, 2), (one, 0), (arb(1) / 2, 0))
    if zone == "right_far":
        t = 1 / (1 - (-one).exp())
        return ({"theta": (one, 0), "r": (q1, -2), "eta": (one / e, 0), "t_1": (t, 0), "t_2": (t, 0)},
                "U", Fraction(1, 2), (one, 0), (arb(1) / 2, 0))
    if zone == "right_near":
        return ({"v": (one, 0), "r": (q1, -2), "E_v": (e, 0), "d_1": (one, 2),
                 "d_2": (1 / (1 - (1 - _q(b0)).exp()), 2)},
                "U", Fraction(1), (e, 0), (one, -1))
    if zone == "negative":
        return ({"r": (q1, -2), "t_1": (1 / (1 - (-_q(b0)).exp()), 0)},
                "eta", Fraction(1), (one, 0), (one, -1))
    raise InputError(f"unknown zone {zone!r}")


def rest_terms(zone: str, x: str, b0: Fraction) -> tuple:
    """(β, {p: C}) with |Ê_x's share from ``zone``| ≤ Σ_p C·b^p·e^{−βb} for every b ≥ b0 (module doc)."""
    from stumpcheck.theory.tail_rest import zone_terms

    if b0 < REST_B_MIN:
        raise InputError(f"the rest is enclosed for b >= {REST_B_MIN}, asked from b = {float(b0):g}")
    with ctx.workprec(_BITS):
        q1 = ((_rho1() + 1) / _q(b0)).exp()
        if not (_rho1() - 1 > 0 and q1 < 2):
            raise ArithmeticError("r ∈ [ε², 2ε²] does not hold on |w| <= 1")
        bounds, small, rate, (small_c, small_p), (width_c, width_p) = _zone_bounds(zone, b0, q1)
        terms = zone_terms(zone, x)
        least = min(dict(powers).get(small, 0) for _, powers in terms)
        if least < 1:
            raise ArithmeticError(f"a term of zone {zone} lacks its small factor {small}")
        total: dict = {}
        for coefficient, powers in terms:
            constant, power = abs(_q(Fraction(int(coefficient.p), int(coefficient.q)))), 0
            for name, exponent in powers:
                if name == "b":
                    power += exponent
                elif name == small:
                    continue  # its least power is factored out below; the rest are at most 1
                elif name == "kappa":
                    constant *= math.factorial(exponent)  # ∫₀^∞ κ^k e^{−κ} dκ
                else:
                    if exponent < 0:
                        raise ArithmeticError(f"zone {zone}: a negative power of {name}")
                    c, p = bounds[name]
                    constant *= c**exponent
                    power += p * exponent
            total[power] = total.get(power, arb(0)) + constant
        scale = small_c**least * width_c
        shift = small_p * least + width_p + 4  # b⁴ of Ê and the zone's width
        return rate * least, {p + shift: c * scale for p, c in total.items()}


def rest_bound(eps_hi: Fraction) -> arb:
    """An upper bound of |Ê_a| and |Ê_b| over every b ≥ 1/eps_hi, |w| ≤ 1 (0 for eps_hi = 0): the sum over zones
    of the terms of :func:`rest_terms` at b₀ = 1/eps_hi, each checked non-increasing on b ≥ b₀."""
    eps_hi = Fraction(eps_hi)
    if eps_hi == 0:
        return arb(0)
    b0 = 1 / eps_hi
    from stumpcheck.theory.tail_rest import ZONES

    with ctx.workprec(_BITS):
        worst = arb(0)
        for x in ("a", "b"):
            total = arb(0)
            for zone in ZONES:
                beta, terms = rest_terms(zone, x, b0)
                for p, c in terms.items():
                    if p > 0 and not b0 * beta >= p:
                        raise ArithmeticError(f"zone {zone}: b^{p}·e^(−{beta}·b) is not non-increasing from b = {b0}")
                    total += c * _q(b0) ** p * (-_q(beta) * _q(b0)).exp()
            worst = arb(max(worst.upper(), total.upper()))  # an upper bound of both
        return arb(worst.upper())


def rest_record(eps_hi: Fraction) -> dict:
    """What a tail certificate records of the rest: the statement, the derivation's sha256, the zones and the
    bound at ε₁ (an outward 12-digit decimal); a re-check recomputes it all."""
    from stumpcheck.numerics.certified.region.bounds import upper_decimal
    from stumpcheck.theory.tail_rest import ZONES, rest_srepr

    return {"statement": REST_STATEMENT, "zones": list(ZONES),
            "derivation_sha256": hashlib.sha256(rest_srepr().encode("utf-8")).hexdigest(),
            "epsilon_max": f"{Fraction(eps_hi).numerator}/{Fraction(eps_hi).denominator}",
            "bound": upper_decimal(rest_bound(eps_hi))}
