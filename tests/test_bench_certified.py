"""The float64 side of the certified benchmark rows: the points at which a certificate's leaves are evaluated."""

from __future__ import annotations

import math

import pytest

from benchmarks.bench_certified import _float64_at_leaves, _leaf_points
from stumpcheck.numerics.generated import asymptotics_numpy as derived


def _leaf(**box):
    return {"box": {name: [str(lo), str(hi)] for name, (lo, hi) in box.items()}}


def test_leaf_midpoints_in_each_coordinate_system():
    calibration = {"domain": {"coordinates": "calibration"}, "leaves": [_leaf(b=(20, 22), lam=(0, 0))]}
    scaled = {"domain": {"coordinates": "scaled"}, "leaves": [_leaf(b=(30, 32), w=(0.5, 0.5))]}
    excess = {"domain": {"coordinates": "excess"}, "leaves": [_leaf(b=(1, 3), excess=(-2, 0), theta=(0.1, 0.3))]}
    layer = {"domain": {"coordinates": "layer"}, "leaves": [_leaf(b=(1, 3), v=(0, 1), a=(1, 2))]}
    (a1, b1, t1), = _leaf_points(calibration)
    assert (b1, t1) == (21.0, None) and a1 == pytest.approx(float(derived.calibration_a(21.0)))
    (a2, b2, _), = _leaf_points(scaled)
    assert b2 == 31.0 and a2 == pytest.approx(float(derived.calibration_a(31.0)) + 0.5 / 31.0)
    assert _leaf_points(excess) == [(1.0, 2.0, pytest.approx(0.2))]
    assert _leaf_points(layer) == []
    region = {"obligations": {"inward": scaled, "drift": calibration}}
    assert len(_leaf_points(region)) == 2


def test_float64_at_leaves_counts_the_points_and_times_them():
    document = {"domain": {"coordinates": "calibration"}, "leaves": [_leaf(b=(20, 22), lam=(0, 0))] * 3}
    seconds, count = _float64_at_leaves([document, {"leaves": []}])
    assert count == 3 and 0 < seconds < 1
    seconds, count = _float64_at_leaves([])
    assert count == 0 and math.isnan(seconds)


def test_full_mode_rows_carry_the_issue_targets(monkeypatch, tmp_path):
    """run(quick=False) with every command replaced by a canned result: the rows, their targets and verdicts."""
    import benchmarks.bench_certified as B

    cpu = {"flow": 50.0, "region": 70.0, "verify": 100.0, "recheck": 40.0}

    def command(argv, source, cwd):
        seconds = cpu[argv[0]] * (10 if source is not None else 1)
        if argv[0] == "verify" and "--full" in argv and "--only" not in argv:
            seconds = 500.0 * (4 if source is not None else 1)
        return {"argv": argv, "wall_seconds": seconds, "cpu_seconds": seconds, "exit_status": 0, "output_tail": ""}

    monkeypatch.setattr(B, "_command", command)
    monkeypatch.setattr(B, "reference_source", lambda revision: (tmp_path, False))
    monkeypatch.setattr(B, "_float64_tube", lambda t_max: 0.04)
    rows = {r["name"]: r for r in B.run(quick=False, revision="abc1234")}
    tube = rows["tube (10, 10) -> 1e6: CPU seconds against the issue's target"]
    assert tube["target"] == "<= 1" and tube["met"] is True
    region = rows["region b in [30, 1000]: CPU seconds against the issue's target"]
    assert region["met"] is False and region["ratio"] == pytest.approx(70 / 60)
    assert rows["tube (10, 10) -> 1e6 vs the float64 flow it certifies"]["met"] is False  # 50 / 0.04 > 1e3
    assert rows["recheck of the tube to 1e6 vs its proof"]["met"] is True
    assert rows["verify --full: WALL seconds against the issue's target"]["met"] is True
    assert rows["verify --full vs the same command at abc1234"]["ratio"] == pytest.approx(4.0)
    assert rows["the six built-in lemmas certified, whole domains vs the same command at abc1234"]["ratio"] == \
        pytest.approx(10.0)
