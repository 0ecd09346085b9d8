"""L, ∇L and ∇²L of the one-head model in float64, compiled: one pass over every quadrature node.

The population flow evaluates (∇L, ∇²L) thousands of times along one trajectory; this module
does one evaluation as one compiled call (numba), with the breakpoints in closed form.

**The integrand as tilted moments** (docs/model.md §2.1, §3). At threshold θ, with u = 1 − θ,
the head's tilted law q(x) ∝ e^{s(x)} on [0, 1] is a mixture of the left segment [0, θ]
(y = 0, x = θτ with τ ∝ e^{−bθτ} on [0, 1]) and the right segment [θ, 1] (y = 1, x = θ + uτ with
τ ∝ e^{−buτ}), with right weight w = σ(z), z = ℓ_R − ℓ_L. For b > 0 the log-odds of §2.2 is

    z(θ) = a − bθ + log(1 − e^{−bu}) − log(1 − e^{−bθ})

(the log θ, log u and Λ terms combine). The segment cumulants are θᵏκ_k(bθ) and uᵏκ_k(bu),
κ_k the cumulants of the truncated exponential (docs/model.md §2.1). The scores are linear in
(a, b) with ∂s/∂a = y, ∂s/∂b = −x, so the derivatives of the tilted mean μ = θ̂∞ are its central
moments: ∂μ/∂a = Cov(x, y), ∂μ/∂b = −Var x, ∂²μ/∂a² = E[(x − μ)(y − w)²],
∂²μ/∂a∂b = −E[(x − μ)²(y − w)], ∂²μ/∂b² = E[(x − μ)³]. For the two-segment mixture, with
Δ = uκ₁(bu) + θ(1 − κ₁(bθ)) ≥ 0 (the distance between the segment means, a sum of two
non-negative terms), V_R = u²κ₂(bu), V_L = θ²κ₂(bθ), T_R = u³κ₃(bu), T_L = θ³κ₃(bθ):

    e         = w·uκ₁(bu) − (1 − w)·θ(1 − κ₁(bθ))          (the stable form of §2.1)
    ∂e/∂a     = w(1 − w)Δ
    ∂e/∂b     = −[wV_R + (1 − w)V_L + w(1 − w)Δ²]
    ∂²e/∂a²   = w(1 − w)(1 − 2w)Δ
    ∂²e/∂a∂b  = −w(1 − w)[V_R − V_L + (1 − 2w)Δ²]
    ∂²e/∂b²   = wT_R + (1 − w)T_L + 3w(1 − w)Δ(V_R − V_L) + w(1 − w)(1 − 2w)Δ³

(tests check them against the SymPy-generated ``error_jet_one_head``). κ₁, κ₂, κ₃ at β > 0 are
1/β − p, 1/β² − p(1 + p), 2/β³ − p(1 + p)(1 + 2p) with p = 1/(e^β − 1) for β ≥ 2, and their
Taylor series (exact Bernoulli numbers, degree 39) below, where those forms cancel.

**The switch point in closed form.** z(θ*) = 0 is e^{bu*} − 1 = e^{b−a}(1 − e^{−bθ*}), solved by

    bu* = log(1 + (e^b − 1)/(1 + e^a)),    bθ* = log(1 + (e^b − 1)/(1 + e^{b−a})),

each evaluated as a softplus of log(e^b − 1) minus a softplus (no overflow, no cancellation:
u* and θ* both to full relative precision), with the switch width
1/|z′(θ*)| = 1/(b·(1 + 1/(e^{bu*} − 1) + 1/(e^{bθ*} − 1))). No root-finding.

**Quadrature.** θ ∈ [0, ½] is integrated in θ and [½, 1] in u = 1 − θ (so a layer at
u ≈ b⁻³ ≪ 2⁻⁵³ keeps its nodes apart). The features are those of
:func:`stumpcheck.numerics.population.quadrature.breakpoints_float64_split`: the features θ = 0 and
θ = 1 (scale 1/b) and the switch (its width), each with a ladder of points at distances
(scale/4)·growᵏ (``growth`` 4 by default, where that function uses 2); plus θ = ½. Each piece gets an
``order``-point Gauss–Legendre rule (16 by default: about 580 nodes at b = 1200 on the calibration
relation).

Domain: a finite, b ≥ 1e-3, prior Uniform[0, 1]; one-head and reflected estimators (the
reflected error is e′(θ) = −e(1 − θ), so under the symmetric prior its L, ∇L, ∇²L are the
one-head ones). Evidence level: sampled (float64).
"""

from __future__ import annotations

import functools
import math
from fractions import Fraction

import numba
import numpy as np

__all__ = ["DEFAULT_ORDER", "DEFAULT_GROWTH", "switch_point", "loss_gradient_hessian", "quadrature_size"]

#: Gauss–Legendre points per piece. With :data:`DEFAULT_GROWTH` the quadrature error is at the
#: field's rounding level: ∇L and ∇²L agree with a 40-point rule to ≤ 3e-15 of their largest
#: component along the flow from (10, 10) (b = 10 … 3000) and at b up to 10⁵ on the calibration
#: relation, where 14 points give 7e-14 and 12 give 5e-12 (ratio 2 with 10 points: the same accuracy
#: with 10–20 % more nodes).
DEFAULT_ORDER = 16
#: Ratio of successive ladder distances from each feature.
DEFAULT_GROWTH = 4.0
#: Below this β the cumulants come from their Taylor series.
_SWITCH = 2.0
_DEGREE = 20  # Bernoulli terms B₂ … B₄₀


def _taylor_coefficients() -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Taylor coefficients of κ₁, κ₂, κ₃ in powers of β², highest first (for Horner in β²).

    From 1/(e^β − 1) = 1/β − ½ + Σₖ B₂ₖ β^{2k−1}/(2k)!: κ₁ = 1/β − 1/(e^β − 1) = ½ − Σₖ B₂ₖ β^{2k−1}/(2k)!,
    κ₂ = −κ₁′ = Σₖ (2k − 1)B₂ₖ β^{2k−2}/(2k)!, κ₃ = −κ₂′ = −Σₖ (2k − 1)(2k − 2)B₂ₖ β^{2k−3}/(2k)!.
    Returned: c₁ with κ₁ = ½ + β·Σ c₁ⱼβ²ʲ, c₂ with κ₂ = Σ c₂ⱼβ²ʲ, c₃ with κ₃ = β·Σ c₃ⱼβ²ʲ.
    """
    numbers = _bernoulli_numbers(2 * _DEGREE)
    ks = range(1, _DEGREE + 1)
    c1 = [-numbers[2 * k] / math.factorial(2 * k) for k in ks]  # β^{2k−1} = β·(β²)^{k−1}
    c2 = [(2 * k - 1) * numbers[2 * k] / math.factorial(2 * k) for k in ks]  # (β²)^{k−1}
    c3 = [-(2 * k - 1) * (2 * k - 2) * numbers[2 * k] / math.factorial(2 * k) for k in ks[1:]]  # β·(β²)^{k−2}
    return tuple(np.array([float(x) for x in c[::-1]]) for c in (c1, c2, c3))


def _bernoulli_numbers(count: int) -> list[Fraction]:
    """B₀ … B_count exactly (B₁ = −½), from Σ_{k=0}^{m} C(m + 1, k) B_k = 0 for m ≥ 1."""
    numbers = [Fraction(1)]
    for m in range(1, count + 1):
        numbers.append(-sum(math.comb(m + 1, k) * numbers[k] for k in range(m)) / (m + 1))
    return numbers


_KAPPA1, _KAPPA2, _KAPPA3 = _taylor_coefficients()


@numba.njit(cache=True, error_model="numpy")
def _softplus(x):
    return max(x, 0.0) + math.log1p(math.exp(-abs(x)))


@numba.njit(cache=True, error_model="numpy")
def _horner(coefficients, x):
    total = 0.0
    for c in coefficients:
        total = total * x + c
    return total


@numba.njit(cache=True, error_model="numpy")
def _segment(beta, third):
    """(log(1 − e^{−β}), κ₁, κ₂, κ₃ or 0) at β > 0: one exp and one expm1, or the Taylor series below 2."""
    one_minus_q = -math.expm1(-beta)
    log_mass = math.log(one_minus_q)
    if beta < _SWITCH:
        square = beta * beta
        k3 = beta * _horner(_KAPPA3, square) if third else 0.0
        return log_mass, 0.5 + beta * _horner(_KAPPA1, square), _horner(_KAPPA2, square), k3
    p = math.exp(-beta) / one_minus_q  # 1/(e^β − 1)
    inv = 1.0 / beta
    k3 = 2.0 * inv * inv * inv - p * (1.0 + p) * (1.0 + 2.0 * p) if third else 0.0
    return log_mass, inv - p, inv * inv - p * (1.0 + p), k3


@numba.njit(cache=True, error_model="numpy")
def _switch_point(a, b):
    """(bθ*, bu*, width) of the one-head switch, in closed form (module docstring)."""
    log_expm1_b = b + math.log(-math.expm1(-b)) if b > 1.0 else math.log(math.expm1(b))
    b_rest = _softplus(log_expm1_b - _softplus(a))
    b_theta = _softplus(log_expm1_b - _softplus(b - a))
    slope = b * (1.0 + 1.0 / math.expm1(b_rest) + 1.0 / math.expm1(b_theta))
    return b_theta, b_rest, 1.0 / slope


def switch_point(a: float, b: float) -> tuple[float, float, float]:
    """(θ*, 1 − θ*, width 1/|z′(θ*)|) of the one-head switch at (a, b), b > 0, in closed form, float64."""
    b_theta, b_rest, width = _switch_point(float(a), float(b))
    return b_theta / b, b_rest / b, width


@numba.njit(cache=True, error_model="numpy")
def _ladder_into(centre, smallest, growth, lower, n_lower, upper, n_upper):
    """Append centre ± smallest·growᵏ (centre a distance from the feature's end, in (0, 1)) to the halves.

    A point x ∈ (0, 1) of this coordinate goes to the near half (≤ ½) as x, else to the far half as 1 − x
    (exact for x ≥ ½). Returns the new counts.
    """
    step = smallest
    while True:
        added = False
        for point in (centre - step, centre + step):
            if 0.0 < point < 1.0:
                added = True
                if point <= 0.5:
                    lower[n_lower] = point
                    n_lower += 1
                else:
                    upper[n_upper] = 1.0 - point
                    n_upper += 1
        if not added:
            return n_lower, n_upper
        step *= growth


@numba.njit(cache=True, error_model="numpy")
def _feature(centre, scale, growth, near, n_near, far, n_far):
    """One feature at distance ``centre`` from its end: the centre itself and its ladder."""
    smallest = min(scale, 0.25)
    for distance in (centre, 1.0 - centre):
        if 0.0 < distance < smallest:
            smallest = distance / 2
    if 0.0 < centre <= 0.5:
        near[n_near] = centre
        n_near += 1
    elif 0.5 < centre < 1.0:
        far[n_far] = 1.0 - centre
        n_far += 1
    return _ladder_into(centre, smallest / 4, growth, near, n_near, far, n_far)


@numba.njit(cache=True, error_model="numpy")
def _sorted_distinct(points):
    """The distinct values of ``points`` (finite, no −0.0) in increasing order, as ``np.unique`` returns them.

    A Shell sort (gaps 4^k + 3·2^(k−1) + 1) in place, then one pass dropping repeats: a few hundred points,
    each ladder already in order. Written out because numba's ``np.unique`` compiles its quicksort, about
    3 s of a fresh environment's first call, for arrays this small.
    """
    n = points.size
    gaps = [1]
    k = 1
    while True:
        gap = 4**k + 3 * 2 ** (k - 1) + 1
        if gap >= n:
            break
        gaps.append(gap)
        k += 1
    for index in range(len(gaps) - 1, -1, -1):
        gap = gaps[index]
        for i in range(gap, n):
            value = points[i]
            j = i
            while j >= gap and points[j - gap] > value:
                points[j] = points[j - gap]
                j -= gap
            points[j] = value
    count = 1 if n > 0 else 0
    for i in range(1, n):
        if points[i] != points[count - 1]:
            points[count] = points[i]
            count += 1
    return points[:count].copy()


@numba.njit(cache=True, error_model="numpy")
def _pieces(a, b, growth):
    """Sorted distinct breakpoints of θ ∈ [0, ½] and of u = 1 − θ ∈ [0, ½] (both include 0 and ½)."""
    b_theta, b_rest, width = _switch_point(a, b)
    # a ladder doubles from at least the smallest subnormal (2⁻¹⁰⁷⁴) up to 1
    capacity = 3 * (2 * int(1100 * math.log(2.0) / math.log(growth)) + 8)
    theta_points = np.empty(capacity)
    rest_points = np.empty(capacity)
    theta_points[0] = 0.0
    theta_points[1] = 0.5
    rest_points[0] = 0.0
    rest_points[1] = 0.5
    n_theta, n_rest = 2, 2
    n_theta, n_rest = _feature(0.0, 1.0 / b, growth, theta_points, n_theta, rest_points, n_rest)
    n_rest, n_theta = _feature(0.0, 1.0 / b, growth, rest_points, n_rest, theta_points, n_theta)
    if not (b_rest > 0.0 and b_theta > 0.0 and width > 0.0):
        pass  # the switch is closer to an end than the smallest double: it is that end's layer
    elif b_rest <= b_theta:  # the switch in the upper half: placed and laddered by its distance from 1
        n_rest, n_theta = _feature(b_rest / b, width, growth, rest_points, n_rest, theta_points, n_theta)
    else:
        n_theta, n_rest = _feature(b_theta / b, width, growth, theta_points, n_theta, rest_points, n_rest)
    return _sorted_distinct(theta_points[:n_theta]), _sorted_distinct(rest_points[:n_rest])


@numba.njit(cache=True, error_model="numpy")
def _accumulate(a, b, theta, rest, weight, hessian, out):
    """Add weight·(½e², e∇e, ∇e∇eᵀ + e∇²e) at one node (θ, u = 1 − θ, both exact) to ``out``."""
    bt = b * theta
    bu = b * rest
    log_right, r1, r2, r3 = _segment(bu, hessian)
    log_left, l1, l2, l3 = _segment(bt, hessian)
    linear = (a - b) + bu if theta > 0.5 else a - bt
    z = linear + log_right - log_left
    if z >= 0.0:
        ez = math.exp(-z)
        w = 1.0 / (1.0 + ez)
        v = ez * w  # 1 − w
    else:
        ez = math.exp(z)
        v = 1.0 / (1.0 + ez)
        w = ez * v
    right = rest * r1
    left = theta * (1.0 - l1)
    delta = right + left
    wv = w * v
    v_right = rest * rest * r2
    v_left = theta * theta * l2
    e = w * right - v * left
    ea = wv * delta
    eb = -(w * v_right + v * v_left + wv * delta * delta)
    out[0] += weight * 0.5 * e * e
    out[1] += weight * e * ea
    out[2] += weight * e * eb
    if hessian:
        tilt = v - w  # 1 − 2w
        spread = v_right - v_left
        eaa = wv * tilt * delta
        eab = -wv * (spread + tilt * delta * delta)
        ebb = (w * rest * rest * rest * r3 + v * theta * theta * theta * l3 + 3.0 * wv * delta * spread
               + wv * tilt * delta * delta * delta)
        out[3] += weight * (ea * ea + e * eaa)
        out[4] += weight * (ea * eb + e * eab)
        out[5] += weight * (eb * eb + e * ebb)


@numba.njit(cache=True, error_model="numpy")
def _integrate(a, b, nodes, weights, growth, hessian):
    """(L, ∂L/∂a, ∂L/∂b, ∂²L/∂a², ∂²L/∂a∂b, ∂²L/∂b², node count) over θ ∈ [0, 1]."""
    theta_points, rest_points = _pieces(a, b, growth)
    out = np.zeros(7)
    for half in range(2):
        points = theta_points if half == 0 else rest_points
        for i in range(points.size - 1):
            mid = 0.5 * (points[i] + points[i + 1])
            radius = 0.5 * (points[i + 1] - points[i])
            for k in range(nodes.size):
                x = mid + radius * nodes[k]
                if half == 0:
                    _accumulate(a, b, x, 1.0 - x, radius * weights[k], hessian, out)
                else:
                    _accumulate(a, b, 1.0 - x, x, radius * weights[k], hessian, out)
            out[6] += nodes.size
    return out


@functools.lru_cache(maxsize=8)
def _rule(order: int) -> tuple[np.ndarray, np.ndarray]:
    return np.polynomial.legendre.leggauss(order)


def loss_gradient_hessian(a: float, b: float, *, order: int = DEFAULT_ORDER, growth: float = DEFAULT_GROWTH,
                          hessian: bool = True) -> tuple[float, np.ndarray, np.ndarray | None]:
    """(L, ∇L, ∇²L or None) of the one-head model at (a, b), prior Uniform[0, 1], float64, one compiled call.

    No validation (the callers validate: a finite, b ≥ 1e-3); raises ArithmeticError if a result is
    not finite.
    """
    nodes, weights = _rule(order)
    out = _integrate(float(a), float(b), nodes, weights, float(growth), hessian)
    gradient = out[1:3].copy()
    hess = np.array([[out[3], out[4]], [out[4], out[5]]]) if hessian else None
    if not (math.isfinite(out[0]) and np.all(np.isfinite(out[1:6]))):
        raise ArithmeticError(f"non-finite loss, gradient or Hessian at a={a}, b={b}")
    return float(out[0]), gradient, hess


def quadrature_size(a: float, b: float, *, order: int = DEFAULT_ORDER, growth: float = DEFAULT_GROWTH) -> int:
    """Number of θ-nodes :func:`loss_gradient_hessian` uses at (a, b)."""
    nodes, weights = _rule(order)
    return int(_integrate(float(a), float(b), nodes, weights, float(growth), False)[6])
