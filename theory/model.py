"""The one-head softmax-attention model at population level (docs/model.md §2, §5).

Scores are s(x) = a·y − b·x with y = 1{x ≥ θ}; the population estimator is
θ̂∞ = E[x e^{s(x)}] / E[e^{s(x)}] for x ~ Uniform[0, 1], and e(θ) = θ̂∞ − θ.

Two forms of every estimator are built here:

* the **closed form**, which SymPy integrates from the definition, segment by
  segment of the piecewise-linear score;
* the **stable form**, a softmax mixture over the same segments. A segment
  [x₀, x₁] on which s(x) = α + βx has log-mass
  ℓ = α + βx₀ + log(x₁ − x₀) + Λ(−β(x₁ − x₀)) and mean
  x₀ + (x₁ − x₀)·κ₁(−β(x₁ − x₀)) = x₁ − (x₁ − x₀)·κ₁(β(x₁ − x₀)),
  so e(θ) = Σ_j softmax_j(ℓ) · (mean_j − θ), each (mean_j − θ)
  taken from the end of the segment nearest θ so that its two terms never
  cancel. Softmax weights have non-positive exponents, so nothing overflows
  for any a ∈ ℝ, b > 0; Λ and κ₁ carry the small-rate cancellations into
  functions that are evaluated stably (:mod:`stumpcheck.theory.special`).

:func:`segment_log_mass` and :func:`segment_mean` are checked against SymPy's
own integrals in the tests, and the stable form against the closed form.

Estimators (docs/model.md §5): ``one-head``; ``reflected`` (the head on the
reflected context, scores s' = a(1 − y) − b(1 − x), values x); ``averaged``
((θ̂ + θ̂')/2); ``pooled`` (one softmax over both heads' scores).
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache

import sympy as sp

from stumpcheck.theory.special import SoftmaxWeight, TruncExpCumulant, TruncExpLogMass
from stumpcheck.theory.symbols import a, b, theta, x

__all__ = [
    "Segment",
    "ESTIMATORS",
    "segments",
    "segment_log_mass",
    "segment_mean_offset",
    "closed_form_estimate",
    "closed_form_error",
    "stable_error",
    "stable_estimate",
    "score",
]

ESTIMATORS = ("one-head", "reflected", "averaged", "pooled")


@dataclass(frozen=True)
class Segment:
    """An interval [lo, hi] of x on which the score is intercept + slope·x.

    ``side`` says where θ lies: ``"right"`` means the segment is [θ, 1] (θ at its
    left end), ``"left"`` that it is [0, θ] (θ at its right end).
    """

    lo: sp.Expr
    hi: sp.Expr
    intercept: sp.Expr
    slope: sp.Expr
    side: str


def score(head: str, label: sp.Expr, feature: sp.Expr = x) -> sp.Expr:
    """sᵢ = a·yᵢ − b·xᵢ for the one-head model, s'ᵢ = a(1 − yᵢ) − b(1 − xᵢ) reflected."""
    if head == "one-head":
        return a * label - b * feature
    if head == "reflected":
        return a * (1 - label) - b * (1 - feature)
    raise ValueError(f"unknown head {head!r}; expected 'one-head' or 'reflected'")


def _head_segments(head: str) -> list[Segment]:
    out = []
    for lo, hi, label, side in ((0, theta, 0, "left"), (theta, 1, 1, "right")):
        s = sp.expand(score(head, sp.Integer(label)))
        out.append(Segment(sp.sympify(lo), sp.sympify(hi), s.subs(x, 0), s.coeff(x), side))
    return out


def segments(estimator: str) -> list[Segment]:
    """The score segments whose softmax mixture is ``estimator``'s population estimate."""
    if estimator in ("one-head", "reflected"):
        return _head_segments(estimator)
    if estimator == "pooled":
        return _head_segments("one-head") + _head_segments("reflected")
    raise ValueError(f"estimator {estimator!r} is not a single softmax; expected one of {ESTIMATORS}")


def segment_log_mass(seg: Segment) -> sp.Expr:
    """ℓ = log ∫_{lo}^{hi} e^{α + βx} dx, expanded about the segment's peak end.

    β ≤ 0: ℓ = α + β·lo + log(hi − lo) + Λ(−β(hi − lo)) (peak at lo);
    β > 0: ℓ = α + β·hi + log(hi − lo) + Λ(β(hi − lo)) (peak at hi).
    Expanding about the other end would add and then cancel β(hi − lo), which
    costs |β|·eps in floating point.
    """
    length = seg.hi - seg.lo
    if seg.slope.is_positive:
        return seg.intercept + seg.slope * seg.hi + sp.log(length) + TruncExpLogMass(seg.slope * length)
    return seg.intercept + seg.slope * seg.lo + sp.log(length) + TruncExpLogMass(-seg.slope * length)


def segment_mean_offset(seg: Segment) -> sp.Expr:
    """mean_j − θ of x under e^{α + βx} on the segment, from the end nearest θ.

    Right segment [θ, hi]: (hi − θ)·κ₁(−β(hi − θ)) ≥ 0.
    Left segment [lo, θ]: −(θ − lo)·κ₁(β(θ − lo)) ≤ 0.
    """
    length = seg.hi - seg.lo
    if seg.side == "right":
        return length * TruncExpCumulant(1, -seg.slope * length)
    return -length * TruncExpCumulant(1, seg.slope * length)


def _mixture_error(segs: list[Segment]) -> sp.Expr:
    log_masses = [segment_log_mass(seg) for seg in segs]
    return sp.Add(*[SoftmaxWeight(j, *log_masses) * segment_mean_offset(seg) for j, seg in enumerate(segs)])


def stable_error(estimator: str = "one-head") -> sp.Expr:
    """e(θ) = θ̂∞(a, b; θ) − θ in the stable softmax-mixture form."""
    if estimator == "averaged":
        return (stable_error("one-head") + stable_error("reflected")) / 2
    return _mixture_error(segments(estimator))


def stable_estimate(estimator: str = "one-head") -> sp.Expr:
    """θ̂∞(a, b; θ) = θ + e(θ), stable form."""
    return theta + stable_error(estimator)


@cache
def _closed_moments(estimator: str) -> tuple[sp.Expr, sp.Expr]:
    """(E[e^s], E[x e^s]) integrated by SymPy from the score definition, x ~ U[0, 1] (once per estimator and
    process: SymPy expressions are immutable)."""
    if estimator == "pooled":
        z1, n1 = _closed_moments("one-head")
        z2, n2 = _closed_moments("reflected")
        return z1 + z2, n1 + n2
    zeroth = first = sp.S.Zero
    for lo, hi, label in ((0, theta, 0), (theta, 1, 1)):
        weight = sp.exp(score(estimator, sp.Integer(label)))
        zeroth += sp.integrate(weight, (x, lo, hi), conds="none")
        first += sp.integrate(x * weight, (x, lo, hi), conds="none")
    return zeroth, first


def closed_form_estimate(estimator: str = "one-head") -> sp.Expr:
    """θ̂∞ = E[x e^s]/E[e^s] in closed form (overflows and cancels: for checking only)."""
    if estimator == "averaged":
        return (closed_form_estimate("one-head") + closed_form_estimate("reflected")) / 2
    zeroth, first = _closed_moments(estimator)
    return first / zeroth


def closed_form_error(estimator: str = "one-head") -> sp.Expr:
    """e(θ) = θ̂∞ − θ in closed form."""
    return closed_form_estimate(estimator) - theta
