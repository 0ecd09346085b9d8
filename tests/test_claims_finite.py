"""Claims C6–C8: population sup tables, the checks on small settings, and that each check can FAIL."""

from __future__ import annotations

import math

import numpy as np
import pytest

from numerics import claims_finite as cf
from numerics.precision import InputError


@pytest.fixture
def small_c7_c8(monkeypatch):
    monkeypatch.setitem(cf.C7_C8_SETTINGS, "quick", {"b": (10.0, 100.0, 1000.0), "N": (16, 64, 256), "reps": 64})


@pytest.fixture
def small_c6(monkeypatch):
    monkeypatch.setitem(cf.C6_SETTINGS, "quick", {"sizes": (16, 32), "seeds": 1, "N": (4, 16, 64, 256), "reps": 32,
                                                  "k_max": 2, "step_cap": 50, "long_steps": 20, "long_size": 16})


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
    assert result.id == "C7" and result.evidence == "sampled" and result.details["seed"] == 1
    assert result.status == "PASS", result.figure
    assert (tmp_path / "c7_boundary.png").read_bytes()[:4] == b"\x89PNG"
    assert result.details["plots"] == ["c7_boundary.png"]
    # the reflected head is the mirror image: its worst case sits at θ = 0 instead of θ = 1
    mirror = result.details["reflected_head"]
    assert mirror["status"] == "PASS" and mirror["population"]["theta_at_sup"][-1] < 0.5
    assert result.details["population"]["theta_at_sup"][-1] > 0.5
    pooled = cf.check_c7(quick=True, seed=1, estimator="pooled")
    assert pooled.status == "FAIL"  # the pooled sup error vanishes: no boundary limitation to find
    assert not pooled.details["population_ok"] and not pooled.details["fresh_ok"]


def test_c8_verdict_per_estimator(small_c7_c8, tmp_path):
    """Pooled: sup error ~ 1/b, 1/N. Averaged: at θ ∈ {0, 1} one head sees a single label and is off by ≈ 1,
    so the average stays ≈ 1/2 off. The claim is that *a* reflected symmetrization removes the limitation:
    PASS with pooled, FAIL with averaged alone, and the averaged verdict is shown in the figure."""
    result = cf.check_c8(quick=True, seed=0, out_dir=tmp_path)
    assert result.details["verdicts"]["pooled"] == {"population": True, "fresh": True}
    assert result.details["verdicts"]["averaged"] == {"population": False, "fresh": False}
    assert result.status == "PASS"
    assert "averaged:" in result.figure and "[FAIL]" in result.figure
    assert cf.check_c8(quick=True, seed=0, estimators=("averaged",)).status == "FAIL"
    assert (tmp_path / "c8_symmetrized.png").read_bytes()[:4] == b"\x89PNG"
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
    assert cf._consistent_with_one(good["p"], good["p_ci95"]) and cf._consistent_with_one(good["q"], good["q_ci95"])
    slow = cf.fit_additive_rate(size, N, (2 / np.sqrt(size) + 3 / N) * noise)
    assert slow["p"] == pytest.approx(0.5, abs=0.05)
    assert not cf._consistent_with_one(slow["p"], slow["p_ci95"])
    assert not cf._consistent_with_one(1.0, [0.2, 1.9])  # too wide to decide


def test_c6_cell_follows_the_horizon_rule():
    cell = {"m": 16, "n": 16, "seed": 3, "N": [8, 64], "thetas": [0.5], "reps": 32, "k_max": 2, "step_cap": 40,
            "estimator": "one-head", "long_steps": None}
    out = cf.c6_cell(cell)
    assert out["b0"] == cf.START_B0 and out["a0"] == cf.START_B0
    certified_end = cf.LADDER_B0 * 2 ** out["k_star"] if out["k_star"] >= 0 else out["b0"]
    assert out["b_target"] == max(out["b0"], certified_end)
    if out["b_target"] == out["b0"]:
        assert out["steps"] == 0 and (out["a"], out["b"]) == (out["a0"], out["b0"])
    else:
        assert out["b"] >= out["b_target"] or out["steps"] == cell["step_cap"]
    assert [r["N"] for r in out["fresh"]] == [8, 64]
    assert out["fresh"] == cf.c6_cell(cell)["fresh"]  # reproducible
    long = cf.c6_cell(dict(cell, long_steps=15))
    assert long["steps"] == max(15, 10 * (out["steps"])) or long["stopped_because"].startswith("diverged")
    assert long["horizon"]["steps"] == out["steps"]


def test_check_c6_small_grid(small_c6, tmp_path):
    result = cf.check_c6(quick=True, seed=0, out_dir=tmp_path)
    assert result.id == "C6" and result.evidence == "sampled"
    assert (tmp_path / "c6_rates.png").read_bytes()[:4] == b"\x89PNG"
    assert len((tmp_path / "c6_sweep.jsonl").read_text().splitlines()) == 3  # 2 grid cells + the long one
    d = result.details
    assert result.status == ("PASS" if d["rate_ok"] and d["trained_fraction"] >= cf.C6_TRAINED_FRACTION else "FAIL")
    assert d["long_training"]["horizon"]["steps"] == d["cells"][0]["steps"] or d["cells"][0]["m_min_n"] != 16
    again = cf.check_c6(quick=True, seed=0, out_dir=tmp_path)  # resumes from the store: same numbers
    assert again.details["joint_fit"] == d["joint_fit"]


def _synthetic_cell(power: float, k_star: int):
    """A stand-in for c6_cell whose frozen error is exactly 2·(m∧n)^(−power) + 3/N (no randomness)."""
    def cell_function(cell):
        size = min(cell["m"], cell["n"])
        fresh = [{"theta": t, "N": N, "mean_abs_error": 2 * size ** -power + 3 / N, "ci_low": 0.0, "ci_high": 1.0}
                 for t in cell["thetas"] for N in cell["N"]]
        return {"m": cell["m"], "n": cell["n"], "m_min_n": size, "seed": cell["seed"], "k_star": k_star,
                "b0": 1.0, "b_target": 2.0 ** k_star if k_star >= 0 else 1.0, "a": 1.0, "b": 1.0, "steps": 0, "stopped_because": "synthetic",
                "long_steps": cell.get("long_steps"), "horizon": {"steps": 0}, "fresh": fresh}
    return cell_function


@pytest.mark.parametrize("power, k_star, status", [(1.0, 2, "PASS"), (0.5, 2, "FAIL"), (1.0, -1, "FAIL")])
def test_c6_verdict_follows_its_rule(power, k_star, status, monkeypatch):
    monkeypatch.setitem(cf.C6_SETTINGS, "quick", {"sizes": (32, 64, 128, 256), "seeds": 1,
                                                  "N": (8, 32, 128, 512, 2048), "reps": 2, "k_max": 2,
                                                  "step_cap": 1, "long_steps": 1, "long_size": 32})
    monkeypatch.setattr(cf, "c6_cell", _synthetic_cell(power, k_star))
    result = cf.check_c6(quick=True, seed=0)
    assert result.status == status, result.figure
    assert result.details["joint_fit"]["p"] == pytest.approx(power, abs=1e-6)
    assert result.details["joint_fit"]["q"] == pytest.approx(1.0, abs=1e-6)
