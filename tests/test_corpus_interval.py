"""Unit tests of the corpus interval (stumpcheck.numerics.corpus.interval, docs/corpus_interval.md).

* the grid: column widths 2^{k−6} in [2ᵏ, 2ᵏ⁺¹), :func:`column_after`, :func:`columns` tiling, :func:`on_grid`;
* the centre: nodes every 8 columns, exact doubles with dyadic slopes, fitted near the corpus's attracting
  λ-nullcline, and its piecewise linear value (through a recorded centre too);
* the step bound on a hand example (exact counts);
* the obligations' mean-value bounds against float64 values of the same quantities
  (:func:`~stumpcheck.numerics.corpus.empirical.loss_and_gradient`) at random points of boxes, also
  where a margin is negative (a larger step), so the bounds, not only their signs, are tested;
* the Arb point values (:mod:`~stumpcheck.numerics.certified.enclosures.corpus_arb`) against float64
  and inside the fast layer's point enclosures.

Allowance for the float64 reference: its values are sums of m·n = 1024 terms, within ~10⁻¹⁴ relative of
the exact ones (measured against Arb below: ≤ 3·10⁻¹⁴); comparisons with a rigorous bound allow
:data:`REL` of the quantity's scale, below every margin tested by orders of magnitude.
"""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
import pytest

from stumpcheck.numerics.certified.enclosures.corpus_arb import corpus_gradient_arb
from stumpcheck.numerics.certified.fast.corpus import corpus_enclosure
from stumpcheck.numerics.corpus.corpora import make_corpus
from stumpcheck.numerics.corpus.empirical import loss_and_gradient
from stumpcheck.numerics.corpus.interval.centre import (NODE_COLUMNS, SLOPE_GRAIN, Centre, column_after,
                                                        column_width, columns, corpus_point, eta_half_curvature,
                                                        fit_node, on_grid)
from stumpcheck.numerics.corpus.interval.obligations import certainly_false, enclosures, evaluate_box, to_interval
from stumpcheck.numerics.corpus.interval.prover import START_HEIGHT, step_bound
from stumpcheck.numerics.generated.asymptotics_numpy import RHO1, calibration_a

F = Fraction
BAND = (F(1, 20), F(1, 2))          # the CLI's default --c 0.05,0.5
REL = 1e-12                         # allowance of the float64 reference (module docstring)


@pytest.fixture(scope="module")
def corpus():
    return make_corpus(32, 32, seed=1)


@pytest.fixture(scope="module")
def centre(corpus):
    c = Centre(corpus.x, corpus.theta, F(8))
    c.extend_to(F(24))
    return c


@pytest.fixture(scope="module")
def eta(corpus, centre):
    return eta_half_curvature(corpus.x, corpus.theta, centre, *BAND)


# ---------------------------------------------------------------- the grid

@pytest.mark.parametrize("b, width", [(F(8), F(1, 8)), (F(15), F(1, 8)), (F(127, 8), F(1, 8)), (F(16), F(1, 4)),
                                      (F(1), F(1, 64)), (F(3, 4), F(1, 128)), (F(1000), F(8)), (F(1024), F(16))])
def test_column_width_is_one_64th_of_the_octave(b, width):
    assert column_width(b) == width


def test_column_after_exact():
    assert column_after(F(8)) == F(65, 8)
    assert column_after(F(127, 8)) == F(16)          # the last column of an octave ends at its top
    assert column_after(F(16)) == F(65, 4)           # the next octave's columns are twice as wide
    assert column_after(F(8) + F(1, 16)) == F(65, 8)  # off the grid: rounded up to it
    assert column_after(F(1, 2)) == F(1, 2) + F(1, 128)


def test_columns_tile_exactly():
    cols = columns(F(8), F(16))
    assert len(cols) == 64 and cols[0] == (F(8), F(65, 8)) and cols[-1] == (F(127, 8), F(16))
    assert all(hi - lo == F(1, 8) for lo, hi in cols)
    cols = columns(F(15), F(17))
    assert len(cols) == 8 + 4
    assert [hi - lo for lo, hi in cols] == [F(1, 8)] * 8 + [F(1, 4)] * 4
    assert cols[0][0] == 15 and cols[-1][1] == 17
    assert all(cols[k][1] == cols[k + 1][0] for k in range(len(cols) - 1))   # contiguous, no gap or overlap
    assert all(F(float(b)) == b for lo, hi in cols for b in (lo, hi))       # every end is an exact double
    assert columns(F(8), F(8)) == []


@pytest.mark.parametrize("b, expected", [(F(8), True), (F(65, 8), True), (F(16), True), (F(65, 4), True),
                                         (F(33, 2), True), (F(8) + F(1, 16), False), (F(16) + F(1, 8), False),
                                         (F(0), False), (F(1, 3), False)])
def test_on_grid(b, expected):
    assert on_grid(b) is expected


# ---------------------------------------------------------------- the centre

def test_centre_nodes_every_eight_columns(centre):
    bs = [b for b, _ in centre.nodes]
    assert NODE_COLUMNS == 8
    assert bs[:13] == [F(8), F(9), F(10), F(11), F(12), F(13), F(14), F(15), F(16), F(18), F(20), F(22), F(24)]
    assert all(on_grid(b) for b in bs)


def test_centre_nodes_are_exact_doubles_with_dyadic_slopes(centre):
    for i, (b, a) in enumerate(centre.nodes):
        s = centre.slope(i)
        assert F(float(a)) == a and F(float(b)) == b
        assert a.denominator <= 2 ** 20                       # A_i a multiple of 2^-20
        assert (s / SLOPE_GRAIN).denominator == 1             # s_i a multiple of 2^-20
        intercept = a - s * b
        assert F(float(s)) == s and F(float(intercept)) == intercept
    for (b0, a0), (b1, a1) in zip(centre.nodes, centre.nodes[1:]):
        assert a1 == a0 + centre.slope(centre.nodes.index((b0, a0))) * (b1 - b0)


def _field(corpus, b: float, lam: float) -> float:
    """dλ/dt = −∂L̂/∂a + c′(b)·∂L̂/∂b at a = calibration_a(b) + λ, in float64 (the centre module's formula)."""
    slope = 1.0 + 2.0 / b + RHO1 / b ** 2
    _, g = loss_and_gradient(corpus.x, corpus.theta, float(calibration_a(b)) + lam, b)
    return float(-g[0] + slope * g[1])


def test_fit_node_is_an_attracting_root_of_the_corpus_field(corpus):
    offset, found = fit_node(corpus.x, corpus.theta, 8.0, 0.0)
    assert found
    assert _field(corpus, 8.0, offset - 0.01) > 0 > _field(corpus, 8.0, offset + 0.01)
    assert abs(_field(corpus, 8.0, offset)) < 1e-3 * abs(_field(corpus, 8.0, offset - 0.01))


def test_centre_nodes_follow_the_fitted_offsets(corpus, centre):
    """A_{i+1} = A_i + s_i·(b_{i+1} − b_i), s_i the multiple of 2^-20 nearest the slope to the fitted target
    calibration_a(b_{i+1}) + offset_{i+1} (offsets chained from the previous node): within (b_{i+1} − b_i)·2^-21."""
    offset, _ = fit_node(corpus.x, corpus.theta, 8.0, 0.0)
    assert abs(centre.nodes[0][1] - (F(float(calibration_a(8.0))) + F(offset))) <= F(1, 2 ** 20)
    for (b0, _), (b1, a1) in zip(centre.nodes, centre.nodes[1:]):
        offset, _ = fit_node(corpus.x, corpus.theta, float(b1), offset)
        target = F(float(calibration_a(float(b1))) + offset)
        assert abs(a1 - target) <= (b1 - b0) * SLOPE_GRAIN / 2


def test_centre_value_is_piecewise_linear(centre):
    nodes = centre.nodes
    for (b0, a0), (b1, a1) in zip(nodes, nodes[1:]):
        assert centre.value(b0) == a0
        assert centre.value((b0 + b1) / 2) == (a0 + a1) / 2
        assert centre.value(b0 + (b1 - b0) / 3) == a0 + (a1 - a0) / 3
        assert centre.piece(b0 + (b1 - b0) / 3) == (b0, a0, (a1 - a0) / (b1 - b0))
    recorded = Centre.from_nodes([(F(8), F(10)), (F(9), F(23, 2)), (F(10), F(12))])
    assert recorded.value(F(17, 2)) == F(43, 4)
    assert recorded.value(F(10)) == 12
    assert recorded.value(F(11)) == F(25, 2)              # beyond the last node: the last slope, 1/2
    assert recorded.slopes_over(F(8), F(9)) == (F(1, 2), F(3, 2))
    assert recorded.slopes_over(F(33, 4), F(35, 4)) == (F(3, 2), F(3, 2))
    assert recorded.slopes_over(F(19, 2), F(20)) == (F(1, 2), F(1, 2))


def test_a_recorded_centre_has_the_fitted_values(centre):
    recorded = Centre.from_nodes(centre.nodes)
    for b in (F(8), F(81, 10), F(9), F(1234, 100), F(16), F(23)):
        assert recorded.value(b) == centre.value(b)


def test_eta_half_curvature(corpus, centre, eta):
    """η ≤ ½ / the largest Hessian eigenvalue at the 27 sample points, two significant digits, rounded down."""
    worst = 0.0
    for k in range(9):
        b = F(8) * (1 + F(k, 8))
        for mu in (-BAND[0], F(0), BAND[1]):
            _, _, haa, hab, hbb = corpus_point(corpus.x, corpus.theta, float(centre.value(b) + mu), float(b))
            worst = max(worst, float(np.linalg.eigvalsh(np.array([[haa, hab], [hab, hbb]]))[-1]))
    assert 0.9 * 0.5 / worst < eta <= 0.5 / worst
    digits = eta / F(10) ** (math.floor(math.log10(eta)) - 1)
    assert digits.denominator == 1 and 10 <= digits < 100


# ---------------------------------------------------------------- the step bound

def test_step_bound_hand_example():
    """Ends {0, 1, 2, 3}; κ = ½ on [0, 1], min(¼, ⅛) on [1, 2], ¼ on [2, 3]; count ⌊len/(η κ)⌋ + 1."""
    leaves = [(F(0), F(1), F(1, 2)), (F(1), F(3), F(1, 4)), (F(1), F(2), F(1, 8))]
    total, rows = step_bound(leaves, F(1))
    assert rows == [(0, 1, F(1, 2), 3), (1, 2, F(1, 8), 9), (2, 3, F(1, 4), 5)] and total == 17
    total, rows = step_bound(leaves, F(2))
    assert [r[3] for r in rows] == [2, 5, 3] and total == 10
    total, _ = step_bound(leaves, F(3))     # ⌊2/3⌋ + 1, ⌊8/3⌋ + 1, ⌊4/3⌋ + 1
    assert total == 1 + 3 + 2
    with pytest.raises(ValueError, match="drift <= 0"):
        step_bound([(F(0), F(1), F(0))], F(1))


# ---------------------------------------------------------------- the obligations against float64

def _boxes():
    """(b0, b1, μ0, μ1): the prover's start boxes of three columns (one ending at the node b = 9), and small
    boxes of the first column."""
    out = []
    for b0 in (F(8), F(71, 8), F(12)):
        b1 = column_after(b0)
        count = math.ceil((BAND[0] + BAND[1]) / START_HEIGHT)
        h = (BAND[0] + BAND[1]) / count
        out += [(b0, b1, -BAND[0] + k * h, -BAND[0] + (k + 1) * h) for k in range(count)]
    out += [(F(8), F(8) + F(1, 32), F(0), F(1, 64)), (F(8), F(8) + F(1, 64), F(1, 2) - F(1, 32), F(1, 2))]
    return out


def _points(box, rng, count):
    """Exact (b, μ) strictly inside the box (1 %–99 % of each side), b a double."""
    b0, b1, mu0, mu1 = box
    out = []
    for _ in range(count):
        u, v = rng.uniform(0.01, 0.99, size=2)
        out.append((F(float(b0 + (b1 - b0) * F(u))), mu0 + (mu1 - mu0) * F(v)))
    return out


@pytest.mark.parametrize("scale", [1, 20])
def test_margins_bound_the_float64_values(corpus, centre, eta, scale):
    """At random points of each box: drift ≤ −L̂_b ≤ drift_upper, inward ≤ ±(L̂_a − s·L̂_b) on an edge box,
    gd ≤ the distance of the GD image μ′ = a′ − A(b′) to the band's edges; with the rule's η (all proved)
    and 20·η (the GD margin negative at the lower columns: the bound itself is tested)."""
    step = eta * scale
    rng = np.random.default_rng(2401 + scale)
    proved = negative_gd = 0
    for box in _boxes():
        piece = centre.piece(box[0])
        b_i, a_i, s = piece
        G, P = enclosures(corpus.x, corpus.theta, piece, box)
        res = evaluate_box(G, P, piece, box, BAND, step, centre.slopes_over)
        proved += res.proved
        negative_gd += res.gd < 0
        for b, mu in _points(box, rng, 24):
            a = float(a_i + s * (b - b_i) + mu)
            loss, (ga, gb) = loss_and_gradient(corpus.x, corpus.theta, a, float(b))
            for k, v in enumerate((loss, ga, gb)):
                lo, hi = G[k]
                assert lo - REL * abs(lo) <= v <= hi + REL * abs(hi), (box, k)
            tol = REL * abs(gb)
            assert float(res.drift) <= -gb + tol and -gb - tol <= float(res.drift_upper)
            g = ga - float(s) * gb
            tol = REL * (abs(ga) + abs(float(s) * gb))
            if box[3] == BAND[1]:
                assert float(res.inward) <= g + tol
            if box[2] == -BAND[0]:
                assert float(res.inward) <= -g + tol
            a2, b2 = a - float(step) * ga, float(b) - float(step) * gb
            assert b2 >= float(b)
            mu2 = a2 - float(centre.value(F(b2)))
            distance = min(float(BAND[1]) - mu2, mu2 + float(BAND[0]))
            assert float(res.gd) <= distance + REL * abs(a2), (box, b, mu, float(res.gd), distance)
            if res.gd > 0:
                assert -BAND[0] <= mu2 <= BAND[1]
    if scale == 1:     # the rule's step: every GD margin positive; the boxes on the lower edge wait for bisection
        assert negative_gd == 0 and proved >= 10
    else:              # 20·η: the bounds are tested where they are negative
        assert negative_gd >= 10


def test_certainly_false_at_a_huge_step(corpus, centre):
    """η = 10⁶: the GD image of the column's centre point surely leaves the band; float64 agrees, and the
    reported upper bound of the margin is ≥ the float64 distance."""
    step = F(10 ** 6)
    b, mu = F(8) + F(1, 256), F(1, 10)
    piece = centre.piece(b)
    b_i, a_i, s = piece
    a = a_i + s * (b - b_i) + mu
    P = corpus_enclosure(corpus.x, corpus.theta, to_interval(a), to_interval(b)).tolist()
    out = certainly_false(P, piece, (b, mu), BAND, step, centre.slopes_over)
    assert out is not None and out["obligation"] == "gd" and out["margin_upper"] < 0
    _, (ga, gb) = loss_and_gradient(corpus.x, corpus.theta, float(a), float(b))
    a2, b2 = float(a) - 1e6 * ga, float(b) - 1e6 * gb
    mu2 = a2 - float(centre.value(F(b2)))
    distance = min(float(BAND[1]) - mu2, mu2 + float(BAND[0]))
    assert distance < 0 and distance <= out["margin_upper"] + 1e-9 * abs(a2)


# ---------------------------------------------------------------- Arb point values

@pytest.mark.parametrize("b", [1.5, 8.0, 30.0, 500.0])
@pytest.mark.parametrize("offset", [-3.0, -0.3, 0.5])
def test_corpus_arb_agrees_with_float64(corpus, b, offset):
    a = float(calibration_a(b)) + offset
    values = corpus_gradient_arb(corpus.x, corpus.theta, a, b)
    loss, (ga, gb) = loss_and_gradient(corpus.x, corpus.theta, a, b)
    for ball, v in zip(values, (loss, ga, gb)):
        mid = float(ball.mid())
        assert abs(mid - v) <= 1e-12 * abs(mid)
        assert float(ball.rad()) <= 1e-30 * abs(mid)
    enc = corpus_enclosure(corpus.x, corpus.theta, a, b)
    for k, ball in enumerate(values):
        assert enc[k, 0] <= ball.lower() and ball.upper() <= enc[k, 1]


def test_corpus_arb_at_an_exact_rational(corpus):
    """A point that is not a pair of doubles (a = 12 + 1/3) is taken exactly: its balls differ from those at
    the nearest double, by about |∇L̂|·|a − fl(a)| (≤ 10⁻¹⁵ here, far below 10⁻¹³ relative)."""
    a, b = F(1, 3) + 12, F(8)
    exact = corpus_gradient_arb(corpus.x, corpus.theta, a, b)
    rounded = corpus_gradient_arb(corpus.x, corpus.theta, float(a), float(b))
    for e, r in zip(exact, rounded):
        assert abs(float(e.mid()) - float(r.mid())) <= 1e-13 * abs(float(r.mid()))
    assert any(not e.overlaps(r) for e, r in zip(exact, rounded))


def test_the_gd_margin_is_the_lower_end_of_the_smaller_ball():
    """Python's min of two overlapping balls returns the first (neither is certainly smaller); the margin must
    be the lower end of their minimum. A box whose GD image is exactly the band [−c₋, c₊] (all derivatives
    zero) with non-dyadic c₋ ≠ c₊: both candidates c₊ − max μ′ and min μ′ + c₋ are balls about 0 of different
    radii, and the recorded margin is the smaller lower end."""
    from flint import arb, ctx

    from stumpcheck.numerics.corpus.interval.obligations import PREC, _mv, ball, lower_fraction

    c_minus, c_plus = Fraction(3, 10), Fraction(1, 10)
    box = (Fraction(8), Fraction(65, 8), -c_minus, c_plus)
    zero = [0.0, 0.0]
    result = evaluate_box([zero] * 6, [zero] * 3, (Fraction(8), Fraction(0), Fraction(0)), box, (c_minus, c_plus),
                          Fraction(1), lambda lo, hi: (Fraction(0), Fraction(0)))
    with ctx.workprec(PREC):
        muc, bc = (box[2] + box[3]) / 2, (box[0] + box[1]) / 2
        dmu = ball(box[2] - muc).union(ball(box[3] - muc))
        db = ball(box[0] - bc).union(ball(box[1] - bc))
        image = _mv(ball(muc), arb(1), arb(0), dmu, db)  # [−c₋, c₊], widened by the union's radius rounding
        first = ball(c_plus) - arb(image.upper())
        second = arb(image.lower()) + ball(c_minus)
        assert not (first < second) and not (second < first)  # overlapping: Python's min cannot order them
        expected = min(lower_fraction(first), lower_fraction(second))
        python_min = lower_fraction(min(first, second))  # Python's min keeps the first: the larger lower end
        assert python_min > expected
    # at most the smaller lower end (arb.min's own ball may round it down a little further), never Python's
    assert result.gd <= expected < python_min and expected - result.gd < Fraction(1, 10 ** 30)
