"""All-time bands of b(t)⁴/t from a region certified for every b ≥ b_T (numerics/certified/region/all_time.py)."""

from __future__ import annotations

from fractions import Fraction

import numpy as np
import pytest

from stumpcheck.numerics.certified.region.all_time import all_time_band, all_time_table, rate_constant
from stumpcheck.numerics.certified.region.bounds import b4_band, horizon
from stumpcheck.numerics.certified.region.invariant_region import Region
from stumpcheck.numerics.precision import InputError

REGION = Region(30, 1000, Fraction(1, 2), Fraction(5, 2), Fraction(11, 2))
#: b(10⁶) from (10, 10): the 30-digit flow's 36.1108372533…, inside this entry interval
T, B_LO, B_HI = 10**6, "36.1108372", "36.1108373"


def _floats(pair):
    return float(pair[0]), float(pair[1])


def test_the_band_at_1e12_contains_the_flow_and_is_narrower_than_two_percent():
    from stumpcheck.numerics.flow.run import run_population_flow

    run = run_population_flow(t_max=1e12, check=False)
    b = float(run.b[-1])
    assert b > 1000  # beyond the finite region's B: only an all-time statement covers it
    lo, hi = _floats(all_time_band(REGION, T, B_LO, B_HI, 10**12)["b4_over_t"])
    assert lo <= b**4 / 1e12 <= hi
    assert (hi - lo) / 2 < 0.02


def test_both_ends_approach_two_within_the_stated_rate():
    k = float(rate_constant(REGION, T, B_LO, B_HI, T)["K"])
    for t in np.logspace(6, 30, 60):
        t = Fraction(float(t))
        lo, hi = _floats(all_time_band(REGION, T, B_LO, B_HI, t)["b4_over_t"])
        bound = k * float(t) ** -0.25
        assert abs(lo - 2) <= bound and abs(hi - 2) <= bound, (float(t), lo, hi, bound)
    later = float(rate_constant(REGION, T, B_LO, B_HI, 10**12)["K"])
    assert later < k  # a later t₀ gives a smaller constant (the entry's transient fades)


def test_the_all_time_band_contains_the_finite_regions_band_before_its_horizon():
    t_b = float(horizon(REGION, T, Fraction(B_HI)).lower())
    for t in np.logspace(6.5, np.log10(t_b) - 0.01, 8):
        t = Fraction(float(t))
        finite = _floats(b4_band(REGION, T, B_LO, B_HI, t)["b4_over_t"])
        always = _floats(all_time_band(REGION, T, B_LO, B_HI, t)["b4_over_t"])
        assert always[0] <= finite[0] and finite[1] <= always[1]


def test_the_table_and_the_limits():
    rows = all_time_table(REGION, T, B_LO, B_HI)
    assert [r["t"] for r in rows] == [1e8, 1e10, 1e12, 1e15, 1e20, 1e25, 1e30]
    exponents = [float(r["log_b_over_log_t_minus_quarter"][1]) for r in rows]
    gaps = [float(r["calibration_gap_at_most"]) for r in rows]
    assert all(x > y for x, y in zip(exponents, exponents[1:])) and exponents[-1] < 0.003
    assert all(x > y for x, y in zip(gaps, gaps[1:])) and gaps[-1] < 1e-7


@pytest.mark.parametrize("args", [(T, "10", "36"), (T, "40", "36"), (-1, B_LO, B_HI), (T, "5", "6")])
def test_bad_entries_are_refused(args):
    with pytest.raises(InputError):
        all_time_band(REGION, *args, 10**8)


def test_the_band_plot_is_written(tmp_path):
    from stumpcheck.numerics.certified.region.band_plot import plot_all_time_band

    rate = rate_constant(REGION, T, B_LO, B_HI, 10**12)
    path = plot_all_time_band(REGION, T, B_LO, B_HI, tmp_path / "bands.png", flow=([1e6, 1e9], [36.11, 205.0]),
                              rate=rate, t_end=1e12)
    assert path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and path.stat().st_size > 10_000
