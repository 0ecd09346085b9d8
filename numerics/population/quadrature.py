"""θ-quadrature with breakpoints placed from the model's own scales (docs/model.md §8).

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

from stumpcheck.numerics.generated import population_mpmath as gen_mp
from stumpcheck.numerics.generated import population_numpy as gen_np

_EPS = float(np.finfo(float).eps)

__all__ = ["one_head_log_odds", "transition_point", "transition_point_float64", "breakpoints",
           "breakpoints_split", "breakpoints_float64", "breakpoints_float64_split", "gauss_legendre_nodes", "gauss_legendre_nodes_split", "legendre_rule_float64", "legendre_rule_mp",
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
    """(θ*, 1 − θ*, width): the root of z(θ) = 0 and the switch width ``1/|z'(θ*)|``.

    z → +∞ as θ → 0, −∞ as θ → 1, strictly decreasing; the root is found in
    the logit s = log(θ/(1 − θ)) ∈ [−4000, 4000] (θ = 1/(1 + e^{−s}),
    1 − θ = 1/(1 + e^{s}), both without cancellation), at 80 bits, by Newton's
    method from s = 0 safeguarded by the bracket (a bisection step whenever a
    Newton step leaves it), to 2⁻⁴⁰ relative in s: dz/ds = −1 − bθ(1 − θ)(1 −
    κ₁(b(1 − θ)) − κ₁(bθ)) ≤ −1, and z is close to linear in s away from the
    switch, so a few steps do what bisection did in about 50 (each evaluation
    costs two Λ). A root beyond that range means the switch layer is narrower
    than e^{−4000}; the end is returned.
    """
    with mpmath.workprec(80):
        a, b = mpmath.mpf(a), mpmath.mpf(b)

        def theta_rest(s):
            return 1 / (1 + mpmath.exp(-s)), 1 / (1 + mpmath.exp(s))

        def z_of_logit(s):
            theta, rest = theta_rest(s)
            return one_head_log_odds(a, b, theta, rest)

        def slope_of_logit(s):
            theta, rest = theta_rest(s)
            return -1 - b * theta * rest * (1 - gen_mp.trunc_exp_cumulant(1, b * rest)
                                            - gen_mp.trunc_exp_cumulant(1, b * theta))

        lo, hi = mpmath.mpf(-logit_range), mpmath.mpf(logit_range)
        if z_of_logit(lo) <= 0:
            s = lo
        elif z_of_logit(hi) >= 0:
            s = hi
        else:
            s = mpmath.mpf(0)
            for _ in range(200):
                value = z_of_logit(s)
                if value == 0:
                    break
                if value > 0:
                    lo = s
                else:
                    hi = s
                step = -value / slope_of_logit(s)
                tolerance = mpmath.mpf(2) ** -40 * (1 + abs(s))
                if lo < s + step < hi:
                    s = s + step
                    if abs(step) <= tolerance:
                        break
                else:
                    s = (lo + hi) / 2
                if hi - lo <= tolerance:
                    break
        theta_star, rest = theta_rest(s)
        slope = b + 1 / rest + 1 / theta_star - b * (
            gen_mp.trunc_exp_cumulant(1, b * rest) + gen_mp.trunc_exp_cumulant(1, b * theta_star))
        return theta_star, rest, 1 / abs(slope)


def _ladder(center, smallest, lo, hi, out: list, growth: int = 2) -> None:
    step = smallest
    while True:
        added = False
        for point in (center - step, center + step):
            if lo < point < hi:
                out.append(point)
                added = True
        if not added:
            return
        step *= growth


def _features(estimator: str, a, b, rest, width, zero, one) -> list:
    """(centre θ, centre 1 − θ, scale) of every layer of ``estimator``'s θ-integrands.

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

    Each centre comes with its distance from 1, formed without cancellation
    (the one-head switch sits at 1 − θ* ≈ e^{−(a−b)}/b, far below the spacing
    of the working precision near 1), so that a layer near θ = 1 is placed and
    laddered in u = 1 − θ.
    """
    features = [(zero, one, 1 / b), (one, zero, 1 / b)]
    if estimator in ("one-head", "averaged", "pooled"):
        features.append((one - rest, rest, width))
    if estimator in ("reflected", "averaged", "pooled"):
        features.append((rest, one - rest, width))
    if estimator == "pooled":
        features.append(((zero + one) / 2, (zero + one) / 2, 1 / (2 * b)))
        for centre, distance in ((a / b, (b - a) / b), (one - a / b, a / b)):
            if zero < centre < one:
                features.append((centre, distance, 1 / b))
    return features


def _split_points_from_features(features, lo, hi, one, growth: int = 2) -> list:
    """Sorted, distinct (θ, 1 − θ) pairs: [lo, hi], the centres, and a ladder about each centre.

    A centre in the upper half [½, 1] is laddered in u = 1 − θ (its points
    are u_c ± step, and θ = 1 − u), one in the lower half in θ; each pair
    keeps 1 − θ to the working precision's relative accuracy.
    """
    half = one / 2
    pairs = [(lo, one - lo), (hi, one - hi)]
    for center, rest, scale in features:
        smallest = min(scale, (hi - lo) / 4)
        # near an end the feature cannot be wider than its distance to the end
        for distance in (center, rest):
            if 0 < distance < smallest:
                smallest = distance / 2
        upper = center >= half
        offsets: list = []
        if upper:
            _ladder(rest, smallest / 4, one - hi, one - lo, offsets, growth)
            found = [(one - u, u) for u in offsets]
            if one - hi < rest < one - lo:
                found.append((center, rest))
        else:
            _ladder(center, smallest / 4, lo, hi, offsets, growth)
            found = [(t, one - t) for t in offsets]
            if lo < center < hi:
                found.append((center, rest))
        pairs += found

    def key(pair):
        theta, rest = pair
        return (0, theta) if theta < half else (1, -rest)

    out, seen = [], set()
    for pair in sorted(pairs, key=key):
        if key(pair) not in seen:
            seen.add(key(pair))
            out.append(pair)
    return out


def _points_from_features(features, lo, hi, one) -> list:
    """The θ values of :func:`_split_points_from_features`, rounded and made distinct."""
    return sorted(set(theta for theta, _ in _split_points_from_features(features, lo, hi, one)))


def breakpoints_split(a, b, *, estimator: str = "one-head", lo=0, hi=1, growth: int = 2) -> tuple[list, list]:
    """(θ points, 1 − θ points) of :func:`breakpoints` (mpmath), each 1 − θ formed without cancellation.

    In the upper half the distance from 1 is the primary coordinate: a layer at
    1 − θ* ≈ 10⁻¹³² (a = 400, b = 100) has its ladder 1 − θ* ± 2ᵏ·width/4 placed
    to the working precision relative to 1 − θ, while the θ values next to it
    round to 1. Integrate pieces in [½, 1] in u = 1 − θ
    (:func:`stumpcheck.numerics.population.quantities` does).
    """
    a, b = mpmath.mpf(a), mpmath.mpf(b)
    lo, hi = mpmath.mpf(lo), mpmath.mpf(hi)
    _, rest, width = transition_point(a, b)
    pairs = _split_points_from_features(_features(estimator, a, b, rest, width, mpmath.mpf(0), mpmath.mpf(1)),
                                        lo, hi, mpmath.mpf(1), growth)
    return [p[0] for p in pairs], [p[1] for p in pairs]


def breakpoints(a, b, *, estimator: str = "one-head", lo=0, hi=1) -> list:
    """Sorted subinterval endpoints of [lo, hi] for the θ-integrals at (a, b) (mpmath).

    Features: θ = 0 and θ = 1 (scale 1/b), and the softmax switch θ* of each
    head (scale = its width); the reflected head's switch is 1 − θ* of the
    one-head model by the reflection symmetry; for the pooled softmax also the
    switches between the heads' segments (θ = ½, a/b, 1 − a/b; see
    :func:`_features`). Ladders double from a quarter of each feature's scale
    up to the length of [lo, hi]; features in the upper half are laddered in
    1 − θ. The θ values are rounded to the working precision, so points
    closer to 1 than its spacing merge: :func:`breakpoints_split` keeps them.
    """
    a, b = mpmath.mpf(a), mpmath.mpf(b)
    lo, hi = mpmath.mpf(lo), mpmath.mpf(hi)
    _, rest, width = transition_point(a, b)
    return _points_from_features(_features(estimator, a, b, rest, width, mpmath.mpf(0), mpmath.mpf(1)),
                                  lo, hi, mpmath.mpf(1))


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
                                  float(lo), float(hi), 1.0)


def breakpoints_float64_split(a: float, b: float, *, estimator: str = "one-head", lo: float = 0.0,
                              hi: float = 1.0) -> tuple[np.ndarray, np.ndarray]:
    """Float64 (θ points, 1 − θ points) of :func:`breakpoints_float64`, 1 − θ without cancellation.

    Near θ = 1 the doubles can only place θ on a grid of 1.1e-16; on the
    calibration relation at b ≥ 3·10⁵ the switch layer sits at 1 − θ* ≈ b⁻³
    below that, and breakpoints in θ merged into 1 (∂L/∂a came out with the
    wrong sign). The distances from 1 keep every layer apart; pass them to
    :func:`gauss_legendre_nodes_split`.
    """
    _, rest, width = transition_point_float64(float(a), float(b))
    pairs = _split_points_from_features(_features(estimator, float(a), float(b), rest, width, 0.0, 1.0),
                                        float(lo), float(hi), 1.0)
    return np.array([p[0] for p in pairs]), np.array([p[1] for p in pairs])


def gauss_legendre_nodes(points, order: int = 24) -> tuple[np.ndarray, np.ndarray]:
    """Float64 nodes and weights of an ``order``-point Gauss–Legendre rule on each piece."""
    x, w = np.polynomial.legendre.leggauss(order)
    p = np.asarray([float(q) for q in points])
    left, right = p[:-1, None], p[1:, None]
    half = (right - left) / 2
    nodes = (left + right) / 2 + half * x[None, :]
    weights = half * w[None, :]
    return nodes.ravel(), weights.ravel()


def gauss_legendre_nodes_split(points, order: int, rests=None) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(θ nodes, 1 − θ nodes, weights) of the ``order``-point Gauss–Legendre rule on each piece, float64.

    Pieces in [½, 1] are mapped by their distances from 1 (exact there, by
    Sterbenz's lemma), so 1 − θ at each node has full relative precision: a
    layer at 1 − 2e-10 of width 2e-10 is resolved, where θ itself can only be
    placed on the 1.1e-16 grid of doubles near 1 (an error of 5e-7 of the
    layer's width per node; it made ∂L/∂a wrong by 2e-8 relative at b = 1000).
    ``rests`` (1 − θ at each point, from :func:`breakpoints_float64_split`)
    place the upper pieces by the given distances instead of 1 − θ, so layers
    closer to 1 than 1.1e-16 are resolved too.
    """
    x, w = legendre_rule_float64(order)
    p = np.asarray([float(q) for q in points])
    r = 1.0 - p if rests is None else np.asarray([float(q) for q in rests])
    left, right = p[:-1, None], p[1:, None]
    r_left, r_right = r[:-1, None], r[1:, None]
    upper = left[:, 0] >= 0.5
    half = (right - left) / 2
    half[upper] = (r_left[upper] - r_right[upper]) / 2
    nodes = (left + right) / 2 + half * x[None, :]
    rest = 1.0 - nodes
    # distance from 1: midpoint of the distances, minus the offset (the rule is symmetric)
    rest[upper] = (r_left[upper] + r_right[upper]) / 2 - half[upper] * x[None, :]
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
