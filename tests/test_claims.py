"""C1–C4 checks: they PASS on the model, FAIL on a perturbed trajectory, and report their evidence."""

from __future__ import annotations

import math

import mpmath
import numpy as np
import pytest

from stumpcheck.claims.population import check_c1, check_c2, check_c3, check_c4, check_population_claims
from stumpcheck.numerics.generated import asymptotics_numpy as derived
from stumpcheck.numerics.flow.ode import Status
from stumpcheck.numerics.flow.population_flow import FlowRun, _fits, run_population_flow


def _synthetic_run(scale_law, calibration_offset=lambda b: 0.0) -> FlowRun:
    """A trajectory that follows ``scale_law(t)`` with a = calibration_a(b) + offset, e = 1/b."""
    t = np.logspace(3, 12, 91)
    b = scale_law(t)
    a = derived.calibration_a(b) + calibration_offset(b)
    sup = 1.0 / b
    return FlowRun(t=t, a=a, b=b, loss=derived.leading_loss(b), grad_a=-derived.progress_direction(b)[0],
                   grad_b=-derived.progress_direction(b)[1], sup_error_interior=sup,
                   calibration_residual=derived.calibration_residual(a, b), status=Status.SUCCESS,
                   a_posteriori_rel_error_b=0.0, fits=_fits(t, a, b, sup, 1e6),
                   settings={"rtol": 0.0, "delta": 0.05}, stats={})


def _derived_law(t):
    return derived.scale_two_term(t)


@pytest.mark.parametrize("check", [check_c2, check_c3, check_c4])
def test_checks_pass_on_the_derived_trajectory(check):
    result = check(_synthetic_run(_derived_law, lambda b: np.log(b) / b**2))
    assert result.status == "PASS", result.figure
    assert result.evidence == "sampled"
    assert result.figure and result.tolerance


def test_c3_and_c4_fail_on_a_t_to_the_0_3_law():
    run = _synthetic_run(lambda t: 3 * np.maximum(t, 1.0) ** 0.3)
    assert check_c3(run).status == "FAIL"
    assert check_c4(run).status == "FAIL"


def test_c3_fails_when_the_constant_is_wrong():
    run = _synthetic_run(lambda t: (2.2 * np.maximum(t, 1.0)) ** 0.25 + (_derived_law(1.0) - 2 ** 0.25))
    result = check_c3(run)
    assert result.status == "FAIL"
    assert "C = 2.2" in result.figure


def test_c2_fails_when_the_relation_is_off_by_a_constant():
    run = _synthetic_run(_derived_law, lambda b: 0.5 + 0 * b)
    assert check_c2(run).status == "FAIL"


def test_c1_passes_with_its_figure_and_seed():
    result = check_c1(samples=3, seed=7, dps=20, loss_points=((10, 10),))
    assert result.status == "PASS", result.figure
    assert result.evidence == "certified"
    assert result.details["seed"] == 7 and result.details["dps"] == 20
    digits = [row["digits"] for row in result.details["error_points"]]
    assert min(digits) >= 18
    assert result.details["error_points"][-1]["b"] == 1e4
    assert all(row["balls_overlap"] for row in result.details["error_points"] + result.details["loss_points"])
    assert result.details["disjoint_balls"] == []


def test_c1_reference_encloses_an_independent_quadrature():
    from stumpcheck.claims.population import certified_direct_error, direct_error_quadrature

    for a, b, theta in [(60.0, 50.0, 0.3), (-20.0, 0.5, 0.9), (1e4 + 5, 1e4, 0.999)]:
        ball = certified_direct_error(a, b, theta, dps=40)
        with mpmath.workdps(60):
            value = direct_error_quadrature(a, b, theta)
            mid = mpmath.mpf(ball.mid().str(60, radius=False))
            assert abs(mid - value) <= float(ball.rad()) + abs(value) * mpmath.mpf(10) ** -45
        assert float(ball.rad()) <= 1e-38 * abs(float(ball.mid()))


def test_c1_fails_when_two_rigorous_balls_are_disjoint(monkeypatch):
    # a closed-form ball moved by 4 radii (~1e-20 relative at 20 digits) is disjoint from the
    # definition's (~1e-40): FAIL, although the mpmath digits (18 needed) would pass
    import stumpcheck.numerics.certified.enclosures.pointwise as pointwise
    from stumpcheck.numerics.certified.enclosures.balls import Enclosure

    honest = pointwise.certified_error

    def shifted(*args, **kwargs):
        ball = honest(*args, **kwargs)
        with mpmath.workprec(2 * ball.prec_bits):  # the ends are exact binary numbers
            step = 4 * ball.rad
            return Enclosure(mid=ball.mid + step, rad=ball.rad, lower=ball.lower + step, upper=ball.upper + step,
                             prec_bits=ball.prec_bits)

    monkeypatch.setattr(pointwise, "certified_error", shifted)
    result = check_c1(samples=2, seed=3, dps=20, loss_points=())
    assert result.status == "FAIL" and result.evidence == "high-precision"
    assert len(result.details["disjoint_balls"]) == 2
    assert min(row["digits"] for row in result.details["error_points"]) >= 18


def test_c1_fails_when_more_digits_are_demanded_than_computed():
    result = check_c1(samples=2, seed=1, dps=20, loss_points=(), min_digits=40)
    assert result.status == "FAIL"


@pytest.mark.slow
def test_population_claims_pass_on_the_real_flow_to_1e12():
    results = check_population_claims(t_max=1e12, samples=4)
    for result in results:
        assert result.status == "PASS", (result.id, result.figure)


@pytest.mark.parametrize("kwargs", [{"samples": 0}, {"samples": -1}, {"samples": 2.5}, {"samples": True},
                                    {"samples": "3"}, {"loss_pieces": 0}, {"loss_pieces": -2}])
def test_c1_counts_must_be_positive_integers(kwargs):
    # zero or negative samples used to PASS "over -1 random points": no evidence is not a pass
    from stumpcheck.numerics.precision import InputError

    with pytest.raises(InputError, match="must be a positive integer"):
        check_c1(dps=20, loss_points=(), **kwargs)


def test_population_claims_reject_zero_samples_before_running_the_flow():
    from stumpcheck.numerics.precision import InputError

    with pytest.raises(InputError, match="samples"):
        check_population_claims(samples=0)
@pytest.mark.parametrize("samples", [0, -1, 1.5, True, "3"])
def test_c1_needs_a_positive_number_of_samples(samples):
    from stumpcheck.numerics.precision import InputError

    with pytest.raises(InputError, match="samples"):
        check_c1(samples=samples)
