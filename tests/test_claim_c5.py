"""Claim C5 (numerics/claim_c5.py): finite-corpus gradient error along the calibration relation."""

from __future__ import annotations

import numpy as np
import pytest

from numerics.claim_c5 import PLOT_NAME, certified_k, check_c5, gradient_error_by_scale
from numerics.corpus import make_corpus
from numerics.empirical import loss_and_gradient
from numerics.generated import asymptotics_numpy as derived
from numerics.population import loss_and_gradient_float64
from numerics.precision import InputError


def test_certified_k_is_the_end_of_the_first_run_below_one_half():
    assert certified_k([0.1, 0.4, 0.5, 0.7, 0.2]) == 2
    assert certified_k([0.6, 0.1]) == -1
    assert certified_k([0.1, 0.2]) == 1
    assert certified_k([0.1, float("nan"), 0.1]) == 0


def test_gradient_error_by_scale_recomputes_to_the_same_ratios():
    row = gradient_error_by_scale(40, 30, b0=2.0, k_max=3, seeds=[5, 6])
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
    # along² + across² = ratio² (orthogonal decomposition relative to ‖∇L‖)
    assert row["along"][s][k] ** 2 + row["across"][s][k] ** 2 == pytest.approx(row["ratio"][s][k] ** 2, rel=1e-10)
    assert row["ratio_max"][k] == max(row["ratio"][0][k], row["ratio"][1][k])
    assert row["certified_k"] == certified_k(row["ratio_max"])
    assert row["precision"] == "float64" and row["seeds"] == [5, 6]


def test_bad_arguments():
    with pytest.raises(InputError):
        gradient_error_by_scale(10, 10, b0=-1.0, k_max=2, seeds=[0])
    with pytest.raises(InputError):
        gradient_error_by_scale(10, 10, b0=1.0, k_max=-1, seeds=[0])
    with pytest.raises(InputError):
        gradient_error_by_scale(10, 10, b0=1.0, k_max=1, seeds=[])


def test_check_c5_quick_reports_its_rule_figure_and_plot(tmp_path):
    result = check_c5(quick=True, seed=0, out_dir=tmp_path)
    assert result.id == "C5" and result.status in ("PASS", "FAIL") and result.evidence == "sampled"
    assert (tmp_path / PLOT_NAME).is_file() and result.details["plots"] == [PLOT_NAME]
    series = [result.details["certified_k"][key] for key in ("32", "128", "512", "2048")]
    # the verdict follows the stated rule applied to the computed k*
    expected = all(u <= v for u, v in zip(series, series[1:])) and series[-1] > series[0]
    assert result.passed == expected
    assert "k* by m ∧ n" in result.figure and result.details["precision"] == "float64"
