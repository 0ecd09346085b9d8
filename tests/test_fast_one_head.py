"""The fast one-head enclosures (stumpcheck.numerics.certified.fast.one_head) against Arb.

At random points and boxes across the hazards of docs/model.md §8 (θ near 0 and near 1 down to 10⁻³⁰⁰,
the switch layer θ* ≈ 1 − O(b⁻³) on the calibration relation and elsewhere, b from 0.1 to 10⁶, a from
−50 to 10⁶), the fast enclosures of e, ∂e/∂a, ∂e/∂b over the box must contain the 128-bit Arb ball of
:func:`stumpcheck.numerics.certified.enclosures.one_head_arb.one_head_jet` at a point of the box (a
corner or a random interior point): 0 misses. The default suite runs 2·10⁴ cases, the slow one 10⁵.
Widths: at points away from the hazards the enclosures are within 10⁻¹² relative, so a layer that
returned the whole line could not pass.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from flint import arb, ctx

from stumpcheck.numerics.certified.enclosures.one_head_arb import exp_a, one_head_jet
from stumpcheck.numerics.certified.fast import error_gradient_enclosure, jet_boxes
from stumpcheck.numerics.generated.asymptotics_numpy import calibration_a
from stumpcheck.numerics.population.one_head_float64 import switch_point

SEED = 26
PREC = 128


def _complement(x: float) -> float:
    return 1.0 - x


def _sample(rng: np.random.Generator, n: int, boxes: bool):
    """(boxes (n, 8), points (n, 3) = a, b, x, upper (n,)) with x the point's θ (upper False) or u = 1 − θ."""
    b = 10.0 ** rng.uniform(-1, 6, n)
    kind = rng.integers(0, 4, n)
    a = np.select([kind == 0, kind == 1, kind == 2],
                  [calibration_a(b) + rng.normal(0, 1, n) * 10.0 ** rng.uniform(-6, 1, n),
                   rng.uniform(-50, 1e6, n), rng.uniform(-50, 50, n)],
                  b + rng.uniform(-20, 40, n))
    a = np.clip(a, -50.0, 1e6)
    where = rng.integers(0, 4, n)
    x = np.empty(n)
    upper = np.empty(n, dtype=bool)
    for i in range(n):
        if where[i] == 0:  # anywhere
            t = rng.uniform(0, 1)
            upper[i], x[i] = (t >= 0.5), (1.0 - t if t >= 0.5 else t)
        elif where[i] == 1:  # near θ = 0
            upper[i], x[i] = False, 10.0 ** rng.uniform(-300, -1)
        elif where[i] == 2:  # near θ = 1
            upper[i], x[i] = True, 10.0 ** rng.uniform(-300, -1)
        else:  # the switch layer, within a few widths
            theta_s, rest_s, width = switch_point(a[i], b[i])
            if rest_s <= theta_s:
                upper[i], centre = True, rest_s
            else:
                upper[i], centre = False, theta_s
            if not (centre > 0 and math.isfinite(centre)):
                centre, width = 1e-300, 1e-300
            x[i] = centre + width * rng.uniform(-8, 8)
            if not x[i] > 0:
                x[i] = centre * rng.uniform(0.01, 1)
        x[i] = min(max(x[i], 5e-324), np.nextafter(1.0, 0.0))
    out = np.empty((n, 8))
    point = np.empty((n, 3))
    for i in range(n):
        if boxes:
            aw = max(abs(a[i]), 1.0) * 10.0 ** rng.uniform(-16, -3)
            bw = b[i] * 10.0 ** rng.uniform(-16, -3)
            xw = x[i] * 10.0 ** rng.uniform(-16, 0)
            alo, ahi = a[i], min(a[i] + aw, 1e6)
            blo, bhi = b[i], b[i] + bw
            xlo, xhi = x[i], min(x[i] + xw, np.nextafter(1.0, 0.0))
        else:
            alo = ahi = a[i]
            blo = bhi = b[i]
            xlo = xhi = x[i]
        f = rng.choice([0.0, 1.0, rng.uniform()], 3)
        point[i] = [min(max(lo + fi * (hi - lo), lo), hi) for lo, hi, fi in ((alo, ahi, f[0]), (blo, bhi, f[1]),
                                                                             (xlo, xhi, f[2]))]
        clo, chi = _complement_enclosure(xlo, xhi)
        if upper[i]:
            out[i] = [alo, ahi, blo, bhi, clo, chi, xlo, xhi]
        else:
            out[i] = [alo, ahi, blo, bhi, xlo, xhi, clo, chi]
    return out, point, upper


def _complement_enclosure(lo: float, hi: float) -> tuple[float, float]:
    from stumpcheck.numerics.certified.fast.one_head import complement

    return complement(lo, hi)


def _arb_jet(a: float, b: float, x: float, upper: bool):
    with ctx.workprec(1200):
        other = 1 - arb(x)  # exact: x is a double ≥ 2⁻¹⁰⁷⁴
    with ctx.workprec(PREC):
        a_ball, b_ball = arb(a), arb(b)
        theta, rest = (other, arb(x)) if upper else (arb(x), other)
        return one_head_jet(b_ball, exp_a(a_ball, b_ball), theta, rest, False, upper)


def _misses(enclosures: np.ndarray, points: np.ndarray, upper: np.ndarray) -> tuple[int, list]:
    misses, examples = 0, []
    for row, (a, b, x), up in zip(enclosures, points, upper):
        balls = _arb_jet(float(a), float(b), float(x), bool(up))
        for k, ball in enumerate(balls):
            lo, hi = row[2 * k], row[2 * k + 1]
            if not (ball.is_finite() and (lo == -math.inf or arb(lo) <= ball.lower())
                    and (hi == math.inf or ball.upper() <= arb(hi))):
                misses += 1
                if len(examples) < 5:
                    examples.append((k, float(a), float(b), float(x), bool(up), lo, hi, ball.str(20)))
    return misses, examples


def _run(n: int, seed: int) -> tuple[int, list, np.ndarray]:
    rng = np.random.default_rng(seed)
    total, examples, all_enclosures = 0, [], []
    for boxes in (False, True):
        cases, points, upper = _sample(rng, n // 2, boxes)
        enclosures = jet_boxes(cases)
        assert not np.isnan(enclosures).any()
        misses, found = _misses(enclosures, points, upper)
        total += misses
        examples += found
        all_enclosures.append(enclosures)
    return total, examples, np.concatenate(all_enclosures)


def test_fast_jet_contains_arb_at_20000_points_and_boxes():
    misses, examples, enclosures = _run(20_000, SEED)
    assert misses == 0, examples
    # not vacuous: almost all enclosures are finite
    assert np.isfinite(enclosures).mean() > 0.99


@pytest.mark.slow
def test_fast_jet_contains_arb_at_100000_points_and_boxes():
    misses, examples, _ = _run(100_000, SEED + 1)
    assert misses == 0, examples


def test_point_enclosures_are_narrow_away_from_the_hazards():
    """θ ∈ [0.02, 0.98], b ∈ [0.5, 10³], a within 10 of the calibration relation or in [−5, 30]: the
    widths of ∂e/∂a and ∂e/∂b are ≤ 10⁻¹² of the value, and that of e ≤ 10⁻¹² of max(|e|, 10⁻³·θ)
    (e crosses 0 at the switch, where only an absolute width means something). Values below 10⁻²⁵⁰
    are not compared: a weight below e^{−600} is enclosed as [0, 2⁻⁸⁶⁵] (module docstring)."""
    rng = np.random.default_rng(SEED + 2)
    worst = [0.0, 0.0, 0.0]
    compared = 0
    for _ in range(3000):
        b = float(10.0 ** rng.uniform(math.log10(0.5), 3))
        a = float(calibration_a(b) + rng.uniform(-10, 10) if rng.uniform() < 0.5 else rng.uniform(-5, 30))
        theta = float(rng.uniform(0.02, 0.98))
        found = error_gradient_enclosure(a, b, theta)
        mids = found.mean(axis=1)
        scales = [max(abs(mids[0]), 1e-3 * theta), abs(mids[1]), abs(mids[2])]
        for k in range(3):
            if scales[k] > 1e-250:
                worst[k] = max(worst[k], (found[k, 1] - found[k, 0]) / scales[k])
                compared += 1
    assert compared > 8000
    assert max(worst) <= 1e-12, worst


def test_box_enclosures_shrink_with_the_box():
    """Over boxes of relative size 10⁻ᵏ about a point the widths fall about in proportion (first order)."""
    a, b, theta = 14.0, 10.0, 0.4
    widths = []
    for k in (2, 4, 6, 8):
        h = 10.0 ** -k
        found = error_gradient_enclosure((a, a * (1 + h)), (b, b * (1 + h)), (theta, theta * (1 + h)))
        widths.append(found[:, 1] - found[:, 0])
    for coarse, fine in zip(widths, widths[1:]):
        assert np.all(fine <= coarse * 0.05)


def test_the_containment_check_detects_collapsed_enclosures():
    """Negative control: the same check on the enclosures collapsed to their midpoints finds misses
    (most such points miss the exact value, which Arb's narrow ball pins down)."""
    rng = np.random.default_rng(SEED + 3)
    cases, points, upper = _sample(rng, 400, False)
    enclosures = jet_boxes(cases)
    mids = (enclosures[:, 0::2] + enclosures[:, 1::2]) / 2
    narrowed = enclosures.copy()
    narrowed[:, 0::2] = mids
    narrowed[:, 1::2] = mids
    misses, _ = _misses(narrowed, points, upper)
    assert misses > 300
