"""Interval arithmetic on float64 pairs (lo, hi), compiled with numba, rounded outward after every operation.

An interval is two doubles lo ≤ hi standing for the closed real set [lo, hi] (ends may be ±∞; a lower
end is never +∞ and an upper end never −∞). Every operation returns an interval that contains the
exact result of the operation on every pair of reals from its arguments: each end is computed in
round-to-nearest and then widened by :func:`~stumpcheck.numerics.certified.fast.rounding.down` or
:func:`~stumpcheck.numerics.certified.fast.rounding.up` (at least one step to the next double; the
proof, and the assumptions on the rounding mode, fused operations and libm, are in
:mod:`stumpcheck.numerics.certified.fast.rounding`, whose ``ASSUMPTIONS`` every certificate copies).
Ends of a product or quotient are the extreme ones of the endpoint combinations (RN is monotone, so
the extreme rounded combination is the rounding of the extreme exact one); 0·∞ is taken as 0 (an
infinite end stands for "unbounded", every element is finite). Division by an interval that contains
0 returns the whole line (−∞, ∞), never a finite value; so does any NaN. exp, expm1, log and log1p
are monotone: libm at the two ends, widened by the libm bound; log and log1p of an interval reaching
below their domain return a lower end of −∞ (argument ≤ 0, resp. ≤ −1) and NaN-free results.

All functions take and return the ends as separate doubles (tuples), so that numba inlines them into
the kernels with no allocation. Precision: one widening per operation, about 2⁻⁵² relative each (four
steps per libm call). Domain: any doubles.
"""

from __future__ import annotations

import math

import numba

from stumpcheck.numerics.certified.fast.rounding import down, down_libm, up, up_libm

__all__ = ["as_pair", "add", "sub", "neg", "mul", "mul_pos", "sqr", "div", "recip", "scale", "exp", "expm1", "log",
           "log1p", "hull", "intersect", "one_minus", "contains"]

_INF = math.inf
_JIT = dict(cache=True, fastmath=False, error_model="numpy", inline="always")


@numba.njit(**_JIT)
def add(alo, ahi, blo, bhi):
    """[a] + [b]."""
    return down(alo + blo), up(ahi + bhi)


@numba.njit(**_JIT)
def sub(alo, ahi, blo, bhi):
    """[a] − [b]."""
    return down(alo - bhi), up(ahi - blo)


@numba.njit(**_JIT)
def neg(alo, ahi):
    """−[a] (exact)."""
    return -ahi, -alo


@numba.njit(**_JIT)
def one_minus(alo, ahi):
    """1 − [a]."""
    return down(1.0 - ahi), up(1.0 - alo)


@numba.njit(**_JIT)
def _times(x, y):
    """x·y with 0·(±∞) = 0 (ends of intervals of finite reals)."""
    if x == 0.0 or y == 0.0:
        return 0.0
    return x * y


@numba.njit(**_JIT)
def mul(alo, ahi, blo, bhi):
    """[a]·[b]."""
    p1 = _times(alo, blo)
    p2 = _times(alo, bhi)
    p3 = _times(ahi, blo)
    p4 = _times(ahi, bhi)
    if p1 != p1 or p2 != p2 or p3 != p3 or p4 != p4:
        return -_INF, _INF
    return down(min(min(p1, p2), min(p3, p4))), up(max(max(p1, p2), max(p3, p4)))


@numba.njit(**_JIT)
def mul_pos(alo, ahi, blo, bhi):
    """[a]·[b] for intervals known to be ≥ 0 (alo, blo ≥ 0); falls back to :func:`mul` otherwise."""
    if alo >= 0.0 and blo >= 0.0:
        lo = _times(alo, blo)
        hi = _times(ahi, bhi)
        return max(down(lo), 0.0), up(hi)
    return mul(alo, ahi, blo, bhi)


@numba.njit(**_JIT)
def sqr(alo, ahi):
    """[a]² (the range of x², not [a]·[a])."""
    if alo >= 0.0:
        return max(down(alo * alo), 0.0), up(ahi * ahi)
    if ahi <= 0.0:
        return max(down(ahi * ahi), 0.0), up(alo * alo)
    return 0.0, up(max(alo * alo, ahi * ahi))


@numba.njit(**_JIT)
def scale(alo, ahi, c):
    """c·[a] for a double c."""
    return mul(alo, ahi, c, c)


@numba.njit(**_JIT)
def recip(blo, bhi):
    """1/[b]; the whole line if 0 ∈ [b]."""
    if blo <= 0.0 <= bhi or blo != blo or bhi != bhi:
        return -_INF, _INF
    lo = down(1.0 / bhi)
    hi = up(1.0 / blo)
    if blo > 0.0:
        lo = max(lo, 0.0)
    else:
        hi = min(hi, 0.0)
    return lo, hi


@numba.njit(**_JIT)
def div(alo, ahi, blo, bhi):
    """[a]/[b]; the whole line if 0 ∈ [b] (or an end is ∞/∞). Two divisions: for b > 0, x/b increases
    in x, and an end of [a] is divided by the end of [b] that makes it extreme (by its sign); b < 0
    the mirror."""
    if blo <= 0.0 <= bhi or blo != blo or bhi != bhi:
        return -_INF, _INF
    if blo > 0.0:
        q1 = alo / (bhi if alo >= 0.0 else blo)
        q2 = ahi / (blo if ahi >= 0.0 else bhi)
    else:
        q1 = ahi / (bhi if ahi >= 0.0 else blo)
        q2 = alo / (blo if alo >= 0.0 else bhi)
    if q1 != q1 or q2 != q2:
        return -_INF, _INF
    return down(q1), up(q2)


@numba.njit(**_JIT)
def exp(alo, ahi):
    """e^[a] (> 0)."""
    return max(down_libm(math.exp(alo)), 0.0), up_libm(math.exp(ahi))


@numba.njit(**_JIT)
def expm1(alo, ahi):
    """e^[a] − 1 (> −1; the sign of the argument kept)."""
    lo = max(down_libm(math.expm1(alo)), -1.0)
    hi = up_libm(math.expm1(ahi))
    if alo >= 0.0:
        lo = max(lo, 0.0)
    if ahi <= 0.0:
        hi = min(hi, 0.0)
    return lo, hi


@numba.njit(**_JIT)
def log(alo, ahi):
    """log [a]; a lower end −∞ where [a] reaches 0 or below, the whole line if [a] has no positive element."""
    if ahi < 0.0 or ahi != ahi or alo != alo:
        return -_INF, _INF
    lo = -_INF if alo <= 0.0 else down_libm(math.log(alo))
    hi = -_INF if ahi == 0.0 else up_libm(math.log(ahi))
    if hi == -_INF:
        return -_INF, _INF
    return lo, hi


@numba.njit(**_JIT)
def log1p(alo, ahi):
    """log(1 + [a]); as :func:`log` with the domain a > −1."""
    if ahi < -1.0 or ahi != ahi or alo != alo:
        return -_INF, _INF
    lo = -_INF if alo <= -1.0 else down_libm(math.log1p(alo))
    hi = -_INF if ahi == -1.0 else up_libm(math.log1p(ahi))
    if hi == -_INF:
        return -_INF, _INF
    return lo, hi


@numba.njit(**_JIT)
def hull(alo, ahi, blo, bhi):
    """The smallest interval containing [a] and [b]."""
    return min(alo, blo), max(ahi, bhi)


@numba.njit(**_JIT)
def intersect(alo, ahi, blo, bhi):
    """[a] ∩ [b] for two enclosures of the same quantity (never empty for true enclosures; if the
    ends cross the hull is returned, so that a caller's mistake widens rather than loses a value)."""
    lo = max(alo, blo)
    hi = min(ahi, bhi)
    if lo > hi:
        return min(alo, blo), max(ahi, bhi)
    return lo, hi


@numba.njit(**_JIT)
def contains(alo, ahi, x):
    """Whether x ∈ [a]."""
    return alo <= x <= ahi


def as_pair(name: str, value) -> tuple[float, float]:
    """(lo, hi) from a finite number or a pair lo ≤ hi of finite numbers (a point or an interval given by a
    caller); InputError naming ``name`` otherwise."""
    import numpy as np

    from stumpcheck.numerics.precision import InputError

    if isinstance(value, (tuple, list, np.ndarray)) and len(value) == 2:
        lo, hi = float(value[0]), float(value[1])
    else:
        lo = hi = float(value)
    if not (math.isfinite(lo) and math.isfinite(hi) and lo <= hi):
        raise InputError(f"{name} must be a finite number or a pair lo <= hi of finite numbers, got {value!r}")
    return lo, hi
