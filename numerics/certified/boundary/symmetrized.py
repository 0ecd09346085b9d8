"""C8 at population level, certified for every b ≥ b₀: the pooled symmetrization's sup over θ of |e| is O(1/b); the averaged one's is ½.

**Pooled.** Domain: θ ∈ [0, 1], b ≥ b₀ (ε = 1/b ∈ [0, 1/b₀], ε = 0 included) and every a ≥ b (λ = a − b ≥ 0,
Λ = e^{−λ} ∈ [0, 1]); the calibration relation lies in it for b ≥ b₀ (calibration_a(b) − b = 2 log b − ρ₁/b
increases and is > 0 at b₀ ≥ 2, checked by Arb in :func:`prove_c8_population`). By e(1 − θ) = −e(θ) it is
enough to take θ ∈ [0, ½], where u = θ/ε ≤ v = (1 − θ)/ε and v ≥ 1/(2ε). There, exactly
(:func:`stumpcheck.theory.boundary.pooled_form`, checked by SymPy),

    b·e(θ) = [G_v g(v) − X G_u g(u) + Λ(T_L + T_R)] / [G_v + X G_u + Λe^{−v}(G_u + G_v)],

T_L = e^{−v}G_u(g(u) − u) ∈ [−u e^{−v}, 0], T_R = e^{−v}G_v(v − g(v)) ∈ [0, v e^{−v}] (the means of the two
far segments lie in their segments), with G_β = 1 − e^{−β} and g(β) = 1 − β/(e^β − 1) increasing from 0 to 1
(β/(e^β − 1) decreases: e^{−β} ≥ 1 − β), X = e^{(2θ − 1)/ε} increasing in θ and, for θ ≤ ½, in ε, and
v e^{−v} decreasing for v ≥ 1 (so u e^{−v} ≤ v e^{−v} ≤ v₀e^{−v₀}, v₀ the box's smallest v ≥ b₀/2 ≥ 1). On a box
[θ₀, θ₁] × [ε₀, ε₁] each atom's range is its values at the box's corners (u, v = ∞ at ε = 0 give
G = g = 1, e^{−v} = 0); Arb evaluates the quotient over the box, and :func:`prove_c8_population` bisects until
|b·e| ≤ ``target`` on every leaf. The result: sup over θ ∈ [0, 1] of |e_pooled(θ)| ≤ K/b for every b ≥ b₀,
a ≥ b, with K the largest upper end over the leaves. And from below, the same enclosure on the segment
θ = 0, ε ∈ [0, 1/b₀] bounds b·e(0) ≥ F > 0 (:func:`pooled_floor`; b·e(0) = [g(b) + Λe^{−b}(b − g(b))]/(1 +
Λe^{−b}) ≈ 1): F/b ≤ sup |e_pooled| ≤ K/b, the exponent −1 whatever range of b is fitted.

**Averaged.** e(0) = ½ and e(1) = −½ exactly, for every real a and b > 0 (SymPy: at θ = 0 every label is 1
and the two heads estimate κ₁(b) and 1 − κ₁(b); at θ = 1 the same with every label 0): the averaged
symmetrization keeps sup over θ of |e| ≥ ½. Arb encloses the generated e at both ends as a cross-check
(:func:`averaged_end_balls`).
"""

from __future__ import annotations

import time
from fractions import Fraction

from flint import arb, ctx, fmpq

from stumpcheck.numerics.certified.boundary.one_head import identities, rho1_ball
from stumpcheck.numerics.certified.proofs.domains import to_fraction
from stumpcheck.numerics.certified.region.bounds import lower_decimal, upper_decimal
from stumpcheck.numerics.precision import InputError

__all__ = ["C8_B_MIN", "POOLED_TARGET", "pooled_enclosure", "prove_c8_population", "averaged_end_balls",
           "c8_statement", "relation_gap", "pooled_k_text", "pooled_floor", "PREC_BITS"]

PREC_BITS = 128
#: b₀ of the certified C8
C8_B_MIN = Fraction(10)
#: every leaf must show |b·e_pooled| ≤ this
POOLED_TARGET = Fraction(101, 100)
_MAX_DEPTH = 12


def _ball(x: Fraction) -> arb:
    x = Fraction(x)
    return arb(fmpq(x.numerator, x.denominator))


def _hull(lo: arb, hi: arb) -> arb:
    return arb(lo.lower()).union(arb(hi.upper()))


def _ratio(num: Fraction, den: Fraction):
    """num/den as a ball, or None for +∞ (den = 0 < num)."""
    if den == 0:
        return None if num > 0 else arb(0)
    return _ball(num) / _ball(den)


def _g(beta) -> arb:
    """g(β) = 1 − β/(e^β − 1) at a point β ≥ 0 (None: +∞, g = 1)."""
    if beta is None:
        return arb(1)
    if beta == 0:
        return arb(0)
    return 1 - beta / beta.expm1()


def _one_minus_exp(beta) -> arb:
    """G = 1 − e^{−β} at β ≥ 0 (None: +∞)."""
    return arb(1) if beta is None else -((-beta).expm1())


def _exp_neg(beta) -> arb:
    return arb(0) if beta is None else (-beta).exp()


def pooled_enclosure(theta_lo, theta_hi, eps_lo, eps_hi, prec_bits: int = PREC_BITS) -> arb:
    """A ball holding b·e_pooled(θ) for every θ ∈ [theta_lo, theta_hi] ⊆ [0, ½], ε = 1/b ∈ [eps_lo, eps_hi] ⊆ [0, ½]
    and every a ≥ b (module doc)."""
    t0, t1 = to_fraction(theta_lo, "theta_lo"), to_fraction(theta_hi, "theta_hi")
    e0, e1 = to_fraction(eps_lo, "eps_lo"), to_fraction(eps_hi, "eps_hi")
    if not (0 <= t0 <= t1 <= Fraction(1, 2) and 0 <= e0 <= e1 <= Fraction(1, 2) and e1 > 0):
        raise InputError("a pooled box needs 0 <= θ₀ <= θ₁ <= 1/2 and 0 <= ε₀ <= ε₁ <= 1/2, ε₁ > 0")
    with ctx.workprec(prec_bits):
        u_lo, u_hi = _ratio(t0, e1), _ratio(t1, e0)
        v_lo, v_hi = _ratio(1 - t1, e1), _ratio(1 - t0, e0)
        g_u = _hull(_g(u_lo), _g(u_hi))
        g_v = _hull(_g(v_lo), _g(v_hi))
        big_g_u = _hull(_one_minus_exp(u_lo), _one_minus_exp(u_hi))
        big_g_v = _hull(_one_minus_exp(v_lo), _one_minus_exp(v_hi))

        def x_at(t, e):  # e^{(2θ − 1)/ε}; θ = ½ gives 1, ε = 0 with θ < ½ gives 0
            if 2 * t == 1:
                return arb(1)
            return arb(0) if e == 0 else ((2 * _ball(t) - 1) / _ball(e)).exp()

        big_x = _hull(x_at(t0, e0), x_at(t1, e1))
        ve = v_lo * _exp_neg(v_lo)          # the largest v e^{−v} (v ≥ v_lo ≥ 1)
        e_v = _hull(_exp_neg(v_hi), _exp_neg(v_lo))
        far = _hull(-ve, ve)                # T_L + T_R ∈ [−v₀e^{−v₀}, v₀e^{−v₀}]
        lam = _hull(arb(0), arb(1))
        numerator = big_g_v * g_v - big_x * big_g_u * g_u + lam * far
        denominator = big_g_v + big_x * big_g_u + lam * e_v * (big_g_u + big_g_v)
        return numerator / denominator


def pooled_k_text(ends: list) -> str:
    """K as the proof states it: the largest |end| over the leaves' recorded enclosures [lower, upper] (decimals
    rounded outward), written as recorded (without its sign)."""
    texts = [t.lstrip("-") for pair in ends for t in pair]
    return max(texts, key=Fraction)


def relation_gap(b_min: Fraction) -> arb:
    """calibration_a(b) − b = 2 log b − ρ₁/b at b₀ (a ball at the current precision; it increases in b)."""
    b0 = _ball(b_min)
    return 2 * b0.log() - rho1_ball() / b0


def pooled_floor(b_min: Fraction, prec_bits: int = PREC_BITS) -> arb:
    """A ball whose lower end bounds b·e_pooled(0) from below for every b ≥ b₀ and a ≥ b (module doc)."""
    return pooled_enclosure(0, 0, 0, 1 / Fraction(b_min), prec_bits)


def c8_statement(b_min: Fraction, k_text: str, floor_text: str) -> str:
    """What the C8 proof states, from b₀, the K it proved and the floor F at θ = 0 (the certificate's re-check
    derives it the same way)."""
    return (f"for every b >= {b_min} and every a >= b: {floor_text}/b <= sup over θ ∈ [0, 1] of |e_pooled(θ)| "
            f"<= {k_text}/b "
            f"(the calibration relation has a >= b for b >= {b_min}); the averaged symmetrization has "
            "e(0) = 1/2 and e(1) = −1/2 for every real a and b > 0, so its sup over θ of |e| is >= 1/2")


def prove_c8_population(b_min=C8_B_MIN, target=POOLED_TARGET) -> dict:
    """The certified population part of C8 (module doc): the pooled bound by bisection of θ ∈ [0, ½] × ε ∈ [0, 1/b₀]
    until every leaf shows |b·e| ≤ ``target``; K the largest upper end; the relation's a ≥ b at b₀; the
    averaged ends. ``proved`` when every leaf decided within the depth limit."""
    started = time.process_time()
    b_min, target = to_fraction(b_min, "b_min"), to_fraction(target, "target")
    if not (b_min >= 2 and target >= 1):
        raise InputError("the certified C8 needs b_min >= 2 and target >= 1")
    with ctx.workprec(PREC_BITS):
        gap = relation_gap(b_min)
        stack, leaves, proved, k = [((Fraction(0), Fraction(1, 2)), (Fraction(0), 1 / b_min), 0)], [], True, arb(0)
        while stack:
            (t0, t1), (e0, e1), depth = stack.pop()
            ball = pooled_enclosure(t0, t1, e0, e1)
            bound = abs(ball)
            if bound.is_finite() and bound <= _ball(target):
                leaves.append({"theta": [str(t0), str(t1)], "eps": [str(e0), str(e1)],
                               "b_e": [lower_decimal(ball, 8), upper_decimal(ball, 8)]})
                k = k.max(arb(bound.upper()))
                continue
            if depth >= _MAX_DEPTH:
                proved = False
                leaves.append({"theta": [str(t0), str(t1)], "eps": [str(e0), str(e1)], "b_e": None})
                continue
            if depth % 2 == 0:
                mid = (t0 + t1) / 2
                stack += [((t0, mid), (e0, e1), depth + 1), ((mid, t1), (e0, e1), depth + 1)]
            else:
                mid = (e0 + e1) / 2
                stack += [((t0, t1), (e0, mid), depth + 1), ((t0, t1), (mid, e1), depth + 1)]
        relation_inside = bool(gap > 0)
    k_text = pooled_k_text([box["b_e"] for box in leaves if box["b_e"] is not None]) if proved else upper_decimal(k, 8)
    with ctx.workprec(PREC_BITS):
        floor = pooled_floor(b_min)
    floor_text = lower_decimal(floor, 8)
    statement = c8_statement(b_min, k_text, floor_text)
    checks = identities("C8")
    ok = proved and relation_inside and all(checks.values()) and floor > 0
    return {"statement": statement if ok else None, "proved": bool(ok), "b_min": str(b_min),
            "pooled": {"K": k_text, "floor": floor_text, "target": str(target), "leaves": len(leaves), "boxes": leaves,
                       "domain": "θ ∈ [0, 1/2] (e(1 − θ) = −e(θ)), ε = 1/b ∈ [0, 1/b_min], a − b >= 0"},
            "relation_gap_at_b_min": lower_decimal(gap, 8), "identities": checks,
            "averaged": {"e(0)": "1/2", "e(1)": "-1/2", "for": "every real a, b > 0"},
            "rests_on": ["the exact forms of stumpcheck.theory.boundary, decided by SymPy in this run (identities)",
                         "g increasing from 0 to 1, v e^{-v} decreasing for v >= 1, X monotone (module doc)",
                         "Arb ball arithmetic at 128 bits (python-flint)"],
            "cpu_seconds": round(time.process_time() - started, 3)}


def averaged_end_balls(a: float, b: float, dps: int = 20) -> dict:
    """Certified enclosures of the generated averaged e at θ = 0 and θ = 1 (a cross-check of the exact ±½)."""
    from stumpcheck.numerics.certified.enclosures.pointwise import certified_error

    return {str(t): certified_error(a, b, t, estimator="averaged", dps=dps) for t in (0, 1)}
