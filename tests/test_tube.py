"""The certified tube around the population flow (numerics.certified.tube): a small-T tube, its
certificate and re-check, a tampered certificate, bounds of the recorded decimals, the CLI's errors."""

from __future__ import annotations

import copy
import json
import math
from fractions import Fraction

import pytest
from flint import arb, ctx, fmpq
from hypothesis import given, settings, strategies as st

from numerics.certified.tube import certified_tube
from numerics.certified.tube_certificate import digest, flow_certificate, recheck_flow_certificate
from numerics.certified.tube_numbers import exact_fraction, lower_decimal, upper_decimal
from stumpcheck.cli import main

T_SMALL = 0.2


@pytest.fixture(scope="module")
def small_tube():
    """(10, 10) to t = 0.2 at a coarse goal: a few intervals, a few seconds."""
    return certified_tube(10.0, 10.0, T_SMALL, rel_goal=1e-2)


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


def test_small_tube_is_complete_contiguous_and_contains_an_independent_solve(small_tube):
    from scipy.integrate import solve_ivp

    from numerics.flow.field import PopulationFlowField

    assert small_tube.complete and small_tube.stop_reason == ""
    intervals = small_tube.intervals
    assert intervals[0].n0.s == 0 and (intervals[0].n0.a, intervals[0].n0.b) == (10.0, 10.0)
    assert all(x.n1 == y.n0 for x, y in zip(intervals, intervals[1:]))
    assert math.expm1(intervals[-1].n1.s) >= T_SMALL
    # an independent float64 solve (LSODA in t, not the tube's Radau in s) lies in every box at the interval's ends
    field = PopulationFlowField()
    ends = [iv.n1.s for iv in intervals]
    solve = solve_ivp(lambda t, z: field(math.log1p(t), z) / (1 + t), (0, math.expm1(ends[-1])), [10.0, 10.0],
                      method="LSODA", rtol=1e-11, atol=1e-13, t_eval=[math.expm1(s) for s in ends], dense_output=True)
    for interval, a, b in zip(intervals, *solve.y):
        a_lo, a_hi, b_lo, b_hi = (float(x) for x in interval.box)
        assert a_lo <= a <= a_hi and b_lo <= b <= b_hi
        radius = float(exact_fraction(interval.r_sup))
        assert 0 < radius < 2e-2 * 10  # the coarse goal: within 1e-2 relative of b = 10, with room
    middle = 0.5 * (intervals[0].n0.s + intervals[0].n1.s)
    a, b = solve.sol(math.expm1(middle))
    a_lo, a_hi, b_lo, b_hi = (float(x) for x in intervals[0].box)
    assert a_lo <= a <= a_hi and b_lo <= b <= b_hi


def test_recheck_accepts_the_certificate_and_rejects_a_narrowed_box(small_certificate):
    assert recheck_flow_certificate(small_certificate, dps=30).passed
    tampered = copy.deepcopy(small_certificate)
    interval = tampered["intervals"][1]
    node_b = float.fromhex(interval["end"]["b"])
    interval["box"][3] = repr(node_b)  # b_hi down to the end node's b: the disk of radius r_end sticks out
    unsigned = recheck_flow_certificate(tampered, dps=30)
    assert not unsigned.passed and "digest" in unsigned.message
    tampered["digest"] = digest(tampered)
    result = recheck_flow_certificate(tampered, dps=30)
    assert not result.passed and result.leaf_index == 1, result.message


def test_recheck_rejects_a_narrowed_defect_bound_and_a_false_complete(small_tube, small_certificate):
    tampered = copy.deepcopy(small_certificate)
    tampered["intervals"][0]["delta"] = upper_decimal(arb(float(exact_fraction(tampered["intervals"][0]["delta"]))
                                                         / 1000), 6)
    tampered["digest"] = digest(tampered)
    result = recheck_flow_certificate(tampered, dps=30)
    assert not result.passed and "defect" in result.message
    short = flow_certificate(small_tube)
    short["intervals"] = short["intervals"][:-1]  # drop the last interval but keep "complete": true
    short["digest"] = digest(short)
    result = recheck_flow_certificate(short, dps=30)
    assert not result.passed and "complete" in result.message


def test_an_incomplete_tube_says_so_and_is_rechecked_as_incomplete():
    tube = certified_tube(10.0, 10.0, 100.0, rel_goal=1e-2, max_intervals=1)
    assert not tube.complete and "max_intervals" in tube.stop_reason and 0 < tube.t_reached < 100
    document = flow_certificate(tube)
    assert document["complete"] is False and float(document["valid_to_t"]) <= tube.t_reached
    result = recheck_flow_certificate(document, dps=25)
    assert result.passed and "incomplete" in result.message


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


def test_certified_flow_cli_writes_the_tube_and_recheck_passes(tmp_path, capsys):
    out = tmp_path / "tube"
    assert main(["flow", "--certified", "--quiet", "--t-max", "0.05", "--rel-goal", "1e-2", "--out", str(out)]) == 0
    header = (out / "tube.csv").read_text().splitlines()[0]
    assert header == "t_lo,t_hi,a_lo,a_hi,b_lo,b_hi"
    summary = json.loads((out / "tube.json").read_text())
    assert summary["complete"] is True and summary["enclosure_at_t_max"] is not None
    assert (out / "tube_width.png").stat().st_size > 0
    capsys.readouterr()
    assert main(["recheck", str(out / "flow_certificate.json")]) == 0
    assert capsys.readouterr().out.startswith("PASS")
    assert main(["recheck", str(out / "flow_certificate.json"), "--dps", "20"]) == 2  # the certificate's own


@pytest.mark.slow
def test_tube_to_100_contains_the_30_digit_flow():
    """T = 100: the enclosure of b(T) contains the 30-digit solve's b(T) (minutes)."""
    from numerics.certified.tube_report import enclosure_at
    from numerics.flow.population_flow import run_population_flow

    tube = certified_tube(10.0, 10.0, 100.0, rel_goal=1e-4)
    assert tube.complete
    a_lo, a_hi, b_lo, b_hi = (Fraction(x) for x in enclosure_at(tube, 100.0))
    run = run_population_flow(10.0, 10.0, 100.0, dps=30, rtol=1e-15, check=False)
    b_final = Fraction(str(run.stats["final_b"]))
    assert b_lo <= b_final <= b_hi


def test_a_decimal_start_that_is_not_a_float_widens_the_initial_disk():
    from stumpcheck.flow_certified_command import _initial_radius

    assert _initial_radius(10.0, 10.0, ("10", "10.0")) == 0
    radius = _initial_radius(float("10.1"), 10.0, ("10.1", "10"))
    assert 0 < radius < 1e-15 and abs(Fraction("10.1") - Fraction(float("10.1"))) <= radius
