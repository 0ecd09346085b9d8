"""The one-head e and ∇e over complex rectangles of (a, b, θ), and ∇L over complex (a, b) rectangles.

The one-head error is, for each θ, a meromorphic function of (a, b, θ) jointly: with u = 1 − θ, the rates
β_L = bθ, β_R = bu, the masses E = 1 − e^{−β}, the cumulants κ₁ = 1/β − p, κ₂ = 1/β² − p(1 + p),
p = 1/(e^β − 1), the weights w = E_R X/(E_L + E_R X), 1 − w = E_L/(E_L + E_R X), X = e^{y}, y = a − bθ,

    m_R = uκ₁(β_R),  m_L = θ(1 − κ₁(β_L)),  Δ = m_R + m_L,  V_R = u²κ₂(β_R),  V_L = θ²κ₂(β_L),
    e = w·m_R − (1 − w)·m_L,   ∂e/∂a = w(1 − w)Δ,   ∂e/∂b = −[wV_R + (1 − w)V_L + w(1 − w)Δ²]

(the forms of :mod:`stumpcheck.numerics.certified.fast.one_head`). :func:`error_rectangles` evaluates them in
the rectangular complex intervals of :mod:`stumpcheck.numerics.certified.fast.complex_interval` with the
same building blocks as the complex-θ bounds of
:mod:`stumpcheck.numerics.certified.fast.complex_one_head` (κ by series for |β| ≤ 2 with a remainder disk,
E by its series for |β| ≤ ½, the weights in the form whose exponential has a non-positive real part), but
with a and b complex rectangles too: β = b·θ and y = a − bθ = (a − b) + bu are complex products. A finite
result means no denominator of the evaluation vanishes on the rectangles: e and ∇e are holomorphic in
(a, b, θ) there, and the rectangles contain their values at every point.

:func:`gradient_rectangle` encloses ∇L = ∫₀¹ e∇e dθ for every (a, b) of complex rectangles by the
first-order sum Σ_k h_k·(e∇e)(A, B, Θ_k) over a tiling of [0, 1] by real θ-boxes Θ_k of width h_k (the
breakpoint pieces of the rectangles' real midpoint, θ ∈ [0, ½] by θ and [½, 1] by u = 1 − θ, each cut into
``subdivisions`` boxes): for each (a, b) the integral over Θ_k is h_k times a mean of the integrand on Θ_k,
which lies in the (convex) rectangle enclosing its values. A finite sum also says that ∇L is holomorphic on
the rectangles (an integral of a continuous integrand holomorphic in the parameters). This is the crude
bound the tube's Bernstein-ellipse cells need (:mod:`stumpcheck.numerics.certified.tube.analytic`); the
real-θ rule of :mod:`stumpcheck.numerics.certified.fast.theta_integrals` serves the real points.

Domain: rectangles with Re b > 0 (the rates' series and closed forms hold for any complex β; a rectangle
of b reaching Re b ≤ 0 is refused by the caller); θ ⊂ [0, 1] real for the integral, any rectangle for
:func:`error_rectangles`. Precision: rectangular dependency (crude, by design); assumptions
:data:`stumpcheck.numerics.certified.fast.rounding.ASSUMPTIONS` and the sin/cos bound of
:data:`~stumpcheck.numerics.certified.fast.complex_interval.TRIG_ASSUMPTION`.
"""

from __future__ import annotations

import math

import numba
import numpy as np

from stumpcheck.numerics.certified.fast.complex_interval import cadd, cmul, cmul_real, csub, modulus_up
from stumpcheck.numerics.certified.fast.complex_one_head import _kappa, _mass, _weights
from stumpcheck.numerics.certified.fast.interval import add, intersect, one_minus
from stumpcheck.numerics.certified.fast.rounding import down, up

__all__ = ["error_rectangles", "error_modulus", "gradient_rectangle", "gradient_rectangles_pieces",
           "DEFAULT_SUBDIVISIONS"]

_JIT = dict(cache=True, fastmath=False, error_model="numpy")
_INF = math.inf
#: θ-boxes per breakpoint piece of the first-order sum (steering: any number gives a valid enclosure).
DEFAULT_SUBDIVISIONS = 12


@numba.njit(**_JIT)
def _finite(z):
    return (z[0] > -_INF and z[1] < _INF and z[2] > -_INF and z[3] < _INF
            and z[0] == z[0] and z[1] == z[1] and z[2] == z[2] and z[3] == z[3])


@numba.njit(**_JIT)
def error_rectangles(a, b, t, u):
    """(e, ∂e/∂a, ∂e/∂b) as rectangles (tuples of four doubles) over the rectangles a, b, θ ∈ t and
    u = 1 − θ ∈ u (each of t, u enclosing the other's complement); an infinite end where unbounded."""
    beta_l = cmul(t, b)
    beta_r = cmul(u, b)
    k1l, k2l = _kappa(beta_l)
    k1r, k2r = _kappa(beta_r)
    el = _mass(beta_l)
    er = _mass(beta_r)
    # y = a − bθ = (a − b) + bu, both enclosed and intersected
    y1 = csub(a, beta_l)
    y2 = cadd(csub(a, b), beta_r)
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
    s = cadd(cadd(cmul(w, vr), cmul(v, vl)), cmul(wv, cmul(delta, delta)))
    eb = (-s[1], -s[0], -s[3], -s[2])
    return e, ea, eb


@numba.njit(**_JIT)
def _piece_sum(a, b, p0, p1, upper, subdivisions, out):
    """Add Σ h_k (e∂e/∂a, e∂e/∂b)(a, b, Θ_k) over ``subdivisions`` boxes of [p0, p1] (θ, or u if ``upper``)
    to ``out`` (8 doubles: two rectangles); False as soon as a term is not finite."""
    step = (p1 - p0) / subdivisions
    x0 = p0
    for k in range(subdivisions):
        x1 = p1 if k == subdivisions - 1 else min(max(p0 + (k + 1) * step, x0), p1)
        olo, ohi = one_minus(x0, x1)
        if upper:
            t = (max(olo, 0.0), min(ohi, 1.0), 0.0, 0.0)
            u = (x0, x1, 0.0, 0.0)
        else:
            t = (x0, x1, 0.0, 0.0)
            u = (max(olo, 0.0), min(ohi, 1.0), 0.0, 0.0)
        e, ea, eb = error_rectangles(a, b, t, u)
        hlo = max(down(x1 - x0), 0.0)
        hhi = up(x1 - x0)
        ga = cmul_real(cmul(e, ea), hlo, hhi)
        gb = cmul_real(cmul(e, eb), hlo, hhi)
        if not (_finite(ga) and _finite(gb)):
            return False
        out[0], out[1] = add(out[0], out[1], ga[0], ga[1])
        out[2], out[3] = add(out[2], out[3], ga[2], ga[3])
        out[4], out[5] = add(out[4], out[5], gb[0], gb[1])
        out[6], out[7] = add(out[6], out[7], gb[2], gb[3])
        x0 = x1
    return True


@numba.njit(**_JIT)
def gradient_rectangles_pieces(a, b, theta_points, rest_points, subdivisions):
    """(8 doubles: the rectangles of ∂L/∂a and ∂L/∂b, ok) by the first-order sum over the pieces of
    θ ∈ [0, ½] (``theta_points``) and u ∈ [0, ½] (``rest_points``), sorted doubles from 0 to ½; ok False
    (and the whole plane) when some term is not finite."""
    out = np.zeros(8)
    for half in range(2):
        points = theta_points if half == 0 else rest_points
        for i in range(points.size - 1):
            if not _piece_sum(a, b, points[i], points[i + 1], half == 1, subdivisions, out):
                for j in range(4):
                    out[2 * j], out[2 * j + 1] = -_INF, _INF
                return out, False
    return out, True


def gradient_rectangle(a, b, *, subdivisions: int = DEFAULT_SUBDIVISIONS):
    """((∂L/∂a rectangle, ∂L/∂b rectangle), ok) over the complex rectangles ``a`` = (re lo, re hi, im lo, im hi)
    and ``b`` (Re b > 0), by the first-order sum of the module docstring; ok False where a term is unbounded
    (a singularity of the continuation, or the rectangles' overestimation)."""
    from stumpcheck.numerics.certified.fast.theta_integrals import split_pieces

    a = tuple(float(x) for x in a)
    b = tuple(float(x) for x in b)
    if not (len(a) == 4 and len(b) == 4 and a[0] <= a[1] and a[2] <= a[3] and b[0] <= b[1] and b[2] <= b[3]
            and all(map(math.isfinite, (*a, *b)))):
        raise ValueError("rectangles are (re lo, re hi, im lo, im hi) of finite doubles, lo <= hi")
    if not b[0] > 0:
        return (None, None), False
    theta_points, rest_points = split_pieces(0.5 * (a[0] + a[1]), 0.5 * (b[0] + b[1]))
    out, ok = gradient_rectangles_pieces(a, b, theta_points, rest_points, int(subdivisions))
    return (tuple(out[:4]), tuple(out[4:])), bool(ok)


@numba.njit(**_JIT)
def error_modulus(a, b, t, u):
    """An upper bound of |e| over the rectangles (+∞ where unbounded)."""
    e, _, _ = error_rectangles(a, b, t, u)
    m = modulus_up(e)
    return m if m == m else _INF

