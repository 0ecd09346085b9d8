"""The tube's approximate solution on one interval: a Chebyshev interpolant with exact binary coefficients.

On S = [s₀, s₁] (h = s₁ − s₀) with x = (2s − s₀ − s₁)/h ∈ [−1, 1], the approximate solution is

    z̃(s) = Σ_{k=0}^{m} c_k T_k(x),   z̃'(s) = (2/h) Σ_k c_k T_k'(x),

with float64 coefficients c_k (two lists, for a and b): exact binary rationals, so z̃ is one exact
polynomial wherever it is re-evaluated. The coefficients come from float64 values at the Chebyshev points
of the second kind x_j = cos(jπ/m) (:func:`fit_coefficients`; not part of any proof: any coefficients give
a valid tube, good ones a tight one).

Rigorous evaluation (:func:`disk_enclosure`): the polynomial in x is converted once to the monomial basis
with exact rationals, then Taylor-shifted to a centre c (exact, complex) in ball arithmetic,
z̃(c + w) = Σ_j q_j w^j, and |Σ_j q_j w^j − q₀| ≤ Σ_{j≥1} |q_j| r^j for |w| ≤ r: an enclosure of z̃ and
z̃' over the complex disk |x − c| ≤ r that does not suffer the blow-up of Horner's rule on a wide ball.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction
from functools import lru_cache

import numpy as np
from flint import acb, arb, ctx, fmpq

__all__ = ["ChebyshevPiece", "chebyshev_ball_coefficients", "chebyshev_points", "fit_coefficients", "disk_enclosure", "segment_hull",
           "value_at", "s_of_x"]


@dataclass(frozen=True)
class ChebyshevPiece:
    """z̃ on [s0, s1]: Chebyshev coefficients (floats, exact binary) of a and of b in x = (2s − s0 − s1)/h."""

    s0: float
    s1: float
    ca: tuple
    cb: tuple

    @property
    def degree(self) -> int:
        return len(self.ca) - 1


def chebyshev_points(n: int) -> np.ndarray:
    """x_j = cos(jπ/n), j = 0..n (second kind, from 1 down to −1), float64."""
    return np.cos(np.pi * np.arange(n + 1) / n)


def s_of_x(s0: float, s1: float, x: np.ndarray) -> np.ndarray:
    return 0.5 * (s0 + s1) + 0.5 * (s1 - s0) * x


def fit_coefficients(values: np.ndarray) -> tuple:
    """Float64 Chebyshev coefficients of the degree-n interpolant of ``values`` at x_j = cos(jπ/n)."""
    values = np.asarray(values, dtype=float)
    n = len(values) - 1
    j = np.arange(n + 1)
    weights = np.where((j == 0) | (j == n), 0.5, 1.0)
    coefficients = np.array([2.0 / n * np.sum(weights * values * np.cos(np.pi * k * j / n)) for k in range(n + 1)])
    coefficients[0] /= 2
    coefficients[n] /= 2
    return tuple(float(c) for c in coefficients)


@lru_cache(maxsize=4096)
def _monomial(coefficients: tuple) -> tuple:
    """Exact rational monomial coefficients (in x) of Σ c_k T_k(x)."""
    n = len(coefficients)
    previous, current = [Fraction(1)], [Fraction(0), Fraction(1)]  # T_0, T_1
    total = [Fraction(0)] * n
    for k, c in enumerate(coefficients):
        poly = previous if k == 0 else current if k == 1 else None
        if k >= 2:
            nxt = [Fraction(0)] + [2 * x for x in current]
            for i, x in enumerate(previous):
                nxt[i] -= x
            previous, current = current, nxt
            poly = current
        for i, x in enumerate(poly):
            total[i] += Fraction(c) * x
    return tuple(total)


def _shifted(monomial: tuple, center: acb) -> list:
    """Ball coefficients q_j of p(center + w) = Σ q_j w^j (Horner's Taylor shift)."""
    q = [acb(fmpq(x.numerator, x.denominator)) for x in monomial]
    n = len(q) - 1
    for i in range(n):
        for j in range(n - 1, i - 1, -1):
            q[j] += center * q[j + 1]
    return q


def _disk_value(q: list, radius: arb) -> tuple[acb, acb]:
    """Balls containing p and p' (in x) over |w| ≤ radius from the shifted coefficients q:
    p ∈ q₀ + disk(Σ_{j≥1} |q_j| r^j), p' ∈ q₁ + disk(Σ_{j≥2} j|q_j| r^{j−1})."""
    tail, dtail, power = arb(0), arb(0), arb(1)
    for j in range(1, len(q)):
        if j >= 2:
            dtail += j * abs(q[j]).upper() * power
        power = power * radius
        tail += abs(q[j]).upper() * power
    tail, dtail = tail.upper(), dtail.upper()
    value = q[0] + acb(arb(0, tail), arb(0, tail))
    slope = (q[1] if len(q) > 1 else acb(0)) + acb(arb(0, dtail), arb(0, dtail))
    return value, slope


def disk_enclosure(piece: ChebyshevPiece, center: acb, radius: arb):
    """((ã, b̃), (ã', b̃')) as acb balls containing z̃(s), z̃'(s) = dz̃/ds for every x with |x − center| ≤ radius."""
    with ctx.workprec(max(ctx.prec, _BITS)):
        return _disk_enclosure(piece, acb(center), arb(radius))


#: working bits of the Taylor shift at least (the monomial form of a degree-m Chebyshev sum loses ~m bits)
_BITS = 192


def _disk_enclosure(piece, center, radius):
    out = []
    scale = 2 / (arb(piece.s1) - arb(piece.s0))
    for coefficients in (piece.ca, piece.cb):
        if radius == 0:
            q = _shifted(_monomial(coefficients), center)
            value, slope = q[0], (q[1] if len(q) > 1 else acb(0))
        else:
            value, slope = _disk_value(_shifted(_monomial(coefficients), center), radius)
        out.append((value, slope * scale))
    (a, da), (b, db) = out
    return (a, b), (da, db)


def value_at(piece: ChebyshevPiece, x) -> tuple[arb, arb]:
    """Real balls containing z̃ at the real ball x (for points: x exact or a thin ball)."""
    x = arb(x)
    mid, rad = arb(x.mid()), arb(x.rad())
    (a, b), _ = disk_enclosure(piece, acb(mid), rad)
    return a.real, b.real


def segment_hull(piece: ChebyshevPiece, x_lo, x_hi):
    """Real balls (a, b) containing z̃(s) for x ∈ [x_lo, x_hi] (exact numbers)."""
    lo, hi = arb(x_lo), arb(x_hi)
    center = (lo + hi) / 2
    radius = ((hi - lo) / 2).upper()
    (a, b), _ = disk_enclosure(piece, acb(center), arb(radius) + abs(center - arb(center.mid())).upper())
    return a.real, b.real


def float_value(piece: ChebyshevPiece, x: float) -> tuple[float, float]:
    """z̃ at x in float64 (for planning and plots only)."""
    return (float(np.polynomial.chebyshev.chebval(x, piece.ca)), float(np.polynomial.chebyshev.chebval(x, piece.cb)))


def max_slope_estimate(piece: ChebyshevPiece) -> float:
    """max over the Chebyshev points of ‖z̃'‖ in float64 (planning only)."""
    xs = chebyshev_points(max(piece.degree, 2))
    da = np.polynomial.chebyshev.chebval(xs, np.polynomial.chebyshev.chebder(piece.ca))
    db = np.polynomial.chebyshev.chebval(xs, np.polynomial.chebyshev.chebder(piece.cb))
    return float(np.max(np.hypot(da, db))) * 2 / (piece.s1 - piece.s0) if math.isfinite(piece.s1) else math.inf


def chebyshev_ball_coefficients(values: list) -> list:
    """Ball coefficients c_k of the Chebyshev interpolant of the balls ``values`` at x_j = cos(jπ/n)."""
    n = len(values) - 1
    out = []
    for k in range(n + 1):
        c = arb(0)
        for j, v in enumerate(values):
            term = v * (arb.pi() * k * j / n).cos()
            c += term / 2 if j in (0, n) else term
        c = 2 * c / n
        out.append(c / 2 if k in (0, n) else c)
    return out
