"""The x-integrals of the exact fresh-context risk for the pooled estimator, by Arb's rigorous integrator.

The pooled estimator puts the one-head and the reflected score of each point into one softmax
(docs/model.md §5), so a point's weight is w(x) = v(x) + v′(x), still i.i.d. over the points. On each
segment (x = θ + ς t, t ∈ [0, Δ]) the two parts are exponentials of opposite slope,

    w(t) = e^{ℓ₁ + η b t} + e^{ℓ₂ − η b t},

and E e^{−s w} has no closed form, so each segment sum of
:class:`~stumpcheck.numerics.certified.enclosures.fresh_segments.SegmentSums` is an ``acb.integral`` over
t of an entire integrand (exponentials only: the ``analytic`` flag needs no check), with s = e^{σ − K}
a ball parameter:

    q = Σ ∫ −expm1(−s w) dt,  φ = Σ ∫ e^{−s w} dt,  s·A₁ = Σ ς ∫ t·(s w) e^{−s w} dt,
    s²·A₂ = Σ ∫ t²·(s w)² e^{−s w} dt.

Each σ of the outer integral costs these inner integrals, so the pooled risk is one to two orders of
magnitude slower than the closed forms of the one-head and reflected ones (measured in
benchmarks/bench_fresh_exact.py). The level sets of w are not single t-intervals, so the wide-ball
bounds of the outer integrand use the ratio form only (``level_measure`` is None).
"""

from __future__ import annotations

import math

from flint import acb, arb, ctx

from stumpcheck.numerics.certified.enclosures.fresh_segments import SegmentSums

__all__ = ["PooledWeights"]


class PooledWeights:
    """The pooled weight law at (a, b, θ), normalised by e^{−K}, K ≈ log(N·E w); same interface as
    :class:`~stumpcheck.numerics.certified.enclosures.fresh_segments.ClosedFormWeights`."""

    def __init__(self, a: arb, b: arb, theta: arb, N: int, prec: int):
        self.b, self.prec = b, prec
        # (sign ς, length Δ, ℓ₁, ℓ₂, η): w = e^{ℓ₁ + η b t} + e^{ℓ₂ − η b t} at distance t from θ
        pieces = [(-1, theta, -b * theta, a - b + b * theta, +1),       # left: one-head grows, reflected falls
                  (+1, 1 - theta, a - b * theta, b * theta - b, -1)]    # right: one-head falls, reflected grows
        self.raw = [p for p in pieces if not p[1].is_zero()]
        self.max_length = max((arb(p[1].upper()) for p in self.raw), key=lambda x: float(x.mid()))
        with ctx.workprec(64):
            logs = []
            for _, length, l1, l2, eta in self.raw:
                for ell, slope in ((l1, eta), (l2, -eta)):
                    logs.append(ell + (slope * b * length).expm1().abs_upper().log() - b.log())
            top = max(float(x.mid()) for x in logs)
            total = sum(((x - top).exp() for x in logs), arb(0))
            self.K = arb(float((total.log() + top + math.log(N)).mid()))
        self.pieces = [(sign, length, l1 - self.K, l2 - self.K, eta) for sign, length, l1, l2, eta in self.raw]
        mean = arb(0)
        tops = []
        for _, length, l1, l2, eta in self.pieces:
            top = arb(0)
            for ell, slope in ((l1, eta), (l2, -eta)):
                mean += ell.exp() * (slope * b * length).expm1() / (slope * b)
                # each exponential is largest at one end of the segment; the sum of the two maxima bounds w
                top += arb(ell.upper()).max(arb((ell + slope * b * length).upper())).exp()
            tops.append(arb(top.upper()))
        self.mean_v = mean
        self.max_v = max(tops, key=lambda x: float(x.mid()))

    def _integral(self, function, length: arb) -> acb:
        tol = arb(2) ** (-self.prec + 8)
        return acb.integral(lambda t, _: function(t), 0, length, rel_tol=tol, abs_tol=tol * arb(2) ** -40,
                            eval_limit=200_000)

    def sums(self, sigma: acb) -> SegmentSums | None:
        s = sigma.exp()
        q = phi = s_a1 = s2_a2 = abs_a1 = acb(0)
        b = self.b
        for sign, length, l1, l2, eta in self.pieces:
            def weight(t, l1=l1, l2=l2, eta=eta):
                return s * ((l1 + eta * b * t).exp() + (l2 - eta * b * t).exp())  # s·w(t)
            q += self._integral(lambda t: -(-weight(t)).expm1(), length)
            phi += self._integral(lambda t: (-weight(t)).exp(), length)
            first = self._integral(lambda t: t * weight(t) * (-weight(t)).exp(), length)
            s_a1 += sign * first
            abs_a1 += first
            s2_a2 += self._integral(lambda t: t * t * weight(t) ** 2 * (-weight(t)).exp(), length)
        if not all(x.is_finite() for x in (q, phi, s_a1, s2_a2)):
            return None
        return SegmentSums(q, phi, s_a1, s2_a2, abs_a1)

    def level_measure(self, log_ratio: arb):
        """None: the level sets of a sum of two exponentials are not single intervals (ratio bounds only)."""
        return None
