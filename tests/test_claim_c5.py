"""Claim C5 (numerics/claim_c5*.py): the gradient error along the progress direction, its certified scale."""

from __future__ import annotations

import json
import math

from fractions import Fraction

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from stumpcheck.claims import c5 as c5
from stumpcheck.claims.c5 import (ALONG_LIMIT, LADDER_B0, PLOT_NAME, certified_k, check_c5, gradient_error_by_scale,
                               ladder_k_max, scale_verdict)
from stumpcheck.claims.c5_layer import deep_layer_figures
from stumpcheck.claims.c5_report import SCALE_PLOT_NAME, TRAJECTORY_PLOT_NAME, no_positive_split
from stumpcheck.claims.c5_trajectory import population_eta, trajectory_figures
from stumpcheck.numerics.corpus.corpora import make_corpus
from stumpcheck.numerics.corpus.empirical import loss_and_gradient
from stumpcheck.numerics.generated import asymptotics_numpy as derived
from stumpcheck.numerics.population.quantities import loss_and_gradient_float64, loss_gradient_hessian_float64
from stumpcheck.numerics.precision import InputError

#: keys that C6 and sweep read from gradient_error_by_scale (an interface: never remove one)
INTERFACE_KEYS = {"b", "a", "certified_k", "ratio", "along", "across", "ratio_max", "along_rms", "b_rate_ratio",
                  "certified_b", "certified_k_full_norm", "seeds", "grad_population", "grad_corpus"}


def test_certified_k_is_the_end_of_the_first_run_below_the_limit():
    assert certified_k([0.1, 0.4, 0.5, 0.7, 0.2]) == 2
    assert certified_k([0.6, 0.1]) == -1
    assert certified_k([0.1, 0.2]) == 1
    assert certified_k([0.1, float("nan"), 0.1]) == 0
    assert certified_k([0.3, 0.45, 0.55], ALONG_LIMIT) == 1
    assert certified_k([0.3, 0.45, 0.55], 0.4) == 0


@given(st.lists(st.floats(min_value=0.0, max_value=2.0), min_size=1, max_size=12))
def test_certified_k_property(values):
    k = certified_k(values, ALONG_LIMIT)
    assert all(v <= ALONG_LIMIT for v in values[:k + 1])
    assert k == len(values) - 1 or values[k + 1] > ALONG_LIMIT


def test_ladder_reaches_twice_n():
    assert LADDER_B0 == 8.0
    for n in (64, 100, 256, 1000, 4096):
        k = ladder_k_max(n)
        assert LADDER_B0 * 2**k >= 2 * n > LADDER_B0 * 2 ** (k - 1)


def test_scale_verdict_logic():
    assert scale_verdict([64, 256, 1024], [16, 64, 256])["passed"]
    assert scale_verdict([64, 256, 1024], [16, 64, 256])["slope"] == pytest.approx(1.0)
    # slope exactly 3/4 (powers of two over sizes 4x apart) passes despite rounding in the fit
    exact = scale_verdict([128, 512, 2048], [32, 128, 256])
    assert exact["slope"] == pytest.approx(0.75) and exact["passed"]
    low = scale_verdict([128, 512, 2048], [64, 128, 256])
    assert low["monotone"] and low["slope"] == pytest.approx(0.5) and not low["passed"]
    down = scale_verdict([64, 256, 1024], [32, 256, 128])
    assert not down["monotone"] and not down["passed"]
    none_first = scale_verdict([64, 256, 1024], [None, 64, 256])
    assert none_first["monotone"] and not none_first["complete"] and not none_first["passed"]
    assert not scale_verdict([64, 256, 1024], [16, None, 256])["monotone"]
    with pytest.raises(InputError):
        scale_verdict([256, 64], [1, 2])
    with pytest.raises(InputError):
        scale_verdict([64], [16])


def test_which_of_m_and_n_sets_b_star():
    symmetric = {384: 128.0, 4096: 1024.0}
    row = lambda m, n, b: {"m": m, "n": n, "certified_b": b}  # noqa: E731
    assert c5._set_by(row(4096, 384, 128.0), symmetric) == "n"
    assert c5._set_by(row(384, 4096, 256.0), symmetric) == "m"
    assert c5._set_by(row(384, 4096, 2048.0), symmetric) == "above both"
    assert c5._set_by(row(384, 4096, 64.0), symmetric) == "below both"
    assert c5._set_by(row(384, 4096, None), symmetric) == "undecided"
    assert c5._set_by(row(384, 4096, 256.0), {384: 128.0}) == "undecided"


def test_gradient_error_by_scale_recomputes_to_the_same_figures():
    row = gradient_error_by_scale(40, 30, b0=2.0, k_max=3, seeds=[5, 6])
    assert INTERFACE_KEYS <= set(row)
    assert row["b"] == [2.0, 4.0, 8.0, 16.0]
    assert len(row["ratio"]) == 2 and len(row["ratio"][0]) == 4
    k, s = 2, 1
    b = row["b"][k]
    a = float(derived.calibration_a(b))
    corpus = make_corpus(40, 30, seed=6)
    _, grad = loss_and_gradient(corpus.x, corpus.theta, a, b)   # dense path, unsorted corpus
    _, pop = loss_and_gradient_float64(a, b)
    diff = grad - pop
    norm = np.hypot(*pop)
    assert row["ratio"][s][k] == pytest.approx(np.hypot(*diff) / norm, rel=1e-10)
    assert row["along"][s][k] == pytest.approx(diff @ (-pop / norm) / norm, rel=1e-10)
    assert row["b_rate_ratio"][s][k] == pytest.approx(grad[1] / pop[1], rel=1e-10)
    # along² + across² = ratio² (orthogonal decomposition relative to ‖∇L‖)
    assert row["along"][s][k] ** 2 + row["across"][s][k] ** 2 == pytest.approx(row["ratio"][s][k] ** 2, rel=1e-10)
    along = np.array(row["along"])
    assert row["along_rms"] == pytest.approx(np.sqrt((along**2).mean(axis=0)).tolist(), rel=1e-12)
    assert row["ratio_max"][k] == max(row["ratio"][0][k], row["ratio"][1][k])
    assert row["certified_k"] == certified_k(row["along_rms"], ALONG_LIMIT)
    assert row["certified_k_full_norm"] == certified_k(row["ratio_max"], 0.5)
    k_star = row["certified_k"]
    assert row["certified_b"] == (row["b"][k_star] if k_star >= 0 else None)
    assert row["ladder_top"] == (k_star == 3)
    assert row["no_positive_tasks"][1] == int(np.sum(corpus.x.max(axis=1) < corpus.theta))
    assert row["precision"] == "float64" and row["seeds"] == [5, 6]


def test_bad_arguments():
    with pytest.raises(InputError):
        gradient_error_by_scale(10, 10, b0=-1.0, k_max=2, seeds=[0])
    with pytest.raises(InputError):
        gradient_error_by_scale(10, 10, b0=1.0, k_max=-1, seeds=[0])
    with pytest.raises(InputError):
        gradient_error_by_scale(10, 10, b0=1.0, k_max=1, seeds=[])
    with pytest.raises(InputError):
        c5.along_rms_on_relation(64, 0.0, seeds=[0])


def test_certified_scale_grows_with_the_corpus():
    """A real run: 4 corpora per size; b* at m = n = 768 is well above b* at m = n = 96 (b* ≈ m/3 and
    the rung below), and along is small at the first rung for both."""
    small, large = (gradient_error_by_scale(s, s, b0=LADDER_B0, k_max=ladder_k_max(s),
                                            seeds=[c5._seed_of(i, s, s) for i in range(4)]) for s in (96, 768))
    assert small["certified_b"] is not None and large["certified_b"] is not None
    assert large["certified_b"] >= 4 * small["certified_b"]
    assert large["along_rms"][0] < 0.2
    # the full-norm control certifies (almost) nothing at either size: the deep layer at θ ≈ 1
    assert small["certified_k_full_norm"] <= 0 and large["certified_k_full_norm"] <= 1


def test_along_rms_on_relation_matches_the_ladder_and_caches_its_corpora():
    c5.clear_corpus_cache()
    seeds = (0, 1)
    value = c5.along_rms_on_relation(64, 16.0, seeds=seeds)
    row = gradient_error_by_scale(64, 64, b0=16.0, k_max=0, seeds=[c5._seed_of(s, 64, 64) for s in seeds])
    assert value == pytest.approx(row["along_rms"][0], rel=1e-12)
    assert len(c5._CORPUS_CACHE) == 2
    c5.along_rms_on_relation(64, 32.0, seeds=seeds)
    assert len(c5._CORPUS_CACHE) == 2
    c5.clear_corpus_cache()
    assert not c5._CORPUS_CACHE


def test_deep_layer_carries_most_of_the_label_gradient_across_the_progress_direction():
    """The figures the report states: ≈ 96 % of ∂L/∂a, direction (−1, +1)/√2, projection ≈ 1.4/b."""
    rows = deep_layer_figures(quick=True)["rows"]
    for row in rows:
        assert row["closure"] < 1e-12
        assert 0.95 < row["share_da"] < 0.99 and -1.0 < row["share_db"] < -0.95
        # the direction is (−1, +1)/√2 up to O(1/b) (measured deviation 0.34/b at b = 64)
        assert row["direction"][0] == pytest.approx(-1 / math.sqrt(2), abs=1 / row["b"])
        assert row["direction"][1] == pytest.approx(1 / math.sqrt(2), abs=1 / row["b"])
        assert 1.2 < row["b_times_projection"] < 1.6


def test_population_eta_and_a_short_trajectory():
    b0 = 16.0
    a0 = float(derived.calibration_a(b0))
    eta, eigenvalues = population_eta(a0, b0)
    _, _, hessian = loss_gradient_hessian_float64(a0, b0)
    assert eta == pytest.approx(1 / np.linalg.eigvalsh(hessian).max(), rel=1e-12)
    assert max(eigenvalues) * b0**3 == pytest.approx(1, abs=0.5)   # λ_max ≈ b₀⁻³ along the relation
    out = trajectory_figures(64, 64, seed=3, steps=6, records=3)
    first = out["points"][0]
    corpus = make_corpus(64, 64, seed=3)
    _, grad = loss_and_gradient(corpus.x, corpus.theta, a0, b0)
    _, pop = loss_and_gradient_float64(a0, b0)
    assert first["step"] == 0 and first["a_minus_a_cal"] == 0.0
    assert first["rate"] == pytest.approx(grad[1] / pop[1], rel=1e-10)
    assert first["margin"] == pytest.approx(a0 - corpus.theta.max() * b0, rel=1e-12)
    assert out["points"][-1]["step"] == out["steps"] == 6 and out["eta"] == pytest.approx(eta, rel=1e-12)
    assert out["largest_relative_loss_increase"] <= 0.0


def test_no_positive_split():
    row = {"b": [8.0, 16.0], "along": [[0.1, 0.9], [0.0, -0.1], [0.2, 0.5]], "no_positive_tasks": [1, 0, 2]}
    split = no_positive_split(row, 1)
    assert split["corpora_with"] == 2 and split["corpora_without"] == 1
    assert split["mean_along_with"] == pytest.approx(0.7) and split["mean_along_without"] == pytest.approx(-0.1)


def test_check_c5_quick_reports_its_rule_figures_and_plots(tmp_path, monkeypatch):
    from stumpcheck.claims import c5_interval

    # the certified intervals on two small sizes, two corpora each (quick runs 64 and 128, three each)
    monkeypatch.setitem(c5_interval.INTERVAL_SETTINGS, "quick", {"sizes": (48, 64), "corpora": 2})
    result = check_c5(quick=True, seed=0, out_dir=tmp_path)
    details = result.details
    assert result.id == "C5" and result.evidence == "certified" and "control b*: float64" in details["precision"]
    assert details["plots"] == [PLOT_NAME, SCALE_PLOT_NAME, TRAJECTORY_PLOT_NAME]
    assert all((tmp_path / name).is_file() for name in details["plots"])
    sizes = list(c5.C5_SETTINGS["quick"]["square"])
    b_star = [details["certified_b"][str(s)] for s in sizes]
    # the verdict follows the certified rule applied to the proved b₂; the sampled rule on b* is the control
    from stumpcheck.claims.c5_interval import interval_verdict

    assert result.passed == interval_verdict(details["certified_intervals"])["passed"]
    assert details["certified_verdict"] == interval_verdict(details["certified_intervals"])
    assert details["verdict"]["passed"] == scale_verdict(sizes, b_star)["passed"]
    assert "control (sampled, " in result.figure and details["control"]["evidence"] == "sampled"
    assert details["evidence_reached"] == ("certified" if result.passed else None)
    for row in details["rows"]:
        assert INTERFACE_KEYS <= set(row) and len(row["seeds"]) == c5.C5_SETTINGS["quick"]["seeds"]
        assert row["b"][-1] >= 2 * row["n"]
    assert "b* by m ∧ n" in result.figure and "full-norm k*" in result.figure
    text = details["explanation"]
    assert "deep boundary layer" in text and "no positive point" in text and "GD trajectory" in text
    trajectory = details["trajectory"]
    assert trajectory["b0"] == c5.C5_SETTINGS["quick"]["trajectory"]["size"] / 4
    assert trajectory["stopped_because"] == "steps"
    intervals = details["certified_intervals"]
    assert [r["m"] for r in intervals["rows"]] == [48, 48, 64, 64]
    for r in intervals["rows"]:   # each b₂ comes with a certificate that re-checks against its corpus
        if r["b2"] is None:
            continue
        assert 8 < r["b2"] <= 4 * r["m"] and r["capped"] == (r["b2"] == 4 * r["m"])
        from stumpcheck.numerics.corpus.corpora import load_corpus
        from stumpcheck.numerics.corpus.interval.certificate import recheck_interval
        document = json.loads((tmp_path / "c5_intervals" / r["certificate"]).read_text())
        corpus = load_corpus(tmp_path / "c5_intervals" / document["corpus"]["file"])
        ok, reason, derived = recheck_interval(document, corpus.x, corpus.theta, arb="none")
        assert ok, reason
        assert float(Fraction(derived["b_end"])) == r["b2"]
    assert "certified b₂" in result.figure and intervals["slope"] is not None


def test_interval_verdict_needs_every_corpus_at_a_quarter_of_m_min_n():
    from stumpcheck.claims.c5_interval import interval_verdict

    def rows(*pairs):
        return {"rows": [{"m": m, "n": m, "corpus_seed": i, "b2": b2, "b2_exact": None if b2 is None else str(b2),
                          "end": "undecided"} for i, (m, b2) in enumerate(pairs)]}

    ok = interval_verdict(rows((64, 16), (64, 160), (128, 50.5)))
    assert ok["passed"] and ok["least_ratio"] == 0.25 and ok["misses"] == []
    low = interval_verdict(rows((64, 16), (128, 31.75)))
    assert not low["passed"] and [m["m"] for m in low["misses"]] == [128]
    none = interval_verdict(rows((64, 40), (64, None)))
    assert not none["passed"] and none["least_ratio"] is None
    assert not interval_verdict({"rows": []})["passed"]
