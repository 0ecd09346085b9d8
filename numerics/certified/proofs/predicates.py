"""The predicates the box prover proves, each a three-valued verdict on a box of (a, b, θ).

Each predicate evaluates the generated Arb functions (:mod:`stumpcheck.numerics.generated.population_arb`)
on the box's balls, which enclose the value at *every* point of the box, and returns True
(certainly holds on the whole box), False (certainly fails on the whole box) or None (unknown:
the prover bisects), with the bounds it found. ``PREDICATES``:

* ``error_abs_le_c_over_b`` (parameter ``c``): |e(θ)| ≤ c/b, checked as
  |b·e(θ)| ≤ c (b > 0): b·e is the certified margin ``Margin.from_sympy("b*e")``
  (:mod:`stumpcheck.numerics.certified.proofs.margins`), enclosed over the box by the tighter of its direct
  and mean-value forms;
* ``error_gradient_b_negative``: ∂e/∂b < 0 pointwise, ∂e/∂b the margin ``"e_b"`` likewise;
* ``dLdb_negative``: ∂L/∂b < 0 over an (a, b) box, where L = ∫₀¹ ½ e² dθ, so
  ∂L/∂b = ∫₀¹ e·∂e/∂b dθ. The θ-box must be [0, 1]. For each (a, b) box, [0, 1]
  is cut into θ-pieces Θ_k of width w_k and the integrand ball g_k ⊇
  {e·∂e/∂b : (a, b, θ) ∈ A×B×Θ_k} is evaluated, so
  Σ w_k·lower(g_k) ≤ ∂L/∂b ≤ Σ w_k·upper(g_k) for every (a, b) in the box
  (rigorous, the w_k are exact and the sums are done in ball arithmetic).
  The θ-pieces are refined (largest w_k·rad(g_k) first) up to ``theta_pieces``,
  and the K + 1 cuts 0 = t₀ < t₁ < … < t_K = 1 are recorded as exact decimals
  in ``bounds["theta_partition"]``.
"""

from __future__ import annotations

import functools
import heapq
import itertools
import math
from dataclasses import dataclass

from flint import arb, ctx

from stumpcheck.numerics.certified.proofs.boxes import _DIMS, _arb_fraction, _ball_bounds, _exact_decimal, _parse_end
from stumpcheck.numerics.generated import population_arb as gen_arb
from stumpcheck.numerics.precision import InputError

__all__ = ["PREDICATES"]

class _Counter:
    def __init__(self):
        self.evaluations = 0


def _function(kind: str, estimator: str):
    return getattr(gen_arb, f"{kind}_{estimator.replace('-', '_')}")


def _hull(lo: arb, hi: arb) -> arb:
    return lo.union(hi)


@functools.cache
def _margin(expr: str, estimator: str):
    from stumpcheck.numerics.certified.proofs.margins import Margin

    return Margin.from_sympy(expr, coordinates="abtheta", estimator=estimator)


def _enclose(expr: str, ends, estimator: str) -> arb:
    """A ball containing the margin ``expr`` on the box with exact binary ``ends``."""
    box = {d: (_arb_fraction(ends[d][0]), _arb_fraction(ends[d][1])) for d in _DIMS}
    ball, _ = _margin(expr, estimator).enclose(box, ctx.prec)
    return ball


def _eval_error_abs(ends, params, estimator, counter, options):
    """|b·e| ≤ c on the box: certain if upper|B·E| ≤ c, certainly false if B·E > c or < −c."""
    c = params["c"]
    counter.evaluations += 1
    q = _enclose("b*e", ends, estimator)
    bounds = {"b*e": _ball_bounds(q, options["digits"])}
    if not q.is_finite():
        return None, bounds
    if q.abs_upper() <= c:
        return True, bounds
    if q > c or q < -c:
        return False, bounds
    return None, bounds


def _eval_gradient_b(ends, params, estimator, counter, options):
    counter.evaluations += 1
    d = _enclose("e_b", ends, estimator)
    bounds = {"de/db": _ball_bounds(d, options["digits"])}
    if not d.is_finite():
        return None, bounds
    if d < 0:
        return True, bounds
    if d >= 0:
        return False, bounds
    return None, bounds


def _eval_dldb(ends, params, estimator, counter, options):
    """Bound ∂L/∂b = ∫₀¹ e·∂e/∂b dθ over the (a, b) box by Σ w_k·g_k on θ-pieces (refined adaptively)."""
    a, b = _hull(*ends["a"]), _hull(*ends["b"])
    error, gradient = _function("error", estimator), _function("error_gradient", estimator)
    order = itertools.count()

    def piece(lo, hi):
        t = _hull(lo, hi)
        counter.evaluations += 1
        g = (error(a, b, t) * gradient(a, b, t)[1]).real
        w = hi - lo  # exact (binary ends, Arb adds the rounding to the radius)
        contribution = w * g
        key = float(contribution.rad()) if contribution.is_finite() else math.inf
        return (-key, next(order), lo, hi, contribution)

    lo0, hi0 = ends["theta"]
    pieces = options["theta_pieces"]
    start = min(16, pieces)
    cuts = [lo0 + (hi0 - lo0) * k / start for k in range(start + 1)]
    cuts = [lo0] + [arb(x.mid()) for x in cuts[1:-1]] + [hi0]
    heap = [piece(cuts[k], cuts[k + 1]) for k in range(start)]
    heapq.heapify(heap)
    while True:
        total = arb(0)
        for item in heap:
            total += item[4]
        verdict = None
        if total.is_finite():
            if total < 0:
                verdict = True
            elif total >= 0:
                verdict = False
        if verdict is not None or len(heap) >= pieces:
            break
        _, _, lo, hi, _ = heapq.heappop(heap)
        middle = arb(((lo + hi) / 2).mid())
        heapq.heappush(heap, piece(lo, middle))
        heapq.heappush(heap, piece(middle, hi))
    # the pieces are adjacent with exact dyadic ends: their K + 1 distinct ends tile [lo0, hi0]
    cuts = sorted({_arb_fraction(item[2]) for item in heap} | {_arb_fraction(item[3]) for item in heap})
    return verdict, {"dL/db": _ball_bounds(total, options["digits"]), "theta_pieces": len(heap),
                     "theta_partition": [_exact_decimal(c) for c in cuts]}


@dataclass(frozen=True)
class _Predicate:
    name: str
    description: str
    evaluate: object
    params: tuple
    dims: tuple  # the dimensions that are bisected
    full_theta: bool = False


PREDICATES = {p.name: p for p in (
    _Predicate("error_abs_le_c_over_b", "|e(θ)| ≤ c/b at every point of the box", _eval_error_abs, ("c",),
               ("a", "b", "theta")),
    _Predicate("error_gradient_b_negative", "∂e/∂b < 0 at every point of the box", _eval_gradient_b, (),
               ("a", "b", "theta")),
    _Predicate("dLdb_negative", "∂L/∂b < 0 at every (a, b) of the box (L = ∫₀¹ ½ e² dθ)", _eval_dldb, (),
               ("a", "b"), full_theta=True),
)}


def _validate_params(predicate: _Predicate, params) -> dict:
    params = dict(params or {})
    unknown = set(params) - set(predicate.params)
    if unknown:
        raise InputError(f"predicate {predicate.name} takes no parameter {', '.join(sorted(unknown))}"
                         + (f" (it takes {', '.join(predicate.params)})" if predicate.params else ""))
    missing = [p for p in predicate.params if p not in params]
    if missing:
        raise InputError(f"predicate {predicate.name} needs the parameter {', '.join(missing)}")
    return {k: str(_parse_end(v, f"parameter {k}")) for k, v in params.items()}
