"""One interval of the certified tube: the rigorous bounds of a Chebyshev piece, and the Gronwall step.

:func:`interval_bounds` (the expensive part, independent between intervals, so it runs in worker
processes) encloses, for the piece z̃ on S = [s₀, s₁]: the defect bound δ ≥ sup_S ‖z̃' − F(s, z̃)‖₂
(:mod:`stumpcheck.numerics.certified.tube.defect`), the bound G of ∇L near z̃(E_ρ) and the Hessians at the Chebyshev
points (:mod:`stumpcheck.numerics.certified.tube.lognorm`). :func:`gronwall_step` then chains, with an a-priori radius
ρ ≤ ``RHO_MAX``: on each sub-interval S_i the logarithmic norm μ_i of the averaged Jacobian (valid while
‖z − z̃‖ ≤ ρ), and D⁺‖w‖ ≤ μ_i‖w‖ + δ gives ‖w(s)‖ ≤ e^{μ_i(s−s_i)} r_i + δ(e^{μ_i(s−s_i)} − 1)/μ_i
(:func:`stumpcheck.numerics.certified.tube.interval_v1.radius_bound`, monotone in s, so sup over S_i is the larger end);
if every sup stays below ρ the a-priori assumption holds on S (continuity), and z(s) ∈ hull z̃(S_i) ± sup r
on S_i. Between intervals the radius grows by the jump ‖z̃_{k+1}(s_{k+1}) − z̃_k(s_{k+1})‖₂ (exact
coefficients, ball arithmetic), so the pieces need not be continuous.
"""

from __future__ import annotations

from fractions import Fraction

from flint import arb, ctx

from stumpcheck.numerics.certified.tube.chebyshev import ChebyshevPiece, disk_enclosure, segment_hull
from stumpcheck.numerics.certified.tube.defect import defect_bound
from stumpcheck.numerics.certified.tube.interval_v1 import radius_bound
from stumpcheck.numerics.certified.tube.lognorm import log_norms, point_hessians

__all__ = ["Settings", "interval_bounds", "gronwall_step", "jump", "delta_from", "RHO_MAX", "ball_to_json", "ball_from_json"]

#: the largest a-priori radius ρ; the ellipse's rectangles are widened by 2R + RHO_MAX for the Cauchy estimates
RHO_MAX = Fraction(1, 10**4)


class Settings:
    """The method's parameters (recorded in the certificate): the Bernstein ellipse ρ_E, the numbers of
    Chebyshev points of the defect and of the Hessian, the Cauchy radius R, the sub-intervals of the log norm."""

    def __init__(self, rho_ellipse=Fraction(3), defect_points=24, hessian_points=12, cauchy_radius=Fraction(1, 20),
                 subdivisions=8, dps=15, cells=(6, 2)):
        self.rho_ellipse = Fraction(rho_ellipse)
        self.defect_points = int(defect_points)
        self.hessian_points = int(hessian_points)
        self.cauchy_radius = Fraction(cauchy_radius)
        self.subdivisions = int(subdivisions)
        self.dps = int(dps)
        self.cells = (int(cells[0]), int(cells[1]))
        if not (self.rho_ellipse > 1 and 2 <= self.defect_points <= 200 and 2 <= self.hessian_points <= 200
                and 0 < self.cauchy_radius <= 1 and 1 <= self.subdivisions <= 256
                and 1 <= self.cells[0] <= 64 and 1 <= self.cells[1] <= 64):
            raise ValueError("the tube's settings are out of range")

    def as_json(self) -> dict:
        return {"rho_ellipse": str(self.rho_ellipse), "defect_points": self.defect_points,
                "hessian_points": self.hessian_points, "cauchy_radius": str(self.cauchy_radius),
                "subdivisions": self.subdivisions, "rho_max": str(RHO_MAX), "dps": self.dps, "cells": list(self.cells)}

    @classmethod
    def from_json(cls, data: dict) -> "Settings":
        return cls(Fraction(data["rho_ellipse"]), data["defect_points"], data["hessian_points"],
                   Fraction(data["cauchy_radius"]), data["subdivisions"], data["dps"], tuple(data["cells"]))

    def at_dps(self, dps: int) -> "Settings":
        data = self.as_json()
        data["dps"] = int(dps)
        return Settings.from_json(data)


def _q(x: Fraction) -> arb:
    return arb(x.numerator) / x.denominator


def ball_to_json(x: arb) -> list:
    """An arb ball as exact integers [mid mantissa, mid exponent, radius mantissa, radius exponent]."""
    m, e = x.mid().man_exp()
    rm, re = x.rad().man_exp()
    return [str(int(m)), int(e), str(int(rm)), int(re)]


def ball_from_json(data) -> arb:
    m, e, rm, re = data
    mid = arb(int(m)) * arb(2) ** int(e)
    rad = arb(int(rm)) * arb(2) ** int(re)
    return mid + arb(0, rad.upper())


def interval_bounds(piece: ChebyshevPiece, settings: Settings, bits: int, arithmetic: str = "arb",
                    counts=None) -> dict:
    """The rigorous integrals of one interval: δ's parts (P, M, E, δ), G, and the Hessian balls at the
    Chebyshev points (exact arb values, serialised by :func:`ball_to_json`), each integral in ``arithmetic``
    ("fast": the float64 layer first, Arb where it does not suffice; "arb": Arb only; counted into ``counts``,
    :mod:`stumpcheck.numerics.certified.tube.arithmetic`). ArithmeticError if one fails."""
    with ctx.workprec(bits):
        widen = 2 * _q(settings.cauchy_radius) + _q(RHO_MAX)
        bound = defect_bound(piece, settings.defect_points, settings.rho_ellipse, widen, settings.dps,
                             cells=settings.cells, arithmetic=arithmetic, counts=counts)
        hessians = point_hessians(piece, settings.hessian_points, settings.dps, arithmetic=arithmetic, counts=counts)
        return {"p": [bound.p_a, bound.p_b], "m": [bound.m_a, bound.m_b], "e": [bound.e_a, bound.e_b],
                "delta": bound.delta, "g": bound.gradient_sup, "hessians": hessians}


def delta_from(p_texts, m_texts, settings: Settings) -> arb:
    """δ = √((P_a + E_a)² + (P_b + E_b)²) from the recorded P and M (decimals, read as upper bounds),
    E = 4Mρ^{−n}/(ρ − 1): what the certificate's δ must be at least."""
    from stumpcheck.numerics.certified.tube.analytic import interpolation_error
    from stumpcheck.numerics.certified.tube.records import parse_upper

    p_a, p_b = (parse_upper(x) for x in p_texts)
    e_a, e_b = (interpolation_error(parse_upper(x), settings.rho_ellipse, settings.defect_points) for x in m_texts)
    return arb((((p_a + e_a) ** 2 + (p_b + e_b) ** 2).sqrt()).upper())


def sub_interval_s(piece: ChebyshevPiece, i: int, count: int) -> tuple[arb, arb]:
    """(s_lo, s_hi) balls of the i-th of ``count`` equal sub-intervals of S."""
    half = (arb(piece.s1) - arb(piece.s0)) / 2
    middle = (arb(piece.s1) + arb(piece.s0)) / 2
    x_lo, x_hi = Fraction(-1) + Fraction(2 * i, count), Fraction(-1) + Fraction(2 * (i + 1), count)
    return middle + half * _q(x_lo), middle + half * _q(x_hi)


def gronwall_step(piece: ChebyshevPiece, settings: Settings, delta: arb, gradient_sup: arb, hessians: list,
                  r_start: arb, rho: arb):
    """(μ_i, r_i ends, sups, hulls) on the sub-intervals for the a-priori radius ρ, or None if some sup ≥ ρ.

    ``delta``, ``gradient_sup`` and ``r_start`` are upper bounds (exact arb numbers)."""
    count = settings.subdivisions
    mus = log_norms(piece, hessians, gradient_sup, _q(settings.cauchy_radius), settings.rho_ellipse, rho, count)
    r, ends, sups, hulls = r_start, [], [], []
    for i, mu in enumerate(mus):
        s_lo, s_hi = sub_interval_s(piece, i, count)
        r_next = radius_bound(r, delta, mu, arb((s_hi - s_lo).upper()))
        sup = r.max(r_next)
        if not sup < rho:
            return None
        x_lo, x_hi = Fraction(-1) + Fraction(2 * i, count), Fraction(-1) + Fraction(2 * (i + 1), count)
        hulls.append(segment_hull(piece, _q(x_lo), _q(x_hi)))
        ends.append(r_next)
        sups.append(sup)
        r = r_next
    return mus, ends, sups, hulls


def end_value(piece: ChebyshevPiece, x: int) -> tuple[arb, arb]:
    """z̃ at x = ±1 (balls, exact up to rounding at the working precision)."""
    (a, b), _ = disk_enclosure(piece, arb(x), arb(0))
    return a.real, b.real


def jump(previous: ChebyshevPiece | None, piece: ChebyshevPiece, a0: float = 0.0, b0: float = 0.0) -> arb:
    """An upper bound of ‖z̃_k(s_k) − z̃_{k−1}(s_k)‖₂ (or of ‖z̃_0(0) − (a0, b0)‖₂ when ``previous`` is None)."""
    a1, b1 = end_value(piece, -1)
    if previous is None:
        a2, b2 = arb(a0), arb(b0)
    else:
        a2, b2 = end_value(previous, 1)
    return arb((((a1 - a2) ** 2 + (b1 - b2) ** 2).sqrt()).upper())
