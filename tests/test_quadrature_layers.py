"""Every layer of the θ-integrands gets breakpoints: the pooled estimator's cross-head switches.

The pooled softmax compares the one-head and reflected segments with each
other, which puts layers of width about 1/b at θ = ½, a/b and 1 − a/b (see
numerics.quadrature._features). Before they were breakpoints the float64 and
mpmath L, ∇L of the pooled estimator were off by up to 1e-2 relative at b = 100
while two quadrature orders still agreed to 1e-4. The reference here is an
independent, deliberately over-refined float64 rule that knows nothing of the
model's layers: uniform pieces of width 1/(16b), plus geometric ladders down
to 1e-15 at both ends (where the one-head and reflected switches sit).
"""

from __future__ import annotations

import numpy as np
import pytest

from numerics.generated import population_numpy as gen_np
from numerics.population import loss_and_gradient_float64, loss_gradient_hessian_float64
from numerics.quadrature import breakpoints_float64


def _over_refined(a: float, b: float, estimator: str):
    """(L, ∇L) by 20-point Gauss–Legendre on a uniform grid of width 1/(16b) plus end ladders."""
    pieces = set(np.linspace(0.0, 1.0, int(16 * b) + 1).tolist())
    step = 1e-15
    while step < 1 / (16 * b):
        pieces.update((step, 1.0 - step))
        step *= 2
    points = np.array(sorted(pieces))
    x, w = np.polynomial.legendre.leggauss(20)
    half = (points[1:] - points[:-1])[:, None] / 2
    nodes = ((points[1:] + points[:-1])[:, None] / 2 + half * x).ravel()
    weights = (half * w).ravel()
    tag = estimator.replace("-", "_")
    e = getattr(gen_np, f"error_{tag}")(a, b, nodes)
    ga, gb = getattr(gen_np, f"error_gradient_{tag}")(a, b, nodes)
    return float(np.dot(weights, e * e) / 2), np.array([np.dot(weights, e * ga), np.dot(weights, e * gb)])


@pytest.mark.parametrize("a_b", [(200.0, 100.0), (120.0, 100.0), (60.0, 100.0), (30.0, 100.0), (-20.0, 100.0)],
                         ids=["a=2b", "a=1.2b", "a/b=0.6", "a/b=0.3", "a<0"])
def test_pooled_loss_and_gradient_agree_with_over_refined_rule(a_b):
    a, b = a_b
    value, gradient = loss_and_gradient_float64(a, b, estimator="pooled")
    reference_value, reference_gradient = _over_refined(a, b, "pooled")
    assert abs(value - reference_value) <= 1e-10 * reference_value
    assert np.max(np.abs(gradient - reference_gradient)) <= 1e-9 * np.max(np.abs(reference_gradient))


@pytest.mark.parametrize("a_b", [(120.0, 100.0), (60.0, 100.0)])
def test_pooled_breakpoints_include_the_cross_head_switches(a_b):
    a, b = a_b
    points = breakpoints_float64(a, b, estimator="pooled")
    for centre in (0.5, a / b, 1 - a / b):
        if 0 < centre < 1:
            assert centre in points


def test_pooled_hessian_quadrature_converges_in_the_order():
    """Orders 16 and 32 on the breakpoints agree (they did to only 2e-3 without the cross switches)."""
    low = loss_gradient_hessian_float64(200.0, 100.0, estimator="pooled", order=16)
    high = loss_gradient_hessian_float64(200.0, 100.0, estimator="pooled", order=32)
    assert abs(low[0] - high[0]) <= 1e-12 * high[0]
    assert np.max(np.abs(low[2] - high[2])) <= 1e-10 * np.max(np.abs(high[2]))
