"""The complex-rectangle bounds of the one-head integrands (Gauss–Legendre remainders) contain the truth.

References are mpmath at 50 digits, evaluated from the definitions (E = 1 − e^{−β}, κ₁ = 1/β − p,
κ₂ = 1/β² − p(1 + p), p = 1/(e^β − 1), w = E_R X/(E_L + E_R X), X = e^{a − bθ}) at complex points; on the
real axis the bounds are also compared with the real enclosure of the same e, ∂e/∂a, ∂e/∂b.
"""

from __future__ import annotations

import math

import mpmath
import numpy as np
import pytest

from stumpcheck.numerics.certified.fast import complex_one_head
from stumpcheck.numerics.certified.fast.complex_one_head import integrand_bounds
from stumpcheck.numerics.certified.fast.one_head import jet_box

mpmath.mp.dps = 50


def _contains(rect, z) -> bool:
    return rect[0] <= z.real <= rect[1] and rect[2] <= z.imag <= rect[3]


def _point(z: complex, pad: float = 0.0) -> tuple:
    return (z.real - pad, z.real + pad, z.imag - pad, z.imag + pad)


def _reference(a: float, b: float, theta: complex) -> tuple:
    """(½e², e·∂e/∂a, e·∂e/∂b) at a complex θ, straight from the definitions."""
    a, b, th = mpmath.mpf(a), mpmath.mpf(b), mpmath.mpc(theta)
    u = 1 - th

    def kappas(beta):
        p = 1 / (mpmath.exp(beta) - 1)
        return 1 / beta - p, 1 / beta**2 - p * (1 + p)

    bl, br = b * th, b * u
    el, er = 1 - mpmath.exp(-bl), 1 - mpmath.exp(-br)
    x = mpmath.exp(a - b * th)
    w, v = er * x / (el + er * x), el / (el + er * x)
    k1l, k2l = kappas(bl)
    k1r, k2r = kappas(br)
    mr, ml = u * k1r, th * (1 - k1l)
    delta = mr + ml
    e = w * mr - v * ml
    ea = w * v * delta
    eb = -(w * u**2 * k2r + v * th**2 * k2l + w * v * delta**2)
    return e * e / 2, e * ea, e * eb


@pytest.mark.parametrize("seed", range(4))
def test_the_mass_series_and_the_closed_form_enclose_one_minus_exp(seed):
    """E = 1 − e^{−β} on both sides of |β| = ½ (series inside, closed form outside), complex β."""
    rng = np.random.default_rng(seed)
    for _ in range(200):
        r = rng.choice([rng.uniform(1e-6, 0.5), rng.uniform(0.5, 3.0)])
        beta = complex(r * math.cos(rng.uniform(0, 2 * math.pi)), r * math.sin(rng.uniform(0, 2 * math.pi)))
        rect = complex_one_head._mass(_point(beta, 1e-12 * r))
        truth = 1 - mpmath.exp(-mpmath.mpc(beta))
        assert _contains(rect, complex(truth)), (beta, rect, truth)
        # relative precision kept for small rates: the rectangle is within a few ulps of |E|
        assert max(rect[1] - rect[0], rect[3] - rect[2]) <= 1e-9 * abs(complex(truth))


def test_the_mass_series_is_one_minus_exp_not_exp_minus_one():
    """A real rate β = 0.4: 1 − e^{−0.4} = 0.3297 (e^{0.4} − 1 = 0.4918 would be the other sign)."""
    rect = complex_one_head._mass((0.4, 0.4, 0.0, 0.0))
    assert rect[0] <= 1 - math.exp(-0.4) <= rect[1]
    assert rect[1] < 0.33


@pytest.mark.parametrize("seed", range(3))
def test_the_bounds_hold_at_complex_thresholds(seed):
    rng = np.random.default_rng(100 + seed)
    checked = 0
    for _ in range(150):
        b = float(np.exp(rng.uniform(math.log(0.5), math.log(200.0))))
        a = b * rng.uniform(0.1, 0.9) + rng.normal(0, 1)
        theta = complex(rng.uniform(0.01, 0.99), rng.normal(0, 0.3 / b))
        pad = 1e-9
        t = _point(theta, pad)
        u = _point(1 - theta, pad)
        bounds = integrand_bounds(a, a, b, b, t, u)
        if not all(math.isfinite(m) for m in bounds):
            continue
        checked += 1
        for bound, value in zip(bounds, _reference(a, b, theta)):
            assert float(abs(value)) <= bound * (1 + 1e-12), (a, b, theta, bounds)
    assert checked >= 100


def test_the_bounds_on_the_real_axis_cover_the_real_enclosure():
    rng = np.random.default_rng(7)
    for _ in range(200):
        b = float(np.exp(rng.uniform(math.log(0.5), math.log(500.0))))
        a = b * rng.uniform(0.2, 0.8)
        theta = float(rng.uniform(1e-4, 1 - 1e-4))
        m0, m1, m2 = integrand_bounds(a, a, b, b, (theta, theta, 0.0, 0.0), (1 - theta, 1 - theta, 0.0, 0.0))
        jet = jet_box(a, a, b, b, theta, theta, 1 - theta, 1 - theta)
        e_lo, e_hi = jet[0], jet[1]
        e = max(abs(e_lo), abs(e_hi))
        assert m0 >= 0.5 * min(abs(e_lo), abs(e_hi)) ** 2
        assert m0 <= 0.5 * e * e * (1 + 1e-6) + 1e-300
