"""What a region certified for all b ≥ b_T (the finite region joined with the tail b ≥ B) gives for all t ≥ T.

Hypotheses: R_all = {b ≥ b_T, |w| ≤ c} (w = b·(a − calibration_a(b))) is forward invariant with the drift
bounds (1 − d₊/b)/(2b³) ≤ ḃ ≤ (1 − d₋/b)/(2b³) on all of it (the finite region on [b_T, B] and the tail
on [B, ∞) with the same c, d₋, d₊, joined at b = B), and b(T) ∈ [β₋, β₊] ⊂ [b_T, ∞) with the state at T
in R_all. Then z(t) ∈ R_all for every t ≥ T and the bounds (L₁), (L₂), (U₁), (U₂) of
:mod:`stumpcheck.numerics.certified.region.bounds` hold with B = ∞ (no horizon; shrink 1 − d₋/B = 1):

    (U₂)  b⁴ ≤ β₊⁴ + 2(t − T) − κ₊(Y^{3/4} − β₊³),  Y = β₊⁴ + 2(t − T),                 κ₊ = 4d₋/3,
    (L₂)  b⁴ ≥ β₋⁴ + 2(t − T) − κ₋(X^{3/4} − β₋³),  X = β₋⁴ + 2(1 − δ₀)(t − T),  δ₀ = d₊/β₋,  κ₋ = (4d₊/3)/(1 − δ₀).

**Rate.** For t ≥ t₀ ≥ T ≥ 0, with β ∈ {β₋, β₊}: β⁴ ≤ X, Y ≤ β⁴ + 2t, so

    −|β⁴ − 2T|/t − κ(β⁴ + 2t)^{3/4}/t ≤ L₂/t − 2, U₂/t − 2 ≤ |β⁴ − 2T|/t,

and 1/t ≤ t^{−1/4}t₀^{−3/4}, (β⁴ + 2t)^{3/4}/t ≤ t^{−1/4}·2^{3/4}(1 + β⁴/(2t₀))^{3/4}. Both ends of the band
of b⁴/t lie in [L₂/t, U₂/t] (the lower end is max(L₁, L₂)/t ≤ b⁴/t ≤ U₂/t, the upper end min(U₁, U₂)/t
≥ L₂/t), hence

    |β_±(t) − 2| ≤ K·t^{−1/4} for all t ≥ t₀,
    K = max over (β, κ) ∈ {(β₋, κ₋), (β₊, κ₊)} of |β⁴ − 2T|·t₀^{−3/4} + κ·2^{3/4}(1 + β⁴/(2t₀))^{3/4}.

**Consequences.** log b(t)/log t − 1/4 = log(b⁴/t)/(4 log t) lies in [log β₋(t), log β₊(t)]/(4 log t) → 0
(C3's exponent); |a − calibration_a(b)| ≤ c/b ≤ c·(L(t))^{−1/4} with L(t) the lower band of b⁴ (C2's
calibration). All numbers are Arb balls at 200 bits, printed as outward-rounded decimals.
"""

from __future__ import annotations

from fractions import Fraction

from flint import arb, ctx

from stumpcheck.numerics.certified.proofs.domains import to_fraction
from stumpcheck.numerics.certified.region.bounds import lower_decimal, upper_decimal
from stumpcheck.numerics.precision import InputError

__all__ = ["all_time_band", "rate_constant", "all_time_table", "union_constants", "ALL_TIME_BAND_TIMES"]

_PREC = 200
#: the times at which the certificate states the all-time bands
ALL_TIME_BAND_TIMES = tuple(10.0**k for k in (8, 10, 12, 15, 20, 25, 30))


def union_constants(finite_region, tail_region):
    """The constants that hold on R ∪ R_∞ (the finite region joined with the tail): b_start of R, the larger c
    and d₊, the smaller d₋ (each drift bound then holds on both parts)."""
    from types import SimpleNamespace

    return SimpleNamespace(b_start=finite_region.b_start, c=max(finite_region.c, tail_region.c),
                           d_minus=min(finite_region.d_minus, tail_region.d_minus),
                           d_plus=max(finite_region.d_plus, tail_region.d_plus))


def _ball(x) -> arb:
    x = Fraction(x)
    return arb(x.numerator) / arb(x.denominator)


def _entry(region, t_entry, beta_lo, beta_hi):
    t_entry, beta_lo, beta_hi = (to_fraction(x, n) for x, n in ((t_entry, "T"), (beta_lo, "β₋"), (beta_hi, "β₊")))
    if t_entry < 0:
        raise InputError("the entry time T must be >= 0")
    if not (Fraction(region.b_start) <= beta_lo <= beta_hi):
        raise InputError("the entry's b range must lie in the region's [b_start, ∞)")
    if not Fraction(region.d_plus) < beta_lo:
        raise InputError("the entry's lowest b must exceed d₊ (else the lower drift bound is not positive)")
    return t_entry, beta_lo, beta_hi


def _kappas(region, beta_lo: arb) -> tuple[arb, arb, arb]:
    d_minus, d_plus = _ball(region.d_minus), _ball(region.d_plus)
    delta0 = d_plus / beta_lo
    return 4 * d_minus / 3, (4 * d_plus / 3) / (1 - delta0), delta0


def all_time_band(region, t_entry, beta_lo, beta_hi, t) -> dict:
    """Bands of b(t)⁴ and b(t)⁴/t at any t ≥ T (module docstring), with log b/log t − 1/4 and the bound
    c/b of the distance a − calibration_a(b) (in absolute value); outward decimals."""
    t_entry, beta_lo, beta_hi = _entry(region, t_entry, beta_lo, beta_hi)
    t = to_fraction(t, "t")
    if t < t_entry or t <= 1:
        raise InputError(f"t must be >= T = {float(t_entry):g} and > 1, got {float(t):g}")
    with ctx.workprec(_PREC):
        bl, bh, tb, te = _ball(beta_lo), _ball(beta_hi), _ball(t), _ball(t_entry)
        kappa_plus, kappa_minus, delta0 = _kappas(region, bl)
        elapsed = tb - te
        upper_1 = bh**4 + 2 * elapsed
        upper_2 = upper_1 - kappa_plus * (upper_1 ** (arb(3) / 4) - bh**3)
        lower_1 = bl**4 + 2 * (1 - delta0) * elapsed
        lower_2 = bl**4 + 2 * elapsed - kappa_minus * (lower_1 ** (arb(3) / 4) - bl**3)
        upper = min(upper_1.upper(), upper_2.upper())
        lower = max(lower_1.lower(), lower_2.lower())
        band = arb(lower).union(arb(upper))
        over_t = band / tb
        exponent = over_t.log() / (4 * tb.log())
        calibration = _ball(region.c) / arb(lower) ** (arb(1) / 4)
    return {"t": float(t), "b4": [lower_decimal(arb(lower)), upper_decimal(arb(upper))],
            "b4_over_t": [lower_decimal(over_t, 10), upper_decimal(over_t, 10)],
            "log_b_over_log_t_minus_quarter": [lower_decimal(exponent, 6), upper_decimal(exponent, 6)],
            "calibration_gap_at_most": upper_decimal(calibration, 6)}


def rate_constant(region, t_entry, beta_lo, beta_hi, t0) -> dict:
    """K with ``|β_±(t) − 2| ≤ K·t^{−1/4}`` for every t ≥ t₀ (module docstring); t₀ ≥ T."""
    t_entry, beta_lo, beta_hi = _entry(region, t_entry, beta_lo, beta_hi)
    t0 = to_fraction(t0, "t0")
    if t0 < t_entry or t0 <= 0:
        raise InputError(f"t0 must be >= T = {float(t_entry):g} and > 0")
    with ctx.workprec(_PREC):
        bl, bh, te, t0b = _ball(beta_lo), _ball(beta_hi), _ball(t_entry), _ball(t0)
        kappa_plus, kappa_minus, _ = _kappas(region, bl)
        quarter = arb(3) / 4
        terms = [abs(beta**4 - 2 * te) / t0b**quarter + kappa * arb(2) ** quarter * (1 + beta**4 / (2 * t0b)) ** quarter
                 for beta, kappa in ((bl, kappa_minus), (bh, kappa_plus))]
        k = terms[0] if terms[0].upper() > terms[1].upper() else terms[1]
    return {"K": upper_decimal(k, 6), "t0": float(t0),
            "statement": f"|beta_±(t) − 2| <= {upper_decimal(k, 6)}·t^(−1/4) for all t >= {float(t0):g}"}


def all_time_table(region, t_entry, beta_lo, beta_hi, times=ALL_TIME_BAND_TIMES) -> list[dict]:
    """:func:`all_time_band` at each of ``times`` ≥ T (the others are left out)."""
    t_entry_exact = to_fraction(t_entry, "T")
    return [all_time_band(region, t_entry, beta_lo, beta_hi, t) for t in times if to_fraction(t, "t") >= t_entry_exact]
