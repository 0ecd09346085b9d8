"""Rigorous float64 enclosures of L = ∫₀¹ ½e² dθ and ∇L = ∫₀¹ e∇e dθ at a point or over an (a, b) box.

Prior Uniform[0, 1], one-head estimator. [0, 1] is tiled exactly by doubles: θ ∈ [0, ½] by θ, and
θ ∈ [½, 1] by its distance u = 1 − θ ∈ [0, ½] (exact ends, so a switch layer at u ≈ b⁻³ ≪ 2⁻⁵³ keeps
its pieces apart). The pieces are the model's breakpoints at the box's midpoint
(:func:`stumpcheck.numerics.population.quadrature.breakpoints_float64_split`: θ = 0, θ = 1 and the
switch, with geometric ladders), each cut into ``subdivisions`` sub-boxes at doubles x₀ < x₁ < … (any
doubles tiling [0, ½] give a valid result; the breakpoints only make it tight). On a sub-box
[x_k, x_{k+1}] of width h the integrand f ∈ {½e², e·∂e/∂a, e·∂e/∂b} is enclosed over the whole
(a, b, θ) box by :func:`stumpcheck.numerics.certified.fast.one_head.jet_box` (½e² as the range of a
square), and

    ∫ f dθ ∈ Σ_k [h_k]·[f_k lo, f_k hi]

in outward-rounded interval arithmetic (h_k = x_{k+1} − x_k enclosed). This is a first-order method:
the width is about Σ h_k²|f′| + the box's own spread, so the relative width at a point falls like
1/``subdivisions``: measured on the calibration relation at b = 100 and 1000, about 10⁻² for L and
6–9·10⁻² for ∇L (whose integrand changes sign) at the default 64, 4–6·10⁻³ for ∇L at 1024 (tests and
benchmarks/bench_fast.py measure it). A Gauss–Legendre rule
with a Bernstein-ellipse remainder (complex intervals), which the issue names as the better method,
is not implemented here.

Domain: a finite, b > 0 (both as points or intervals), the one-head model. Precision: float64
intervals; assumptions: :data:`stumpcheck.numerics.certified.fast.rounding.ASSUMPTIONS`.
"""

from __future__ import annotations

import math

import numba
import numpy as np

from stumpcheck.numerics.certified.fast.interval import add, mul, mul_pos, one_minus, sqr
from stumpcheck.numerics.certified.fast.one_head import jet_box
from stumpcheck.numerics.certified.fast.rounding import down, up
from stumpcheck.numerics.precision import InputError

__all__ = ["DEFAULT_SUBDIVISIONS", "integrate_pieces", "split_pieces", "loss_gradient_enclosure"]

#: Sub-boxes per breakpoint piece.
DEFAULT_SUBDIVISIONS = 64

_JIT = dict(cache=True, fastmath=False, error_model="numpy")


@numba.njit(**_JIT)
def integrate_pieces(alo, ahi, blo, bhi, theta_points, rest_points, subdivisions):
    """(L lo, L hi, ∂L/∂a lo, hi, ∂L/∂b lo, hi, sub-boxes) over the pieces of θ ∈ [0, ½]
    (``theta_points``) and u = 1 − θ ∈ [0, ½] (``rest_points``), both sorted doubles from 0 to ½."""
    out = np.zeros(7)
    out_lo = np.zeros(3)
    out_hi = np.zeros(3)
    count = 0
    for half in range(2):
        points = theta_points if half == 0 else rest_points
        for i in range(points.size - 1):
            p0 = points[i]
            p1 = points[i + 1]
            step = (p1 - p0) / subdivisions
            x0 = p0
            for k in range(subdivisions):
                x1 = p1 if k == subdivisions - 1 else min(max(p0 + (k + 1) * step, x0), p1)
                if half == 0:
                    tlo, thi = x0, x1
                    ulo, uhi = one_minus(x0, x1)
                else:
                    ulo, uhi = x0, x1
                    tlo, thi = one_minus(x0, x1)
                elo, ehi, ealo, eahi, eblo, ebhi = jet_box(alo, ahi, blo, bhi, max(tlo, 0.0), min(thi, 1.0),
                                                           max(ulo, 0.0), min(uhi, 1.0))
                hlo = max(down(x1 - x0), 0.0)
                hhi = up(x1 - x0)
                flo, fhi = sqr(elo, ehi)
                flo, fhi = mul_pos(flo, fhi, 0.5 * hlo, up(0.5 * hhi))
                out_lo[0], out_hi[0] = add(out_lo[0], out_hi[0], flo, fhi)
                flo, fhi = mul(elo, ehi, ealo, eahi)
                flo, fhi = mul(flo, fhi, hlo, hhi)
                out_lo[1], out_hi[1] = add(out_lo[1], out_hi[1], flo, fhi)
                flo, fhi = mul(elo, ehi, eblo, ebhi)
                flo, fhi = mul(flo, fhi, hlo, hhi)
                out_lo[2], out_hi[2] = add(out_lo[2], out_hi[2], flo, fhi)
                count += 1
                x0 = x1
    for j in range(3):
        out[2 * j] = out_lo[j]
        out[2 * j + 1] = out_hi[j]
    out[6] = count
    return out


def split_pieces(a: float, b: float) -> tuple[np.ndarray, np.ndarray]:
    """(θ points in [0, ½], u points in [0, ½]), sorted doubles with both ends: the one-head breakpoints
    at (a, b) by half (:func:`stumpcheck.numerics.population.quadrature.breakpoints_float64_split`)."""
    from stumpcheck.numerics.population.quadrature import breakpoints_float64_split

    thetas, rests = breakpoints_float64_split(float(a), float(b))
    lower = {0.0, 0.5}
    upper = {0.0, 0.5}
    for theta, rest in zip(thetas, rests):
        if not (math.isfinite(theta) and math.isfinite(rest)):
            continue
        if 0.0 < theta < 0.5:
            lower.add(float(theta))
        elif 0.0 < rest < 0.5:
            upper.add(float(rest))
    return np.array(sorted(lower)), np.array(sorted(upper))


def _pair(name: str, value) -> tuple[float, float]:
    if isinstance(value, (tuple, list)) and len(value) == 2:
        lo, hi = float(value[0]), float(value[1])
    else:
        lo = hi = float(value)
    if not (math.isfinite(lo) and math.isfinite(hi) and lo <= hi):
        raise InputError(f"{name} must be a finite number or a pair lo <= hi of finite numbers, got {value!r}")
    return lo, hi


def loss_gradient_enclosure(a, b, *, subdivisions: int = DEFAULT_SUBDIVISIONS) -> np.ndarray:
    """[[L lo, L hi], [∂L/∂a lo, hi], [∂L/∂b lo, hi]] over a ∈ [a], b ∈ [b] (floats or pairs (lo, hi)).

    The one-head model, prior Uniform[0, 1]; method and assumptions in the module docstring.
    """
    alo, ahi = _pair("a", a)
    blo, bhi = _pair("b", b)
    if not blo > 0:
        raise InputError(f"b must be > 0, got {b!r}")
    if isinstance(subdivisions, bool) or not isinstance(subdivisions, int) or not 1 <= subdivisions <= 10 ** 6:
        raise InputError(f"subdivisions must be an integer in [1, 1000000], got {subdivisions!r}")
    theta_points, rest_points = split_pieces(0.5 * (alo + ahi), 0.5 * (blo + bhi))
    out = integrate_pieces(alo, ahi, blo, bhi, theta_points, rest_points, subdivisions)
    return out[:6].reshape(3, 2)
