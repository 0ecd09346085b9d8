"""Sheared boxes of the fast corpus enclosures against Arb (the reference of tests/test_fast_corpus.py).

A sheared box is the parallelogram {(a′ + s·b, b) : a′ ∈ [a′], b ∈ [b]}; ``corpus_enclosure(...,
shear=s)`` must contain L̂, ∇L̂, ∇²L̂ at every point of it. Checked at the midpoint, the four corners
and two random points of each parallelogram (each a double (a, b) whose a − s·b lies in [a′]
exactly, checked in rationals), with slopes s from −2 to 3 (also given as an
interval), and the calibration-like strips a ≈ b + 2 log b where the shear is used. 0 misses.
"""

from __future__ import annotations

from fractions import Fraction

import numpy as np
import pytest
from flint import ctx

from stumpcheck.numerics.certified.fast import corpus_enclosure
from stumpcheck.numerics.precision import InputError
from tests.test_fast_corpus import PREC, _corpus, _inside, _reference

SEED = 4049


def _on_parallelogram(a_p: float, b: float, s: float, ap) -> float:
    """A double a with a − s·b ∈ [a′] exactly (the double nearest a_p + s·b, moved inward if needed)."""
    lo, hi = Fraction(ap[0]), Fraction(ap[1])
    exact = Fraction(a_p) + Fraction(s) * Fraction(b)
    a = float(exact)
    while Fraction(a) - Fraction(s) * Fraction(b) < lo:
        a = float(np.nextafter(a, np.inf))
    while Fraction(a) - Fraction(s) * Fraction(b) > hi:
        a = float(np.nextafter(a, -np.inf))
    assert lo <= Fraction(a) - Fraction(s) * Fraction(b) <= hi
    return a


def _check(x, theta, ap, b, s, enc, rng) -> list[str]:
    (alo, ahi), (blo, bhi) = ap, b
    slope = float(s) if np.isscalar(s) else float(s[0])   # an exact slope inside the given interval
    pts = [(0.5 * alo + 0.5 * ahi, 0.5 * blo + 0.5 * bhi), (alo, blo), (alo, bhi), (ahi, blo), (ahi, bhi)]
    pts += [(float(rng.uniform(alo, ahi)), float(rng.uniform(blo, bhi))) for _ in range(2)]
    out = []
    for a_p, bb in pts:
        _, ref = _reference(x, theta, _on_parallelogram(a_p, bb, slope, ap), bb)
        for k, name in enumerate(("L", "dL/da", "dL/db", "d2L/da2", "d2L/dadb", "d2L/db2")):
            if not _inside(enc[k, 0], enc[k, 1], ref[k]):
                out.append(f"{name} at a'={a_p!r}, b={bb!r}, s={s}: [{enc[k, 0]!r}, {enc[k, 1]!r}] vs {ref[k]}")
    return out


def _run(count: int, seed: int) -> tuple[int, list[str]]:
    rng = np.random.default_rng(seed)
    misses = []
    with ctx.workprec(PREC):
        for i in range(count):
            x, theta = _corpus(rng)
            b0 = float(10.0 ** rng.uniform(0, 3))
            if i % 2:    # a strip along a ≈ b + 2 log b, as the corpus interval uses
                s = float(1.0 + 2.0 / b0)
                a0 = float(b0 + 2 * np.log(b0) - s * b0 + rng.uniform(-5, 1))
            else:
                s = float(rng.uniform(-2, 3))
                a0 = float(rng.uniform(-20, 20))
            rb, wa = 10.0 ** rng.uniform(-6, -1), 10.0 ** rng.uniform(-8, 0)
            b = (b0, b0 * (1 + rb))
            ap = (a0, a0 + wa)
            shear = s if i % 3 else (s, float(np.nextafter(s, np.inf)))
            enc = corpus_enclosure(x, theta, ap, b, shear=shear, hessian=True)
            misses += _check(x, theta, ap, b, shear, enc, rng)
    return count, misses


def test_sheared_containment_against_arb():
    count, misses = _run(400, SEED)
    assert misses == [], misses[:5]


@pytest.mark.slow
def test_sheared_containment_against_arb_large():
    count, misses = _run(6000, SEED + 1)
    print(f"\n{count} sheared boxes x 7 points, {len(misses)} misses")
    assert misses == [], misses[:5]


def test_shear_narrows_along_a_strip():
    """Along a = A₀ + s·b the sheared enclosure of ∂L̂/∂a is narrower than over the bounding axis box."""
    rng = np.random.default_rng(SEED + 2)
    x, theta = rng.uniform(0, 1, (64, 64)), rng.uniform(0, 1, 64)
    b, s, a0 = (100.0, 101.0), 1.02, 7.0
    sheared = corpus_enclosure(x, theta, (a0, a0 + 0.05), b, shear=s, hessian=True)
    axis = corpus_enclosure(x, theta, (a0 + s * b[0], a0 + 0.05 + s * b[1]), b, hessian=True)
    width = lambda enc, k: enc[k, 1] - enc[k, 0]
    assert width(sheared, 1) < 0.2 * width(axis, 1)
    assert axis[1, 0] <= sheared[1, 0] and sheared[1, 1] <= axis[1, 1]


def test_shear_input_errors():
    x, theta = np.full((2, 3), 0.5), np.array([0.2, 0.7])
    with pytest.raises(InputError, match="refine"):
        corpus_enclosure(x, theta, (1.0, 2.0), (3.0, 4.0), shear=1.0, refine=True)
    with pytest.raises(InputError, match="shear"):
        corpus_enclosure(x, theta, (1.0, 2.0), (3.0, 4.0), shear=(2.0, 1.0))
