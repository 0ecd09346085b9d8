"""e, ∇e over complex (a, b, θ) rectangles and ∇L over complex (a, b) rectangles (fast.complex_parameters)
contain Arb's values.

Reference: the generated Arb integrands (``error_and_gradient_one_head`` with ``analytic=True``) at 128 bits at
a random point of each rectangle, and for ∇L the tube's Arb integral
(:func:`stumpcheck.numerics.certified.tube.analytic.complex_gradient`) at a tiny ball about such a point; a
case counts when the Arb ball lies inside the fast rectangle (real and imaginary parts). The hazards of
docs/model.md §8: θ near 0 and near 1 (given by u = 1 − θ), the switch layer θ ≈ a/b, b from 1 to 10⁶, and
complex offsets up to a few tenths (the tube's cells) in a and b and up to ~1/b in θ.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from flint import acb, arb, ctx

from stumpcheck.numerics.certified.fast.complex_parameters import error_rectangles, gradient_rectangle
from stumpcheck.numerics.generated import population_arb as gen_arb


def _float_inside(ball: acb, rect) -> bool:
    """Arb's ball inside the rectangle, the ball's ends compared exactly (as arbs)."""
    re, im = ball.real, ball.imag
    return (arb(rect[0]) <= re.lower() and re.upper() <= arb(rect[1])
            and arb(rect[2]) <= im.lower() and im.upper() <= arb(rect[3]))


def _verdict(ball: arb, lo: float, hi: float) -> str:
    """"inside"; "miss" (disjoint, or a reference narrower than [lo, hi] reaching outside it); or "loose": a
    reference wider than [lo, hi] that meets it decides nothing (acb.integral's error bound, or its absolute
    tolerance next to a tiny component, can exceed the fast enclosure's width)."""
    if arb(lo) <= ball.lower() and ball.upper() <= arb(hi):
        return "inside"
    if ball.upper() < arb(lo) or arb(hi) < ball.lower():
        return "miss"
    return "loose" if 2 * ball.rad() > arb(hi) - arb(lo) else "miss"


def _sample(rng):
    """(a rectangle, b rectangle, θ rectangle, u rectangle, a point (a, b, θ) inside them) across the hazards."""
    b = float(np.exp(rng.uniform(0.0, math.log(1e6))))
    kind = rng.integers(4)
    if kind == 0:  # θ near 0
        theta = float(10.0 ** rng.uniform(-12, -2))
    elif kind == 1:  # θ near 1, through u
        theta = 1.0 - float(10.0 ** rng.uniform(-12, -2))
    elif kind == 2:  # the switch layer
        theta = float(rng.uniform(0.02, 0.98))
    else:
        theta = float(rng.uniform(0.0, 1.0))
    a = b * theta + float(rng.normal(0.0, 3.0))
    ra, ia = float(rng.uniform(0, 0.3)), float(rng.uniform(0, 0.3))
    rb, ib = float(rng.uniform(0, 0.3)) * min(1.0, b / 4), float(rng.uniform(0, 0.3)) * min(1.0, b / 4)
    ut = 1.0 - theta
    rt = float(rng.uniform(0, 0.5)) * min(theta, ut) if rng.random() < 0.5 else 0.0
    it = float(rng.uniform(0, 1.0)) / b
    a_rect = (a - ra, a + ra, -ia, ia)
    b_rect = (b - rb, b + rb, -ib, ib)
    t_rect = (theta - rt, theta + rt, -it, it)
    u_rect = (ut - rt, ut + rt, -it, it)
    point = (complex(a + rng.uniform(-ra, ra), rng.uniform(-ia, ia)),
             complex(b + rng.uniform(-rb, rb), rng.uniform(-ib, ib)))
    dt = complex(rng.uniform(-rt, rt), rng.uniform(-it, it))
    return a_rect, b_rect, t_rect, u_rect, point, (theta, dt)


def _containment(count: int, seed: int) -> tuple[int, int]:
    """(cases checked, misses) of error_rectangles against the Arb integrands at a point of each box."""
    rng = np.random.default_rng(seed)
    checked = misses = 0
    with ctx.workprec(128):
        for _ in range(count):
            a_rect, b_rect, t_rect, u_rect, (pa, pb), (theta, dt) = _sample(rng)
            rects = error_rectangles(a_rect, b_rect, t_rect, u_rect)
            if not all(math.isfinite(x) for r in rects for x in r):
                continue
            # θ = θ₀ + dt exactly in Arb (θ₀ near 1 given as 1 − u₀ exactly: both are doubles)
            t = acb(arb(theta) + arb(dt.real), arb(dt.imag))
            values = gen_arb.error_and_gradient_one_head(acb(pa.real, pa.imag), acb(pb.real, pb.imag), t, True)
            if not all(v.is_finite() for v in values):
                continue
            checked += 1
            if not all(_float_inside(v, r) for v, r in zip(values, rects)):
                misses += 1
    return checked, misses


def test_error_rectangles_contain_arb_at_2000_points_across_the_hazards():
    checked, misses = _containment(2000, 1)
    assert misses == 0
    assert checked >= 1500  # the rest: rectangles reaching a pole of the continuation, or Arb not finite there


@pytest.mark.slow
def test_error_rectangles_contain_arb_at_100000_points():
    checked, misses = _containment(100_000, 2)
    assert misses == 0
    assert checked >= 75_000


def test_on_the_real_axis_the_rectangles_are_the_real_enclosure_to_rounding():
    """A degenerate rectangle (a point) gives e to a few ulps of its size (no spurious width)."""
    from stumpcheck.numerics.certified.fast.one_head import jet_box

    rng = np.random.default_rng(3)
    for _ in range(200):
        b = float(np.exp(rng.uniform(0, math.log(1e4))))
        theta = float(rng.uniform(0.01, 0.99))
        a = b * theta + float(rng.normal(0, 2))
        e, ea, eb = error_rectangles((a, a, 0.0, 0.0), (b, b, 0.0, 0.0), (theta, theta, 0.0, 0.0),
                                     (1 - theta, 1 - theta, 0.0, 0.0))
        real = jet_box(a, a, b, b, theta, theta, 1 - theta, 1 - theta)
        for rect, lo, hi in ((e, real[0], real[1]), (ea, real[2], real[3]), (eb, real[4], real[5])):
            scale = max(abs(lo), abs(hi), 1e-300)
            assert rect[0] <= hi and lo <= rect[1]
            assert rect[1] - rect[0] <= 1e-10 * scale + 1e-280


def _complex_gradient(a: acb, b: acb) -> tuple[acb, acb]:
    """∇L at a complex point by ``acb.integral`` of the generated Arb integrands to 2⁻³⁰ relative (the tube's
    own complex integral asks only 2⁻⁸: its balls are too wide for a containment test)."""
    from stumpcheck.numerics.certified.enclosures.theta_integrals import ladder_pieces

    ends = ladder_pieces(a.real, b.real, "one-head", ctx.prec)
    out = []
    for k in (0, 1):
        def integrand(t, analytic, k=k):
            return gen_arb.error_one_head(a, b, t, True) * gen_arb.error_gradient_one_head(a, b, t, True)[k]

        total = acb(0)
        for lo, hi in zip(ends, ends[1:]):
            total += acb.integral(integrand, lo, hi, rel_tol=arb(2) ** -30, abs_tol=arb(2) ** -200)
        if not total.is_finite():
            raise ArithmeticError("not finite")
        out.append(total)
    return out[0], out[1]


def _gradient_cases(count: int, seed: int) -> tuple[int, int, int]:
    """(cases whose four parts are all decided and inside, misses, loose references) at random rectangles."""
    complex_gradient = _complex_gradient

    rng = np.random.default_rng(seed)
    checked = misses = loose = 0
    with ctx.workprec(84):
        for _ in range(count):
            b = float(np.exp(rng.uniform(math.log(2.0), math.log(1e3))))
            a = b * float(rng.uniform(-0.2, 1.2)) + float(rng.normal(0, 2))
            r = float(rng.uniform(0.01, 0.15))
            a_rect, b_rect = (a - r, a + r, -r, r), (b - r, b + r, -r, r)
            (ga, gb), ok = gradient_rectangle(a_rect, b_rect)
            if not ok:
                continue
            pa = complex(a + rng.uniform(-r, r), rng.uniform(-r, r))
            pb = complex(b + rng.uniform(-r, r), rng.uniform(-r, r))
            try:
                ra, rb = complex_gradient(acb(pa.real, pa.imag), acb(pb.real, pb.imag))
            except ArithmeticError:
                continue
            verdicts = [_verdict(x.real, g[0], g[1]) for x, g in ((ra, ga), (rb, gb))]
            verdicts += [_verdict(x.imag, g[2], g[3]) for x, g in ((ra, ga), (rb, gb))]
            if "miss" in verdicts:
                misses += 1
            elif "loose" in verdicts:
                loose += 1
            else:
                checked += 1
    return checked, misses, loose


def test_the_gradient_over_complex_rectangles_contains_arb_at_points_of_them():
    checked, misses, loose = _gradient_cases(10, 5)
    assert misses == 0
    assert checked >= 7


@pytest.mark.slow
def test_the_gradient_over_complex_rectangles_contains_arb_at_400_points():
    checked, misses, loose = _gradient_cases(400, 6)
    assert misses == 0
    assert checked >= 300 and loose <= 20


def test_a_rectangle_of_b_reaching_re_b_le_0_is_refused_and_bad_input_raises():
    (_, _), ok = gradient_rectangle((1.0, 1.1, 0.0, 0.1), (-0.1, 0.1, 0.0, 0.1))
    assert not ok
    with pytest.raises(ValueError):
        gradient_rectangle((1.1, 1.0, 0.0, 0.1), (1.0, 1.1, 0.0, 0.1))
