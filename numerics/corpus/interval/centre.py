"""The centre curve of a corpus interval, its column grid, and the step rule.

**Grid.** b is cut into columns with exact dyadic ends: in the octave [2ᵏ, 2ᵏ⁺¹) the columns are
2^{k−6} wide (64 per octave, 1.6–3 % of b), so every column end is a double and a rational at once.
:func:`column_after` gives the next column end.

**Centre.** A piecewise linear a = A(b) through nodes (b_i, A_i) placed every :data:`NODE_COLUMNS`
columns (8 per octave), with dyadic slopes s_i (multiples of 2⁻²⁰) and A_{i+1} = A_i + s_i·(b_{i+1} − b_i)
exactly, so that A_i, s_i and the intercept A_i − s_i·b_i are exact doubles (at most ~40 significant
bits for b < 2¹³). Beyond the last node A continues with the last slope. The nodes are fitted to the
given corpus: A_{i+1} is chosen near the corpus's own λ-nullcline a*(b_{i+1}), the root in a of

    −∂L̂/∂a + c′(b)·∂L̂/∂b = 0,    c′(b) = 1 + 2/b + ρ₁/b²  (the slope of the calibration relation),

bracketed outwards from the previous node's offset a* − calibration_a and refined by Brent's method
(scipy), in float64 (the corpus gradient of :mod:`~stumpcheck.numerics.corpus.empirical` on pruned windows). The fit only places the curve: the curve
is part of the statement (recorded exactly), and nothing in the proof relies on it being a
nullcline. Where no root is found nearby, the offset is carried on from the last node and the
proof decides.

**Step.** ``eta_rule="half-curvature"`` (default): η = ½ / max λ_max(∇²L̂) over sample points of S in
its first octave (the curvature falls like b⁻³ along S, so the smallest b decides), rounded down to
two significant digits. The proof then checks that this η works on all of S.
"""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
from scipy.optimize import brentq

from stumpcheck.numerics.certified.fast.corpus import corpus_enclosure
from stumpcheck.numerics.corpus.empirical import loss_and_gradient, sort_corpus
from stumpcheck.numerics.generated.asymptotics_numpy import RHO1, calibration_a
from stumpcheck.numerics.precision import InputError

__all__ = ["NoPositiveCurvature", "NODE_COLUMNS", "COLUMNS_PER_OCTAVE", "SLOPE_GRAIN", "Centre", "column_after", "column_width", "columns", "on_grid",
           "fit_node", "eta_half_curvature", "corpus_point", "HALF_CURVATURE_RULE"]

COLUMNS_PER_OCTAVE = 64
NODE_COLUMNS = 8
SLOPE_GRAIN = Fraction(1, 2 ** 20)
_SEARCH = 6.0


def column_width(b: Fraction) -> Fraction:
    """2^{k−6} for b ∈ [2ᵏ, 2ᵏ⁺¹)."""
    k = math.floor(math.log2(b))
    while Fraction(2) ** k > b:
        k -= 1
    while Fraction(2) ** (k + 1) <= b:
        k += 1
    return Fraction(2) ** k / COLUMNS_PER_OCTAVE


def column_after(b: Fraction) -> Fraction:
    """The next grid point above b (b itself must be on the grid or is rounded up to it)."""
    w = column_width(b)
    return (b // w + 1) * w


def columns(b_start: Fraction, b_end: Fraction) -> list[tuple[Fraction, Fraction]]:
    """The grid columns tiling [b_start, b_end] (both on the grid)."""
    out, b = [], b_start
    while b < b_end:
        nxt = min(column_after(b), b_end)
        out.append((b, nxt))
        b = nxt
    return out


def on_grid(b: Fraction) -> bool:
    return b > 0 and b % column_width(b) == 0


def corpus_point(x, theta, a: float, b: float, *, threads=None):
    """(∂L̂/∂a, ∂L̂/∂b, ∂²L̂/∂a², ∂²L̂/∂a∂b, ∂²L̂/∂b²) at (a, b), midpoints of the fast point enclosure."""
    enc = corpus_enclosure(x, theta, a, b, hessian=True, threads=threads)
    mid = 0.5 * (enc[:, 0] + enc[:, 1])
    return tuple(float(v) for v in mid[1:])


def _slope_of_relation(b: float) -> float:
    return 1.0 + 2.0 / b + RHO1 / b ** 2


def _field(x, theta, b: float, threads):
    """λ ↦ dλ/dt = −∂L̂/∂a + c′(b)·∂L̂/∂b at a = calibration_a(b) + λ, from the float64 corpus gradient on
    pruned windows (:func:`~stumpcheck.numerics.corpus.empirical.loss_and_gradient`; ``x`` raw or a
    :class:`~stumpcheck.numerics.corpus.empirical.SortedCorpus`): the fit only places the curve."""
    c, slope = float(calibration_a(b)), _slope_of_relation(b)

    def f(lam: float) -> float:
        _, (ga, gb) = loss_and_gradient(x, theta, c + lam, b, method="pruned", threads=threads)
        return float(-ga + slope * gb)
    return f


def fit_node(x, theta, b: float, offset_guess: float, *, threads=None) -> tuple[float, bool]:
    """(offset, found): a*(b) − calibration_a(b) on the corpus's λ-nullcline nearest ``offset_guess``,
    a root where dλ/dt changes sign from + to − as λ grows (an attracting one); brackets are searched
    outwards from the guess in steps of ½ up to :data:`_SEARCH` away, the root refined by Brent's method."""
    f = _field(x, theta, b, threads)
    f0 = f(offset_guess)
    if f0 == 0.0:
        return offset_guess, True
    step = 0.5 if f0 > 0 else -0.5      # f > 0: the attracting root lies above
    lo, f_lo = offset_guess, f0
    for k in range(1, int(_SEARCH / 0.5) + 1):
        hi = offset_guess + k * step
        f_hi = f(hi)
        if f_hi == 0.0 or (f_hi > 0) != (f_lo > 0):
            left, right = sorted((lo, hi))
            root = brentq(f, left, right, xtol=1e-7) if f_hi != 0.0 else hi
            return float(root), True
        lo, f_lo = hi, f_hi
    return offset_guess, False


class NoPositiveCurvature(ArithmeticError):
    """The half-curvature step rule finds no positive curvature: a fact of the corpus, not bad input."""


class Centre:
    """The piecewise linear centre a = A(b) through exact nodes, fitted lazily as far as it is asked."""

    def __init__(self, x, theta, b_start: Fraction, *, nodes=None, threads=None):
        self._x = None if x is None else sort_corpus(x, theta)   # sorted once for the fit (pruned windows)
        self._theta, self._threads = theta, threads
        self.b_start = Fraction(b_start)
        self.nodes: list[tuple[Fraction, Fraction]] = [] if nodes is None else [
            (Fraction(b), Fraction(a)) for b, a in nodes]
        self.fitted: list[bool] = []
        self.offset = 0.0
        if not self.nodes:
            if x is None:
                raise InputError("a centre needs its nodes or a corpus to fit them")
            self.offset, found = fit_node(self._x, theta, float(b_start), 0.0, threads=threads)
            a0 = Fraction(float(calibration_a(float(b_start))) + self.offset).limit_denominator(2 ** 20)
            a0 = Fraction(round(a0 * 2 ** 20), 2 ** 20)
            self.nodes.append((self.b_start, a0))
            self.fitted.append(found)

    @classmethod
    def from_nodes(cls, nodes):
        if len(nodes) < 1:
            raise InputError("the centre needs at least one node")
        return cls(None, None, Fraction(nodes[0][0]), nodes=nodes)

    def _next_node_b(self, b: Fraction) -> Fraction:
        for _ in range(NODE_COLUMNS):
            b = column_after(b)
        return b

    def extend_to(self, b: Fraction) -> None:
        """Fit nodes until the last one is at or beyond b (a no-op for a recorded centre)."""
        while self.nodes[-1][0] < b:
            if self._x is None:
                return
            b0, a0 = self.nodes[-1]
            b1 = self._next_node_b(b0)
            guess = self.offset
            self.offset, found = fit_node(self._x, self._theta, float(b1), guess, threads=self._threads)
            target = Fraction(float(calibration_a(float(b1))) + self.offset)
            slope = Fraction(round((target - a0) / (b1 - b0) / SLOPE_GRAIN)) * SLOPE_GRAIN
            self.nodes.append((b1, a0 + slope * (b1 - b0)))
            self.fitted.append(found)

    def piece(self, b_lo: Fraction) -> tuple[Fraction, Fraction, Fraction]:
        """(b_i, A_i, s_i) of the piece containing [b_lo, b_lo + ε): the last node ≤ b_lo and its slope."""
        self.extend_to(self._next_node_b(b_lo))
        i = max(k for k, (bk, _) in enumerate(self.nodes) if bk <= b_lo)
        return self.nodes[i][0], self.nodes[i][1], self.slope(i)

    def slope(self, i: int) -> Fraction:
        if i + 1 < len(self.nodes):
            (b0, a0), (b1, a1) = self.nodes[i], self.nodes[i + 1]
            return (a1 - a0) / (b1 - b0)
        return self.slope(i - 1) if i > 0 else Fraction(1)

    def slopes_over(self, b_lo: Fraction, b_hi: Fraction) -> tuple[Fraction, Fraction]:
        """The least and largest slope of the pieces that meet [b_lo, b_hi] (A extends beyond the last node)."""
        self.extend_to(b_hi)
        found = [self.slope(i) for i, (bk, _) in enumerate(self.nodes)
                 if bk <= b_hi and (i + 1 == len(self.nodes) or self.nodes[i + 1][0] > b_lo)]
        return min(found), max(found)

    def value(self, b: Fraction) -> Fraction:
        bi, ai, si = self.piece(b)
        return ai + si * (b - bi)

    def nodes_up_to(self, b: Fraction) -> list[tuple[Fraction, Fraction]]:
        """The nodes needed to state A on [b_start, b] and the slope of the piece holding b (the certificate
        records them up to twice its b_end: a GD step from S never reaches that far)."""
        self.extend_to(self._next_node_b(b))
        keep = [nd for nd in self.nodes if nd[0] <= b]
        later = [nd for nd in self.nodes if nd[0] > b]
        return keep + later[:1]


#: the ``eta_rule`` an interval certificate records for :func:`eta_half_curvature`
HALF_CURVATURE_RULE = ("half-curvature: 1/2 / max lambda_max(Hess L_hat) on 27 points of S's first octave, "
                       "2 significant digits, rounded down")


def eta_half_curvature(x, theta, centre: Centre, c_minus: Fraction, c_plus: Fraction, *, threads=None) -> Fraction:
    """½ / max λ_max(∇²L̂) over S's first octave (9 b-values × 3 band offsets), two significant digits, down."""
    b0 = centre.b_start
    worst = -math.inf
    for k in range(9):
        b = b0 * (1 + Fraction(k, 8))
        for mu in (-c_minus, Fraction(0), c_plus):
            a = float(centre.value(b) + mu)
            _, _, haa, hab, hbb = corpus_point(x, theta, a, float(b), threads=threads)
            worst = max(worst, float(np.max(np.linalg.eigvalsh(np.array([[haa, hab], [hab, hbb]])))))
    if not worst > 0:
        raise NoPositiveCurvature("the corpus Hessian has no positive curvature on S's first octave (largest "
                                  f"eigenvalue {worst:.3g}), so the half-curvature rule gives no step; give --eta")
    eta = 0.5 / worst
    scale = 10 ** (math.floor(math.log10(eta)) - 1)
    return Fraction(math.floor(eta / scale)) * Fraction(scale) if scale >= 1 else \
        Fraction(math.floor(eta / scale), round(1 / scale))
