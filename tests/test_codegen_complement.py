"""1 − θ in the float64 generated code: the complement rewrite (stumpcheck.theory.codegen.complement_theta).

The pooled estimator's log-weights hold a − b + bθ and b − 2bθ. Printed as such
(before this rewrite) the numpy one-pass functions lost about b·2⁻⁵³ absolutely
in them wherever θ is near 1, and the outputs' relative error grew with b:
measured against 60-digit mpmath at 20 random points per b with 1 − θ ∈
[0.1/b, 10/b] and a − b(1 − θ) ∈ [−3, 3], worst over (e, ∂e/∂a, ∂e/∂b),
1.7e-10 at b = 10⁶ and 3.8e-8 at b = 10⁸; printed as a − b·(1 − θ) and
b·((1 − θ) − θ) with the exact 1 − θ, 1.1e-14 at both.
"""

from __future__ import annotations

import mpmath
import numpy as np
import pytest
import sympy as sp

from stumpcheck.numerics.generated import population_mpmath as gen_mp
from stumpcheck.numerics.generated import population_numpy as gen_np
from stumpcheck.theory.codegen import ONE_MINUS_THETA, NumpyModelPrinter, complement_theta
from stumpcheck.theory.symbols import a, b, theta


@pytest.mark.parametrize("expr, printed", [
    (a + b * theta - b, "a - b*one_minus_theta"),
    (a + b - 2 * b * theta, "a + b*(one_minus_theta - theta)"),
    (a - b * theta, "a - b*theta"),                       # no constant partner: unchanged
    (b ** 2 * theta - b ** 2 + a * theta, "a*theta - b**2*one_minus_theta"),
    (sp.exp(b * theta + a - b), "numpy.exp(a - b*one_minus_theta)"),
])
def test_complement_rewrite_prints_one_minus_theta(expr, printed):
    assert NumpyModelPrinter().doprint(complement_theta(expr)) == printed


def test_complement_rewrite_is_an_identity():
    x = sp.Symbol("x")
    for expr in (a + b * theta - b, x + b - 2 * b * theta + theta ** 2, 3 * b * theta - 5 * b + a):
        back = complement_theta(expr).subs(ONE_MINUS_THETA, 1 - theta)
        assert sp.expand(back - expr) == 0


def test_generated_pooled_code_has_no_b_theta_minus_b():
    import inspect

    source = inspect.getsource(gen_np.error_and_gradient_pooled) + inspect.getsource(gen_np.error_jet_pooled)
    assert "- b\n" not in source and "b*theta + a - b" not in source
    assert "b*one_minus_theta" in source


@pytest.mark.parametrize("b_value", [1e4, 1e6, 1e8])
def test_pooled_float64_near_theta_one_at_large_b_matches_mpmath(b_value):
    rng = np.random.default_rng(5)
    worst = 0.0
    for _ in range(12):
        u = float(np.exp(rng.uniform(np.log(0.1 / b_value), np.log(10 / b_value))))
        th = 1.0 - u
        u = 1.0 - th                      # exact: the θ near 1 and its complement as a caller has them
        a_value = b_value * u + float(rng.uniform(-3, 3))
        with mpmath.workdps(60):
            ref = gen_mp.error_and_gradient_pooled(mpmath.mpf(a_value), mpmath.mpf(b_value), mpmath.mpf(th))
            ref = [float(r) for r in ref]
        got = gen_np.error_and_gradient_pooled(a_value, b_value, np.array([th]), np.array([u]))
        for value, want in zip(got, ref):
            worst = max(worst, abs(float(value[0]) - want) / abs(want))
    # before the rewrite: 1.2e-12 (b = 1e4), 1.7e-10 (1e6), 3.8e-8 (1e8)
    assert worst < 1e-13, worst
