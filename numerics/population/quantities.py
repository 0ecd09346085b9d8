"""Population quantities at any precision, evaluated from the generated code.

Pointwise: e(θ), ∇e, ∇²e from :mod:`stumpcheck.numerics.generated.population_mpmath`
(mpmath) or ``population_numpy`` (float64), which ``stumpcheck export`` writes
from the SymPy derivation.

Integrated over the prior θ ~ Uniform[lo, hi] (docs/model.md §1, §3):

    L(a, b)   = (hi − lo)⁻¹ ∫ ½ e² dθ
    ∇L(a, b)  = (hi − lo)⁻¹ ∫ e ∇e dθ
    ∇²L(a, b) = (hi − lo)⁻¹ ∫ (∇e ∇eᵀ + e ∇²e) dθ

with mpmath's tanh-sinh on the pieces given by
:func:`stumpcheck.numerics.population.quadrature.breakpoints`, at ``dps`` digits plus guard bits.
This level of evidence is *high-precision*: :func:`with_evidence` evaluates at
two precisions and reports how many digits agree. Certified enclosures are the
verified-numerics issue's job.
"""

from __future__ import annotations

from dataclasses import dataclass
from decimal import Decimal, localcontext

import mpmath
import numpy as np

from stumpcheck.numerics.generated import population_mpmath as gen_mp
from stumpcheck.numerics.generated import population_numpy as gen_np
from stumpcheck.numerics.precision import InputError, agreeing_digits, guard_bits, validate_dps
from stumpcheck.numerics.population.quadrature import (breakpoints, breakpoints_float64_split, breakpoints_split, gauss_legendre_nodes_mp,
                                 gauss_legendre_nodes_split)

__all__ = ["ESTIMATORS", "check_parameters", "error", "error_gradient", "error_hessian",
           "loss", "loss_gradient", "loss_hessian", "loss_and_gradient_float64", "Evaluation",
           "with_evidence", "error_extrema", "loss_gradient_hessian_float64", "loss_gradient_hessian_gauss_legendre"]

ESTIMATORS = ("one-head", "reflected", "averaged", "pooled")
#: Largest attention scale b for the mpmath θ-integrals L, ∇L, ∇²L (the issue's range is b ≤ 10⁶;
#: b = 10⁷ takes about 16 s at 15 digits, b = 10⁴⁰⁰ did not finish in a minute).
MAX_INTEGRAL_SCALE = 1e8
#: Smallest b for the float64 field (L, ∇L, ∇²L by Gauss–Legendre): below it ∂L/∂a ≈ O(b) is left from a
#: cancellation of O(1) terms and loses about 2·log₁₀(1/b) digits (relative error 1e-11 at b = 1e-3,
#: 1e-8 at b = 1e-8, the wrong sign at b = 1e-300, against 60-digit references).
MIN_FLOAT64_SCALE = 1e-3


def _tag(estimator: str) -> str:
    if estimator not in ESTIMATORS:
        raise InputError(f"unknown estimator {estimator!r}; expected one of {', '.join(ESTIMATORS)}")
    return estimator.replace("-", "_")


def check_parameters(a, b, theta=None, *, prior=(0, 1)) -> None:
    """Raise :class:`InputError` unless a is finite, b > 0 finite, θ ∈ [0, 1], prior valid."""
    for name, value in (("a", a), ("b", b)) + ((("theta", theta),) if theta is not None else ()):
        try:
            finite = mpmath.isfinite(_mpf(value))
        except (TypeError, ValueError):
            raise InputError(f"{name} must be a real number, got {value!r}") from None
        if not finite:
            raise InputError(f"{name} must be finite, got {value}")
    if not _mpf(b) > 0:
        raise InputError(f"b must be > 0 (the attention scale), got {b}")
    if theta is not None and not 0 <= _mpf(theta) <= 1:
        raise InputError(f"theta must lie in [0, 1], got {theta}")
    lo, hi = prior
    if not 0 <= _mpf(lo) < _mpf(hi) <= 1:
        raise InputError(f"prior Uniform[l, u] needs 0 <= l < u <= 1, got [{lo}, {hi}]")


def _mpf(value):
    return mpmath.mpf(str(value)) if isinstance(value, Decimal) else mpmath.mpf(value)


def _near_one(function, a, b, theta):
    """``function(a, b, θ)`` with 1 − θ kept to the working precision when θ is near 1.

    θ (an exact binary mpf, or a decimal read exactly) has u = 1 − θ formed
    exactly; the generated code forms 1 − θ, b − bθ and log1p(−θ) from θ, so
    it runs with −log₂ u extra bits, which makes each of them accurate to the
    working precision relative to u (a switch layer at 1 − θ* ≈ e^{−(a−b)}/b
    is far below the spacing of the working precision near 1). The result is
    rounded back to the working precision.
    """
    prec = mpmath.mp.prec
    if isinstance(theta, (str, Decimal)):
        exact = Decimal(str(theta).strip())
        if exact < Decimal("0.5"):
            return function(a, b, _mpf(exact))
        with localcontext() as context:  # exact: 1 − θ has no more digits than θ's fraction
            context.prec = len(exact.as_tuple().digits) + 10
            rest = Decimal(1) - exact
        if rest == 0:
            return function(a, b, _mpf(exact))
        with mpmath.workprec(prec + 8 + max(0, -int(mpmath.mag(_mpf(rest))))):
            return _rounded(function(a, b, 1 - _mpf(rest)), prec)
    theta = _mpf(theta)
    if theta < 0.5:
        return function(a, b, theta)
    rest = mpmath.fsub(1, theta, exact=True)
    if rest == 0:
        return function(a, b, theta)
    with mpmath.workprec(prec + 8 + max(0, -int(mpmath.mag(rest)))):
        return _rounded(function(a, b, theta), prec)


def _at_rest(function, rest):
    """``function(1 − u)`` for u = ``rest`` ∈ (0, ½], with −log₂ u extra bits (see :func:`_near_one`)."""
    prec = mpmath.mp.prec
    if rest == 0:
        return function(mpmath.mpf(1))
    with mpmath.workprec(prec + 8 + max(0, -int(mpmath.mag(rest)))):
        return _rounded(function(mpmath.fsub(1, rest, exact=True)), prec)


def _rounded(value, prec):
    with mpmath.workprec(prec):
        if isinstance(value, tuple):
            return tuple(_rounded(v, prec) for v in value)
        return +value


def error(a, b, theta, *, estimator: str = "one-head"):
    """e(θ) at the current mpmath precision (θ: mpf, or a decimal string/Decimal read exactly)."""
    check_parameters(a, b, theta)
    return _near_one(getattr(gen_mp, f"error_{_tag(estimator)}"), _mpf(a), _mpf(b), theta)


def error_gradient(a, b, theta, *, estimator: str = "one-head"):
    """(∂e/∂a, ∂e/∂b) at the current mpmath precision."""
    check_parameters(a, b, theta)
    return _near_one(getattr(gen_mp, f"error_gradient_{_tag(estimator)}"), _mpf(a), _mpf(b), theta)


def error_hessian(a, b, theta, *, estimator: str = "one-head"):
    """(∂²e/∂a², ∂²e/∂a∂b, ∂²e/∂b²) at the current mpmath precision."""
    check_parameters(a, b, theta)
    return _near_one(getattr(gen_mp, f"error_hessian_{_tag(estimator)}"), _mpf(a), _mpf(b), theta)


def _integrate(integrand, a, b, estimator, prior, subdivide: int = 1):
    """(hi − lo)⁻¹ ∫ integrand dθ on the breakpoint pieces, accurate to the caller's precision.

    Pieces in the lower half are integrated in θ; pieces in [½, 1] in
    u = 1 − θ, with the integrand evaluated at θ = 1 − u exactly and −log₂ u
    extra bits (:func:`_at_rest`), so layers closer to 1 than the working
    precision's spacing are resolved. ``subdivide`` > 1 cuts every piece into
    that many equal parts (an independent second quadrature for the
    two-precision check). tanh-sinh's error estimate is loose by a few digits,
    so the quadrature runs with 40 + 10% guard bits and the result is rounded
    back.
    """
    if _mpf(b) > MAX_INTEGRAL_SCALE:
        raise InputError(f"θ-integrals (L, ∇L, ∇²L) are supported for b <= {MAX_INTEGRAL_SCALE:g}, got b={b}")
    prec = mpmath.mp.prec
    # at b < 1 the gradient's ∂e/∂a = O(b) is left from O(1) terms: log₂(1/b) bits cancel
    small_scale = max(0, -int(mpmath.mag(_mpf(b))))
    with mpmath.workprec(prec + 40 + prec // 10 + small_scale):
        lo, hi = (_mpf(p) for p in prior)
        thetas, rests = breakpoints_split(a, b, estimator=estimator, lo=lo, hi=hi, growth=_GROWTH)
        half = mpmath.mpf(0.5)
        lower = [t for t in thetas if t < half] + ([half] if lo < half else [])
        upper = sorted(([half] if hi > half else []) + [r for t, r in zip(thetas, rests) if t > half])
        if lo >= half:
            upper = sorted(r for t, r in zip(thetas, rests) if t >= half)
        if hi <= half:
            lower = [t for t in thetas if t <= half]
        total = mpmath.mpf(0)
        if len(lower) > 1:
            total += mpmath.quad(integrand, _subdivided(lower, subdivide))
        if len(upper) > 1:
            total += mpmath.quad(lambda u: _at_rest(integrand, u), _subdivided(upper, subdivide))
        value = total / (hi - lo)
    return +value


_GROWTH = 2


def _subdivided(points, parts: int) -> list:
    if parts <= 1:
        return list(points)
    out = [points[0]]
    for left, right in zip(points[:-1], points[1:]):
        out += [left + (right - left) * k / parts for k in range(1, parts)] + [right]
    return out


def loss(a, b, *, estimator: str = "one-head", prior=(0, 1), subdivide: int = 1):
    """L(a, b) at the current mpmath precision (θ-quadrature with model breakpoints)."""
    check_parameters(a, b, prior=prior)
    a, b = _mpf(a), _mpf(b)
    f = getattr(gen_mp, f"error_{_tag(estimator)}")
    return _integrate(lambda th: f(a, b, th) ** 2 / 2, a, b, estimator, prior, subdivide)


def loss_gradient(a, b, *, estimator: str = "one-head", prior=(0, 1), subdivide: int = 1):
    """(∂L/∂a, ∂L/∂b) at the current mpmath precision."""
    check_parameters(a, b, prior=prior)
    a, b = _mpf(a), _mpf(b)
    one_pass = getattr(gen_mp, f"error_and_gradient_{_tag(estimator)}")
    # both quadratures visit the same nodes: evaluate e·∇e once per node
    memo: dict = {}

    def product(th):
        if th not in memo:
            e, ga, gb = one_pass(a, b, th)
            memo[th] = (e * ga, e * gb)
        return memo[th]

    return tuple(_integrate(lambda th, i=i: product(th)[i], a, b, estimator, prior, subdivide) for i in range(2))


def loss_hessian(a, b, *, estimator: str = "one-head", prior=(0, 1), subdivide: int = 1):
    """(∂²L/∂a², ∂²L/∂a∂b, ∂²L/∂b²) at the current mpmath precision."""
    check_parameters(a, b, prior=prior)
    a, b = _mpf(a), _mpf(b)
    tag = _tag(estimator)
    f, g, h = (getattr(gen_mp, f"{name}_{tag}") for name in ("error", "error_gradient", "error_hessian"))
    pairs = ((0, 0, 0), (0, 1, 1), (1, 1, 2))

    memo: dict = {}

    def integrand(th, i, j, k):
        if th not in memo:
            memo[th] = (f(a, b, th), g(a, b, th), h(a, b, th))
        e, grad, hess = memo[th]
        return grad[i] * grad[j] + e * hess[k]

    return tuple(_integrate(lambda th, p=p: integrand(th, *p), a, b, estimator, prior, subdivide) for p in pairs)


def loss_and_gradient_float64(a: float, b: float, *, estimator: str = "one-head", prior=(0, 1),
                              order: int = 24) -> tuple[float, np.ndarray]:
    """(L, ∇L) in float64: Gauss–Legendre of ``order`` points on each breakpoint piece.

    Pieces in [½, 1] are placed by their distances from 1
    (:func:`stumpcheck.numerics.population.quadrature.breakpoints_float64_split`), so switch layers
    closer to 1 than 1.1e-16 are resolved. Domain: a finite, b ≥ 1e-3
    (:data:`MIN_FLOAT64_SCALE`; InputError below). Accuracy against certified
    values: relative ≲ b·2⁻⁵³ + 1e-11 per component, plus absolute underflow
    (a component below 1e-300 may be returned as 0).
    """
    check_parameters(a, b, prior=prior)
    _check_float64_scale(b)
    value, gradient, _ = _gauss_legendre_float64(float(a), float(b), estimator, prior, order, False)
    return value, gradient


def _check_float64_scale(b) -> None:
    if not float(b) >= MIN_FLOAT64_SCALE:
        raise InputError(f"the float64 field (L, ∇L, ∇²L) is supported for b >= {MIN_FLOAT64_SCALE:g}, got b={b} "
                         "(use the mpmath loss_gradient or eval grad below)")


def _gauss_legendre_float64(a: float, b: float, estimator: str, prior, order: int, hessian: bool):
    """(L, ∇L, ∇²L or None) in float64 by the breakpoint Gauss–Legendre rule (no validation)."""
    points, rests = breakpoints_float64_split(a, b, estimator=estimator, lo=float(prior[0]), hi=float(prior[1]))
    nodes, rest, weights = gauss_legendre_nodes_split(points, order, rests)
    tag = _tag(estimator)
    if hessian:
        e, ga, gb, haa, hab, hbb = getattr(gen_np, f"error_jet_{tag}")(a, b, nodes, rest)
    else:
        e, ga, gb = getattr(gen_np, f"error_and_gradient_{tag}")(a, b, nodes, rest)
    scale = 1.0 / (float(prior[1]) - float(prior[0]))
    we = weights * e
    value = scale * float(np.dot(we, e)) / 2
    gradient = scale * np.array([np.dot(we, ga), np.dot(we, gb)])
    hess = None
    if hessian:
        h_aa = np.dot(weights, ga * ga) + np.dot(we, haa)
        h_ab = np.dot(weights, ga * gb) + np.dot(we, hab)
        h_bb = np.dot(weights, gb * gb) + np.dot(we, hbb)
        hess = scale * np.array([[h_aa, h_ab], [h_ab, h_bb]])
    if not (np.isfinite(value) and np.all(np.isfinite(gradient)) and (hess is None or np.all(np.isfinite(hess)))):
        raise ArithmeticError(f"non-finite loss, gradient or Hessian at a={a}, b={b}")
    return value, gradient, hess


def loss_gradient_hessian_float64(a: float, b: float, *, estimator: str = "one-head", prior=(0, 1),
                                  order: int = 24) -> tuple[float, np.ndarray, np.ndarray]:
    """(L, ∇L, ∇²L) in float64 (∇²L a symmetric 2×2 array over (a, b)).

        L = (hi − lo)⁻¹ ∫ ½e² dθ,  ∇L = (hi − lo)⁻¹ ∫ e∇e dθ,  ∇²L = (hi − lo)⁻¹ ∫ (∇e∇eᵀ + e∇²e) dθ

    from the generated float64 e, ∇e, ∇²e, by the same rule as
    :func:`loss_and_gradient_float64`: ``order``-point Gauss–Legendre on each
    piece of :func:`stumpcheck.numerics.population.quadrature.breakpoints_float64` (L and ∇L agree
    with it to rounding). Domain: a finite, b ≥ 1e-3; raises ArithmeticError if
    a result is not finite. Evidence level: sampled (float64).
    """
    check_parameters(a, b, prior=prior)
    _check_float64_scale(b)
    _tag(estimator)
    return _gauss_legendre_float64(float(a), float(b), estimator, prior, order, True)


def loss_gradient_hessian_gauss_legendre(a, b, *, order: int, estimator: str = "one-head", prior=(0, 1),
                                         hessian: bool = True):
    """(L, ∇L, ∇²L or None) at the current mpmath precision by breakpoint Gauss–Legendre.

    ``order`` points on each piece of :func:`stumpcheck.numerics.population.quadrature.breakpoints`
    (nodes from :func:`stumpcheck.numerics.population.quadrature.gauss_legendre_nodes_mp` at the
    working precision), integrands from the generated mpmath e, ∇e, ∇²e. The
    quadrature error is not estimated here: compare two orders (the
    high-precision flow does). ∇L is a tuple (∂L/∂a, ∂L/∂b), ∇²L a nested
    2×2 tuple. Much faster than :func:`loss_gradient` (no tanh-sinh, no
    adaptive levels) when ``order`` is known to suffice.
    """
    check_parameters(a, b, prior=prior)
    tag = _tag(estimator)
    a, b = _mpf(a), _mpf(b)
    lo, hi = _mpf(prior[0]), _mpf(prior[1])
    first = getattr(gen_mp, f"error_and_gradient_{tag}")
    jet = getattr(gen_mp, f"error_jet_{tag}")
    nodes, weights = gauss_legendre_nodes_mp(breakpoints(a, b, estimator=estimator, lo=lo, hi=hi), order)
    l_terms, ga_terms, gb_terms, haa, hab, hbb = [], [], [], [], [], []
    for th, w in zip(nodes, weights):
        if hessian:
            e, ga, gb, h_aa, h_ab, h_bb = jet(a, b, th)
        else:
            e, ga, gb = first(a, b, th)
        we = w * e
        l_terms.append(we * e)
        ga_terms.append(we * ga)
        gb_terms.append(we * gb)
        if hessian:
            haa.append(w * ga * ga + we * h_aa)
            hab.append(w * ga * gb + we * h_ab)
            hbb.append(w * gb * gb + we * h_bb)
    scale = 1 / (hi - lo)
    value = scale * mpmath.fsum(l_terms) / 2
    gradient = (scale * mpmath.fsum(ga_terms), scale * mpmath.fsum(gb_terms))
    hess = None
    if hessian:
        off = scale * mpmath.fsum(hab)
        hess = ((scale * mpmath.fsum(haa), off), (off, scale * mpmath.fsum(hbb)))
    return value, gradient, hess


@dataclass(frozen=True)
class Evaluation:
    """A value at ``dps`` digits with its evidence: the digits it shares with a
    second evaluation at ``check_dps`` digits (level ``high-precision``)."""

    values: tuple
    dps: int
    check_dps: int
    agreeing_digits: float
    evidence: str = "high-precision"


def with_evidence(compute, dps: int) -> Evaluation:
    """Run ``compute()`` (returning a tuple of mpf) at dps and at dps + 10 + 10%.

    The two runs share the quadrature: pass inputs as exact decimals (θ as a
    string or Decimal, so 1 − θ is exact at both precisions) and prefer
    :func:`stumpcheck.numerics.evidence.verified_evaluation`, whose second run is
    independent and which raises the precision until the digits agree.
    """
    dps = validate_dps(dps)
    check_dps = dps + 10 + dps // 10
    with mpmath.workprec(int(dps * 3.3219280948873626) + guard_bits(dps)):
        values = tuple(compute())
    with mpmath.workprec(int(check_dps * 3.3219280948873626) + guard_bits(check_dps)):
        reference = tuple(compute())
        digits = min(agreeing_digits(v, r) for v, r in zip(values, reference))
    return Evaluation(values=values, dps=dps, check_dps=check_dps, agreeing_digits=digits)


def error_extrema(a, b, *, lo=0, hi=1, estimator: str = "one-head", samples: int = 64):
    """(inf e, θ_inf, sup e, θ_sup) over θ ∈ [lo, hi] at the current mpmath precision.

    Evidence level *sampled*: e is evaluated on every θ-breakpoint in [lo, hi]
    (they resolve every layer) plus ``samples`` points per piece' worth of an
    even grid, and the best point of each is refined by golden-section search
    on its neighbouring interval. A rigorous bound over a θ-ball is
    :func:`stumpcheck.numerics.certified.enclosures.certified_error` with an interval θ.
    """
    check_parameters(a, b, lo)
    check_parameters(a, b, hi)
    lo, hi = _mpf(lo), _mpf(hi)
    if not lo <= hi:
        raise InputError(f"need lo <= hi, got [{lo}, {hi}]")
    a, b = _mpf(a), _mpf(b)
    f = getattr(gen_mp, f"error_{_tag(estimator)}")
    grid = sorted(set([p for p in breakpoints(a, b, estimator=estimator) if lo <= p <= hi]
                      + [lo + (hi - lo) * mpmath.mpf(i) / samples for i in range(samples + 1)]))
    values = [f(a, b, th) for th in grid]

    def refine(index, sign):
        left, right = grid[max(index - 1, 0)], grid[min(index + 1, len(grid) - 1)]
        golden = (mpmath.sqrt(5) - 1) / 2
        for _ in range(80):
            m1, m2 = right - golden * (right - left), left + golden * (right - left)
            if sign * f(a, b, m1) > sign * f(a, b, m2):
                right = m2
            else:
                left = m1
        best = (left + right) / 2
        candidates = [(sign * values[index], grid[index]), (sign * f(a, b, best), best)]
        value, where = max(candidates)
        return sign * value, where

    i_max = max(range(len(grid)), key=lambda i: values[i])
    i_min = min(range(len(grid)), key=lambda i: values[i])
    sup, theta_sup = refine(i_max, 1)
    inf, theta_inf = refine(i_min, -1)
    return inf, theta_inf, sup, theta_sup
