"""L, ∇L and ∇²L at high precision by Gauss–Legendre with the integrand in Arb ball arithmetic.

The right-hand side of the high-precision population flow. The θ-integrals

    L = ∫ ½e² dθ,   ∇L = ∫ e∇e dθ,   ∇²L = ∫ (∇e∇eᵀ + e∇²e) dθ     (prior Uniform[0, 1])

are taken by the ``order``-point Gauss–Legendre rule on each piece of the
model's breakpoints (:func:`stumpcheck.numerics.population.quadrature.breakpoints`), exactly as
:func:`stumpcheck.numerics.population.quantities.loss_gradient_hessian_gauss_legendre` does with
mpmath, but each node's e, ∇e, ∇²e comes from python-flint balls: for the
one-head estimator the real-ball closed forms of :mod:`stumpcheck.numerics.certified.enclosures.one_head_arb`
(one exponential per segment; about 4 times faster per node than the generated
Arb code at 30 digits, measured at b ≈ 1200, which is itself about 15 times faster
than the generated mpmath code),
for the others the generated module (one pass, :mod:`stumpcheck.numerics.generated.population_arb`).
:func:`piece_moments_arb` gives each piece's share at that piece's own order in one
call (the per-piece rule of :mod:`stumpcheck.numerics.flow.piece_orders`). The rules come from
Arb's Legendre roots, cached per (order, precision).

Evidence: the ball sums enclose the rounding errors of the integrand and of
the sum for the rule's nodes (rounded to the working precision, which
changes the rule by far less than its truncation error); the truncation
error of the rule itself is not enclosed: choose ``order`` by comparing two
orders (:func:`stumpcheck.numerics.flow.quadrature_order.quadrature_order_for`). Values are
returned as the balls' midpoints (mpf), with the largest radius relative to
its value as ``rounding_bound``.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass

import mpmath
from flint import arb, ctx, fmpz

from stumpcheck.numerics.certified.enclosures.balls import arb_to_mpf, mpf_to_arb
from stumpcheck.numerics.certified.enclosures.one_head_arb import exp_a, one_head_jet
from stumpcheck.numerics.generated import population_arb as gen_arb
from stumpcheck.numerics.population.quantities import _tag, check_parameters
from stumpcheck.numerics.population.quadrature import breakpoints

__all__ = ["ArbMoments", "loss_gradient_hessian_arb", "piece_moments_arb"]

#: The one-head integrand from the real-ball closed forms (:mod:`stumpcheck.numerics.certified.enclosures.one_head_arb`,
#: about 5× fewer ball operations per node) rather than the generated complex-ball jet; the tests
#: switch it off to compare the two.
_CLOSED_FORM_ONE_HEAD = True


@dataclass(frozen=True)
class ArbMoments:
    """(L, ∇L, ∇²L or None) as mpf midpoints, and the largest ``radius/|value|`` of their balls."""

    loss: mpmath.mpf
    gradient: tuple
    hessian: tuple | None
    rounding_bound: float


#: (every order a per-piece rule tries, at the few precisions of one run)
@functools.lru_cache(maxsize=1024)
def _rule_arb(order: int, prec: int) -> tuple[tuple[arb, ...], tuple[arb, ...]]:
    """The order-point rule on [−1, 1] as exact arb balls: Arb's Legendre roots and weights
    (``arb.legendre_p_root``, enclosed at prec + 20 bits) rounded to ``prec`` bits: the rule of
    :func:`stumpcheck.numerics.population.quadrature.legendre_rule_mp` (Newton at prec + 20 bits, rounded) to
    one unit in the last bit, in about a hundredth of its time (orders up to 60: 1.5 ms against 0.2 s)."""
    with ctx.workprec(prec + 20):
        pairs = [arb.legendre_p_root(order, k, weight=True) for k in range(order)]
    with ctx.workprec(prec):
        return tuple(arb((+x).mid()) for x, _ in pairs), tuple(arb((+w).mid()) for _, w in pairs)


def _exact_midpoint(ball: arb) -> arb:
    """The midpoint of ``ball`` as an exact ball (a node of the rule, rounded to the working precision)."""
    return arb(ball.mid())


def _one_minus_exact(rest: arb) -> arb:
    """1 − r for an exact ball r > 0, exactly (with as many bits as that takes)."""
    _, exponent = rest.mid().man_exp()
    with ctx.workprec(ctx.prec + max(0, -int(exponent)) + 8):
        return arb(1) - rest


def _nodes(left: arb, right: arb, x, left_mpf) -> list[arb]:
    """The rule's nodes on [left, right] as exact balls.

    On pieces in [½, 1] the nodes are placed by their distance r from 1
    (rounded there to the working precision, relative to r) and θ = 1 − r is
    formed exactly, so that a layer at 1 − θ ≈ 2e-10 is resolved to the
    working precision rather than to its absolute spacing near 1.
    """
    if left_mpf >= 0.5:
        near, far = 1 - right, 1 - left  # exact: Sterbenz
        half, middle = (far - near) / 2, (far + near) / 2
        return [_one_minus_exact(_exact_midpoint(middle - half * xi)) for xi in x]
    half, middle = (right - left) / 2, (right + left) / 2
    return [_exact_midpoint(middle + half * xi) for xi in x]


def _node_pairs(left: arb, right: arb, x, left_mpf) -> tuple[list[tuple[arb, arb]], bool]:
    """([(θ, 1 − θ)] of the rule's nodes on [left, right], True if the piece is in [½, 1]).

    The nodes are placed as by :func:`_nodes`, as exact balls (θ, or the distance 1 − θ from 1 on
    pieces in [½, 1]); the complement is formed at twice the working precision plus 16 bits (exact
    for a node above 2^−(prec + 16), and a ball that encloses it otherwise).
    """
    upper = left_mpf >= 0.5
    if upper:
        near, far = 1 - right, 1 - left  # exact: Sterbenz
        half, middle = (far - near) / 2, (far + near) / 2
        nodes = [_exact_midpoint(middle - half * xi) for xi in x]
    else:
        half, middle = (right - left) / 2, (right + left) / 2
        nodes = [_exact_midpoint(middle + half * xi) for xi in x]
    prec = ctx.prec
    try:
        ctx.prec = 2 * prec + 16
        complements = [1 - node for node in nodes]
    finally:
        ctx.prec = prec
    if upper:
        return list(zip(complements, nodes)), True
    return list(zip(nodes, complements)), False


def _one_head_piece(b: arb, factors: tuple, left: arb, right: arb, left_mpf, x, w, hessian: bool) -> list[arb]:
    """The rule's sums of e², e∇e (and ∇e∇eᵀ + e∇²e) on one piece [left, right], one-head closed forms."""
    piece = [arb(0)] * (6 if hessian else 3)
    nodes, upper = _node_pairs(left, right, x, left_mpf)
    for (theta, rest), wi in zip(nodes, w):
        jet = one_head_jet(b, factors, theta, rest, hessian, upper)
        e = jet[0]
        we = wi * e
        piece[0] += we * e
        piece[1] += we * jet[1]
        piece[2] += we * jet[2]
        if hessian:
            ga, gb = jet[1], jet[2]
            piece[3] += wi * (ga * ga) + we * jet[3]
            piece[4] += wi * (ga * gb) + we * jet[4]
            piece[5] += wi * (gb * gb) + we * jet[5]
    half = (right - left) / 2
    return [half * p for p in piece]


def _piece_sums_one_head(a: arb, b: arb, points: list, order: int, prec: int, hessian: bool) -> list[arb]:
    """:func:`_piece_sums` of the one-head estimator with the real-ball closed forms
    (:func:`stumpcheck.numerics.certified.enclosures.one_head_arb.one_head_jet`): the same sums, enclosed."""
    x, w = _rule_arb(order, prec)
    sums = [arb(0)] * (6 if hessian else 3)
    with ctx.workprec(prec):
        factors = exp_a(a, b)
        ends = [mpf_to_arb(mpmath.mpf(p)) for p in points]
        for k, (left, right) in enumerate(zip(ends[:-1], ends[1:])):
            piece = _one_head_piece(b, factors, left, right, points[k], x, w, hessian)
            sums = [s + p for s, p in zip(sums, piece)]
    return sums


def piece_moments_arb(a, b, pieces, orders, *, estimator: str = "one-head", hessian: bool = True) -> list:
    """[(values, radii)] of each piece: its share of ∇L (and ∇²L's upper triangle, ``hessian``) by
    Gauss–Legendre at that piece's own order, in one call.

    ``pieces``: (left, right) pairs of breakpoints (mpf) in [0, 1]; ``orders``: one order per piece.
    At the current mpmath precision, integrand in Arb as :func:`loss_gradient_hessian_arb` (the same
    balls as that function on each piece alone, without its per-call conversions): ``values`` are the
    balls' midpoints (mpf: ∂L/∂a, ∂L/∂b, then ∂²L/∂a², ∂²L/∂a∂b, ∂²L/∂b²), ``radii`` their radii
    (floats: the rounding enclosed, not the rule's truncation error).
    """
    check_parameters(a, b)
    if len(pieces) != len(orders) or any(not (isinstance(n, int) and n >= 1) for n in orders):
        raise ValueError("need one positive integer order per piece")
    prec = mpmath.mp.prec
    a, b = mpmath.mpf(a), mpmath.mpf(b)
    out = []
    with ctx.workprec(prec):
        a_ball, b_ball = mpf_to_arb(a), mpf_to_arb(b)
        closed = estimator == "one-head" and _CLOSED_FORM_ONE_HEAD
        factors = exp_a(a_ball, b_ball) if closed else None
        for (left, right), order in zip(pieces, orders):
            left, right = mpmath.mpf(left), mpmath.mpf(right)
            if closed:
                x, w = _rule_arb(order, prec)
                sums = _one_head_piece(b_ball, factors, mpf_to_arb(left), mpf_to_arb(right), left, x, w, hessian)
            else:
                sums = _piece_sums(a_ball, b_ball, [left, right], order, prec, estimator, hessian)
            for s in sums:
                if not s.is_finite():
                    raise ArithmeticError(f"non-finite Arb integrand at a={a}, b={b}")
            out.append(([arb_to_mpf(s.mid()) for s in sums[1:]], [float(s.rad()) for s in sums[1:]]))
    return out


def _piece_sums(a: arb, b: arb, points: list, order: int, prec: int, estimator: str, hessian: bool) -> list[arb]:
    """Σ over the pieces of ``points`` of the rule's sums of ½e²·2, e∇e (and ∇e∇eᵀ + e∇²e), as balls."""
    if estimator == "one-head" and _CLOSED_FORM_ONE_HEAD:
        return _piece_sums_one_head(a, b, points, order, prec, hessian)
    function = getattr(gen_arb, f"error_jet_{_tag(estimator)}" if hessian else f"error_and_gradient_{_tag(estimator)}")
    x, w = _rule_arb(order, prec)
    count = 6 if hessian else 3
    sums = [arb(0)] * count
    with ctx.workprec(prec):
        ends = [mpf_to_arb(mpmath.mpf(p)) for p in points]
        for k, (left, right) in enumerate(zip(ends[:-1], ends[1:])):
            half = (right - left) / 2
            piece = [arb(0)] * count
            for node, wi in zip(_nodes(left, right, x, points[k]), w):
                values = [v.real for v in function(a, b, node)]
                e = values[0]
                piece[0] += wi * e * e
                piece[1] += wi * e * values[1]
                piece[2] += wi * e * values[2]
                if hessian:
                    ga, gb, haa, hab, hbb = values[1:]
                    piece[3] += wi * (ga * ga + e * haa)
                    piece[4] += wi * (ga * gb + e * hab)
                    piece[5] += wi * (gb * gb + e * hbb)
            sums = [s + half * p for s, p in zip(sums, piece)]
    return sums


def _exact_pair(ball: arb) -> tuple[int, int]:
    man, exp = ball.man_exp()
    return int(man), int(exp)


def _from_pair(pair: tuple[int, int]) -> arb:
    return arb(fmpz(int(pair[0]))) * arb(2) ** int(pair[1]) if pair[0] else arb(0)


def _piece_sums_portable(a, b, points, order, prec, estimator, hessian) -> list:
    """:func:`_piece_sums` with mpf/arb arguments and results as exact (mantissa, exponent) pairs
    (midpoint, radius): what a worker process receives and returns."""
    with mpmath.workprec(prec), ctx.workprec(prec + 64):
        a_ball, b_ball = _from_pair(a), _from_pair(b)
        found = _piece_sums(a_ball, b_ball, [mpmath.mpf(p) for p in points], order, prec, estimator, hessian)
    return [(_exact_pair(arb(s.mid())), _exact_pair(arb(s.rad()))) for s in found]


def _portable(value: mpmath.mpf) -> tuple[int, int]:
    sign, man, exp, _ = value._mpf_
    if not man:
        return (0, 0)
    man, exp = int(man), int(exp)  # plain ints: with gmpy2, mpmath's mantissas are mpz, which fmpz rejects
    return (-man if sign else man, exp)


def loss_gradient_hessian_arb(a, b, *, order: int, estimator: str = "one-head", hessian: bool = True,
                              points=None, pool=None) -> ArbMoments:
    """(L, ∇L, ∇²L) at the current mpmath precision, integrand in Arb at the same precision.

    ``a``, ``b``: real numbers (mpf, float or int; taken as exact binary
    values); prior Uniform[0, 1]. ``points``: the breakpoints, default
    :func:`stumpcheck.numerics.population.quadrature.breakpoints` at (a, b). ∇L is a pair, ∇²L a
    nested 2×2 tuple (None unless ``hessian``). ``pool``: a
    ``concurrent.futures`` executor; the later half of the pieces is then
    summed there while this process sums the first half (the same balls).
    """
    check_parameters(a, b)
    if not (isinstance(order, int) and order >= 1):
        raise ValueError(f"order must be a positive integer, got {order!r}")
    prec = mpmath.mp.prec
    a, b = mpmath.mpf(a), mpmath.mpf(b)
    if points is None:
        points = breakpoints(a, b, estimator=estimator)
    points = [mpmath.mpf(p) for p in points]
    remote = None
    if pool is not None and len(points) > 3:
        split = len(points) // 2
        remote = pool.submit(_piece_sums_portable, _portable(a), _portable(b), [_portable(p) for p in points[split:]],
                             order, prec, estimator, hessian)
        points = points[:split + 1]
    with ctx.workprec(prec):
        sums = _piece_sums(mpf_to_arb(a), mpf_to_arb(b), points, order, prec, estimator, hessian)
        if remote is not None:
            with ctx.workprec(prec + 64):
                other = [_from_pair(mid) + arb(0, _from_pair(rad)) for mid, rad in remote.result()]
            sums = [s + o for s, o in zip(sums, other)]
        sums[0] = sums[0] / 2
        bound = 0.0
        for s in sums:
            if not s.is_finite():
                raise ArithmeticError(f"non-finite Arb integrand at a={a}, b={b}")
            if not s.is_zero():
                # the ratio in arb: a piece sum below float64's range (1e-400 on a piece at θ ≈ 1) has a finite one
                bound = max(bound, float(s.rad() / abs(s.mid())) if s.mid() != 0 else float("inf"))
        values = [arb_to_mpf(s.mid()) for s in sums]
    gradient = (values[1], values[2])
    hess = ((values[3], values[4]), (values[4], values[5])) if hessian else None
    return ArbMoments(values[0], gradient, hess, bound)
