"""Certified C2–C4 from the tube (stumpcheck.numerics.certified.tube.readings*, stumpcheck.claims.population_certified):
the enclosures contain the 30-digit flow, the slope intervals contain the midpoints' slope, wider boxes give
wider intervals, and a tube that stopped early is never read as covering [0, T]."""

from __future__ import annotations

import math
from fractions import Fraction
from pathlib import Path

import pytest
from flint import arb, ctx
from hypothesis import given, settings, strategies as st

from stumpcheck.numerics.certified.tube.readings import node_states, rows_from_list, state_at, tube_rows
from stumpcheck.numerics.certified.tube.reading_enclosures import (calibration_residual, exact_ball, interior_error_sup,
                                                       ols_slope, ols_slope_float, residual_without_rho1,
                                                       rho1_ball, scale_ratio)
from stumpcheck.numerics.precision import InputError

T_SMALL = 0.2
#: tube.csv and tube.json of ``stumpcheck flow --certified --t-max 1 --rel-goal 1e-2`` (certified_tube(10, 10, 1,
#: rel_goal=1e-2): 6 intervals; about a minute of CPU to make, so the default tests read it from its files)
STORED_TUBE = Path(__file__).parent / "data" / "tube_t1"
#: the flow certificate of ``stumpcheck flow --certified --t-max 1e6`` (format /2: 123 intervals, 984 rows, its
#: pieces and radii), read without θ-integrals
CERTIFICATE_1E6 = Path(__file__).parent / "flow_certificate_1e6.json"
#: the 30-digit flow at t = 10⁶ (``stumpcheck flow --dps 30 --t-max 1e6 --rtol 1e-12``)
A_1E6, B_1E6 = Fraction("43.24704294247210819808"), Fraction("36.11083725333580302094")


@pytest.fixture(scope="module")
def small_tube():
    """(10, 10) to t = 0.2 at a coarse goal: a few intervals (the tube's own test fixture)."""
    from stumpcheck.numerics.certified.tube.build import certified_tube

    return certified_tube(10.0, 10.0, T_SMALL, rel_goal=1e-2)


def _independent_solve(t_end: float, times):
    """LSODA in t (not the tube's Radau in s) at rtol 1e-11: its error is far below the boxes' widths (~1e-4)."""
    from scipy.integrate import solve_ivp

    from stumpcheck.numerics.flow.field import PopulationFlowField

    field = PopulationFlowField()
    return solve_ivp(lambda t, z: field(math.log1p(t), z) / (1 + t), (0, t_end), [10.0, 10.0], method="LSODA",
                     rtol=1e-11, atol=1e-13, t_eval=times).y


def _contains(lo, hi, value: float) -> bool:
    """lo ≤ value·(1 ∓ 1e-14) and value·(1 ± 1e-14) ≤ hi: the enclosure holds a neighbourhood of the float
    (the 30-digit values are read back as float64, within 1e-16 relative of the 30-digit numbers)."""
    pad = Fraction(abs(value)) * Fraction(1, 10**14)
    return Fraction(lo) <= Fraction(value) - pad and Fraction(value) + pad <= Fraction(hi)


def test_rho1_is_the_derived_constant():
    from stumpcheck.numerics.generated import asymptotics_numpy as derived

    with ctx.workprec(128):
        rho1 = rho1_ball()
        assert rho1.rad() < arb(10) ** -30
        assert abs(float(rho1.mid()) - derived.RHO1) < 1e-15


@given(a=st.floats(min_value=5, max_value=60), b=st.floats(min_value=5, max_value=50))
@settings(max_examples=40, deadline=None)
def test_residual_at_a_point_is_a_minus_the_generated_relation(a, b):
    from stumpcheck.numerics.generated import asymptotics_numpy as derived

    with ctx.workprec(128):
        box = (Fraction(a), Fraction(a), Fraction(b), Fraction(b))
        lam, plain = calibration_residual(box), residual_without_rho1(box)
        assert lam.rad() < 1e-25 and plain.rad() < 1e-25
        assert abs(float(lam.mid()) - (a - float(derived.calibration_a(b)))) <= 1e-12 * (abs(a) + b)
        assert abs(float(plain.mid()) - (a - b - 2 * math.log(b))) <= 1e-12 * (abs(a) + b)


@given(a=st.floats(min_value=8, max_value=45), b=st.floats(min_value=8, max_value=40),
       grow=st.fractions(min_value=Fraction(1, 10**6), max_value=Fraction(1, 100)))
@settings(max_examples=25, deadline=None)
def test_a_wider_box_gives_a_wider_interval(a, b, grow):
    inner = (Fraction(a), Fraction(a) + grow, Fraction(b), Fraction(b) + grow)
    outer = (inner[0] - grow, inner[1] + grow, inner[2] - grow, inner[3] + grow)
    with ctx.workprec(128):
        for function in (calibration_residual, residual_without_rho1):
            small, large = function(inner), function(outer)
            assert large.lower() < small.lower() and small.upper() < large.upper()
        small = scale_ratio(Fraction(1), Fraction(2), inner[2], inner[3])
        large = scale_ratio(Fraction(1), Fraction(2), outer[2], outer[3])
        assert large.lower() < small.lower() and small.upper() < large.upper()


def test_sup_interior_error_contains_the_sampled_sup_and_widens_with_the_box():
    from stumpcheck.numerics.flow.diagnostics import sup_interior_error

    with ctx.workprec(128):
        for a, b in ((10.0, 10.0), (10.7237, 9.4035), (43.25, 36.11)):
            point = (Fraction(a), Fraction(a), Fraction(b), Fraction(b))
            sup, info = interior_error_sup(point, max_evaluations=600)
            sampled = sup_interior_error(a, b)
            assert sup.lower() <= sampled * (1 + 1e-12) and sampled <= sup.upper()
            assert info["evaluations"] > 0 and sup.rad() / sup.mid() < 1e-2
            wide = (point[0] - Fraction(1, 1000), point[1] + Fraction(1, 1000), point[2] - Fraction(1, 1000),
                    point[3] + Fraction(1, 1000))
            wider, _ = interior_error_sup(wide, max_evaluations=200)
            assert wider.upper() >= sup.upper() - sup.rad() and wider.rad() > 0


@given(xs=st.lists(st.fractions(min_value=-5, max_value=5, max_denominator=100), min_size=3, max_size=12,
                   unique=True),
       data=st.data())
@settings(max_examples=25, deadline=None)
def test_the_slope_interval_contains_the_slope_of_the_midpoints_and_of_every_sample(xs, data):
    ys = [data.draw(st.fractions(min_value=-10, max_value=10, max_denominator=1000)) for _ in xs]
    radii = [data.draw(st.fractions(min_value=0, max_value=Fraction(1, 10), max_denominator=1000)) for _ in xs]
    picks = [data.draw(st.fractions(min_value=-1, max_value=1, max_denominator=50)) for _ in xs]
    with ctx.workprec(128):
        balls = [exact_ball(y - r).union(exact_ball(y + r)) for y, r in zip(ys, radii)]
        slope = ols_slope([exact_ball(x) for x in xs], balls)
        assert slope.contains(arb(ols_slope_float([float(x) for x in xs], [float(y) for y in ys]))) or \
            slope.overlaps(arb(ols_slope_float([float(x) for x in xs], [float(y) for y in ys]), 1e-12))
        # any data inside the balls has its exact slope inside the interval
        sample = [y + p * r for y, p, r in zip(ys, picks, radii)]
        mean_x, mean_y = sum(xs) / len(xs), sum(sample) / len(sample)
        exact = sum((x - mean_x) * (y - mean_y) for x, y in zip(xs, sample)) / sum((x - mean_x) ** 2 for x in xs)
        assert slope.contains(exact_ball(exact))
        # narrower data, narrower slope
        narrow = ols_slope([exact_ball(x) for x in xs], [exact_ball(y) for y in ys])
        assert narrow.rad() <= slope.rad()


def _rows(n: int, t_end: Fraction):
    """n touching rows from t = 0 to t_end with boxes around a = 10 + t, b = 10 − t (not a tube of the flow)."""
    rows, step = [], t_end / n
    for k in range(n):
        lo, hi = k * step, (k + 1) * step
        rows.append((lo, hi, 10 + lo - Fraction(1, 1000), 10 + hi + Fraction(1, 1000), 10 - hi - Fraction(1, 1000),
                     10 - lo + Fraction(1, 1000)))
    return rows


def test_a_tube_that_stopped_early_is_never_read_as_covering_0_T(tmp_path):
    stopped = rows_from_list(_rows(8, Fraction(4)), t_max=100, complete=False)
    assert not stopped.complete and stopped.certified_to == Fraction(4) - Fraction(1, 2)  # the last row's start
    assert state_at(stopped, 50) is None and state_at(stopped, 3) is not None
    assert all(node.t_hi <= stopped.certified_to for node in node_states(stopped))
    complete = rows_from_list(_rows(8, Fraction(4)), t_max=4, complete=True)
    assert complete.certified_to == 4 and state_at(complete, 4) is not None
    with pytest.raises(InputError, match="complete"):
        rows_from_list(_rows(8, Fraction(4)), t_max=5, complete=True)
    gap = _rows(4, Fraction(4))
    gap[2] = (gap[2][0] + Fraction(1, 10), *gap[2][1:])
    with pytest.raises(InputError, match="gap"):
        rows_from_list(gap, t_max=4, complete=True)
    # a tube.csv without its tube.json: completeness unknown, read as stopping where its rows stop
    path = tmp_path / "tube.csv"
    path.write_text("t_lo,t_hi,a_lo,a_hi,b_lo,b_hi\n" + "".join(
        ",".join(str(float(x)) for x in row) + "\n" for row in _rows(8, Fraction(4))), encoding="utf-8")
    read = tube_rows(path)
    assert not read.complete and read.certified_to < 4
    from stumpcheck.claims.population_certified import certified_readings

    readings = certified_readings(stopped, t_start=Fraction(1, 10), sup_evaluations=50)
    assert "stopped early" in readings["covers"] and readings["window"][1] == 3.5
    assert "certified on [0" not in readings["covers"]


def test_node_states_are_the_intersections_at_shared_ends():
    tube = rows_from_list(_rows(4, Fraction(4)), t_max=4, complete=True)
    nodes = node_states(tube)
    assert len(nodes) == 3
    for k, node in enumerate(nodes, start=1):
        assert node.t_lo == node.t_hi == k
        assert node.a_hi - node.a_lo == Fraction(2, 1000) and node.b_hi - node.b_lo == Fraction(2, 1000)


def _check_against_independent_solve(tube, t_end: float):
    """The rows' boxes against LSODA at rtol 1e-11; with the pieces (z̃ ± r, far narrower than LSODA's error),
    the tube's own enclosures against the 30-digit flow at its saved times."""
    if tube.pieces:
        _check_pieces_against_the_30_digit_flow(tube, t_end)
        tube = rows_from_list(tube.rows, t_max=tube.t_max, complete=tube.complete)
    from stumpcheck.numerics.generated import asymptotics_numpy as derived

    times = [t_end * k / 16 for k in range(1, 17)]
    for t, a, b in zip(times, *_independent_solve(t_end, times)):
        box = state_at(tube, Fraction(t))
        assert _contains(box[0], box[1], a) and _contains(box[2], box[3], b)
        with ctx.workprec(128):
            assert calibration_residual(box).contains(arb(a - float(derived.calibration_a(b))))
    # at the nodes: the intersected boxes, at a time in the node's ball
    nodes = node_states(tube)
    assert nodes
    for node, a, b in zip(nodes, *_independent_solve(t_end, [float(n.t_lo) for n in nodes])):
        assert _contains(node.a_lo, node.a_hi, a) and _contains(node.b_lo, node.b_hi, b)


def _check_pieces_against_the_30_digit_flow(tube, t_end: float):
    from stumpcheck.numerics.flow.population_flow import run_population_flow

    flow = run_population_flow(10.0, 10.0, t_end, rtol=1e-15, dps=30, check=False)
    assert len(flow.t) >= 3
    for t, a, b in zip(flow.t, flow.a, flow.b):
        box = state_at(tube, Fraction(float(t)))
        # float64 reads of the 30-digit values: within 2 ulp (the boxes are ~1e-13 wide here)
        for lo, hi, value in ((box[0], box[1], float(a)), (box[2], box[3], float(b))):
            pad = Fraction(abs(value)) * Fraction(1, 2**51)
            assert Fraction(lo) <= Fraction(value) + pad and Fraction(value) - pad <= Fraction(hi)


def test_stored_tube_enclosures_contain_an_independent_solve():
    tube = tube_rows(STORED_TUBE)
    assert tube.complete and tube.certified_to == 1 and len(tube.rows) == 6
    assert tube_rows(STORED_TUBE / "tube.csv") == tube
    _check_against_independent_solve(tube, 1.0)


@pytest.mark.slow
def test_small_tube_enclosures_contain_an_independent_solve(small_tube):
    tube = tube_rows(small_tube)
    assert tube.complete and tube.certified_to == Fraction(T_SMALL)
    _check_against_independent_solve(tube, T_SMALL)


@pytest.mark.slow
def test_tube_to_100_contains_the_30_digit_flow():
    """T = 10² (a coarse goal): the enclosures at the 36-digit reference flow's (benchmarks/flow_reference.py) saved times and at T contain its values."""
    from stumpcheck.numerics.certified.tube.build import certified_tube
    from stumpcheck.numerics.flow.population_flow import run_population_flow

    tube = tube_rows(certified_tube(10.0, 10.0, 100.0, rel_goal=1e-2))
    flow = run_population_flow(10.0, 10.0, 100.0, rtol=1e-15, dps=30, check=False)
    assert tube.complete
    for t, a, b in zip(flow.t, flow.a, flow.b):
        box = state_at(tube, Fraction(float(t)))
        assert _contains(box[0], box[1], float(a)) and _contains(box[2], box[3], float(b))
    box = state_at(tube, 100)
    assert _contains(box[0], box[1], float(flow.stats["final_a"]))
    assert _contains(box[2], box[3], float(flow.stats["final_b"]))
    from stumpcheck.claims.population_certified import certified_readings

    readings = certified_readings(tube)
    end = readings["at_certified_to"]
    assert end["t"].startswith("[100")


def test_readings_of_the_stored_tube():
    from stumpcheck.claims.population_certified import certified_readings, claim_reading

    readings = certified_readings(STORED_TUBE, t_start=Fraction(1, 100), sup_evaluations=300)
    assert readings["evidence"] == "certified" and readings["covers"] == "certified on [0, 1]"
    assert readings["window"] == [0.01, 1.0] and readings["for_all_t"]["rows"] == 6
    assert "intersections" in readings["node_source"]  # tube.csv only: the rows' intersections
    assert len(readings["nodes"]) >= 3
    for name, fit in readings["fits"].items():
        lo, hi = (Fraction(x) for x in fit["interval"])
        assert lo <= Fraction(fit["midpoint_fit"]) <= hi, name
    # b decreases from 10 during calibration: the exponent of b in t is negative, and C3's 1/4 is not met there
    assert Fraction(readings["fits"]["scale_exponent"]["interval"][1]) < 0
    assert readings["verdicts"]["C3"][0]["verdict"] == "not met"
    for claim in ("C2", "C3", "C4"):
        text, details = claim_reading(readings, claim)
        assert text.startswith("certified on [0, 1] (fits over [0.01, 1])") and details["evidence"] == "certified"


@given(a=st.floats(min_value=5, max_value=60), b=st.floats(min_value=5, max_value=50),
       theta=st.floats(min_value=0.05, max_value=0.95))
@settings(max_examples=25, deadline=None)
def test_the_theta_derivative_of_e_matches_a_numerical_derivative(a, b, theta):
    import mpmath

    from stumpcheck.numerics.certified.tube.reading_enclosures import error_theta_derivative
    from stumpcheck.numerics.generated import population_mpmath as gen_mp

    with mpmath.workdps(40):
        A, B, T = mpmath.mpf(a), mpmath.mpf(b), mpmath.mpf(theta)
        value = gen_mp.error_one_head(A, B, T)
        numeric = mpmath.diff(lambda x: gen_mp.error_one_head(A, B, x), T)
    with ctx.workprec(160):
        derivative = error_theta_derivative(arb(a), arb(b), arb(theta), arb(mpmath.nstr(value, 45)))
    assert abs(float(derivative.mid()) - float(numeric)) <= 1e-20 + 1e-15 * abs(float(numeric))


@pytest.fixture(scope="module")
def short_flow():
    from stumpcheck.numerics.flow.population_flow import run_population_flow

    return run_population_flow(10.0, 10.0, 1e4, rtol=1e-8, check=False)


def test_population_claims_are_decided_by_the_certified_statement_with_the_sampled_control(monkeypatch, tmp_path,
                                                                                          short_flow):
    from stumpcheck.claims import population_shared as shared
    from stumpcheck.claims.population_all_time import all_time_part, committed_certificate

    shared.clear_flow_cache()
    monkeypatch.setattr(shared, "shared_flow", lambda quick, out_dir: (short_flow, []))
    # nothing certified in the run (a stand-in for a re-check that failed): FAIL, whatever the control says
    monkeypatch.setattr(shared, "shared_all_time", lambda quick, out_dir: (None, "stand-in: did not re-check"))
    result = shared.population_claim("C2")(quick=True, out_dir=tmp_path)
    assert result.status == "FAIL" and result.evidence == "sampled" and result.details["evidence_reached"] is None
    assert result.figure.startswith("not certified: stand-in") and "control (sampled" in result.figure
    assert result.details["control"]["evidence"] == "sampled" and "certified_tube" not in result.details
    # the committed certificate's all-time part, as if re-checked in this run: each claim PASSes, certified
    part = all_time_part(committed_certificate(), "re-checked in this run")
    monkeypatch.setattr(shared, "shared_all_time", lambda quick, out_dir: (part, "stand-in: re-checked"))
    for claim in ("C2", "C3", "C4"):
        result = shared.population_claim(claim)(quick=True, out_dir=tmp_path)
        assert result.status == "PASS" and result.evidence == "certified", result.figure
        assert result.details["evidence_reached"] == "certified" and "for every t" in result.tolerance
        assert "**Verdict (certified for every t ≥ T).**" in result.details["explanation"]
    # a tube mode also reads the tube (here the stored T = 1 tube in place of a run)
    monkeypatch.setitem(shared.TUBE_T, "quick", 1.0)
    monkeypatch.setattr(shared, "_run_tube", lambda t_max, out_dir: (STORED_TUBE, "stored tube"))
    monkeypatch.setattr(shared, "_run_region", lambda out_dir, tube: (None, None, "no region"))
    for claim in ("C2", "C3", "C4"):
        result = shared.population_claim(claim)(quick=True, out_dir=tmp_path)
        certified = result.details["certified_tube"]
        assert result.evidence == "certified" and certified["evidence"] == "certified"
        assert certified["covers"] == "certified on [0, 1]"
        assert certified["coverage"] == [0.0, 1.0] and certified["window"] == [0.001, 1.0]
        assert certified["verdicts"] and all(v["verdict"] in ("met", "not met", "undecided")
                                             for v in certified["verdicts"])
        if claim == "C4":  # sup|e|·b for every t of the window, above the value at the last node
            lo, hi = (Fraction(x) for x in certified["sup_e_b_for_all_t"])
            assert lo <= hi and "for every t in [0, 1]" in certified["reading"]
    shared.clear_flow_cache()


@pytest.mark.slow
def test_verify_reuses_a_rechecked_tube_and_recomputes_a_tampered_one(tmp_path):
    import json

    from stumpcheck.claims import population_shared as shared

    _, note = shared._run_tube(T_SMALL, tmp_path)
    assert "files in" in note and (tmp_path / shared.TUBE_FOLDER / "flow_certificate.json").is_file()
    again, note = shared._run_tube(T_SMALL, tmp_path)
    assert note.startswith("reused the re-checked certificate")
    assert tube_rows(again) == tube_rows(tmp_path / shared.TUBE_FOLDER)
    path = tmp_path / shared.TUBE_FOLDER / "flow_certificate.json"
    document = json.loads(path.read_text(encoding="utf-8"))
    row = document["intervals"][0]["rows"][0]  # format /2: a row per sub-interval
    row[3] = row[2]  # a narrowed box (a_hi = a_lo)
    path.write_text(json.dumps(document), encoding="utf-8")
    _, note = shared._run_tube(T_SMALL, tmp_path)
    assert not note.startswith("reused")


def test_the_tubes_own_enclosure_at_T_holds_the_30_digit_flow_and_is_narrow():
    tube = tube_rows(CERTIFICATE_1E6)
    assert tube.complete and len(tube.rows) == 984 and len(tube.pieces) == 123 and tube.certified_to == 10**6
    with ctx.workprec(128):
        box = state_at(tube, 10**6)
    assert box[0] <= A_1E6 <= box[1] and box[2] <= B_1E6 <= box[3]
    # z̃(s_T) ± r_sup: about ±2e-9, against ±1e-6 for the hull of the rows containing T
    assert box[1] - box[0] < Fraction(5, 10**9) and box[3] - box[2] < Fraction(5, 10**9)
    rows_only = rows_from_list(tube.rows, t_max=tube.t_max, complete=True)
    hull = state_at(rows_only, 10**6)
    assert hull[0] <= box[0] and box[1] <= hull[1] and hull[3] - hull[2] > 100 * (box[3] - box[2])
    with ctx.workprec(128):
        lam = calibration_residual(box)
    import mpmath

    with mpmath.workdps(40):  # λ = a − (b + 2 log b − ρ₁/b), ρ₁ = −3ζ(3) + 3/2 + π²/3, from the 30-digit a, b
        a, b = (mpmath.mpf(x.numerator) / x.denominator for x in (A_1E6, B_1E6))
        rho1 = -3 * mpmath.zeta(3) + mpmath.mpf(3) / 2 + mpmath.pi**2 / 3
        exact = a - (b + 2 * mpmath.log(b) - rho1 / b)
    assert lam.lower() < arb(mpmath.nstr(exact, 30)) < lam.upper() and lam.rad() < 1e-8


def test_node_states_from_the_pieces_lie_inside_the_rows_intersections():
    """Every sub-interval end's z̃(s_i) ± r_i (the tube's own enclosure) lies in the intersection of the two rows
    that share that end, at a time in their shared range: a check that the two readings agree."""
    tube = tube_rows(CERTIFICATE_1E6)
    rows_only = rows_from_list(tube.rows, t_max=tube.t_max, complete=True)
    with ctx.workprec(128):
        own = node_states(tube)
    by_rows = node_states(rows_only)
    assert len(own) == len(by_rows) == 983  # every shared end but the one beyond T
    for mine, theirs in zip(own, by_rows):
        assert theirs.t_lo <= mine.t_lo <= mine.t_hi <= theirs.t_hi
        assert theirs.a_lo <= mine.a_lo <= mine.a_hi <= theirs.a_hi
        assert theirs.b_lo <= mine.b_lo <= mine.b_hi <= theirs.b_hi
        assert mine.b_hi - mine.b_lo < Fraction(1, 10**8)


def test_fit_nodes_are_fixed_log_spaced_times_inside_the_rows_boxes():
    """With the pieces, the fit's nodes are the times t_from·10^{k/8} (10 digits, exact) and T itself, not the
    tube's sub-interval ends: another valid tube of the same flow gives a fit over the same times. Each state
    z̃(s) ± r_sup lies in the hull of the boxes of the rows whose interval holds t."""
    tube = tube_rows(CERTIFICATE_1E6)
    rows_only = rows_from_list(tube.rows, t_max=tube.t_max, complete=True)
    with ctx.workprec(128):
        nodes = node_states(tube, t_from=1000, per_decade=8)
    expected = [Fraction(f"{10.0 ** (3 + k / 8):.10g}") for k in range(24)] + [Fraction(10**6)]
    assert [n.t_lo for n in nodes] == expected and all(n.t_lo == n.t_hi for n in nodes)
    for node in nodes:
        hull = state_at(rows_only, node.t_lo)
        assert hull[0] <= node.a_lo <= node.a_hi <= hull[1] and hull[2] <= node.b_lo <= node.b_hi <= hull[3]
        assert node.b_hi - node.b_lo < Fraction(1, 10**8)


def test_a_tube_csv_beside_its_certificate_reads_the_pieces(tmp_path):
    import shutil

    from stumpcheck.numerics.certified.tube.intervals import tube_rationals

    shutil.copy(CERTIFICATE_1E6, tmp_path / "flow_certificate.json")
    rows = tube_rationals(CERTIFICATE_1E6)
    (tmp_path / "tube.csv").write_text("t_lo,t_hi,a_lo,a_hi,b_lo,b_hi\n" + "".join(
        ",".join(str(x) for x in row) + "\n" for row in rows), encoding="utf-8")
    read = tube_rows(tmp_path / "tube.csv")
    assert len(read.pieces) == 123 and list(read.rows) == [tuple(r) for r in rows]
    (tmp_path / "tube.csv").write_text("t_lo,t_hi,a_lo,a_hi,b_lo,b_hi\n" + "".join(
        ",".join(str(x) for x in row) + "\n" for row in rows[:-1]), encoding="utf-8")
    with pytest.raises(InputError, match="different tubes"):
        tube_rows(tmp_path / "tube.csv")


def test_readings_of_the_1e6_certificate_cover_0_T_with_narrow_fits():
    from stumpcheck.claims.population_certified import certified_readings, claim_markdown, claim_reading

    readings = certified_readings(CERTIFICATE_1E6, sup_evaluations=60)
    assert readings["covers"] == "certified on [0, 1e+06]" and readings["coverage"] == [0.0, 1e6]
    assert readings["window"] == [1000.0, 1e6] and "own enclosure" in readings["node_source"]
    every, window = readings["for_all_t"], readings["for_all_t_in_window"]
    assert every["rows"] == 984 and window["rows"] < 984 and 0 < every["scale_ratio_from_t"] < 1
    for key in ("lambda", "scale_ratio"):  # the whole tube's bounds hold the window's
        assert Fraction(every[key][0]) <= Fraction(window[key][0]) <= Fraction(window[key][1]) <= Fraction(
            every[key][1])
    for name, fit in readings["fits"].items():
        lo, hi = (Fraction(x) for x in fit["interval"])
        assert lo <= Fraction(fit["midpoint_fit"]) <= hi, name
    lo, hi = (Fraction(x) for x in readings["fits"]["scale_exponent"]["interval"])
    assert hi - lo < Fraction(1, 10**7)  # the rows' intersections gave a width of 4.5e-6
    assert "beyond_t" not in readings  # no region at hand
    text, details = claim_reading(readings, "C3")
    assert text.startswith("certified on [0, 1e+06] (fits over [1e+03, 1e+06])")
    assert details["scale_ratio_for_all_t"] == every["scale_ratio"]
    markdown = claim_markdown(details)
    assert "certified on [0, 1e+06]" in markdown and "For every t in [0, 1e+06]" in markdown
    assert "its PASS/FAIL is the certified statement for every t ≥ T" in markdown
