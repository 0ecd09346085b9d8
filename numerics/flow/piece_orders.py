"""Per-piece Gauss–Legendre orders of the D-digit flow field, each piece accepted by its own two-order check.

The D-digit field (:class:`stumpcheck.numerics.flow.field_mp.PopulationFlowFieldMP`) sums ∇L and ∇²L over the
pieces [p_k, p_{k+1}] of the model's breakpoints (:func:`stumpcheck.numerics.population.quadrature.breakpoints`;
here with the switch in closed form, :func:`switch_point`), each by Gauss–Legendre with the
integrand in Arb balls, all pieces at their own orders in one call
(:func:`stumpcheck.numerics.certified.enclosures.arb_quadrature.piece_moments_arb`). One order for every piece is
the order of the hardest piece: the ladder about the softmax switch near θ = 1, whose integrand has a
pole one piece width beyond each piece (Bernstein parameter ρ ≈ 3 + √8, about 1.5 digits per node).
Pieces in the bulk, where the integrand is a polynomial up to terms below 10^−D, and pieces that
carry a small share of the integral need far fewer nodes (at b ≈ 1200, 0.6 of the uniform count).

**The rule.** Piece k gets its own order n_k, accepted at a state when its five contributions
(∂L/∂a, ∂L/∂b and the three entries of ∇²L) at n_k and at an order n′ ≥ 1.5·n_k differ by at most

    τ_c = 10^−digits · |T_c| / P      for every component c,

T_c the component's total over the P pieces. Summed over the pieces, the two rules then differ by at
most 10^−digits·|T_c|: with ``digits`` = D + 3 the whole rule passes the flow's global two-order check
(D + 2 digits, :mod:`stumpcheck.numerics.flow.quadrature_order`) with a digit to spare. The orders are chosen
(:func:`select_orders`) at the start of a step, from the previous orders as guesses: raised along
n → 1.5·n until the check passes, then lowered by a fifth at a time while the lower order still
agrees with the finest computed one to τ (its finer order is at most that one). They are then **frozen** for the step and the next
``select_every − 1`` steps so that all stages of an extrapolation step see one discretised field. The breakpoints
move with the state (and a ladder rung may enter or leave [0, 1]); each is labelled by the ladder
rung it is (:func:`labelled_breakpoints`), and a piece between the same two rungs as a frozen piece,
not longer than it was by more than 10 %, keeps its order; any other piece gets the largest frozen
order among the frozen pieces it overlaps in θ, or their node count over it if that is more
(:meth:`PieceOrderRule.orders_for`), which is conservative for a piece that has shifted. :func:`rule_agreement` is the global two-order check of a frozen rule
at a state (each n_k against 1.5·n_k), which the flow reports at its end.
Evidence: high-precision (two orders on each piece), as for the uniform order.
"""

from __future__ import annotations

import bisect
import math
from dataclasses import dataclass, field

import mpmath

from stumpcheck.numerics.certified.enclosures.arb_quadrature import piece_moments_arb
from stumpcheck.numerics.population.quadrature import _features, transition_point

__all__ = ["MIN_ORDER", "LARGEST_ORDER", "SELECT_EVERY", "finer_order", "switch_point", "labelled_breakpoints", "piece_values",
           "select_orders", "group_sum", "rule_agreement", "PieceOrderRule"]

#: Fewest nodes on a piece.
MIN_ORDER = 4
#: Most nodes on a piece; a piece whose check still fails there is counted as unresolved.
LARGEST_ORDER = 120
#: A step's start chooses the orders again every this many steps.
SELECT_EVERY = 4
#: ∇L (2 entries) and the upper triangle of ∇²L (3 entries).
COMPONENTS = 5
#: A piece keeps its frozen order at a later state only if it is at most this much longer than it was.
LONGER = 1.1


#: The logit range of :func:`stumpcheck.numerics.population.quadrature.transition_point`: a switch beyond it is
#: placed by that function (at the end it returns), as ``breakpoints`` places it.
_LOGIT_RANGE = 4000


def switch_point(a, b) -> tuple:
    """(θ*, 1 − θ*, width) of the one-head switch z(θ*) = 0 in closed form, at 80 bits (as
    :func:`stumpcheck.numerics.population.quadrature.transition_point`, whose Newton iteration it replaces here).

    z(θ) = a − bθ + log(1 − e^{−bu}) − log(1 − e^{−bθ}), u = 1 − θ, vanishes where
    e^{bu} − 1 = e^{b − a}(1 − e^{−bθ}); with θ + u = 1 that is

        bu* = log(1 + (e^b − 1)/(1 + e^a)),   bθ* = log(1 + (e^b − 1)/(1 + e^{b − a})),

    both positive and without cancellation, and the width 1/|z′(θ*)| = 1/(b(1 + 1/(e^{bu*} − 1) +
    1/(e^{bθ*} − 1))) (:mod:`stumpcheck.numerics.population.one_head_float64` derives the same forms). A root
    whose logit log(θ*/u*) is beyond ±4000 is left to ``transition_point`` (it returns that end).
    """
    with mpmath.workprec(80):
        a, b = mpmath.mpf(a), mpmath.mpf(b)
        grown = mpmath.expm1(b)
        b_rest = mpmath.log1p(grown / (1 + mpmath.exp(a)))
        b_theta = mpmath.log1p(grown / (1 + mpmath.exp(b - a)))
        if not (b_rest > 0 and b_theta > 0) or abs(mpmath.log(b_theta / b_rest)) >= _LOGIT_RANGE:
            return transition_point(a, b)
        width = 1 / (b * (1 + 1 / mpmath.expm1(b_rest) + 1 / mpmath.expm1(b_theta)))
        return b_theta / b, b_rest / b, width


def _feature_rungs(feature, zero, one) -> tuple[object, list, list]:
    """(centre θ or None, rungs below, rungs above) of one feature's ladder, each side in θ and ordered
    from the centre outward: the points ``_split_points_from_features`` builds for this feature alone,
    with the same arithmetic (a feature in [½, 1] laddered in u = 1 − θ, θ = 1 − u rounded)."""
    centre, rest, scale = feature
    smallest = min(scale, one / 4)
    for distance in (centre, rest):
        if 0 < distance < smallest:
            smallest = distance / 2
    step = smallest / 4
    below, above = [], []
    upper = centre >= one / 2
    origin = rest if upper else centre
    while True:
        added = False
        for offset, side in ((origin - step, -1), (origin + step, 1)):
            if zero < offset < one:
                added = True
                if upper:  # u below the centre's u is θ above the centre
                    above.append(one - offset) if side < 0 else below.append(one - offset)
                else:
                    (below if side < 0 else above).append(offset)
        if not added:
            break
        step *= 2
    return (centre if zero < origin < one else None), below, above


def labelled_breakpoints(a, b, *, estimator: str = "one-head") -> tuple[list, list]:
    """(points, labels): the breakpoints of :func:`stumpcheck.numerics.population.quadrature.breakpoints` at (a, b)
    on [0, 1] (with the switch from :func:`switch_point`), each point with a label that follows it as
    the state moves.

    Every breakpoint is an end of [0, 1], a feature's centre, or a rung of a feature's ladder
    (centre ± 2ᵏ·scale/4, ladders built one feature at a time, whose union is the set
    ``breakpoints`` builds): labelled ("end", 0 | 1), ("centre", f) or (f, side, k), k counted from
    the centre outward on that side (distinct points only), f the feature's index (θ = 0, θ = 1, the
    switch, …); a point two features share keeps the first feature's label. A ladder rung keeps its
    label while its feature moves and scales, so a piece between two labelled points is the same
    piece of the model's geometry at the next state.
    """
    a, b = mpmath.mpf(a), mpmath.mpf(b)
    zero, one = mpmath.mpf(0), mpmath.mpf(1)
    _, rest, width = switch_point(a, b)
    features = _features(estimator, a, b, rest, width, zero, one)
    labels: dict = {zero: ("end", 0), one: ("end", 1)}
    for index, feature in enumerate(features):
        centre, below, above = _feature_rungs(feature, zero, one)
        for side, rungs in ((-1, below), (1, above)):
            k, previous = 0, None
            for p in rungs:
                if p == previous or p == zero or p == one or p == centre:
                    continue  # rounded onto the previous rung, an end or the centre
                labels.setdefault(p, (index, side, k))
                k, previous = k + 1, p
        if centre is not None and centre != zero and centre != one:
            labels.setdefault(centre, ("centre", index))
    # sorted by float first: the mpf comparisons decide only between points one double apart
    points = sorted(labels, key=lambda p: (float(p), p))
    return points, [labels[p] for p in points]


def finer_order(order: int) -> int:
    """The finer order of a two-order check, ⌈1.5·n⌉ (as :mod:`stumpcheck.numerics.flow.quadrature_order`)."""
    return order + (order + 1) // 2


def _moments(a, b, piece, order: int, estimator: str, hessian: bool) -> tuple[list, list]:
    """(values, radii) of ∇L (and ∇²L's upper triangle) on one piece (l, r) at one order."""
    return piece_moments_arb(a, b, [piece], [order], estimator=estimator, hessian=hessian)[0]


def piece_values(a, b, pieces, orders, prec: int, estimator: str, hessian: bool = True) -> list:
    """[(values, radii)] of each piece (l, r) at its order, at ``prec`` bits (runs in a worker too)."""
    with mpmath.workprec(prec):
        return piece_moments_arb(a, b, pieces, orders, estimator=estimator, hessian=hessian)


def group_sum(a, b, pieces, orders, prec: int, estimator: str, hessian: bool) -> tuple[list, list]:
    """(Σ values, Σ radii) over ``pieces`` at their orders, in one call (runs in a worker too)."""
    count = COMPONENTS if hessian else 2
    with mpmath.workprec(prec):
        total, radii = [mpmath.mpf(0)] * count, [0.0] * count
        for values, rads in piece_moments_arb(a, b, pieces, orders, estimator=estimator, hessian=hessian):
            total = [t + v for t, v in zip(total, values)]
            radii = [r + x for r, x in zip(radii, rads)]
    return total, radii


def _within(x, y, tau) -> bool:
    return all(abs(p - q) <= t for p, q, t in zip(x, y, tau))


def select_orders(a, b, pieces, guesses, known, tau, prec: int, estimator: str,
                  largest: int = LARGEST_ORDER) -> list:
    """[(order, accepted, (values, radii) at the finest order computed, nodes spent)] for each piece
    (module docstring; the nodes of every order computed, the guess's included).

    ``known``: each piece's (values, radii) at its guess. ``tau``: the five tolerances τ_c.
    """
    out = []
    with mpmath.workprec(prec):
        for piece, guess, first in zip(pieces, guesses, known):
            cache = {guess: first}

            def at(n):
                if n not in cache:
                    cache[n] = _moments(a, b, piece, n, estimator, True)
                return cache[n][0]

            n, accepted = guess, False
            while finer_order(n) <= largest:
                if _within(at(n), at(finer_order(n)), tau):
                    accepted = True
                    break
                n = finer_order(n)
            if accepted:
                while True:
                    lower = max(MIN_ORDER, (4 * n) // 5)
                    if lower >= n or not _within(at(lower), at(max(cache)), tau):
                        break
                    n = lower
            else:
                n = max(cache)
            out.append((n, accepted, cache[max(cache)], sum(cache)))
    return out


def _split(orders) -> int:
    """Index splitting the pieces into two contiguous parts with about equal node counts."""
    half, running = sum(orders) / 2, 0
    for k, n in enumerate(orders):
        running += n
        if running >= half:
            return k + 1
    return len(orders)


def _totals(results) -> tuple[list, list]:
    values = [sum((r[0][c] for r in results), mpmath.mpf(0)) for c in range(COMPONENTS)]
    radii = [sum(float(r[1][c]) for r in results) for c in range(COMPONENTS)]
    return values, radii


def _tolerances(totals, pieces: int, digits: int) -> list:
    scale = mpmath.mpf(10) ** (-digits) / pieces
    return [abs(t) * scale for t in totals]


def rule_agreement(a, b, rule: "PieceOrderRule", prec: int) -> float:
    """Significant digits shared by ∇L, ∇²L summed with ``rule``'s orders and with 1.5× those orders.

    At (a, b) and ``prec`` bits, on the breakpoints at (a, b), each piece at the order the frozen
    ``rule`` gives it (:meth:`PieceOrderRule.orders_for`); capped at the precision when the two agree
    exactly. The flow's global two-order check of the rule it used. Evidence: high-precision.
    """
    with mpmath.workprec(prec):
        a, b = mpmath.mpf(a), mpmath.mpf(b)
        points, labels = labelled_breakpoints(a, b, estimator=rule.estimator)
        pieces = list(zip(points[:-1], points[1:]))
        orders = rule.orders_for(points, labels)
        coarse, _ = group_sum(a, b, pieces, orders, prec, rule.estimator, True)
        fine, _ = group_sum(a, b, pieces, [finer_order(n) for n in orders], prec, rule.estimator, True)
        digits = prec * math.log10(2)
        for x, y in zip(coarse, fine):
            if x != y:
                digits = min(digits, float(-mpmath.log10(abs(x - y) / max(abs(x), abs(y)))))
        return digits


@dataclass
class PieceOrderRule:
    """The frozen per-piece orders of a D-digit field and their bookkeeping (module docstring).

    ``uniform``: the order of every piece before the first choice (the first guesses); ``digits``:
    the per-piece tolerance exponent (D + 3 for a D-digit flow).
    """

    uniform: int
    digits: int
    estimator: str = "one-head"
    select_every: int = SELECT_EVERY
    largest: int = LARGEST_ORDER
    points: list | None = None
    orders: list | None = None
    labels: list | None = None
    since: int = 0
    stats: dict = field(default_factory=lambda: {"selections": 0, "unresolved_pieces": 0, "evaluations": 0,
                                                 "nodes": 0, "selection_nodes": 0, "uniform_nodes": 0,
                                                 "regridded_evaluations": 0, "pieces_mapped_by_overlap": 0})
    _by_label: dict = field(default_factory=dict, repr=False)

    def __post_init__(self):
        if self.orders is not None:
            self.freeze(self.points, self.orders, self.labels)

    def orders_for(self, points, labels=None) -> list:
        """The frozen rule on the pieces of ``points`` (the uniform order before the first choice).

        A piece between the same two labelled points as a frozen piece (``labels`` from
        :func:`labelled_breakpoints`) and at most :data:`LONGER` times as long keeps that piece's
        order. Any other piece gets the largest order of the frozen pieces it overlaps in θ, or more
        if it is longer: the frozen rule's node count over it, Σ_j n_j·|piece ∩ frozen_j|/|frozen_j|
        (a piece that two frozen ones merged into keeps their nodes; one that a rung split keeps its
        order).
        """
        if self.orders is None:
            return [self.uniform] * (len(points) - 1)
        frozen, out = self.points, []
        for i, (left, right) in enumerate(zip(points[:-1], points[1:])):
            if labels is not None and self.labels is not None:
                known = self._by_label.get((labels[i], labels[i + 1]))
                if known is not None and right - left <= LONGER * known[1]:
                    out.append(known[0])
                    continue
            first = max(0, bisect.bisect_right(frozen, left) - 1)
            last = min(len(self.orders), max(first + 1, bisect.bisect_left(frozen, right)))
            nodes = 0
            for j in range(first, last):
                width = frozen[j + 1] - frozen[j]
                overlap = min(right, frozen[j + 1]) - max(left, frozen[j])
                if width > 0 and overlap > 0:
                    nodes += self.orders[j] * overlap / width
            # (a millionth of a node below an integer is rounding of the overlaps, not a node)
            out.append(max(max(self.orders[first:last]), int(math.ceil(nodes - 1e-6))))
            self.stats["pieces_mapped_by_overlap"] += 1
        return out

    def freeze(self, points, orders, labels=None) -> None:
        """Freeze ``orders`` on the pieces of ``points`` (with their ``labels``, if any)."""
        self.points, self.orders, self.labels = list(points), list(orders), labels
        self._by_label = {}
        if labels is not None:
            for i, n in enumerate(orders):
                self._by_label[(labels[i], labels[i + 1])] = (n, points[i + 1] - points[i])

    def moments(self, a, b, *, hessian: bool, step_start: bool, pool=None) -> tuple[list, float]:
        """(∇L and, with ``hessian``, ∇²L's upper triangle; relative rounding bound) at (a, b).

        ``step_start``: the linearization at a step's start, where the orders may be chosen again.
        """
        prec = mpmath.mp.prec
        points, labels = labelled_breakpoints(a, b, estimator=self.estimator)
        pieces = list(zip(points[:-1], points[1:]))
        if step_start and (self.orders is None or self.since >= self.select_every):
            values, radii = self._select(a, b, points, labels, pieces, prec, pool)
            self.since = 1
        else:
            if step_start:
                self.since += 1
            if self.orders is not None and len(self.orders) != len(pieces):
                self.stats["regridded_evaluations"] += 1
            orders = self.orders_for(points, labels)
            values, radii = self._sum(a, b, pieces, orders, prec, hessian, pool)
            self.stats["nodes"] += sum(orders)
            self.stats["evaluations"] += 1
        self.stats["uniform_nodes"] += self.uniform * len(pieces)
        values = values[:COMPONENTS if hessian else 2]
        radii = radii[:len(values)]
        bound = max((float(r / abs(v)) if v else (math.inf if r else 0.0)) for v, r in zip(values, radii))
        return values, bound

    def _sum(self, a, b, pieces, orders, prec, hessian, pool):
        split = _split(orders) if pool is not None else len(pieces)
        remote = None
        if split < len(pieces):
            remote = pool.submit(group_sum, a, b, pieces[split:], orders[split:], prec, self.estimator, hessian)
        values, radii = group_sum(a, b, pieces[:split], orders[:split], prec, self.estimator, hessian)
        if remote is not None:
            other_values, other_radii = remote.result()
            values = [x + y for x, y in zip(values, other_values)]
            radii = [x + y for x, y in zip(radii, other_radii)]
        return values, radii

    def _per_piece(self, function, a, b, pieces, orders, per_piece, shared, pool):
        """``function(a, b, pieces, orders, *per_piece, *shared)`` on two parts (the later one in ``pool``),
        concatenated; ``per_piece`` are lists with one entry per piece."""
        split = _split(orders) if pool is not None else len(pieces)
        remote = None
        if split < len(pieces):
            remote = pool.submit(function, a, b, pieces[split:], orders[split:],
                                 *[x[split:] for x in per_piece], *shared)
        local = function(a, b, pieces[:split], orders[:split], *[x[:split] for x in per_piece], *shared)
        return local + (remote.result() if remote is not None else [])

    def _select(self, a, b, points, labels, pieces, prec, pool):
        count = len(pieces)
        guesses = self.orders_for(points, labels)
        known = self._per_piece(piece_values, a, b, pieces, guesses, [], (prec, self.estimator, True), pool)
        totals, _ = _totals(known)
        tau = _tolerances(totals, count, self.digits)
        chosen = self._per_piece(select_orders, a, b, pieces, guesses, [known],
                                 (tau, prec, self.estimator, self.largest), pool)
        self.freeze(points, [n for n, _, _, _ in chosen], labels)
        self.stats["selection_nodes"] += sum(spent for _, _, _, spent in chosen)
        self.stats["selections"] += 1
        self.stats["unresolved_pieces"] += sum(1 for _, accepted, _, _ in chosen if not accepted)
        # the step's linearization is summed from each piece's finest computed order (the most accurate)
        return _totals([best for _, _, best, _ in chosen])
