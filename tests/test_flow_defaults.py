"""The library flow's documented defaults (docs/model.md §4.1) and its a-posteriori error estimate.

:func:`stumpcheck.numerics.flow.integrate.integrate_flow` solves with a stiff solver and the exact Jacobian
(LSODA in float64) at rtol 1e-9, always solves again at rtol/10 and returns the largest relative
difference in b as its error estimate; the status is not SUCCESS when that estimate exceeds the
tolerance; an explicit solver warns (StiffnessWarning). Checked against the certified enclosure of
b(10⁶) from (10, 10) (tests/flow_certificate_1e6.json) and the 30-digit flow.
"""

from __future__ import annotations

import json
import math
import warnings
from fractions import Fraction
from pathlib import Path

import pytest

from stumpcheck.numerics.flow.integrate import DEFAULT_RTOL, FlowStatus, integrate_flow
from stumpcheck.numerics.flow.stiffness import StiffnessWarning
from stumpcheck.numerics.precision import InputError

START = (10.0, 10.0)
T = 1e6
#: b(10⁶) from (10, 10): the outward decimals of the enclosure the T = 10⁶ flow certificate proves
#: (checked against the certificate below) and the 30-digit flow (docs/certified_flow.md).
ENCLOSURE_B = (36.110837251, 36.110837256)
B_30_DIGITS = 36.1108372533358030209  # the 36-digit solve of tests/test_flow_digits.py (was ...3364722962, Rodas4)
CERTIFICATE = Path(__file__).parent / "flow_certificate_1e6.json"


def _distance_to_enclosure(b: float) -> float:
    return max(ENCLOSURE_B[0] - b, b - ENCLOSURE_B[1], 0.0)


def test_enclosure_constant_is_the_certificates():
    """The decimals above contain the enclosure of z(10⁶) that the certificate's pieces give."""
    from stumpcheck.numerics.certified.tube.reading_nodes import piece_record, pieces_state_at

    document = json.loads(CERTIFICATE.read_text(encoding="utf-8"))
    box = pieces_state_at([piece_record(item) for item in document["intervals"]], Fraction(10**6))
    assert box is not None
    assert Fraction(str(ENCLOSURE_B[0])) <= box[2] <= box[3] <= Fraction(str(ENCLOSURE_B[1]))
    assert box[2] <= Fraction(str(B_30_DIGITS)) <= box[3]


@pytest.fixture(scope="module")
def default_run():
    with warnings.catch_warnings():
        warnings.simplefilter("error", StiffnessWarning)  # the default solver is stiff: no warning
        return integrate_flow(*START, T)


def test_default_is_the_documented_stiff_solver(default_run):
    assert DEFAULT_RTOL == 1e-9
    assert default_run.settings["rtol"] == 1e-9
    assert default_run.settings["solver"].startswith("scipy LSODA")
    assert "exact Jacobian" in default_run.settings["solver"]


def test_default_b_at_1e6_with_its_estimate_covers_the_enclosure(default_run):
    """The "Done when" of issue 27 item 5: b(10⁶) with an error estimate that covers its distance to
    the certified enclosure (and to the 30-digit value); SUCCESS since the estimate is within rtol."""
    b = default_run.b[-1]
    assert default_run.t[-1] == pytest.approx(T, rel=1e-12)
    assert default_run.status is FlowStatus.SUCCESS, default_run.status.message
    estimate = default_run.a_posteriori_rel_error_b
    assert math.isfinite(estimate) and 0 < estimate <= default_run.settings["rtol"]
    assert _distance_to_enclosure(b) <= estimate * b
    assert abs(b - B_30_DIGITS) <= default_run.b_error[-1]


def test_rtol_1e12_lands_inside_the_enclosure():
    """rtol 1e-12 is below LSODA's smallest (scipy floors its rtol at 100 ulps): the default routes to
    scipy's Radau (exact Jacobian; its own floor is 2.2e-13), which lands inside the enclosure, its estimate
    covering the 30-digit value; the final b it prints has only digits the enclosure confirms."""
    run = integrate_flow(*START, T, rtol=1e-12)
    b = run.b[-1]
    assert run.status is FlowStatus.SUCCESS, run.status.message
    assert run.settings["solver"].startswith("scipy Radau")
    printed = run.settings["final_b"]
    unit = Fraction(10) ** (len(printed.split(".")[1]) * -1)
    assert abs(Fraction(printed) - Fraction(str(B_30_DIGITS))) <= unit / 2, printed
    assert ENCLOSURE_B[0] <= b <= ENCLOSURE_B[1], b
    assert abs(b - B_30_DIGITS) <= run.b_error[-1]


def test_estimate_above_the_goal_is_not_success():
    """A loose rtol (1e-6) with a tight goal (1e-9): the estimate (~4e-8) exceeds the goal, so the status
    says so, and the solution (which reached T) is still returned with its estimate."""
    run = integrate_flow(*START, T, rtol=1e-6, error_goal=1e-9)
    assert run.status is FlowStatus.ERROR_ESTIMATE_EXCEEDED and not run.status.ok
    assert run.a_posteriori_rel_error_b > 1e-9
    assert run.t[-1] == pytest.approx(T, rel=1e-12)
    # the estimate, though over the goal, still covers the true error
    assert abs(run.b[-1] - B_30_DIGITS) <= run.b_error[-1]


def test_explicit_solver_warns_and_fails_its_tolerance():
    """Bosh3 at rtol 1e-8 (the former default): a StiffnessWarning, and b(10⁶) ends 3.3e-8 relative
    below the enclosure, which the estimate sees (it exceeds rtol): not SUCCESS."""
    with pytest.warns(StiffnessWarning, match="stiff"):
        run = integrate_flow(*START, T, rtol=1e-8, solver="bosh3")
    b = run.b[-1]
    assert _distance_to_enclosure(b) > 0
    assert run.status is FlowStatus.ERROR_ESTIMATE_EXCEEDED
    assert _distance_to_enclosure(b) <= run.b_error[-1]


def test_explicit_solver_with_a_step_cap_stops():
    with pytest.warns(StiffnessWarning):
        run = integrate_flow(*START, T, solver="dopri5", max_steps=50)
    assert run.status is FlowStatus.MAX_STEPS
    assert run.t[-1] < T


def test_check_solve_that_does_not_finish_is_not_success():
    """A step cap the rtol solve fits under and the rtol/10 solve does not: no estimate, not SUCCESS."""
    probe = integrate_flow(*START, 100.0, rtol=1e-8, solver="rodas4")
    assert probe.status is FlowStatus.SUCCESS
    cap = probe.steps + probe.rejected + 1
    run = integrate_flow(*START, 100.0, rtol=1e-8, solver="rodas4", max_steps=cap)
    assert run.status is FlowStatus.CHECK_INCOMPLETE
    assert math.isnan(run.a_posteriori_rel_error_b)


def test_below_scipys_floor_the_default_is_rodas4():
    """rtol in [1e-13, 2.2e-13): below Radau's smallest rtol (its check at rtol/10 would be under scipy's 100-ulp
    floor), the only place the float64 default is a hand-written solver."""
    from stumpcheck.numerics.flow.engine import default_solver

    assert default_solver(1e-9, None) == "lsoda" and default_solver(1e-12, None) == "radau"
    assert default_solver(2.3e-13, None) == "radau" and default_solver(2.2e-13, None) == "rodas4"
    assert default_solver(1e-25, 30) == "extrapolation"


@pytest.mark.parametrize("solver", ["lsoda", "bdf", "radau", "rodas4", "rodas3", "extrapolation"])
def test_stiff_solvers_do_not_warn(solver):
    with warnings.catch_warnings():
        warnings.simplefilter("error", StiffnessWarning)
        run = integrate_flow(*START, 1.0, rtol=1e-8, solver=solver)
    assert run.status is FlowStatus.SUCCESS


def test_run_population_flow_warns_for_an_explicit_solver():
    from stumpcheck.numerics.flow.run import run_population_flow

    with pytest.warns(StiffnessWarning):
        run_population_flow(*START, 0.01, rtol=1e-8, solver="bosh3", check=False, per_decade=1)


def test_start_is_returned_exactly():
    """t = 0 is the start, bit for bit, and the saved times increase from 0 to t_max."""
    run = integrate_flow(1.5, 2.5, 3.0)
    assert run.t[0] == 0.0 and (run.a[0], run.b[0]) == (1.5, 2.5)
    assert all(x < y for x, y in zip(run.t, run.t[1:]))
    assert run.t[-1] == pytest.approx(3.0, rel=1e-12)


@pytest.mark.parametrize("kwargs", [{"error_goal": 0.0}, {"error_goal": math.nan}, {"atol": -1.0},
                                    {"max_steps": 0}, {"solver": "bogus"}, {"rtol": 1e-20}])
def test_bad_options_are_refused(kwargs):
    with pytest.raises(InputError):
        integrate_flow(*START, 1.0, **kwargs)


def test_a_bool_horizon_is_refused():
    """``t_max=True`` was read as t = 1 (bool is an int in Python)."""
    with pytest.raises(InputError, match="t-max must be a finite number"):
        integrate_flow(*START, True)


def test_a_save_time_at_t_max_is_inside_the_solve():
    """np.log1p(0.2) is an ulp above math.log1p(0.2) (numpy 2.4): the save time at t_max fell past the end and the
    30-digit flow's quadrature probe raised 'save times must lie in [0, s1]'."""
    import numpy as np

    from stumpcheck.numerics.flow.run import SOLVERS, _solve

    sol = _solve([10.0, 10.0], 0.2, 1e-6, SOLVERS["dopri5"], np.asarray([0.1, 0.2]), "one-head", None)
    assert sol.ts[-1] == math.log1p(0.2)
