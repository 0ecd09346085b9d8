"""The population gradient flow (stumpcheck.numerics.flow.integrate) and the derived large-scale laws.

* Integrator invariants: a tiny horizon is one Euler step from the start, the loss
  decreases strictly along the saved trajectory, the saved loss/gradient are the model's,
  the autonomous flow can be restarted from a saved state, two tolerances agree, and bad
  horizons are refused.
* One run from (a₀, b₀) = (10, 10) to t = 1e8 (module fixture, ~20–40 s) checked against
  :func:`stumpcheck.theory.asymptotics.flow_asymptotics`: the t^{1/4} law, the constant C with its
  first correction, and the calibration relation a = b + 2 log b − ρ₁/b.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
import sympy as sp

from stumpcheck.numerics.flow.integrate import FlowStatus, integrate_flow
from stumpcheck.numerics.population.quantities import loss_and_gradient_float64
from stumpcheck.theory.asymptotics import flow_asymptotics
from stumpcheck.theory.symbols import b, t

T_FINAL = 1e8
START = (10.0, 10.0)


@pytest.fixture(scope="module")
def flow():
    solution = integrate_flow(*START, T_FINAL)
    assert solution.status is FlowStatus.SUCCESS, solution.status.message
    return solution


def _decade(solution, lo, hi):
    """Mask of the saved points with lo ≤ t ≤ hi (0.1 % slack for the step grid)."""
    return (solution.t >= lo * 0.999) & (solution.t <= hi * 1.001)


# --------------------------------------------------------------------------------------
# 9. integrator invariants
# --------------------------------------------------------------------------------------

@pytest.mark.parametrize("t_max", [0.0, -0.0, -1.0, math.inf, -math.inf, math.nan])
def test_bad_t_max_raises(t_max):
    with pytest.raises(ValueError):
        integrate_flow(*START, t_max)


def test_tiny_t_max_is_one_euler_step():
    """z(τ) = z₀ − τ∇L(z₀) + O(τ²); at τ = 1e−9 the O(τ²) term is ~1e−20, far below the ulp
    of 10 (1.8e−15), so the displacement must equal −τ∇L(z₀) to ~4 ulp / 1e−11 ≈ 1e−3."""
    tau = 1e-9
    solution = integrate_flow(*START, tau)
    assert solution.status is FlowStatus.SUCCESS
    assert solution.t[0] == 0.0 and solution.t[-1] == pytest.approx(tau, rel=1e-12)
    assert (solution.a[0], solution.b[0]) == START
    value, grad = loss_and_gradient_float64(*START)
    assert solution.loss[0] == value
    displacement = np.array([solution.a[-1] - START[0], solution.b[-1] - START[1]])
    ulp = math.ulp(10.0)
    assert np.all(np.abs(displacement + tau * grad) <= 4 * ulp), (displacement, -tau * grad)


def test_loss_strictly_decreasing(flow):
    assert np.all(np.diff(flow.t) > 0)
    assert flow.t[0] == 0.0 and flow.t[-1] == pytest.approx(T_FINAL, rel=1e-12)
    # per accepted step the loss falls by ≥ ~1e−5 relative, far above float64 noise (~1e−13)
    assert np.all(np.diff(flow.loss) < 0), np.max(np.diff(flow.loss) / flow.loss[:-1])


def test_saved_loss_and_gradient_are_the_models(flow):
    for i in np.linspace(0, len(flow.t) - 1, 7).astype(int):
        value, grad = loss_and_gradient_float64(flow.a[i], flow.b[i])
        assert flow.loss[i] == value
        np.testing.assert_array_equal(flow.grad[i], grad)


def test_restart_from_saved_state(flow):
    """The flow is autonomous: continuing from the saved z(t_k) for t_j − t_k must reproduce
    z(t_j) up to the accumulated integration error (≤ 100·rtol for ~100 steps at rtol 1e−8)."""
    k = int(np.argmin(np.abs(flow.t - 1e5)))
    j = int(np.argmin(np.abs(flow.t - 1.1e5)))
    assert j > k
    rest = integrate_flow(flow.a[k], flow.b[k], flow.t[j] - flow.t[k])
    assert rest.status is FlowStatus.SUCCESS
    assert rest.a[-1] == pytest.approx(flow.a[j], rel=1e-6)
    assert rest.b[-1] == pytest.approx(flow.b[j], rel=1e-6)


def test_two_tolerances_agree(flow):
    coarse = integrate_flow(*START, T_FINAL, rtol=1e-6)
    assert coarse.status is FlowStatus.SUCCESS
    assert coarse.steps < flow.steps
    assert coarse.a[-1] == pytest.approx(flow.a[-1], rel=1e-5)
    assert coarse.b[-1] == pytest.approx(flow.b[-1], rel=1e-5)


# --------------------------------------------------------------------------------------
# 10. the derived laws against the integrated flow
# --------------------------------------------------------------------------------------

def _two_term_scale_law():
    """From db/dt = c₃/b³ + c₄/b⁴ (flow_asymptotics().db_dt): b = (Ct)^{1/4} + β + o(1).

    Put T = (Ct)^{1/4}, b = T + β; then db/dt = dT/dt = C/(4T³) and
    C/(4T³) − c₃/(T + β)³ − c₄/(T + β)⁴ = (C/4 − c₃)/T³ + (3c₃β − c₄)/T⁴ + O(T⁻⁵),
    so C = 4c₃ and β = c₄/(3c₃). With c₃ = 1/2, c₄ = −κ, κ = 3ζ(3)/2 + 1/4:
    C = 2 and b/(2t)^{1/4} = 1 + β/T ≈ 1 − 2κ/(3b) to first order.
    """
    fa = flow_asymptotics()
    poly = sp.Poly(sp.expand(fa.db_dt * b**4), b)
    assert poly.degree() == 1, fa.db_dt
    c3, c4 = poly.coeff_monomial(b), poly.coeff_monomial(1)
    C, beta, w = sp.symbols("C beta w")  # w = 1/T
    residual = C / 4 * w**3 - fa.db_dt.subs(b, 1 / w + beta)
    series = sp.expand(sp.series(residual, w, 0, 5).removeO())
    solution = sp.solve([series.coeff(w, 3), series.coeff(w, 4)], [C, beta], dict=True)
    assert len(solution) == 1
    C_value, beta_value = sp.simplify(solution[0][C]), sp.simplify(solution[0][beta])
    assert sp.simplify(C_value - 4 * c3) == 0 and sp.simplify(beta_value - c4 / (3 * c3)) == 0
    return C_value, beta_value


def test_two_term_law_derivation():
    C_value, beta_value = _two_term_scale_law()
    fa = flow_asymptotics()
    kappa = 3 * sp.zeta(3) / 2 + sp.Rational(1, 4)
    assert sp.simplify(C_value - fa.flow_constant_C) == 0
    assert C_value == 2
    assert sp.simplify(beta_value + 2 * kappa / 3) == 0
    assert fa.calibration.lhs == sp.Symbol("a", real=True)
    assert not fa.db_dt.has(t)


def test_scale_exponent_over_last_decade(flow):
    """(i) the least-squares exponent of b in t over [1e7, 1e8] is within 0.01 of 1/4, and
    within 1e−3 of the exponent of the two-term law (2t)^{1/4} + β on the same saved times
    (the 1/b correction moves it by ~4e−3 at b ≈ 90)."""
    C_value, beta_value = (float(sp.N(x, 20)) for x in _two_term_scale_law())
    m = _decade(flow, T_FINAL / 10, T_FINAL)
    assert m.sum() >= 20
    exponent = np.polyfit(np.log(flow.t[m]), np.log(flow.b[m]), 1)[0]
    law = (C_value * flow.t[m]) ** 0.25 + beta_value
    law_exponent = np.polyfit(np.log(flow.t[m]), np.log(law), 1)[0]
    assert abs(exponent - 0.25) <= 0.01, exponent
    assert abs(exponent - law_exponent) <= 1e-3, (exponent, law_exponent)


def test_flow_constant_with_first_correction(flow):
    """(ii) b/(Ct)^{1/4} at t = 1e8 equals 1 + β/b (= 1 − 2κ/(3b)) within 2e−3, and the gap
    shrinks along the run (it is O(b⁻²))."""
    C_value, beta_value = (float(sp.N(x, 20)) for x in _two_term_scale_law())
    gaps = []
    for target in (1e6, 1e7, T_FINAL):
        i = int(np.argmin(np.abs(flow.t - target)))
        ratio = flow.b[i] / (C_value * flow.t[i]) ** 0.25
        gaps.append(abs(ratio - (1 + beta_value / flow.b[i])))
    assert gaps[-1] <= 2e-3, gaps
    assert gaps[0] > gaps[1] > gaps[2], gaps


def test_calibration_relation_along_flow(flow):
    """(iii) residual a − (b + 2 log b − ρ₁/b): at t = 1e8 below 0.2·ρ₁/b and ≥ 5× smaller
    than the residual without the ρ₁/b term; its largest size per decade shrinks."""
    fa = flow_asymptotics()
    rho1 = float(sp.N(fa.rho1, 20))
    calibrated = sp.lambdify(b, sp.N(fa.calibration.rhs, 20), "numpy")
    residual = flow.a - calibrated(flow.b)
    residual_without_rho1 = flow.a - (flow.b + 2 * np.log(flow.b))
    final_b = flow.b[-1]
    assert abs(residual[-1]) < 0.2 * rho1 / final_b, (residual[-1], rho1 / final_b)
    assert 5 * abs(residual[-1]) <= abs(residual_without_rho1[-1]), (residual[-1], residual_without_rho1[-1])
    previous = np.max(np.abs(residual[_decade(flow, T_FINAL / 100, T_FINAL / 10)]))
    last = np.max(np.abs(residual[_decade(flow, T_FINAL / 10, T_FINAL)]))
    assert last < previous, (last, previous)


# --------------------------------------------------------------------------------------
# 11. the stiff default solver and the Hessian it uses
# --------------------------------------------------------------------------------------

@pytest.mark.parametrize("a_b", [(10.0, 10.0), (109.2, 100.0), (1013.8, 1000.0)])
def test_loss_gradient_hessian_float64(a_b):
    """L and ∇L equal loss_and_gradient_float64 (same rule); ∇²L is symmetric and equals the
    central difference of ∇L (step 1e-3: truncation ~1e-6 relative on the O(1) scale of the
    calibration direction; rounding ~1e-13·|∇L|/1e-3) to 1e-5 relative."""
    from stumpcheck.numerics.population.quantities import loss_gradient_hessian_float64

    a, b_ = a_b
    value, grad, hess = loss_gradient_hessian_float64(a, b_)
    ref_value, ref_grad = loss_and_gradient_float64(a, b_)
    assert value == pytest.approx(ref_value, rel=1e-14)
    np.testing.assert_allclose(grad, ref_grad, rtol=1e-14)
    assert hess[0, 1] == hess[1, 0]
    step = 1e-3
    for j, shift in enumerate(([step, 0.0], [0.0, step])):
        up = loss_gradient_hessian_float64(a + shift[0], b_ + shift[1])[1]
        down = loss_gradient_hessian_float64(a - shift[0], b_ - shift[1])[1]
        np.testing.assert_allclose((up - down) / (2 * step), hess[:, j], rtol=1e-5,
                                   atol=1e-5 * np.max(np.abs(hess)))


@pytest.mark.filterwarnings("ignore::stumpcheck.numerics.flow.stiffness.StiffnessWarning")  # dopri5 is the reference on a short, tight solve
@pytest.mark.parametrize("solver", ["rodas4", None])
def test_stiff_flow_matches_dopri5_flow(solver):
    """Rodas4 (exact Jacobian) and the float64 default (scipy LSODA, exact Jacobian) each give the
    trajectory of the explicit Dopri5 path, all at rtol 1e-10, at the saved times to t = 100 within
    1e-8 relative."""
    from stumpcheck.numerics.flow.population_flow import run_population_flow

    stiff = run_population_flow(10.0, 10.0, 100.0, rtol=1e-10, check=False, per_decade=2, solver=solver)
    explicit = run_population_flow(10.0, 10.0, 100.0, rtol=1e-10, solver="dopri5", check=False,
                                   per_decade=2)
    assert stiff.status.ok and explicit.status.ok
    assert stiff.settings["solver"].startswith("Rodas4" if solver == "rodas4" else "scipy LSODA")
    np.testing.assert_array_equal(stiff.t, explicit.t)
    np.testing.assert_allclose(stiff.b, explicit.b, rtol=1e-8)
    np.testing.assert_allclose(stiff.a, explicit.a, rtol=1e-8)


@pytest.mark.parametrize("a_b", [(10.0, 10.0), (25.0, 20.0), (1013.8, 1000.0), (700.0, 1000.0)])
def test_sup_interior_error_is_the_refined_maximum(a_b):
    """sup_interior_error (grid + vectorised zoom) is at least the maximum of |e| on a dense
    grid over [δ, 1 − δ] and exceeds it by no more than a golden-section search around that
    grid maximum finds (to 1e−13 relative)."""
    from stumpcheck.numerics.generated import population_numpy as gen_np
    from stumpcheck.numerics.flow.population_flow import DEFAULT_DELTA, sup_interior_error

    a, b_ = a_b
    sup = sup_interior_error(a, b_)
    dense = np.linspace(DEFAULT_DELTA, 1 - DEFAULT_DELTA, 200_001)
    values = np.abs(gen_np.error_one_head(a, b_, dense))
    i = int(np.argmax(values))
    assert sup >= values[i] * (1 - 1e-15)
    lo, hi = dense[max(i - 1, 0)], dense[min(i + 1, dense.size - 1)]
    golden = (math.sqrt(5) - 1) / 2
    for _ in range(80):
        m1, m2 = hi - golden * (hi - lo), lo + golden * (hi - lo)
        if abs(gen_np.error_one_head(a, b_, m1)) > abs(gen_np.error_one_head(a, b_, m2)):
            hi = m2
        else:
            lo = m1
    refined = max(values[i], abs(float(gen_np.error_one_head(a, b_, 0.5 * (lo + hi)))))
    assert sup == pytest.approx(refined, rel=1e-13)


def test_parallel_a_posteriori_check_gives_the_same_run():
    """The rtol/10 solve in a second process (t_max ≥ PARALLEL_CHECK_FROM) is the same computation."""
    from stumpcheck.numerics.flow.population_flow import PARALLEL_CHECK_FROM, run_population_flow

    t_max = PARALLEL_CHECK_FROM
    parallel = run_population_flow(10.0, 10.0, t_max, rtol=1e-6, per_decade=2, parallel_check=True, solver="rodas4")
    serial = run_population_flow(10.0, 10.0, t_max, rtol=1e-6, per_decade=2, parallel_check=False, solver="rodas4")
    assert parallel.a_posteriori_rel_error_b == serial.a_posteriori_rel_error_b
    assert np.array_equal(parallel.b, serial.b)
    assert 0 < serial.a_posteriori_rel_error_b < 1e-4


def test_parallel_check_from_a_script_without_main_guard_falls_back(tmp_path):
    """spawn imports the caller's main module again; a script without the __main__ guard breaks
    the second process. The run must still finish, with the check solved in the first process."""
    import subprocess
    import sys
    from pathlib import Path

    script = tmp_path / "unguarded.py"
    script.write_text(
        "from stumpcheck.numerics.flow.population_flow import run_population_flow\n"
        "run = run_population_flow(10.0, 10.0, 100.0, rtol=1e-6, per_decade=1, parallel_check=True, "
        "solver='rodas4')\n"
        "print('ERR', run.a_posteriori_rel_error_b)\n")
    root = Path(__file__).resolve().parent.parent
    done = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=300, cwd=tmp_path,
                          env={**__import__("os").environ, "PYTHONPATH": str(root)})
    assert done.returncode == 0, done.stderr[-2000:]
    value = float(done.stdout.split("ERR")[-1])
    assert 0 < value < 1e-4
