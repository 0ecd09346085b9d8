"""The one-head e, ∂e/∂a, ∂e/∂b enclosed over a box of (a, b, θ) in compiled float64 interval arithmetic.

The tilted-moment closed forms of :mod:`stumpcheck.numerics.certified.enclosures.one_head_arb` (derived
in :mod:`stumpcheck.numerics.population.one_head_float64`), in the outward-rounded intervals of
:mod:`stumpcheck.numerics.certified.fast.interval`: at θ ∈ [0, 1], u = 1 − θ, segment rates β_R = bu,
β_L = bθ, E = 1 − e^{−β}, κ_k from :mod:`stumpcheck.numerics.certified.fast.cumulants`,

    w = E_R X/(E_L + E_R X),  1 − w = E_L/(E_L + E_R X),  X = e^{y},  y = a − bθ = (a − b) + bu,
    m_R = uκ₁(β_R),  m_L = θ(1 − κ₁(β_L)),  Δ = m_R + m_L,  V_R = u²κ₂(β_R),  V_L = θ²κ₂(β_L),
    e = w·m_R − (1 − w)·m_L,   ∂e/∂a = w(1 − w)Δ,   ∂e/∂b = −[wV_R + (1 − w)V_L + w(1 − w)Δ²].

No logarithms and no overflow: for y ≥ 0 the weights are taken as E_R/(E_R + E_L e^{−y}) and
E_L e^{−y}/(E_R + E_L e^{−y}), for y < 0 as E_R e^{y}/(E_L + E_R e^{y}) and E_L/(E_L + E_R e^{y}): one
exponential of a non-positive argument (beyond |y| = 600 enclosed as [0, 2⁻⁸⁶⁵] ∋ e^{−|y|}, to keep
subnormal arithmetic out: a weight below e^{−600} ≈ 10⁻²⁶¹ is enclosed as [0, 2⁻⁸⁶⁵]), quotients of non-negative terms; w and 1 − w are enclosed
separately (no cancellation in 1 − w) and both intersected with [0, 1]. ∂e/∂a and ∂e/∂b are sums and
products of non-negative terms; e cancels only where it crosses 0.

**Over a box** a ∈ [a], b ∈ [b], θ ∈ [θ], u ∈ [u] (the caller passes both [θ] and [u] = 1 − [θ],
each an enclosure of the box's thresholds and of their complements, so that a box near θ = 1 is given
by its distances from 1 to full relative precision): every occurrence of a variable is enclosed
independently (valid, possibly wider than the range), with two monotone refinements. (1) κ₁, κ₂ are
decreasing in β, so their range is enclosed from the two ends of [β]
(:func:`~stumpcheck.numerics.certified.fast.cumulants.kappa_range`); E is increasing in β. (2) w is
increasing in y and E_R and decreasing in E_L (and 1 − w the reverse), so its range is enclosed by its
values at the two corners (y_lo, E_R lo, E_L hi) and (y_hi, E_R hi, E_L lo), each a point evaluation
in intervals. Along θ all three move w the same way (dz/dθ = −b(1 + p_R + p_L) < 0, p = 1/(e^β − 1)),
so at a fixed (a, b) the corners are the ends of the θ-range and the enclosure of w is its range up
to rounding. y is enclosed both as a − bθ and as (a − b) + bu and the two intersected.

Domain: a, b finite with b > 0, 0 ≤ θ_lo ≤ θ_hi ≤ 1 (θ = 0 and θ = 1 by continuity: there one segment
is empty and w is 1 or 0); the box θ ⊂ (0, 1) of the brief is the main case. Precision: float64, a few
dozen ulps at a point (tests compare with Arb at 128+ bits: containment, and relative widths).
Assumptions: those of :data:`stumpcheck.numerics.certified.fast.rounding.ASSUMPTIONS`.
"""

from __future__ import annotations

import math

import numba
import numpy as np

from stumpcheck.numerics.certified.fast.cumulants import kappa_range
from stumpcheck.numerics.certified.fast.interval import (add, div, exp, expm1, intersect, mul, mul_pos, one_minus,
                                                         sqr, sub)
from stumpcheck.numerics.certified.fast.interval import as_pair
from stumpcheck.numerics.precision import InputError

__all__ = ["jet_box", "jet_boxes", "error_gradient_enclosure"]

_JIT = dict(cache=True, fastmath=False, error_model="numpy")
#: Beyond |y| = 600, e^{−|y|} < 2^{−865.6} is enclosed as [0, 2⁻⁸⁶⁵] (products of such tiny values would
#: otherwise reach the subnormals, ~100 cycles an operation on x86).
_FAR = 600.0
_E_FAR = 2.0 ** -865


@numba.njit(inline="always", **_JIT)
def _weights(y, er, el):
    """(w lo, w hi, v lo, v hi), v = 1 − w, at exact y, E_R = er, E_L = el (module docstring)."""
    if y >= 0.0:
        # beyond y = 600 the factor e^{−y} < 2⁻⁸⁶⁵ is enclosed as [0, 2⁻⁸⁶⁵] (no subnormal arithmetic)
        tlo, thi = exp(-y, -y) if y < _FAR else (0.0, _E_FAR)
        tlo, thi = mul_pos(el, el, tlo, thi)
        dlo, dhi = add(er, er, tlo, thi)
        wlo, whi = div(er, er, dlo, dhi)
        vlo, vhi = div(tlo, thi, dlo, dhi)
    else:
        tlo, thi = exp(y, y) if y > -_FAR else (0.0, _E_FAR)
        tlo, thi = mul_pos(er, er, tlo, thi)
        dlo, dhi = add(el, el, tlo, thi)
        wlo, whi = div(tlo, thi, dlo, dhi)
        vlo, vhi = div(el, el, dlo, dhi)
    return max(wlo, 0.0), min(whi, 1.0), max(vlo, 0.0), min(vhi, 1.0)


@numba.njit(inline="always", **_JIT)
def _mass(beta_lo, beta_hi):
    """E = 1 − e^{−β} over [β] (increasing)."""
    lo, hi = expm1(-beta_hi, -beta_lo)
    return max(-hi, 0.0), min(-lo, 1.0)


@numba.njit(**_JIT)
def jet_box(alo, ahi, blo, bhi, tlo, thi, ulo, uhi):
    """(e lo, e hi, ∂e/∂a lo, hi, ∂e/∂b lo, hi) over the box (module docstring)."""
    bllo, blhi = mul_pos(blo, bhi, tlo, thi)
    brlo, brhi = mul_pos(blo, bhi, ulo, uhi)
    k1llo, k1lhi, k2llo, k2lhi = kappa_range(bllo, blhi)
    k1rlo, k1rhi, k2rlo, k2rhi = kappa_range(brlo, brhi)
    ello, elhi = _mass(bllo, blhi)
    erlo, erhi = _mass(brlo, brhi)
    # y = a − bθ = (a − b) + bu
    plo, phi = mul_pos(blo, bhi, tlo, thi)
    y1lo, y1hi = sub(alo, ahi, plo, phi)
    dlo, dhi = sub(alo, ahi, blo, bhi)
    qlo, qhi = mul_pos(blo, bhi, ulo, uhi)
    y2lo, y2hi = add(dlo, dhi, qlo, qhi)
    ylo, yhi = intersect(y1lo, y1hi, y2lo, y2hi)
    wlo, _, _, vhi = _weights(ylo, erlo, elhi)
    _, whi, vlo, _ = _weights(yhi, erhi, ello)
    mrlo, mrhi = mul_pos(ulo, uhi, k1rlo, k1rhi)
    olo, ohi = one_minus(k1llo, k1lhi)
    mllo, mlhi = mul_pos(tlo, thi, max(olo, 0.0), ohi)
    delo, dehi = add(mrlo, mrhi, mllo, mlhi)
    xlo, xhi = mul_pos(wlo, whi, mrlo, mrhi)
    zlo, zhi = mul_pos(vlo, vhi, mllo, mlhi)
    elo, ehi = sub(xlo, xhi, zlo, zhi)
    wvlo, wvhi = mul_pos(wlo, whi, vlo, vhi)
    ealo, eahi = mul_pos(wvlo, wvhi, delo, dehi)
    u2lo, u2hi = sqr(ulo, uhi)
    t2lo, t2hi = sqr(tlo, thi)
    vrlo, vrhi = mul_pos(u2lo, u2hi, k2rlo, k2rhi)
    vllo, vlhi = mul_pos(t2lo, t2hi, k2llo, k2lhi)
    s1lo, s1hi = mul_pos(wlo, whi, vrlo, vrhi)
    s2lo, s2hi = mul_pos(vlo, vhi, vllo, vlhi)
    d2lo, d2hi = sqr(delo, dehi)
    s3lo, s3hi = mul_pos(wvlo, wvhi, d2lo, d2hi)
    slo, shi = add(s1lo, s1hi, s2lo, s2hi)
    slo, shi = add(slo, shi, s3lo, s3hi)
    return elo, ehi, ealo, eahi, -shi, -slo


@numba.njit(**_JIT)
def jet_boxes(boxes):
    """:func:`jet_box` of each row (a lo, a hi, b lo, b hi, θ lo, θ hi, u lo, u hi) of an (n, 8) array."""
    out = np.empty((boxes.shape[0], 6))
    for i in range(boxes.shape[0]):
        r = boxes[i]
        out[i, 0], out[i, 1], out[i, 2], out[i, 3], out[i, 4], out[i, 5] = jet_box(
            r[0], r[1], r[2], r[3], r[4], r[5], r[6], r[7])
    return out


@numba.njit(**_JIT)
def complement(lo, hi):
    """An enclosure of 1 − [lo, hi]."""
    return one_minus(lo, hi)


def error_gradient_enclosure(a, b, theta=None, *, rest=None) -> np.ndarray:
    """Enclosures [[e lo, e hi], [∂e/∂a lo, hi], [∂e/∂b lo, hi]] over a ∈ [a], b ∈ [b], θ ∈ [θ].

    Each argument is a float (a point, taken exactly as that double) or a pair (lo, hi). Give the
    threshold as ``theta`` or by its distance from 1 as ``rest`` (u = 1 − θ, for boxes near θ = 1),
    or both (each must then enclose the box's θ, resp. 1 − θ). b > 0, θ ⊂ [0, 1].
    """
    alo, ahi = as_pair("a", a)
    blo, bhi = as_pair("b", b)
    if not blo > 0:
        raise InputError(f"b must be > 0, got {b!r}")
    if theta is None and rest is None:
        raise InputError("give theta or rest (1 - theta)")
    if theta is not None:
        tlo, thi = as_pair("theta", theta)
    if rest is not None:
        ulo, uhi = as_pair("rest", rest)
        if theta is None:
            tlo, thi = complement(ulo, uhi)
    else:
        ulo, uhi = complement(tlo, thi)
    tlo, ulo = max(tlo, 0.0), max(ulo, 0.0)
    thi, uhi = min(thi, 1.0), min(uhi, 1.0)
    if not (0.0 <= tlo <= thi <= 1.0 and 0.0 <= ulo <= uhi <= 1.0):
        raise InputError(f"theta must lie in [0, 1], got theta={theta!r}, rest={rest!r}")
    return np.array(jet_box(alo, ahi, blo, bhi, tlo, thi, ulo, uhi)).reshape(3, 2)
