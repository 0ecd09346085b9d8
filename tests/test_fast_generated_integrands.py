"""The generated θ-integrands in float64 intervals (fast.generated_integrands, fast.truncated_exponential)
against Arb.

Containment: over random boxes (b, the other variable, θ) drawn across the model's hazards (θ near 0 and
near 1 by its distance u = 1 − θ down to 10⁻¹⁸, the breakpoint pieces of the switch layer, b from 1 to 10⁶),
the fast enclosure of every output of every ``integrands_m`` of the Taylor forms of the two θ-integral
lemmas and of the region's two margins contains the Arb ball at a random point of the box (and, at θ-boxes
of zero width, at the box itself): 0 misses. The fast test draws 2 000 boxes; the slow one (``-m slow``)
10⁵. Λ, κ₁ … κ₄ over rate ranges likewise. Widths are measured too (a layer returning the whole line
would contain everything): the θ-integrals by first-order sums are within a few per cent of Arb's.
"""

from __future__ import annotations

import json
import math
from functools import cache

import numpy as np
import pytest
from flint import arb, ctx

from stumpcheck.numerics.certified.fast.generated_integrands import (Unsupported, compile_integrand,
                                                                     first_order_integrals, translate)
from stumpcheck.numerics.certified.fast.theta_integrals import split_pieces
from stumpcheck.numerics.certified.fast.truncated_exponential import truncated_exponential_jet
from stumpcheck.numerics.certified.proofs.margin_taylor import STORED_FORMS
from stumpcheck.numerics.generated import population_arb as gen


@cache
def _forms() -> list:
    """(source, variables, order, namespace) of the lemmas' stored forms and the region's two margins."""
    from stumpcheck.numerics.certified.proofs.margins import _namespace
    from stumpcheck.numerics.certified.region.invariant_region import DEFAULT_REGION, obligations
    from stumpcheck.theory.taylor_codegen import taylor_source

    out = []
    for form in json.loads(STORED_FORMS.read_text(encoding="utf-8"))["forms"].values():
        out.append((form["source"], tuple(form["inputs"]["variables"]), form["order"]))
    stated = obligations(DEFAULT_REGION)
    for name in ("inward_upper", "drift_lower_half"):
        margin = stated[name][1]
        form = taylor_source(margin.source["sympy_srepr"], "scaled", ("b", "w"), "b", 2, "one-head")
        out.append((form["source"], ("b", "w"), form["order"]))
    result = []
    for source, variables, order in out:
        namespace = _namespace()
        exec(source, namespace)  # noqa: S102 - printed from SymPy
        result.append((source, variables, order, namespace))
    return result


def _calibration(b: float) -> float:
    return b + 2 * math.log(b)


def _draw_box(rng, variables):
    """(intervals of the variables, (θ lo, hi), (u lo, hi), a point (values, θ as an exact arb))."""
    b = 10 ** rng.uniform(0, 6)
    rel = 10 ** rng.uniform(-9, -2) if rng.random() < 0.8 else 0.0
    b_lo, b_hi = b, b * (1 + rel)
    other = rng.uniform(-0.6, 0.6) if variables[1] == "w" else rng.uniform(-1, 1) / b * (rng.random() < 0.7)
    width = abs(other) * 10 ** rng.uniform(-6, -1) * (rng.random() < 0.7)
    o_lo, o_hi = other, other + width
    thetas, rests = split_pieces(_calibration(b), b)
    choice = rng.random()
    upper = rng.random() < 0.5
    if choice < 0.6:  # a breakpoint piece (the layers), or a part of it
        points = rests if upper else thetas
        k = rng.integers(0, points.size - 1)
        p0, p1 = float(points[k]), float(points[k + 1])
        if rng.random() < 0.5:
            s, t = sorted(rng.uniform(size=2))
            p0, p1 = p0 + (p1 - p0) * s, p0 + (p1 - p0) * t
    else:  # θ or u from 10⁻¹⁸ to ½, log-uniform
        p0 = 10 ** rng.uniform(-18, math.log10(0.5))
        p1 = min(0.5, p0 * (1 + 10 ** rng.uniform(-6, 0)))
    if rng.random() < 0.1:
        p1 = p0
    x = p0 + (p1 - p0) * rng.random()
    x = min(max(x, p0), p1)
    if upper:
        u = (p0, p1)
        theta = (max(math.nextafter(1 - p1, 0), 0.0), min(math.nextafter(1 - p0, 2), 1.0))
        with ctx.workprec(256):  # exact: 1 − x for a double x ≥ 10⁻¹⁸ needs about 120 bits
            theta_point = arb(1) - arb(x)
        assert theta_point.rad() == 0
    else:
        theta = (p0, p1)
        u = (max(math.nextafter(1 - p1, 0), 0.0), min(math.nextafter(1 - p0, 2), 1.0))
        theta_point = arb(x)
    point_b = b_lo + (b_hi - b_lo) * rng.random()
    point_o = o_lo + (o_hi - o_lo) * rng.random()
    return [(b_lo, b_hi), (o_lo, o_hi)], theta, u, (point_b, point_o, theta_point)


def _kernel_values(compiled_integrate, intervals, theta, u):
    """The kernel's enclosure over one θ-box: the integral over the piece [θ lo, θ hi] would multiply by its
    width, so the kernel is read through a one-piece tiling of width 1 (θ and u given directly)."""
    from stumpcheck.numerics.certified.fast import generated_integrands as gi

    return gi.kernel_box(compiled_integrate, intervals, theta, u)


def _containment(count: int, seed: int) -> tuple[int, int]:
    rng = np.random.default_rng(seed)
    forms = _forms()
    misses = checked = 0
    for k in range(count):
        source, variables, order, namespace = forms[k % len(forms)]
        m = int(rng.integers(0, order + 1))
        compiled = compile_integrand(source, f"integrands_{m}", variables)
        intervals, theta, u, (pb, po, pt) = _draw_box(rng, variables)
        got = _kernel_values(compiled, intervals, theta, u)
        with ctx.workprec(128):
            want = namespace[f"integrands_{m}"](arb(pb), arb(po), pt)
        for j, value in enumerate(want):
            value = value.real
            if not value.is_finite():
                continue
            checked += 1
            lo, hi = got[j]
            if not (arb(lo) <= value and value <= arb(hi)):
                misses += 1
    return misses, checked


def test_the_translated_integrands_contain_arb_at_random_points_of_random_boxes():
    misses, checked = _containment(2_000, seed=1)
    assert checked >= 2_000 and misses == 0


@pytest.mark.slow
def test_the_translated_integrands_contain_arb_at_a_hundred_thousand_boxes():
    misses, checked = _containment(100_000, seed=2)
    assert checked >= 100_000 and misses == 0


def _jet_containment(count: int, seed: int) -> tuple[int, int]:
    rng = np.random.default_rng(seed)
    misses = checked = 0
    for _ in range(count):
        beta = 10 ** rng.uniform(-14, 6.3)
        lo, hi = beta, beta * (1 + (10 ** rng.uniform(-12, 0) if rng.random() < 0.8 else 0.0))
        got = truncated_exponential_jet(lo, hi, 4)
        x = lo + (hi - lo) * rng.random()
        with ctx.workprec(160):
            want = gen.trunc_exp_jet(arb(x), 4)
        for k in range(5):
            value = want[k].real
            if not value.is_finite():
                continue
            checked += 1
            if not (arb(got[2 * k]) <= value and value <= arb(got[2 * k + 1])):
                misses += 1
    return misses, checked


def test_the_rate_ranges_contain_arb():
    misses, checked = _jet_containment(3_000, seed=3)
    assert checked > 14_000 and misses == 0


@pytest.mark.slow
def test_the_rate_ranges_contain_arb_at_a_hundred_thousand_ranges():
    misses, checked = _jet_containment(100_000, seed=4)
    assert checked > 450_000 and misses == 0


def test_the_rates_are_tight_at_a_point():
    for beta in (1e-9, 0.3, 1.9, 2.0, 2.1, 40.0, 700.0):
        got = truncated_exponential_jet(beta, beta, 4)
        with ctx.workprec(160):
            want = gen.trunc_exp_jet(arb(beta), 4)
        for k in range(1, 5):
            value = float(want[k].real.mid())
            width = got[2 * k + 1] - got[2 * k]
            assert width <= 1e-11 * abs(value) + 1e-20, (beta, k, width, value)  # the series tails: < 1e-20


@pytest.mark.parametrize("b", [30.0, 3000.0])
def test_first_order_integrals_contain_and_are_near_arbs(b):
    from stumpcheck.numerics.certified.proofs import margin_taylor as mt

    source, variables, order, namespace = _forms()[0]
    thetas, rests = split_pieces(_calibration(b), b)
    for m in range(order + 1):
        compiled = compile_integrand(source, f"integrands_{m}", variables)
        out, evaluations = first_order_integrals(compiled, [(b, b * (1 + 1e-3)), (0.0, 0.0)], thetas, rests)
        assert evaluations > 0
        with ctx.workprec(80):
            ball = arb(b).union(arb(b * (1 + 1e-3)))
            want = mt._q_values({"namespace": namespace, "integral_names": [[None, None]] * (order + 1)}, m,
                                [ball, arb(0)], mt._pieces(_calibration(b), b, "one-head"), 10)
        for (lo, hi), value in zip(out, want):
            assert lo <= float(value.mid()) <= hi
            assert hi - lo <= 4 * float(2 * value.rad()) + 0.05 * abs(float(value.mid()))


def test_unsupported_code_is_refused_not_guessed():
    source = "def integrands_0(b, lam, theta, analytic=False):\n    b, lam, theta = acb(b), acb(lam), acb(theta)\n" \
             "    return (_exp(b),)\n"
    with pytest.raises(Unsupported):
        translate(source, "integrands_0", ("b", "lam"))
    rate = source.replace("_exp(b)", "trunc_exp_jet(b*lam, 1, analytic)[0]")
    with pytest.raises(Unsupported):
        translate(rate, "integrands_0", ("b", "lam"))
    power = source.replace("_exp(b)", "b**(acb(1)/2)")
    with pytest.raises(Unsupported):
        translate(power, "integrands_0", ("b", "lam"))
