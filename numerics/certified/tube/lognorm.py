"""The logarithmic norm on one tube interval, from the Hessian along z̃ interpolated in s.

∂F/∂z = −e^s ∇²L is symmetric, so its Euclidean logarithmic norm is −e^s λ_min(∇²L). The Gronwall argument
needs it for the averaged Jacobian ∫₀¹ ∇²L(z̃(s) + σw) dσ, w = z(s) − z̃(s), ‖w‖₂ ≤ ρ (the a-priori radius).
A box hull of the curve z̃(S) spans the stiff direction and its Hessian balls are too wide (or not finite);
instead H(s) = ∇²L(z̃(s)) is treated as an analytic function of x ∈ [−1, 1], like the defect:

* H(x_j) at the n + 1 Chebyshev points x_j = cos(jπ/n) by rigorous θ-integrals (at the tiny balls z̃(x_j),
  to ~5 digits: :func:`stumpcheck.numerics.certified.tube.points.point_hessian`),
  their interpolant p_H = Σ c_k T_k (ball coefficients, as in :mod:`stumpcheck.numerics.certified.tube.defect`);
* ‖H_ij − p_ij‖ ≤ 4M_Hρ^{−n}/(ρ − 1) with M_H = G/R ≥ sup over E_ρ of |H_ij(z̃(x))| by Cauchy's estimate
  |∂_k f(z)| ≤ sup_{polydisk(z, R)} |f|/R applied to f = ∂L/∂a, ∂L/∂b (G bounds |∇L| on z̃(E_ρ) widened by
  2R + ρ in each complex coordinate: :func:`stumpcheck.numerics.certified.tube.analytic.ellipse_defect_bound`);
* for ‖w‖₂ ≤ ρ: |H_ij(z̃ + w) − H_ij(z̃)| ≤ √2 ρ · G/R² (Cauchy twice, on polydisks of radius R about
  points within ρ of z̃(s)).

On each of J sub-intervals [x_i, x_{i+1}] the entries are enclosed by p_ij over the sub-interval (Taylor
shift at its centre, no θ-integral) plus those two errors; λ_min = (p + r)/2 − √(((p − r)/2)² + q²) on the
balls encloses λ_min of every symmetric matrix with entries in them, so μ_i = max_{s ∈ S_i} (−e^s λ_min) is
bounded by −e^s λ_lo at the end of S_i given by the sign of λ_lo.
"""

from __future__ import annotations

from fractions import Fraction

from flint import arb, ctx

from stumpcheck.numerics.certified.tube.analytic import interpolation_error
from stumpcheck.numerics.certified.tube.chebyshev import ChebyshevPiece, chebyshev_ball_coefficients, disk_enclosure

__all__ = ["point_hessians", "chebyshev_ball_coefficients", "series_hull", "log_norms"]

_BITS = 192


def point_hessians(piece: ChebyshevPiece, n: int, dps: int | None = None, *, arithmetic: str = "arb",
                   counts=None) -> list:
    """Balls (H_aa, H_ab, H_bb) containing ∇²L(z̃(x_j)), x_j = cos(jπ/n), j = 0..n, in ``arithmetic``
    (:func:`stumpcheck.numerics.certified.tube.arithmetic.hessian_at`: the fast layer first, or
    :func:`stumpcheck.numerics.certified.tube.points.point_hessian` only; ``dps`` is unused, kept for the callers)."""
    from stumpcheck.numerics.certified.tube.arithmetic import hessian_at

    out = []
    for j in range(n + 1):
        x = (arb.pi() * j / n).cos()
        (za, zb), _ = disk_enclosure(piece, arb(x.mid()), arb(x.rad()))
        out.append(hessian_at(za.real, zb.real, arithmetic, counts))
    return out


def _monomial_balls(coefficients: list) -> list:
    """Monomial coefficients (balls) of Σ c_k T_k (T_k's integer coefficients by the recurrence)."""
    n = len(coefficients)
    total = [arb(0)] * n
    previous, current = [1], [0, 1]
    for k, c in enumerate(coefficients):
        if k == 0:
            poly = previous
        elif k == 1:
            poly = current
        else:
            nxt = [0] + [2 * x for x in current]
            for i, x in enumerate(previous):
                nxt[i] -= x
            previous, current = current, nxt
            poly = current
        for i, x in enumerate(poly):
            if x:
                total[i] = total[i] + c * x
    return total


def series_hull(coefficients: list, x_lo, x_hi) -> arb:
    """A ball containing Σ c_k T_k(x) for every x ∈ [x_lo, x_hi] and every choice of c_k in its ball."""
    with ctx.workprec(max(ctx.prec, _BITS)):
        q = _monomial_balls(coefficients)
        lo, hi = arb(x_lo), arb(x_hi)
        center = arb(((lo + hi) / 2).mid())
        radius = (((hi - lo) / 2) + abs((lo + hi) / 2 - center)).upper()
        n = len(q) - 1
        for i in range(n):  # Horner's Taylor shift to the centre
            for j in range(n - 1, i - 1, -1):
                q[j] = q[j] + center * q[j + 1]
        tail, power = arb(0), arb(1)
        for j in range(1, len(q)):
            power = power * radius
            tail += abs(q[j]).upper() * power
        return q[0] + arb(0, tail.upper())


def _sqrt_nonnegative(x: arb) -> arb:
    """A ball containing √y for every y ≥ 0 in the ball x (√ is increasing: from the ends, the lower one
    clipped at 0)."""
    low, high = x.lower(), x.upper()
    return (arb(0) if low <= 0 else low.sqrt()).union(high.sqrt())


def _q(x: Fraction) -> arb:
    return arb(x.numerator) / x.denominator


def log_norms(piece: ChebyshevPiece, hessians: list, gradient_sup: arb, cauchy_radius: arb, rho_ellipse: Fraction,
              rho: arb, subdivisions: int) -> list:
    """[μ_i] (exact arb upper bounds) on the ``subdivisions`` equal sub-intervals of x ∈ [−1, 1]; see the module doc."""
    n = len(hessians) - 1
    coefficients = [chebyshev_ball_coefficients([h[i] for h in hessians]) for i in range(3)]
    error = interpolation_error(gradient_sup / cauchy_radius, rho_ellipse, n)
    error += arb(2).sqrt() * rho * gradient_sup / (cauchy_radius * cauchy_radius)
    error = arb(error.upper())
    half = (arb(piece.s1) - arb(piece.s0)) / 2
    middle = (arb(piece.s1) + arb(piece.s0)) / 2
    mus = []
    for i in range(subdivisions):
        x_lo, x_hi = Fraction(-1) + Fraction(2 * i, subdivisions), Fraction(-1) + Fraction(2 * (i + 1), subdivisions)
        p, q, r = (series_hull(c, _q(x_lo), _q(x_hi)) + arb(0, error) for c in coefficients)
        # the discriminant is ≥ 0 for every symmetric matrix in the balls: clip the ball's negative part
        lam = (p + r) / 2 - _sqrt_nonnegative(((p - r) / 2) ** 2 + q * q)
        lam_lo = lam.lower()
        at = middle + half * _q(x_lo if lam_lo >= 0 else x_hi)
        mus.append(arb((-(at.exp()) * lam_lo).upper()))
    return mus
