"""C4 for all t ≥ T: bounds of s(t) = b·sup over θ ∈ [δ, 1 − δ] of |e(θ)| on the region R_all = {b ≥ b_T, |w| ≤ c}.

**The bound.** With u = bθ, v = b(1 − θ), r = e^{b−a}, A = e^v − 1 and B_u = 1 − e^{−u}, the one-head error is
exactly (docs/model.md §2.1, docs/tail.md §1)

    b·e(θ) = 1 − P(θ),     P = (v + r·u)/(A + r·B_u) ≥ 0      (θ ∈ [0, 1]).

For θ ∈ [δ, 1 − δ]: u ≤ b, A + r·B_u ≥ A = e^v − 1, and v ↦ (v + r·b)/(e^v − 1) decreases on v > 0, so with
v ≥ δb

    P(θ) ≤ (v + r·b)/(e^v − 1) ≤ b(δ + r)/(e^{δb} − 1).

On R_all, a = calibration_a(b) + w/b with calibration_a(b) = b + 2 log b − ρ₁/b and |w| ≤ c, so
r = b^{−2}·e^{(ρ₁ − w)/b} ≤ r̄(b) := b^{−2}·e^{(ρ₁ + c)/b}. Hence P ≤ M(b) := b(δ + r̄(b))/(e^{δb} − 1) on the
whole interior, so |1 − P| ≤ max(1, M(b) − 1). For a lower bound one θ is enough: at θ = δ (u = δb,
v = (1 − δ)b), P(δ) ≤ (v + r·u)/A ≤ b(1 − δ + r̄(b))/(e^{(1−δ)b} − 1) =: M_δ(b). Hence

    1 − M_δ(b) ≤ s = sup over θ ∈ [δ, 1 − δ] of |b·e(θ)| ≤ max(1, M(b) − 1).

M and M_δ decrease in b (products of the positive decreasing b/(e^{kb} − 1), k > 0, and k' + r̄(b)), and
both → 0 exponentially fast. **Along the flow.** When the flow is in R_all for all t ≥ T with b increasing, b(t) is at
least b₋(t) := max(β₋, (lower band of b(t)⁴)^{1/4}) (:mod:`stumpcheck.numerics.certified.region.all_time`),
so M(b(t)) ≤ M(b₋(t)) and M_δ(b(t)) ≤ M_δ(b₋(t)), both → 0: **s(t) → 1**. And
log sup|e|/log t = (log s − log b)/log t, so

    log sup|e|/log t + 1/4 ∈ [log(1 − M_δ)/log t − E₊(t), log max(1, M − 1)/log t − E₋(t)],

[E₋, E₊] the band of log b/log t − 1/4 (→ 0): **the exponent of C4 tends to −1/4**. Every number is an Arb
ball at 200 bits, printed as an outward-rounded decimal; ρ₁ comes from the derived relation, as in
:mod:`stumpcheck.numerics.certified.region.bounds`.
"""

from __future__ import annotations

import math
from fractions import Fraction
from functools import lru_cache

from flint import arb, ctx

from stumpcheck.numerics.certified.proofs.domains import to_fraction
from stumpcheck.numerics.certified.region.all_time import ALL_TIME_BAND_TIMES, all_time_band
from stumpcheck.numerics.certified.region.bounds import lower_decimal, upper_decimal
from stumpcheck.numerics.precision import InputError

__all__ = ["INTERIOR_DELTA", "interior_error_margin", "interior_error_band", "interior_error_table"]

_PREC = 200
#: C4's interior θ ∈ [δ, 1 − δ] (the same δ as the tube's sup|e| readings)
INTERIOR_DELTA = Fraction(1, 20)


def _ball(x) -> arb:
    x = Fraction(x)
    return arb(x.numerator) / arb(x.denominator)


@lru_cache(maxsize=1)
def _rho1_upper() -> arb:
    """The upper end of ρ₁ = −3ζ(3) + 3/2 + π²/3, read off the derived calibration relation (once: SymPy)."""
    from stumpcheck.numerics.certified.region.bounds import _constant_ball, _rho1
    from stumpcheck.theory import margin_quantities as mq
    from stumpcheck.theory.symbols import b as b_symbol

    return arb(_constant_ball(_rho1(mq.relation_expression("calibration_a"), b_symbol)).upper())


def interior_error_margin(b_lower, c, delta=INTERIOR_DELTA, *, at_left_end: bool = False) -> arb:
    """M(b) = b(δ + r̄(b))/(e^{δb} − 1), r̄(b) = b^{−2}e^{(ρ₁ + c)/b}, at b = ``b_lower`` > 0 (module doc): a ball
    whose upper end bounds P(θ) on θ ∈ [δ, 1 − δ] for every state of R_all with b ≥ b_lower. With
    ``at_left_end``: M_δ(b) = b(1 − δ + r̄(b))/(e^{(1−δ)b} − 1), which bounds P(δ) alone."""
    b_lower, c, delta = (to_fraction(x, name) for x, name in ((b_lower, "b"), (c, "c"), (delta, "delta")))
    if not (b_lower > 0 and c >= 0 and 0 < delta < Fraction(1, 2)):
        raise InputError("the interior bound needs b > 0, c >= 0 and 0 < delta < 1/2")
    with ctx.workprec(_PREC):
        b, d = _ball(b_lower), _ball(delta)
        if at_left_end:
            d = 1 - d
        r_bar = ((_rho1_upper() + _ball(c)) / b).exp() / (b * b)
        return b * (d + r_bar) / (d * b).expm1()


def interior_error_band(region, t_entry, beta_lo, beta_hi, t, delta=INTERIOR_DELTA) -> dict:
    """At one t ≥ T: b₋(t), M(b₋(t)), the band of s = sup|e|·b and of log sup|e|/log t + 1/4 (module doc);
    ``region`` the constants holding on R_all for all t ≥ T (b_start, c, d₋, d₊)."""
    band = all_time_band(region, t_entry, beta_lo, beta_hi, t)
    b_lower = max(to_fraction(beta_lo, "β₋"), Fraction(_root_lower(band["b4"][0])))
    with ctx.workprec(_PREC):
        m = interior_error_margin(b_lower, region.c, delta)
        m_left = interior_error_margin(b_lower, region.c, delta, at_left_end=True)
        s_lo = arb(max(arb(0), 1 - m_left).lower())
        s_hi = arb(max(arb(1), m - 1).upper())
        log_t = _ball(to_fraction(t, "t")).log()
        e_lo, e_hi = (arb(x) for x in band["log_b_over_log_t_minus_quarter"])
        exponent_hi = s_hi.log() / log_t - e_lo
        exponent_lo = (s_lo.log() / log_t - e_hi) if s_lo > 0 else None
    return {"t": band["t"], "b_at_least": lower_decimal(_ball(b_lower), 10), "M": _upper_scientific(m), "M_delta": _upper_scientific(m_left),
            "sup_e_b": [lower_decimal(s_lo, 10), upper_decimal(s_hi, 10)],
            "log_sup_e_over_log_t_plus_quarter": [
                "-inf" if exponent_lo is None else lower_decimal(exponent_lo, 6), upper_decimal(exponent_hi, 6)]}


def _upper_scientific(x: arb, digits: int = 4) -> str:
    """An upper bound of the ball ``x`` > 0 as "d.dddE±k" (M reaches 10^(−10⁶) and below at t = 10³⁰: an exact
    decimal of it would take minutes): k = ⌊log₁₀ x⌋, the mantissa x/10^k rounded up."""
    with ctx.workprec(_PREC):
        upper = arb(x.upper())
        if not upper > 0:
            raise InputError("the margin M must be positive")
        k = math.floor(float(upper.log() / arb(10).log()))  # any integer would do: the mantissa is exact
        mantissa = upper / arb(10) ** k
        if mantissa.upper() >= 10:
            k, mantissa = k + 1, upper / arb(10) ** (k + 1)
        return f"{upper_decimal(mantissa, digits)}E{k:+d}"


def _root_lower(b4_lower: str) -> str:
    """A decimal at most (b4_lower)^{1/4} (b4_lower a decimal lower bound of b⁴, > 0)."""
    with ctx.workprec(_PREC):
        value = arb(b4_lower)
        if not value > 0:
            raise InputError("the lower band of b⁴ must be positive")
        return lower_decimal(value ** (arb(1) / 4), 15)


def interior_error_table(region, t_entry, beta_lo, beta_hi, times=ALL_TIME_BAND_TIMES,
                         delta=INTERIOR_DELTA) -> dict:
    """The all-time C4 record: the statement, the rows at t = T and at each of ``times`` ≥ T, and the limits."""
    t_entry_exact = to_fraction(t_entry, "T")
    at = [t_entry_exact] + [to_fraction(t, "t") for t in times if to_fraction(t, "t") > t_entry_exact]
    rows = [interior_error_band(region, t_entry, beta_lo, beta_hi, t, delta) for t in at if t > 1]
    d = f"{float(delta):g}"
    return {"delta": d, "rows": rows,
            "statement": (f"for every t >= T: 1 − M_δ(b(t)) <= b·sup over θ in [{d}, {1 - float(delta):g}] of |e(θ)| "
                          f"<= max(1, M(b(t)) − 1), M(b) = b(δ + b^(−2)e^((ρ₁ + c)/b))/(e^(δb) − 1) decreasing "
                          f"in b, M_δ(b) = b(1 − δ + b^(−2)e^((ρ₁ + c)/b))/(e^((1−δ)b) − 1), b(t) >= b₋(t)"),
            "limits": "sup|e|·b → 1 (M_δ(b₋(t)), M(b₋(t)) → 0 exponentially in t^(1/4)); log sup|e|/log t → −1/4"}
