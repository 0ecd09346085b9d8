"""Λ(β) and the cumulants κ₁ … κ₄ of the truncated exponential over a range of rates β ≥ 0, in float64 intervals.

Λ(β) = log((1 − e^{−β})/β) (Λ(0) = 0) and κ_k(β), the cumulants of the density ∝ e^{−βτ} on [0, 1]
(docs/model.md §2.1), are what the generated θ-integrands call ``trunc_exp_jet`` (the Arb version is in
``numerics/generated/population_arb.py``). Over β ∈ [β_lo, β_hi] ⊂ [0, ∞), in the outward-rounded
intervals of :mod:`stumpcheck.numerics.certified.fast.interval`:

* Λ is decreasing (the mass M₀(β) = ∫₀¹ e^{−βτ} dτ is), so its range is [Λ(β_hi) lo, Λ(β_lo) hi], each
  end by log(−expm1(−β)/β) in intervals (libm expm1 and log, widened by their assumed bound), and
  Λ ≤ 0;
* κ₁, κ₂ by :func:`stumpcheck.numerics.certified.fast.cumulants.kappa_range` (decreasing: the range
  from the two ends);
* κ₃ = −κ₂′ and κ₄ = −κ₃′ by interval evaluation over the whole range (valid for any range, tight for a
  narrow one): for β < 2 their series, from κ₁ = ½ − Σ_{k≥1} c_k β^{2k−1}, c_k = B₂ₖ/(2k)!,

      κ₃ = −β·Σ_{k≥2} (2k−1)(2k−2) c_k β^{2k−4},    κ₄ = Σ_{k≥2} (2k−1)(2k−2)(2k−3) c_k β^{2k−4},

  summed for k ≤ :data:`TERMS` + 1 by interval Horner in β² with the coefficients enclosed in doubles,
  plus a remainder bound from |c_k| ≤ 4/(2π)^{2k} (as in the cumulants module): with y = β/2π ≤ 1/π,
  the terms of κ₃ are at most 4(2k)²y^{2k−3}/(2π)³ and those of κ₄ at most 4(2k)³y^{2k−4}/(2π)⁴, and the
  ratio of consecutive bounds beyond k₀ = TERMS + 2 is at most ((k₀ + 1)/k₀)^j·y² < 1 (j = 2, 3), so
  the tail is at most the first bound over one minus that ratio (exact rationals, π from below,
  rounded up: below 10⁻²⁰); for β ≥ 2 the closed forms with p = 1/(e^β − 1),

      κ₃ = 2/β³ − p(1 + p)(1 + 2p),    κ₄ = 6/β⁴ − p(1 + p)(1 + 6p + 6p²),

  (κ₃ = −κ₂′ with p′ = −p(1 + p), κ₂ = 1/β² − p(1 + p)), p enclosed as in the cumulants module
  ([0, 2⁻⁸⁶⁴] beyond β = 600). κ₃ ≥ 0 (κ₂ is decreasing) is intersected in.

Domain: β_lo ≤ β_hi, with β_lo clamped at 0 (callers pass b·θ or b·(1 − θ), ≥ 0 on the domain; the
clamp only undoes outward rounding below 0). Precision: a few ulps at a point; assumptions
:data:`stumpcheck.numerics.certified.fast.rounding.ASSUMPTIONS`.
"""

from __future__ import annotations

import math
from fractions import Fraction

import numba
import numpy as np

from stumpcheck.numerics.certified.fast.cumulants import _PI_BELOW, _bernoulli, _enclose, kappa_range
from stumpcheck.numerics.certified.fast.interval import add, div, expm1, log, mul, mul_pos, recip, sqr, sub

__all__ = ["TERMS", "SERIES_BELOW", "log_mass_range", "kappa34", "truncated_exponential_jet", "tail_bounds"]

#: Terms (k = 2 … TERMS + 1) of the series of κ₃ and κ₄.
TERMS = 24
#: Below this rate κ₃, κ₄ come from their series.
SERIES_BELOW = 2.0
_FAR = 600.0
_P_FAR = 2.0 ** -864
_JIT = dict(cache=True, fastmath=False, error_model="numpy")


def _coefficients():
    """Exact coefficients (lowest power of β² first) of κ₃/(−β) and κ₄."""
    bern = _bernoulli(2 * (TERMS + 1))
    c = {k: bern[2 * k] / math.factorial(2 * k) for k in range(2, TERMS + 2)}
    c3 = [(2 * k - 1) * (2 * k - 2) * c[k] for k in range(2, TERMS + 2)]
    c4 = [(2 * k - 1) * (2 * k - 2) * (2 * k - 3) * c[k] for k in range(2, TERMS + 2)]
    return c3, c4


def tail_bounds(upper: float = SERIES_BELOW) -> tuple[float, float]:
    """Upper bounds (doubles, rounded up) of the remainders of the κ₃ and κ₄ series on [0, upper]."""
    two_pi = 2 * _PI_BELOW
    y = Fraction(upper) / two_pi
    k0 = TERMS + 2
    r3 = Fraction(k0 + 1, k0) ** 2 * y ** 2
    r4 = Fraction(k0 + 1, k0) ** 3 * y ** 2
    if not (r3 < 1 and r4 < 1):
        raise ValueError("the series tail bound needs a smaller range")
    t3 = 4 * (2 * k0) ** 2 * y ** (2 * k0 - 3) / two_pi ** 3 / (1 - r3)
    t4 = 4 * (2 * k0) ** 3 * y ** (2 * k0 - 4) / two_pi ** 4 / (1 - r4)
    return _enclose(t3)[1], _enclose(t4)[1]


def _table():
    c3, c4 = _coefficients()
    return tuple(np.array([_enclose(x)[side] for x in coefficients[::-1]])
                 for coefficients in (c3, c4) for side in (0, 1))


_C3LO, _C3HI, _C4LO, _C4HI = _table()
_T3, _T4 = tail_bounds()


@numba.njit(inline="always", **_JIT)
def _horner(clo, chi, slo, shi):
    tlo, thi = clo[0], chi[0]
    for j in range(1, clo.size):
        tlo, thi = mul(tlo, thi, slo, shi)
        tlo, thi = add(tlo, thi, clo[j], chi[j])
    return tlo, thi


@numba.njit(**_JIT)
def _series34(blo, bhi):
    slo, shi = sqr(blo, bhi)
    plo, phi = _horner(_C3LO, _C3HI, slo, shi)
    plo, phi = mul(plo, phi, blo, bhi)
    k3lo, k3hi = add(-phi, -plo, -_T3, _T3)
    k4lo, k4hi = _horner(_C4LO, _C4HI, slo, shi)
    k4lo, k4hi = add(k4lo, k4hi, -_T4, _T4)
    return k3lo, k3hi, k4lo, k4hi


@numba.njit(**_JIT)
def _closed34(blo, bhi):
    if blo >= _FAR:
        plo, phi = 0.0, _P_FAR
    else:
        elo, ehi = expm1(blo, bhi)
        plo, phi = recip(elo, ehi)
    ilo, ihi = recip(blo, bhi)
    i2lo, i2hi = sqr(ilo, ihi)
    i3lo, i3hi = mul_pos(i2lo, i2hi, ilo, ihi)
    i4lo, i4hi = sqr(i2lo, i2hi)
    olo, ohi = add(1.0, 1.0, plo, phi)
    qlo, qhi = mul_pos(plo, phi, olo, ohi)  # p(1 + p)
    tlo, thi = add(1.0, 1.0, 2.0 * plo, 2.0 * phi)  # 1 + 2p (2p exact)
    rlo, rhi = mul_pos(qlo, qhi, tlo, thi)
    k3lo, k3hi = sub(2.0 * i3lo, 2.0 * i3hi, rlo, rhi)  # 2/β³: doubling is exact
    q6lo, q6hi = mul_pos(qlo, qhi, 6.0, 6.0)  # 1 + 6p + 6p² = 1 + 6p(1 + p)
    ulo, uhi = add(1.0, 1.0, q6lo, q6hi)
    vlo, vhi = mul_pos(qlo, qhi, ulo, uhi)
    f4lo, f4hi = mul_pos(6.0, 6.0, i4lo, i4hi)
    k4lo, k4hi = sub(f4lo, f4hi, vlo, vhi)
    return k3lo, k3hi, k4lo, k4hi


@numba.njit(**_JIT)
def kappa34(blo, bhi):
    """(κ₃ lo, hi, κ₄ lo, hi) over β ∈ [blo, bhi], blo ≥ 0 (module docstring)."""
    if bhi <= SERIES_BELOW:
        k3lo, k3hi, k4lo, k4hi = _series34(blo, bhi)
    elif blo >= SERIES_BELOW:
        k3lo, k3hi, k4lo, k4hi = _closed34(blo, bhi)
    else:
        a = _series34(blo, SERIES_BELOW)
        c = _closed34(SERIES_BELOW, bhi)
        k3lo, k3hi, k4lo, k4hi = min(a[0], c[0]), max(a[1], c[1]), min(a[2], c[2]), max(a[3], c[3])
    return max(k3lo, 0.0), k3hi, k4lo, k4hi


@numba.njit(**_JIT)
def _log_mass_point(beta):
    """Λ(β) at an exact rate β ≥ 0, enclosed."""
    if beta == 0.0:
        return 0.0, 0.0
    elo, ehi = expm1(-beta, -beta)
    mlo, mhi = div(-ehi, -elo, beta, beta)
    llo, lhi = log(mlo, mhi)
    return llo, min(lhi, 0.0)


@numba.njit(**_JIT)
def log_mass_range(blo, bhi):
    """(Λ lo, Λ hi) over β ∈ [blo, bhi], blo ≥ 0: Λ is decreasing."""
    far = _log_mass_point(bhi)
    near = _log_mass_point(blo)
    return far[0], near[1]


@numba.njit(**_JIT)
def truncated_exponential_jet(blo, bhi, order):
    """(Λ lo, Λ hi, κ₁ lo, hi, …, κ₄ lo, hi) over β ∈ [blo, bhi] (blo clamped at 0); the κ's beyond
    ``order`` are returned as the whole line (not computed)."""
    blo = max(blo, 0.0)
    inf = math.inf
    llo, lhi = log_mass_range(blo, bhi)
    k1lo, k1hi, k2lo, k2hi = -inf, inf, -inf, inf
    k3lo, k3hi, k4lo, k4hi = -inf, inf, -inf, inf
    if order >= 1:
        k1lo, k1hi, k2lo, k2hi = kappa_range(blo, bhi)
    if order >= 3:
        k3lo, k3hi, k4lo, k4hi = kappa34(blo, bhi)
    return llo, lhi, k1lo, k1hi, k2lo, k2hi, k3lo, k3hi, k4lo, k4hi

