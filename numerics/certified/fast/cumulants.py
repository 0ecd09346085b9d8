"""Interval enclosures of the truncated-exponential cumulants κ₁, κ₂ at a rate β ≥ 0 and over a range of rates.

κ_k(β) are the cumulants of the density ∝ e^{−βτ} on [0, 1] (docs/model.md §2.1): with
p = 1/(e^β − 1),

    κ₁ = 1/β − p,    κ₂ = 1/β² − p(1 + p).

**Large rates** (β ≥ :data:`SERIES_BELOW` = 2): these closed forms in interval arithmetic
(:mod:`stumpcheck.numerics.certified.fast.interval`), with p = 1/expm1(β) (libm expm1, widened by its
assumed bound); at β = 2 the differences lose under 4 bits; for β ≥ 600, p < 2e^{−600} < 2⁻⁸⁶⁴ is
enclosed as [0, 2⁻⁸⁶⁴] (no overflow of expm1, no subnormal arithmetic).

**Small rates** (0 ≤ β < 2), where the closed forms cancel (terms of size 1/β^k): the Taylor series
from 1/(e^β − 1) = 1/β − ½ + Σₖ B₂ₖ β^{2k−1}/(2k)!,

    κ₁ = ½ − Σ_{k≥1} B₂ₖ β^{2k−1}/(2k)!,    κ₂ = Σ_{k≥1} (2k − 1) B₂ₖ β^{2k−2}/(2k)!,

summed for k ≤ K by interval Horner in β² with the coefficients enclosed in doubles (from the exact
Bernoulli numbers), plus a rigorous remainder; K = 8, 13, 20 on β < ¼, 1, 2 (:data:`SERIES_TABLES`).
Remainder bound: |B₂ₖ|/(2k)! = 2ζ(2k)/(2π)^{2k} ≤ 4/(2π)^{2k} (ζ(2k) ≤ ζ(2) < 2), so with
x = (β/2π)² < 1,

    |Σ_{k>K} B₂ₖ β^{2k−1}/(2k)!| ≤ (4/β)·x^{K+1}/(1 − x),
    |Σ_{k>K} (2k − 1)B₂ₖ β^{2k−2}/(2k)!| ≤ (4/β²)·x^{K+1}·[(2K + 1)/(1 − x) + 2x/(1 − x)²],

both increasing in β (powers β^{2K+1}, β^{2K} over a decreasing 1 − x), so their values at a table's
upper end bound them on the table's range; they are computed in exact rational arithmetic with π
replaced by a lower bound and rounded up (below 10⁻¹⁹, far under the rounding of κ₁ ≥ 0.34,
κ₂ ≥ 0.068 there). Every result is intersected with the known ranges κ₁ ∈ [0, ½], κ₂ ∈ [0, 1/12] (the mean and the
variance of a density on [0, 1] that decreases for β ≥ 0).

**Over a range of rates** [β_lo, β_hi]: κ₁ and κ₂ are decreasing (κ₁′ = −κ₂ < 0, κ₂′ = −κ₃ < 0, since
κ₃(β) = −⅛·L″(β/2) > 0 for β > 0 where L(x) = coth x − 1/x is the Langevin function, concave on
(0, ∞) by Lazarević's inequality cosh x < (sinh x/x)³), so the range of a wide interval of rates is enclosed by the point
enclosures at the two ends, [κ(β_hi).lo, κ(β_lo).hi]; a range narrower than 2⁻³⁰ relative (a point
rate after rounding) by one interval evaluation of the same forms, which is valid for any range.

Domain: β ≥ 0 a double (an end of an enclosure); precision: a few ulps at a point.
"""

from __future__ import annotations

import math
from fractions import Fraction

import numba
import numpy as np

from stumpcheck.numerics.certified.fast.interval import add, expm1, mul, recip, sqr, sub
from stumpcheck.numerics.certified.fast.rounding import down, up

__all__ = ["SERIES_BELOW", "SERIES_TABLES", "TAILS", "kappa_interval", "kappa_point", "kappa_range",
           "series_coefficients"]

#: Below this rate κ₁, κ₂ come from their series.
SERIES_BELOW = 2.0
#: (upper end of the range of β, Bernoulli terms K) of each series table.
SERIES_TABLES = ((0.25, 8), (1.0, 13), (SERIES_BELOW, 20))
TERMS = max(k for _, k in SERIES_TABLES)
#: Beyond this rate p = 1/(e^β − 1) < 2e^{−600} < 2^{−864.6} is enclosed as [0, 2⁻⁸⁶⁴] (products of
#: such tiny values would otherwise reach the subnormals, ~100 cycles an operation on x86).
_FAR = 600.0
_P_FAR = 2.0 ** -864
#: A lower bound of π (for the remainder bounds).
_PI_BELOW = Fraction(314159265358, 100000000000)


def _bernoulli(count: int) -> list[Fraction]:
    """B₀ … B_count exactly (B₁ = −½), from Σ_{k=0}^{m} C(m + 1, k) B_k = 0."""
    numbers = [Fraction(1)]
    for m in range(1, count + 1):
        numbers.append(-sum(math.comb(m + 1, k) * numbers[k] for k in range(m)) / (m + 1))
    return numbers


def _enclose(value: Fraction) -> tuple[float, float]:
    """The two doubles next to an exact rational (equal if it is a double)."""
    near = float(value)  # correctly rounded
    lo = near if Fraction(near) <= value else math.nextafter(near, -math.inf)
    hi = near if Fraction(near) >= value else math.nextafter(near, math.inf)
    return lo, hi


def series_coefficients(terms: int = TERMS) -> tuple[list[Fraction], list[Fraction]]:
    """Exact c₁, c₂ (lowest power first) with κ₁ = ½ + β·Σ c₁ⱼβ²ʲ, κ₂ = Σ c₂ⱼβ²ʲ (``terms`` terms each)."""
    b = _bernoulli(2 * terms)
    c1 = [-b[2 * k] / math.factorial(2 * k) for k in range(1, terms + 1)]
    c2 = [(2 * k - 1) * b[2 * k] / math.factorial(2 * k) for k in range(1, terms + 1)]
    return c1, c2


def _tails(upper: float, terms: int) -> tuple[float, float]:
    """Upper bounds of the two series remainders after ``terms`` terms on [0, upper] (module docstring)."""
    beta = Fraction(upper)
    x = (beta / (2 * _PI_BELOW)) ** 2
    n = terms + 1
    t1 = 4 / beta * x ** n / (1 - x)
    t2 = 4 / beta ** 2 * x ** n * ((2 * terms + 1) / (1 - x) + 2 * x / (1 - x) ** 2)
    return _enclose(t1)[1], _enclose(t2)[1]


def _table(terms: int):
    """(c₁ lo, c₁ hi, c₂ lo, c₂ hi), highest power first (for Horner)."""
    c1, c2 = series_coefficients(terms)
    return tuple(np.array([_enclose(c)[side] for c in coefficients[::-1]])
                 for coefficients in (c1, c2) for side in (0, 1))


_NEAR, _MID, _WIDE = (_table(k) for _, k in SERIES_TABLES)
#: (κ₁ remainder, κ₂ remainder) of each table, rounded up.
TAILS = tuple(_tails(upper, k) for upper, k in SERIES_TABLES)
_T_NEAR, _T_MID, _T_WIDE = TAILS
_TWELFTH_UP = _enclose(Fraction(1, 12))[1]
_JIT = dict(cache=True, fastmath=False, error_model="numpy")


@numba.njit(inline="always", **_JIT)
def _times_nonneg(tlo, thi, slo, shi):
    """[t]·[s] for 0 ≤ slo ≤ shi (finite)."""
    return down(tlo * (shi if tlo < 0.0 else slo)), up(thi * (slo if thi < 0.0 else shi))


@numba.njit(inline="always", **_JIT)
def _horner(lo_coefficients, hi_coefficients, slo, shi):
    tlo, thi = lo_coefficients[0], hi_coefficients[0]
    for j in range(1, lo_coefficients.size):
        tlo, thi = _times_nonneg(tlo, thi, slo, shi)
        tlo, thi = add(tlo, thi, lo_coefficients[j], hi_coefficients[j])
    return tlo, thi


@numba.njit(inline="always", **_JIT)
def _series(beta_lo, beta_hi, table, tails):
    c1lo, c1hi, c2lo, c2hi = table
    t1, t2 = tails
    slo, shi = sqr(beta_lo, beta_hi)
    plo, phi = _horner(c1lo, c1hi, slo, shi)
    plo, phi = _times_nonneg(plo, phi, beta_lo, beta_hi)
    k1lo, k1hi = add(plo, phi, 0.5 - t1, 0.5 + t1)
    k2lo, k2hi = _horner(c2lo, c2hi, slo, shi)
    return k1lo, k1hi, down(k2lo - t2), up(k2hi + t2)


@numba.njit(inline="always", **_JIT)
def _closed(beta_lo, beta_hi):
    """The closed forms over [beta_lo, beta_hi] ⊂ [SERIES_BELOW, ∞)."""
    if beta_lo >= _FAR:
        plo, phi = 0.0, _P_FAR
    else:
        elo, ehi = expm1(beta_lo, beta_hi)
        plo, phi = recip(elo, ehi)
    ilo, ihi = recip(beta_lo, beta_hi)
    k1lo, k1hi = sub(ilo, ihi, plo, phi)
    olo, ohi = add(1.0, 1.0, plo, phi)
    qlo, qhi = mul(plo, phi, olo, ohi)
    i2lo, i2hi = sqr(ilo, ihi)
    k2lo, k2hi = sub(i2lo, i2hi, qlo, qhi)
    return k1lo, k1hi, k2lo, k2hi


@numba.njit(**_JIT)
def kappa_interval(beta_lo, beta_hi):
    """(κ₁ lo, κ₁ hi, κ₂ lo, κ₂ hi) over β ∈ [beta_lo, beta_hi] ⊂ [0, ∞) by interval evaluation of the
    series (valid up to their table's upper end, inclusive) or the closed forms (module docstring):
    valid for any range, tight for a narrow one."""
    if beta_hi < 0.25:
        k1lo, k1hi, k2lo, k2hi = _series(beta_lo, beta_hi, _NEAR, _T_NEAR)
    elif beta_hi < 1.0:
        k1lo, k1hi, k2lo, k2hi = _series(beta_lo, beta_hi, _MID, _T_MID)
    elif beta_hi < SERIES_BELOW:
        k1lo, k1hi, k2lo, k2hi = _series(beta_lo, beta_hi, _WIDE, _T_WIDE)
    elif beta_lo >= SERIES_BELOW:
        k1lo, k1hi, k2lo, k2hi = _closed(beta_lo, beta_hi)
    else:  # straddles SERIES_BELOW: the series on [beta_lo, 2], the closed forms on [2, beta_hi]
        a1lo, a1hi, a2lo, a2hi = _series(beta_lo, SERIES_BELOW, _WIDE, _T_WIDE)
        b1lo, b1hi, b2lo, b2hi = _closed(SERIES_BELOW, beta_hi)
        k1lo, k1hi, k2lo, k2hi = min(a1lo, b1lo), max(a1hi, b1hi), min(a2lo, b2lo), max(a2hi, b2hi)
    return max(k1lo, 0.0), min(k1hi, 0.5), max(k2lo, 0.0), min(k2hi, _TWELFTH_UP)


@numba.njit(**_JIT)
def kappa_point(beta):
    """(κ₁ lo, κ₁ hi, κ₂ lo, κ₂ hi) at an exact rate β ≥ 0 (module docstring)."""
    return kappa_interval(beta, beta)


#: Ranges of rates narrower than this (relative) are enclosed by one interval evaluation.
_NARROW = 2.0 ** -30


@numba.njit(**_JIT)
def kappa_range(beta_lo, beta_hi):
    """(κ₁ lo, κ₁ hi, κ₂ lo, κ₂ hi) over all β ∈ [beta_lo, beta_hi] ⊂ [0, ∞): a narrow range by one interval
    evaluation, a wider one from the decreasing κ's at its two ends."""
    if beta_hi - beta_lo <= _NARROW * beta_lo:
        return kappa_interval(beta_lo, beta_hi)
    far = kappa_point(beta_hi)
    near = kappa_point(beta_lo)
    return far[0], near[1], far[2], near[3]
