"""Rigorous Gauss–Legendre θ-integrals of ½e², e·∂e/∂a, e·∂e/∂b on one piece, with a Bernstein-ellipse remainder.

**The rule.** On a piece [p₀, p₁] (c = (p₀ + p₁)/2, k = (p₁ − p₀)/2) the n-point rule is
I_n = k·Σ wᵢ f(c + k·xᵢ) with the Gauss–Legendre nodes xᵢ and weights wᵢ of [−1, 1]. The nodes and weights
are enclosed by Arb (``arb.legendre_p_root`` with ``weight=True`` at 128 bits: balls that contain the
exact roots of Pₙ and their weights) and stored as the pairs of doubles just outside those balls
(:func:`rule_enclosure`, computed once per n and cached); c and k are enclosed in intervals, so each node
is an interval that contains the exact node, and the sum is formed in outward-rounded interval
arithmetic with the point enclosures of :func:`stumpcheck.numerics.certified.fast.one_head.jet_box` at
those node intervals (for an (a, b) box, the box's intervals), which contains Σ wᵢ f(θᵢ) for every
(a, b) of the box.

**The remainder.** Let f be analytic in the open Bernstein ellipse E_ρ of [−1, 1] (foci ±1, semi-axes
A = (ρ + ρ⁻¹)/2, B = (ρ − ρ⁻¹)/2), |f| ≤ M there. Its Chebyshev coefficients satisfy |a_j| ≤ 2Mρ^{−j}
(Trefethen, Approximation Theory and Approximation Practice, Thm 8.1). The rule integrates T_j exactly
for j ≤ 2n − 1 and both I and I_n vanish on odd T_j (symmetric nodes), so with |I(T_j)| = 2/(j² − 1)
for even j and |I_n(T_j)| ≤ Σ wᵢ = 2,

    |I − I_n| ≤ Σ_{j even ≥ 2n} 2Mρ^{−j}·(2 + 2/(4n² − 1)) ≤ (64/15)·M·ρ^{2−2n}/(ρ² − 1)   (n ≥ 2).

This is the bound of Trefethen's "Is Gauss quadrature better than Clenshaw–Curtis?" (Thm 4.5) with one
more factor ρ², which the derivation above needs and which we keep (it costs about one node). On a piece
the integral is k times the integral over [−1, 1] of f(c + k·x), so the bound is multiplied by k and E_ρ
is mapped by θ = c + k·x (for a piece of the upper half, by u = 1 − θ = c + k·x).

**M.** The closed upper half of E_ρ is covered by a grid of :data:`CELLS_X` × :data:`CELLS_Y` rectangles
on [−A, A] × [0, B] (A, B rounded up; a cell is dropped only when its point nearest the origin lies
outside the ellipse by more than a rounding margin), each mapped to a rectangle of θ (and of u = 1 − θ)
by interval arithmetic, and :func:`stumpcheck.numerics.certified.fast.complex_one_head.integrand_bounds`
bounds the three integrands there. The integrands are real on the real axis, so the lower half mirrors
the upper (|f(θ̄)| = |f(θ)|, poles in conjugate pairs). All cells finite means the integrands have no
pole in the closed ellipse (module docstring there): they are analytic in the open one and M is the
largest cell bound. Over an (a, b) box the same M holds for every (a, b) of the box, hence the
remainder does. The rates ρ are tried from :data:`RHOS` downwards (the singularities: the κ's poles at
β = 2πik, i.e. θ on the imaginary axis, and the weights' poles where E_L + E_R X = 0, in the switch
layer at distance π/b from the real axis; the model's breakpoints make each piece's ellipse of useful
size), and each component keeps its smallest bound (each is valid); the search stops when all three are
below 2⁻⁵⁴ of Σ k|wᵢ||f(θᵢ)|. No finite M at any ρ: the piece is reported as failed (status 1), and the
caller (:mod:`stumpcheck.numerics.certified.fast.theta_integrals`) splits it or falls back.

Domain: a piece of [0, ½] in θ or in u, (a, b) a real box with b > 0; n ≥ 2. Precision: the node sum's
rounding (a few dozen ulps of Σ|wf|) plus the remainder bound. Assumptions: those of
:data:`stumpcheck.numerics.certified.fast.rounding.ASSUMPTIONS` and
:data:`~stumpcheck.numerics.certified.fast.complex_interval.TRIG_ASSUMPTION`.
"""

from __future__ import annotations

import functools
import math
from fractions import Fraction

import numba
import numpy as np

from stumpcheck.numerics.certified.fast.complex_one_head import integrand_bounds
from stumpcheck.numerics.certified.fast.interval import add, mul, mul_pos, one_minus, sqr, sub
from stumpcheck.numerics.certified.fast.one_head import jet_box
from stumpcheck.numerics.certified.fast.rounding import up
from stumpcheck.numerics.precision import InputError

__all__ = ["cell_rectangles", "DEFAULT_ORDER", "RHOS", "CELLS_X", "CELLS_Y", "rule_enclosure", "ellipse_cells", "error_factors",
           "rule_tables", "gl_piece"]

#: Nodes per piece.
DEFAULT_ORDER = 24
#: Bernstein-ellipse parameters tried, largest first. Measured on the calibration relation (b = 10 to 10⁵):
#: with these and the 8 × 4 grid the remainder is below the node sum's rounding on every piece (the
#: widths equal those of 7 rates on a 16 × 8 grid), at a third of the time.
RHOS = (4.0, 2.0, 1.3)
#: Grid of the ellipse's upper half.
CELLS_X = 8
CELLS_Y = 4
_JIT = dict(cache=True, fastmath=False, error_model="numpy")


def _fraction(x) -> Fraction:
    """An exact arb (zero radius) as a Fraction."""
    man, exp = x.man_exp()
    man, exp = int(man), int(exp)
    return Fraction(man) * (Fraction(2) ** exp)


def _below(q: Fraction) -> float:
    f = float(q)
    return f if Fraction(f) <= q else math.nextafter(f, -math.inf)


def _above(q: Fraction) -> float:
    f = float(q)
    return f if Fraction(f) >= q else math.nextafter(f, math.inf)


@functools.lru_cache(maxsize=None)
def rule_enclosure(n: int) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """(x lo, x hi, w lo, w hi): doubles enclosing the n Gauss–Legendre nodes and weights of [−1, 1]
    (Arb balls at 128 bits, rounded outward; module docstring)."""
    from flint import arb, ctx

    if isinstance(n, bool) or not isinstance(n, int) or not 2 <= n <= 1000:
        raise InputError(f"the order must be an integer in [2, 1000], got {n!r}")
    out = np.empty((4, n))
    with ctx.workprec(128):
        for i in range(n):
            x, w = arb.legendre_p_root(n, i, weight=True)
            for row, ball in ((0, x), (2, w)):
                out[row, i] = _below(_fraction(ball.lower()))
                out[row + 1, i] = _above(_fraction(ball.upper()))
    return out[0], out[1], out[2], out[3]


@functools.lru_cache(maxsize=None)
def ellipse_cells(rho: float, nx: int = CELLS_X, ny: int = CELLS_Y) -> np.ndarray:
    """(m, 4) cells (x lo, x hi, y lo, y hi) of [−A, A] × [0, B] that may meet the closed ellipse
    (x/A)² + (y/B)² ≤ 1 of parameter ρ (A, B rounded up); they cover its upper half."""
    if not rho > 1:
        raise InputError(f"the Bernstein ellipse needs rho > 1, got {rho!r}")
    r = Fraction(rho)
    big_a = _above((r + 1 / r) / 2)
    big_b = _above((r - 1 / r) / 2)
    xs = [-big_a + 2 * big_a * i / nx for i in range(nx)] + [big_a]
    ys = [big_b * j / ny for j in range(ny)] + [big_b]
    cells = []
    for i in range(nx):
        for j in range(ny):
            x0, x1, y0, y1 = xs[i], xs[i + 1], ys[j], ys[j + 1]
            dx = 0.0 if x0 <= 0.0 <= x1 else min(abs(x0), abs(x1))
            if (dx / big_a) ** 2 + (y0 / big_b) ** 2 <= 1 + 1e-9:
                cells.append((x0, x1, y0, y1))
    return np.array(cells)


@functools.lru_cache(maxsize=None)
def error_factors(n: int, rhos: tuple = RHOS) -> np.ndarray:
    """(64/15)·ρ^{2−2n}/(ρ² − 1) for each ρ, rounded up (exact rationals)."""
    return np.array([_above(Fraction(64, 15) * Fraction(r) ** (2 - 2 * n) / (Fraction(r) ** 2 - 1))
                     for r in rhos])


def rule_tables(n: int = DEFAULT_ORDER, rhos: tuple = RHOS, grid: tuple = (CELLS_X, CELLS_Y)):
    """The arrays :func:`gl_piece` takes: (rule (4, n), cells (Σm, 4), cell offsets (len(rhos) + 1),
    error factors); ``grid`` the cells of each ellipse's upper half (any grid covers it: a coarser one gives a
    cruder M at less cost)."""
    rule = np.array(rule_enclosure(n))
    cells = [ellipse_cells(float(r), int(grid[0]), int(grid[1])) for r in rhos]
    offsets = np.cumsum([0] + [c.shape[0] for c in cells])
    return rule, np.concatenate(cells), offsets.astype(np.int64), error_factors(n, tuple(rhos))


@numba.njit(inline="always", **_JIT)
def cell_rectangles(clo, chi, klo, khi, xlo, xhi, ylo, yhi, upper):
    """(t, u): the rectangles of θ and u = 1 − θ over the ellipse cell x + iy ∈ [xlo, xhi] + i[ylo, yhi] of a
    piece c + k·(x + iy) (θ coordinates; u coordinates if ``upper``), each as (re lo, re hi, im lo, im hi)."""
    srlo, srhi = mul(klo, khi, xlo, xhi)
    srlo, srhi = add(clo, chi, srlo, srhi)
    silo, sihi = mul(klo, khi, ylo, yhi)
    orlo, orhi = one_minus(srlo, srhi)
    if upper:
        return (orlo, orhi, -sihi, -silo), (srlo, srhi, silo, sihi)
    return (srlo, srhi, silo, sihi), (orlo, orhi, -sihi, -silo)


@numba.njit(inline="always", **_JIT)
def _map(clo, chi, klo, khi, xlo, xhi, upper):
    """(θ lo, θ hi, u lo, u hi) at c + k·x (θ coordinates), or u = c + k·x (upper half)."""
    plo, phi = mul(klo, khi, xlo, xhi)
    slo, shi = add(clo, chi, plo, phi)
    olo, ohi = one_minus(slo, shi)
    if upper:
        return max(olo, 0.0), min(ohi, 1.0), max(slo, 0.0), min(shi, 1.0)
    return max(slo, 0.0), min(shi, 1.0), max(olo, 0.0), min(ohi, 1.0)


@numba.njit(**_JIT)
def gl_piece(alo, ahi, blo, bhi, p0, p1, upper, rule, cells, offsets, factors):
    """(L lo, L hi, ∂L/∂a lo, hi, ∂L/∂b lo, hi, status) over the piece [p0, p1] of θ (``upper`` false) or
    of u = 1 − θ (true): the rule's sum widened by the smallest remainder bound of each component
    (module docstring); status 0, or 1 when some component found no finite M at any ρ (its interval is
    then the whole line). ``rule``, ``cells``, ``offsets``, ``factors`` from :func:`rule_tables`."""
    out = np.zeros(7)
    slo, shi = add(p0, p0, p1, p1)
    clo, chi = mul(slo, shi, 0.5, 0.5)
    dlo, dhi = sub(p1, p1, p0, p0)
    klo, khi = mul(max(dlo, 0.0), dhi, 0.5, 0.5)
    klo = max(klo, 0.0)
    sums = np.zeros(6)
    scale = np.zeros(3)
    n = rule.shape[1]
    for i in range(n):
        tlo, thi, ulo, uhi = _map(clo, chi, klo, khi, rule[0, i], rule[1, i], upper)
        elo, ehi, ealo, eahi, eblo, ebhi = jet_box(alo, ahi, blo, bhi, tlo, thi, ulo, uhi)
        wlo, whi = mul_pos(klo, khi, rule[2, i], rule[3, i])
        flo, fhi = sqr(elo, ehi)
        flo, fhi = mul_pos(flo, fhi, 0.5 * wlo, up(0.5 * whi))
        sums[0], sums[1] = add(sums[0], sums[1], flo, fhi)
        scale[0] = up(scale[0] + fhi)
        flo, fhi = mul(elo, ehi, ealo, eahi)
        flo, fhi = mul(flo, fhi, wlo, whi)
        sums[2], sums[3] = add(sums[2], sums[3], flo, fhi)
        scale[1] = up(scale[1] + max(abs(flo), abs(fhi)))
        flo, fhi = mul(elo, ehi, eblo, ebhi)
        flo, fhi = mul(flo, fhi, wlo, whi)
        sums[4], sums[5] = add(sums[4], sums[5], flo, fhi)
        scale[2] = up(scale[2] + max(abs(flo), abs(fhi)))
    best = np.full(3, np.inf)
    for r in range(factors.size):
        m = np.zeros(3)
        for c in range(offsets[r], offsets[r + 1]):
            xlo, xhi, ylo, yhi = cells[c, 0], cells[c, 1], cells[c, 2], cells[c, 3]
            t, u = cell_rectangles(clo, chi, klo, khi, xlo, xhi, ylo, yhi, upper)
            m0, m1, m2 = integrand_bounds(alo, ahi, blo, bhi, t, u)
            m[0] = max(m[0], m0)
            m[1] = max(m[1], m1)
            m[2] = max(m[2], m2)
            if m[0] == np.inf and m[1] == np.inf and m[2] == np.inf:
                break
        done = True
        for j in range(3):
            bound = up(up(khi * factors[r]) * m[j])
            if bound < best[j]:
                best[j] = bound
            if not best[j] <= up(scale[j] * 2.0 ** -54):
                done = False
        if done:
            break
    status = 0.0
    for j in range(3):
        if best[j] == np.inf:
            status = 1.0
        out[2 * j], out[2 * j + 1] = add(sums[2 * j], sums[2 * j + 1], -best[j], best[j])
    out[6] = status
    return out
