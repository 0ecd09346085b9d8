"""θ-quadrature with breakpoints placed from the model's own scales (MODEL.md §8).

The θ-integrands of L, ∇L and ∇²L have layers whose width shrinks as the scale
grows: at θ = 0 and θ = 1 (width 1/b) and wherever a head's two segment masses
are equal, θ* (where the softmax weight switches; width 1/|dz/dθ(θ*)|, with z
the log-odds of the two segments). A quadrature that does not know where these
are silently returns a wrong value. :func:`breakpoints` returns the endpoints of
subintervals each of which has its features only at its ends, in geometric
ladders (doubling distances) away from every feature, so that tanh-sinh
(mpmath) or Gauss–Legendre (float64) on each piece converges.
"""

from __future__ import annotations

import functools
import math

import mpmath
import numpy as np

from numerics.generated import population_mpmath as gen_mp
from numerics.generated import population_numpy as gen_np

_EPS = float(np.finfo(float).eps)

__all__ = ["one_head_log_odds", "transition_point", "transition_point_float64", "breakpoints",
           "breakpoints_float64", "gauss_legendre_nodes", "gauss_legendre_nodes_split", "legendre_rule_float64", "legendre_rule_mp",
           "gauss_legendre_nodes_mp"]


def one_head_log_odds(a, b, theta, one_minus_theta=None):
    """z(θ) = ℓ_R − ℓ_L = a − bθ + log((1 − θ)/θ) + Λ(b(1 − θ)) − Λ(bθ), decreasing in θ.

    ``one_minus_theta`` may be passed when 1 − θ is known more accurately than θ.
    """
    theta = mpmath.mpf(theta)
    rest = 1 - theta if one_minus_theta is None else mpmath.mpf(one_minus_theta)
    return (a - b * theta + mpmath.log(rest) - mpmath.log(theta)
            + gen_mp.trunc_exp_log_mass(b * rest) - gen_mp.trunc_exp_log_mass(b * theta))


def transition_point(a, b, *, logit_range: int = 4000):
    """(θ*, 1 − θ*, width): the root of z(θ) = 0 and the switch width 1/|z'(θ*)|.

    z → +∞ as θ → 0, −∞ as θ → 1, strictly decreasing; the root is found by
    bisection in the logit s = log(θ/(1 − θ)) ∈ [−4000, 4000] (θ = 1/(1 + e^{−s}),
    1 − θ = 1/(1 + e^{s}), both without cancellation). A root beyond that range
    means the switch layer is narrower than e^{−4000}; the end is returned.
    """
    with mpmath.workprec(80):
        a, b = mpmath.mpf(a), mpmath.mpf(b)

        def z_of_logit(s):
            return one_head_log_odds(a, b, 1 / (1 + mpmath.exp(-s)), 1 / (1 + mpmath.exp(s)))

        lo, hi = mpmath.mpf(-logit_range), mpmath.mpf(logit_range)
        if z_of_logit(lo) <= 0:
            hi = lo
        elif z_of_logit(hi) >= 0:
            lo = hi
        while hi - lo > mpmath.mpf(2) ** -40 * (1 + abs(lo)):
            mid = (lo + hi) / 2
            if z_of_logit(mid) > 0:
                lo = mid
            else:
                hi = mid
        s = (lo + hi) / 2
        theta_star, rest = 1 / (1 + mpmath.exp(-s)), 1 / (1 + mpmath.exp(s))
        slope = b + 1 / rest + 1 / theta_star - b * (
            gen_mp.trunc_exp_cumulant(1, b * rest) + gen_mp.trunc_exp_cumulant(1, b * theta_star))
        return theta_star, rest, 1 / abs(slope)


def _ladder(center, smallest, lo, hi, out: list) -> None:
    step = smallest
    while True:
        added = False
        for point in (center - step, center + step):
            if lo < point < hi:
                out.append(point)
                added = True
        if not added:
            return
        step *= 2


def _features(estimator: str, a, b, rest, width, zero, one) -> list:
    """(centre, scale) of every layer of ``estimator``'s θ-integrands.

    A softmax over segments switches wherever two segment log-masses cross.
    One head: its left and right segments, at θ* (one-head) or 1 − θ*
    (reflected). The pooled softmax also compares segments across the heads:
    the one-head right and reflected right segments cross where a − bθ = 0
    (θ = a/b), the one-head left and reflected left ones where a − b + bθ = 0
    (θ = 1 − a/b), both with width 1/b; the one-head right and reflected left
    segments cross at θ = ½ exactly (their log-mass difference
    b(1 − 2θ) + log((1 − θ)/θ) + Λ(b(1 − θ)) − Λ(bθ) is odd about ½), width
    about 1/(2b). (The one-head left and reflected right masses are both
    about −log b across the bulk: no layer.)
    """
    features = [(zero, 1 / b), (one, 1 / b)]
    if estimator in ("one-head", "averaged", "pooled"):
        features.append((one - rest, width))
    if estimator in ("reflected", "averaged", "pooled"):
        features.append((rest, width))
    if estimator == "pooled":
        features.append(((zero + one) / 2, 1 / (2 * b)))
        for centre in (a / b, one - a / b):
            if zero < centre < one:
                features.append((centre, 1 / b))
    return features


def _points_from_features(features, lo, hi) -> list:
    points = [lo, hi]
    for center, scale in features:
        if lo < center < hi:
            points.append(center)
        smallest = min(scale, (hi - lo) / 4)
        # near an end the feature cannot be wider than its distance to the end
        for end in (0, 1):
            if 0 < abs(center - end) < smallest:
                smallest = abs(center - end) / 2
        _ladder(center, smallest / 4, lo, hi, points)
    return sorted(set(points))


def breakpoints(a, b, *, estimator: str = "one-head", lo=0, hi=1) -> list:
    """Sorted subinterval endpoints of [lo, hi] for the θ-integrals at (a, b) (mpmath).

    Features: θ = 0 and θ = 1 (scale 1/b), and the softmax switch θ* of each
    head (scale = its width); the reflected head's switch is 1 − θ* of the
    one-head model by the reflection symmetry; for the pooled softmax also the
    switches between the heads' segments (θ = ½, a/b, 1 − a/b; see
    :func:`_features`). Ladders double from a quarter of each feature's scale
    up to the length of [lo, hi].
    """
    a, b = mpmath.mpf(a), mpmath.mpf(b)
    lo, hi = mpmath.mpf(lo), mpmath.mpf(hi)
    _, rest, width = transition_point(a, b)
    return _points_from_features(_features(estimator, a, b, rest, width, mpmath.mpf(0), mpmath.mpf(1)),
                                  lo, hi)


def transition_point_float64(a: float, b: float, *, logit_range: float = 700.0):
    """Float64 version of :func:`transition_point`: (θ*, 1 − θ*, width).

    The root of z in the logit s ∈ [−700, 700] (a switch closer than e^{−700}
    to an end is narrower than any float64 node spacing; the end is returned).
    dz/ds = −1 − bθ(1 − θ)(1 − κ₁(b(1 − θ)) − κ₁(bθ)) ≤ −1 (κ₁(x) + κ₁(y) ≤ 1
    for x + y = b > 0), so z is strictly decreasing with a slope bounded away
    from 0. Bracketing: z at s = 0, then at ±1, ±2, ±4, … (doubling, capped at
    the range) until the sign changes; then Newton's method in s safeguarded by
    the bracket (regula falsi start, bisection when a Newton step leaves the
    bracket), to a few ulps of s. Near θ = 1 the term a − bθ is formed as
    (a − b) + b(1 − θ), without the cancellation of two large terms. All
    evaluations are scalar (one number each, no arrays).
    """
    a, b = float(a), float(b)
    a_minus_b = a - b
    log_mass, cumulant = gen_np.trunc_exp_log_mass, gen_np.trunc_exp_cumulant

    def z_of_logit(s):
        theta, rest = 1.0 / (1.0 + math.exp(-s)), 1.0 / (1.0 + math.exp(s))
        linear = a_minus_b + b * rest if s > 0 else a - b * theta
        return linear - s + float(log_mass(b * rest)) - float(log_mass(b * theta))

    z_zero = z_of_logit(0.0)
    if z_zero == 0:
        lo = hi = s = 0.0
    else:
        direction = 1.0 if z_zero > 0 else -1.0
        near, z_near, step = 0.0, z_zero, 1.0
        while True:
            far = direction * min(step, logit_range)
            z_far = z_of_logit(far)
            if (z_far > 0) != (z_zero > 0) or z_far == 0:
                break
            near, z_near = far, z_far
            if step >= logit_range:  # no sign change in the range: the end
                break
            step *= 2
        if (z_far > 0) == (z_zero > 0) and z_far != 0:
            lo = hi = s = far
        else:
            (lo, z_lo), (hi, z_hi) = sorted([(near, z_near), (far, z_far)])
            s = lo + z_lo * (hi - lo) / (z_lo - z_hi)  # regula falsi start (z_lo > 0 ≥ z_hi)
            if not lo < s < hi:
                s = 0.5 * (lo + hi)
    previous_step = math.inf
    for _ in range(200):
        if not hi - lo > 4 * _EPS * (1 + abs(s)):
            break
        value = z_of_logit(s)
        if value > 0:
            lo = s
        elif value < 0:
            hi = s
        else:
            break
        theta, rest = 1.0 / (1.0 + math.exp(-s)), 1.0 / (1.0 + math.exp(s))
        derivative = -1.0 - b * theta * rest * (1.0 - float(cumulant(1, b * rest)) - float(cumulant(1, b * theta)))
        step = -value / derivative
        candidate = s + step
        # converged: a step of a few ulps, or steps at z's rounding level that no longer halve
        if abs(step) <= 8 * _EPS * (1 + abs(s)) or (
                abs(step) <= 64 * _EPS * (1 + abs(s)) and abs(step) > 0.5 * previous_step):
            if lo <= candidate <= hi:
                s = candidate
            break
        if lo < candidate < hi:
            previous_step = abs(step)
        else:
            candidate = 0.5 * (lo + hi)
            previous_step = math.inf
        s = candidate
    theta, rest = 1.0 / (1.0 + math.exp(-s)), 1.0 / (1.0 + math.exp(s))
    slope = b + 1 / rest + 1 / theta - b * (gen_np.trunc_exp_cumulant(1, b * rest)
                                            + gen_np.trunc_exp_cumulant(1, b * theta))
    return theta, rest, 1.0 / abs(slope)


def breakpoints_float64(a: float, b: float, *, estimator: str = "one-head", lo: float = 0.0,
                        hi: float = 1.0) -> list:
    """Float64 version of :func:`breakpoints` (same features and ladders)."""
    _, rest, width = transition_point_float64(float(a), float(b))
    return _points_from_features(_features(estimator, float(a), float(b), rest, width, 0.0, 1.0),
                                  float(lo), float(hi))


def gauss_legendre_nodes(points, order: int = 24) -> tuple[np.ndarray, np.ndarray]:
    """Float64 nodes and weights of an ``order``-point Gauss–Legendre rule on each piece."""
    x, w = np.polynomial.legendre.leggauss(order)
    p = np.asarray([float(q) for q in points])
    left, right = p[:-1, None], p[1:, None]
    half = (right - left) / 2
    nodes = (left + right) / 2 + half * x[None, :]
    weights = half * w[None, :]
    return nodes.ravel(), weights.ravel()


def gauss_legendre_nodes_split(points, order: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(θ nodes, 1 − θ nodes, weights) of the ``order``-point Gauss–Legendre rule on each piece, float64.

    Pieces in [½, 1] are mapped by their distances from 1 (exact there, by
    Sterbenz's lemma), so 1 − θ at each node has full relative precision: a
    layer at 1 − 2e-10 of width 2e-10 is resolved, where θ itself can only be
    placed on the 1.1e-16 grid of doubles near 1 (an error of 5e-7 of the
    layer's width per node; it made ∂L/∂a wrong by 2e-8 relative at b = 1000).
    """
    x, w = legendre_rule_float64(order)
    p = np.asarray([float(q) for q in points])
    left, right = p[:-1, None], p[1:, None]
    half = (right - left) / 2
    nodes = (left + right) / 2 + half * x[None, :]
    upper = left[:, 0] >= 0.5
    rest = 1.0 - nodes
    # distance from 1: midpoint of the exact distances, minus the offset (the rule is symmetric)
    rest[upper] = ((1.0 - left[upper]) + (1.0 - right[upper])) / 2 - half[upper] * x[None, :]
    nodes[upper] = 1.0 - rest[upper]
    return nodes.ravel(), rest.ravel(), (half * w[None, :]).ravel()


@functools.lru_cache(maxsize=16)
def legendre_rule_float64(order: int) -> tuple[np.ndarray, np.ndarray]:
    """The ``order``-point Gauss–Legendre rule on [−1, 1] (numpy's leggauss), cached; read-only arrays."""
    x, w = np.polynomial.legendre.leggauss(order)
    x.setflags(write=False)
    w.setflags(write=False)
    return x, w


@functools.lru_cache(maxsize=32)
def _legendre_rule_mp(order: int, prec: int) -> tuple:
    """Nodes and weights of the ``order``-point rule on [−1, 1] at ``prec`` bits.

    Newton's method on P_n from Tricomi's initial guesses cos(π(i − ¼)/(n + ½)),
    with P_n and P_n' from the three-term recurrence, at prec + 20 bits; the
    weights are 2/((1 − x²) P_n'(x)²). The rule is symmetric; both halves are
    returned.
    """
    n = order
    with mpmath.workprec(prec + 20):
        tol = mpmath.ldexp(1, -prec - 10)
        nodes, weights = [], []
        for i in range(1, n // 2 + 1):
            x = mpmath.cos(mpmath.pi * (i - mpmath.mpf(1) / 4) / (n + mpmath.mpf(1) / 2))
            for _ in range(100):
                p0, p1 = mpmath.mpf(1), x
                for k in range(2, n + 1):
                    p0, p1 = p1, ((2 * k - 1) * x * p1 - (k - 1) * p0) / k
                derivative = n * (x * p1 - p0) / (x * x - 1)
                dx = p1 / derivative
                x -= dx
                if abs(dx) < tol:
                    break
            p0, p1 = mpmath.mpf(1), x
            for k in range(2, n + 1):
                p0, p1 = p1, ((2 * k - 1) * x * p1 - (k - 1) * p0) / k
            derivative = n * (x * p1 - p0) / (x * x - 1)
            weight = 2 / ((1 - x * x) * derivative ** 2)
            nodes += [x, -x]
            weights += [weight, weight]
        if n % 2:
            p0, p1 = mpmath.mpf(1), mpmath.mpf(0)
            for k in range(2, n + 1):
                p0, p1 = p1, (-(k - 1) * p0) / k
            derivative = n * (-p0) / (-1)
            nodes.append(mpmath.mpf(0))
            weights.append(2 / derivative ** 2)
    with mpmath.workprec(prec):
        return tuple(+x for x in nodes), tuple(+w for w in weights)


def legendre_rule_mp(order: int) -> tuple:
    """The ``order``-point Gauss–Legendre rule on [−1, 1] at the current mpmath precision (cached)."""
    if not (isinstance(order, int) and order >= 1):
        raise ValueError(f"order must be a positive integer, got {order!r}")
    return _legendre_rule_mp(order, mpmath.mp.prec)


def gauss_legendre_nodes_mp(points, order: int) -> tuple[list, list]:
    """mpmath nodes and weights of an ``order``-point Gauss–Legendre rule on each piece of ``points``.

    Exact for polynomials of degree < 2·order on each piece; at the current
    mpmath precision.
    """
    x, w = legendre_rule_mp(order)
    nodes, weights = [], []
    for left, right in zip(points[:-1], points[1:]):
        left, right = mpmath.mpf(left), mpmath.mpf(right)
        half, middle = (right - left) / 2, (right + left) / 2
        nodes += [middle + half * xi for xi in x]
        weights += [half * wi for wi in w]
    return nodes, weights
