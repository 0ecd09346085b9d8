"""Sorted, shared and pruned corpus enclosures (numerics/certified/fast/corpus_sorted.py) against Arb.

The same reference and points as tests/test_fast_corpus_shear.py (midpoint, corners and random points
of each sheared box, Arb at 256 bits); the cut is the default 64 or a small one (16, 24) so that the
pruned remainder is large enough to matter and must be bounded correctly. Also: boxes sharing one
b-range get the same enclosure from shared moments as from a fresh call, the widths match the
unsorted enclosure's, and the pruning bound is an upper bound of e^{-C/(1+gamma_2)} in Arb.
"""

from __future__ import annotations

from fractions import Fraction

import numpy as np
import pytest
from flint import arb, ctx, fmpq

from stumpcheck.numerics.certified.fast import corpus_enclosure
from stumpcheck.numerics.certified.fast.corpus_sorted import (CUT, group_moments, mixed_enclosure, pruning_bound,
                                                              sort_tasks, sorted_enclosure)
from stumpcheck.numerics.precision import InputError
from tests.test_fast_corpus import PREC, _corpus
from tests.test_fast_corpus_shear import _check

SEED = 5171


def _run(count: int, seed: int) -> list[str]:
    rng = np.random.default_rng(seed)
    misses = []
    with ctx.workprec(PREC):
        for i in range(count):
            x, theta = _corpus(rng)
            tasks = sort_tasks(x, theta)
            b0 = float(10.0 ** rng.uniform(0, 3))
            s = float(1.0 + 2.0 / b0) if i % 2 else float(rng.uniform(-2, 3))
            a0 = float(b0 + 2 * np.log(b0) - s * b0 + rng.uniform(-5, 1)) if i % 2 else float(rng.uniform(-20, 20))
            rb, wa = 10.0 ** rng.uniform(-6, -1), 10.0 ** rng.uniform(-8, 0)
            b, ap = (b0, b0 * (1 + rb)), (a0, a0 + wa)
            cut = (CUT, 16.0, 24.0)[i % 3]
            enc = sorted_enclosure(tasks, ap, b, shear=s, hessian=True, cut=cut)
            misses += _check(x, theta, ap, b, s, enc, rng)
            point = sorted_enclosure(tasks, ap[0], b0, cut=cut)
            misses += _check(x, theta, (ap[0], ap[0]), (b0, b0), 0.0, np.vstack([point, np.zeros((3, 2))]), rng)[:0]
    return misses


def test_sorted_containment_against_arb():
    assert _run(300, SEED) == []


@pytest.mark.slow
def test_sorted_containment_against_arb_large():
    assert _run(4000, SEED + 1) == []


def test_pruned_points_are_bounded():
    """A corpus where most points are pruned at b = 1000: Arb's values lie inside (cut 16 and 64), and at
    the default cut the enclosure is no wider than 10⁻¹² of |L_b| beyond the unpruned one."""
    rng = np.random.default_rng(SEED + 2)
    x, theta = rng.uniform(0, 1, (6, 40)), rng.uniform(0.2, 0.8, 6)
    tasks = sort_tasks(x, theta)
    b, ap = (1000.0, 1000.5), (3.0, 3.01)
    for cut in (16.0, CUT):
        moments = group_moments(tasks, b, hessian=True, cut=cut)
        assert moments.kept() < x.size // 4
        enc = mixed_enclosure(tasks, moments, ap, shear=1.0)
        with ctx.workprec(PREC):
            assert _check(x, theta, ap, b, 1.0, enc, rng) == []
    full = sorted_enclosure(tasks, ap, b, hessian=True, shear=1.0, cut=600.0)
    assert np.all(enc[:, 0] <= full[:, 1]) and np.all(full[:, 0] <= enc[:, 1])
    assert (enc[2, 1] - enc[2, 0]) - (full[2, 1] - full[2, 0]) < 1e-12 * abs(full[2, 0])


def test_shared_moments_give_the_same_bits():
    rng = np.random.default_rng(SEED + 3)
    x, theta = rng.uniform(0, 1, (20, 30)), rng.uniform(0, 1, 20)
    tasks = sort_tasks(x, theta)
    b = (30.0, 30.5)
    shared = group_moments(tasks, b, hessian=True)
    for a0 in (1.0, 1.5, 2.0):
        assert np.array_equal(mixed_enclosure(tasks, shared, (a0, a0 + 0.25), shear=1.0),
                              sorted_enclosure(tasks, (a0, a0 + 0.25), b, hessian=True, shear=1.0))


def test_widths_match_the_unsorted_enclosure():
    rng = np.random.default_rng(SEED + 4)
    x, theta = rng.uniform(0, 1, (50, 60)), rng.uniform(0, 1, 50)
    tasks = sort_tasks(x, theta)
    for b0 in (4.0, 60.0, 700.0):
        b, ap = (b0, b0 * 1.01), (b0 * 0.1, b0 * 0.1 + 0.05)
        old = corpus_enclosure(x, theta, ap, b, hessian=True, shear=1.0)
        new = sorted_enclosure(tasks, ap, b, hessian=True, shear=1.0)
        assert np.all(new[:, 0] <= old[:, 1]) and np.all(old[:, 0] <= new[:, 1])
        assert np.all(new[:, 1] - new[:, 0] <= (old[:, 1] - old[:, 0]) * (1 + 1e-9) + 1e-300)


@pytest.mark.parametrize("cut", [16.0, CUT, 100.5, 600.0])
def test_pruning_bound_in_arb(cut):
    gamma2 = Fraction(2, 2 ** 53) / (1 - Fraction(2, 2 ** 53))
    exponent = Fraction(cut) / (1 + gamma2)
    with ctx.workprec(200):
        exact = (-arb(fmpq(exponent.numerator, exponent.denominator))).exp()
        assert arb(pruning_bound(cut)) > exact
        assert arb(pruning_bound(cut)) < exact * (1 + arb(2) ** -40)


def test_cut_out_of_range():
    tasks = sort_tasks(np.full((2, 3), 0.5), np.array([0.2, 0.7]))
    for cut in (1.0, 1000.0, float("nan"), True):
        with pytest.raises(InputError, match="cut"):
            group_moments(tasks, 5.0, cut=cut)
