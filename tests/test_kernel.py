"""The compiled corpus kernel (numerics/corpus/kernel*.py) against a long-double reference.

The reference is written here from the definitions (docs/model.md §2, §5), independently of the
group algebra: per task one softmax over all scores (2n for pooled) in np.longdouble, shifted by
their maximum, and every covariance in its pairwise form
Cov_α(u, v) = Σ_{i<j} αᵢαⱼ (uᵢ − uⱼ)(vᵢ − vⱼ), returned with its condition scale (the same sum of
absolute values). For one-head and reflected the pairwise terms of ∂θ̂/∂a and ∂θ̂/∂b have one
sign, so the kernel must be accurate to 10⁻¹² relative; for averaged and pooled, and for e (whose
terms αᵢ (xᵢ − θ) change sign at θ), to the documented (ROUNDING_ULPS + 4n)·2⁻⁵³·scale.
"""

from __future__ import annotations

import math

import mpmath
import numpy as np
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from stumpcheck.numerics.corpus import empirical as E
from stumpcheck.numerics.corpus.kernel_exp import EXP_FLUSH, exp_nonpositive

LD = np.longdouble
EPS = 2.0 ** -53
RTOL = 1e-12
UNDERFLOW = 1e-300


def _head(s, dsda, dsdb, values, theta):
    """[θ̂, e, scale(e), ∂θ̂/∂a, scale, ∂θ̂/∂b, scale] of one softmax, in long double."""
    w = np.exp(s - s.max())
    alpha = w / w.sum()
    out = [(alpha * values).sum(), (alpha * (values - theta)).sum(), (alpha * np.abs(values - theta)).sum()]
    upper = np.triu(np.ones((len(s), len(s)), dtype=bool), 1)
    for ds in (dsda, dsdb):
        terms = (np.outer(alpha, alpha) * np.subtract.outer(ds, ds) * np.subtract.outer(values, values))[upper]
        out += [terms.sum(), np.abs(terms).sum()]
    return out


def reference(x, theta, a, b, estimator):
    x, theta, a, b = x.astype(LD), LD(theta), LD(a), LD(b)
    y = (x >= theta).astype(LD)
    one = (a * y - b * x, y, -x)
    ref = (a * (1 - y) - b * (1 - x), 1 - y, x - 1)
    if estimator == "one-head":
        return _head(*one, x, theta)
    if estimator == "reflected":
        return _head(*ref, x, theta)
    if estimator == "averaged":
        return [(u + v) / 2 for u, v in zip(_head(*one, x, theta), _head(*ref, x, theta))]
    return _head(*(np.concatenate([u, v]) for u, v in zip(one, ref)), np.concatenate([x, x]), theta)


def _check_against_reference(got, x, theta, a, b, estimator, absolute=UNDERFLOW):
    """got: (4, m) from the kernel; each output within its documented error (plus ``absolute``)."""
    n = x.shape[1]
    budget = (E.ROUNDING_ULPS + 4 * n) * EPS
    one_sign = estimator in ("one-head", "reflected")
    for j in range(x.shape[0]):
        r = reference(x[j], theta[j], a, b, estimator)
        checks = [(got[0, j], r[0], abs(r[0])),          # θ̂: a convex combination, terms of one sign
                  (got[1, j], r[1], r[2]),
                  (got[2, j], r[3], r[4]),
                  (got[3, j], r[5], r[6])]
        for k, (value, want, scale) in enumerate(checks):
            err = abs(LD(value) - want)
            if k == 0 or (k >= 2 and one_sign):
                assert err <= RTOL * abs(want) + absolute, (estimator, a, b, j, k, value, want)
            else:
                assert err <= budget * scale + absolute, (estimator, a, b, j, k, value, want, scale)


def _tasks(seed, m, n, where):
    rng = np.random.default_rng(seed)
    x = rng.random((m, n))
    theta = rng.random(m)
    if where == "none above":      # no point with x ≥ θ: P is empty
        theta = np.minimum(1.0, x.max(axis=1) + 1e-3 * rng.random(m) + 1e-12)
    elif where == "none below":    # no point with x < θ: N is empty
        theta = np.maximum(0.0, x.min(axis=1) - 1e-3 * rng.random(m))
    elif where == "clustered":     # all points within 10⁻³ of θ
        x = 0.5 + 1e-3 * (x - 0.5)
        theta = np.full(m, 0.5)
    return x, theta


@settings(max_examples=40, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), n=st.integers(1, 24), log_b=st.floats(0.0, 4.0),
       ratio=st.floats(-1.5, 1.5), offset=st.floats(-20.0, 20.0), estimator=st.sampled_from(E.ESTIMATORS),
       where=st.sampled_from(["random", "none above", "none below", "clustered"]))
@example(seed=1, n=1, log_b=0.0, ratio=1.0, offset=0.0, estimator="pooled", where="random")
@example(seed=2, n=1, log_b=4.0, ratio=1.0, offset=3.0, estimator="averaged", where="none above")
@example(seed=3, n=12, log_b=4.0, ratio=1.0, offset=2 * math.log(1e4), estimator="one-head", where="none above")
@example(seed=4, n=20, log_b=2.7, ratio=-1.0, offset=0.0, estimator="pooled", where="none below")
def test_dense_and_pruned_kernels_match_the_long_double_reference(seed, n, log_b, ratio, offset, estimator,
                                                                   where):
    b = 10.0 ** log_b           # 1 … 10⁴
    a = ratio * b + offset
    x, theta = _tasks(seed, 3, n, where)
    dense = E._per_task(x, theta, a, b, estimator, "dense", E.DEFAULT_CHUNK_TOKENS, E.DEFAULT_WINDOW)
    _check_against_reference(dense, x, theta, a, b, estimator)
    sc = E.sort_corpus(x, theta)
    pruned = E._per_task(sc, None, a, b, estimator, "pruned", E.DEFAULT_CHUNK_TOKENS, E.DEFAULT_WINDOW)
    bound = E.pruned_window_bound(n)
    assert np.all(np.abs(pruned - dense) <= 1e-12 * np.abs(dense) + 1e-15 * (estimator in ("averaged", "pooled"))
                  + bound + UNDERFLOW), (pruned, dense)


@pytest.mark.parametrize("estimator", E.ESTIMATORS)
def test_pruned_windows_leave_out_points_and_still_match_the_reference(estimator):
    # b = 5000 on n = 400 points: each window holds ~ n·T/b ≈ 5 points of a group
    x, theta = _tasks(11, 4, 400, "random")
    sc = E.sort_corpus(x, theta)
    assert E.window_sizes(sc, 5000.0)["fraction"] < 0.1
    # b < 0: the best point of every group is its largest, and each window runs down from it
    for a, b in ((5000.0 + 2 * math.log(5000.0), 5000.0), (-3000.0, 5000.0), (20.0, -5000.0), (-6000.0, -5000.0)):
        pruned = E._per_task(sc, None, a, b, estimator, "pruned", E.DEFAULT_CHUNK_TOKENS, E.DEFAULT_WINDOW)
        # what the windows leave out is below pruned_window_bound: values that small are only absolute
        _check_against_reference(pruned, sc.xs, sc.theta, a, b, estimator, E.pruned_window_bound(400) + UNDERFLOW)


@pytest.mark.parametrize("estimator", E.ESTIMATORS)
def test_kernel_and_numpy_backend_agree(estimator):
    x, theta = _tasks(5, 50, 64, "random")
    for a, b in ((12.0, 10.0), (512.0, 500.0), (-40.0, 30.0)):
        for method in E.METHODS:
            source = E.sort_corpus(x, theta) if method == "pruned" else x
            ours = E._per_task(source, None if method == "pruned" else theta, a, b, estimator, method,
                               E.DEFAULT_CHUNK_TOKENS, E.DEFAULT_WINDOW)
            old = E._per_task(source, None if method == "pruned" else theta, a, b, estimator, method,
                              E.DEFAULT_CHUNK_TOKENS, E.DEFAULT_WINDOW, backend="numpy")
            scale = 1.0 if estimator in ("averaged", "pooled") else np.abs(old)
            # the kernel's pruned path also leaves out groups of weight < e^{−T}: within the window bound
            left_out = E.pruned_window_bound(64) if method == "pruned" else 0.0
            assert np.all(np.abs(ours - old) <= 1e-12 * scale + left_out + UNDERFLOW), (estimator, method, a, b)


def test_results_do_not_depend_on_the_thread_count_or_on_progress_blocks():
    import numba

    x, theta = _tasks(8, 3001, 100, "random")   # above the size from which the kernel uses several threads
    assert x.size >= E._PARALLEL_TOKENS
    threads = min(2, numba.config.NUMBA_NUM_THREADS)
    for method in E.METHODS:
        source = E.sort_corpus(x, theta) if method == "pruned" else x
        th = None if method == "pruned" else theta
        one = E.loss_and_gradient(source, th, 510.0, 500.0, estimator="pooled", method=method, threads=1)
        many = E.loss_and_gradient(source, th, 510.0, 500.0, estimator="pooled", method=method, threads=threads)
        seen = []
        blocks = E.loss_and_gradient(source, th, 510.0, 500.0, estimator="pooled", method=method,
                                     chunk_tokens=100 * 77, progress=seen.append)
        assert one[0] == many[0] == blocks[0]
        assert np.array_equal(one[1], many[1]) and np.array_equal(one[1], blocks[1])
        assert seen[-1] == 1.0 and len(seen) > 1 and seen == sorted(seen)


@settings(max_examples=30, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), m=st.integers(1, 70), n=st.integers(1, 300), log_b=st.floats(-1.0, 6.0),
       ratio=st.floats(-1.5, 1.5), offset=st.floats(-20.0, 20.0), negative=st.booleans(),
       estimator=st.sampled_from(E.ESTIMATORS), where=st.sampled_from(["random", "none above", "none below"]))
def test_serial_and_parallel_pruned_kernels_give_the_same_bits(seed, m, n, log_b, ratio, offset, negative,
                                                               estimator, where):
    """pruned_tasks_serial (one thread, no parallel region) and pruned_tasks (blocks of tasks across
    threads, each block prefetching past its end) run one task loop: every per-task output and the
    count of touched points agree exactly, for every estimator and both signs of b."""
    from stumpcheck.numerics.corpus import kernel, kernel_pruned

    b = (-1.0 if negative else 1.0) * 10.0 ** log_b
    a = ratio * abs(b) + offset
    x, theta = _tasks(seed, m, n, where)
    sc = E.sort_corpus(x, theta)
    code = kernel.ESTIMATOR_CODES[estimator]
    serial, parallel = np.empty((4, m)), np.empty((4, m))
    one = kernel_pruned.pruned_tasks_serial(sc.xs, sc.theta, sc.split, a, b, code, E.DEFAULT_WINDOW, serial)
    many = kernel_pruned.pruned_tasks(sc.xs, sc.theta, sc.split, a, b, code, E.DEFAULT_WINDOW, parallel)
    assert one == many and one[0]
    assert np.array_equal(serial, parallel)
    assert np.all(np.isfinite(serial))


@pytest.mark.parametrize("window", [2.0, 64.0, 340.0, 360.0, 700.0])
@pytest.mark.parametrize("scale", ["moderate", "large", "limit rounds up"])
@pytest.mark.parametrize("sign", [1.0, -1.0])
def test_pruned_windows_agree_with_dense_where_their_limit_rounds_and_past_the_bounded_exp(window, scale, sign):
    """The pruned kernel's exp skips its clamp at T ≤ 350, where every window exponent is ≥ −2T:
    the window's limit fl(c ± T/|β|) rounds to the float next to c when T/|β| is just over half
    its spacing, which puts a point at |β|·|x − c| ≈ 2T in the window ("limit rounds up"; at
    T = 360 that exponent is −720, past the flush point, where the clamp is needed). Every case
    agrees with the dense kernel, whose exponents are all clamped, to rounding plus what the
    windows leave out."""
    # θ = 0.5; consecutive floats from 0.5 up (P's best point for β > 0, spacing 2⁻⁵³) and from
    # 0.5 − 2⁻⁵⁴ down (N's best point for β < 0, spacing 2⁻⁵⁴)
    spacing = 2.0**-53 if sign > 0 else 2.0**-54
    b = sign * {"moderate": 3e2, "large": 1e12, "limit rounds up": window / (0.5001 * spacing)}[scale]
    x, theta = _tasks(5, 6, 300, "random")
    x[:, :100] = 0.5 + np.arange(100) * 2.0**-53
    x[:, 100:200] = 0.5 - np.arange(1, 101) * 2.0**-54
    theta[:] = 0.5
    sc = E.sort_corpus(x, theta)
    for a in (0.6 * b, abs(b) * 0.3, -abs(b)):   # 0.6 b: the groups with those best points win
        for estimator in E.ESTIMATORS:
            dense = E._per_task(x, theta, a, b, estimator, "dense", E.DEFAULT_CHUNK_TOKENS, window)
            pruned = E._per_task(sc, None, a, b, estimator, "pruned", E.DEFAULT_CHUNK_TOKENS, window)
            assert np.all(np.isfinite(pruned))
            # one-head and reflected: relative (every term has one sign); averaged and pooled: terms
            # of both signs meet, so an absolute rounding allowance too
            both_signs = 1e-15 if estimator in ("averaged", "pooled") else 0.0
            tolerance = 1e-12 * np.abs(dense) + both_signs + E.pruned_window_bound(300, window=window) + UNDERFLOW
            assert np.all(np.abs(pruned - dense) <= tolerance), (a, estimator, pruned, dense)


@pytest.mark.parametrize("bad", [0, -1, 10**6, 1.5, True])
def test_bad_thread_count_is_an_input_error(bad):
    x, theta = _tasks(0, 3, 5, "random")
    with pytest.raises(E.InputError, match="threads"):
        E.loss_and_gradient(x, theta, 1.0, 1.0, threads=bad)


@pytest.mark.parametrize("method", E.METHODS)
def test_points_outside_the_unit_interval_are_rejected_by_the_kernel(method):
    x, theta = _tasks(0, 40, 8, "random")
    for bad in (np.nan, -1e-300, 1.0 + 2**-52):
        y = x.copy()
        y[37, 3] = bad
        source = E.SortedCorpus(np.sort(y, axis=1), theta, np.count_nonzero(y < theta[:, None], axis=1)) \
            if method == "pruned" else y
        with pytest.raises(E.InputError, match="x must be finite"):
            E.loss_and_gradient(source, None if method == "pruned" else theta, 1.0, 3.0, method=method)


def test_exp_is_within_two_ulps_of_the_exact_value_and_flushes_below_the_normal_range():
    rng = np.random.default_rng(0)
    ys = np.concatenate([-708.0 * rng.random(3000), -rng.random(1000), -1e-6 * rng.random(200),
                         [0.0, -0.0, -5e-324, EXP_FLUSH, -math.log(2) / 2, -math.log(2), -700.0]])
    worst = 0.0
    for y in ys:
        got = exp_nonpositive(float(y))
        with mpmath.workdps(40):
            want = mpmath.exp(mpmath.mpf(float(y)))
            worst = max(worst, float(abs(mpmath.mpf(got) - want) / want) / EPS)
    assert worst <= 2.0, worst
    for y in (-708.0001, -745.0, -1e6, -np.inf):
        assert exp_nonpositive(y) == 0.0 and math.exp(y) < 3.4e-308


def test_the_vectorised_exp_loop_gives_the_scalar_exp_bit_for_bit():
    # the kernel's exp loop compiles to 4-wide vector code; with contraction as the only fast-math
    # flag, each lane must round exactly as the scalar function does (no reordering leaks into it)
    from stumpcheck.numerics.corpus.kernel import _weights

    rng = np.random.default_rng(7)
    row = np.sort(rng.random(1003))
    omega = np.empty(row.size)
    for beta in (3.0, 500.0, -700.0):
        c = row[0] if beta >= 0 else row[-1]
        _weights(row, 0, row.size, 2.0, beta, c, c, omega)
        want = np.array([exp_nonpositive(-abs(beta) * abs(v - c)) for v in row])
        assert np.array_equal(omega, want), beta
