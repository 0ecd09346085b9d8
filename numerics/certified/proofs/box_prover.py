"""Prove a predicate over a box of (a, b, θ) by interval evaluation and bisection.

Evidence level **certified** (docs/model.md §7). :func:`certify` evaluates a
registered predicate on a :class:`Box` with Arb ball arithmetic (the generated
functions of :mod:`stumpcheck.numerics.generated.population_arb`, which return balls that
contain the value for *every* point of the argument balls). Each box gets a
three-valued verdict:

* **true**: the predicate certainly holds at every point of the box (a leaf);
* **false**: it certainly fails at every point of the box (a counterexample
  region; the search stops and the certificate's status is ``"failed"``);
* **unknown**: the box is bisected along its (scaled) widest side.

If every leaf is true the status is ``"proved"``. A box that is unknown but
cannot be split further (every side below ``min_width`` relative to its size)
is checked once more at its exact midpoint: certainly false there → ``"failed"``
with that point as the failure box; otherwise ``"undecided"``. Running out of
``max_boxes`` also gives ``"undecided"``.

The predicates are in :mod:`stumpcheck.numerics.certified.proofs.predicates`, the boxes and their outward
decimal printing in :mod:`stumpcheck.numerics.certified.proofs.boxes` and the certificate in
:mod:`stumpcheck.numerics.certified.proofs.box_certificate`; this module does the bisection and re-exports them.

Every certificate identifies the code it ran: ``generated_code`` holds the
sha256 of numerics/generated/population_arb.py (the Arb module generated from
the derivation) and the stumpcheck version.

Box ends are exact decimal strings (or floats, taken exactly); a decimal end
that is not binary is rounded outward (lo down, hi up) at the working
precision, so the proved box contains the requested one. Leaf boxes and bounds
in the certificate are printed as decimals rounded outward to ``dps``
significant digits (box lo and bound lower down, box hi and bound upper up),
so each printed leaf box contains the evaluated one and each printed bound
interval contains the evaluated ball.
"""

from __future__ import annotations

import heapq
import itertools
import math
import time
from decimal import ROUND_CEILING, ROUND_FLOOR, Decimal

from flint import arb, arf, ctx

from stumpcheck.numerics.certified.enclosures.balls import ESTIMATORS, working_bits
from stumpcheck.numerics.certified.proofs.boxes import _DIMS, Box, _decimal, _outward
from stumpcheck.numerics.certified.proofs.box_certificate import (DEFAULT_MIN_WIDTH, STATUSES, Certificate, _versions,
                                            generated_code_identity)
from stumpcheck.numerics.certified.proofs.predicates import PREDICATES, _Counter, _hull, _validate_params
from stumpcheck.numerics.precision import InputError, validate_dps

__all__ = ["Box", "Certificate", "certify", "PREDICATES", "STATUSES"]

#: Default cap on θ-pieces per (a, b) box for the L-level predicates.
DEFAULT_THETA_PIECES = 256


def _positive_int(value, name: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise InputError(f"{name} must be a positive int, got {value!r}")
    return value


def _exact(ends: dict) -> dict:
    """Exact arb ends as (mantissa, exponent) pairs, which pickle (arb balls do not)."""
    return {d: tuple(tuple(int(v) for v in x.man_exp()) for x in pair) for d, pair in ends.items()}


def _evaluate(predicate: str, params: dict, estimator: str, bits: int, options: dict, items: list) -> list:
    """Task: (verdict, bounds, evaluations) of the predicate on each box of ``items`` (ends as by :func:`_exact`)."""
    spec = PREDICATES[predicate]
    out = []
    with ctx.workprec(bits):
        c_params = {k: arb(v) for k, v in params.items()}
        for exact in items:
            ends = {d: tuple(arb(arf(x)) for x in pair) for d, pair in exact.items()}
            counter = _Counter()
            verdict, bounds = spec.evaluate(ends, c_params, estimator, counter, options)
            out.append((verdict, bounds, counter.evaluations))
    return out


def certify(predicate: str, box: Box, *, params=None, dps: int = 30, max_boxes: int = 10_000,
            min_width: float = DEFAULT_MIN_WIDTH, estimator: str = "one-head",
            theta_pieces: int = DEFAULT_THETA_PIECES, workers: int = 1) -> Certificate:
    """Prove ``predicate`` (a name in :data:`PREDICATES`) on ``box`` by bisection; see the module doc.

    ``max_boxes`` caps the number of boxes examined, ``min_width`` is the
    relative width (of ``max(1, |mid|)``) below which a side is not split.
    The boxes are evaluated on :func:`stumpcheck.numerics.scheduling.for_workers` (``workers``): the
    command's scheduler (a Dask cluster), else this process or ``workers`` local processes; they are taken
    in the order of the search (widest first), every decision is taken here in that order and only the
    evaluations run elsewhere, ahead of their turn, so the certificate is the same wherever it ran.
    """
    from stumpcheck.numerics.scheduling import InProcess, Lookahead, for_workers

    if predicate not in PREDICATES:
        raise InputError(f"unknown predicate {predicate!r}; expected one of {', '.join(PREDICATES)}")
    spec = PREDICATES[predicate]
    if not isinstance(box, Box):
        raise InputError(f"box must be a Box, got {box!r}")
    if estimator not in ESTIMATORS:
        raise InputError(f"unknown estimator {estimator!r}; expected one of {', '.join(ESTIMATORS)}")
    params = _validate_params(spec, params)
    dps = validate_dps(dps)
    max_boxes = _positive_int(max_boxes, "max_boxes")
    theta_pieces = _positive_int(theta_pieces, "theta_pieces")
    workers = _positive_int(workers, "workers")
    try:
        min_width = float(min_width)
    except (TypeError, ValueError):
        raise InputError(f"min_width must be a positive number, got {min_width!r}") from None
    if not (math.isfinite(min_width) and min_width > 0):
        raise InputError(f"min_width must be a positive finite number, got {min_width!r}")
    if spec.full_theta and box.theta != (Decimal(0), Decimal(1)):
        raise InputError(f"predicate {predicate} integrates θ over [0, 1]; the theta interval must be [0, 1], "
                         f"got [{box.theta[0]}, {box.theta[1]}]")

    bits = working_bits(dps, float(max(abs(box.a[0]), abs(box.a[1]))), float(box.b[1]))
    digits = dps
    counter = _Counter()
    options = {"digits": digits, "theta_pieces": theta_pieces}
    started = time.perf_counter()
    certificate = Certificate(predicate=predicate, params=params, estimator=estimator, box=box.to_dict(),
                              status="undecided", dps=dps, prec_bits=bits, max_boxes=max_boxes,
                              min_width=min_width, versions=_versions(),
                              generated_code=generated_code_identity())

    with ctx.workprec(bits), for_workers(workers) as scheduler:
        ahead = not isinstance(scheduler, InProcess)
        results = Lookahead(scheduler, _evaluate, (predicate, params, estimator, bits, options), ahead=ahead)
        c_params = {k: arb(v) for k, v in params.items()}
        root = {d: _outward(*getattr(box, d)) for d in _DIMS}

        def describe(ends, bounds):
            out = {d: [_decimal(ends[d][0], digits, ROUND_FLOOR), _decimal(ends[d][1], digits, ROUND_CEILING)]
                   for d in _DIMS}
            out["bounds"] = bounds
            return out

        def scores(ends):
            """Side widths scaled by how much e moves along them (e depends on a, bθ and b(1 − θ))."""
            b_hi = float(ends["b"][1])
            widths = {d: float(ends[d][1] - ends[d][0]) for d in spec.dims}
            scale = {"a": 1.0, "b": 1.0, "theta": max(1.0, b_hi)}
            splittable = {}
            for d in spec.dims:
                size = max(1.0, abs(float(ends[d][0])), abs(float(ends[d][1])))
                if widths[d] > min_width * size:
                    splittable[d] = widths[d] * scale[d]
            return splittable

        order = itertools.count()
        pending = [(0.0, next(order), root)]  # widest (scaled) box first
        examined = 0

        def upcoming():  # the boxes to be taken next, in order (children pushed later may come first)
            return [(o, _exact(e)) for _, o, e in heapq.nsmallest(max_boxes - examined, pending)]

        while pending:
            if examined >= max_boxes:
                _, _, ends = pending[0]
                certificate.undecided_box = describe(ends, {})
                certificate.reason = f"max_boxes={max_boxes} reached with {len(pending)} boxes pending"
                break
            _, key, ends = heapq.heappop(pending)
            examined += 1
            verdict, bounds, evaluations = results.get(key, _exact(ends), upcoming)
            counter.evaluations += evaluations
            if verdict is True:
                certificate.leaves.append(describe(ends, bounds))
                continue
            if verdict is False:
                certificate.status = "failed"
                certificate.failure_box = describe(ends, bounds)
                certificate.reason = "the predicate is certainly false on the failure box"
                break
            split = scores(ends)
            if not split:
                # last chance: the exact midpoint, certainly false there is a counterexample
                point = {d: (arb(_hull(*ends[d]).mid()),) * 2 if d in spec.dims else ends[d] for d in _DIMS}
                point_verdict, point_bounds = spec.evaluate(point, c_params, estimator, counter, options)
                if point_verdict is False:
                    certificate.status = "failed"
                    certificate.failure_box = describe(point, point_bounds)
                    certificate.reason = "the predicate is certainly false at the midpoint of a minimal box"
                else:
                    certificate.undecided_box = describe(ends, bounds)
                    certificate.reason = "a box could not be split further (min_width)"
                break
            dim = max(split, key=split.get)
            lo, hi = ends[dim]
            middle = arb(((lo + hi) / 2).mid())
            for part in ((lo, middle), (middle, hi)):
                child = dict(ends)
                child[dim] = part
                width = max(scores(child).values(), default=0.0)
                heapq.heappush(pending, (-width, next(order), child))
        else:
            certificate.status = "proved"
        results.close()  # the evaluations sent ahead and not needed (the search stopped) are cancelled
        certificate.boxes = examined
    certificate.evaluations = counter.evaluations
    certificate.seconds = round(time.perf_counter() - started, 3)
    return certificate
