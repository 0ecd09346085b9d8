"""Population derivatives, loss, input checks and θ-quadrature (docs/model.md §3, §8).

* Every symbolic derivative in the generated code (∇e, ∇²e for the four
  estimators) is checked at real points against high-precision finite
  differences (``mpmath.diff``) of the generated e itself.
* ∇L against finite differences of L; the float64 loss against the mpmath one.
* :func:`stumpcheck.numerics.population.quantities.check_parameters` rejects what the model excludes.
* The breakpoints resolve the switch θ*; a quadrature that ignores them is
  wrong at large b, while ``loss()`` agrees with a much finer reference.
"""

from __future__ import annotations

import math

import mpmath
import numpy as np
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from stumpcheck.numerics.population import quantities as population
from stumpcheck.numerics.generated import population_mpmath as gen_mp
from stumpcheck.numerics.generated import population_numpy as gen_np
from stumpcheck.numerics.precision import InputError
from stumpcheck.numerics.population.quadrature import breakpoints, transition_point
from tests.strategies import parameters

ESTIMATORS = ("one-head", "reflected", "averaged", "pooled")
TAGS = {"one-head": "one_head", "reflected": "reflected", "averaged": "averaged", "pooled": "pooled"}


def _functions(estimator):
    tag = TAGS[estimator]
    return tuple(getattr(gen_mp, f"{name}_{tag}") for name in ("error", "error_gradient", "error_hessian"))


# ---------------------------------------------------------------------------
# ∇e and ∇²e against finite differences of e
# ---------------------------------------------------------------------------

#: (derivative orders in (a, b), index into (∇e..., ∇²e...)) for each checked entry
ENTRIES = (("de/da", (1, 0)), ("de/db", (0, 1)), ("d2e/da2", (2, 0)), ("d2e/dadb", (1, 1)), ("d2e/db2", (0, 2)))


def _finite_difference(f, a, b, orders, scale):
    """(∂^{i+j} f/∂a^i ∂b^j by ``mpmath.diff``, its absolute accuracy).

    mpmath.diff evaluates f at (n + 1)·(prec + 20) bits with steps 2^{−prec−10},
    so the derivative carries an absolute error of about T·2^{−prec−20}, T the
    size of the terms f is made of (|e|'s terms are at most 1). A derivative of
    size S therefore needs log₁₀(1/S) more digits — an exponentially small one
    (a one-sided softmax) that many more. S only *sets the precision* (capped at
    1500 extra digits); the result does not depend on it beyond that.
    """
    extra = 0 if scale == 0 else max(0, int(-mpmath.log10(scale)))
    dps = 45 + min(extra, 1500)
    with mpmath.workdps(dps):
        value = mpmath.diff(f, (mpmath.mpf(a), mpmath.mpf(b)), orders)
    return value, mpmath.mpf(10) ** -dps


def _analytic_entries(estimator, a, b, theta):
    _, gradient, hessian = _functions(estimator)
    g = gradient(a, b, theta)
    h = hessian(a, b, theta)
    return [g[0], g[1], h[0], h[1], h[2]]


def _sensitivities(estimator, a, b, theta):
    """Per entry q: |q| + |a ∂q/∂a| + |b ∂q/∂b| + |∂q/∂θ|.

    An evaluation that is exact for inputs perturbed by a relative ε (θ and
    1 − θ by an absolute ε) is off by about ε times this. Central differences
    of the analytic entries with relative steps 1e−20 (one-sided at θ ∈ {0, 1}).
    """
    base = _analytic_entries(estimator, a, b, theta)
    total = [abs(q) for q in base]
    h = mpmath.mpf(10) ** -20
    for index, point in ((0, a), (1, b)):
        step = h * max(abs(point), 1)
        args = [a, b, theta]
        args[index] = point + step
        up = _analytic_entries(estimator, *args)
        args[index] = point - step
        down = _analytic_entries(estimator, *args)
        for i in range(len(total)):
            total[i] += abs(point) * abs(up[i] - down[i]) / (2 * step)
    lo, hi = max(theta - h, mpmath.mpf(0)), min(theta + h, mpmath.mpf(1))
    up = _analytic_entries(estimator, a, b, hi)
    down = _analytic_entries(estimator, a, b, lo)
    for i in range(len(total)):
        total[i] += abs(up[i] - down[i]) / (hi - lo)
    return total


def _check_derivatives(estimator, a, b, theta):
    mpmath.mp.dps = 50
    a, b, theta = mpmath.mpf(a), mpmath.mpf(b), mpmath.mpf(theta)
    error = _functions(estimator)[0]
    analytic = _analytic_entries(estimator, a, b, theta)
    # Accuracy scale of each entry: its sensitivity to relative perturbations of
    # the inputs (so an entry that is exactly 0 at this point, e.g. ∂²e/∂a² where
    # the two segment masses are equal, is judged by how fast it moves); for the
    # averaged and pooled estimators plus the two heads' scales (both are means
    # of the heads, so cancellation between the heads' contributions is
    # structural — pooled has θ̂ ≡ 1/2 when a = 0 — and rounding is relative to
    # each head's terms). The reference's own absolute accuracy (``noise``) is
    # added; it matters only where the scale is 0.
    scales_ = _sensitivities(estimator, a, b, theta)
    if estimator in ("averaged", "pooled"):
        for head in ("one-head", "reflected"):
            for i, v in enumerate(_sensitivities(head, a, b, theta)):
                scales_[i] += v
    references = [_finite_difference(lambda p, q: error(p, q, theta), a, b, orders, scale)
                  for (_, orders), scale in zip(ENTRIES, scales_)]
    bad = [(name, mpmath.nstr(got, 20), mpmath.nstr(ref, 20))
           for (name, _), got, (ref, noise), scale in zip(ENTRIES, analytic, references, scales_)
           if abs(got - ref) > mpmath.mpf(10) ** -30 * (scale + abs(ref)) + noise]
    assert not bad, (estimator, (float(a), float(b), float(theta)), bad)


@pytest.mark.parametrize("estimator", ESTIMATORS)
@settings(max_examples=8, deadline=None)
@given(point=parameters(min_b=1e-2, max_b=1e3, min_offset=-50, max_offset=300))
@example(point=(3.0, 2.0, 0.25))
@example(point=(200.0, 0.5, 0.5))
@example(point=(0.5, 1.0, 0.5))
@example(point=(2.2250738585072014e-306, 100.0, 2.2250738585072014e-308))
def test_error_derivatives_match_finite_differences(estimator, point):
    """∂e/∂a, ∂e/∂b and the three Hessian entries agree with mpmath.diff of e to
    30 digits (analytic values at 50 digits), b up to 1e3, a − bθ in [−50, 300]."""
    _check_derivatives(estimator, *point)


@pytest.mark.parametrize("estimator", ESTIMATORS)
def test_error_derivatives_when_both_label_segments_dominate(estimator):
    """a − bθ = 700, b = 0.064, θ = 0.754: for the pooled softmax the two
    a-carrying segments (one-head right, reflected left) have about equal masses
    and the others are e^{−700} smaller, so ∂e/∂a ≈ e^{−700}·O(1) — a
    well-conditioned value that must come out to 30 digits like any other."""
    _check_derivatives(estimator, 700.0 + 0.064 * 0.754, 0.064, 0.754)


def test_error_derivatives_vanish_where_e_is_constant():
    """At θ ∈ {0, 1} each head has one segment left, so its e does not depend on
    a (the pooled estimator still does: it mixes a − bx with −b(1 − x) at θ = 0)."""
    mpmath.mp.dps = 50
    for estimator in ("one-head", "reflected", "averaged"):
        for theta in (0, 1):
            g = _functions(estimator)[1](mpmath.mpf(5), mpmath.mpf(3), mpmath.mpf(theta))
            assert g[0] == 0, (estimator, theta)


def test_population_wrappers_match_generated_code():
    """stumpcheck.numerics.population.quantities.error/_gradient/_hessian are the generated functions."""
    mpmath.mp.dps = 30
    for estimator in ESTIMATORS:
        e, g, h = _functions(estimator)
        args = (mpmath.mpf(7), mpmath.mpf(4), mpmath.mpf("0.375"))
        assert population.error(*args, estimator=estimator) == e(*args)
        assert tuple(population.error_gradient(*args, estimator=estimator)) == tuple(g(*args))
        assert tuple(population.error_hessian(*args, estimator=estimator)) == tuple(h(*args))


# ---------------------------------------------------------------------------
# Loss: gradient, float64 path
# ---------------------------------------------------------------------------

_LOSS_CACHE: dict = {}


def _mp_loss(a, b, dps, estimator="one-head"):
    """population.loss at ``dps`` digits, cached across tests (each takes seconds)."""
    key = (str(a), str(b), dps, estimator)
    if key not in _LOSS_CACHE:
        with mpmath.workdps(dps):
            _LOSS_CACHE[key] = population.loss(a, b, estimator=estimator)
    return _LOSS_CACHE[key]


CALIBRATED_B = 1000


def calibrated_a(dps=40):
    """The calibrated label score a = b + 2 log b at b = 1e3, at ``dps`` digits."""
    with mpmath.workdps(dps):
        return mpmath.mpf(CALIBRATED_B) + 2 * mpmath.log(CALIBRATED_B)


LOSS_POINTS = [(3, 5), (40, 30), (float(calibrated_a()), 1000.0)]


@pytest.mark.parametrize("point", LOSS_POINTS, ids=["a=3,b=5", "a=40,b=30", "calibrated-b=1e3"])
def test_float64_loss_matches_mpmath_loss(point):
    """loss_and_gradient_float64 (Gauss–Legendre on float64 breakpoints) agrees
    with the mpmath loss to 1e−10 relative."""
    a, b = point
    value, gradient = population.loss_and_gradient_float64(float(a), float(b))
    assert np.all(np.isfinite(gradient)) and gradient.shape == (2,)
    reference = _mp_loss(a, b, 20)
    assert abs(value - reference) <= 1e-10 * abs(reference)


@pytest.mark.slow
@pytest.mark.parametrize("point", [(3, 5), (40, 30)], ids=["a=3,b=5", "a=40,b=30"])
def test_loss_gradient_matches_finite_differences(point):
    """loss_gradient (∫ e∇e dθ at 30 digits) vs mpmath.diff of loss (at 20 digits
    mpmath.diff works at ~52 digits with steps 2^−76), and the float64 gradient."""
    a, b = (mpmath.mpf(p) for p in point)
    with mpmath.workdps(30):
        gradient = population.loss_gradient(a, b)
    with mpmath.workdps(20):
        fd = (mpmath.diff(lambda p: population.loss(p, b), a),
              mpmath.diff(lambda q: population.loss(a, q), b))
    for got, want in zip(gradient, fd):
        assert abs(got - want) <= mpmath.mpf(10) ** -18 * abs(want), (got, want)
    _, g64 = population.loss_and_gradient_float64(float(a), float(b))
    for got, want in zip(g64, gradient):
        assert abs(mpmath.mpf(float(got)) - want) <= 1e-10 * abs(want)


# ---------------------------------------------------------------------------
# Input validation
# ---------------------------------------------------------------------------


@pytest.mark.parametrize("a, b, theta", [
    (1.0, 0.0, 0.5), (1.0, -1e-300, 0.5), (1.0, -3.0, 0.5),
    (1.0, 1.0, -1e-300), (1.0, 1.0, 1.0000000000000002), (1.0, 1.0, 2.0),
    (math.nan, 1.0, 0.5), (1.0, math.nan, 0.5), (1.0, 1.0, math.nan),
    (math.inf, 1.0, 0.5), (-math.inf, 1.0, 0.5), (1.0, math.inf, 0.5), (1.0, 1.0, math.inf),
    ("nan", 1.0, 0.5), (1.0, "inf", 0.5),
])
def test_check_parameters_rejects_invalid_points(a, b, theta):
    with pytest.raises(InputError):
        population.check_parameters(a, b, theta)
    assert issubclass(InputError, ValueError)


@pytest.mark.parametrize("prior", [(0.5, 0.5), (0.7, 0.2), (-0.1, 0.5), (0.0, 1.5), (math.nan, 1.0)])
def test_check_parameters_rejects_invalid_priors(prior):
    with pytest.raises(InputError):
        population.check_parameters(1.0, 1.0, prior=prior)


@settings(max_examples=30, deadline=None)
@given(point=parameters(min_b=1e-300, max_b=1e300, min_offset=-1e6, max_offset=1e6))
def test_check_parameters_accepts_the_domain(point):
    a, b, theta = point
    population.check_parameters(a, b, theta)  # does not raise


@pytest.mark.parametrize("call", ["error", "error_gradient", "error_hessian"])
def test_pointwise_functions_validate(call):
    with pytest.raises(InputError):
        getattr(population, call)(1.0, -1.0, 0.5)
    with pytest.raises(InputError):
        getattr(population, call)(1.0, 1.0, 1.5)
    with pytest.raises(InputError):
        getattr(population, call)(1.0, 1.0, 0.5, estimator="two-head")


def test_loss_functions_validate():
    for call in (population.loss, population.loss_gradient, population.loss_and_gradient_float64):
        with pytest.raises(InputError):
            call(1.0, 0.0)
        with pytest.raises(InputError):
            call(math.nan, 1.0)


# ---------------------------------------------------------------------------
# Breakpoints and the transition point
# ---------------------------------------------------------------------------


def _log_odds(a, b, logit):
    """ℓ_R − ℓ_L of the one-head model at θ = 1/(1 + e^{−logit}), from the two masses
    written out here: ∫_θ^1 e^{a − bx} dx = e^{a − bθ}(−expm1(−b(1 − θ)))/b and
    ∫_0^θ e^{−bx} dx = −expm1(−bθ)/b (θ and 1 − θ from the logit, no cancellation)."""
    theta, rest = 1 / (1 + mpmath.exp(-logit)), 1 / (1 + mpmath.exp(logit))
    return a - b * theta + mpmath.log(-mpmath.expm1(-b * rest)) - mpmath.log(-mpmath.expm1(-b * theta))


@settings(max_examples=30, deadline=None)
@given(point=parameters(min_b=1e-2, max_b=1e4, min_offset=-50, max_offset=1e3), estimator=st.sampled_from(ESTIMATORS))
def test_breakpoints_sorted_in_unit_interval_and_contain_switch(point, estimator):
    """Breakpoints are strictly increasing, start at 0, end at 1, and contain θ*
    (one-head), 1 − θ* (reflected) — both for the symmetrizations — whenever
    the switch is inside (0, 1); θ* is a sign change of the one-head log-odds."""
    a, b, _ = point
    mpmath.mp.dps = 30
    points = breakpoints(a, b, estimator=estimator)
    assert points[0] == 0 and points[-1] == 1
    assert all(p < q for p, q in zip(points, points[1:]))
    theta_star, rest, width = transition_point(a, b)
    assert width > 0
    with mpmath.workprec(200):
        assert abs(theta_star + rest - 1) <= mpmath.mpf(2) ** -70
    if 0 < theta_star < 1 and rest > 0:
        if estimator in ("one-head", "averaged", "pooled"):
            assert any(abs(p - (1 - rest)) <= mpmath.mpf(2) ** -60 * max(1 - rest, mpmath.mpf(10) ** -300)
                       for p in points), "θ* missing"
        if estimator in ("reflected", "averaged", "pooled"):
            assert any(abs(p - rest) <= mpmath.mpf(2) ** -60 * rest for p in points), "1 − θ* missing"
    # θ* is where the one-head log-odds changes sign (independent formula)
    with mpmath.workdps(60):
        a_, b_ = mpmath.mpf(a), mpmath.mpf(b)
        if theta_star > 1e-250 and rest > 1e-250:
            s = mpmath.log(theta_star / rest)
            delta = mpmath.mpf(2) ** -30 * (1 + abs(s))
            assert _log_odds(a_, b_, s - delta) > 0 > _log_odds(a_, b_, s + delta)


@pytest.mark.parametrize("lo, hi", [(0.0, 1.0), (0.25, 0.75), (0.0, 0.5), (0.9, 1.0)])
def test_breakpoints_respect_a_prior_interval(lo, hi):
    for a, b in ((3, 5), (1013.8, 1000), (500, 1000), (1e4, 1e4)):
        points = breakpoints(a, b, lo=lo, hi=hi)
        assert points[0] == lo and points[-1] == hi
        assert all(p < q for p, q in zip(points, points[1:]))


def test_breakpoints_resolve_a_narrow_interior_switch():
    """At b = 1e3, a = b/2 the switch sits at θ* ≈ 1/2 with width ~1/b: the
    breakpoints must put pieces no wider than a few widths next to it."""
    mpmath.mp.dps = 30
    theta_star, rest, width = transition_point(500, 1000)
    assert abs(theta_star - mpmath.mpf(1) / 2) < 0.01
    assert width < 0.01
    points = breakpoints(500, 1000)
    right = min(p for p in points if p > theta_star)
    left = max(p for p in points if p < theta_star)
    assert right - theta_star <= width and theta_star - left <= width


# ---------------------------------------------------------------------------
# The quadrature hazard (docs/model.md §8)
# ---------------------------------------------------------------------------


def _one_head_integrand(a, b):
    return lambda th: gen_mp.error_one_head(a, b, th) ** 2 / 2


def test_naive_quadrature_is_wrong_at_large_scale():
    """A quadrature that ignores the model's scales silently returns a wrong loss.

    * interior switch (b = 1e3, a = b/2, θ* ≈ 1/2 with width 1e−3): plain
      mpmath.quad (tanh-sinh) on [0, 1] is off in the 4th digit;
    * calibrated (b = 1e3, a = b + 2 log b): the layers sit at θ = 0 and next to
      θ = 1, where tanh-sinh's nodes cluster, so there plain tanh-sinh happens
      to be right — but a fixed-order Gauss–Legendre rule on [0, 1] (the float64
      path without breakpoints) is off in the 3rd digit.
    """
    mpmath.mp.dps = 20
    b = 1000
    interior = 500
    naive = mpmath.quad(_one_head_integrand(mpmath.mpf(interior), mpmath.mpf(b)), [0, 1])
    right = _mp_loss(interior, b, 20)
    assert abs(naive - right) > mpmath.mpf(10) ** -5 * right

    calibrated = LOSS_POINTS[2][0]  # the float nearest b + 2 log b
    right = _mp_loss(calibrated, 1000.0, 20)
    naive_gl = mpmath.quad(_one_head_integrand(mpmath.mpf(calibrated), mpmath.mpf(b)), [0, 1],
                           method="gauss-legendre")
    assert abs(naive_gl - right) > mpmath.mpf(10) ** -4 * right
    # the float64 path without its breakpoints: 24-point Gauss–Legendre on [0, 1]
    nodes, weights = np.polynomial.legendre.leggauss(24)
    e = gen_np.error_one_head(calibrated, 1000.0, (nodes + 1) / 2)
    naive64 = float(np.dot(weights / 2, e * e / 2))
    assert abs(naive64 - float(right)) > 1e-3 * float(right)
    value64, _ = population.loss_and_gradient_float64(calibrated, 1000.0)
    assert abs(value64 - float(right)) <= 1e-10 * float(right)


def _refined_reference(a, b, dps):
    """An independent, much finer θ-quadrature of L at ``dps`` digits.

    Pieces: every breakpoint piece cut in 4, plus this file's own ladder
    around θ* (located from :func:`_log_odds`, not from stumpcheck.numerics.population.quadrature)
    and around θ = 0 and 1 at spacings 2^j/(16 b); tanh-sinh with maxdegree 10.
    """
    with mpmath.workdps(dps):
        a, b = mpmath.mpf(a), mpmath.mpf(b)
        base = breakpoints(a, b)
        pieces = set()
        for p, q in zip(base, base[1:]):
            pieces.update(p + (q - p) * k / 4 for k in range(5))
        # θ* by bisection of the independent log-odds in the logit
        lo, hi = mpmath.mpf(-700), mpmath.mpf(700)
        for _ in range(200):
            mid = (lo + hi) / 2
            if _log_odds(a, b, mid) > 0:
                lo = mid
            else:
                hi = mid
        star = 1 / (1 + mpmath.exp(-(lo + hi) / 2))
        for center in (mpmath.mpf(0), mpmath.mpf(1), star):
            step = 1 / (16 * b)
            while step < 1:
                pieces.update(p for p in (center - step, center + step) if 0 < p < 1)
                step *= 2
            if 0 < center < 1:
                pieces.add(center)
        points = sorted(pieces)
        return mpmath.quad(_one_head_integrand(a, b), points, maxdegree=10)


@pytest.mark.slow
@pytest.mark.parametrize("a", ["calibrated", 500], ids=["calibrated", "interior-switch"])
def test_loss_agrees_with_refined_reference(a):
    """loss() at 30 digits agrees with the refined reference to ≥ 25 digits at b = 1e3."""
    b = mpmath.mpf(CALIBRATED_B)
    a = calibrated_a(30) if a == "calibrated" else mpmath.mpf(a)
    value = _mp_loss(a, b, 30)
    reference = _refined_reference(a, b, 30)
    assert abs(value - reference) <= mpmath.mpf(10) ** -25 * abs(reference)
