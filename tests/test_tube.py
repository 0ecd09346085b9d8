"""The certified tube around the population flow (stumpcheck.numerics.certified.tube.build): a small-T tube, its
certificate (format /2) and re-check, tampered certificates, the Chebyshev enclosures and the ellipse
cover, the rows for the claims built on the tube, the CLI's errors."""

from __future__ import annotations

import copy
import json
import math
from fractions import Fraction

import numpy as np
import pytest
from flint import acb, arb, ctx, fmpq
from hypothesis import given, settings, strategies as st

from stumpcheck.numerics.certified.tube.build import certified_tube
from stumpcheck.numerics.certified.tube.certificate import digest, flow_certificate, recheck_flow_certificate
from stumpcheck.numerics.certified.tube.records import exact_fraction, lower_decimal, upper_decimal
from stumpcheck.numerics.certified.tube.piece import Settings
from stumpcheck.cli.commands import main

T_SMALL = 0.05
#: fewer Chebyshev points and cells than the defaults (a few seconds per interval; cruder δ and μ, still
#: valid bounds)
LIGHT = Settings(defect_points=8, hessian_points=3, subdivisions=2, cells=(3, 1))


@pytest.fixture(scope="module")
def checkpoint(tmp_path_factory):
    """One checkpoint file for the module's tubes: the incomplete tube's first interval is the small one's."""
    return tmp_path_factory.mktemp("tube") / "tube_checkpoint.jsonl"


@pytest.fixture(scope="module")
def small_tube(checkpoint):
    """(10, 10) to t = 0.05 in two intervals (max_step 0.03 in s)."""
    return certified_tube(10.0, 10.0, T_SMALL, settings=LIGHT, max_step=0.03, checkpoint=checkpoint)


@pytest.fixture(scope="module")
def small_certificate(small_tube):
    return flow_certificate(small_tube)


@given(st.fractions(min_value=-10**6, max_value=10**6), st.integers(min_value=1, max_value=17))
@settings(max_examples=60, deadline=None)
def test_recorded_decimals_are_outward_bounds(value, digits):
    with ctx.workprec(200):
        ball = arb(fmpq(value.numerator, value.denominator))
        up, down = exact_fraction(upper_decimal(ball, digits)), exact_fraction(lower_decimal(ball, digits))
    assert down <= value <= up
    if value != 0:  # and they are tight to the requested digits
        assert (up - down) <= 2 * abs(value) * Fraction(10) ** (1 - digits) + Fraction(1, 10**30)


@given(st.floats(-2, 2), st.floats(-2, 2), st.floats(0, 0.5))
@settings(max_examples=40, deadline=None)
def test_disk_enclosure_contains_the_polynomial_and_its_slope(re, im, radius):
    from stumpcheck.numerics.certified.tube.chebyshev import ChebyshevPiece, disk_enclosure

    piece = ChebyshevPiece(0.25, 0.75, (10.0, 0.3, -0.02, 1e-3, 4e-5), (9.0, -0.1, 0.01, -2e-4, 1e-6))
    point = complex(re, im) + radius * complex(0.6, -0.8)  # a point of the disk's boundary
    (a, b), (da, db) = disk_enclosure(piece, acb(re, im), arb(radius))
    for ball, slope, coefficients in ((a, da, piece.ca), (b, db, piece.cb)):
        value = np.polynomial.chebyshev.chebval(point, coefficients)
        derivative = np.polynomial.chebyshev.chebval(point, np.polynomial.chebyshev.chebder(coefficients)) * 4
        for enclosure, exact in ((ball, value), (slope, derivative)):
            widened = enclosure + acb(arb(0, 1e-9), arb(0, 1e-9))  # float64 evaluation of the check itself
            assert widened.contains(acb(exact.real, exact.imag))


@given(st.floats(0, 1), st.floats(0, 1))
@settings(max_examples=60, deadline=None)
def test_the_cells_cover_the_upper_half_of_the_bernstein_ellipse(radius, angle):
    from stumpcheck.numerics.certified.tube.analytic import ellipse_cells

    rho = Fraction(3)
    big, small = (rho + 1 / rho) / 2, (rho - 1 / rho) / 2
    x = Fraction(radius) * big * Fraction(math.cos(math.pi * angle))
    y = Fraction(radius) * small * Fraction(math.sin(math.pi * angle))
    assert any(x0 <= x <= x1 and y0 <= y <= y1 for x0, x1, y0, y1 in ellipse_cells(rho, 6, 2))


def test_small_tube_is_complete_contiguous_and_contains_an_independent_solve(small_tube):
    from scipy.integrate import solve_ivp

    from stumpcheck.numerics.flow.field import PopulationFlowField

    assert small_tube.complete and small_tube.stop_reason == ""
    intervals = small_tube.intervals
    assert len(intervals) == 2 and intervals[0].s0 == 0 and intervals[0].s1 == intervals[1].s0
    assert math.expm1(intervals[-1].s1) >= T_SMALL
    rows = [row for interval in intervals for row in interval.rows]
    assert Fraction(rows[0][0]) == 0 and all(Fraction(x[1]) >= Fraction(y[0]) for x, y in zip(rows, rows[1:]))
    # an independent float64 solve (LSODA in t) lies in every row's box at the row's ends and middle
    field = PopulationFlowField()
    solve = solve_ivp(lambda t, z: field(math.log1p(t), z) / (1 + t), (0, float(rows[-1][1])), [10.0, 10.0],
                      method="LSODA", rtol=1e-12, atol=1e-14, dense_output=True)
    for row in rows:
        t_lo, t_hi, a_lo, a_hi, b_lo, b_hi = (float(x) for x in row)
        for t in (t_lo, 0.5 * (t_lo + t_hi), min(t_hi, float(rows[-1][1]))):
            a, b = solve.sol(t)
            assert a_lo <= a <= a_hi and b_lo <= b <= b_hi
    for interval in intervals:
        radius = max(float(exact_fraction(r)) for r in interval.record["r_sup"])
        assert 0 < radius < 1e-5  # |F| ~ 1e-2, δ ~ 1e-5 with these light settings (8 points): still thin


def test_tube_rows_and_box_at_are_exact_and_contain_the_interval_boxes(small_tube, tmp_path, capsys):
    from stumpcheck.numerics.certified.tube.intervals import box_at, tube_rationals
    from stumpcheck.numerics.certified.tube.report import enclosure_at, write_tube_outputs

    rows = tube_rationals(small_tube)
    write_tube_outputs(small_tube, tmp_path, provenance={})
    assert tube_rationals(tmp_path) == rows == tube_rationals(tmp_path / "flow_certificate.json")
    box = box_at(rows, Fraction(1, 100))
    assert box is not None and box[0] < box[1] and box[2] < box[3]
    from stumpcheck.numerics.precision import InputError

    for source in (rows, small_tube, tmp_path, tmp_path / "flow_certificate.json"):  # no box beyond proved time
        with pytest.raises(InputError, match="outside the tube's proved time"):
            box_at(source, 1)
    assert box_at(tmp_path, T_SMALL) is not None  # T itself is proved
    inner = [Fraction(x) for x in enclosure_at(small_tube, Fraction(1, 100))]  # z̃(s) ± r_sup at t = 0.01
    assert box[0] <= inner[0] <= inner[1] <= box[1] and box[2] <= inner[2] <= inner[3] <= box[3]
    # the recheck command dispatches a /2 certificate, and refuses the certificate's own precision
    capsys.readouterr()
    assert main(["recheck", str(tmp_path / "flow_certificate.json"), "--dps", "15"]) == 2


def test_recheck_accepts_the_certificate_and_rejects_a_narrowed_box(small_certificate, tmp_path, capsys):
    from stumpcheck.numerics.certified.tube.certificate import write_flow_certificate

    path = write_flow_certificate(small_certificate, tmp_path / "flow_certificate.json")
    capsys.readouterr()
    assert main(["recheck", str(path)]) == 0  # in this process, at the certificate's digits + 10
    assert capsys.readouterr().out.startswith("PASS")
    tampered = copy.deepcopy(small_certificate)
    row = tampered["intervals"][1]["rows"][0]
    row[5] = row[4]  # b_hi down to b_lo
    unsigned = recheck_flow_certificate(tampered, dps=25)
    assert not unsigned.passed and "digest" in unsigned.message
    tampered["digest"] = digest(tampered)
    result = recheck_flow_certificate(tampered, dps=25)
    assert not result.passed and result.leaf_index == 1 and "box" in result.message, result.message


def _signed(document):
    document["digest"] = digest(document)
    return document


def test_recheck_rejects_lowered_bounds_a_dropped_interval_and_a_changed_coefficient(small_certificate):
    lowered = copy.deepcopy(small_certificate)
    lowered["intervals"][0]["delta"] = upper_decimal(arb(float(exact_fraction(lowered["intervals"][0]["delta"])))
                                                     / 1000, 6)
    result = recheck_flow_certificate(_signed(lowered), dps=25)
    assert not result.passed and "defect" in result.message, result.message
    ellipse = copy.deepcopy(small_certificate)
    ellipse["intervals"][0]["m"][1] = upper_decimal(arb(float(exact_fraction(ellipse["intervals"][0]["m"][1])))
                                                    / 100, 4)
    result = recheck_flow_certificate(_signed(ellipse), dps=25)
    assert not result.passed and "ellipse" in result.message, result.message
    dropped = copy.deepcopy(small_certificate)
    dropped["intervals"] = dropped["intervals"][:-1]  # still says "complete": true
    result = recheck_flow_certificate(_signed(dropped), dps=25)
    assert not result.passed and "complete" in result.message, result.message
    middle = copy.deepcopy(small_certificate)
    middle["intervals"] = middle["intervals"][1:]  # the first interval dropped
    result = recheck_flow_certificate(_signed(middle), dps=25)
    assert not result.passed and result.leaf_index == 0, result.message
    changed = copy.deepcopy(small_certificate)
    coefficients = changed["intervals"][1]["piece"]["b"]
    coefficients[1] = (float.fromhex(coefficients[1]) * (1 + 1e-6)).hex()
    result = recheck_flow_certificate(_signed(changed), dps=25)
    assert not result.passed and result.leaf_index == 1, result.message


def test_recheck_on_two_processes_gives_the_same_verdicts(small_certificate):
    """The intervals' integrals recomputed in spawned workers: the same PASS, and the same first failure."""
    assert recheck_flow_certificate(small_certificate, dps=25, workers=2).passed
    ellipse = copy.deepcopy(small_certificate)
    last = len(ellipse["intervals"]) - 1
    ellipse["intervals"][last]["m"][0] = upper_decimal(
        arb(float(exact_fraction(ellipse["intervals"][last]["m"][0]))) / 100, 4)
    one = recheck_flow_certificate(_signed(ellipse), dps=25)
    two = recheck_flow_certificate(ellipse, dps=25, workers=2)
    assert not one.passed and not two.passed and "ellipse" in two.message
    assert (one.leaf_index, one.message) == (two.leaf_index, two.message) and two.leaf_index == last


def test_an_incomplete_tube_says_so_and_is_rechecked_as_incomplete(small_tube, checkpoint):
    tube = certified_tube(10.0, 10.0, 100.0, settings=LIGHT, max_step=0.03, max_intervals=1, checkpoint=checkpoint)
    assert not tube.complete and "max_intervals" in tube.stop_reason and 0 < tube.t_reached < 100
    document = flow_certificate(tube)
    assert document["complete"] is False and float(document["valid_to_t"]) >= tube.t_reached
    result = recheck_flow_certificate(document, dps=25)
    assert result.passed and "incomplete: proved for t in [0, " in result.message and "only, not to T = 100" in result.message
    assert result.statement.endswith(f"for t in [0, {document['valid_to_t']}] only: the tube is incomplete "
                                     f"({tube.stop_reason}); nothing is proved for t in ({document['valid_to_t']}, "
                                     "T = 100.0]")


def test_the_recheck_command_says_incomplete_and_exits_1_for_an_incomplete_tube(small_tube, checkpoint, tmp_path,
                                                                                 capsys):
    from stumpcheck.numerics.certified.tube.certificate import write_flow_certificate

    tube = certified_tube(10.0, 10.0, 100.0, settings=LIGHT, max_step=0.03, max_intervals=1, checkpoint=checkpoint)
    path = write_flow_certificate(flow_certificate(tube), tmp_path / "flow_certificate.json")
    assert main(["recheck", str(path), "--dps", "25"]) == 1
    out = capsys.readouterr().out.splitlines()
    assert out[0].startswith(f"INCOMPLETE {path}: the population flow") and "only: the tube is incomplete" in out[0]


@pytest.mark.parametrize("arguments, message", [
    (["--t-max", "-1"], "t-max"),
    (["--t-max", "1e13"], "t-max"),
    (["--rel-goal", "2"], "rel-goal"),
    (["--rel-goal", "nan"], "rel-goal"),
    (["--b0", "0.5"], "b0"),
])
def test_certified_flow_bad_input_is_one_line_and_exit_2(tmp_path, capsys, arguments, message):
    assert main(["flow", "--certified", "--quiet", "--out", str(tmp_path / "out"), *arguments]) == 2
    captured = capsys.readouterr()
    lines = captured.err.strip().splitlines()
    assert len(lines) == 1 and message in lines[0], captured.err
    assert not (tmp_path / "out" / "tube.csv").exists()


def test_certified_flow_cli_writes_the_tube_and_resumes(tmp_path):
    out = tmp_path / "tube"
    command = ["flow", "--certified", "--quiet", "--t-max", "0.01", "--workers", "1", "--out", str(out)]
    assert main(command) == 0
    header = (out / "tube.csv").read_text().splitlines()[0]
    assert header == "t_lo,t_hi,a_lo,a_hi,b_lo,b_hi"
    summary = json.loads((out / "tube.json").read_text())
    assert summary["complete"] is True and summary["enclosure_at_t_max"] is not None
    assert (out / "tube_width.png").stat().st_size > 0
    first = (out / "flow_certificate.json").read_text()
    assert main(command) == 0  # resumed from the checkpoint: the same intervals
    assert json.loads((out / "flow_certificate.json").read_text())["intervals"] == json.loads(first)["intervals"]


def test_a_decimal_start_that_is_not_a_float_widens_the_initial_disk():
    from stumpcheck.cli.flow_certified import _initial_radius

    assert _initial_radius(10.0, 10.0, ("10", "10.0")) == 0
    radius = _initial_radius(float("10.1"), 10.0, ("10.1", "10"))
    assert 0 < radius < 1e-15 and abs(Fraction("10.1") - Fraction(float("10.1"))) <= radius


@pytest.mark.slow
def test_tube_to_a_million_contains_the_30_digit_flow():
    """T = 10⁶ from (10, 10): relative width in b ≤ 1e-6 at T, and the enclosure of (a(T), b(T)) contains the
    30-digit solve's (about 20 s of CPU for the tube with the fast layer, 20 s for its re-check; the 30-digit
    solve takes longer)."""
    from stumpcheck.numerics.certified.tube.report import enclosure_at
    from stumpcheck.numerics.flow.population_flow import run_population_flow

    tube = certified_tube(10.0, 10.0, 1e6, workers=2)
    assert tube.complete
    a_lo, a_hi, b_lo, b_hi = (Fraction(x) for x in enclosure_at(tube, 1e6))
    assert (b_hi - b_lo) / b_lo <= Fraction(1, 10**6)
    run = run_population_flow(10.0, 10.0, 1e6, dps=30, rtol=1e-15, check=False)
    b_final = Fraction(str(run.stats["final_b"]))
    assert b_lo <= b_final <= b_hi
    a_final = Fraction(str(run.stats["final_a"]))
    assert a_lo <= a_final <= a_hi
    # built with the fast layer (the default): its certificate re-checks, fast, in about the CPU it took
    assert tube.arithmetic == "fast" and flow_certificate(tube)["arithmetic"]["integrals"] == "fast"
    result = recheck_flow_certificate(flow_certificate(tube), dps=25, workers=2)
    assert result.passed, result.message


@given(st.floats(min_value=5.0, max_value=60.0), st.floats(min_value=-0.5, max_value=0.5))
@settings(max_examples=3, deadline=None)
def test_point_integrals_meet_the_15_digit_values_and_are_tight_enough(b, w):
    """tube_points at the tube's 84 bits: ∇L to ≲ 1e-12 and ∇²L to ≲ 1e-9 relative (what the defect and
    the log norm need), and each ball meets the 15-digit enclosure (both contain the value; near the slow
    manifold a ≈ b + 2 log b)."""
    from stumpcheck.numerics.certified.enclosures.balls import mpf_to_arb
    from stumpcheck.numerics.certified.enclosures.theta_integrals import certified_loss_gradient, certified_loss_hessian
    from stumpcheck.numerics.certified.tube.points import point_gradient, point_hessian

    a = b + 2 * math.log(b) + w / b
    with ctx.workprec(84):
        gradient, hessian = point_gradient(arb(a), arb(b)), point_hessian(arb(a), arb(b))
    exact = [*certified_loss_gradient(a, b, dps=15), *certified_loss_hessian(a, b, dps=15)]
    for ball, reference, width in zip([*gradient, *hessian], exact, [1e-12] * 2 + [1e-9] * 3):
        lo, hi = mpf_to_arb(reference.lower), mpf_to_arb(reference.upper)
        assert ball.lower() <= hi and lo <= ball.upper()  # the intervals meet
        assert 0 < float(ball.rad()) <= width * abs(float(ball.mid()))


def test_the_step_budget_doubles_the_steps_where_the_float_flow_contracts():
    from stumpcheck.numerics.certified.tube.build import CONTRACTED_IMAG_BUDGET, CONTRACTED_MU, IMAG_BUDGET, step_budget
    from stumpcheck.numerics.certified.tube.float_solution import contraction_estimate, plan_pieces
    from stumpcheck.numerics.population.one_head_float64 import loss_gradient_hessian

    s_end = math.log1p(1e4)
    scheduled = plan_pieces(10.0, 10.0, s_end, degree=24, rho=3.0, imag_budget=step_budget, max_step=1.0)
    fixed = plan_pieces(10.0, 10.0, s_end, degree=24, rho=3.0, imag_budget=IMAG_BUDGET, max_step=1.0)
    starts = [(p.s0, (math.fsum(c * (-1) ** k for k, c in enumerate(p.ca)),
                      math.fsum(c * (-1) ** k for k, c in enumerate(p.cb)))) for p in scheduled]
    for s, z in starts:
        mu = contraction_estimate(s, z)
        lam = np.linalg.eigvalsh(loss_gradient_hessian(*z)[2]).min()
        assert mu == pytest.approx(-math.exp(s) * lam, rel=1e-9)
        assert step_budget(s, z) == (CONTRACTED_IMAG_BUDGET if mu <= CONTRACTED_MU else IMAG_BUDGET)
    budgets = [step_budget(s, z) for s, z in starts]
    switch = budgets.index(CONTRACTED_IMAG_BUDGET)  # not contracting at (10, 10); contracting by t = 1e4
    assert budgets[0] == IMAG_BUDGET and set(budgets[switch:]) == {CONTRACTED_IMAG_BUDGET}
    for p, q in zip(scheduled[:switch], fixed):
        assert (p.s0, p.s1) == (q.s0, q.s1)  # the same pieces before the switch
    later = [q for q in fixed if q.s0 >= scheduled[switch].s0 and q.s1 < s_end]
    h_scheduled = scheduled[switch + 1].s1 - scheduled[switch + 1].s0
    assert 1.5 < h_scheduled / (later[1].s1 - later[1].s0) < 2.5
    assert len(scheduled) < len(fixed)


def test_an_interval_whose_radius_is_not_confirmed_is_split_and_the_chain_checks_pass(small_tube, checkpoint, monkeypatch):
    import stumpcheck.numerics.certified.tube.build as tube_module

    chain, refused = tube_module._chain_interval, []

    def refuse_the_first(piece, bounds, settings, r_start):
        if not refused:
            refused.append(piece)
            return None, "forced"
        return chain(piece, bounds, settings, r_start)

    monkeypatch.setattr(tube_module, "_chain_interval", refuse_the_first)
    tube = certified_tube(10.0, 10.0, T_SMALL, settings=LIGHT, max_step=0.03, checkpoint=checkpoint)
    assert tube.complete and tube.rejected == 1 and len(tube.intervals) == 3
    first, second = tube.intervals[0], tube.intervals[1]
    assert (first.s0, second.s1) == (refused[0].s0, refused[0].s1) and first.s1 == second.s0
    # the re-check's checks without θ-integrals (the halves' integrals are those of any interval)
    from stumpcheck.numerics.certified.tube.certificate import _cheap_checks, _parse

    document = flow_certificate(tube)
    with ctx.workprec(120):
        assert _cheap_checks(document, *_parse(document)) == (None, None)
