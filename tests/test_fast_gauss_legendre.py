"""The Gauss–Legendre fast θ-integrals (stumpcheck.numerics.certified.fast.gauss_legendre) against Arb.

Containment: the enclosures of L, ∂L/∂a, ∂L/∂b from
:func:`stumpcheck.numerics.certified.fast.theta_integrals.loss_gradient_enclosure` (default method) contain
the balls of :func:`stumpcheck.numerics.certified.enclosures.certified_loss` and
:func:`~stumpcheck.numerics.certified.enclosures.certified_loss_gradient` (rel_width 1e-12) at random
(a, b) across the hazards (b from 1 to 10⁵, log-uniform; a on the calibration relation a*(b), near it
and far from it) and at random points of small (a, b) boxes: a few in the default suite, 200 points and
30 boxes behind ``slow``. Width: at points of the calibration relation, b ∈ [10, 1000], every component
is within 1e-10 relative, so a loose enclosure cannot pass. The node and weight enclosures contain
Arb's (at 256 bits). Negative control: the rule's sum alone, collapsed to its midpoint, misses Arb's
balls (the remainder and the rounding are what make the enclosure contain them).
"""

from __future__ import annotations

import math

import mpmath
import numpy as np
import pytest

from stumpcheck.numerics.certified.enclosures import certified_loss, certified_loss_gradient
from stumpcheck.numerics.certified.enclosures.balls import EnclosureTooWide
from stumpcheck.numerics.certified.fast.gauss_legendre import ellipse_cells, rule_enclosure
from stumpcheck.numerics.certified.fast.theta_integrals import (loss_gradient_enclosure,
                                                                loss_gradient_enclosure_counted)
from stumpcheck.numerics.generated.asymptotics_numpy import calibration_a
from stumpcheck.numerics.precision import InputError


def _arb(a: float, b: float):
    """Arb's balls at rel_width 1e-12; where a component is too small for that (|∂L| ~ 1e-80 far from
    the calibration relation), Arb's balls at dps 30 without a width goal (still certified)."""
    try:
        return (certified_loss(a, b, dps=15, rel_width=1e-12, integrand="generated"),) + tuple(
            certified_loss_gradient(a, b, dps=15, rel_width=1e-12))
    except EnclosureTooWide:
        return (certified_loss(a, b, dps=30, integrand="generated"),) + tuple(certified_loss_gradient(a, b, dps=30))


def _contains(row, ball) -> bool:
    """Arb's ball inside the fast enclosure; where Arb's ball is the wider one (a component ~1e-200 that
    Arb encloses as ±1e-35), the two must meet (both contain the exact value)."""
    lo, hi = mpmath.mpf(row[0]), mpmath.mpf(row[1])
    if ball.upper - ball.lower > hi - lo:
        return ball.lower <= hi and lo <= ball.upper
    return lo <= ball.lower and ball.upper <= hi


def _points(count: int, seed: int):
    """(a, b): b log-uniform in [1, 1e5]; a on, near (±3) or far (±30 % of b, at least 10) from a*(b)."""
    rng = np.random.default_rng(seed)
    out = []
    for i in range(count):
        b = float(10.0 ** rng.uniform(0, 5))
        star = float(calibration_a(b))
        kind = i % 3
        if kind == 0:
            a = star
        elif kind == 1:
            a = star + float(rng.uniform(-3, 3))
        else:
            a = star + float(rng.choice([-1, 1])) * max(10.0, 0.3 * b) * float(rng.uniform(0.3, 1))
        out.append((a, b))
    return out


def _check(points):
    misses, fallbacks = [], 0
    for a, b in points:
        found, counts = loss_gradient_enclosure_counted(a, b)
        fallbacks += counts["fallbacks"]
        if not all(_contains(row, ball) for row, ball in zip(found, _arb(a, b))):
            misses.append((a, b, found))
    return misses, fallbacks


def _check_boxes(count: int, seed: int):
    rng = np.random.default_rng(seed)
    misses = []
    for a, b in _points(count, seed + 1):
        relative = float(10.0 ** rng.uniform(-12, -7))
        box_a = (a, a + max(abs(a), 1.0) * relative)
        box_b = (b, b * (1 + relative))
        found = loss_gradient_enclosure(box_a, box_b)
        for pa, pb in [(box_a[1], box_b[0]), (float(rng.uniform(*box_a)), float(rng.uniform(*box_b)))]:
            if not all(_contains(row, ball) for row, ball in zip(found, _arb(pa, pb))):
                misses.append((pa, pb, found))
    return misses


def test_contains_arb_at_random_points():
    misses, _ = _check(_points(12, 1))
    assert not misses, misses


def test_contains_arb_in_random_boxes():
    assert not _check_boxes(4, 2)


@pytest.mark.slow
def test_contains_arb_at_200_random_points():
    misses, fallbacks = _check(_points(200, 11))
    assert not misses, misses
    print(f"200 points, 0 misses, {fallbacks} first-order fallback pieces")


@pytest.mark.slow
def test_contains_arb_in_30_random_boxes():
    assert not _check_boxes(30, 12)


@pytest.mark.parametrize("b", [10.0, 100.0, 1000.0])
def test_width_on_the_calibration_relation(b):
    a = float(calibration_a(b))
    found, counts = loss_gradient_enclosure_counted(a, b)
    widths = (found[:, 1] - found[:, 0]) / np.abs(found.mean(axis=1))
    assert np.all(widths <= 1e-10), widths
    assert counts["fallbacks"] == 0 and counts["pieces"] > 0


def test_negative_control_midpoint_misses():
    """The same enclosure collapsed to its midpoint does not contain Arb's balls (which are far
    narrower than float64 rounding of the θ-sum), so the containment test can fail."""
    a, b = float(calibration_a(100.0)), 100.0
    found = loss_gradient_enclosure(a, b)
    middle = found.mean(axis=1)
    collapsed = np.stack([middle, middle], axis=1)
    reference = _arb(a, b)
    assert all(_contains(row, ball) for row, ball in zip(found, reference))
    assert not any(mpmath.mpf(row[0]) <= ball.lower and ball.upper <= mpmath.mpf(row[1])
                   for row, ball in zip(collapsed, reference))


@pytest.mark.parametrize("n", [2, 5, 24, 40])
def test_nodes_and_weights_contain_arb(n):
    from flint import arb, ctx

    xlo, xhi, wlo, whi = rule_enclosure(n)
    assert np.all(xhi - xlo <= 4e-16) and np.all(whi - wlo <= 4e-16)
    with ctx.workprec(256):
        for i in range(n):
            x, w = arb.legendre_p_root(n, i, weight=True)
            assert arb(xlo[i]) < x < arb(xhi[i]) or (arb(xlo[i]) <= x.lower() and x.upper() <= arb(xhi[i]))
            assert arb(wlo[i]) <= w.lower() and w.upper() <= arb(whi[i])


def test_ellipse_cells_cover_the_ellipse():
    rng = np.random.default_rng(3)
    for rho in (1.2, 3.5, 8.0):
        cells = ellipse_cells(rho)
        big_a, big_b = (rho + 1 / rho) / 2, (rho - 1 / rho) / 2
        r, phi = np.sqrt(rng.uniform(0, 1, 2000)), rng.uniform(0, math.pi, 2000)
        for x, y in zip(r * big_a * np.cos(phi), r * big_b * np.sin(phi)):
            assert np.any((cells[:, 0] <= x) & (x <= cells[:, 1]) & (cells[:, 2] <= y) & (y <= cells[:, 3]))


@pytest.mark.parametrize("bad", [dict(method="simpson"), dict(order=1), dict(order=True)])
def test_bad_input_is_refused(bad):
    with pytest.raises(InputError):
        loss_gradient_enclosure(12.0, 10.0, **bad)


def test_complex_rectangles_contain_pointwise_values():
    """cmul, cdiv, cexp and the integrand bounds contain (bound) the values at random points of random
    rectangles, computed in mpmath at 50 digits."""
    from stumpcheck.numerics.certified.fast.complex_interval import cdiv, cexp, cmul, modulus_up

    rng = np.random.default_rng(5)
    mpmath.mp.dps = 50
    try:
        for _ in range(300):
            rects = []
            for _ in range(2):
                x0, y0 = rng.uniform(-3, 3, 2)
                dx, dy = 10.0 ** rng.uniform(-8, 0, 2)
                rects.append((x0, x0 + dx, y0, y0 + dy))
            za = mpmath.mpc(rng.uniform(rects[0][0], rects[0][1]), rng.uniform(rects[0][2], rects[0][3]))
            zb = mpmath.mpc(rng.uniform(rects[1][0], rects[1][1]), rng.uniform(rects[1][2], rects[1][3]))
            for got, exact in ((cmul(rects[0], rects[1]), za * zb), (cdiv(rects[0], rects[1]), za / zb),
                               (cexp(rects[0]), mpmath.exp(za))):
                assert got[0] <= exact.real <= got[1] and got[2] <= exact.imag <= got[3], (rects, got, exact)
            assert abs(za) <= modulus_up(rects[0])
    finally:
        mpmath.mp.dps = 15
