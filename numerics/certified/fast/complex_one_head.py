"""Upper bounds of |½e²|, |e·∂e/∂a|, |e·∂e/∂b| over a rectangle of complex thresholds θ, for real (a, b) boxes.

The one-head e and ∇e of :mod:`stumpcheck.numerics.certified.fast.one_head` are meromorphic in θ (ratios
of entire functions of θ for each real a, b: the rates β_L = bθ, β_R = bu, u = 1 − θ, the masses
E = 1 − e^{−β}, the cumulants κ₁ = 1/β − p, κ₂ = 1/β² − p(1 + p), p = 1/(e^β − 1), and the weights
w = E_R X/(E_L + E_R X), 1 − w = E_L/(E_L + E_R X), X = e^{a − bθ}), real on the real axis, so
f(θ̄) = conj f(θ). :func:`integrand_bounds` evaluates the same formulas in the rectangular complex
intervals of :mod:`stumpcheck.numerics.certified.fast.complex_interval` over θ in a rectangle (given
with u = 1 − θ as a second rectangle, as the real layer does) and (a, b) in a real box, and returns
upper bounds of the three moduli. A finite result means every denominator of the evaluation is
nonzero on the rectangle, so the integrands have no pole there (they are analytic on it); an infinite
one means "no bound" (a pole or the rectangle's overestimation).

Forms chosen for the complex rectangle (each equal to the meromorphic function):

* κ₁, κ₂ for |β| ≤ 2 by their Taylor series in β (coefficients and remainder bounds of
  :mod:`stumpcheck.numerics.certified.fast.cumulants`, whose bounds hold for complex |β| since they
  bound Σ|terms| by |β|), with the remainder added as a square around the sum; beyond, the closed forms,
  p = q/(1 − q), q = e^{−β} for Re β ≥ 0 (no overflow; q enclosed as the square of half-side 2⁻⁸⁶⁴ when
  Re β ≥ 600) and p = 1/(e^β − 1) for Re β < 0.
* E = 1 − e^{−β}: for |β| ≤ ½ by β·Σ_{j≤J}(−β)ʲ/(j + 1)! with J = 14 and the remainder
  |β|^{J+2}·2/(J + 2)! (ratio of successive terms ≤ |β|/(j + 3) ≤ ½), so that a small rate keeps its
  relative precision; beyond, 1 − e^{−β} directly.
* The weights by the sign of Re y at the rectangle's centre, y = a − bθ (also (a − b) + bu, both parts
  intersected): E_R/(E_R + E_L e^{−y}) and E_L e^{−y}/(E_R + E_L e^{−y}) for Re y ≥ 0, the mirror forms
  otherwise; e^{∓y} enclosed as the square of half-side 2⁻⁸⁶⁵ when its real exponent is below −600
  (no subnormal arithmetic), and by libm's exp instead where that square is too coarse next to a mass
  E below 2⁻⁸⁶⁵ (a division by a rectangle around 0 otherwise).

Domain: a real box a ∈ [a], b ∈ [b] with b > 0; any rectangle (bounds are +∞ where no finite bound
follows). Precision: rectangular dependency; used only for the remainder of a Gauss–Legendre rule.
"""

from __future__ import annotations

import math
from fractions import Fraction

import numba
import numpy as np

from stumpcheck.numerics.certified.fast.complex_interval import (cadd, cadd_real, cdiv, cexp, cmul, cmul_real,
                                                                 csub, modulus_up)
from stumpcheck.numerics.certified.fast.cumulants import SERIES_TABLES, TAILS, series_coefficients
from stumpcheck.numerics.certified.fast.interval import intersect, sub
from stumpcheck.numerics.certified.fast.rounding import down, up

__all__ = ["integrand_bounds", "MASS_TERMS"]

_JIT = dict(cache=True, fastmath=False, error_model="numpy")
_INF = math.inf
_P_FAR = 2.0 ** -864
_E_FAR = 2.0 ** -865
#: Terms J + 1 of the series of E/β = Σ_{j≤J} (−β)ʲ/(j + 1)! (coefficients 1/(j + 1)!, evaluated at −β).
MASS_TERMS = 15


def _enclose(value: Fraction) -> tuple[float, float]:
    near = float(value)
    lo = near if Fraction(near) <= value else math.nextafter(near, -math.inf)
    hi = near if Fraction(near) >= value else math.nextafter(near, math.inf)
    return lo, hi


def _series_table(terms: int):
    c1, c2 = series_coefficients(terms)
    return tuple(np.array([_enclose(c)[side] for c in coefficients[::-1]]) for coefficients in (c1, c2)
                 for side in (0, 1))


_NEAR, _MID, _WIDE = (_series_table(k) for _, k in SERIES_TABLES)
_T_NEAR, _T_MID, _T_WIDE = TAILS
_MASS = tuple(np.array([_enclose(Fraction(1, math.factorial(j + 1)))[side] for j in range(MASS_TERMS)][::-1])
              for side in (0, 1))
_MASS_TAIL = _enclose(Fraction(2, math.factorial(MASS_TERMS + 1)))[1]


@numba.njit(**_JIT)
def _horner(clo, chi, s):
    """Σ c_j s^j (highest first in the arrays) at a complex rectangle s, real interval coefficients."""
    t = (clo[0], chi[0], 0.0, 0.0)
    for j in range(1, clo.size):
        t = cadd_real(cmul(t, s), clo[j], chi[j])
    return t


@numba.njit(**_JIT)
def _widen(z, r):
    """z plus the disk of radius r (as a square)."""
    return down(z[0] - r), up(z[1] + r), down(z[2] - r), up(z[3] + r)


@numba.njit(**_JIT)
def _kappa(beta):
    """(κ₁, κ₂) as complex rectangles over a rectangle of rates (module docstring)."""
    m = modulus_up(beta)
    if m <= 2.0:
        if m <= 0.25:
            table, tails = _NEAR, _T_NEAR
        elif m <= 1.0:
            table, tails = _MID, _T_MID
        else:
            table, tails = _WIDE, _T_WIDE
        c1lo, c1hi, c2lo, c2hi = table
        s = cmul(beta, beta)
        k1 = _widen(cadd_real(cmul(_horner(c1lo, c1hi, s), beta), 0.5, 0.5), tails[0])
        k2 = _widen(_horner(c2lo, c2hi, s), tails[1])
        return k1, k2
    one = (1.0, 1.0, 0.0, 0.0)
    if beta[0] >= 0.0:
        if beta[0] >= 600.0:
            q = (-_P_FAR, _P_FAR, -_P_FAR, _P_FAR)
        else:
            q = cexp((-beta[1], -beta[0], -beta[3], -beta[2]))
        p = cdiv(q, csub(one, q))
    else:
        p = cdiv(one, cadd_real(cexp(beta), -1.0, -1.0))
    inv = cdiv(one, beta)
    k1 = csub(inv, p)
    k2 = csub(cmul(inv, inv), cmul(p, cadd_real(p, 1.0, 1.0)))
    return k1, k2


@numba.njit(**_JIT)
def _mass(beta):
    """E = 1 − e^{−β} over a rectangle of rates (module docstring)."""
    m = modulus_up(beta)
    if m <= 0.5:
        mlo, mhi = _MASS
        t = (mlo[0], mhi[0], 0.0, 0.0)
        nb = (-beta[1], -beta[0], -beta[3], -beta[2])
        for j in range(1, mlo.size):
            t = cadd_real(cmul(t, nb), mlo[j], mhi[j])
        r = m
        for _ in range(MASS_TERMS):
            r = up(r * m)
        return _widen(cmul(t, beta), up(r * _MASS_TAIL))
    if beta[0] >= 600.0:
        q = (-_P_FAR, _P_FAR, -_P_FAR, _P_FAR)
    else:
        q = cexp((-beta[1], -beta[0], -beta[3], -beta[2]))
    return csub((1.0, 1.0, 0.0, 0.0), q)


@numba.njit(**_JIT)
def _weights(yrl, yrh, yil, yih, el, er, clamp):
    """(w, 1 − w) over y = [yrl, yrh] + i[yil, yih] (module docstring); ``clamp``: e^{∓y} as the square of
    half-side 2⁻⁸⁶⁵ when its real exponent is below −600 (else libm's exp, which may be subnormal)."""
    if 0.5 * yrl + 0.5 * yrh >= 0.0:
        if clamp and yrl >= 600.0:
            x = (-_E_FAR, _E_FAR, -_E_FAR, _E_FAR)
        else:
            x = cexp((-yrh, -yrl, -yih, -yil))
        tl = cmul(el, x)
        d = cadd(er, tl)
        return cdiv(er, d), cdiv(tl, d)
    if clamp and yrh <= -600.0:
        x = (-_E_FAR, _E_FAR, -_E_FAR, _E_FAR)
    else:
        x = cexp((yrl, yrh, yil, yih))
    tr = cmul(er, x)
    d = cadd(el, tr)
    return cdiv(tr, d), cdiv(el, d)


@numba.njit(**_JIT)
def integrand_bounds(alo, ahi, blo, bhi, t, u):
    """(M₀, M₁, M₂) ≥ |½e²|, |e ∂e/∂a|, |e ∂e/∂b| over θ ∈ t, u = 1 − θ ∈ u (rectangles, tuples of four
    doubles, each enclosing the other's complement), a ∈ [alo, ahi], b ∈ [blo, bhi]; +∞ where unbounded."""
    beta_l = cmul_real(t, blo, bhi)
    beta_r = cmul_real(u, blo, bhi)
    k1l, k2l = _kappa(beta_l)
    k1r, k2r = _kappa(beta_r)
    el = _mass(beta_l)
    er = _mass(beta_r)
    # y = a − bθ = (a − b) + bu, both enclosed and intersected
    y1 = cadd_real((-beta_l[1], -beta_l[0], -beta_l[3], -beta_l[2]), alo, ahi)
    dlo, dhi = sub(alo, ahi, blo, bhi)
    y2 = cadd_real(beta_r, dlo, dhi)
    yrl, yrh = intersect(y1[0], y1[1], y2[0], y2[1])
    yil, yih = intersect(y1[2], y1[3], y2[2], y2[3])
    w, v = _weights(yrl, yrh, yil, yih, el, er, True)
    if w[0] == -_INF:  # the clamped e^{∓y} too coarse next to a tiny mass: libm exp instead
        w, v = _weights(yrl, yrh, yil, yih, el, er, False)
    one = (1.0, 1.0, 0.0, 0.0)
    mr = cmul(u, k1r)
    ml = cmul(t, csub(one, k1l))
    delta = cadd(mr, ml)
    e = csub(cmul(w, mr), cmul(v, ml))
    wv = cmul(w, v)
    ea = cmul(wv, delta)
    vr = cmul(cmul(u, u), k2r)
    vl = cmul(cmul(t, t), k2l)
    eb = cadd(cadd(cmul(w, vr), cmul(v, vl)), cmul(wv, cmul(delta, delta)))  # −∂e/∂b (same modulus)
    me = modulus_up(e)
    m0 = up(0.5 * up(me * me))
    m1 = up(me * modulus_up(ea))
    m2 = up(me * modulus_up(eb))
    if m0 != m0:
        m0 = _INF
    if m1 != m1:
        m1 = _INF
    if m2 != m2:
        m2 = _INF
    return m0, m1, m2
