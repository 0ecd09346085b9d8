"""C9 certified on a corpus: constant-step GD decreases L̂ at every step, from λ_max(∇²L̂) ≤ M enclosed over boxes that hold the run's segments.

**The lemma used** (descent lemma, second-order Taylor form). If L̂ is C² on the segment [z, z + d] and
λ_max(∇²L̂(ξ)) ≤ M_k at every ξ of it, then

    L̂(z + d) ≤ L̂(z) + ∇L̂(z)·d + (M_k/2)‖d‖²,

since L̂(z + d) − L̂(z) − ∇L̂(z)·d = ∫₀¹ (1 − s) dᵀ∇²L̂(z + sd) d ds and dᵀHd ≤ λ_max(H)‖d‖². With the exact step
d = −η∇L̂(z) this is L̂(z − η∇L̂) ≤ L̂(z) − η(1 − ηM_k/2)‖∇L̂(z)‖²: a strict decrease when ∇L̂(z) ≠ 0 and
η < 2/M_k. Only λ_max matters (negative curvature helps), so M_k may be below the spectral norm.

**The set.** Step k's set is a union of boxes that holds both the computed segment [z_k, z_{k+1}] (the
float iterates the run recorded, taken exactly) and the exact step's segment [z_k, z_k − η∇L̂(z_k)]: with
[g_k] ∋ ∇L̂(z_k) (a rigorous point enclosure) and the interval [D_k] ∋ z_{k+1} − z_k, −η[g_k], the piece
s ∈ [s_j, s_{j+1}] of either segment lies in z_k + [s_j, s_{j+1}]·[D_k] (interval arithmetic, outward), so
the p pieces' boxes cover both (:func:`segment_boxes`). Other sources of the set can feed the same proof:
boxes per step that hold both segments (``certify_descent(..., step_boxes=)``), or enclosures Z_k of the exact
GD iterates, e.g. a certified training run's (:func:`certify_descent_from_enclosures`: step k's segment lies in
Z_k + s·(−η[∇L̂(Z_k)]), s ∈ [0, 1], with the gradient enclosed over Z_k).

**The enclosure.** Over a box the fast layer encloses ∂²L̂/∂a², ∂²L̂/∂a∂b, ∂²L̂/∂b²
(:func:`~stumpcheck.numerics.certified.fast.corpus.corpus_enclosure` with ``hessian=True``; one head). For
every H in the box and unit d, dᵀHd ≤ p·d₁² + 2h|d₁d₂| + q·d₂² with p, q the upper ends of the diagonal and
h = max|∂²L̂/∂a∂b|, so λ_max(H) ≤ (p + q)/2 + √(((p − q)/2)² + h²), computed in Arb and rounded up.
The largest bound is refined where it decides M: the step with the largest M_k has its segment cut in twice
as many pieces, until that no longer lowers it by 1 % (or 64 pieces).

**What is proved.** M = max_k M_k, the bound 2/M (rounded down) against η; for each step the decrease of
the exact step (η(1 − ηM_k/2)‖[g_k]‖² > 0) and of the computed iterates (the upper end of
[g_k]·d_k + (M_k/2)‖d_k‖² < 0, d_k = z_{k+1} − z_k exactly). It rests on the fast layer's assumptions
(:data:`~stumpcheck.numerics.certified.fast.corpus.ASSUMPTIONS`: IEEE binary64, libm exp within 2 ulp), which
:func:`certify_descent` returns with the result.
"""

from __future__ import annotations

import heapq
import math
import time
from dataclasses import dataclass, field

import numpy as np
from flint import arb, ctx

from stumpcheck.numerics.precision import InputError

__all__ = ["DescentProof", "curvature_bounds", "lambda_max_upper", "segment_boxes", "certify_descent",
           "certify_descent_from_enclosures", "training_iterate_boxes", "TRAINING_FORMAT"]

#: the certified training run's certificate (``train --certify``, docs/training_certificate.md)
TRAINING_FORMAT = "stumpcheck-training-certificate/1"

_PREC = 128
_MAX_PIECES = 64
_GAIN = 0.01


def _float_down(x: arb) -> float:
    value = float(arb(x.lower()).mid())
    return value if arb(value) <= arb(x.lower()) else math.nextafter(value, -math.inf)


def _float_up(x: arb) -> float:
    value = float(arb(x.upper()).mid())
    return value if arb(value) >= arb(x.upper()) else math.nextafter(value, math.inf)


def _interval(lo: float, hi: float) -> arb:
    return arb(lo).union(arb(hi))


def lambda_max_upper(hessian) -> arb:
    """An upper bound (an exact Arb number) of λ_max(H) over every symmetric H with entries in the enclosure
    ``hessian`` = [[∂aa lo, hi], [∂ab lo, hi], [∂bb lo, hi]] (module doc)."""
    with ctx.workprec(_PREC):
        p, q = arb(float(hessian[0][1])), arb(float(hessian[2][1]))
        h = max(abs(float(hessian[1][0])), abs(float(hessian[1][1])))
        value = (p + q) / 2 + (((p - q) / 2) ** 2 + arb(h) ** 2).sqrt()
        return arb(value.upper())


def curvature_bounds(x, theta, boxes, *, threads: int | None = None) -> list:
    """Upper bounds (exact Arb numbers) of λ_max(∇²L̂) over each box ((a_lo, a_hi), (b_lo, b_hi)); +∞ for a box that
    reaches b <= 0 (outside the model's regime, where the fast layer does not enclose)."""
    from stumpcheck.numerics.certified.fast.corpus import corpus_enclosure

    out = []
    for box in boxes:
        (alo, ahi), (blo, bhi) = box
        if not blo > 0:  # the box leaves the model's regime b > 0: no bound (the proof fails there)
            out.append(arb("inf"))
            continue
        enclosure = corpus_enclosure(x, theta, (float(alo), float(ahi)), (float(blo), float(bhi)), hessian=True,
                                     threads=threads)
        if not np.all(np.isfinite(enclosure)):
            raise ArithmeticError(f"the Hessian enclosure over the box {box} is not finite")
        out.append(lambda_max_upper(enclosure[3:]))
    return out


def segment_boxes(a0, b0, direction, pieces: int) -> list:
    """``pieces`` boxes covering z₀ + s·D for every z₀ = (a0, b0) (floats, or pairs (lo, hi) for a box of starts),
    s ∈ [0, 1] and D in the interval pair ``direction`` ((Da_lo, Da_hi), (Db_lo, Db_hi)), as floats rounded
    outward."""
    with ctx.workprec(_PREC):
        da, db = (_interval(*pair) for pair in direction)
        start_a, start_b = (_interval(*z) if isinstance(z, (tuple, list)) else arb(float(z)) for z in (a0, b0))
        out = []
        for j in range(pieces):
            s = _interval(j / pieces, (j + 1) / pieces)  # j/pieces are exact doubles for pieces a power of two
            a, b = start_a + s * da, start_b + s * db
            out.append(((_float_down(a), _float_up(a)), (_float_down(b), _float_up(b))))
        return out


@dataclass
class DescentProof:
    """The certified C9 on one run (module doc): ``M`` = max_k M_k, ``bound`` = 2/M rounded down, ``eta_below_bound``
    (η < 2/M exactly), per-step counts, and what it rests on."""

    eta: float
    M: float
    bound: float
    eta_below_bound: bool
    steps: int
    exact_step_decreases: int
    iterate_decreases: int | None
    boxes: int
    worst_step: int
    smallest_decrease: float
    pieces_at_worst: int
    seconds: float
    assumptions: dict = field(default_factory=dict)
    box_source: str = "segments of the recorded iterates and of the exact steps"
    #: per step: the number of segment pieces and M_k (an upper bound of λ_max over them); not in to_dict
    pieces: list = field(default_factory=list, repr=False)
    curvature: list = field(default_factory=list, repr=False)

    @property
    def proved(self) -> bool:
        iterates = self.iterate_decreases is None or self.iterate_decreases == self.steps
        return self.eta_below_bound and self.exact_step_decreases == self.steps and iterates

    def to_dict(self) -> dict:
        from dataclasses import asdict

        record = asdict(self)
        for name in ("pieces", "curvature"):
            record.pop(name)
        return {**record, "proved": self.proved}


def _gradient_enclosures(x, theta, starts, threads):
    """[∇L̂] over each start (a point (a, b) or a box ((a_lo, a_hi), (b_lo, b_hi)))."""
    from stumpcheck.numerics.certified.fast.corpus import corpus_enclosure

    return [corpus_enclosure(x, theta, a, b, threads=threads)[1:] for a, b in starts]


def _direction(eta: float, gradient, step=None):
    """[D_k]: −η[g_k] (the exact step), with ``step`` = (Δa, Δb) as exact balls its hull with the recorded step,
    per coordinate, as float pairs rounded outward."""
    with ctx.workprec(_PREC):
        pairs = []
        for i, g in enumerate(gradient):
            exact = -arb(eta) * _interval(float(g[0]), float(g[1]))
            hull = exact if step is None else exact.union(step[i])
            pairs.append((_float_down(hull), _float_up(hull)))
        return tuple(pairs)


def _check_eta(eta) -> float:
    if isinstance(eta, bool) or not isinstance(eta, (float, int, np.floating)) or not (math.isfinite(eta) and eta > 0):
        raise InputError(f"eta must be a positive finite number, got {eta!r}")
    return float(eta)


def _bounds(x, theta, starts, directions, given, threads, pieces=None) -> tuple:
    """(boxes per step, M_k per step): the given boxes; or segment boxes in the given numbers of ``pieces``; or
    segment boxes refined where they decide M."""
    steps = len(starts)
    refine = given is None and pieces is None
    pieces = list(pieces) if pieces is not None else [1] * steps
    boxes = list(given) if given is not None else [segment_boxes(*starts[k], directions[k], pieces[k])
                                                    for k in range(steps)]
    bounds = [max(curvature_bounds(x, theta, boxes[k], threads=threads)) for k in range(steps)]
    if refine:
        heap = [(-float(m), k) for k, m in enumerate(bounds)]
        heapq.heapify(heap)
        while heap:
            _, k = heapq.heappop(heap)
            if pieces[k] >= _MAX_PIECES:
                break
            pieces[k] *= 2
            boxes[k] = segment_boxes(*starts[k], directions[k], pieces[k])
            refined = max(curvature_bounds(x, theta, boxes[k], threads=threads))
            gain = float(bounds[k] - refined) / max(abs(float(bounds[k])), 1e-300)
            bounds[k] = min(bounds[k], refined)
            heapq.heappush(heap, (-float(bounds[k]), k))
            if gain < _GAIN:  # the step that decides M no longer improves
                break
    return boxes, bounds


def _proof(eta, gradients, boxes, bounds, steps_taken, started, source) -> DescentProof:
    """The per-step decreases and η < 2/M; ``steps_taken`` the recorded steps (Δa, Δb) as exact balls, or None."""
    from stumpcheck.numerics.certified.fast.corpus import ASSUMPTIONS

    steps = len(gradients)
    with ctx.workprec(_PREC):
        m_all = max(bounds)
        eta_ball = arb(eta)
        bound = 2 / m_all if m_all > 0 else None
        exact_ok = iterate_ok = 0
        smallest = math.inf
        for k in range(steps):
            ga, gb = (_interval(float(g[0]), float(g[1])) for g in gradients[k])
            exact_gain = eta_ball * (1 - eta_ball * bounds[k] / 2) * (ga**2 + gb**2)
            if exact_gain > 0:
                exact_ok += 1
            if steps_taken is not None:
                da, db = steps_taken[k]
                if ga * da + gb * db + bounds[k] / 2 * (da**2 + db**2) < 0:
                    iterate_ok += 1
            smallest = min(smallest, float(arb(exact_gain.lower()).mid()))
        worst = int(max(range(steps), key=lambda k: float(bounds[k])))
        return DescentProof(eta=eta, M=_float_up(m_all), bound=math.inf if bound is None else _float_down(bound),
                            eta_below_bound=bool(bound is None or eta_ball < bound), steps=steps,
                            exact_step_decreases=exact_ok,
                            iterate_decreases=iterate_ok if steps_taken is not None else None,
                            boxes=sum(len(bx) for bx in boxes), worst_step=worst, smallest_decrease=smallest,
                            pieces_at_worst=len(boxes[worst]), seconds=round(time.process_time() - started, 3),
                            assumptions=dict(ASSUMPTIONS), box_source=source,
                            pieces=[len(bx) for bx in boxes], curvature=[_float_up(m) for m in bounds])


def certify_descent(x, theta, a, b, eta: float, *, step_boxes=None, threads: int | None = None,
                    pieces=None) -> DescentProof:
    """Prove that GD with step ``eta`` decreases L̂ at every step of the run with recorded iterates (a[k], b[k])
    (floats, taken exactly; module doc).

    ``step_boxes``: optional list, per step k, of boxes ((a_lo, a_hi), (b_lo, b_hi)) whose union holds both
    segments of step k (another source's set); else built by :func:`segment_boxes` and refined where they
    decide M; with ``pieces`` (a list of powers of two, one per step) in exactly those numbers of pieces (a
    certificate's re-check). One head (the fast layer's model)."""
    started = time.process_time()
    a, b = np.asarray(a, dtype=np.float64), np.asarray(b, dtype=np.float64)
    if a.shape != b.shape or a.ndim != 1 or a.size < 2 or not (np.all(np.isfinite(a)) and np.all(np.isfinite(b))):
        raise InputError("certify_descent needs finite 1-D iterates a, b of the same length >= 2")
    eta = _check_eta(eta)
    if not np.all(b > 0):
        raise InputError("certify_descent needs every iterate in the model's regime b > 0 (the enclosures need it)")
    steps = a.size - 1
    if step_boxes is not None and len(step_boxes) != steps:
        raise InputError(f"step_boxes needs one list of boxes per step ({steps}), got {len(step_boxes)}")
    starts = [(float(a[k]), float(b[k])) for k in range(steps)]
    gradients = _gradient_enclosures(x, theta, starts, threads)
    with ctx.workprec(_PREC):
        taken = [(arb(float(a[k + 1])) - arb(float(a[k])), arb(float(b[k + 1])) - arb(float(b[k])))
                 for k in range(steps)]
        directions = [_direction(eta, gradients[k], taken[k]) for k in range(steps)]
    if pieces is not None and (step_boxes is not None or len(pieces) != steps or not all(
            isinstance(p, int) and not isinstance(p, bool) and 1 <= p <= _MAX_PIECES and p & (p - 1) == 0
            for p in pieces)):
        raise InputError(f"pieces must be one power of two in [1, {_MAX_PIECES}] per step, without step_boxes")
    boxes, bounds = _bounds(x, theta, starts, directions, step_boxes, threads, pieces)
    source = "given (step_boxes)" if step_boxes is not None else DescentProof.box_source
    return _proof(eta, gradients, boxes, bounds, taken, started, source)


def certify_descent_from_enclosures(x, theta, iterate_boxes, eta: float, *, threads: int | None = None) -> DescentProof:
    """The same proof for a run known through enclosures Z_k ∋ z_k of the exact GD iterates
    z_{k+1} = z_k − η∇L̂(z_k) (e.g. a certified training run's boxes), ``iterate_boxes`` a list of
    ((a_lo, a_hi), (b_lo, b_hi)), k = 0 … K.

    Step k's segment z_k − s·η∇L̂(z_k), s ∈ [0, 1], lies in Z_k + s·(−η[∇L̂(Z_k)]) (the gradient enclosed over
    the whole box Z_k), which :func:`segment_boxes` covers; the exact step decreases L̂ when
    η(1 − ηM_k/2)‖[∇L̂(Z_k)]‖² > 0. There are no recorded float iterates (``iterate_decreases`` is None)."""
    from stumpcheck.numerics.certified.fast.interval import as_pair

    started = time.process_time()
    eta = _check_eta(eta)
    if not isinstance(iterate_boxes, (list, tuple)) or len(iterate_boxes) < 2:
        raise InputError("certify_descent_from_enclosures needs a list of at least 2 iterate boxes")
    starts = []
    for box in iterate_boxes[:-1]:
        try:
            (alo, ahi), (blo, bhi) = as_pair("a", box[0]), as_pair("b", box[1])
        except (TypeError, ValueError, IndexError):
            raise InputError(f"an iterate box must be ((a_lo, a_hi), (b_lo, b_hi)), got {box!r}") from None
        if not blo > 0:
            raise InputError(f"an iterate box needs b > 0, got {box!r}")
        starts.append(((alo, ahi), (blo, bhi)))
    gradients = _gradient_enclosures(x, theta, starts, threads)
    directions = [_direction(eta, g) for g in gradients]
    boxes, bounds = _bounds(x, theta, starts, directions, None, threads)
    return _proof(eta, gradients, boxes, bounds, None, started, "segments from the given iterate enclosures")


def training_iterate_boxes(document) -> tuple:
    """(iterate boxes, η) from a certified training run's certificate (format ``stumpcheck-training-certificate/1``):
    its chain's hulls ``box`` {"a": [lo, hi], "b": [lo, hi]} (doubles in ``float.hex``) hold the exact GD iterates
    z_k, and ``statement.eta`` is the trainer's double as an exact decimal. Feed them to
    :func:`certify_descent_from_enclosures` (with the certificate's corpus). The hypothesis z_k ∈ Z_k is the
    training certificate's statement: re-check it (``stumpcheck recheck``) before relying on this."""
    from fractions import Fraction

    if not isinstance(document, dict) or document.get("format") != TRAINING_FORMAT:
        raise InputError(f"not a training certificate (format {TRAINING_FORMAT})")
    chain, statement = document.get("chain"), document.get("statement")
    if not isinstance(chain, list) or len(chain) < 2 or not isinstance(statement, dict):
        raise InputError("a training certificate needs a chain of at least 2 records and a statement")
    try:
        boxes = [tuple(tuple(float.fromhex(v) for v in record["box"][name]) for name in ("a", "b"))
                 for record in chain]
        eta = Fraction(str(statement["eta"]))
    except (KeyError, TypeError, ValueError, ZeroDivisionError, OverflowError):
        raise InputError("a training certificate's chain boxes or eta cannot be read") from None
    if float(eta) != eta:
        raise InputError("the training certificate's eta is not a double")
    return boxes, float(eta)
