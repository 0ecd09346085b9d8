"""What a fresh environment compiles: one specialisation per kernel where constants used to make several, and
the hand-written sort that replaced numba's ``np.unique`` in the float64 population integral."""

from __future__ import annotations

import numpy as np
import pytest

from stumpcheck.numerics.corpus import empirical as E


@pytest.mark.parametrize("seed", range(20))
def test_sorted_distinct_is_np_unique(seed):
    from stumpcheck.numerics.population.one_head_float64 import _sorted_distinct

    rng = np.random.default_rng(seed)
    n = int(rng.integers(0, 400))
    pool = rng.uniform(0.0, 0.5, max(1, n // 3))
    points = rng.choice(pool, n)  # repeats, as the ladders of two features give
    if seed % 4 == 0:
        points = np.sort(points)  # runs already in order, as one ladder is
    points[: n // 10] = 0.0
    expected = np.unique(points)
    got = _sorted_distinct(points.copy())
    assert got.dtype == expected.dtype and np.array_equal(got, expected)


@pytest.mark.parametrize("a, b", [(10.0, 10.0), (1210.0, 1200.0), (0.0, 1e-3), (-5.0, 3.0), (1e6 + 30, 1e6)])
def test_breakpoints_are_sorted_distinct_and_include_the_ends(a, b):
    from stumpcheck.numerics.population.one_head_float64 import DEFAULT_GROWTH, _pieces

    for points in _pieces(a, b, DEFAULT_GROWTH):
        assert points[0] == 0.0 and points[-1] == 0.5
        assert np.all(np.diff(points) > 0)


def test_the_corpus_kernels_compile_one_specialisation_each():
    """The dense and pruned kernels (serial and threaded) on one corpus, every estimator: the group algebra
    has one compiled signature each, and the pruned task loop one for both entry points."""
    from stumpcheck.numerics.corpus import kernel, kernel_algebra, kernel_pruned

    rng = np.random.default_rng(1)
    x, theta = rng.uniform(size=(40, 50)), rng.uniform(size=40)
    sc = E.sort_corpus(x, theta)
    for code in kernel.ESTIMATOR_CODES.values():
        out = np.empty((4, 40))
        assert kernel.dense_tasks(x, theta, 12.0, 10.0, code, out)
        serial, threaded = np.empty((4, 40)), np.empty((4, 40))
        one = kernel_pruned.pruned_tasks_serial(sc.xs, sc.theta, sc.split, 1050.0, 1000.0, code, E.DEFAULT_WINDOW,
                                                serial)
        many = kernel_pruned.pruned_tasks(sc.xs, sc.theta, sc.split, 1050.0, 1000.0, code, E.DEFAULT_WINDOW,
                                          threaded)
        assert one == many and np.array_equal(serial, threaded)
    assert len(kernel_algebra.set_group.signatures) == 1
    assert len(kernel_algebra.mixture.signatures) == 1
    assert len(kernel_pruned._tasks.signatures) == 1
