"""corpus_gradient_arb with ``prune`` (numerics/certified/enclosures/corpus_arb.py): the pruned balls
overlap the unpruned ones on random corpora (ties, tiny and large b, a of either sign), with small gaps
so that points are dropped, and stay narrow (absolutely) at the gap the interval re-check uses."""

from __future__ import annotations

import numpy as np

from stumpcheck.numerics.certified.enclosures.corpus_arb import corpus_gradient_arb


def test_pruned_balls_overlap_the_full_ones():
    rng = np.random.default_rng(77)
    for k in range(60):
        m, n = int(rng.integers(1, 12)), int(rng.integers(1, 24))
        x, theta = rng.uniform(0, 1, (m, n)), rng.uniform(0, 1, m)
        if k % 4 == 0:
            x[:, 0] = theta       # ties x = θ (labelled 1)
        b = float(10 ** rng.uniform(-1, 3))
        a = float(b * rng.uniform(-1, 2))
        gap = float(rng.choice([3.0, 20.0, 80.0]))
        full = corpus_gradient_arb(x, theta, a, b)
        pruned = corpus_gradient_arb(x, theta, a, b, prune=gap)
        assert all(p.overlaps(f) for p, f in zip(pruned, full)), (k, a, b, gap)


def test_pruned_balls_are_narrow_at_gap_80():
    rng = np.random.default_rng(78)
    x, theta = rng.uniform(0, 1, (40, 200)), rng.uniform(0, 1, 40)
    for a, b in ((402.0, 400.0), (10.5, 8.0)):
        for p in corpus_gradient_arb(x, theta, a, b, prune=80.0):
            assert float(p.rad()) <= 200 * np.exp(-80.0) * 10    # n·e^{-80} of the tasks' scale (≤ 1), and rounding
