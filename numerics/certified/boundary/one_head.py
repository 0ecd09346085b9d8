"""C7 at population level, certified for every b ≥ b₀: the one head's sup over θ of |e(θ)| stays near 1, its interior sup is O(1/b).

**Domain.** The band around the calibration relation, a = calibration_a(b) + w/b with |w| ≤ c (w = 0 is the
relation; c = ½ is the band the certified flow stays in for all t ≥ T, docs/tail.md), b ≥ b₀, worked in
ε = 1/b ∈ [0, 1/b₀] with ε = 0 included. Then r = e^{b−a} = ε²q, q = e^{xε}, x = ρ₁ − w ∈ [ρ₁ − c, ρ₁ + c].

**The witness** θ_b = 1 − b⁻⁴ (inside (0, 1), in the deep layer of width ~b⁻³). By the exact form of
:func:`stumpcheck.theory.boundary.witness_form` (checked by SymPy against the model's closed form),

    W(ε) := (1 + e(θ_b))/ε = [1 + q·B_u + ε³R_A(1 + ε) + q·ε³ − q·E_u/ε] / [q·B_u + ε + ε⁴R_A],

with E_u = e^{−1/ε + ε³} and E_u/ε increasing on ε ∈ (0, 1) (0 at ε = 0), B_u = 1 − E_u, and
R_A = (e^t − 1 − t)/t² at t = ε³ increasing (a series with non-negative coefficients, ½ at t = 0). On a box
[ε₀, ε₁] each atom's range is its end values; Arb evaluates W over the box (every occurrence independently:
rigorous, if wide). Since e ≥ −θ ≥ −1 always, |e(θ_b)| = −e(θ_b) = 1 − ε·W ≥ 1 − K/b with K the upper end of W
over the box holding ε = 1/b. W(0) = 2, so K → 2 and δ(b) = K/b → 0.

**The end** θ = 1 (every label 0): e(1) = κ₁(b) − 1 = 1/b − 1/(e^b − 1) − 1 for every real a (SymPy), so
|e(1)| ≥ 1 − 1/b; e is continuous on [0, 1], so the sup over the open interval (0, 1) is at least that too.

**The interior** θ ∈ [δ, 1 − δ]: |b·e| ≤ max(1, M(b) − 1), M(b) = b(δ + r̄(b))/(e^{δb} − 1) decreasing in b,
and b·e(δ) ≥ 1 − M_δ(b), M_δ(b) = b(1 − δ + r̄(b))/(e^{(1−δ)b} − 1) decreasing in b
(:mod:`stumpcheck.numerics.certified.region.interior_error`), so (1 − M_δ(b₀))/b ≤ sup |e| ≤ max(1, M(b₀) − 1)/b
for every b ≥ b₀: the interior sup is b⁻¹ up to these factors, its exponent −1 whatever range of b is fitted.

Arb at 128 bits; every bound printed outward (:func:`~stumpcheck.numerics.certified.region.bounds.upper_decimal`).
"""

from __future__ import annotations

import time
from fractions import Fraction
from functools import cache

from flint import arb, ctx, fmpq

from stumpcheck.numerics.certified.proofs.domains import to_fraction
from stumpcheck.numerics.certified.region.bounds import lower_decimal, upper_decimal
from stumpcheck.numerics.precision import InputError

__all__ = ["C7_B_MIN", "C7_BAND", "witness_enclosure", "prove_c7_population", "witness_delta", "rho1_ball", "identities",
           "c7_statement", "eps_boxes", "PREC_BITS"]

PREC_BITS = 128
#: b₀ of the certified C7 (the smallest scale of the quick table)
C7_B_MIN = Fraction(10)
#: half-width c of the band |w| ≤ c around the calibration relation (the certified flow's band)
C7_BAND = Fraction(1, 2)
#: dyadic ε-boxes below 1/b₀: [1/(b₀2^{j+1}), 1/(b₀2^j)] for j < this, then [0, 1/(b₀2^this)]
_LEVELS = 16


def _ball(x: Fraction) -> arb:
    x = Fraction(x)
    return arb(fmpq(x.numerator, x.denominator))


def _hull(lo: arb, hi: arb) -> arb:
    return arb(lo.lower()).union(arb(hi.upper()))


@cache
def _derived_rho1():
    """ρ₁ of the derived calibration relation a = b + 2 log b − ρ₁/b (a SymPy constant; once per process)."""
    from stumpcheck.numerics.certified.region.bounds import _rho1
    from stumpcheck.theory import margin_quantities as mq
    from stumpcheck.theory.symbols import b as b_symbol

    return _rho1(mq.relation_expression("calibration_a"), b_symbol)


def rho1_ball() -> arb:
    """ρ₁ = 3/2 + π²/3 − 3ζ(3) as an Arb ball at the current precision, read off the derived relation."""
    from stumpcheck.numerics.certified.enclosures.balls import sympy_constant_ball

    return sympy_constant_ball(_derived_rho1())


@cache
def identities(claim: str) -> dict:
    """The SymPy checks of the exact forms a proof of ``claim`` ("C7" or "C8") rests on (once per process)."""
    from stumpcheck.theory.boundary import boundary_identities

    return boundary_identities(claim)


def _e_u(eps: Fraction) -> arb:
    """E_u = e^{−1/ε + ε³} (0 at ε = 0)."""
    if eps == 0:
        return arb(0)
    e = _ball(eps)
    return (-1 / e + e**3).exp()


def _r_a(eps: Fraction) -> arb:
    """R_A = (e^t − 1 − t)/t² at t = ε³ (½ at ε = 0)."""
    if eps == 0:
        return arb(1) / 2
    t = _ball(eps) ** 3
    return (t.expm1() - t) / t**2


def witness_enclosure(eps_lo, eps_hi, c=C7_BAND, prec_bits: int = PREC_BITS, *, w=None) -> arb:
    """A ball holding W(ε) = (1 + e(1 − ε⁴))/ε for every ε ∈ [eps_lo, eps_hi] ⊆ [0, ½] and every w ∈ ``w``
    (a pair inside [−1, 1]; default [−c, c]) (module doc)."""
    e0, e1, c = to_fraction(eps_lo, "eps_lo"), to_fraction(eps_hi, "eps_hi"), to_fraction(c, "c")
    w0, w1 = (-c, c) if w is None else (to_fraction(w[0], "w"), to_fraction(w[1], "w"))
    if not (0 <= e0 <= e1 <= Fraction(1, 2) and 0 <= c <= 1 and -1 <= w0 <= w1 <= 1):
        raise InputError("the witness needs 0 <= ε₀ <= ε₁ <= 1/2, 0 <= c <= 1 and -1 <= w₀ <= w₁ <= 1")
    with ctx.workprec(prec_bits):
        rho = rho1_ball()
        x_lo, x_hi = rho - _ball(w1), rho - _ball(w0)
        q = _hull((x_lo * _ball(e0)).exp(), (x_hi * _ball(e1)).exp())
        e_u = _hull(_e_u(e0), _e_u(e1))
        e_u_over_eps = _hull(arb(0) if e0 == 0 else _e_u(e0) / _ball(e0), _e_u(e1) / _ball(e1) if e1 else arb(0))
        b_u = 1 - e_u
        r_a = _hull(_r_a(e0), _r_a(e1))
        eps = _hull(_ball(e0), _ball(e1))
        numerator = 1 + q * b_u + eps**3 * r_a * (1 + eps) + q * eps**3 - q * e_u_over_eps
        denominator = q * b_u + eps + eps**4 * r_a
        return numerator / denominator


def eps_boxes(b_min: Fraction) -> list:
    """The proof's ε-boxes: dyadic below 1/b₀, then [0, 1/(b₀2^16)] (exact rationals)."""
    top = 1 / b_min
    boxes = [(top / 2 ** (j + 1), top / 2**j) for j in range(_LEVELS)]
    return boxes + [(Fraction(0), top / 2**_LEVELS)]


def witness_delta(b, leaves: list) -> Fraction:
    """An exact rational δ with |e(1 − b⁻⁴)| ≥ 1 − δ at this b, from the proof's ``leaves`` (K of the box holding 1/b)."""
    eps = 1 / to_fraction(b, "b")
    for leaf in leaves:
        lo, hi = (Fraction(v) for v in leaf["eps"])
        if lo <= eps <= hi:
            return Fraction(leaf["K_upper"]) * eps
    raise InputError(f"b = {b} is below the proof's b₀")


def c7_statement(b_min: Fraction, c: Fraction, delta: Fraction, k_text: str, interior_constant: str,
                 interior_floor: str) -> str:
    """What the C7 proof states, from its constants and the K it proved (a decimal; the certificate's re-check
    derives it the same way)."""
    sup_floor = 1 - Fraction(k_text) / Fraction(b_min)
    return (f"for every b >= {b_min} and every a with |b·(a − calibration_a(b))| <= {c} (the calibration "
            f"relation is w = 0): at θ = 1 − b⁻⁴, e(θ) <= −1 + K/b with K = {k_text} "
            f"(K -> 2 as b -> ∞), so sup over θ ∈ (0, 1) of |e(θ)| >= 1 − K/b >= {float(sup_floor):.6g}; at θ = 1, "
            f"|e(1)| = 1 − κ₁(b) >= 1 − 1/b for every real a; and {interior_floor}/b <= sup over θ ∈ "
            f"[{delta}, {1 - delta}] of |e(θ)| <= {interior_constant}/b")


def prove_c7_population(b_min=C7_B_MIN, c=C7_BAND, delta=Fraction(1, 20)) -> dict:
    """The certified population part of C7 for every b ≥ ``b_min`` on the band |w| ≤ ``c`` (module doc).

    Returns the statement, the ε-leaves with the upper end K of W on each (exact decimals, rounded up), K (their
    maximum), the bound of |e(1)|, the interior constant C = max(1, M(b₀) − 1) with sup over θ ∈ [δ, 1 − δ] of
    |e| ≤ C/b, and ``proved`` (every W finite and 1 − K/b₀ > 0)."""
    from stumpcheck.numerics.certified.region.interior_error import interior_error_margin

    started = time.process_time()
    b_min, c, delta = to_fraction(b_min, "b_min"), to_fraction(c, "c"), to_fraction(delta, "delta")
    if not (b_min >= 2 and 0 <= c <= 1 and 0 < delta < Fraction(1, 2)):
        raise InputError("the certified C7 needs b_min >= 2, 0 <= c <= 1 and 0 < delta < 1/2")
    leaves = []
    with ctx.workprec(PREC_BITS):
        for lo, hi in eps_boxes(b_min):
            ball = witness_enclosure(lo, hi, c)
            if not ball.is_finite():
                raise ArithmeticError(f"the witness enclosure is not finite on ε ∈ [{lo}, {hi}]")
            leaves.append({"eps": [str(lo), str(hi)], "W": [lower_decimal(ball, 8), upper_decimal(ball, 8)],
                           "K_upper": upper_decimal(ball, 8)})
        k = max(Fraction(leaf["K_upper"]) for leaf in leaves)
        k_limit = Fraction(leaves[-1]["K_upper"])
        m = interior_error_margin(b_min, c, delta)
        m_delta = interior_error_margin(b_min, c, delta, at_left_end=True)
        interior = arb(1).max(m - 1)
        floor = lower_decimal(1 - m_delta, 8)
    sup_floor = 1 - k / b_min
    checks = identities("C7")
    proved = sup_floor > 0 and Fraction(floor) > 0 and all(checks.values())
    interior_c = upper_decimal(interior, 8)
    k_text = max((leaf["K_upper"] for leaf in leaves), key=Fraction)
    statement = c7_statement(b_min, c, delta, k_text, interior_c, floor)
    return {"statement": statement if proved else None, "proved": bool(proved), "b_min": str(b_min), "c": str(c),
            "delta": str(delta), "witness": "theta = 1 - b^-4", "K": str(k), "K_near_infinity": str(k_limit),
            "sup_lower_bound_at_b_min": lower_decimal(1 - _ball(k) / _ball(b_min), 8),
            "end_bound": "|e(1)| = 1 - kappa_1(b) >= 1 - 1/b (every real a, b > 0)",
            "interior_constant": interior_c, "interior_M_at_b_min": upper_decimal(m, 8),
            "interior_floor": floor, "interior_M_delta_at_b_min": upper_decimal(m_delta, 8), "leaves": leaves,
            "identities": checks, "rho1": str(_derived_rho1()),
            "rests_on": ["the exact forms of stumpcheck.theory.boundary, decided by SymPy in this run (identities)",
                         "the monotonicity of E_u, E_u/ε, R_A and q in ε (module doc)",
                         "the interior bound of stumpcheck.numerics.certified.region.interior_error",
                         "Arb ball arithmetic at 128 bits (python-flint)"],
            "cpu_seconds": round(time.process_time() - started, 3)}
