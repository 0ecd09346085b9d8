"""The corpus loss and its exact gradient (numerics/corpus/empirical.py).

References: an independent mpmath evaluation of the defining softmax (all 2n or
n scores, shifted by their maximum) with the covariance written pairwise,
Cov_α(u, v) = ½ Σᵢⱼ αᵢαⱼ (uᵢ − uⱼ)(vᵢ − vⱼ), at 60 digits (the pairwise form has
no cancellation for one head, so 60 digits resolve values far below 10⁻¹⁰⁰).
"""

from __future__ import annotations

import math
import tracemalloc

import mpmath
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from stumpcheck.numerics.corpus import empirical as E
from stumpcheck.numerics.corpus import kernel_pruned
from stumpcheck.numerics.corpus.kernel_numpy import window_bounds
from stumpcheck.numerics.corpus.corpora import make_corpus
from stumpcheck.numerics.precision import InputError

RTOL = 1e-12
UNDERFLOW = 1e-300


def _head(scores, dsda, dsdb, values):
    top = max(scores)
    weights = [mpmath.exp(s - top) for s in scores]
    total = mpmath.fsum(weights)
    alpha = [w / total for w in weights]
    theta_hat = mpmath.fsum(p * v for p, v in zip(alpha, values))
    k = len(alpha)
    pairs = [(i, j) for i in range(k) for j in range(i + 1, k)]
    d_a = mpmath.fsum(alpha[i] * alpha[j] * (dsda[i] - dsda[j]) * (values[i] - values[j]) for i, j in pairs)
    d_b = mpmath.fsum(alpha[i] * alpha[j] * (dsdb[i] - dsdb[j]) * (values[i] - values[j]) for i, j in pairs)
    return theta_hat, d_a, d_b


def reference(x, theta, a, b, estimator, dps=60):
    """(θ̂, θ̂ − θ, ∂θ̂/∂a, ∂θ̂/∂b) of one task at ``dps`` digits, from the definitions (docs/model.md §2, §5)."""
    with mpmath.workdps(dps):
        a, b, th = mpmath.mpf(a), mpmath.mpf(b), mpmath.mpf(float(theta))
        xs = [mpmath.mpf(float(v)) for v in x]
        ys = [1 if float(v) >= float(theta) else 0 for v in x]
        one = ([a * y - b * v for y, v in zip(ys, xs)], [mpmath.mpf(y) for y in ys], [-v for v in xs])
        ref = ([a * (1 - y) - b * (1 - v) for y, v in zip(ys, xs)], [mpmath.mpf(1 - y) for y in ys],
               [v - 1 for v in xs])
        if estimator == "one-head":
            out = _head(*one, xs)
        elif estimator == "reflected":
            out = _head(*ref, xs)
        elif estimator == "averaged":
            out = tuple((u + v) / 2 for u, v in zip(_head(*one, xs), _head(*ref, xs)))
        else:
            out = _head(one[0] + ref[0], one[1] + ref[1], one[2] + ref[2], xs + xs)
        return [out[0], out[0] - th, out[1], out[2]]


def _tasks(seed, m, n):
    rng = np.random.default_rng(seed)
    return rng.random((m, n)), rng.random(m)


def _assert_matches_reference(x, theta, a, b, estimator):
    got = E._per_task(x, theta, a, b, estimator, "dense", 2**22, E.DEFAULT_WINDOW)
    for j in range(x.shape[0]):
        want = reference(x[j], theta[j], a, b, estimator)
        for k, name in enumerate(("theta_hat", "error", "d/da", "d/db")):
            w = float(want[k])
            # below the normal range (≈ 2.2e-308) float64 has no relative precision left
            assert abs(got[k, j] - w) <= RTOL * abs(w) + UNDERFLOW, (estimator, a, b, j, name, got[k, j], w)


SCALES = [(10.0, 10.0), (500.0, 500.0), (512.25, 500.0), (5000.0, 4990.0), (5000.0, 5000.0),
          (1e6, 1e6), (1e6 + 13.75, 1e6), (-3.0, 20.0)]


@pytest.mark.parametrize("estimator", E.ESTIMATORS)
def test_per_task_values_and_derivatives_match_mpmath(estimator):
    for k, (a, b) in enumerate(SCALES):
        x, theta = _tasks(100 + k, 2, 24)
        _assert_matches_reference(x, theta, a, b, estimator)


@pytest.mark.parametrize("estimator", ["one-head", "pooled"])
def test_balanced_groups_at_a_million_need_the_double_double_weights(estimator):
    # a − b (min_P x − min_N x) ≈ 0 at a, b ~ 10⁶: plain float64 loses ~6 digits in the group weights.
    x, theta = _tasks(7, 3, 16)
    for j in range(3):
        positives, negatives = x[j][x[j] >= theta[j]], x[j][x[j] < theta[j]]
        if positives.size == 0 or negatives.size == 0:
            continue
        b = 1e6
        a = b * (positives.min() - negatives.min()) + 0.3
        _assert_matches_reference(x[j:j + 1], theta[j:j + 1], a, b, estimator)


@pytest.mark.parametrize("a, b", [(1e6, 1e6), (-1e6, 1e6), (1e6, -1e6), (0.0, 0.0), (1e6, 1e-9)])
def test_no_overflow_or_nan_at_extreme_parameters(a, b):
    c = make_corpus(20, 30, seed=5)
    for estimator in E.ESTIMATORS:
        for method in E.METHODS:
            loss, grad = E.loss_and_gradient(c.x, c.theta, a, b, estimator=estimator, method=method)
            assert math.isfinite(loss) and np.all(np.isfinite(grad))


@pytest.mark.parametrize("estimator", E.ESTIMATORS)
def test_dense_and_pruned_agree(estimator):
    c = make_corpus(60, 400, seed=11)
    sc = E.sort_corpus(c.x, c.theta)
    for b in (5.0, 50.0, 500.0, 5000.0, 1e6):
        a = b + 2 * math.log(b)
        loss, grad = E.loss_and_gradient(c.x, c.theta, a, b, estimator=estimator)
        loss_p, grad_p = E.loss_and_gradient(sc, None, a, b, estimator=estimator, method="pruned")
        assert abs(loss_p - loss) <= RTOL * loss
        assert np.all(np.abs(grad_p - grad) <= RTOL * np.abs(grad) + 64 * E.pruned_window_bound(400)), (b, grad, grad_p)
        dense = E._per_task(c.x, c.theta, a, b, estimator, "dense", 2**22, E.DEFAULT_WINDOW)
        pruned = E._per_task(sc, None, a, b, estimator, "pruned", 2**22, E.DEFAULT_WINDOW)
        assert np.all(np.abs(pruned[:3] - dense[:3]) <= RTOL * np.abs(dense[:3]) + E.pruned_window_bound(400))


def test_pruned_window_touches_only_the_window_and_the_bound_holds_at_a_small_window():
    c = make_corpus(40, 200, seed=2)
    sc = E.sort_corpus(c.x, c.theta)
    assert E.window_sizes(sc, 5000.0)["fraction"] < 0.05
    assert E.window_sizes(sc, 10.0)["fraction"] == 1.0
    b, window = 400.0, 20.0
    first, last = window_bounds(sc.xs, sc.split, np.full(40, 200), b, window)
    best = sc.xs[np.arange(40), np.minimum(sc.split, 199)]
    for j in range(40):
        kept, dropped = sc.xs[j, first[j]:last[j]], sc.xs[j, last[j]:]
        assert np.all(b * (kept - best[j]) <= window * (1 + 1e-12))
        assert np.all(b * (dropped - best[j]) > window * (1 - 1e-12))
        # the compiled kernel finds the same windows, for both signs of β
        assert kernel_pruned.window(sc.xs[j], sc.split[j], 200, b, window) == (first[j], last[j])
    first_n, last_n = window_bounds(sc.xs, np.zeros(40, dtype=np.int64), sc.split, -b, window)
    for j in range(40):
        assert kernel_pruned.window(sc.xs[j], 0, sc.split[j], -b, window) == (first_n[j], last_n[j])
    bound = E.pruned_window_bound(200, window=window)
    for estimator in E.ESTIMATORS:
        dense = E._per_task(sc, None, b + 12.0, b, estimator, "dense", 2**22, window)
        pruned = E._per_task(sc, None, b + 12.0, b, estimator, "pruned", 2**22, window)
        diff = np.abs(pruned - dense).max()
        assert diff <= bound + 1e-15
        assert diff > 0  # the small window does leave something out, so the bound is exercised


def test_numpy_path_chunking_does_not_change_results_and_bounds_memory():
    c = make_corpus(300, 64, seed=4)
    whole = E._per_task(c.x, c.theta, 30.0, 25.0, "pooled", "dense", 2**22, E.DEFAULT_WINDOW, backend="numpy")
    for chunk in (1, 64, 1000):
        part = E._per_task(c.x, c.theta, 30.0, 25.0, "pooled", "dense", chunk, E.DEFAULT_WINDOW, backend="numpy")
        assert np.allclose(part, whole, rtol=1e-15, atol=0)
    assert E._rows_per_chunk(64, 1000) * 64 <= 1000 and E._rows_per_chunk(5000, 10) == 1
    big = make_corpus(2000, 500, seed=1)  # 10⁶ tokens, 8 MB
    chunk = 2**14
    tracemalloc.start()
    try:
        E.loss_and_gradient(big.x, big.theta, 40.0, 30.0, estimator="pooled", chunk_tokens=chunk, backend="numpy")
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    # per chunk: a few dozen (rows × n) float64 temporaries; plus the (4, m) per-task output
    assert peak < 64 * 8 * chunk + 4 * 8 * 2000 + 200_000, peak
    assert peak < big.x.nbytes / 4
    # the pruned path too, on a clustered corpus whose windows are wider than the row-block guess
    clustered = np.sort(0.5 + 0.001 * big.x, axis=1)
    sc = E.sort_corpus(clustered, np.full(2000, 0.5005))
    tracemalloc.start()
    try:
        E.loss_and_gradient(sc, None, 600.0, 500.0, estimator="pooled", method="pruned", chunk_tokens=chunk,
                            backend="numpy")
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 64 * 8 * chunk + 4 * 8 * 2000 + 200_000, peak


@pytest.mark.parametrize("estimator", E.ESTIMATORS)
def test_gradient_matches_central_differences(estimator):
    c = make_corpus(30, 40, seed=9)
    a, b, h = 7.0, 6.0, 1e-5
    _, grad = E.loss_and_gradient(c.x, c.theta, a, b, estimator=estimator)

    def loss(aa, bb):
        return E.loss_and_gradient(c.x, c.theta, aa, bb, estimator=estimator)[0]

    fd = [(loss(a + h, b) - loss(a - h, b)) / (2 * h), (loss(a, b + h) - loss(a, b - h)) / (2 * h)]
    assert np.allclose(grad, fd, rtol=1e-6, atol=1e-10)


def _plus_minus_one_head(x, theta, a, b):
    """θ̂ and ∂θ̂/∂a, ∂θ̂/∂b of the one-head model with labels in {−1, +1} (plain softmax)."""
    y = np.where(x >= theta[:, None], 1.0, -1.0)
    s = a * y - b * x
    alpha = np.exp(s - s.max(axis=1, keepdims=True))
    alpha /= alpha.sum(axis=1, keepdims=True)
    theta_hat = (alpha * x).sum(axis=1)
    centred = x - theta_hat[:, None]
    d_a = (alpha * (y - (alpha * y).sum(axis=1, keepdims=True)) * centred).sum(axis=1)
    d_b = -(alpha * centred * centred).sum(axis=1)
    return theta_hat, d_a, d_b


@settings(max_examples=40, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), a=st.floats(-20, 20), b=st.floats(0.1, 40))
def test_plus_minus_one_labels_are_the_same_model_with_a_doubled(seed, a, b):
    x, theta = _tasks(seed, 3, 12)
    pm = _plus_minus_one_head(x, theta, a, b)
    theta_hat, d_a, d_b = E.estimate_and_gradient(x, theta, 2 * a, b)
    assert np.allclose(pm[0], theta_hat, rtol=1e-12, atol=1e-15)
    assert np.allclose(pm[1], 2 * d_a, rtol=1e-9, atol=1e-13)   # d/da of (±1 model at a) = 2 ∂θ̂/∂a at 2a
    assert np.allclose(pm[2], d_b, rtol=1e-9, atol=1e-13)


@settings(max_examples=20, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), a=st.floats(-50, 2000), b=st.floats(0.0, 2000), n=st.integers(1, 30),
       estimator=st.sampled_from(E.ESTIMATORS))
def test_properties(seed, a, b, n, estimator):
    x, theta = _tasks(seed, 4, n)
    theta_hat, d_a, d_b = E.estimate_and_gradient(x, theta, a, b, estimator=estimator)
    error, _, _ = E.error_and_gradient(x, theta, a, b, estimator=estimator)
    # θ̂ is a convex combination of the xᵢ
    assert np.all(theta_hat >= x.min(axis=1) - 1e-15) and np.all(theta_hat <= x.max(axis=1) + 1e-15)
    assert np.allclose(error, theta_hat - theta, rtol=0, atol=4e-16)
    if estimator in ("one-head", "pooled"):
        # the label bonus moves weight to the positives, which lie above all negatives
        if estimator == "one-head":
            assert np.all(d_a >= 0)
    if estimator in ("one-head", "reflected"):
        assert np.all(d_b <= 0) if estimator == "one-head" else np.all(d_b >= 0)
    # permutation invariance, and the sorted corpus gives the same numbers
    perm = np.random.default_rng(seed).permutation(n)
    again = E.estimate_and_gradient(x[:, perm], theta, a, b, estimator=estimator)
    # one-head/reflected sums have one sign; averaged/pooled mix signs, so rounding is relative to Σ|terms| ≤ 1
    atol = 1e-300 if estimator in ("one-head", "reflected") else 1e-15
    assert np.allclose(np.array(again), np.array([theta_hat, d_a, d_b]), rtol=1e-12, atol=atol)
    sc = E.sort_corpus(x, theta)
    pruned = E.estimate_and_gradient(sc, None, a, b, estimator=estimator, method="pruned")
    bound = E.pruned_window_bound(n)
    assert np.allclose(np.array(pruned), np.array([theta_hat, d_a, d_b]), rtol=1e-12, atol=bound + atol)


def test_reflected_head_is_the_one_head_on_the_reflected_context():
    x, theta = _tasks(3, 5, 20)
    x[x == theta[:, None]] = 0.5  # keep labels well defined under reflection (no point exactly at θ)
    one = E.estimate_and_gradient(1.0 - x, 1.0 - theta, 4.0, 9.0)
    ref = E.estimate_and_gradient(x, theta, 4.0, 9.0, estimator="reflected")
    # y ↦ 1 − y is 1{1 − x > 1 − θ}: equal to 1{1 − x ≥ 1 − θ} unless x = θ exactly
    assert np.allclose(1.0 - one[0], ref[0], rtol=1e-13)
    assert np.allclose(-one[1], ref[1], rtol=1e-12) and np.allclose(-one[2], ref[2], rtol=1e-12)


@pytest.mark.parametrize("call, fragment", [
    (lambda x, t: E.loss_and_gradient(x, t, float("nan"), 1.0), "a must be finite"),
    (lambda x, t: E.loss_and_gradient(x, t, 1.0, float("inf")), "b must be finite"),
    (lambda x, t: E.loss_and_gradient(x, t, 1.0, 1.0, estimator="two-head"), "unknown estimator"),
    (lambda x, t: E.loss_and_gradient(x, t, 1.0, 1.0, method="sparse"), "unknown method"),
    (lambda x, t: E.loss_and_gradient(x, t[:2], 1.0, 1.0), "theta must have shape"),
    (lambda x, t: E.loss_and_gradient(x[0], t, 1.0, 1.0), "(m, n)"),
    (lambda x, t: E.loss_and_gradient(np.where(x > 0.5, np.nan, x), t, 1.0, 1.0), "x must be finite"),
    (lambda x, t: E.loss_and_gradient(x + 1.0, t, 1.0, 1.0, method="pruned"), "x must be finite"),
    (lambda x, t: E.loss_and_gradient(x, t + 2.0, 1.0, 1.0), "theta must be finite"),
    (lambda x, t: E.loss_and_gradient(x, t, 1.0, 1.0, chunk_tokens=0), "chunk_tokens"),
    (lambda x, t: E.loss_and_gradient(x, t, 1.0, 1.0, window=1.0), "window"),
])
def test_bad_input_raises_input_error(call, fragment):
    x, theta = _tasks(0, 4, 6)
    with pytest.raises(InputError, match=None) as info:
        call(x, theta)
    assert fragment in str(info.value)
