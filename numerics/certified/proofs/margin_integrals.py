"""θ-integrals of L, ∇L, ∇²L enclosed over a whole (a, b) box, and at a point, for certified margins.

Over a box A × B (balls a, b): [0, 1] is cut into pieces Θ_k = [t_k, t_{k+1}] with exact dyadic
ends; on each piece the generated jet (e, ∂e/∂a, ∂e/∂b, ∂²e/∂a², ∂²e/∂a∂b, ∂²e/∂b²)
(numerics/generated/population_arb.py) is evaluated on A × B × Θ_k, which encloses it at every
point, and the integrands

    L: ½e²,  L_a: e·e_a,  L_b: e·e_b,  L_aa: e_a² + e·e_aa,  L_ab: e_a·e_b + e·e_ab,  L_bb: e_b² + e·e_bb

become balls q_k; then Q(a, b) = Σ_k ∫_{Θ_k} q dθ ∈ Σ_k w_k·q_k for every (a, b) of the box
(w_k = t_{k+1} − t_k exact, sums in ball arithmetic). The piece with the largest w_k·rad(q_k)
(relative to |Q|) is halved until there are ``max_pieces``.

At a point (the mean-value form's centre) the integrals are the rigorous ``acb.integral``
enclosures of :mod:`stumpcheck.numerics.certified.enclosures.theta_integrals`.
"""

from __future__ import annotations

import heapq
import itertools
import math

from flint import arb

from stumpcheck.numerics.certified.enclosures.balls import EnclosureTooWide, _tag, mpf_to_arb
from stumpcheck.numerics.certified.enclosures.theta_integrals import certified_loss, certified_loss_gradient, certified_loss_hessian
from stumpcheck.numerics.generated import population_arb as gen_arb
from stumpcheck.numerics.precision import InputError

__all__ = ["integrals_over_box", "center_integrals", "INTEGRAL_NAMES"]

INTEGRAL_NAMES = ("L", "L_a", "L_b", "L_aa", "L_ab", "L_bb")
_START_PIECES = 16


def _integrands(jet, names):
    e, ea, eb, eaa, eab, ebb = (x.real for x in jet)
    values = {}
    for name in names:
        if name == "L":
            values[name] = e * e / 2
        elif name == "L_a":
            values[name] = e * ea
        elif name == "L_b":
            values[name] = e * eb
        elif name == "L_aa":
            values[name] = ea * ea + e * eaa
        elif name == "L_ab":
            values[name] = ea * eb + e * eab
        elif name == "L_bb":
            values[name] = eb * eb + e * ebb
        else:
            raise InputError(f"unknown θ-integral {name!r}; expected one of {', '.join(INTEGRAL_NAMES)}")
    return values


def integrals_over_box(a: arb, b: arb, estimator: str, names, max_pieces: int) -> dict:
    """{name: ball} containing ∫₀¹ q_name dθ for every (a, b) in the balls a × b."""
    names = tuple(names)
    jet_function = getattr(gen_arb, f"error_jet_{_tag(estimator)}")
    order = itertools.count()
    scales = {n: 1.0 for n in names}

    def piece(lo: arb, hi: arb):
        values = _integrands(jet_function(a, b, lo.union(hi)), names)
        width = hi - lo  # exact: dyadic ends
        contributions = {n: width * q for n, q in values.items()}
        worst = 0.0
        for n, c in contributions.items():
            radius = float(c.rad()) if c.is_finite() else math.inf
            worst = max(worst, radius / scales[n])
        return (-worst, next(order), lo, hi, contributions)

    cuts = [arb(k) / _START_PIECES for k in range(_START_PIECES + 1)]
    heap = [piece(cuts[k], cuts[k + 1]) for k in range(_START_PIECES)]
    totals = _sums(heap, names)
    for n in names:
        if totals[n].is_finite() and abs(float(totals[n].mid())) > 0:
            scales[n] = abs(float(totals[n].mid()))
    heap = [piece(item[2], item[3]) for item in heap]  # re-scored with the scales
    heapq.heapify(heap)
    while len(heap) < max_pieces:
        _, _, lo, hi, _ = heapq.heappop(heap)
        middle = (lo + hi) / 2  # exact: dyadic
        heapq.heappush(heap, piece(lo, middle))
        heapq.heappush(heap, piece(middle, hi))
    return _sums(heap, names)


def _sums(heap, names) -> dict:
    totals = {n: arb(0) for n in names}
    for item in heap:
        for n in names:
            totals[n] += item[4][n]
    return totals


def center_integrals(a: arb, b: arb, estimator: str, names, prec_bits: int) -> dict | None:
    """{name: ball} of the integrals at the point (a, b) (tiny balls) by ``acb.integral``; None if that fails."""
    dps = max(15, min(10_000, int(prec_bits / 3.33) - 8))
    wanted = set(names)
    out = {}
    try:
        if "L" in wanted:
            out["L"] = _ball(certified_loss(a, b, estimator=estimator, dps=dps))
        if wanted & {"L_a", "L_b"}:
            out["L_a"], out["L_b"] = (_ball(x) for x in certified_loss_gradient(a, b, estimator=estimator, dps=dps))
        if wanted & {"L_aa", "L_ab", "L_bb"}:
            out["L_aa"], out["L_ab"], out["L_bb"] = (
                _ball(x) for x in certified_loss_hessian(a, b, estimator=estimator, dps=dps))
    except (EnclosureTooWide, InputError, ArithmeticError):
        return None
    if not all(x.is_finite() for x in out.values()):
        return None
    return out


def _ball(enclosure) -> arb:
    if not enclosure.is_finite:
        return arb.nan()
    return mpf_to_arb(enclosure.lower).union(mpf_to_arb(enclosure.upper))
