"""Every layer of the θ-integrands gets breakpoints: the pooled estimator's cross-head switches.

The pooled softmax compares the one-head and reflected segments with each
other, which puts layers of width about 1/b at θ = ½, a/b and 1 − a/b (see
stumpcheck.numerics.population.quadrature._features). Before they were breakpoints the float64 and
mpmath L, ∇L of the pooled estimator were off by up to 1e-2 relative at b = 100
while two quadrature orders still agreed to 1e-4. The reference here is an
independent, deliberately over-refined float64 rule that knows nothing of the
model's layers: uniform pieces of width 1/(16b), plus geometric ladders down
to 1e-15 at both ends (where the one-head and reflected switches sit).
"""

from __future__ import annotations

import numpy as np
import pytest

from stumpcheck.numerics.generated import population_numpy as gen_np
from stumpcheck.numerics.population.quantities import loss_and_gradient_float64, loss_gradient_hessian_float64
from stumpcheck.numerics.population.quadrature import breakpoints_float64


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


def test_float64_gradient_resolves_a_switch_layer_next_to_one():
    """On the calibration relation at b = 1000 the one-head switch sits at 1 − θ* ≈ 2e-10 with width ≈ 2e-10.

    θ near 1 lives on the 1.1e-16 grid of doubles, 5e-7 of that width: with nodes
    placed in θ, ∂L/∂a was wrong by 2.2e-8 relative and ∇²L by 4e-9. Nodes placed
    by their distance from 1 (gauss_legendre_nodes_split, 1 − θ passed to the
    generated one-pass functions) give float64 rounding level against 30 digits.
    """
    import mpmath

    from stumpcheck.numerics.population.quantities import loss_gradient_hessian_gauss_legendre

    a, b = 1015.3155, 1000.0
    value, gradient, hessian = loss_gradient_hessian_float64(a, b)
    with mpmath.workdps(30):
        ref_value, ref_gradient, ref_hessian = loss_gradient_hessian_gauss_legendre(a, b, order=24)
    assert abs(value / float(ref_value) - 1) <= 1e-14
    for got, want in zip(gradient, ref_gradient):
        assert abs(got / float(want) - 1) <= 1e-13
    for i in range(2):
        for j in range(2):
            assert abs(hessian[i][j] / float(ref_hessian[i][j]) - 1) <= 1e-13


def test_split_nodes_are_exact_distances_from_one():
    from stumpcheck.numerics.population.quadrature import gauss_legendre_nodes_split

    points = [0.0, 0.25, 0.5, 1 - 2**-30, 1 - 2**-40, 1.0]
    nodes, rest, weights = gauss_legendre_nodes_split(points, 8)
    assert abs(weights.sum() - 1.0) <= 1e-15
    upper = nodes >= 0.5
    # in the upper pieces 1 − θ is carried exactly; θ itself is its rounding
    assert np.all(nodes[upper] == 1.0 - rest[upper])
    last = rest[-8:]
    assert last.min() > 0 and last.max() < 2**-40
    assert np.allclose(np.sort(last) * 2**41 - 1, np.sort(np.polynomial.legendre.leggauss(8)[0]), rtol=0, atol=1e-14)


# Certified values (stumpcheck.numerics.certified.enclosures, 20 digits, rel_width 1e-15 for ∇L and 1e-13 for ∇²L), pinned:
# (a, b, (∂L/∂a, ∂L/∂b), (∂²L/∂a², ∂²L/∂a∂b, ∂²L/∂b²)). The first two are on the calibration
# relation at b = 3e5 and 1e6 (switch layer at 1 − θ* ≈ b⁻³ < 1e-16); the others are off it with
# a − b beyond 37 − ln b, where breakpoints placed in θ merged into 1 and ∂L/∂a came out with
# the wrong sign (+7.8e-23 for −1.85e-17 at b = 3e5).
CERTIFIED_FIELD = [
    (300025.2230715616, 300000.0, (-1.8518388498582465e-17, -1.8518265059478896e-17),
     (1.8518388489231397e-17, -1.851832676194666e-17, 1.851863539950772e-17)),
    (1000027.6310199322, 1000000.0, (-4.999989469041243e-19, -4.999979469224682e-19),
     (4.999989468789933e-19, -4.999984468816913e-19, 5.0000094687096465e-19)),
    (200.0, 100.0, (-1.7994571189386366e-46, -9.639382929052122e-07),
     (1.7994571189386366e-46, -1.7820622371602637e-46, 2.8557531716208486e-08)),
    (1050.0, 1000.0, (-9.61205430316946e-26, -9.963938292905212e-10),
     (9.61205430316946e-26, -9.602473912076278e-26, 2.985575317162181e-12)),
    (60.0, 20.0, (-8.96117328222066e-20, -0.00010246143903022071),
     (8.961173282220657e-20, -8.591732551265701e-20, 1.4242293216572311e-05)),
    (160.0, 30.0, (-5.186809378701752e-59, -3.258497443285696e-05),
     (5.186809378701752e-59, -5.03370997403786e-59, 3.110095356587133e-06)),
]


def _field_tolerance(b: float) -> float:
    """Relative accuracy of the float64 field: a − bθ carries an absolute rounding of b·ε."""
    return b * 2.0 ** -53 + 1e-13


@pytest.mark.parametrize("a, b, gradient, hessian", CERTIFIED_FIELD)
def test_float64_field_matches_certified_values_where_the_switch_is_below_float_spacing(a, b, gradient, hessian):
    from stumpcheck.numerics.population.quantities import loss_and_gradient_float64, loss_gradient_hessian_float64

    _, found = loss_and_gradient_float64(a, b)
    _, _, found_hessian = loss_gradient_hessian_float64(a, b)
    tol = _field_tolerance(b)
    for value, reference in zip(found, gradient):
        assert value == pytest.approx(reference, rel=tol)
    for value, reference in zip((found_hessian[0, 0], found_hessian[0, 1], found_hessian[1, 1]), hessian):
        assert value == pytest.approx(reference, rel=tol)


@pytest.mark.slow
@pytest.mark.parametrize("a, b, gradient, hessian", CERTIFIED_FIELD)
def test_pinned_certified_field_values_recomputed(a, b, gradient, hessian):
    from stumpcheck.numerics.certified.enclosures import certified_loss_gradient, certified_loss_hessian

    for ball, pinned in zip(certified_loss_gradient(repr(a), repr(b), dps=20, rel_width=1e-15), gradient):
        assert abs(float(ball.mid) / pinned - 1) < 1e-14
    for ball, pinned in zip(certified_loss_hessian(repr(a), repr(b), dps=20, rel_width=1e-13), hessian):
        assert abs(float(ball.mid) / pinned - 1) < 1e-12


def test_split_breakpoints_keep_a_switch_closer_to_one_than_float_spacing():
    from stumpcheck.numerics.generated.asymptotics_numpy import calibration_a
    from stumpcheck.numerics.population.quadrature import breakpoints_float64_split, transition_point_float64

    b = 3e5
    a = float(calibration_a(b))
    _, rest_star, width = transition_point_float64(a, b)
    assert rest_star < 1e-16  # θ* itself rounds to 1 in float64
    thetas, rests = breakpoints_float64_split(a, b)
    assert np.all(np.diff(thetas) >= 0) and np.all(np.diff(rests) < 0)
    inside = rests[(rests > rest_star - 4 * width) & (rests < rest_star + 4 * width)]
    assert len(inside) >= 5  # the ladder about 1 − θ* is resolved in 1 − θ
