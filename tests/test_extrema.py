"""sup/inf of e over a θ-interval (sampled evidence) against dense evaluation and the layer law."""

from __future__ import annotations

import mpmath
import numpy as np
import pytest

from stumpcheck.numerics.generated import population_numpy as gen_np
from stumpcheck.numerics.population.quantities import error, error_extrema
from stumpcheck.numerics.precision import InputError


@pytest.mark.parametrize("a, b", [(10, 10), (25, 20), (600, 1000), (1e4 + 18.42, 1e4), (-3, 0.5)])
def test_extrema_bound_a_dense_float64_scan(a, b):
    mpmath.mp.dps = 25
    inf, theta_inf, sup, theta_sup = error_extrema(a, b)
    dense = gen_np.error_one_head(a, b, np.linspace(0, 1, 200_001))
    # the refined extrema are at least as extreme as any float64 grid value (up to rounding)
    assert float(sup) >= dense.max() - 1e-13
    assert float(inf) <= dense.min() + 1e-13
    # and they are attained: e at the reported θ equals the reported value
    assert error(a, b, theta_sup) == pytest.approx(sup, rel=1e-20, abs=1e-30)
    assert error(a, b, theta_inf) == pytest.approx(inf, rel=1e-20, abs=1e-30)


def test_interior_sup_is_one_over_b_on_the_calibration_relation():
    mpmath.mp.dps = 30
    b = mpmath.mpf(1000)
    a = b + 2 * mpmath.log(b)
    _, _, sup, _ = error_extrema(a, b, lo="0.05", hi="0.95")
    assert abs(sup * b - 1) < mpmath.mpf(10) ** -20  # bulk law e = 1/b + exponentially small


def test_boundary_limitation_at_theta_one():
    """At θ = 1 the one-head model sees no positive point: e(1) = −(1 − κ₁(b)) ≈ −(1 − 1/b)."""
    mpmath.mp.dps = 30
    inf, theta_inf, _, _ = error_extrema(1010, 1000)
    assert theta_inf == 1
    assert abs(inf + 1 - 1 / mpmath.mpf(1000)) < mpmath.mpf(10) ** -25


def test_bad_interval_is_rejected():
    with pytest.raises(InputError):
        error_extrema(10, 10, lo=0.6, hi=0.4)
    with pytest.raises(InputError):
        error_extrema(10, 10, lo=-0.1, hi=0.4)
