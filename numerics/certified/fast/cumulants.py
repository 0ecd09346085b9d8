"""Interval enclosures of the truncated-exponential cumulants κ₁, κ₂ at a rate β ≥ 0 and over a range of rates.

κ_k(β) are the cumulants of the density ∝ e^{−βτ} on [0, 1] (docs/model.md §2.1): with
p = 1/(e^β − 1),

    κ₁ = 1/β − p,    κ₂ = 1/β² − p(1 + p).

**Large rates** (β ≥ :data:`SERIES_BELOW` = 2): these closed forms in interval arithmetic
(:mod:`stumpcheck.numerics.certified.fast.interval`), with p = 1/expm1(β) (libm expm1, widened by its
assumed bound); at β = 2 the differences lose under 4 bits; beyond β ≈ 709.78 expm1 overflows and p
is enclosed in [0, 2⁻¹⁰⁷²], still valid.

**Small rates** (0 ≤ β < 2), where the closed forms cancel (terms of size 1/β^k): the Taylor series
from 1/(e^β − 1) = 1/β − ½ + Σₖ B₂ₖ β^{2k−1}/(2k)!,

    κ₁ = ½ − Σ_{k≥1} B₂ₖ β^{2k−1}/(2k)!,    κ₂ = Σ_{k≥1} (2k − 1) B₂ₖ β^{2k−2}/(2k)!,

summed for k ≤ :data:`TERMS` = 20 by interval Horner in β² with the coefficients enclosed in doubles
(from the exact Bernoulli numbers), plus a rigorous remainder. Remainder bound: |B₂ₖ|/(2k)! =
2ζ(2k)/(2π)^{2k} ≤ 4/(2π)^{2k} (ζ(2k) ≤ ζ(2) < 2), so with x = (β/2π)² < 1,

    |Σ_{k>K} B₂ₖ β^{2k−1}/(2k)!| ≤ (4/β)·x^{K+1}/(1 − x),
    |Σ_{k>K} (2k − 1)B₂ₖ β^{2k−2}/(2k)!| ≤ (4/β²)·x^{K+1}·[(2K + 1)/(1 − x) + 2x/(1 − x)²],

both increasing in β (powers β^{2K+1}, β^{2K} over a decreasing 1 − x), so their values at β = 2 bound
them on [0, 2]; they are computed here in exact rational arithmetic with π replaced by a lower bound
and rounded up (about 3·10⁻²¹ and 7·10⁻²⁰, far below the rounding of κ₁ ≥ 0.31, κ₂ ≥ 0.069 there).
Every result is intersected with the known ranges κ₁ ∈ [0, ½], κ₂ ∈ [0, 1/12] (the mean and the
variance of a density on [0, 1] that decreases for β ≥ 0).

**Over a range of rates** [β_lo, β_hi]: κ₁ and κ₂ are decreasing (κ₁′ = −κ₂ < 0, κ₂′ = −κ₃ < 0, since
κ₃(β) = −⅛·L″(β/2) > 0 for β > 0 where L(x) = coth x − 1/x is the Langevin function, concave on
(0, ∞) by Lazarević's inequality cosh x < (sinh x/x)³), so their range is enclosed by the point
enclosures at the two ends: [κ(β_hi).lo, κ(β_lo).hi].

Domain: β ≥ 0 a double (an end of an enclosure); precision: a few ulps at a point.
"""

from __future__ import annotations

import math
from fractions import Fraction

import numba
import numpy as np

from stumpcheck.numerics.certified.fast.interval import add, expm1, mul, recip, sqr, sub
from stumpcheck.numerics.certified.fast.rounding import down, up

__all__ = ["SERIES_BELOW", "TERMS", "TAIL_KAPPA1", "TAIL_KAPPA2", "kappa_point", "kappa_range",
           "series_coefficients"]

#: Below this rate κ₁, κ₂ come from their series.
SERIES_BELOW = 2.0
#: Bernoulli terms B₂ … B₂ₖ of the series.
TERMS = 20
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


def series_coefficients() -> tuple[list[Fraction], list[Fraction]]:
    """Exact c₁, c₂ (lowest power first) with κ₁ = ½ + β·Σ c₁ⱼβ²ʲ, κ₂ = Σ c₂ⱼβ²ʲ (TERMS terms each)."""
    b = _bernoulli(2 * TERMS)
    c1 = [-b[2 * k] / math.factorial(2 * k) for k in range(1, TERMS + 1)]
    c2 = [(2 * k - 1) * b[2 * k] / math.factorial(2 * k) for k in range(1, TERMS + 1)]
    return c1, c2


def _tails() -> tuple[float, float]:
    """Upper bounds of the two series remainders on [0, SERIES_BELOW] (module docstring), rounded up."""
    beta = Fraction(SERIES_BELOW)
    x = (beta / (2 * _PI_BELOW)) ** 2
    n = TERMS + 1
    t1 = 4 / beta * x ** n / (1 - x)
    t2 = 4 / beta ** 2 * x ** n * ((2 * TERMS + 1) / (1 - x) + 2 * x / (1 - x) ** 2)
    return _enclose(t1)[1], _enclose(t2)[1]


def _tables():
    c1, c2 = series_coefficients()
    # highest power first, for Horner
    lo1, hi1 = np.array([_enclose(c)[0] for c in c1[::-1]]), np.array([_enclose(c)[1] for c in c1[::-1]])
    lo2, hi2 = np.array([_enclose(c)[0] for c in c2[::-1]]), np.array([_enclose(c)[1] for c in c2[::-1]])
    return lo1, hi1, lo2, hi2


_C1_LO, _C1_HI, _C2_LO, _C2_HI = _tables()
TAIL_KAPPA1, TAIL_KAPPA2 = _tails()
_TWELFTH_UP = _enclose(Fraction(1, 12))[1]
_JIT = dict(cache=True, fastmath=False, error_model="numpy")


@numba.njit(inline="always", **_JIT)
def _horner(lo_coefficients, hi_coefficients, slo, shi):
    tlo, thi = lo_coefficients[0], hi_coefficients[0]
    for j in range(1, lo_coefficients.size):
        tlo, thi = mul(tlo, thi, slo, shi)
        tlo, thi = add(tlo, thi, lo_coefficients[j], hi_coefficients[j])
    return tlo, thi


@numba.njit(**_JIT)
def kappa_point(beta):
    """(κ₁ lo, κ₁ hi, κ₂ lo, κ₂ hi) at an exact rate β ≥ 0 (module docstring)."""
    if beta < SERIES_BELOW:
        slo, shi = sqr(beta, beta)
        plo, phi = _horner(_C1_LO, _C1_HI, slo, shi)
        plo, phi = mul(plo, phi, beta, beta)
        k1lo, k1hi = add(plo, phi, 0.5 - TAIL_KAPPA1, 0.5 + TAIL_KAPPA1)
        k2lo, k2hi = _horner(_C2_LO, _C2_HI, slo, shi)
        k2lo, k2hi = down(k2lo - TAIL_KAPPA2), up(k2hi + TAIL_KAPPA2)
    else:
        elo, ehi = expm1(beta, beta)
        plo, phi = recip(elo, ehi)
        ilo, ihi = recip(beta, beta)
        k1lo, k1hi = sub(ilo, ihi, plo, phi)
        olo, ohi = add(1.0, 1.0, plo, phi)
        qlo, qhi = mul(plo, phi, olo, ohi)
        i2lo, i2hi = sqr(ilo, ihi)
        k2lo, k2hi = sub(i2lo, i2hi, qlo, qhi)
    return max(k1lo, 0.0), min(k1hi, 0.5), max(k2lo, 0.0), min(k2hi, _TWELFTH_UP)


@numba.njit(**_JIT)
def kappa_range(beta_lo, beta_hi):
    """(κ₁ lo, κ₁ hi, κ₂ lo, κ₂ hi) over all β ∈ [beta_lo, beta_hi] ⊂ [0, ∞): the decreasing κ's at the ends."""
    if beta_lo == beta_hi:
        return kappa_point(beta_lo)
    far = kappa_point(beta_hi)
    near = kappa_point(beta_lo)
    return far[0], near[1], far[2], near[3]
