"""Fresh-context evaluation: reproducibility, chunk independence, exact limits, bad input."""

from __future__ import annotations

import math

import numpy as np
import pytest

from stumpcheck.numerics.corpus.fresh import BLOCK, DEFAULT_THETAS, fresh_context_errors, sup_error_over_theta
from stumpcheck.numerics.generated.asymptotics_numpy import calibration_a
from stumpcheck.numerics.precision import InputError


def reference_estimate(x, theta, a, b, *, estimator="one-head"):
    """θ̂ per context straight from docs/model.md §2, §5 (log-space softmax), independent of stumpcheck.numerics.corpus.empirical."""
    x = np.asarray(x, dtype=float)
    y = (x >= np.asarray(theta, dtype=float)[:, None]).astype(float)
    s, s_ref = a * y - b * x, a * (1 - y) - b * (1 - x)

    def attend(scores, values):
        w = np.exp(scores - scores.max(axis=1, keepdims=True))
        return (w * values).sum(axis=1) / w.sum(axis=1)

    if estimator == "one-head":
        return attend(s, x)
    if estimator == "reflected":
        return attend(s_ref, x)
    if estimator == "averaged":
        return (attend(s, x) + attend(s_ref, x)) / 2
    return attend(np.concatenate([s, s_ref], axis=1), np.concatenate([x, x], axis=1))


@pytest.mark.parametrize("estimator", ["one-head", "reflected", "averaged", "pooled"])
def test_empirical_estimate_matches_the_definition(estimator):
    from stumpcheck.numerics.corpus.empirical import estimate

    rng = np.random.default_rng(3)
    x, theta = rng.random((40, 25)), rng.random(40)
    for a, b in ((0.5, 2.0), (12.0, 10.0), (calibration_a(300.0), 300.0)):
        np.testing.assert_allclose(estimate(x, theta, a, b, estimator=estimator),
                                   reference_estimate(x, theta, a, b, estimator=estimator), rtol=1e-10, atol=1e-12)


def test_same_seed_same_result_other_seed_other_result():
    first = fresh_context_errors(12.0, 10.0, 0.4, 30, reps=200, seed=5)
    assert first == fresh_context_errors(12.0, 10.0, 0.4, 30, reps=200, seed=5)
    assert first.mean_abs_error != fresh_context_errors(12.0, 10.0, 0.4, 30, reps=200, seed=6).mean_abs_error
    assert first.seed == 5 and first.reps == 200 and first.evidence == "sampled"


def test_result_does_not_depend_on_chunking():
    N, reps = 37, 3 * BLOCK + 11  # a partial last block
    results = [fresh_context_errors(30.0, 25.0, 0.7, N, estimator="pooled", reps=reps, seed=1, chunk=chunk)
               for chunk in (1, BLOCK * N, 2 * BLOCK * N + 5, 2 ** 24)]
    assert all(r == results[0] for r in results[1:])


def test_cell_stream_does_not_depend_on_the_other_cells():
    thetas = (0.0, 0.25, 0.5, 1.0)
    sup = sup_error_over_theta(20.0, 15.0, 40, thetas=thetas, estimator="averaged", reps=100, seed=2)
    for row, theta in zip(sup.per_theta, thetas):
        alone = fresh_context_errors(20.0, 15.0, theta, 40, estimator="averaged", reps=100, seed=2)
        assert row == alone.as_dict()
    assert sup.sup_mean_abs_error == max(r["mean_abs_error"] for r in sup.per_theta)
    assert 0.0 in DEFAULT_THETAS and 1.0 in DEFAULT_THETAS


def test_sharp_head_error_is_the_gap_to_the_first_positive():
    """b ≫ N: θ̂ is the smallest x ≥ θ, so E|θ̂ − θ| = (1 − θ^{N+1})/(N + 1) up to θ^N·θ (no positive)."""
    b = 1e6
    a = calibration_a(b)
    N, theta = 20, 0.5
    r = fresh_context_errors(a, b, theta, N, reps=4000, seed=0)
    exact = (1 - theta ** (N + 1)) / (N + 1)
    assert abs(r.mean_abs_error - exact) <= 4 * r.sd_abs_error / math.sqrt(r.reps) + 2 * theta ** N
    assert r.ci_low <= r.mean_abs_error <= r.ci_high
    assert r.median_abs_error <= r.q90_abs_error


def test_boundary_limitation_at_theta_one():
    """θ = 1: no positives, the one-head attends to the smallest x (|e| ≈ N/(N+1)); pooled to the largest."""
    b = 1e6
    a = calibration_a(b)
    N = 50
    one = fresh_context_errors(a, b, 1.0, N, reps=2000, seed=0)
    pooled = fresh_context_errors(a, b, 1.0, N, estimator="pooled", reps=2000, seed=0)
    averaged = fresh_context_errors(a, b, 1.0, N, estimator="averaged", reps=2000, seed=0)
    tol = 4 / math.sqrt(2000) / (N + 1)  # the sd of a minimum of N uniforms is below 1/(N+1)
    assert abs(one.mean_abs_error - N / (N + 1)) <= tol
    assert abs(pooled.mean_abs_error - 1 / (N + 1)) <= tol
    assert abs(averaged.mean_abs_error - 0.5) <= tol


def test_custom_sampler_is_used_and_checked():
    def beta_sampler(rng, shape):
        return rng.beta(2.0, 2.0, size=shape)

    r = fresh_context_errors(12.0, 10.0, 0.5, 20, reps=64, seed=0, sampler=beta_sampler)
    assert r.sampler == "beta_sampler"
    assert r.mean_abs_error != fresh_context_errors(12.0, 10.0, 0.5, 20, reps=64, seed=0).mean_abs_error
    with pytest.raises(InputError, match="in \\[0, 1\\]"):
        fresh_context_errors(12.0, 10.0, 0.5, 20, reps=64, sampler=lambda rng, shape: rng.random(shape) + 1)
    with pytest.raises(InputError, match="shape"):
        fresh_context_errors(12.0, 10.0, 0.5, 20, reps=64, sampler=lambda rng, shape: rng.random(3))


@pytest.mark.parametrize("kwargs", [
    dict(b=0.0), dict(b=-1.0), dict(a=float("nan")), dict(b=float("inf")), dict(theta=1.5), dict(theta=-0.1),
    dict(N=0), dict(N=2.5), dict(N=2 ** 21), dict(reps=0), dict(reps=1), dict(seed=-1),
    dict(estimator="two-head"), dict(a="x"),
])
def test_bad_input_is_an_input_error(kwargs):
    args = dict(a=1.0, b=1.0, theta=0.5, N=10, reps=10, seed=0, estimator="one-head")
    args.update(kwargs)
    with pytest.raises(InputError):
        fresh_context_errors(args.pop("a"), args.pop("b"), args.pop("theta"), args.pop("N"), **args)


@pytest.mark.parametrize("thetas", [(), (0.5, 1.5), (0.5, float("nan"))])
def test_bad_theta_grid_is_an_input_error(thetas):
    with pytest.raises(InputError):
        sup_error_over_theta(1.0, 1.0, 10, thetas=thetas, reps=10)


# ---------------------------------------------------------------- the `stumpcheck fresh` command

def _cli(argv, capsys):
    from stumpcheck.cli.commands import main

    status = main(argv)
    captured = capsys.readouterr()
    return status, captured.out, captured.err


def test_fresh_command_json_keys_and_values(capsys):
    import json

    status, out, _ = _cli(["fresh", "--a", "12", "--b", "10", "--theta", "0.5", "--N", "100", "--reps", "100",
                           "--seed", "4", "--json"], capsys)
    assert status == 0
    data = json.loads(out)
    for key in ("mean_abs_error", "ci_low", "ci_high", "reps", "seed"):
        assert key in data
    assert data["reps"] == 100 and data["seed"] == 4 and data["N"] == 100
    assert data == fresh_context_errors(12.0, 10.0, 0.5, 100, reps=100, seed=4).as_dict()


def test_fresh_command_grid_and_text(capsys):
    import json

    status, out, _ = _cli(["fresh", "--a", "12", "--b", "10", "--theta", "1", "--N", "10,100", "--reps", "64",
                           "--estimator", "pooled", "--json"], capsys)
    assert status == 0
    rows = json.loads(out)["results"]
    assert [r["N"] for r in rows] == [10, 100] and all(r["estimator"] == "pooled" for r in rows)
    status, out, _ = _cli(["fresh", "--a", "12", "--b", "10", "--theta", "0.3", "--N", "50", "--reps", "64"], capsys)
    assert status == 0 and "seed 0" in out and "evidence sampled" in out


@pytest.mark.parametrize("argv", [
    ["--a", "1", "--b", "0", "--theta", "0.5", "--N", "10"],
    ["--a", "1", "--b", "nan", "--theta", "0.5", "--N", "10"],
    ["--a", "x", "--b", "1", "--theta", "0.5", "--N", "10"],
    ["--a", "1", "--b", "1", "--theta", "2", "--N", "10"],
    ["--a", "1", "--b", "1", "--theta", "0.5", "--N", "0"],
    ["--a", "1", "--b", "1", "--theta", "0.5", "--N", "10,"],
    ["--a", "1", "--b", "1", "--theta", "0.5", "--N", "1e9"],
    ["--a", "1", "--b", "1", "--theta", "0.5", "--N", "10", "--reps", "-3"],
    ["--a", "1", "--b", "1", "--theta", "0.5", "--N", "10", "--seed", "-1"],
    ["--a", "1", "--b", "1", "--theta", "0.5", "--N", "10", "--estimator", "x"],
    ["--a", "1", "--b", "1", "--theta", "0.5"],
])
def test_fresh_command_bad_input_exits_2_with_one_line(argv, capsys):
    status, out, err = _cli(["fresh", *argv], capsys)
    assert status == 2
    assert err.count("\n") == 1 and err.startswith("stumpcheck: error:")
