"""The obligations of a corpus interval on one box of S, with mean-value forms, in Arb ball arithmetic.

Coordinates: on a piece of the centre a = A(b) (slope s, a = A_i + s·(b − b_i)), a point of S is
(b, μ) with a = A(b) + μ, μ ∈ [−c₋, c₊]. A box is Z = [β₀, β₁] × [μ₀, μ₁] inside one piece; in (a, b)
it is the parallelogram {(a′ + s·b, b)} with a′ = A_i − s·b_i + μ, which the fast layer encloses
directly (:func:`~stumpcheck.numerics.certified.fast.corpus.corpus_enclosure` with ``shear=s``).
From the fast layer come G = (L̂, L̂_a, L̂_b, L̂_aa, L̂_ab, L̂_bb) over Z and P = (L̂, L̂_a, L̂_b) at the
centre c = (b_c, μ_c) (a tiny box containing it). With the derivatives along the coordinates,
∂_μ = ∂_a and D_b = ∂_b + s·∂_a (μ fixed), the mean-value form of a function q on the convex Z is

    q(Z) ⊂ q(c) + ∂_μ q(Z)·[μ₀ − μ_c, μ₁ − μ_c] + D_b q(Z)·[β₀ − b_c, β₁ − b_c],

intersected with the direct enclosure where there is one. The obligations (each must hold at every
point of Z; a margin > 0 proves it):

* **drift**: ḃ = −L̂_b > 0; margin κ = min over Z of −L̂_b, the flow's and GD's progress in b
  (GD raises b by at least δ = η·κ per step from Z);
* **inward** (boxes on an edge of the band only): the corpus flow's dμ/dt = −(L̂_a − s·L̂_b) =: −g points
  into S: g > 0 on the upper edge μ = c₊ (margin min g), g < 0 on the lower edge μ = −c₋ (margin
  min −g), both over the whole box;
* **gd**: the GD map z ↦ z − η∇L̂(z) sends Z into the band: with b′ = b − η·L̂_b ≥ b and A's secant
  slope σ on [b, b′] (in the hull [σ] of the slopes of the pieces that meet [β₀, β₁ + η·max(−L̂_b)]),
  μ′ = a′ − A(b′) = μ − η·(L̂_a − σ·L̂_b), enclosed by its mean-value form in (b, μ) with σ as a
  ball; margin min(c₊ − max μ′, min μ′ + c₋).

A margin ≤ 0 does not mean the obligation fails: :func:`certainly_false` decides that at a point.
Arithmetic: python-flint balls at :data:`PREC` bits, exact rational inputs, the fast layer's
enclosures as balls containing them (so the margins are rigorous under the fast layer's assumptions);
a box's ends go to the fast layer as doubles rounded outward, and the minimum of two balls is
``arb.min`` (its lower end is the smaller lower end, whether or not the balls overlap).
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction

from flint import arb, ctx, fmpq

from stumpcheck.numerics.certified.fast.corpus import corpus_enclosure

__all__ = ["PREC", "SharedEnclosures", "BoxResult", "evaluate_box", "certainly_false", "to_interval", "ball", "lower_fraction",
           "float_down", "float_up"]

PREC = 128
_NAMES = ("L", "L_a", "L_b", "L_aa", "L_ab", "L_bb")


def ball(x: Fraction) -> arb:
    x = Fraction(x)
    return arb(fmpq(x.numerator, x.denominator))


def _pair_ball(lo: float, hi: float) -> arb:
    return arb(lo) if lo == hi else arb(lo).union(arb(hi))


def float_down(x: Fraction) -> float:
    f = float(x)
    return f if Fraction(f) <= x else float(_next(f, -1))


def float_up(x: Fraction) -> float:
    f = float(x)
    return f if Fraction(f) >= x else float(_next(f, 1))


def _next(f: float, direction: int) -> float:
    import math
    return math.nextafter(f, math.inf if direction > 0 else -math.inf)


def to_interval(x: Fraction) -> tuple[float, float]:
    return float_down(x), float_up(x)


def lower_fraction(x: arb) -> Fraction:
    """The exact lower end of a ball as a rational (its man·2^exp)."""
    man, exp = (int(v) for v in arb(x.lower()).man_exp())
    return Fraction(man * 2 ** exp) if exp >= 0 else Fraction(man, 2 ** -exp)


def upper_fraction(x: arb) -> Fraction:
    man, exp = (int(v) for v in arb(x.upper()).man_exp())
    return Fraction(man * 2 ** exp) if exp >= 0 else Fraction(man, 2 ** -exp)


@dataclass
class BoxResult:
    """Enclosures and margins of one box (margins as exact lower bounds; None where not asked)."""

    box_enclosure: list        # G: 6 × [lo, hi] floats
    centre_enclosure: list     # P: 3 × [lo, hi] floats
    drift: Fraction            # lower bound of −L̂_b over Z
    drift_upper: Fraction      # upper bound of −L̂_b over Z (for the σ hull)
    inward: Fraction | None    # lower bound of ±g on an edge box
    gd: Fraction               # lower bound of the GD margin
    sigma: tuple               # the slope hull used (exact)

    @property
    def proved(self) -> bool:
        return self.drift > 0 and self.gd > 0 and (self.inward is None or self.inward > 0)


def _mv(centre: arb, d_mu: arb, d_b: arb, dmu: arb, db: arb) -> arb:
    return centre + d_mu * dmu + d_b * db


def _intersect(x: arb, y: arb) -> arb:
    """A ball containing x ∩ y (both contain the same value): the hull of the larger lower end and
    the smaller upper end (exact points, so the comparisons are decided)."""
    lo = x.lower() if x.lower() >= y.lower() else y.lower()
    hi = x.upper() if x.upper() <= y.upper() else y.upper()
    return arb(lo).union(arb(hi))


def enclosures(x, theta, piece, box, *, threads=None):
    """(G, P) from the fast layer for the box (β₀, β₁, μ₀, μ₁) on the piece (b_i, A_i, s): the unsorted
    enclosures of certificates written without a pruning record (:class:`SharedEnclosures` otherwise)."""
    b_i, a_i, s = piece
    b0, b1, mu0, mu1 = box
    intercept = a_i - s * b_i
    a_prime = (float_down(intercept + mu0), float_up(intercept + mu1))
    shear = to_interval(s)
    b_range = (float_down(b0), float_up(b1))  # outward: a non-dyadic end is not rounded into the box
    g = corpus_enclosure(x, theta, a_prime, b_range, hessian=True, shear=shear, threads=threads)
    bc, muc = (b0 + b1) / 2, (mu0 + mu1) / 2
    ac = a_i + s * (bc - b_i) + muc
    p = corpus_enclosure(x, theta, to_interval(ac), to_interval(bc), threads=threads)
    return g.tolist(), p.tolist()


class SharedEnclosures:
    """(G, P) of boxes from the sorted fast layer (:mod:`~stumpcheck.numerics.certified.fast.corpus_sorted`):
    the group moments of a b-range (for G, with the Hessian) and of a centre b (for P) are computed once
    and shared by every box with that b-range, pruned at ``cut``; each box then costs two O(m) mixtures.
    The result does not depend on which boxes were asked before (a moment is a function of its b-range)."""

    def __init__(self, tasks, *, cut=None, threads=None):
        from stumpcheck.numerics.certified.fast.corpus_sorted import CUT
        self.tasks, self.cut, self.threads = tasks, CUT if cut is None else cut, threads
        self._box: dict = {}
        self._point: dict = {}
        self.kept = 0           # points the group passes touched (all b-ranges so far)
        self.passes = 0         # group passes (over all tasks)

    def _moments(self, cache, b, hessian):
        from stumpcheck.numerics.certified.fast.corpus_sorted import group_moments
        if b not in cache:
            if len(cache) > 64:
                cache.clear()
            cache[b] = group_moments(self.tasks, b, hessian=hessian, cut=self.cut, threads=self.threads)
            self.kept += cache[b].kept()
            self.passes += 1
        return cache[b]

    def __call__(self, piece, box):
        from stumpcheck.numerics.certified.fast.corpus_sorted import mixed_enclosure
        b_i, a_i, s = piece
        b0, b1, mu0, mu1 = box
        intercept = a_i - s * b_i
        a_prime = (float_down(intercept + mu0), float_up(intercept + mu1))
        g = mixed_enclosure(self.tasks, self._moments(self._box, (float_down(b0), float_up(b1)), True), a_prime,
                            shear=to_interval(s))
        bc, muc = (b0 + b1) / 2, (mu0 + mu1) / 2
        ac = a_i + s * (bc - b_i) + muc
        p = mixed_enclosure(self.tasks, self._moments(self._point, to_interval(bc), False), to_interval(ac))
        return g.tolist(), p.tolist()


def evaluate_box(G, P, piece, box, band, eta: Fraction, sigma_hull) -> BoxResult:
    """The margins of one box from its enclosures (module docstring). ``sigma_hull(lo, hi)`` gives the
    exact (least, largest) slope of the centre's pieces over [lo, hi]."""
    b_i, a_i, s = piece
    b0, b1, mu0, mu1 = box
    c_minus, c_plus = band
    with ctx.workprec(PREC):
        La, Lb, Laa, Lab, Lbb = (_pair_ball(*G[k]) for k in range(1, 6))
        Pa, Pb = _pair_ball(*P[1]), _pair_ball(*P[2])
        S, E = ball(s), ball(eta)
        muc, bc = (mu0 + mu1) / 2, (b0 + b1) / 2
        dmu = ball(mu0 - muc).union(ball(mu1 - muc))
        db = ball(b0 - bc).union(ball(b1 - bc))
        # L̂_b: q(c) + L̂_ab·Δμ + (L̂_bb + s L̂_ab)·Δb, within the direct enclosure
        qb = _intersect(_mv(Pb, Lab, Lbb + S * Lab, dmu, db), Lb)
        qa = _intersect(_mv(Pa, Laa, Lab + S * Laa, dmu, db), La)
        drift_ball = -qb
        inward = None
        if mu1 == c_plus or mu0 == -c_minus:
            g = _mv(Pa - S * Pb, Laa - S * Lab, (Lab + S * Laa) - S * (Lbb + S * Lab), dmu, db)
            g = _intersect(g, qa - S * qb)
            if mu1 == c_plus:
                inward = lower_fraction(g)
            if mu0 == -c_minus:
                low = lower_fraction(-g)
                inward = low if inward is None else min(inward, low)
        b_reach = b1 + eta * upper_fraction(-qb)
        s_lo, s_hi = sigma_hull(b0, max(b_reach, b1))
        sig = ball(s_lo).union(ball(s_hi))
        image = _mv(ball(muc) - E * (Pa - sig * Pb),
                    1 - E * (Laa - sig * Lab),
                    -E * ((Lab + S * Laa) - sig * (Lbb + S * Lab)), dmu, db)
        # the lower end of the smaller of two balls (Python's min on overlapping balls may pick the other)
        gd = (ball(c_plus) - arb(image.upper())).min(arb(image.lower()) + ball(c_minus))
        return BoxResult(G, P, lower_fraction(drift_ball), upper_fraction(drift_ball), inward,
                         lower_fraction(gd), (s_lo, s_hi))


def certainly_false(P, piece, point, band, eta: Fraction, sigma_hull) -> dict | None:
    """At one point (b, μ) of S with its point enclosure P: which obligation surely fails there, with its
    margin (an upper bound < 0), or None. ``point`` = (b, μ) exact."""
    b_i, a_i, s = piece
    b, mu = point
    c_minus, c_plus = band
    with ctx.workprec(PREC):
        Pa, Pb = _pair_ball(*P[1]), _pair_ball(*P[2])
        S, E = ball(s), ball(eta)
        if (-Pb) < 0:
            return {"obligation": "drift", "margin_upper": float(upper_fraction(-Pb))}
        g = Pa - S * Pb
        if mu == c_plus and g < 0:
            return {"obligation": "inward", "margin_upper": float(upper_fraction(g))}
        if mu == -c_minus and g > 0:
            return {"obligation": "inward", "margin_upper": float(upper_fraction(-g))}
        s_lo, s_hi = sigma_hull(b, max(b, b + eta * upper_fraction(-Pb)))
        sig = ball(s_lo).union(ball(s_hi))
        image = ball(mu) - E * (Pa - sig * Pb)
        if image > ball(c_plus) or image < -ball(c_minus):
            margin = (ball(c_plus) - image).min(image + ball(c_minus))
            return {"obligation": "gd", "margin_upper": float(upper_fraction(margin))}
    return None
