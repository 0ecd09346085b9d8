"""Rectangular complex intervals in float64, rounded outward: [re lo, re hi] + i·[im lo, im hi].

A complex interval is four doubles (re lo, re hi, im lo, im hi) standing for the closed rectangle of
complex numbers x + iy with x and y in the two real intervals. Every operation returns a rectangle that
contains the exact result for every pair of complex numbers from its arguments: the real and imaginary
parts are formed from the real interval operations of :mod:`stumpcheck.numerics.certified.fast.interval`
(each end rounded outward, assumptions in
:data:`stumpcheck.numerics.certified.fast.rounding.ASSUMPTIONS`), so each part of a product encloses the
range of its formula over the rectangles (the dependency between parts only widens). A rectangle with an
infinite end stands for "unbounded"; division by a rectangle whose squared modulus reaches 0 returns the
whole plane.

**sin and cos** of a real interval [y] (for e^{x+iy} = e^x(cos y + i sin y)): libm at the midpoint c, with
the Taylor bound |cos y − cos c| ≤ |sin c|·r + r²/2 and |sin y − sin c| ≤ |cos c|·r + r²/2 for
|y − c| ≤ r, widened by :data:`TRIG_ERROR` = 2⁻⁴⁵ absolute for libm's error (glibc documents ≤ 1 ulp,
≤ 2⁻⁵³ absolute for results of modulus ≤ 1, so the assumption has a margin of 2⁸) and intersected with
[−1, 1]. These enclosures are first order in r: they serve the bounds on a Bernstein ellipse
(:mod:`stumpcheck.numerics.certified.fast.gauss_legendre`), where only an upper bound of a modulus is
needed, never a value that ends up in a result. The assumption on sin/cos is in addition to the libm
assumption of the rounding module and is recorded in :data:`TRIG_ASSUMPTION`.

:func:`modulus_up` is an upper bound of |z| over a rectangle (IEEE sqrt is correctly rounded).

Domain: any doubles; precision: a few ulps per operation, plus the dependency of rectangular arithmetic.
"""

from __future__ import annotations

import math

import numba

from stumpcheck.numerics.certified.fast.interval import add, div, exp, mul, sqr, sub
from stumpcheck.numerics.certified.fast.rounding import ASSUMPTIONS, down, up

__all__ = ["TRIG_ERROR", "TRIG_ASSUMPTION", "cadd", "csub", "cmul", "cmul_real", "cdiv", "cexp", "cadd_real",
           "cos_sin", "modulus_up", "WHOLE"]

#: Assumed absolute error of libm's sin and cos (glibc documents ≤ 1 ulp).
TRIG_ERROR = 2.0 ** -45
TRIG_ASSUMPTION = ASSUMPTIONS["trig"]
_INF = math.inf
#: The whole plane.
WHOLE = (-_INF, _INF, -_INF, _INF)
_JIT = dict(cache=True, fastmath=False, error_model="numpy")
_SMALL = 2.0 ** -400
_LARGE = 2.0 ** 400
_SCALE = 2.0 ** 600


@numba.njit(**_JIT)
def cadd(a, b):
    """[a] + [b] (tuples of four doubles)."""
    rl, rh = add(a[0], a[1], b[0], b[1])
    il, ih = add(a[2], a[3], b[2], b[3])
    return rl, rh, il, ih


@numba.njit(**_JIT)
def csub(a, b):
    """[a] − [b]."""
    rl, rh = sub(a[0], a[1], b[0], b[1])
    il, ih = sub(a[2], a[3], b[2], b[3])
    return rl, rh, il, ih


@numba.njit(**_JIT)
def cadd_real(a, lo, hi):
    """[a] + [lo, hi] (a real interval)."""
    rl, rh = add(a[0], a[1], lo, hi)
    return rl, rh, a[2], a[3]


@numba.njit(**_JIT)
def cmul_real(a, lo, hi):
    """[a]·[lo, hi] (a real interval)."""
    rl, rh = mul(a[0], a[1], lo, hi)
    il, ih = mul(a[2], a[3], lo, hi)
    return rl, rh, il, ih


@numba.njit(**_JIT)
def cmul(a, b):
    """[a]·[b] = (ar br − ai bi) + i(ar bi + ai br)."""
    p1l, p1h = mul(a[0], a[1], b[0], b[1])
    p2l, p2h = mul(a[2], a[3], b[2], b[3])
    p3l, p3h = mul(a[0], a[1], b[2], b[3])
    p4l, p4h = mul(a[2], a[3], b[0], b[1])
    rl, rh = sub(p1l, p1h, p2l, p2h)
    il, ih = add(p3l, p3h, p4l, p4h)
    return rl, rh, il, ih


@numba.njit(**_JIT)
def cdiv(a, b):
    """[a]/[b] = [a]·conj[b]/|[b]|²; the whole plane if |[b]|² reaches 0. Both are first scaled by 2⁶⁰⁰
    (2⁻⁶⁰⁰) when [b]'s largest end is below 2⁻⁴⁰⁰ (above 2⁴⁰⁰), so that |[b]|² neither underflows nor
    overflows (the quotient is unchanged; the scaling is an interval product, rounded outward)."""
    big = max(max(abs(b[0]), abs(b[1])), max(abs(b[2]), abs(b[3])))
    if big < _SMALL:
        a = cmul_real(a, _SCALE, _SCALE)
        b = cmul_real(b, _SCALE, _SCALE)
    elif big > _LARGE and big < _INF:
        a = cmul_real(a, 1.0 / _SCALE, 1.0 / _SCALE)
        b = cmul_real(b, 1.0 / _SCALE, 1.0 / _SCALE)
    s1l, s1h = sqr(b[0], b[1])
    s2l, s2h = sqr(b[2], b[3])
    dl, dh = add(s1l, s1h, s2l, s2h)
    if not dl > 0.0:
        return WHOLE
    p1l, p1h = mul(a[0], a[1], b[0], b[1])
    p2l, p2h = mul(a[2], a[3], b[2], b[3])
    p3l, p3h = mul(a[2], a[3], b[0], b[1])
    p4l, p4h = mul(a[0], a[1], b[2], b[3])
    nrl, nrh = add(p1l, p1h, p2l, p2h)
    nil, nih = sub(p3l, p3h, p4l, p4h)
    rl, rh = div(nrl, nrh, dl, dh)
    il, ih = div(nil, nih, dl, dh)
    return rl, rh, il, ih


@numba.njit(**_JIT)
def cos_sin(lo, hi):
    """(cos lo, cos hi, sin lo, sin hi): enclosures of cos and sin over [lo, hi] (module docstring)."""
    if not (hi - lo < 8.0) or lo != lo or hi != hi:
        return -1.0, 1.0, -1.0, 1.0
    c = 0.5 * (lo + hi)
    r = up(max(up(hi - c), up(c - lo)))
    q = up(up(r * r) * 0.5)
    sc = math.sin(c)
    cc = math.cos(c)
    tc = up(up(up(up(abs(sc) + TRIG_ERROR) * r) + q) + TRIG_ERROR)
    ts = up(up(up(up(abs(cc) + TRIG_ERROR) * r) + q) + TRIG_ERROR)
    return (max(down(cc - tc), -1.0), min(up(cc + tc), 1.0), max(down(sc - ts), -1.0), min(up(sc + ts), 1.0))


@numba.njit(**_JIT)
def cexp(a):
    """e^[a] = e^x (cos y + i sin y) over the rectangle."""
    el, eh = exp(a[0], a[1])
    cl, ch, sl, sh = cos_sin(a[2], a[3])
    rl, rh = mul(el, eh, cl, ch)
    il, ih = mul(el, eh, sl, sh)
    return rl, rh, il, ih


@numba.njit(**_JIT)
def modulus_up(a):
    """An upper bound of |z| over the rectangle (+∞ if it is unbounded)."""
    x = max(abs(a[0]), abs(a[1]))
    y = max(abs(a[2]), abs(a[3]))
    if x != x or y != y:
        return _INF
    s = up(up(x * x) + up(y * y))
    return up(math.sqrt(s))
