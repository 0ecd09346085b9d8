"""Claim C9: GD is a descent method below the computed step bound."""

from __future__ import annotations

import json

import numpy as np
import pytest

from stumpcheck.claims.c9 import ABOVE_FACTORS, ROUNDING_ULPS, check_c9, loss_increases
from stumpcheck.numerics.corpus.corpora import make_corpus
from stumpcheck.numerics.corpus.gd import step_bound


def test_loss_increases_counts_only_beyond_the_rounding_level():
    loss = np.array([1.0, 0.5, 0.5 * (1 + 2.0**-52), 0.4, 0.45, 0.3])
    counts = loss_increases(loss)
    assert counts["increases"] == 1 and counts["raw_increases"] == 2
    assert counts["at_step"] == 3 and counts["max_relative_increase"] == pytest.approx(0.125)
    assert loss_increases(np.array([1.0, 1.0 + ROUNDING_ULPS * 2.0**-52 * 2]))["increases"] == 1
    assert loss_increases(np.array([3.0, 2.0, 1.0]))["increases"] == 0


def test_check_c9_quick(tmp_path):
    result = check_c9(quick=True, seed=0, out_dir=tmp_path)
    d = result.details
    assert result.id == "C9" and result.evidence == "certified"
    proof = d["certified"]
    assert proof["proved"] and proof["steps"] == d["steps"] == proof["exact_step_decreases"] == proof["iterate_decreases"]
    assert proof["eta"] == d["eta"] < proof["bound"] and proof["bound"] * proof["M"] <= 2.0
    # the certified M holds the sampled maximum over the iterates and midpoints (the boxes hold them)
    assert proof["M"] >= d["max_curvature"] * (1 - 1e-12)
    assert result.figure.startswith("certified: ") and "sampled: 0 increases" in result.figure
    assert "libm" in str(proof["assumptions"])
    assert proof["certificate"] == "c9_descent_certificate.json" and "_proof" not in proof
    from stumpcheck.numerics.corpus.descent_certificate import recheck_descent

    document = json.loads((tmp_path / proof["certificate"]).read_text(encoding="utf-8"))
    assert recheck_descent(document)[0]
    assert result.status == ("PASS" if d["eta"] < d["bound"] and d["below_bound"]["increases"] == 0 else "FAIL")
    assert result.passed, result.figure
    assert d["seed"] == 0 and d["m"] == 64 and d["n"] == 64 and d["precision"].startswith("float64 run")
    assert d["bound"] * d["max_curvature"] == pytest.approx(2.0, rel=1e-15)
    assert d["curvature_points"] == 2 * d["steps"] + 1  # iterates and segment midpoints
    assert [entry["eta_over_bound"] for entry in d["above_bound"]] == list(ABOVE_FACTORS)
    assert d["plots"] == ["c9_descent.png"] and (tmp_path / "c9_descent.png").stat().st_size > 1000
    # the bound is recomputable from the reported maximiser
    corpus = make_corpus(64, 64, seed=0)
    again = step_bound(corpus.x, corpus.theta, [d["attempts"][-1]["at"][0]], [d["attempts"][-1]["at"][1]])
    assert again.bound == d["bound"]


@pytest.mark.slow
def test_check_c9_full_mode(tmp_path):
    """m = n = 256, 2000 steps (about 4 minutes on 2 shared cores)."""
    result = check_c9(quick=False, seed=0, out_dir=tmp_path)
    assert result.details["m"] == 256 and result.details["steps"] == 2000
    assert result.passed, result.figure
