"""C6: the power-mean fit and its bootstrap, the large-resolution start and its step, the cell logic, the verdict."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from stumpcheck.claims import c6 as c6
from stumpcheck.claims.c6_fit import row_fit
from stumpcheck.numerics.fits import fit_additive_surface, fit_power_mean
from stumpcheck.numerics.generated import asymptotics_numpy as derived
from stumpcheck.numerics.corpus.steps import large_resolution_start, population_eta

SIZES = (64.0, 128.0, 256.0, 512.0, 1024.0)
NS = tuple(float(2 ** j) for j in range(4, 14))


def _surface(size, N, p, q, k, A=2.0, B=1.5):
    return ((A * size ** -p) ** k + (B * N ** -q) ** k) ** (1 / k)


@settings(max_examples=8, deadline=None)  # exponents near the claim's, where both terms dominate somewhere
@given(p=st.floats(0.75, 1.25), q=st.floats(0.75, 1.25), k=st.floats(1.0, 6.0), seed=st.integers(0, 2 ** 16))
def test_power_mean_fit_recovers_known_exponents(p, q, k, seed):
    size, N = (v.ravel() for v in np.meshgrid(SIZES, NS))
    noise = np.exp(np.random.default_rng(seed).normal(0, 0.01, size.size))
    fit = fit_power_mean(size, N, _surface(size, N, p, q, k) * noise)
    assert fit["p"] == pytest.approx(p, abs=0.05) and fit["q"] == pytest.approx(q, abs=0.05)
    assert fit["rms_log_residual"] < 0.02


def test_additive_fit_is_worse_on_a_sharp_crossover():
    size, N = (v.ravel() for v in np.meshgrid(SIZES, NS))
    error = _surface(size, N, 1.0, 1.0, 4.0)
    power_mean, additive = fit_power_mean(size, N, error), fit_additive_surface(size, N, error)
    assert power_mean["k"] == pytest.approx(4.0, rel=1e-3) and power_mean["rms_log_residual"] < 1e-6
    assert additive["rms_log_residual"] > 0.03 and abs(additive["q"] - 1) > 0.1  # the spurious q of a sum


def _cells(p, q, k, *, corpora, seed, reps=200, spread=0.03):
    """Synthetic C6 cells: each corpus has a frozen error (its own multiplicative corpus effect) and each
    fresh-context mean carries Monte Carlo noise of standard error sd/sqrt(reps)."""
    rng = np.random.default_rng(seed)
    cells = []
    for s in SIZES:
        for c in range(corpora):
            effect = math.exp(rng.normal(0, spread))
            fresh = []
            for N in NS:
                true = _surface(s, N, p, q, k) * effect
                sd = 0.6 * true
                fresh.append({"theta": 0.5, "N": int(N), "mean_abs_error": true + rng.normal(0, sd / math.sqrt(reps)),
                              "sd_abs_error": sd, "reps": reps})
            cells.append({"m_min_n": int(s), "seed": c, "fresh": fresh})
    return cells


def test_bootstrap_intervals_cover_the_truth():
    covered = []
    for seed in range(4):
        fit = row_fit(_cells(1.0, 1.0, 2.0, corpora=3, seed=seed), bootstrap=60, seed=seed)["power_mean"]
        covered.append(fit["p_ci95"][0] <= 1.0 <= fit["p_ci95"][1] and fit["q_ci95"][0] <= 1.0 <= fit["q_ci95"][1])
        assert fit["p_ci95"][1] - fit["p_ci95"][0] < 0.3
    assert sum(covered) >= 3, covered
    wrong = row_fit(_cells(0.5, 1.0, 2.0, corpora=3, seed=9), bootstrap=60, seed=9)["power_mean"]
    assert wrong["p_ci95"][1] < 0.9  # a (m∧n)^-1/2 law is not mistaken for (m∧n)^-1


def test_large_resolution_start_and_population_step():
    a0, b0 = large_resolution_start(512, 1024)
    assert b0 == 128.0 and a0 == float(derived.calibration_a(128.0))
    eta, rule = population_eta(a0, b0)
    assert "population" in rule and f"{eta:.6g}" in rule
    assert eta * b0 ** -3 == pytest.approx(1.0, rel=0.1)  # λ_max ≈ b0⁻³ along the calibration direction


def _fake_c5(last_good_b):
    """A stand-in C5 whose error along the progress direction is 0 up to ``last_good_b`` and 1 beyond."""
    def gradient_error_by_scale(m, n, *, b0, k_max, seeds, estimator="one-head", method="pruned",
                                rungs_per_octave=1):
        b = [b0 * 2.0 ** (k / rungs_per_octave) for k in range(k_max + 1)]
        along = [[0.0 if last_good_b is not None and bk <= last_good_b else 1.0 for bk in b]]
        good = [bk for bk in b if last_good_b is not None and bk <= last_good_b]
        return {"b": b, "seeds": list(seeds), "along": along, "ratio": along,
                "certified_k": len(good) - 1, "certified_b": good[-1] if good else None}
    return gradient_error_by_scale


# m = 48, n = 64: b0 = 12, cap 24, horizon ladder 12·2^(j/4) = 12, 14.27, 16.97, 20.18, 24
@pytest.mark.parametrize("last_good_b, binding, certified_end", [(1e9, "(m∧n)/2 cap", 24.0),
                                                                 (18.0, "certified interval from the start",
                                                                  12 * 2 ** 0.5),
                                                                 (8.0, "criterion fails at the start", None),
                                                                 (None, "criterion fails at the start", None)])
@pytest.mark.parametrize("row", ["large-resolution", "certified-horizon"])
def test_large_resolution_cells_follow_the_horizon_rule(row, last_good_b, binding, certified_end, monkeypatch):
    """The verdict row trains to (m∧n)/2 and says whether that lies inside the certified interval;
    the control row trains only to the certified end (no step when the criterion fails at b0)."""
    from stumpcheck.claims import c5 as claim_c5

    monkeypatch.setattr(claim_c5, "gradient_error_by_scale", _fake_c5(last_good_b))
    cell = {"m": 48, "n": 64, "seed": 1, "N": [16, 256], "thetas": [0.5], "reps": 16, "step_cap": 20000,
            "row": row}
    out = c6.c6_cell(cell)
    assert out["row"] == row and (out["b0"], out["a0"]) == (12.0, float(derived.calibration_a(12.0)))
    assert out["horizon"]["binding"] == binding and out["horizon"]["cap"] == 24.0
    assert out["horizon"]["horizon"] == (None if certified_end is None else pytest.approx(certified_end))
    target = 24.0 if row == "large-resolution" else certified_end
    assert out["trained_within_certified"] == (certified_end is not None and target <= certified_end)
    if target is not None:
        assert out["steps"] > 0 and out["b"] >= target and out["stopped_because"] == "b_target"
        assert "population" in out["eta_rule"] and out["largest_loss_increase"] <= 1e-15
    else:
        assert out["steps"] == 0 and (out["a"], out["b"]) == (out["a0"], out["b0"])
        assert "no certified GD step" in out["note"]
    assert [r["N"] for r in out["fresh"]] == [16, 256]


def test_size_horizons_computes_each_size_once(monkeypatch):
    from stumpcheck.claims import c5 as claim_c5

    calls = []
    fake = _fake_c5(18.0)

    def counting(*args, **kwargs):
        calls.append(args[:2])
        return fake(*args, **kwargs)

    monkeypatch.setattr(claim_c5, "gradient_error_by_scale", counting)
    cells = [{"row": row, "m": s, "n": s, "seed": i, "c5_seeds": [0, 1]}
             for row in ("large-resolution", "certified-horizon") for s in (48, 64) for i in (0, 1)]
    horizons = c6.size_horizons(cells)
    assert sorted(horizons) == [(48, 48), (64, 64)] and len(calls) == 4  # two ladders per size
    assert horizons[(64, 64)]["horizon"] == 16.0 and horizons[(48, 48)]["horizon"] == pytest.approx(12 * 2 ** 0.5)


def test_old_sweep_cells_run_the_new_protocol():
    """A `stumpcheck sweep` cell (k_max, step_cap, long_steps) runs the large-resolution row."""
    cell = {"m": 16, "n": 16, "seed": 0, "N": [8], "thetas": [0.5], "reps": 16, "k_max": 1, "step_cap": 5,
            "estimator": "one-head", "long_steps": None}
    out = c6.c6_cell(cell)
    assert out["row"] == "large-resolution" and out["b0"] == 4.0 and isinstance(out["k_star"], int)
    assert out["steps"] <= 5 and out == c6.c6_cell(cell) | {"seconds": out["seconds"]}


def _synthetic_cell(power):
    def cell_function(cell):
        size = min(cell["m"], cell["n"])
        row = cell["row"]
        fresh = [{"theta": t, "N": N, "mean_abs_error": _surface(size, N, power, 1.0, 2.0), "sd_abs_error": 1e-6,
                  "reps": cell["reps"]} for t in cell["thetas"] for N in cell["N"]]
        out = {"m": cell["m"], "n": cell["n"], "m_min_n": size, "seed": cell["seed"], "row": row, "b0": size / 4,
               "a": 1.0, "b": size / 2, "steps": 1, "stopped_because": "synthetic", "fresh": fresh,
               "horizon": {"binding": "(m∧n)/2 cap", "certified_b": size}}
        if row == "above-n":
            out.update(b_min=1.0, lowered_b=False, loss_start=1.0, loss_end=0.5, fresh=[])
        return out
    return cell_function


@pytest.mark.parametrize("power, status", [(1.0, "PASS"), (0.5, "FAIL")])
def test_c6_verdict_follows_its_rule(power, status, monkeypatch, tmp_path):
    monkeypatch.setitem(c6.C6_SETTINGS, "quick", dict(c6.C6_SETTINGS["quick"], sizes=(64, 128, 256, 512, 1024), mechanism_sizes=(64, 128, 256, 512, 1024),
                                                      control_sizes=(64, 128), reps=4, bootstrap=20,
                                                      N=tuple(int(N) for N in NS[::3])))
    monkeypatch.setattr(c6, "c6_cell", _synthetic_cell(power))
    monkeypatch.setattr("stumpcheck.claims.c6_controls.FIXED_SCALES", (32.0,))
    result = c6.check_c6(quick=True, seed=0, out_dir=tmp_path, workers=1)  # the stand-in cell lives here
    assert result.status == status, result.figure
    for key in ("power_mean_fit", "mechanism_fit"):
        fit = result.details[key]
        assert set(fit) >= {"p", "p_ci95", "q", "q_ci95", "k", "rms_log_residual"}
        assert fit["p"] == pytest.approx(power, abs=1e-3)
    assert (tmp_path / "c6_rates.png").read_bytes()[:4] == b"\x89PNG"
    assert result.details["plots"] == ["c6_rates.png", "c6_controls.png"]
    assert "additive fit" in result.figure
