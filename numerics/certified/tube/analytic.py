"""A bound of the tube's defect on a Bernstein ellipse: ∇L at complex (a, b) balls, and the ellipse's cover.

On an interval S = [s₀, s₁] with x = (2s − s₀ − s₁)/h the defect d(s) = z̃'(s) + e^s ∇L(z̃(s)) is analytic
in x wherever ∇L is at z̃(s) (z̃ is a polynomial). The Bernstein ellipse E_ρ (foci ±1, semi-axes
A = (ρ + ρ⁻¹)/2, B = (ρ − ρ⁻¹)/2) is covered by rectangles of the x-plane (:func:`ellipse_cells`: a grid on
[−A, A] × [0, B] without the cells that lie outside the closed ellipse); on each, z̃ and z̃' are enclosed
over the disk about the cell's centre through its corners (:func:`stumpcheck.numerics.certified.tube.chebyshev.disk_enclosure`),
and ∇L over the resulting complex (a, b) rectangle by :func:`complex_gradient`. The largest |d_a|, |d_b|
over the cells bound d on the upper half of E_ρ; the lower half is the mirror image (z̃ has real
coefficients and ∇L is real for real (a, b), so d(x̄) is the conjugate of d(x): Schwarz reflection).

:func:`complex_gradient` integrates ∂L/∂a = ∫₀¹ e ∂e/∂a dθ and ∂L/∂b (one complex ``acb.integral`` each:
for complex (a, b) the two components are complex and cannot share one integral) with the generated Arb
integrands (:mod:`stumpcheck.numerics.generated.population_arb`, which takes acb balls), always called with
``analytic=True``: every logarithm then returns a non-finite ball where its argument may touch the branch
cut, and the softmax weights and cumulants are exponentials and quotients, so a finite result means the
integrand is holomorphic in (a, b) on the rectangle for every θ (no denominator ball contains 0). Then ∇L
is holomorphic there (an integral of a jointly continuous integrand holomorphic in the parameters), and
its ball contains ∇L at every point of the rectangle. A non-finite enclosure (a singularity of the
continuation, at imaginary offsets of order 1 in (a, b)) raises ArithmeticError: the caller shortens
the interval.

In the tube, :func:`stumpcheck.numerics.certified.tube.arithmetic.complex_gradient_at` encloses ∇L on a cell
with the float64 complex rectangles of :mod:`stumpcheck.numerics.certified.fast.complex_parameters` first
(their finite sums carry the same holomorphy argument) and calls :func:`complex_gradient` where they fail.

The bound M only has to be crude: it enters the interpolation error 4Mρ^{−n}/(ρ − 1) (Trefethen,
*Approximation Theory and Approximation Practice*, Thm 8.2), geometric in n. The integrals run at low
precision and tolerance.
"""

from __future__ import annotations

from fractions import Fraction

from flint import acb, arb

from stumpcheck.numerics.certified.tube.chebyshev import ChebyshevPiece, disk_enclosure
from stumpcheck.numerics.certified.tube.complex_gradient import complex_gradient

__all__ = ["complex_gradient", "ellipse_cells", "ellipse_defect_bound", "interpolation_error", "CELLS_X", "CELLS_Y"]

#: the grid over the upper half of [−A, A] × [−B, B]
CELLS_X = 6
CELLS_Y = 2


def ellipse_cells(rho: Fraction, nx: int = CELLS_X, ny: int = CELLS_Y) -> list:
    """Rectangles [x_lo, x_hi] × [y_lo, y_hi] (exact rationals) of the grid on [−A, A] × [0, B] that meet the
    closed ellipse (x/A)² + (y/B)² ≤ 1, A = (ρ + 1/ρ)/2, B = (ρ − 1/ρ)/2: they cover its upper half."""
    rho = Fraction(rho)
    if not rho > 1:
        raise ValueError("the Bernstein ellipse needs rho > 1")
    big, small = (rho + 1 / rho) / 2, (rho - 1 / rho) / 2
    cells = []
    for i in range(nx):
        x_lo, x_hi = -big + 2 * big * i / nx, -big + 2 * big * (i + 1) / nx
        nearest_x = Fraction(0) if x_lo <= 0 <= x_hi else min(abs(x_lo), abs(x_hi))
        for j in range(ny):
            y_lo, y_hi = small * j / ny, small * (j + 1) / ny
            if (nearest_x / big) ** 2 + (y_lo / small) ** 2 <= 1:
                cells.append((x_lo, x_hi, y_lo, y_hi))
    return cells


def _q(x: Fraction) -> arb:
    return arb(x.numerator) / x.denominator


def ellipse_defect_bound(piece: ChebyshevPiece, rho: Fraction, widen: arb, nx: int = CELLS_X,
                         ny: int = CELLS_Y, *, arithmetic: str = "arb", counts=None, limits=None):
    """(M_a, M_b, G): upper bounds (exact arb) of |d_a|, |d_b| on the closed Bernstein ellipse E_ρ of the piece,
    and G ≥ max(|∂L/∂a|, |∂L/∂b|) at every z̃(x) + ζ, x ∈ E_ρ, |ζ_a|, |ζ_b| ≤ ``widen`` (the rectangles of
    z̃ over each cell, widened by ``widen`` in both coordinates, real and imaginary: ∇L is enclosed over
    them, which serves both bounds; with the mirror image they cover that set).

    ``arithmetic`` "fast" encloses ∇L on a cell in float64 complex intervals first, "arb" by ``acb.integral``
    only (:func:`stumpcheck.numerics.certified.tube.arithmetic.complex_gradient_at`, which counts into
    ``counts``); ``limits`` = (M_a, M_b, G) recorded bounds a re-check confirms: a fast cell above them is split,
    then enclosed by Arb. ArithmeticError if an enclosure is not finite (then d may not be analytic on E_ρ)."""
    from stumpcheck.numerics.certified.tube.arithmetic import complex_gradient_at

    half = (arb(piece.s1) - arb(piece.s0)) / 2
    middle = (arb(piece.s1) + arb(piece.s0)) / 2
    pad = acb(arb(0, widen), arb(0, widen))
    bound_a, bound_b, gradient = arb(0), arb(0), arb(0)
    for x_lo, x_hi, y_lo, y_hi in ellipse_cells(rho, nx, ny):
        cx, cy = (x_lo + x_hi) / 2, (y_lo + y_hi) / 2
        radius = _q(((x_hi - x_lo) ** 2 + (y_hi - y_lo) ** 2) / 4).sqrt().upper()
        center = acb(_q(cx), _q(cy))
        (za, zb), (dza, dzb) = disk_enclosure(piece, center, radius)
        cell = acb(_q(cx) + arb(0, _q((x_hi - x_lo) / 2)), _q(cy) + arb(0, _q((y_hi - y_lo) / 2)))
        scale = (middle + half * cell).exp()

        def accept(ga, gb):
            return (abs(dza + scale * ga).upper() <= limits[0] and abs(dzb + scale * gb).upper() <= limits[1]
                    and abs(ga).upper() <= limits[2] and abs(gb).upper() <= limits[2])

        parts = complex_gradient_at(za + pad, zb + pad, arithmetic, counts, None if limits is None else accept)
        for ga, gb in parts:
            da, db = dza + scale * ga, dzb + scale * gb
            if not (da.is_finite() and db.is_finite()):
                raise ArithmeticError("the defect is not finite on a cell of the Bernstein ellipse")
            bound_a = bound_a.max(abs(da).upper())
            bound_b = bound_b.max(abs(db).upper())
            gradient = gradient.max(abs(ga).upper()).max(abs(gb).upper())
    return arb(bound_a.upper()), arb(bound_b.upper()), arb(gradient.upper())


def interpolation_error(bound: arb, rho: Fraction, degree: int) -> arb:
    """4Mρ^{−n}/(ρ − 1): the sup on [−1, 1] of f − p_n for f analytic in E_ρ with |f| ≤ M there, p_n its
    interpolant at the n + 1 Chebyshev points of the second kind (ATAP Thm 8.2)."""
    r = _q(Fraction(rho))
    return (4 * bound / (r ** degree * (r - 1))).upper()
