"""C6's large-resolution row against the certified corpus interval of its own corpus (claims/c6_interval.py)."""

from __future__ import annotations

from stumpcheck.claims.c6_interval import certified_coverage, coverage_text
from stumpcheck.numerics.corpus.steps import large_resolution_start


def _cell(size: int, seed: int, a0: float, b0: float, eta: float) -> dict:
    return dict(m=size, n=size, m_min_n=size, seed=seed, a0=a0, b0=b0, eta=eta)


def test_the_large_resolution_start_is_outside_the_band_and_a_start_on_the_centre_is_covered():
    a0, b0 = large_resolution_start(64, 64)
    far = certified_coverage([_cell(64, 1, a0, b0, 100.0)])["rows"][0]
    assert far["b2"] == 32.0  # this corpus proves up to the end of the trained interval (b_max = 32)
    assert far["b_range_inside"] and not far["start_in_S"] and not far["covered"]
    assert far["mu0"] > 1.0  # the calibration start lies far above the corpus's band [−1/20, 1/2]
    on_centre = certified_coverage([_cell(64, 1, a0 - far["mu0"], b0, far["eta_certificate"])])["rows"][0]
    assert on_centre["start_in_S"] and on_centre["same_step"] and on_centre["covered"], on_centre
    other_step = certified_coverage([_cell(64, 1, a0 - far["mu0"], b0, 2 * far["eta_certificate"])])["rows"][0]
    assert not other_step["covered"] and "step" in other_step["why"]
    assert "64: no (b₂ ≥ 32" in coverage_text({"rows": [far]})


def test_a_trained_interval_below_the_proof_start_has_no_certificate():
    a0, b0 = large_resolution_start(16, 16)
    row = certified_coverage([_cell(16, 0, a0, b0, 1.0)])["rows"][0]
    assert row["b2"] is None and not row["covered"] and "b_start" in row["why"]


def test_a_size_above_the_limit_is_listed_without_a_proof():
    a0, b0 = large_resolution_start(64, 64)
    row = certified_coverage([_cell(64, 1, a0, b0, 100.0)], max_size=32)["rows"][0]
    assert row["b2"] is None and not row["covered"] and "stumpcheck interval --m 64 --n 64 --seed 1" in row["why"]
    assert "64: no certified interval (not proved here" in coverage_text({"rows": [row]})
