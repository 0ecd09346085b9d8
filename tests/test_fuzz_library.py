"""Hypothesis fuzzing of the public population functions over the whole parameter range.

(a, b, θ) span a ∈ [−10⁶, 10⁶], b ∈ [10⁻³⁰⁰, 10⁸] (log-uniform), θ ∈ {0, 1, 1 − 10⁻¹⁶,
random}. Each call either returns finite values of the documented accuracy or
raises InputError; nothing else (no NaN, no other exception):

* e, ∇e, ∇²e (mpmath, 20 digits): e against the certified Arb ball to
  10⁻¹⁵·(|θ| + |θ̂|) (e = θ̂ − θ is a difference of two numbers in [0, 1]);
  |e| ≤ 1; ∇e and ∇²e finite;
* the float64 field (L, ∇L, ∇²L): InputError below b = 1e-3 (its documented
  domain), else finite, 0 ≤ L ≤ ½, and ∇L agrees with the 48-point rule to
  1e-9 relative, or 1e-15 of L + |∇L|₁ for a component that cancels (plus
  underflow). Its agreement with certified values is tests/test_quadrature_layers.py's.
"""

from __future__ import annotations

import math
from decimal import Decimal

import mpmath
import numpy as np
import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from stumpcheck.numerics.certified import enclosures as certified
from stumpcheck.numerics.population import quantities as population
from stumpcheck.numerics.precision import InputError

labels = st.floats(min_value=-1e6, max_value=1e6, allow_nan=False)
scales = st.floats(min_value=-300, max_value=8).map(lambda k: 10.0 ** k)
thresholds = st.one_of(st.sampled_from(["0", "1", "0.9999999999999999"]),
                       st.floats(min_value=0, max_value=1).map(repr))

FUZZ = settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def _decimal(x: float) -> str:
    return repr(float(x))


@FUZZ
@given(labels, scales, thresholds)
@example(10.0, 1e-300, "0.3")
@example(-1e6, 1e8, "0.9999999999999999")
@example(1e6, 1e-300, "1")
@example(1e6, 1e6, "0.9999999999999999")
def test_pointwise_error_is_finite_and_matches_the_certified_ball(a, b, theta):
    a_text, b_text = _decimal(a), _decimal(b)
    with mpmath.workdps(20):
        try:
            value = population.error(a_text, b_text, Decimal(theta))
            gradient = population.error_gradient(a_text, b_text, Decimal(theta))
            hessian = population.error_hessian(a_text, b_text, Decimal(theta))
        except InputError:
            return
        assert mpmath.isfinite(value) and abs(value) <= 1
        assert all(mpmath.isfinite(g) for g in gradient) and all(mpmath.isfinite(h) for h in hessian)
    ball = certified.certified_error(a_text, b_text, theta, dps=30)
    with mpmath.workdps(40):
        estimate = abs(mpmath.mpf(theta)) + abs(mpmath.mpf(theta) + ball.mid)
        assert abs(value - ball.mid) <= mpmath.mpf(10) ** -15 * estimate + ball.rad


@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(labels, scales, st.sampled_from(["one-head", "reflected", "averaged", "pooled"]))
@example(10.0, 1e-300, "one-head")
@example(300025.2230715616, 3e5, "one-head")
@example(0.0, 1e-3, "pooled")
def test_float64_field_is_finite_and_converged_or_refused(a, b, estimator):
    try:
        value, gradient = population.loss_and_gradient_float64(a, b, estimator=estimator)
        _, _, hessian = population.loss_gradient_hessian_float64(a, b, estimator=estimator)
    except InputError as exc:
        assert b < population.MIN_FLOAT64_SCALE, exc
        return
    assert b >= population.MIN_FLOAT64_SCALE
    assert math.isfinite(value) and 0 <= value <= 0.5
    assert np.all(np.isfinite(gradient)) and np.all(np.isfinite(hessian))
    _, finer = population.loss_and_gradient_float64(a, b, estimator=estimator, order=48)
    scale = value + float(np.sum(np.abs(finer)))  # a component that cancels (pooled at a = 0) is 0 ± rounding
    for coarse, fine in zip(gradient, finer):
        assert abs(coarse - fine) <= 1e-9 * abs(fine) + 1e-15 * scale + 1e-290


@pytest.mark.parametrize("bad", [float("nan"), float("inf"), -1.0, 0.0, "x", None])
def test_public_functions_raise_input_error_on_bad_parameters(bad):
    as_b = [lambda: population.error(1, bad, "0.5"), lambda: population.loss_and_gradient_float64(1.0, bad),
            lambda: population.loss_gradient_hessian_float64(1.0, bad)]
    as_a = [lambda: population.error(bad, 1, "0.5"), lambda: population.loss_and_gradient_float64(bad, 1.0)]
    for call in as_b + (as_a if bad not in (-1.0, 0.0) else []):  # a may be negative or zero
        with pytest.raises(InputError):
            call()
