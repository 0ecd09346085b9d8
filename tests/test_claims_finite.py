"""Claims C7–C8 (and C6's names re-exported): population sup tables, the checks on small settings, and that each
check can FAIL. C6 itself is tested in test_claim_c6.py."""

from __future__ import annotations

import math

import numpy as np
import pytest

from stumpcheck.claims import boundary as cf
from stumpcheck.numerics.precision import InputError


@pytest.fixture
def small_c7_c8(monkeypatch):
    monkeypatch.setitem(cf.C7_C8_SETTINGS, "quick", {"b": (10.0, 100.0, 1000.0), "N": (16, 64, 256), "reps": 64})


def test_population_sup_at_the_ends():
    """At θ = 1 the one-head has no positive mass: e = θ̂∞ − 1 with θ̂∞ the mean of the density ∝ e^{−bx}."""
    bs = (10.0, 1000.0)
    table = cf.population_sup_table(bs, ("one-head", "averaged", "pooled"))
    for i, b in enumerate(bs):
        mean_exp = 1 / b + math.exp(-b) / math.expm1(-b)  # E[x] under the density ∝ e^{−bx} on [0, 1]
        assert table["one-head"]["sup_error"][i] == pytest.approx(1 - mean_exp, rel=1e-9)
        assert table["one-head"]["theta_at_sup"][i] == 1.0
        assert table["averaged"]["sup_error"][i] == pytest.approx(0.5, rel=1e-3)
        assert table["pooled"]["sup_error"][i] == pytest.approx(1 / b, rel=2e-2)  # bulk law e = 1/b
        assert table["one-head"]["sup_interior_error"][i] == pytest.approx(1 / b, rel=2e-2)
    grid = cf.population_theta_grid(1000.0)
    assert grid[0] == 0.0 and grid[-1] == 1.0 and np.all(np.diff(grid) > 0)
    assert np.any((grid < 1) & (grid > 1 - 1e-8))  # resolves the b⁻³ layer at θ = 1


def test_c7_passes_for_one_head_and_fails_for_pooled(small_c7_c8, tmp_path):
    result = cf.check_c7(quick=True, seed=1, out_dir=tmp_path)
    assert result.id == "C7" and result.evidence == "certified" and result.details["seed"] == 1
    assert result.status == "PASS", result.figure
    # the population part is decided by the proof, the fresh-context part by the exact risk's brackets
    parts = result.details["evidence_parts"]
    assert set(parts.values()) == {"certified", parts["fresh contexts (max over the θ grid at b = 4N, the mode's N)"]}
    assert all(v.startswith("certified") for v in parts.values())
    from stumpcheck.report import evidence_reached
    assert evidence_reached(result) == "certified"
    assert result.details["population_certified"]["ok"] and result.figure.startswith("population (certified")
    assert "fresh contexts certified (exact risk" in result.figure and result.details["population_ok_sampled"]
    fresh = result.details["fresh_certified"]
    assert fresh["ok"] and fresh["keeps"] and fresh["decreases"] and result.details["fresh_ok_sampled"]
    assert fresh["interior_exponent_range"][1] <= -0.5 < fresh["interior_exponent_range"][0] + 0.7
    assert [c["N"] for c in fresh["control"]] == [16, 64, 256]
    assert result.details["certified"]["certificate"] == "c7_population_certificate.json"
    assert (tmp_path / "c7_population_certificate.json").is_file()
    assert (tmp_path / "c7_boundary.png").read_bytes()[:4] == b"\x89PNG"
    assert result.details["plots"] == ["c7_boundary.png"]
    # the reflected head is the mirror image: its worst case sits at θ = 0 instead of θ = 1
    mirror = result.details["reflected_head"]
    assert mirror["status"] == "PASS" and mirror["population"]["theta_at_sup"][-1] < 0.5
    assert result.details["population"]["theta_at_sup"][-1] > 0.5
    pooled = cf.check_c7(quick=True, seed=1, estimator="pooled")
    assert pooled.status == "FAIL"  # the pooled sup error vanishes: no boundary limitation to find
    assert not pooled.details["population_ok"] and not pooled.details["fresh_ok"]
    assert pooled.evidence == "sampled" and pooled.details["population_certified"] is None  # the proof is the one head's


def test_c7_fails_when_the_table_disagrees_with_the_proof(small_c7_c8, monkeypatch):
    """A sampled table below what was proved is a defect of one of them: the row FAILs and names the scale."""
    real = cf.population_sup_table

    def broken(bs, estimators, **kwargs):
        rows = real(bs, estimators, **kwargs)
        for est in estimators:
            rows[est]["sup_error"][-1] = 0.9   # b = 1000: the proof says >= 1 − 2.0001/1000
        return rows

    monkeypatch.setattr(cf, "population_sup_table", broken)
    # the fresh-context proof is not what this test is about (tested above and in test_boundary_fresh.py)
    monkeypatch.setattr(cf, "c7_fresh_certified", lambda *args, **kwargs: {"ok": True, "decided": True, "text": "not run here"})
    result = cf.check_c7(quick=True, seed=1)
    assert result.status == "FAIL" and not result.details["population_ok"]
    assert "b=1000" in result.details["population_certified"]["disagreements"][0]


def test_c8_verdict_per_estimator(small_c7_c8, tmp_path):
    """Pooled: sup error ~ 1/b, 1/N. Averaged: at θ ∈ {0, 1} one head sees a single label and is off by ≈ 1,
    so the average stays ≈ 1/2 off. The claim is that *a* reflected symmetrization removes the limitation:
    PASS with pooled, FAIL with averaged alone, and the averaged verdict is shown in the figure."""
    result = cf.check_c8(quick=True, seed=0, out_dir=tmp_path)
    assert result.details["verdicts"]["pooled"] == {"population": True, "fresh": True}
    assert result.details["verdicts"]["averaged"] == {"population": False, "fresh": False}
    assert result.status == "PASS" and result.evidence == "certified"
    # the averaged part of a PASS row reads as what it is, not as a FAIL of the row
    assert "averaged:" in result.figure and "[fails at the ends θ ∈ {0, 1}, as expected]" in result.figure
    assert "[FAIL]" not in result.figure and "pooled:" in result.figure and "[meets the tolerance]" in result.figure
    assert result.details["population_verdicts_sampled"] == {"averaged": False, "pooled": True}
    assert result.details["evidence_parts"]["population (every b >= b0)"] == "certified"
    # the averaged estimator's failure at the ends is certified (|bias| ≈ 1/2, E|err| <= 1), and so is the pooled
    # estimator's exponent (its envelope's brackets ± ρ), with the Monte Carlo maxima inside the brackets
    averaged = result.details["fresh_averaged_certified"]
    assert averaged["fails"] and averaged["exponent_range"][0] > -0.5
    assert all(0.49 < r["sup_lower"] <= 0.5 for r in averaged["bounds"]["rows"])
    pooled = result.details["fresh_pooled_certified"]
    assert pooled["decided"] and pooled["ok"] and pooled["exponent_range"][1] <= -0.5
    assert pooled["rho_max"] < 3e-4 and [c["N"] for c in pooled["control"]] == [16, 64, 256]
    assert result.details["evidence_parts"]["fresh contexts, pooled"].startswith("certified")
    assert result.details["evidence_parts"]["fresh contexts, averaged (does not meet the tolerance)"].startswith(
        "certified")
    from stumpcheck.report import evidence_reached
    assert evidence_reached(result) == "certified"
    ends = result.details["population_certified"]["averaged_end_enclosures"]
    assert [e["b"] for e in ends] == [10.0, 100.0, 1000.0] and all(e["e(0)"].startswith("[0.5") for e in ends)
    assert not result.details["population_certified"]["disagreements"]
    averaged_only = cf.check_c8(quick=True, seed=0, estimators=("averaged",))
    assert averaged_only.status == "FAIL" and averaged_only.evidence == "certified"
    reflected = cf.check_c8(quick=True, seed=0, estimators=("reflected", "pooled"))
    assert reflected.evidence == "sampled"  # no proof covers the reflected head's C8 reading
    assert (tmp_path / "c8_symmetrized.png").read_bytes()[:4] == b"\x89PNG"
    assert (tmp_path / result.details["certified"]["certificate"]).is_file()
    fit = result.details["fits"]["pooled"]["population_exponent_in_b"]
    assert fit["exponent"] == pytest.approx(-1.0, abs=0.05)
    assert cf.check_c8(quick=True, seed=0, estimators=("pooled",)).status == "PASS"
    with pytest.raises(InputError):
        cf.check_c8(estimators=("three-head",))
    with pytest.raises(InputError):
        cf.check_c7(seed=-1)


def test_additive_fit_recovers_exponents_and_rejects_wrong_ones():
    rng = np.random.default_rng(0)
    size, N = np.meshgrid([32.0, 64, 128, 256, 512], [8.0, 32, 128, 512, 2048])
    size, N = size.ravel(), N.ravel()
    noise = np.exp(rng.normal(0, 0.03, size.size))
    good = cf.fit_additive_rate(size, N, (2 / size + 3 / N) * noise)
    assert good["p_ci95"][0] <= 1 <= good["p_ci95"][1] and good["q_ci95"][0] <= 1 <= good["q_ci95"][1]
    slow = cf.fit_additive_rate(size, N, (2 / np.sqrt(size) + 3 / N) * noise)
    assert slow["p"] == pytest.approx(0.5, abs=0.05)
    assert not slow["p_ci95"][0] <= 1 <= slow["p_ci95"][1]


def test_c6_names_are_re_exported():
    from stumpcheck.claims import c6 as claim_c6

    for name in ("C6_SETTINGS", "HORIZON_RULE", "c6_cell", "c6_cells", "check_c6"):
        assert getattr(cf, name) is getattr(claim_c6, name)
