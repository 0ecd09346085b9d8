"""C6's certified per-corpus figures (stumpcheck/claims/c6_certified.py): the training certificate of a cell's own
run, the exact risk brackets at its frozen head, the coverage answer, and the fit on the brackets."""

from __future__ import annotations

from decimal import Decimal

import numpy as np
import pytest

from stumpcheck.claims import c6
from stumpcheck.claims import c6_certified as cc
from stumpcheck.claims.c6_fit import cell_curve, row_fit

# m = n = 32, seed 2: b0 = 8, GD with the population step reaches b >= 16 in 47 steps (0.02 s certified)
_HORIZON = {"horizon": 16.0, "certified_k": 1, "certified_b": 16.0, "binding": "(m∧n)/2 cap", "cap": 16.0}


@pytest.fixture(scope="module")
def certified_cell():
    cell = {"m": 32, "n": 32, "seed": 2, "N": [16, 256], "thetas": [0.5], "reps": 64, "step_cap": 200,
            "row": "large-resolution", "certify": True, "horizon": dict(_HORIZON)}
    return c6.c6_cell(cell)


def _inside(inner, outer) -> bool:
    return Decimal(outer[0]) <= Decimal(inner[0]) and Decimal(inner[1]) <= Decimal(outer[1])


def test_cell_run_is_proved_and_its_head_bracketed(certified_cell):
    from stumpcheck.numerics.certified.enclosures.fresh_risk import fresh_context_risk

    out, cert = certified_cell, certified_cell["certified"]
    assert cert["proved"] and cert["stopped_because"] == "b_target" and cert["same_step"]
    assert cert["steps"] == out["steps"] > 0
    box = cert["final_box_float"]
    assert box["b"][0] <= out["b"] <= box["b"][1] and box["a"][0] <= out["a"] <= box["a"][1]
    assert cert["float64_in_box"] and cert["risk_float64"] is None and box["b"][0] >= 16.0
    assert cert["float64_iterates_inside"] == [out["steps"] + 1, out["steps"] + 1]
    assert Decimal(cert["final_box"]["b"][0]) == Decimal(box["b"][0])  # the exact decimal of the double
    assert [(r["theta"], r["N"]) for r in cert["risk"]] == [(0.5, 16), (0.5, 256)]
    for row in cert["risk"]:
        low, high = (Decimal(v) for v in row["bracket"])
        assert 0 < low < high and low == min(abs(Decimal(v)) for v in row["bias"])
        # √MSE's upper end: at least the root of the MSE's lower end, and rounded up by no more than its digits
        assert Decimal(row["mse"][0]) <= high ** 2 <= Decimal(row["mse"][1]) * (1 + Decimal("1e-9"))
        # the box's bracket holds for the float64 head: its own enclosure lies inside the box's
        point = fresh_context_risk(out["a"], out["b"], 0.5, row["N"], dps=15)
        assert _inside(point.bounds("bias"), row["bias"]) and _inside(point.bounds("mse"), row["mse"])
        assert row["mc_mean"] == next(f["mean_abs_error"] for f in out["fresh"] if f["N"] == row["N"])
        assert row["mc_in_bracket"] == (low <= Decimal(repr(row["mc_mean"])) <= high)
    assert cert["certificate"]["format"] == "stumpcheck-training-certificate/1"
    assert cert["certificate"]["statement"]["steps"] == out["steps"]


def test_certificates_are_written_and_recheck(certified_cell, tmp_path):
    import copy
    import json

    from stumpcheck.numerics.corpus.certified_run.recheck import recheck_training
    from stumpcheck.numerics.corpus.corpora import load_corpus

    results = [copy.deepcopy(certified_cell)]
    written = cc.save_training_certificates(results, tmp_path)
    assert written == ["c6_training/m32_n32_seed2.training_certificate.json"]
    assert results[0]["certified"]["certificate"] == written[0]
    document = json.loads((tmp_path / written[0]).read_text())
    corpus = load_corpus(tmp_path / results[0]["certified"]["corpus_file"])
    ok, reason, derived, _ = recheck_training(document, corpus.x, corpus.theta, arb="none")
    assert ok, reason
    assert derived["steps"] == certified_cell["steps"]
    # without a folder the document is dropped from the result, not kept in the report
    again = [copy.deepcopy(certified_cell)]
    assert cc.save_training_certificates(again, None) == [] and again[0]["certified"]["certificate"] is None


def test_coverage_answers_from_the_certificates(certified_cell):
    unproved = {**certified_cell, "seed": 3,
                "certified": {**certified_cell["certified"], "proved": False, "stopped_because": "hull left b > 0",
                              "why": "the chain ended unproved at step 7: hull left b > 0"}}
    summary = cc.training_coverage([certified_cell, unproved, {**certified_cell, "seed": 4, "certified": None}])
    (row,) = summary["rows"]
    assert row["m_min_n"] == 32 and not row["proved"]
    first, second, third = row["corpora"]
    assert first["proved"] and first["steps"] == certified_cell["steps"]
    assert "hull left b > 0" in second["why"] and third["why"] == "not certified in this mode"
    text = cc.training_coverage_text(summary)
    assert text.startswith("trained run proved by its training certificate") and "32: not proved" in text
    lo, hi = first["final_box"]["b"]
    shown = text.split("b in [")[1].split("]")[0].split(", ")
    assert Decimal(shown[0]) <= Decimal(lo) and Decimal(hi) <= Decimal(shown[1])  # rounded outward


def _bracketed_cell(size, seed, Ns, thetas, spread):
    """A stand-in large-resolution cell whose error is 1/size + 1/N, bracketed by [(1 − spread)e, (1 + spread)e]."""
    risk, fresh = [], []
    for t in thetas:
        for N in Ns:
            e = 1 / size + 1 / N
            risk.append({"theta": t, "N": N, "bracket": [repr(e * (1 - spread)), repr(e * (1 + spread))],
                         "mc_in_bracket": True, "mc_ci_meets_bracket": True, "mc_mean": e})
            fresh.append({"theta": t, "N": N, "mean_abs_error": e * (1 + 0.05 * (seed - 0.5)), "sd_abs_error": 0.0,
                          "reps": 8, "ci_low": e, "ci_high": e})
    box = {"a": ["1", "1"], "b": [repr(size / 2), repr(size / 2)]}
    return {"m": size, "n": size, "m_min_n": size, "seed": seed, "row": "large-resolution", "fresh": fresh,
            "certified": {"proved": True, "steps": 3, "stopped_because": "b_target", "final_box": box,
                          "float64_in_box": True, "same_step": True, "risk": risk,
                          "seconds_cpu": {"chain": 0.0, "risk": 0.0}}}


def test_cell_curve_reads_the_brackets():
    cell = _bracketed_cell(64, 0, [16, 64], [0.3, 0.7], 0.2)
    e = 1 / 64 + 1 / 16
    assert cell_curve(cell, "certified-low")[16] == (pytest.approx(0.8 * e), 0.0)
    assert cell_curve(cell, "certified-high")[16] == (pytest.approx(1.2 * e), 0.0)
    assert cell_curve(cell, "certified-mid")[16] == (pytest.approx(e), 0.0)
    with pytest.raises(ValueError):
        cell_curve(cell, "certified-median")


def test_fit_on_brackets_and_summary():
    Ns, sizes = [16, 64, 256, 1024, 8192], [64, 128, 256, 512]
    cells = [_bracketed_cell(s, i, Ns, [0.5], 0.1) for s in sizes for i in (0, 1)]
    mode = {"bootstrap": 20}
    fit = row_fit(cells, bootstrap=20, seed=0, value="certified-mid")["power_mean"]
    assert fit["value"] == "certified-mid" and fit["p"] == pytest.approx(1, abs=0.02)
    assert fit["q"] == pytest.approx(1, abs=0.02)
    assert fit["p_ci95"][1] - fit["p_ci95"][0] < 1e-6  # no sampling in a bracket, identical corpora
    summary = cc.certified_summary(cells, mode, 0, monte_carlo_fit=row_fit(cells, bootstrap=5, seed=0))
    assert summary["fit_value"] == "certified-mid" and summary["certified_cells"] == 8
    assert summary["fits"]["low"]["power_mean"]["p"] == pytest.approx(1, abs=0.02)
    parts = summary["evidence_parts"]
    assert sorted(v.split()[0] for v in parts.values()) == ["certified", "sampled", "sampled"]
    assert "every run proved by its training certificate" in next(iter(parts.values()))
    # a run not proved (its chain skipped): its cell's brackets are at the float64 head, and the part says so
    skipped = cells[:-1] + [{**cells[-1], "certified": {**cells[-1]["certified"], "proved": False}}]
    first = next(iter(cc.certified_summary(skipped, mode, 0)["evidence_parts"].values()))
    assert first.startswith("certified (7 of 8 runs proved") and "1 at the float64-trained head" in first
    assert summary["monte_carlo_control"] == {"points": 40, "mean_in_bracket": 40, "ci95_meets_bracket": 40}
    assert [t["m_min_n"] for t in summary["table"]] == [64, 64, 128, 128, 256, 256, 512, 512]
    assert set(summary["table"][0]["brackets"]) == {"16", "1024"}
    text = cc.certified_text(summary)
    assert "statistical" in text and "8 of 8" in text and "N=1024: [" in text
    # one cell without brackets: the verdict falls back to the Monte Carlo means and says so
    partial = cc.certified_summary(cells[:-1] + [{**cells[-1], "certified": None}], mode, 0)
    assert partial["fit_value"] == "monte-carlo" and partial["uncertified"] == [[512, 1]]
    assert "7 of 8" in next(iter(partial["evidence_parts"].values()))


def test_check_c6_fits_certified_midpoints_and_stays_sampled(monkeypatch, tmp_path):
    from stumpcheck.report import evidence_reached

    Ns = (16, 128, 1024, 8192)
    monkeypatch.setitem(c6.C6_SETTINGS, "quick", dict(c6.C6_SETTINGS["quick"], sizes=(64, 128, 256, 512),
                                                      mechanism_sizes=(64, 128, 256, 512), control_sizes=(64, 128),
                                                      reps=4, bootstrap=20, N=Ns))

    def cell_function(cell):
        size = min(cell["m"], cell["n"])
        out = _bracketed_cell(size, cell["seed"], list(cell["N"]), list(cell["thetas"]), 0.1)
        out.update(row=cell["row"], b0=size / 4, a=1.0, b=size / 2, steps=1, stopped_because="synthetic",
                   horizon={"binding": "(m∧n)/2 cap", "certified_b": size})
        if cell["row"] != "large-resolution":
            out.pop("certified")
        if cell["row"] == "above-n":
            out.update(b_min=1.0, lowered_b=False, loss_start=1.0, loss_end=0.5, fresh=[])
        return out

    def horizons(cells):  # the C5 ladders are not what this test is about
        return {(c["m"], c["n"]): {"horizon": c["m"] / 2, "certified_b": c["m"], "binding": "(m∧n)/2 cap",
                                   "cap": c["m"] / 2, "horizon_ladder_b": [], "horizon_along_rms": [],
                                   "certified_k": 1} for c in cells if c["row"] == "large-resolution"}

    monkeypatch.setattr(c6, "c6_cell", cell_function)
    monkeypatch.setattr(c6, "size_horizons", horizons)
    monkeypatch.setattr("stumpcheck.claims.c6_controls.FIXED_SCALES", (32.0,))
    result = c6.check_c6(quick=True, seed=0, out_dir=tmp_path, workers=1)
    assert result.status == "PASS", result.figure
    assert result.details["power_mean_fit"]["value"] == "certified-mid"
    assert result.details["monte_carlo_fit"]["value"] == "monte-carlo"
    assert "large-resolution (midpoints of the certified brackets)" in result.figure
    assert "trained run proved by its training certificate (certified): 64: proved" in result.figure
    assert result.evidence == "sampled" and evidence_reached(result) == "sampled"
    assert any(v.startswith("certified (") for v in result.details["evidence_parts"].values())


def test_a_chain_over_the_cost_cap_is_skipped_and_the_float64_head_bracketed():
    cell = {"m": 32, "n": 32, "seed": 2, "N": [64], "thetas": [0.5], "reps": 16, "step_cap": 200,
            "row": "large-resolution", "certify": True, "chain_token_steps": 1000, "horizon": dict(_HORIZON)}
    out = c6.c6_cell(cell)
    cert = out["certified"]
    assert not cert["proved"] and cert["final_box"] is None and cert["certificate"] is None
    assert "chain_token_steps" in cert["why"] and "--certify" in cert["why"]
    assert cert["risk"] == cert["risk_float64"] and cert["risk_head"].startswith("the float64-trained")
    assert cert["seconds_cpu"]["chain"] == 0.0 and len(cert["risk"]) == 1
    (row,) = cc.training_coverage([out])["rows"]
    assert not row["proved"] and row["corpora"][0]["why"] == cert["why"]
    (entry,) = cc.certified_table([out], Ns=(64,))
    assert entry["final_b"] is None and entry["float64_b"] == out["b"] and entry["steps"] == out["steps"]
