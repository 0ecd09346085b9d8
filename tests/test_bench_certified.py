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
