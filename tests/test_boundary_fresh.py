"""The certified fresh-context parts of C7 and C8 (stumpcheck/claims/boundary_fresh.py): the range of a
least-squares exponent over brackets, the one head's bracketed grid maxima, and the averaged estimator's ends."""

from __future__ import annotations

import math
from decimal import Decimal

import numpy as np
import pytest

from stumpcheck.claims import boundary_fresh as bf


def test_slope_range_is_the_exact_range_over_the_brackets():
    Ns = [16, 64, 256, 1024]
    exact = bf.slope_range(Ns, [1 / N for N in Ns], [1 / N for N in Ns])
    assert exact[0] <= -1 <= exact[1] and exact[1] - exact[0] < 1e-12
    rng = np.random.default_rng(3)
    Ns = np.array([16, 32, 64, 128, 256])
    low = rng.uniform(0.1, 1, Ns.size)
    high = low * rng.uniform(1, 2, Ns.size)
    lo, hi = bf.slope_range(Ns, low, high)
    slopes = [np.polyfit(np.log(Ns), np.log(rng.uniform(low, high)), 1)[0] for _ in range(500)]
    assert lo <= min(slopes) and max(slopes) <= hi
    # the ends are attained: the lowest values where the weight is positive, the highest where it is negative
    x = np.log(Ns)
    corner = np.where(x > x.mean(), low, high)
    assert lo <= np.polyfit(x, np.log(corner), 1)[0] <= lo + 1e-8  # Arb's radii carry 30 bits: outward by ~1e-9
    # a zero lower end leaves the slope unbounded on the side it counts
    assert bf.slope_range([16, 32, 64], [0.1, 0.05, 0], [0.1, 0.06, 0.03])[0] == -math.inf
    assert bf.slope_range([16, 32, 64], [0, 0.05, 0.03], [0.1, 0.06, 0.03])[1] == math.inf


def test_one_head_grid_maxima_are_bracketed():
    table = bf.certified_sup_table([16], "one-head", thetas=(0.0, 0.5, 1.0), interior=(0.5,))
    (per,) = table["per_theta"]
    assert [r["theta"] for r in per] == [0.0, 0.5, 1.0]
    assert table["sup_bracket"][0] == max((r["bracket"] for r in per), key=lambda b: Decimal(b[0]))
    assert table["interior_bracket"][0] == per[1]["bracket"]
    # at θ = 1 every label is 0: the one head averages x with weights e^{-bx}, off by nearly 1 (b = 64)
    assert 0.9 < float(per[2]["bracket"][0]) <= float(per[2]["bracket"][1]) < 1


def test_averaged_ends_are_half_off():
    decided = bf.c8_averaged_certified([16, 64, 256], exponent=-0.5)
    for row in decided["bounds"]["rows"]:
        ends = row["bias_at_ends"]
        assert ends["0"]["averaged"][0] <= 0.5 + 1e-3 and abs(ends["0"]["averaged"][0] - 0.5) < 0.01
        assert abs(ends["1"]["averaged"][1] + 0.5) < 0.01
        assert 0.49 < row["sup_lower"] <= 0.5 and row["sup_upper"] == 1.0
    assert decided["fails"] is True and decided["exponent_range"][0] > -0.5
    assert "certified at the ends" in decided["text"]


def test_printed_bounds_are_rounded_outward():
    # a lower end is never printed above the certified one, nor an upper end below it
    assert bf._outward("0.998980981264466", "down", digits=5) == "0.99898"
    assert bf._outward("0.940026725681111", "up", digits=5) == "0.94003"
    assert bf._outward(0.49999999999999944, "down", places=4) == "0.4999"  # not 0.5000
    assert bf._outward(-0.2000000014086254, "down", places=3) == "-0.201"  # not -0.200
    assert bf._outward(-0.8932071692040029, "up", places=3) == "-0.893"
    assert bf._outward(0.1, "up", places=1) == "0.2"  # the double 0.1 is above 1/10, read exactly
    for value in np.random.default_rng(5).uniform(-3, 3, 200):
        assert Decimal(bf._outward(float(value), "down", digits=4)) <= Decimal(float(value))
        assert Decimal(float(value)) <= Decimal(bf._outward(float(value), "up", places=3))


@pytest.mark.parametrize("brackets, decided, ok", [
    # interior maxima falling like N^-1 inside narrow brackets: proved
    ({"sup": [("0.9", "0.91"), ("0.9", "0.91")], "inner": [("0.1", "0.101"), ("0.00625", "0.0063")]}, True, True),
    # the last max certainly below the floor: refuted for every value in the brackets
    ({"sup": [("0.9", "0.91"), ("0.1", "0.2")], "inner": [("0.1", "0.101"), ("0.00625", "0.0063")]}, True, False),
    # the interior brackets so wide that exponents above and below -1/2 both fit: not decided
    ({"sup": [("0.9", "0.91"), ("0.9", "0.91")], "inner": [("0.01", "0.2"), ("0.01", "0.2")]}, False, False),
])
def test_c7_fresh_part_is_decided_only_when_the_brackets_decide(monkeypatch, brackets, decided, ok):
    """A FAIL read from brackets that do not decide would be a FAIL labelled certified: such a result says
    ``decided`` False, and the row lets the Monte Carlo table decide at the sampled level."""
    table = {"N": [16, 256], "b": [64, 1024], "a": [0, 0], "sup_bracket": brackets["sup"],
             "interior_bracket": brackets["inner"], "per_theta": [[], []]}
    monkeypatch.setattr(bf, "certified_sup_table", lambda Ns, estimator: table)
    sampled = {"sup_error": [0.905, 0.905], "interior_error": [0.1, 0.00626]}
    result = bf.c7_fresh_certified([16, 256], sampled, keep=0.5, floor=0.5, exponent=-0.5)
    assert (result["decided"], result["ok"]) == (decided, ok), result["rule"]
    parts = bf.c7_evidence_parts(True, result["decided"])
    assert any(level.startswith("certified") for level in parts.values())
    assert any(level.startswith("sampled") for level in parts.values()) is not result["decided"]


@pytest.fixture(scope="module")
def pooled_table():
    """The pooled estimator's bracket table at N = 16, 64 (computed once for the tests below)."""
    return bf.certified_sup_table([16, 64], "pooled")


@pytest.mark.parametrize("exponent, decided, ok", [(-0.5, True, True), (-3.0, True, False), (-0.99, False, False)])
def test_c8_pooled_part_is_decided_by_its_exponent_range(monkeypatch, pooled_table, exponent, decided, ok):
    """The pooled grid maxima at N = 16, 64 (envelope brackets ± ρ) fall like N⁻¹: the exponent range
    [−1.2, −0.8] or so proves "≤ −½", refutes "≤ −3", and leaves "≤ −0.99" undecided (then sampled)."""
    monkeypatch.setattr(bf, "_collect", lambda table, Ns: pooled_table)
    sampled = {"sup_error": [0.07, 0.017]}
    result = bf.c8_pooled_certified([16, 64], sampled, exponent=exponent)
    low, high = result["exponent_range"]
    assert -1.3 < low < -0.99 < high < -0.7
    assert (result["decided"], result["ok"]) == (decided, ok), result["rule"]
    parts = bf.c8_evidence_parts(True, ("pooled",), None, result)
    assert parts["fresh contexts, pooled"].startswith("certified" if decided else "sampled")
    assert all(c["mc_sup_in_bracket"] for c in result["control"])
    printed = result["text"].split("e^(b−a) <= ")[1].split(",")[0]  # rounded up, never below the bound
    assert Decimal(printed) >= Decimal(result["rho_max"])
