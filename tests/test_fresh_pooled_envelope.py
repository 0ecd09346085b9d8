"""The pooled estimator's risk bracketed through its weight's envelope (numerics/certified/enclosures/
fresh_pooled_envelope.py): against the pooled risk by quadrature, against sampled pooled contexts, the
perturbation bound ρ = e^{b − a} against the weights themselves, and the reflection symmetry."""

from __future__ import annotations

import math

import numpy as np
import pytest
from flint import arb

from stumpcheck.numerics.certified.enclosures.fresh_pooled_envelope import perturbation_bound, pooled_risk_bracket
from stumpcheck.numerics.certified.enclosures.fresh_risk import fresh_context_risk


def _inside(ball, bracket) -> bool:
    """The ball [lower, upper] (an Enclosure) lies inside [bracket[0], bracket[1]] (decimal strings)."""
    return float(ball.lower) >= float(bracket[0]) and float(ball.upper) <= float(bracket[1])


@pytest.mark.parametrize("a, b, theta", [(25, 20, "0.4"),
                                         pytest.param(21, 20, "1", marks=pytest.mark.slow)])
def test_pooled_quadrature_lies_within_rho_of_the_envelope(a, b, theta):
    """The pooled bias, √MSE and mean-absolute-error bracket by quadrature (the weight v + v′ itself) lie in the
    envelope's ρ-brackets (at a − b = 1 and θ = 1, ρ = e⁻¹ and the smaller head weighs most near x = 0)."""
    pooled = fresh_context_risk(a, b, theta, 10, dps=15, rel_width=1e-6, estimator="pooled")
    bracket = pooled_risk_bracket(a, b, theta, 10)
    assert _inside(pooled.bias, bracket["bias"])
    root = [math.sqrt(float(pooled.mse.lower)), math.sqrt(float(pooled.mse.upper))]
    assert float(bracket["root_mse"][0]) <= root[0] and root[1] <= float(bracket["root_mse"][1])
    low, high = (float(x) for x in bracket["mean_abs_error"])
    assert low <= float(pooled.mean_abs_error.lower) and float(pooled.mean_abs_error.upper) <= high


def test_rho_bounds_the_smaller_head_everywhere():
    """r(x) = (smaller weight)/(larger weight) ≤ e^{b − a} on a fine grid of both sides (and equals it at x = 0, 1)."""
    a, b, theta = 72.3, 64.0, 0.37
    x = np.linspace(0.0, 1.0, 20001)
    label = x >= theta
    log_v = np.where(label, a, 0.0) - b * x
    log_v2 = np.where(label, 0.0, a) - b * (1 - x)
    ratio = np.exp(np.minimum(log_v, log_v2) - np.maximum(log_v, log_v2))
    rho = perturbation_bound(a, b)
    assert float(ratio.max()) <= float(rho.upper()) * (1 + 1e-12)
    assert float(ratio.max()) >= float(rho.lower()) * (1 - 1e-9)


def test_meets_sampled_pooled_contexts():
    """At C8's first grid point (b = 64, a = calibration_a(64), N = 16) the 95% interval of the sampled mean
    |θ̂ − θ| of the pooled estimator meets the certified bracket at θ ∈ {0, 0.3}."""
    from stumpcheck.claims.boundary_fresh import _frozen
    from stumpcheck.numerics.corpus.fresh import _errors

    a, b = _frozen(16, 4.0)
    for theta in (0.0, 0.3):
        errors = np.abs(_errors(a, b, theta, 16, estimator="pooled", reps=40_000, seed=0, sampler=None,
                                chunk=2 ** 20))
        half = 1.96 * errors.std(ddof=1) / math.sqrt(errors.size)
        low, high = (float(x) for x in pooled_risk_bracket(a, b, theta, 16)["mean_abs_error"])
        assert errors.mean() - half <= high and errors.mean() + half >= low


def test_reflection_flips_the_bias():
    """The envelope is symmetric under x → 1 − x, θ → 1 − θ: the bias at 1 − θ is minus the bias at θ."""
    left, right = pooled_risk_bracket(30, 24, "0.3", 12), pooled_risk_bracket(30, 24, "0.7", 12)
    lo, hi = (arb(v) for v in left["envelope"]["bias"])
    lo2, hi2 = (arb(v) for v in right["envelope"]["bias"])
    assert (lo.union(hi)).overlaps(-(lo2.union(hi2)))
    assert left["envelope"]["mse"] == right["envelope"]["mse"] or \
        arb(left["envelope"]["mse"][0]).union(arb(left["envelope"]["mse"][1])).overlaps(
            arb(right["envelope"]["mse"][0]).union(arb(right["envelope"]["mse"][1])))
