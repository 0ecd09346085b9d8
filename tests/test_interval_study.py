"""The slope study (numerics/corpus/interval/study.py) and its recorded result: the figures C5 quotes
(claims/c5_interval.py SLOPE_STUDY) are the fit of the recorded rows (benchmarks/results-interval-slope.json),
and the table marks capped values; one small study runs in this process."""

from __future__ import annotations

import json
from pathlib import Path

from stumpcheck.claims.c5_interval import SLOPE_STUDY
from stumpcheck.numerics.corpus.interval.study import slope_study, study_table
from stumpcheck.numerics.fits import fit_power_law

RECORD = Path(__file__).resolve().parents[1] / "benchmarks" / "results-interval-slope.json"


def test_the_quoted_slope_is_the_fit_of_the_recorded_rows():
    study = json.loads(RECORD.read_text(encoding="utf-8"))
    rows = study["rows"]
    assert len(rows) == SLOPE_STUDY["corpora"] == 40
    assert sorted({r["m"] for r in rows}) == SLOPE_STUDY["sizes"]
    fit = fit_power_law([r["m"] for r in rows], [r["b2"] for r in rows])
    assert round(fit.exponent, 2) == SLOPE_STUDY["exponent"]
    assert [round(v, 2) for v in fit.exponent_ci] == SLOPE_STUDY["ci95"]
    assert sum(r["capped"] for r in rows) == SLOPE_STUDY["capped"]
    assert all(r["capped"] == (r["b2"] >= 4 * r["m"]) for r in rows)


def test_a_small_study_in_this_process():
    study = slope_study((16, 32), 2, cap=2, workers=1)
    assert [(r["m"], r["seed"]) for r in study["rows"]] == [(16, 0), (16, 1), (32, 0), (32, 1)]
    for r in study["rows"]:
        assert r["b2"] is None or 8 <= r["b2"] <= 2 * r["m"]
    table = study_table(study)
    assert table.splitlines()[0].startswith("| m = n | seed 0 | seed 1 |")
    assert "log-log slope of b₂ against m ∧ n" in table
