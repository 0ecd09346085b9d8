"""The fast Hessian of L (fast.hessian) and its integrand contain Arb's.

The integrand: the translated one-head jet (e, ∇e, ∇²e from the generated ``error_jet_one_head``) at exact
points (a, b, θ) against the same generated function in Arb at 128 bits: every Arb ball inside the float64
interval, across θ near 0 and 1 (θ given by u = 1 − θ), the switch layer and b up to 10⁶. The integral:
:func:`hessian_enclosure` at random points and along the tube's range against the tube's Arb Hessian
(:func:`stumpcheck.numerics.certified.tube.points.point_hessian`) at 120 bits (relative tolerance 2⁻⁷² of the
largest entry: a ball of a much smaller entry can be wider than the fast interval; such a reference decides
nothing and is counted apart, as in tests/test_fast_complex_parameters.py).
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from flint import acb, arb, ctx

from stumpcheck.numerics.certified.fast.hessian import hessian_enclosure, jet_module
from stumpcheck.numerics.generated import population_arb as gen_arb


def _sample(rng):
    b = float(np.exp(rng.uniform(0.0, math.log(1e6))))
    kind = rng.integers(3)
    if kind == 0:
        theta, u = float(10.0 ** rng.uniform(-14, -1)), None
    elif kind == 1:
        theta, u = None, float(10.0 ** rng.uniform(-14, -1))
    else:
        theta, u = float(rng.uniform(0.0, 1.0)), None
    s = theta if theta is not None else 1.0 - u
    a = b * s + float(rng.normal(0.0, 3.0))
    return a, b, theta, u


def _integrand_misses(count: int, seed: int) -> tuple[int, int]:
    kernel = jet_module().kernel
    rng = np.random.default_rng(seed)
    checked = misses = 0
    with ctx.workprec(128):
        for _ in range(count):
            a, b, theta, u = _sample(rng)
            if theta is not None:
                t_ball, ulo, uhi = arb(theta), *sorted((1.0 - theta, math.nextafter(1.0 - theta, 2.0)))
                tlo = thi = theta
                # the u-interval must enclose 1 − θ: widen by one step each way
                ulo, uhi = math.nextafter(1.0 - theta, -1.0), math.nextafter(1.0 - theta, 2.0)
            else:
                t_ball = 1 - arb(u)
                ulo = uhi = u
                tlo, thi = math.nextafter(1.0 - u, -1.0), math.nextafter(1.0 - u, 2.0)
            v = np.array([a, a, b, b])
            fast = kernel(v, tlo, thi, ulo, uhi)
            exact = gen_arb.error_jet_one_head(acb(a), acb(b), acb(t_ball))
            if not all(x.is_finite() for x in exact):
                continue
            checked += 1
            for (lo, hi), x in zip(fast, exact):
                if not (arb(lo) <= x.real.lower() and x.real.upper() <= arb(hi)):
                    misses += 1
                    break
    return checked, misses


def test_the_translated_jet_contains_arb_at_2000_points_across_the_hazards():
    checked, misses = _integrand_misses(2000, 11)
    assert misses == 0
    assert checked >= 1900


@pytest.mark.slow
def test_the_translated_jet_contains_arb_at_100000_points():
    checked, misses = _integrand_misses(100_000, 12)
    assert misses == 0
    assert checked >= 95_000


def _verdict(ball: arb, lo: float, hi: float) -> str:
    """"inside"; "miss" (disjoint, or a reference narrower than [lo, hi] reaching outside it); or "loose" (a
    reference wider than [lo, hi] that meets it)."""
    if arb(lo) <= ball.lower() and ball.upper() <= arb(hi):
        return "inside"
    if ball.upper() < arb(lo) or arb(hi) < ball.lower():
        return "miss"
    return "loose" if 2 * ball.rad() > arb(hi) - arb(lo) else "miss"


def _hessian_cases(count: int, seed: int, tube_range: bool = False):
    """(checked, misses, relative widths) at random (a, b): b ∈ [2, 300], a/b ∈ [0.3, 1.4] (or the tube's range
    from (10, 10) to 10⁶: b ∈ [8, 40], a/b ∈ [0.95, 1.25])."""
    from stumpcheck.numerics.certified.tube.points import point_hessian

    rng = np.random.default_rng(seed)
    checked = misses = loose = 0
    widths = []
    for _ in range(count):
        if tube_range:
            b = float(rng.uniform(8.0, 40.0))
            a = b * float(rng.uniform(0.95, 1.25))
        else:
            b = float(np.exp(rng.uniform(math.log(2.0), math.log(300.0))))
            a = b * float(rng.uniform(0.3, 1.4)) + float(rng.normal(0, 1))
        out, ok = hessian_enclosure(a, b)
        if not ok:
            continue
        with ctx.workprec(120):
            reference = point_hessian(arb(a), arb(b))
        scale = max(abs(out[0][0]), abs(out[2][0]))
        widths.append(max(hi - lo for lo, hi in out) / scale)
        verdicts = [_verdict(x, lo, hi) for (lo, hi), x in zip(out, reference)]
        if "miss" in verdicts:
            misses += 1
        elif "loose" in verdicts:
            loose += 1
        else:
            checked += 1
    return checked, misses, loose, widths


def test_the_fast_hessian_contains_arb():
    checked, misses, _, _ = _hessian_cases(3, 21)
    assert misses == 0
    assert checked >= 2


def test_the_fast_hessian_is_tight_enough_for_the_tube_along_its_range():
    checked, misses, _, widths = _hessian_cases(3, 23, tube_range=True)
    assert misses == 0 and checked == 3
    assert max(widths) <= 2.0 ** -36  # the tube's acceptance width (tube.arithmetic.HESSIAN_WIDTH)


@pytest.mark.slow
def test_the_fast_hessian_contains_arb_at_200_points():
    checked, misses, loose, _ = _hessian_cases(200, 22)
    assert misses == 0
    assert checked >= 150 and loose <= 10


def test_a_box_below_the_cauchy_radius_is_refused():
    from stumpcheck.numerics.precision import InputError

    with pytest.raises(InputError):
        hessian_enclosure(0.0, 0.2)


def test_the_tube_s_coarse_ellipse_grid_gives_valid_enclosures_as_tight_as_the_default():
    """Two cells per ellipse (tube.arithmetic.ELLIPSE_GRID) instead of 8 × 4: a cruder M, the same widths along
    the tube's range (the remainder at ρ = 4 is far below the rounding), and Arb's values inside."""
    from stumpcheck.numerics.certified.fast.theta_integrals import loss_gradient_enclosure_counted
    from stumpcheck.numerics.certified.tube.arithmetic import ELLIPSE_GRID
    from stumpcheck.numerics.certified.tube.points import point_gradient

    rng = np.random.default_rng(31)
    for _ in range(3):
        b = float(rng.uniform(8.0, 40.0))
        a = b * float(rng.uniform(0.95, 1.25))
        coarse, _ = loss_gradient_enclosure_counted(a, b, grid=ELLIPSE_GRID)
        fine, _ = loss_gradient_enclosure_counted(a, b)
        h_coarse, ok = hessian_enclosure(a, b, grid=ELLIPSE_GRID)
        h_fine, _ = hessian_enclosure(a, b)
        assert ok
        for (lo, hi), (flo, fhi) in [*zip(coarse, fine), *zip(h_coarse, h_fine)]:
            assert hi - lo <= 1.01 * (fhi - flo)
        with ctx.workprec(120):
            reference = point_gradient(arb(a), arb(b))
        for (lo, hi), x in zip(coarse[1:], reference):
            assert _verdict(x, lo, hi) != "miss"
