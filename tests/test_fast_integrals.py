"""The first-order fast θ-integrals (theta_integrals, method="first-order") against Arb's certified ones.

The Gauss–Legendre default of stumpcheck.numerics.certified.fast.theta_integrals is tested in
tests/test_fast_gauss_legendre.py.

At points (a, b) from b = 0.3 to 10⁵, on and off the calibration relation, the fast enclosures of L,
∂L/∂a, ∂L/∂b contain the balls of :func:`stumpcheck.numerics.certified.enclosures.certified_loss` and
:func:`~stumpcheck.numerics.certified.enclosures.certified_loss_gradient` (dps 15); over (a, b) boxes
they contain Arb's balls at a corner and at a random point of the box. Widths: the method is first order
(module docstring), so the relative width at a point falls about like 1/subdivisions; it is measured
here so that a layer returning the whole line cannot pass.
"""

from __future__ import annotations

import math

import mpmath
import numpy as np
import pytest

from stumpcheck.numerics.certified.enclosures import certified_loss, certified_loss_gradient
from stumpcheck.numerics.certified.fast.theta_integrals import loss_gradient_enclosure, split_pieces
from stumpcheck.numerics.generated.asymptotics_numpy import calibration_a
from stumpcheck.numerics.precision import InputError

POINTS = [(12.0, 10.0), (float(calibration_a(100.0)), 100.0), (float(calibration_a(1000.0)), 1000.0),
          (-2.0, 0.3), (50.0, 5.0), (-20.0, 30.0), (float(calibration_a(3.0e4)), 3.0e4)]
SLOW_POINTS = [(float(calibration_a(1e5)), 1e5), (float(calibration_a(1e5)) + 3.0, 1e5), (130.0, 100.0),
               (0.0, 1.0), (5.0, 0.1)]


def _arb(a: float, b: float):
    return (certified_loss(a, b, dps=15, rel_width=1e-12, integrand="generated"),) + tuple(
        certified_loss_gradient(a, b, dps=15, rel_width=1e-12))


def _contains(row, enclosure) -> bool:
    return mpmath.mpf(row[0]) <= enclosure.lower and enclosure.upper <= mpmath.mpf(row[1])


def _check_point(a: float, b: float, subdivisions: int = 64, method: str = "first-order"):
    found = loss_gradient_enclosure(a, b, subdivisions=subdivisions, method=method)
    reference = _arb(a, b)
    assert all(_contains(row, ball) for row, ball in zip(found, reference)), (a, b, found, reference)
    return found


@pytest.mark.parametrize(("a", "b"), POINTS)
def test_fast_integrals_contain_arb_at_a_point(a, b):
    """…and is useful: L within 5 % (first order at 64 sub-boxes a piece: about 1e-2, module docstring),
    and the sign of each gradient component decided (∫ e∇e cancels, so its relative width is larger)."""
    found = _check_point(a, b)
    assert found[0, 1] - found[0, 0] < 0.05 * found[0, 0]
    assert np.all((found[1:, 0] > 0) | (found[1:, 1] < 0)), found


@pytest.mark.slow
@pytest.mark.parametrize(("a", "b"), SLOW_POINTS)
def test_fast_integrals_contain_arb_at_more_points(a, b):
    _check_point(a, b)


@pytest.mark.parametrize(("a", "b", "relative"), [(14.0, 10.0, 1e-6), (float(calibration_a(200.0)), 200.0, 1e-8),
                                                  (3.0, 2.0, 1e-3)])
def test_fast_integrals_over_a_box_contain_arb_at_its_points(a, b, relative):
    rng = np.random.default_rng(7)
    box_a = (a, a + abs(a) * relative)
    box_b = (b, b * (1 + relative))
    found = loss_gradient_enclosure(box_a, box_b, method="first-order")
    for pa, pb in [(box_a[0], box_b[1]), (float(rng.uniform(*box_a)), float(rng.uniform(*box_b)))]:
        reference = _arb(pa, pb)
        assert all(_contains(row, ball) for row, ball in zip(found, reference)), (pa, pb, found, reference)


def test_the_width_falls_like_one_over_the_subdivisions():
    """At (12, 10): 16× the sub-boxes gives at most 1/8 of the width, and 1024 a piece is within 1 % (and
    still contains Arb's balls)."""
    coarse = loss_gradient_enclosure(12.0, 10.0, subdivisions=64, method="first-order")
    fine = _check_point(12.0, 10.0, subdivisions=1024)
    wc, wf = coarse[:, 1] - coarse[:, 0], fine[:, 1] - fine[:, 0]
    assert np.all(wf <= wc / 8), (wc, wf)
    assert np.all(wf / np.abs(fine.mean(axis=1)) < 1e-2)


def test_the_pieces_tile_both_halves_exactly():
    for a, b in POINTS + SLOW_POINTS:
        lower, upper = split_pieces(a, b)
        for points in (lower, upper):
            assert points[0] == 0.0 and points[-1] == 0.5 and np.all(np.diff(points) > 0)


@pytest.mark.parametrize("bad", [dict(a=math.nan, b=1.0), dict(a=1.0, b=0.0), dict(a=(2.0, 1.0), b=1.0),
                                 dict(a=1.0, b=1.0, subdivisions=0), dict(a=1.0, b=1.0, subdivisions=True)])
def test_bad_input_is_refused(bad):
    with pytest.raises(InputError):
        loss_gradient_enclosure(**bad)
