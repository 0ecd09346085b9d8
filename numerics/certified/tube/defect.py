"""The defect bound of one tube interval: rigorous defects at Chebyshev points, their interpolant, the ellipse.

On S = [s₀, s₁], x = (2s − s₀ − s₁)/h, the defect of the Chebyshev piece z̃ is
d(s) = z̃'(s) − F(s, z̃(s)) = z̃'(s) + e^s ∇L(z̃(s)). Write d = p + (d − p), p the degree-n interpolant of d
at the Chebyshev points of the second kind x_j = cos(jπ/n), j = 0..n:

* d(x_j) is enclosed rigorously: x_j as an arb ball, z̃(x_j) and z̃'(x_j) by exact-coefficient
  evaluation, ∇L at the (tiny) ball z̃(x_j) by a rigorous θ-integral to ~13 digits
  (:func:`stumpcheck.numerics.certified.tube.points.point_gradient`; d is ~1e-11 of F);
* p = Σ_k c_k T_k with c_k = (2/n) Σ″_j d(x_j) cos(kjπ/n) (Σ″: the end terms halved, and c₀, c_n halved),
  computed in ball arithmetic from those balls, so |p| ≤ Σ_k |c_k| on [−1, 1];
* ‖d − p‖_∞ ≤ 4Mρ^{−n}/(ρ − 1) with M ≥ sup |d| on E_ρ (:mod:`stumpcheck.numerics.certified.tube.analytic`; its
  rectangles are widened by R, which only makes M cruder, so that the same integrals give the bound G of
  ∇L used by the logarithmic norm).

Hence, per component, sup_S |d_i| ≤ P_i + E_i and δ = √((P_a + E_a)² + (P_b + E_b)²) ≥ sup_S ‖d‖₂.
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction

from flint import arb

from stumpcheck.numerics.certified.tube.analytic import ellipse_defect_bound, interpolation_error
from stumpcheck.numerics.certified.tube.chebyshev import ChebyshevPiece, chebyshev_ball_coefficients, disk_enclosure

__all__ = ["DefectBound", "point_defects", "interpolant_bound", "defect_bound"]


@dataclass(frozen=True)
class DefectBound:
    """What the defect bound computed (exact arb upper bounds): P = Σ|c_k| of p per component, M on E_ρ,
    E = 4Mρ^{−n}/(ρ − 1), and δ ≥ sup_S ‖d‖₂."""

    p_a: arb
    p_b: arb
    m_a: arb
    m_b: arb
    e_a: arb
    e_b: arb
    delta: arb
    gradient_sup: arb  # G of :func:`stumpcheck.numerics.certified.tube.analytic.ellipse_defect_bound` (for the log norm)


def _chebyshev_point(j: int, n: int) -> arb:
    return (arb.pi() * j / n).cos()


def point_defects(piece: ChebyshevPiece, n: int, dps: int, *, arithmetic: str = "arb", counts=None) -> list:
    """Balls (d_a, d_b) containing d at x_j = cos(jπ/n), j = 0..n (rigorous θ-integrals in ``arithmetic``:
    :func:`stumpcheck.numerics.certified.tube.arithmetic.gradient_at`; ``dps`` is unused)."""
    from stumpcheck.numerics.certified.tube.arithmetic import gradient_at

    half = (arb(piece.s1) - arb(piece.s0)) / 2
    middle = (arb(piece.s1) + arb(piece.s0)) / 2
    out = []
    for j in range(n + 1):
        x = _chebyshev_point(j, n)
        (za, zb), (dza, dzb) = disk_enclosure(piece, arb(x.mid()), arb(x.rad()))
        za, zb, dza, dzb = za.real, zb.real, dza.real, dzb.real
        ga, gb = gradient_at(za, zb, arithmetic, counts)
        scale = (middle + half * x).exp()
        out.append((dza + scale * ga, dzb + scale * gb))
    return out


def interpolant_bound(values: list) -> arb:
    """Σ_k |c_k| (an upper bound, exact arb) for the Chebyshev interpolant of the balls ``values`` at x_j."""
    total = arb(0)
    for c in chebyshev_ball_coefficients(values):
        total += abs(c).upper()
    return arb(total.upper())


def defect_bound(piece: ChebyshevPiece, n: int, rho: Fraction, widen: arb, dps: int, points=None,
                 cells=(6, 2), *, arithmetic: str = "arb", counts=None) -> DefectBound:
    """The bound of the module doc; ``points`` (from :func:`point_defects`) may be passed if already computed;
    ``arithmetic`` and ``counts`` as for :func:`point_defects`.
    ArithmeticError if a rigorous integral fails or is not finite on the ellipse."""
    points = point_defects(piece, n, dps, arithmetic=arithmetic, counts=counts) if points is None else points
    p_a = interpolant_bound([d[0] for d in points])
    p_b = interpolant_bound([d[1] for d in points])
    m_a, m_b, gradient = ellipse_defect_bound(piece, rho, widen, *cells, arithmetic=arithmetic, counts=counts)
    e_a, e_b = interpolation_error(m_a, rho, n), interpolation_error(m_b, rho, n)
    delta = (((p_a + e_a) ** 2 + (p_b + e_b) ** 2).sqrt()).upper()
    return DefectBound(p_a, p_b, m_a, m_b, e_a, e_b, arb(delta), gradient)
