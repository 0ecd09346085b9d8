"""One step of the Lohner (mean-value, moving-frame) enclosure of gradient descent on L̂, in float64 intervals.

**The sets.** A set of the plane z = (a, b) is carried as X = {c + A·r : r ∈ R}: a centre c (two doubles),
a frame A (a 2×2 matrix of doubles, invertible) and a box R = [r₀] × [r₁] (interval ends doubles), 0 ∈ R.
Its hull is the box Z = c + A·R evaluated in intervals (outward), which contains X and c.

**The step.** For the exact map F(z) = z − η∇L̂(z) (η a double, L̂ the corpus loss) and z = c + A·r ∈ X,
the mean-value theorem on the segment [c, z] ⊂ Z (Z is convex and holds both ends) gives

    F(z) = F(c) + M·A·r,   M = ∫₀¹ DF(c + s(z − c)) ds,   DF = I − η∇²L̂,

and every entry of M lies in the matching entry of [J] = I − η[∇²L̂](Z), the fast layer's enclosure of
the Hessian over Z (an average of values in an interval lies in it). With [F(c)] = c − η[∇L̂](c) the
fast layer's enclosure at the point c, a new centre c′ (any doubles) and a new frame A′ (any doubles
with an invertible A′), and [A′⁻¹] ∋ A′⁻¹ enclosed in intervals (2×2: the adjugate over the enclosed
determinant, refused when it holds 0),

    A′⁻¹(F(z) − c′) = A′⁻¹(F(c) − c′) + (A′⁻¹ M A)·r ∈ [A′⁻¹]([F(c)] − c′) + ([A′⁻¹]([J]A))·R =: R′,

by the inclusion property (A′⁻¹MA is a member of the interval product [A′⁻¹]([J]A), r ∈ R). So
F(X) ⊂ X′ = {c′ + A′r : r ∈ R′}. Nothing about c′ and A′ has to be right for this to hold: they only
decide how tight R′ is. :func:`next_frame` takes c′ = the midpoint of [F(c)] (so 0 ∈ R′) and A′ = Q of
the QR factorisation of mid([J]A) with its columns ordered by their extent (‖column j‖ · width rⱼ,
largest first), Lohner's QR method: the frame follows the set's own shape, so the width does not grow
by the wrapping of a box turned by [J] at every step (which, through the period-2 oscillation of GD at
a large step, would double it every few steps), and the frame stays well conditioned where mid([J]A)
itself would align both columns with the least contracting direction.

**Arithmetic.** The intervals are those of :mod:`stumpcheck.numerics.certified.fast.interval`
(round to nearest, each end widened outward by a step; assumptions in
:data:`stumpcheck.numerics.certified.fast.rounding.ASSUMPTIONS`); c′ and A′ are plain doubles.
Domain: finite doubles; η > 0. Precision: R′ is wider than the exact image by the widths of [F(c)] and
[J] times the magnitudes of A and R, and a few roundings a step.
"""

from __future__ import annotations

import math

import numba
import numpy as np

from stumpcheck.numerics.certified.fast.interval import add, div, mul, sub

__all__ = ["hull_box", "image_coordinates", "next_frame", "gd_point_image"]

_JIT = dict(cache=True, fastmath=False, error_model="numpy")


@numba.njit(**_JIT)
def _affine(c, a0, a1, r0lo, r0hi, r1lo, r1hi):
    """c + a0·[r0] + a1·[r1] in intervals."""
    plo, phi = mul(a0, a0, r0lo, r0hi)
    qlo, qhi = mul(a1, a1, r1lo, r1hi)
    plo, phi = add(plo, phi, qlo, qhi)
    return add(c, c, plo, phi)


@numba.njit(**_JIT)
def hull_box(c, A, R):
    """The hull Z = c + A·R (shape (2, 2): rows a, b as [lo, hi]), holding c as well (0 ∈ R is not assumed)."""
    out = np.empty((2, 2))
    for i in range(2):
        lo, hi = _affine(c[i], A[i, 0], A[i, 1], R[0, 0], R[0, 1], R[1, 0], R[1, 1])
        out[i, 0] = min(lo, c[i])
        out[i, 1] = max(hi, c[i])
    return out


@numba.njit(**_JIT)
def gd_point_image(c, grad, eta):
    """[F(c)] = c − η[∇L̂(c)] (shape (2, 2)) from the enclosure ``grad`` (rows ∂a, ∂b as [lo, hi])."""
    out = np.empty((2, 2))
    for i in range(2):
        slo, shi = mul(eta, eta, grad[i, 0], grad[i, 1])
        out[i, 0], out[i, 1] = sub(c[i], c[i], slo, shi)
    return out


@numba.njit(**_JIT)
def _jacobian(hess, eta):
    """[J] = I − η[∇²L̂] as (2, 2, 2) from ``hess`` rows ∂aa, ∂ab, ∂bb as [lo, hi]."""
    J = np.empty((2, 2, 2))
    for (i, j, row) in ((0, 0, 0), (0, 1, 1), (1, 0, 1), (1, 1, 2)):
        plo, phi = mul(eta, eta, hess[row, 0], hess[row, 1])
        if i == j:
            J[i, j, 0], J[i, j, 1] = sub(1.0, 1.0, plo, phi)
        else:
            J[i, j, 0], J[i, j, 1] = -phi, -plo
    return J


@numba.njit(**_JIT)
def _times_frame(J, A):
    """[J]·A (interval matrix times a double matrix), shape (2, 2, 2)."""
    B = np.empty((2, 2, 2))
    for i in range(2):
        for j in range(2):
            plo, phi = mul(J[i, 0, 0], J[i, 0, 1], A[0, j], A[0, j])
            qlo, qhi = mul(J[i, 1, 0], J[i, 1, 1], A[1, j], A[1, j])
            B[i, j, 0], B[i, j, 1] = add(plo, phi, qlo, qhi)
    return B


@numba.njit(**_JIT)
def _inverse(A):
    """[A⁻¹] ∋ the exact inverse of the double matrix A (adjugate / [det]); ok False when [det] holds 0."""
    inv = np.empty((2, 2, 2))
    plo, phi = mul(A[0, 0], A[0, 0], A[1, 1], A[1, 1])
    qlo, qhi = mul(A[0, 1], A[0, 1], A[1, 0], A[1, 0])
    dlo, dhi = sub(plo, phi, qlo, qhi)
    if dlo <= 0.0 <= dhi or dlo != dlo or dhi != dhi:
        return inv, False
    adj = ((A[1, 1], -A[0, 1]), (-A[1, 0], A[0, 0]))
    for i in range(2):
        for j in range(2):
            inv[i, j, 0], inv[i, j, 1] = div(adj[i][j], adj[i][j], dlo, dhi)
    return inv, True


@numba.njit(**_JIT)
def image_coordinates(point_image, hess, eta, A, R, c_new, A_new):
    """(R′, ok): the box R′ of the module docstring, F(X) ⊂ {c_new + A_new·r : r ∈ R′}, for X = {c + A·r : r ∈ R},
    ``point_image`` = [F(c)] (:func:`gd_point_image`) and ``hess`` = [∇²L̂] over the hull of X (rows ∂aa, ∂ab,
    ∂bb); ok False (and R′ meaningless) when the determinant of A_new is not certainly non-zero."""
    Rn = np.empty((2, 2))
    inv, ok = _inverse(A_new)
    if not ok:
        return Rn, False
    B = _times_frame(_jacobian(hess, eta), A)
    for i in range(2):
        lo, hi = 0.0, 0.0
        for j in range(2):
            # [A′⁻¹]ᵢⱼ ([F(c)]ⱼ − c′ⱼ)
            dlo, dhi = sub(point_image[j, 0], point_image[j, 1], c_new[j], c_new[j])
            plo, phi = mul(inv[i, j, 0], inv[i, j, 1], dlo, dhi)
            lo, hi = add(lo, hi, plo, phi)
            # ([A′⁻¹][B])ᵢⱼ [r]ⱼ
            clo, chi = mul(inv[i, 0, 0], inv[i, 0, 1], B[0, j, 0], B[0, j, 1])
            qlo, qhi = mul(inv[i, 1, 0], inv[i, 1, 1], B[1, j, 0], B[1, j, 1])
            clo, chi = add(clo, chi, qlo, qhi)
            plo, phi = mul(clo, chi, R[j, 0], R[j, 1])
            lo, hi = add(lo, hi, plo, phi)
        Rn[i, 0], Rn[i, 1] = lo, hi
    return Rn, True


def next_frame(point_image: np.ndarray, hess: np.ndarray, eta: float, A: np.ndarray, R: np.ndarray):
    """(c′, A′): the midpoint of [F(c)] and the QR frame of mid([J]·A) (module docstring); plain doubles.

    The 2×2 QR by hand: q₁ the unit vector along the column of largest extent, q₂ = q₁ turned by 90°,
    its sign making the triangular factor's second diagonal entry ≥ 0 (the frame keeps the columns' sense)."""
    c_new = np.array([min(max(0.5 * lo + 0.5 * hi, lo), hi) for lo, hi in point_image])
    B = _times_frame(_jacobian(hess, eta), A)
    mid = 0.5 * B[:, :, 0] + 0.5 * B[:, :, 1]
    extent = [math.hypot(mid[0, j], mid[1, j]) * (R[j, 1] - R[j, 0]) for j in range(2)]
    first = 1 if extent[1] > extent[0] else 0
    v0, v1 = mid[0, first], mid[1, first]
    norm = math.hypot(v0, v1)
    if not (math.isfinite(norm) and norm > 0.0):
        return c_new, np.eye(2)
    q0, q1 = v0 / norm, v1 / norm
    w0, w1 = mid[0, 1 - first], mid[1, 1 - first]
    sign = -1.0 if (-q1 * w0 + q0 * w1) < 0.0 else 1.0
    return c_new, np.array([[q0, -sign * q1], [q1, sign * q0]])
