"""Prove a certified margin m ≥ 0 (or > 0) over a whole domain by interval evaluation and bisection.

Evidence level **certified** (docs/model.md §7). :func:`prove` encloses the margin on a box
(:meth:`stumpcheck.numerics.certified.proofs.margins.Margin.enclose`: a ball containing m at *every* point) and

* keeps the box as a proved **leaf** if the ball's lower end is ≥ 0 (> 0 when ``strict``);
* stops with status ``"failed"`` if the upper end is < 0 (≤ 0 when strict): m is certainly
  negative on the whole box, a counterexample region (its ``failure`` leaf);
* else halves the box at the exact midpoint (a Fraction: decimal ends stay finite decimals) of
  the variable along which the enclosure moves most (|∂m/∂x|·width when the gradient is known,
  relative width otherwise).

A box that is still undecided at ``max_depth`` or below ``min_width`` (relative) is evaluated at
its centre: certainly negative there → ``"failed"`` (the centre is the failure box); otherwise it
is an **undecided** leaf and the search goes on elsewhere. Running out of ``max_boxes`` leaves the
pending boxes undecided. The status is ``"proved"`` only if every leaf has lower ≥ 0 (> 0 strict);
the leaves always tile the domain exactly (proved, undecided and, on failure, the rest pending).
Leaf bounds are printed as decimals rounded outward (lower down, upper up) to ``dps`` digits.

Arithmetic (``arithmetic="fast"``, the default): a box of a θ-integral margin with a Taylor form is enclosed
first with float64 θ-integrals (:mod:`stumpcheck.numerics.certified.proofs.margin_taylor_fast`); Arb encloses
the boxes where that gives no ball (*fallbacks*, counted), confirms a refutation, and has the last word on a
box that is not split. Each leaf then records which arithmetic proved it (``"fast"`` or ``"arb"``);
``arithmetic="arb"`` proves in Arb alone and records nothing, as earlier versions did.
"""

from __future__ import annotations

import heapq
import itertools
import math
import time
from dataclasses import dataclass, field
from decimal import ROUND_CEILING, ROUND_FLOOR, Decimal, localcontext
from fractions import Fraction

from flint import arb

from stumpcheck.numerics.certified.enclosures.balls import working_bits
from stumpcheck.numerics.certified.proofs.domains import Domain, geometric_split
from stumpcheck.numerics.certified.proofs.margins import Margin
from stumpcheck.numerics.precision import InputError, validate_dps

__all__ = ["Leaf", "Proof", "prove"]


@dataclass(frozen=True)
class Leaf:
    """A box of the tiling with its enclosure [lower, upper] (outward decimals), depth and form."""

    box: dict
    lower: str
    upper: str
    depth: int
    form: str
    #: "fast" (float64 θ-integrals) or "arb"; None in a proof made in Arb alone (nothing recorded)
    arithmetic: str | None = None

    def to_json(self) -> dict:
        from stumpcheck.numerics.certified.proofs.domains import exact_decimal

        out = {"box": {n: [exact_decimal(lo), exact_decimal(hi)] for n, (lo, hi) in sorted(self.box.items())},
               "lower": self.lower, "upper": self.upper, "depth": self.depth, "form": self.form}
        if self.arithmetic is not None:
            out["arithmetic"] = self.arithmetic
        return out


@dataclass
class Proof:
    """The outcome of :func:`prove` (see the module doc)."""

    status: str
    leaves: list = field(default_factory=list)
    failure: Leaf | None = None
    undecided: list = field(default_factory=list)
    undecided_fraction: float = 0.0
    boxes: int = 0
    max_depth_reached: int = 0
    seconds: float = 0.0
    cpu_seconds: float = 0.0
    prec_bits: int = 0
    dps: int = 30
    strict: bool = False
    notes: list = field(default_factory=list)
    #: "fast" (the float64 layer first, Arb where it gives no ball) or "arb"
    arithmetic: str = "arb"
    #: boxes the fast layer was asked for and gave no finite ball: enclosed in Arb instead
    fallbacks: int = 0

    @property
    def proved(self) -> bool:
        return self.status == "proved"

    def summary(self) -> dict:
        out = {"status": self.status, "boxes": self.boxes, "leaves": len(self.leaves),
               "max_depth": self.max_depth_reached, "undecided_fraction": self.undecided_fraction,
               "seconds": self.seconds, "cpu_seconds": self.cpu_seconds, "prec_bits": self.prec_bits}
        if self.arithmetic == "fast":
            out["fast_leaves"] = sum(1 for leaf in self.leaves if leaf.arithmetic == "fast")
            out["fallbacks"] = self.fallbacks
        return out


def _decimal(x, digits: int, rounding) -> str:
    if not x.is_finite():
        return "-inf" if rounding == ROUND_FLOOR else "inf"
    man, exp = x.man_exp()
    man, exp = int(man), int(exp)
    value = Fraction(man * 2**exp) if exp >= 0 else Fraction(man, 2**-exp)
    with localcontext() as context:
        context.prec, context.rounding = digits, rounding
        context.Emax, context.Emin = 10**9, -10**9
        out = Decimal(value.numerator) / Decimal(value.denominator)
    return str(out)


def _bounds(ball: arb, digits: int) -> tuple[str, str]:
    if not ball.is_finite():
        return "-inf", "inf"
    return _decimal(arb(ball.lower()), digits, ROUND_FLOOR), _decimal(arb(ball.upper()), digits, ROUND_CEILING)


def _positive_int(value, name: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise InputError(f"{name} must be a positive int, got {value!r}")
    return value


def _split_variable(box: dict, gradient, min_width: float):
    scores = {}
    for n, (lo, hi) in box.items():
        width = hi - lo
        size = max(1.0, abs(float(lo)), abs(float(hi)))
        if width <= 0 or float(width) <= min_width * size:
            continue
        if gradient is not None and n in gradient and gradient[n].is_finite():
            scores[n] = float(gradient[n].abs_upper()) * float(width) + 1e-300 * float(width) / size
        else:
            scores[n] = float(width) / size
    if not scores:
        return None
    if gradient is not None and all(s < 1e-250 for s in scores.values()):
        return max(scores, key=lambda n: float(box[n][1] - box[n][0]) / max(1.0, abs(float(box[n][1]))))
    return max(scores, key=scores.get)


def _evaluate(margin, context: dict, items: list) -> list:
    """Task: the outcome of each (box, depth) of ``items`` (see :func:`prove`).

    An outcome is ``(ok, bad, lower, upper, form, var, point, arithmetic, fallback)``: the box's enclosure
    certainly ≥ 0 (> 0 strict) or certainly < 0 (≤ 0 strict), its outward decimal ends and form; when
    neither, the variable to halve (:func:`_split_variable`, None at ``max_depth``), and when that is None
    too, the centre's ``(bad, lower, upper, form)``; then the arithmetic of the enclosure ("fast" or "arb")
    and whether the fast layer was asked and gave no ball (a fallback). With ``context["fast"]`` the fast
    ball is tried first: it makes a leaf when it decides the box, steers the split when it does not, and Arb
    encloses the box when it gives no ball, refutes (Arb confirms), or the box is not split (Arb's last
    word). ``margin`` is a :class:`Margin` or its JSON (rebuilt exactly)."""
    if not isinstance(margin, Margin):
        margin = Margin.from_json(margin)
    bits, dps, strict = context["prec_bits"], context["dps"], context["strict"]

    def verdicts(ball):
        finite = ball.is_finite()
        return (finite and bool(ball > 0 if strict else ball >= 0), finite and bool(ball <= 0 if strict else ball < 0))

    out = []
    for box, depth in items:
        var = point = None
        splittable = depth < context["max_depth"]
        fast = margin.enclose_fast(box, bits) if context.get("fast") else None
        fallback = bool(context.get("fast")) and fast is None
        if fast is not None:
            ok, bad = verdicts(fast[0])
            if ok:
                out.append((True, False, *_bounds(fast[0], dps), fast[1], None, None, "fast", False))
                continue
            if not bad and splittable:
                var = _split_variable(box, None, context["min_width"])
                if var is not None:
                    out.append((False, False, *_bounds(fast[0], dps), fast[1], var, None, "fast", False))
                    continue
        ball, form, gradient = margin.enclose_with_gradient(box, bits)
        ok, bad = verdicts(ball)
        if not (ok or bad):
            var = _split_variable(box, gradient, context["min_width"]) if splittable else None
            if var is None:
                centre = {n: ((lo + hi) / 2,) * 2 for n, (lo, hi) in box.items()}
                point_ball, point_form, _ = margin.enclose_with_gradient(centre, bits)
                point = (verdicts(point_ball)[1], *_bounds(point_ball, dps), point_form)
        out.append((ok, bad, *_bounds(ball, dps), form, var, point, "arb", fallback))
    return out


def prove(margin: Margin, domain: Domain, *, strict: bool = False, dps: int = 30, max_boxes: int = 20_000,
          max_depth: int = 40, min_width: float = 1e-12, pieces=None, b_ratio: float | None = 2.0,
          prec_bits: int | None = None, workers: int = 1, arithmetic: str = "fast") -> Proof:
    """Prove margin ≥ 0 (``strict``: > 0) on ``domain`` by bisection; see the module doc.

    ``pieces``: sub-domains tiling ``domain`` to start from, each at depth 0; by default a b range
    longer than a factor ``b_ratio`` is first cut geometrically (:func:`geometric_split`, b_lo·ratio^k
    rounded to 4 digits), so that bisection starts from pieces of equal relative width.
    ``prec_bits`` overrides the working precision (default from ``dps`` and the domain's size).

    Where the boxes are enclosed: :func:`stumpcheck.numerics.scheduling.for_workers` (``workers``): the
    scheduler a command chose (a Dask cluster), else this process (``workers`` = 1) or ``workers`` local
    processes. Boxes are taken in the order of the search (breadth first: by depth, then as they were
    made); every verdict, split and the stop at ``max_boxes`` or at a failure is decided here in that
    order, and only the enclosures run elsewhere, ahead of their turn (:func:`_evaluate`, on the margin
    rebuilt from its JSON: SymPy margins; a Python margin is enclosed in this process). So the proof, and
    its certificate, is the same wherever it ran.

    ``arithmetic`` "fast" encloses each box of a Taylor-form θ-integral margin first by
    :meth:`~stumpcheck.numerics.certified.proofs.margins.Margin.enclose_fast` (float64 θ-integrals): a ball
    that decides the box makes it a leaf (recorded ``arithmetic: "fast"``), an undecided one splits it as
    an Arb ball would, and no ball (or a ball that refutes: confirmed in Arb) sends the box to Arb (a
    *fallback*, counted); "arb" encloses every box in Arb (nothing recorded per leaf, as before).
    """
    from stumpcheck.numerics.scheduling import InProcess, Lookahead, for_workers

    if arithmetic not in ("fast", "arb"):
        raise InputError(f"arithmetic must be 'fast' or 'arb', got {arithmetic!r}")
    if not isinstance(margin, Margin):
        raise InputError(f"margin must be a Margin, got {margin!r}")
    if not isinstance(domain, Domain):
        raise InputError(f"domain must be a Domain, got {domain!r}")
    dps = validate_dps(dps)
    max_boxes, max_depth = _positive_int(max_boxes, "max_boxes"), _positive_int(max_depth, "max_depth")
    if pieces is None:
        b_lo, b_hi = domain.variables["b"]
        long_range = b_ratio is not None and b_hi > b_lo * Fraction(b_ratio)
        pieces = geometric_split(domain, "b", b_ratio) if long_range else [domain]
    starts = list(pieces)
    if any(not isinstance(p, Domain) or p.coordinates != domain.coordinates or not domain.contains(p.box)
           for p in starts):
        raise InputError("pieces must be sub-domains of the domain, in its coordinates")
    if sum((p.volume() for p in starts), Fraction(0)) != domain.volume():
        raise InputError("pieces must tile the domain (their volumes do not add up to its volume)")
    magnitude = max(float(max(abs(lo), abs(hi))) for lo, hi in domain.variables.values())
    bits = prec_bits or working_bits(dps, magnitude, 2 * float(domain.variables["b"][1]))
    workers = _positive_int(workers, "workers")
    use_fast = arithmetic == "fast" and margin.theta_integral and margin.taylor_order > 1
    proof = Proof(status="undecided", prec_bits=bits, dps=dps, strict=strict,
                  arithmetic="fast" if use_fast else "arb")
    started, cpu = time.perf_counter(), time.process_time()
    order = itertools.count()
    pending = [(0, next(order), p.box, 0) for p in starts]
    total_volume = domain.volume()
    context = {"prec_bits": bits, "dps": dps, "strict": strict, "max_depth": max_depth, "min_width": min_width,
               "fast": use_fast}
    with for_workers(workers) as scheduler:
        # a SymPy margin is rebuilt exactly from its JSON elsewhere; a Python margin is enclosed here
        ahead = not isinstance(scheduler, InProcess) and "sympy_srepr" in margin.source
        outcomes = Lookahead(scheduler, _evaluate, (margin.to_json() if ahead else margin, context), ahead=ahead)

        def upcoming():  # the boxes to be taken next, in order: breadth first, at most max_boxes in all
            return [(o, (b, d)) for _, o, b, d in heapq.nsmallest(max_boxes - proof.boxes, pending)]

        try:
            while pending:
                if proof.boxes >= max_boxes:
                    proof.notes.append(f"max_boxes={max_boxes} reached with {len(pending)} boxes pending")
                    break
                _, key, box, depth = heapq.heappop(pending)
                proof.boxes += 1
                proof.max_depth_reached = max(proof.max_depth_reached, depth)
                ok, bad, lower, upper, form, var, point, arithmetic, fallback = outcomes.get(key, (box, depth), upcoming)
                proof.fallbacks += fallback
                recorded = arithmetic if use_fast else None
                here = Leaf(box=dict(box), lower=lower, upper=upper, depth=depth, form=form, arithmetic=recorded)
                if ok:
                    proof.leaves.append(here)
                    continue
                if bad:
                    proof.failure = here
                    proof.leaves.append(proof.failure)
                    break
                if var is None:
                    proof.leaves.append(here)
                    proof.undecided.append(here)
                    if point[0]:  # certainly negative at the centre: a counterexample
                        centre = {n: ((lo + hi) / 2,) * 2 for n, (lo, hi) in box.items()}
                        proof.failure = Leaf(box=centre, lower=point[1], upper=point[2], depth=depth, form=point[3],
                                             arithmetic=recorded)
                        break
                    continue
                lo, hi = box[var]
                middle = (lo + hi) / 2
                for part in ((lo, middle), (middle, hi)):
                    heapq.heappush(pending, (depth + 1, next(order), {**box, var: part}, depth + 1))
        finally:
            outcomes.close()  # the enclosures sent ahead and not needed (after a failure) are cancelled
    # whatever is still pending is undecided (not evaluated to a verdict)
    for _, _, box, depth in pending:
        undecided = Leaf(box=dict(box), lower="-inf", upper="inf", depth=depth, form="pending")
        proof.leaves.append(undecided)
        proof.undecided.append(undecided)
    if proof.failure is not None:
        proof.status = "failed"
    elif not proof.undecided:
        proof.status = "proved"
    volume = sum((_volume(u.box) for u in proof.undecided), Fraction(0))
    proof.undecided_fraction = float(volume / total_volume) if total_volume else float(bool(proof.undecided))
    proof.seconds = round(time.perf_counter() - started, 3)
    proof.cpu_seconds = round(time.process_time() - cpu + outcomes.cpu_seconds, 3)  # this process's and the tasks'
    return proof


def _volume(box: dict) -> Fraction:
    out = Fraction(1)
    for lo, hi in box.values():
        if hi > lo:
            out *= hi - lo
    return out
