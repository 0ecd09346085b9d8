"""The population model (docs/model.md §1, §2, §5, §8) against its definition.

θ̂∞ = E[x e^{s(x)}] / E[e^{s(x)}] with x ~ U[0, 1] is computed here by direct
mpmath quadrature of the defining integrals — segment by segment of the
piecewise-linear score, with the weight e^{s − max s} and breakpoint ladders
θ ± 2^j/b placed by this file (not by :mod:`stumpcheck.numerics.population.quadrature`) — and the
stable forms of :mod:`stumpcheck.theory.model` and the generated modules are checked
against it, against SymPy's closed forms, and against the model's symmetries.

Accuracy is measured against the scale the definition fixes: e = θ̂ − θ passes
through 0 as θ varies, so "digits of e" means digits relative to
E_w|x − θ| = (Σ_segments |∫(x − θ)w|) / ∫w, the size of the terms whose
balance e is (and, for the averaged estimator, the mean of the heads' scales).
"""

from __future__ import annotations

import math
from fractions import Fraction

import mpmath
import numpy as np
import pytest
import sympy as sp
from hypothesis import example, given, settings
from hypothesis import strategies as st

from stumpcheck.numerics.generated import population_mpmath as gen_mp
from stumpcheck.numerics.generated import population_numpy as gen_np
from stumpcheck.theory import model
from stumpcheck.theory.symbols import a as A
from stumpcheck.theory.symbols import b as B
from stumpcheck.theory.symbols import theta as THETA
from stumpcheck.theory.symbols import x as X
from tests.strategies import parameters, scales, thresholds

TAGS = {"one-head": "one_head", "reflected": "reflected", "averaged": "averaged", "pooled": "pooled"}

# ---------------------------------------------------------------------------
# Reference: direct quadrature of the defining integrals
# ---------------------------------------------------------------------------


def one_head_score(a, b):
    """s(x, y) = a·y − b·x (docs/model.md §2)."""
    return lambda x, y: a * y - b * x


def reflected_score(a, b):
    """s'(x, y) = a(1 − y) − b(1 − x) (docs/model.md §5)."""
    return lambda x, y: a * (1 - y) - b * (1 - x)


def pm_one_score(a, b):
    """The {−1, +1} label encoding ỹ = 2y − 1: s = a·ỹ − b·x."""
    return lambda x, y: a * (2 * y - 1) - b * x


def _exact(value):
    """An mpf equal to ``value``: floats convert exactly, an mpf is kept as it is
    (``mpmath.mpf(v)`` would round an mpf to the working precision)."""
    return value if isinstance(value, mpmath.mpf) else mpmath.mpf(value)


def _linear_pieces(score, theta):
    """[(lo, hi, intercept, slope)] of x ↦ score(x, 1{x ≥ θ}) on [0, θ] and [θ, 1]."""
    out = []
    for lo, hi, label in ((mpmath.mpf(0), theta, 0), (theta, mpmath.mpf(1), 1)):
        if hi > lo:
            intercept = score(mpmath.mpf(0), label)
            out.append((lo, hi, intercept, score(mpmath.mpf(1), label) - intercept))
    return out


def _ladder(rate):
    """Breakpoints of [0, 1] for a weight e^{rate·t}: 2^j/|rate| from its peaked end."""
    points = {mpmath.mpf(0), mpmath.mpf(1)}
    if abs(rate) > 4:
        peak = 0 if rate < 0 else 1
        step = 1 / abs(rate)
        while step < 1:
            points.add(abs(peak - step))
            step *= 2
    return sorted(points)


def _segment_integrals(lo, hi, intercept, slope, theta, dps):
    """(log of the factor, ∫₀¹ e^{βt − max}, ∫₀¹ (x(t) − θ)/L · e^{βt − max}) with x = lo + L·t.

    ∫_lo^hi e^{α + sx} dx = L e^{α + s·lo + max(β, 0)} ∫₀¹ e^{βt − max(β, 0)} dt, β = sL:
    every integral handed to mpmath.quad is of order one (its convergence test is
    absolute, so a tiny integrand would be accepted too early).
    """
    length = hi - lo
    rate = slope * length
    top = max(rate, 0)
    points = _ladder(rate)

    def weight(t):
        return mpmath.exp(rate * t - top)

    base = (lo - theta) / length  # (x − θ)/L = base + t, with base ∈ {−1, 0} here
    m, m_err = mpmath.quad(weight, points, method="gauss-legendre", error=True)
    o, o_err = mpmath.quad(lambda t: (base + t) * weight(t), points, method="gauss-legendre", error=True)
    # the reference must itself be right: quadrature error far below 30 digits
    assert m_err <= mpmath.mpf(10) ** (-dps + 10) * m, (m, m_err)
    assert o_err <= mpmath.mpf(10) ** (-dps + 10) * m, (o, o_err)
    return intercept + slope * lo + top + mpmath.log(length), m, o * length


def direct_integrals(scores, theta, *, dps=60):
    """Definition-level integrals for a softmax over one or more score functions.

    Returns (shift, masses, offsets, sizes): per score function, the mass
    ∫ e^{s − shift} dx and ∫ (x − θ) e^{s − shift} dx over [0, 1], and
    ∫ |x − θ| e^{s − shift} dx (x − θ has one sign on each segment);
    ``shift`` is the largest segment log-factor, so nothing overflows.
    """
    theta = _exact(theta)
    with mpmath.workdps(dps):
        parts = [[_segment_integrals(*seg, theta, dps) for seg in _linear_pieces(score, theta)]
                 for score in scores]
        shift = max(log_factor for segs in parts for log_factor, _, _ in segs)
        masses, offsets, sizes = [], [], []
        for segs in parts:
            factors = [mpmath.exp(log_factor - shift) for log_factor, _, _ in segs]
            masses.append(mpmath.fsum(f * m for f, (_, m, _) in zip(factors, segs)))
            offsets.append(mpmath.fsum(f * o for f, (_, _, o) in zip(factors, segs)))
            sizes.append(mpmath.fsum(f * abs(o) for f, (_, _, o) in zip(factors, segs)))
        return shift, masses, offsets, sizes


def reference_errors(a, b, theta, *, dps=60):
    """{estimator: (e, scale)} from the definitions, at ``dps`` digits."""
    a, b, theta = _exact(a), _exact(b), _exact(theta)
    with mpmath.workdps(dps):
        _, (m1, m2), (o1, o2), (s1, s2) = direct_integrals(
            [one_head_score(a, b), reflected_score(a, b)], theta, dps=dps)
        e1, e2 = o1 / m1, o2 / m2
        scale1, scale2 = s1 / m1, s2 / m2
        return {
            "one-head": (e1, scale1),
            "reflected": (e2, scale2),
            "averaged": ((e1 + e2) / 2, (scale1 + scale2) / 2),
            # one softmax over both score sets: E[x(e^s + e^{s'})]/E[e^s + e^{s'}]
            "pooled": ((o1 + o2) / (m1 + m2), (s1 + s2) / (m1 + m2)),
        }, (m1, m2)


def _generated_error(estimator, a, b, theta):
    return getattr(gen_mp, f"error_{TAGS[estimator]}")(mpmath.mpf(a), mpmath.mpf(b), mpmath.mpf(theta))


def test_reference_quadrature_known_values():
    """The reference on cases with elementary answers: b → 0 limits and a peaked layer."""
    mpmath.mp.dps = 50
    # a = 0, tiny b: θ̂ → E[x] = 1/2 for every θ
    table, _ = reference_errors(0, mpmath.mpf(10) ** -30, mpmath.mpf(1) / 3)
    assert abs(table["one-head"][0] - (mpmath.mpf(1) / 2 - mpmath.mpf(1) / 3)) < mpmath.mpf(10) ** -28
    # b large, a ≫ bθ: θ̂ = θ + (1 − θ)κ₁(b(1 − θ)) ≈ θ + 1/b − 1/(e^{b(1−θ)} − 1)
    b, theta = mpmath.mpf(1000), mpmath.mpf(1) / 4
    table, _ = reference_errors(b * theta + 200, b, theta)
    v = b * (1 - theta)
    exact = (1 - theta) * (1 / v - 1 / mpmath.expm1(v))
    assert abs(table["one-head"][0] - exact) < mpmath.mpf(10) ** -40 * exact


# ---------------------------------------------------------------------------
# Stable form vs the definition
# ---------------------------------------------------------------------------


@settings(max_examples=25, deadline=None)
@given(point=parameters(min_b=1e-2, max_b=1e4, min_offset=-50, max_offset=1e3))
def test_stable_form_matches_direct_quadrature(point):
    """Generated mpmath e(θ) at 50 digits agrees with the defining integrals to
    ≥ 30 digits, for all four estimators, b ∈ [1e−2, 1e4] log-uniform and
    a − bθ ∈ [−50, 1e3]."""
    a, b, theta = point
    table, _ = reference_errors(a, b, theta)
    mpmath.mp.dps = 50
    for estimator, (want, scale) in table.items():
        got = _generated_error(estimator, a, b, theta)
        assert abs(got - want) <= mpmath.mpf(10) ** -30 * scale, (
            estimator, mpmath.nstr(got, 40), mpmath.nstr(want, 40), mpmath.nstr(scale, 5))


@pytest.mark.parametrize("estimator", model.ESTIMATORS)
def test_stable_form_at_threshold_ends(estimator):
    """θ ∈ {0, 1}: all points lie on one side, θ̂∞ is a single segment's mean."""
    mpmath.mp.dps = 50
    for a, b in ((3, 7), (-40, 0.5), (900, 300)):
        table, _ = reference_errors(a, b, 0)
        assert abs(_generated_error(estimator, a, b, 0) - table[estimator][0]) <= mpmath.mpf(10) ** -40
        table, _ = reference_errors(a, b, 1)
        assert abs(_generated_error(estimator, a, b, 1) - table[estimator][0]) <= mpmath.mpf(10) ** -40


# ---------------------------------------------------------------------------
# Closed form (SymPy integrals) vs stable form
# ---------------------------------------------------------------------------


@pytest.mark.parametrize("estimator", model.ESTIMATORS)
def test_closed_form_equals_stable_form_symbolically(estimator):
    """stable.rewrite(exp) − closed simplifies to 0 (an identity in a, b > 0, θ > 0)."""
    closed, stable = _symbolic_forms(estimator)
    assert stable.free_symbols == closed.free_symbols == {A, B, THETA}
    assert sp.simplify(stable - closed) == 0


@settings(max_examples=10, deadline=None)
@given(
    a=st.fractions(min_value=-20, max_value=40, max_denominator=97),
    b=st.fractions(min_value=Fraction(1, 50), max_value=40, max_denominator=97),
    theta=st.fractions(min_value=Fraction(1, 97), max_value=Fraction(96, 97), max_denominator=97),
)
def test_closed_form_equals_stable_form_at_rational_points(a, b, theta):
    """At exact rational points the two forms differ by < 1e−40 (evalf at 60 digits),
    and the generated mpmath code matches the closed form to 40 digits."""
    point = {A: sp.Rational(a), B: sp.Rational(b), THETA: sp.Rational(theta)}
    mpmath.mp.dps = 50
    for estimator in model.ESTIMATORS:
        closed, stable = _symbolic_forms(estimator)
        closed_value = closed.evalf(60, subs=point)
        stable_value = stable.evalf(60, subs=point)
        assert abs(closed_value - stable_value) < sp.Float("1e-40", 60), estimator
        generated = getattr(gen_mp, f"error_{TAGS[estimator]}")(
            *(mpmath.mpf(q.numerator) / q.denominator for q in (a, b, theta)))
        assert abs(generated - mpmath.mpf(str(closed_value))) < mpmath.mpf(10) ** -40, estimator


_SYMBOLIC: dict = {}


def _symbolic_forms(estimator):
    """(closed form, stable form rewritten in exp) of e, built once per estimator."""
    if estimator not in _SYMBOLIC:
        _SYMBOLIC[estimator] = (model.closed_form_error(estimator),
                                model.stable_error(estimator).rewrite(sp.exp))
    return _SYMBOLIC[estimator]


@settings(max_examples=15, deadline=None)
@given(point=parameters(min_b=1e-2, max_b=50, min_offset=-20, max_offset=20, min_theta=1e-3, max_theta=1 - 1e-3))
def test_closed_form_lambdified_matches_generated(point):
    """The closed form, lambdified to mpmath, matches the generated stable code at
    moderate parameters (where e^{a} and 1 − e^{−bθ} are harmless at 50 digits)."""
    a, b, theta = point
    table, _ = reference_errors(a, b, theta)
    mpmath.mp.dps = 50
    for estimator in model.ESTIMATORS:
        closed = _lambdified_closed_form(estimator)
        value = closed(mpmath.mpf(a), mpmath.mpf(b), mpmath.mpf(theta))
        assert abs(value - _generated_error(estimator, a, b, theta)) <= mpmath.mpf(10) ** -30 * table[estimator][1]


_LAMBDIFIED: dict = {}


def _lambdified_closed_form(estimator):
    if estimator not in _LAMBDIFIED:
        _LAMBDIFIED[estimator] = sp.lambdify((A, B, THETA), model.closed_form_error(estimator), modules="mpmath")
    return _LAMBDIFIED[estimator]


def test_closed_form_overflows_where_stable_form_does_not():
    """docs/model.md §8: e^{a} overflows float64; the closed form is for checking only."""
    closed = sp.lambdify((A, B, THETA), model.closed_form_error("one-head"), modules="numpy")
    with np.errstate(all="ignore"):
        naive = closed(1e4, 1e4, 0.5)  # e^{a − bθ} = e^{5000}
    assert not np.isfinite(naive)
    stable = gen_np.error_one_head(1e4, 1e4, 0.5)
    mpmath.mp.dps = 50
    assert abs(stable - gen_mp.error_one_head(1e4, 1e4, 0.5)) <= 1e-15 * abs(stable)


# ---------------------------------------------------------------------------
# Segment identities
# ---------------------------------------------------------------------------


def _distinct_segments():
    out = []
    for estimator in ("one-head", "reflected", "pooled"):
        for seg in model.segments(estimator):
            if seg not in out:
                out.append(seg)
    return out


def test_segments_of_each_estimator():
    """One-head and reflected have two segments each, pooled their union; averaged
    is not a single softmax."""
    assert len(model.segments("one-head")) == 2
    assert len(model.segments("reflected")) == 2
    assert model.segments("pooled") == model.segments("one-head") + model.segments("reflected")
    with pytest.raises(ValueError):
        model.segments("averaged")
    # the segments are the score's linear pieces
    for estimator, head in (("one-head", "one-head"), ("reflected", "reflected")):
        for seg, label in zip(model.segments(estimator), (0, 1)):
            assert sp.expand(seg.intercept + seg.slope * X - model.score(head, sp.Integer(label))) == 0


@pytest.mark.parametrize("index", range(4))
def test_segment_log_mass_and_mean_offset_are_the_integrals(index):
    """e^{ℓ} = ∫ e^{α+βx} dx and mean − θ = ∫ (x − θ)e^{α+βx}/∫ e^{α+βx} symbolically,
    and ℓ = log ∫ at random points with 0 < θ < 1."""
    seg = _distinct_segments()[index]
    weight = sp.exp(seg.intercept + seg.slope * X)
    mass = sp.integrate(weight, (X, seg.lo, seg.hi), conds="none")
    first = sp.integrate((X - THETA) * weight, (X, seg.lo, seg.hi), conds="none")
    log_mass = model.segment_log_mass(seg).rewrite(sp.exp)
    offset = model.segment_mean_offset(seg).rewrite(sp.exp)
    assert sp.simplify(sp.exp(log_mass) - mass) == 0
    assert sp.simplify(offset - first / mass) == 0
    # log of the integral (log(e^ℓ) = ℓ needs θ < 1, so check numerically inside the domain)
    for point in ({A: sp.Rational(7, 3), B: sp.Rational(45, 2), THETA: sp.Rational(2, 7)},
                  {A: -11, B: sp.Rational(1, 9), THETA: sp.Rational(5, 6)}):
        diff = (log_mass - sp.log(mass)).subs(point).evalf(50)
        assert abs(diff) < sp.Float("1e-45", 50)
    # the offset's sign: the right segment lies above θ, the left one below
    sign = 1 if seg.side == "right" else -1
    assert sign * offset.subs({A: 2, B: 3, THETA: sp.Rational(1, 2)}).evalf(30) > 0


# ---------------------------------------------------------------------------
# Reflection, averaging and pooling
# ---------------------------------------------------------------------------


@settings(max_examples=20, deadline=None)
@given(point=parameters(min_b=1e-2, max_b=1e4))
@example(point=(516.0, 1.0, 2.2010820754269413e-264))
def test_reflection_symmetry(point):
    """e_reflected(a, b, θ) = −e_one_head(a, b, 1 − θ): the reflected head is the
    one-head model on the reflected context, mapped back (docs/model.md §5)."""
    a, b, theta = point
    mpmath.mp.dps = 50
    # A pair (θ, 1 − θ) both exact at 50 digits: mpmath rounds every argument to
    # the working precision, so a 1 − θ it cannot hold would be a different point
    # (near θ = 1 with a ≫ b, e moves by 1e−40 when θ moves by 1e−264).
    theta = mpmath.mpf(theta)
    if theta <= 0.5:
        mirror = 1 - theta  # rounded to 50 digits, ≥ 1/2
        theta = 1 - mirror  # exact
    else:
        mirror = 1 - theta  # exact
    table, _ = reference_errors(a, b, theta, dps=55)
    mirrored, _ = reference_errors(a, b, mirror, dps=55)
    scale = table["reflected"][1]
    # the definition: both heads' integrals
    assert abs(table["reflected"][0] + mirrored["one-head"][0]) <= mpmath.mpf(10) ** -40 * scale
    # the generated code
    reflected = gen_mp.error_reflected(mpmath.mpf(a), mpmath.mpf(b), theta)
    one_head = gen_mp.error_one_head(mpmath.mpf(a), mpmath.mpf(b), mirror)
    assert abs(reflected + one_head) <= mpmath.mpf(10) ** -40 * scale


@settings(max_examples=20, deadline=None)
@given(point=parameters(min_b=1e-2, max_b=1e4))
def test_averaged_is_the_mean_and_pooled_the_mass_weighted_mean(point):
    """averaged = (θ̂ + θ̂′)/2; pooled = (Z θ̂ + Z′ θ̂′)/(Z + Z′) with Z, Z′ the heads'
    total masses, hence min(θ̂, θ̂′) ≤ pooled ≤ max(θ̂, θ̂′)."""
    a, b, theta = point
    table, (m1, m2) = reference_errors(a, b, theta)
    mpmath.mp.dps = 50
    e1, e2, avg, pooled = (_generated_error(est, a, b, theta) for est in model.ESTIMATORS)
    heads_scale = table["one-head"][1] + table["reflected"][1]
    tol = mpmath.mpf(10) ** -40 * heads_scale
    assert abs(avg - (e1 + e2) / 2) <= tol
    with mpmath.workdps(60):
        mixture = (m1 * e1 + m2 * e2) / (m1 + m2)
    assert abs(pooled - mixture) <= mpmath.mpf(10) ** -30 * heads_scale
    assert min(e1, e2) - tol <= pooled <= max(e1, e2) + tol


@pytest.mark.parametrize("estimator", ["averaged", "pooled"])
def test_symmetrized_estimators_are_unbiased_at_one_half(estimator):
    """Both symmetrizations commute with the reflection, so e(1/2) = 0 and e(θ) = −e(1 − θ)."""
    mpmath.mp.dps = 50
    for a, b in ((3, 7), (-40, 0.5), (900, 300), (1e4, 1e4)):
        assert abs(_generated_error(estimator, a, b, 0.5)) <= mpmath.mpf(10) ** -45
        for theta in (0.1, 0.3, 0.8):
            lhs = _generated_error(estimator, a, b, theta)
            rhs = -_generated_error(estimator, a, b, 1 - mpmath.mpf(theta))
            assert abs(lhs - rhs) <= mpmath.mpf(10) ** -40 * (abs(lhs) + reference_errors(a, b, theta)[0][estimator][1])


# ---------------------------------------------------------------------------
# Label encoding and shift invariance (finite contexts and population)
# ---------------------------------------------------------------------------


def softmax_estimate_float(x, s):
    """Σ softmax(s)_i x_i in float64 with the maximum shifted out (log-sum-exp)."""
    w = np.exp(s - np.max(s))
    return float(np.dot(w, x) / np.sum(w))


def softmax_estimate_mp(x, s):
    """Σ softmax(s)_i x_i in mpmath at the working precision, maximum shifted out."""
    top = max(s)
    w = [mpmath.exp(si - top) for si in s]
    return mpmath.fsum(wi * xi for wi, xi in zip(w, x)) / mpmath.fsum(w)


_contexts = st.tuples(st.integers(0, 2**32 - 1), st.integers(1, 200))


def _context(seed, n, theta):
    rng = np.random.default_rng(seed)
    x = rng.uniform(0.0, 1.0, size=n)
    y = (x >= theta).astype(float)
    return x, y


@settings(max_examples=30, deadline=None)
@given(context=_contexts, theta=thresholds(), a=st.floats(-1e3, 1e3), b=scales(min_value=1e-2, max_value=1e4))
def test_pm_one_encoding_doubles_the_label_score_finite_context(context, theta, a, b):
    """With ỹ = 2y − 1, a·ỹ − b·x = 2a·y − b·x − a: the {−1, +1} estimate with label
    score a equals the {0, 1} estimate with label score 2a (softmax ignores −a)."""
    seed, n = context
    x, y = _context(seed, n, theta)
    pm = a * (2 * y - 1) - b * x
    zero_one = 2 * a * y - b * x
    # float64: the two score vectors differ by rounding of size eps·|s|
    condition = 1 + np.max(np.abs(pm)) + np.max(np.abs(zero_one))
    assert abs(softmax_estimate_float(x, pm) - softmax_estimate_float(x, zero_one)) <= 8 * 2.0**-53 * condition
    # mpmath: exact inputs, 50 digits
    mpmath.mp.dps = 50
    xs = [mpmath.mpf(v) for v in x]
    a_, b_ = mpmath.mpf(a), mpmath.mpf(b)
    pm_mp = [a_ * (2 * int(yi) - 1) - b_ * xi for xi, yi in zip(xs, y)]
    zo_mp = [2 * a_ * int(yi) - b_ * xi for xi, yi in zip(xs, y)]
    assert abs(softmax_estimate_mp(xs, pm_mp) - softmax_estimate_mp(xs, zo_mp)) <= mpmath.mpf(10) ** -45 * condition


@settings(max_examples=15, deadline=None)
@given(point=parameters(min_b=1e-2, max_b=1e4, min_offset=-50, max_offset=500))
def test_pm_one_encoding_doubles_the_label_score_population(point):
    """Population level: direct quadrature with the ±1 scores a·ỹ − b·x equals the
    generated one-head error at label score 2a."""
    a, b, theta = point
    mpmath.mp.dps = 50
    a = mpmath.mpf(a) / 2  # so that 2a is the drawn, exactly representable label score
    theta = mpmath.mpf(theta)
    _, (mass,), (offset,), (size,) = direct_integrals([pm_one_score(a, mpmath.mpf(b))], theta)
    got = gen_mp.error_one_head(2 * a, mpmath.mpf(b), theta)
    assert abs(got - offset / mass) <= mpmath.mpf(10) ** -30 * size / mass


@settings(max_examples=30, deadline=None)
@given(context=_contexts, theta=thresholds(), a=st.floats(-1e3, 1e3), b=scales(min_value=1e-2, max_value=1e4),
       shift=st.floats(-1e4, 1e4))
def test_softmax_shift_invariance(context, theta, a, b, shift):
    """Adding a constant to every score leaves θ̂ unchanged (float64 and mpmath),
    including shifts that would overflow e^{s} in float64 without the max shift."""
    seed, n = context
    x, y = _context(seed, n, theta)
    s = a * y - b * x
    moved = s + shift
    condition = 1 + np.max(np.abs(s)) + abs(shift)
    base = softmax_estimate_float(x, s)
    assert np.isfinite(softmax_estimate_float(x, moved))
    assert abs(softmax_estimate_float(x, moved) - base) <= 8 * 2.0**-53 * condition
    mpmath.mp.dps = 50
    xs = [mpmath.mpf(v) for v in x]
    s_mp = [mpmath.mpf(a) * int(yi) - mpmath.mpf(b) * xi for xi, yi in zip(xs, y)]
    moved_mp = [si + mpmath.mpf(shift) for si in s_mp]
    assert abs(softmax_estimate_mp(xs, moved_mp) - softmax_estimate_mp(xs, s_mp)) <= mpmath.mpf(10) ** -45 * condition


# ---------------------------------------------------------------------------
# Float64 stable form at extreme parameters (docs/model.md §8)
# ---------------------------------------------------------------------------

EXTREMES = [
    (1e6, 1e5, 1 - 1e-12),
    (1e6, 1e5, 0.0),
    (1e6, 1e5, 1.0),
    (-1e6, 1e5, 0.7),
    (1e5, 1e5, 1e-12),
    (0.0, 1e5, 1 - 1e-12),
    (1e4 + 2 * math.log(1e4), 1e4, 0.999),
    (1e4 + 2 * math.log(1e4), 1e4, 1e-9),
    (-1e3, 1e-2, 1.0),
    (-1e3, 1e-2, 0.0),
    (-1e3, 1e-2, 0.5),
    (1e3, 1e-2, 0.5),
    (0.0, 1e-2, 1.0),
    (1e6, 1e-2, 0.3),
    (5.0, 1e8, 0.5),
    (5.0, 1e-8, 0.25),
]


def _all_quantities(module, estimator, a, b, theta):
    tag = TAGS[estimator]
    e = getattr(module, f"error_{tag}")(a, b, theta)
    g = getattr(module, f"error_gradient_{tag}")(a, b, theta)
    h = getattr(module, f"error_hessian_{tag}")(a, b, theta)
    return [e, *g, *h]


def _sensitivity(estimator, a, b, theta):
    """Per quantity q of (e, ∇e, ∇²e): |q| + |a ∂q/∂a| + |b ∂q/∂b| + |∂q/∂θ|.

    A float64 evaluation that is exact for inputs perturbed by a relative eps
    (and θ, 1 − θ by an absolute eps) is off by about eps times this; central
    differences at 60 digits (one-sided at θ ∈ {0, 1}) give the derivatives.
    """
    with mpmath.workdps(60):
        a, b, theta = mpmath.mpf(a), mpmath.mpf(b), mpmath.mpf(theta)
        base = _all_quantities(gen_mp, estimator, a, b, theta)
        total = [abs(q) for q in base]
        h = mpmath.mpf(10) ** -20
        for name, point in (("a", a), ("b", b)):
            step = h * max(abs(point), 1)
            args = lambda p: (p, b, theta) if name == "a" else (a, p, theta)
            up = _all_quantities(gen_mp, estimator, *args(point + step))
            down = _all_quantities(gen_mp, estimator, *args(point - step))
            for i in range(len(total)):
                total[i] += abs(point) * abs(up[i] - down[i]) / (2 * step)
        lo, hi = max(theta - h, mpmath.mpf(0)), min(theta + h, mpmath.mpf(1))
        up = _all_quantities(gen_mp, estimator, a, b, hi)
        down = _all_quantities(gen_mp, estimator, a, b, lo)
        for i in range(len(total)):
            total[i] += abs(up[i] - down[i]) / (hi - lo)
        return total


@pytest.mark.parametrize("estimator", model.ESTIMATORS)
@pytest.mark.parametrize("point", EXTREMES, ids=[f"a={p[0]:g},b={p[1]:g},th={p[2]:.13g}" for p in EXTREMES])
def test_numpy_stable_form_finite_and_accurate_at_extremes(estimator, point):
    """Float64 e, ∇e, ∇²e are finite (no overflow or invalid operation) and agree
    with the 50-digit mpmath code to 1e−12 of the condition-aware scale."""
    a, b, theta = point
    # (−1e6, 1e5, 0.7) pooled was a known failure until 2026-11-30: ∂e/∂b came out −8.5e−22
    # against an exact 5e−57 (1.4e−12 of the 6e−10 scale), the reflected segments' ∂ℓ/∂b being
    # a difference of O(1) numbers. Printed from e with sign-free rates it is off by 3e−26.
    with np.errstate(over="raise", invalid="raise"):
        values = [float(v) for v in _all_quantities(gen_np, estimator, a, b, theta)]
    assert all(math.isfinite(v) for v in values), values
    mpmath.mp.dps = 50
    exact = _all_quantities(gen_mp, estimator, *(mpmath.mpf(p) for p in point))
    scale = _sensitivity(estimator, a, b, theta)
    if estimator in ("averaged", "pooled"):
        # both are means of the two heads (equal weights; the heads' masses), so a
        # cancellation between the heads' contributions is structural: rounding is
        # relative to each head's own terms (e.g. pooled has θ̂ ≡ 1/2 at a = 0)
        for head in ("one-head", "reflected"):
            for i, s in enumerate(_sensitivity(head, a, b, theta)):
                scale[i] += s
    names = ["e", "de/da", "de/db", "d2e/da2", "d2e/dadb", "d2e/db2"]
    bad = [(names[i], v, mpmath.nstr(exact[i], 17), mpmath.nstr(scale[i], 3))
           for i, v in enumerate(values)
           if abs(mpmath.mpf(v) - exact[i]) > 1e-12 * scale[i] + mpmath.mpf(10) ** -300]
    assert not bad, bad


# ---------------------------------------------------------------------------
# The strategies themselves (tests/strategies.py)
# ---------------------------------------------------------------------------


@settings(max_examples=50, deadline=None)
@given(point=parameters(min_b=1e-2, max_b=1e4, min_offset=-50, max_offset=1e3))
def test_parameters_strategy_respects_its_bounds(point):
    a, b, theta = point
    assert 1e-2 <= b <= 1e4 and 0 <= theta <= 1
    # a = o + bθ is rounded once: the offset is within a few ulps of a of its range
    slack = 4 * math.ulp(max(abs(a), 1.0))
    assert -50 - slack <= a - b * theta <= 1e3 + slack


def test_strategies_reject_bad_bounds():
    from hypothesis.errors import InvalidArgument

    from tests import strategies

    bad_calls = [
        lambda: strategies.scales(min_value=0),
        lambda: strategies.scales(min_value=-1, max_value=1),
        lambda: strategies.scales(min_value=10, max_value=1),
        lambda: strategies.scales(min_value=math.nan),
        lambda: strategies.scales(max_value=math.inf),
        lambda: strategies.thresholds(min_value=-0.1),
        lambda: strategies.thresholds(max_value=1.5),
        lambda: strategies.thresholds(min_value=0.8, max_value=0.2),
        lambda: strategies.parameters(min_b=0),
        lambda: strategies.parameters(min_offset=5, max_offset=-5),
        lambda: strategies.parameters(min_theta=0.5, max_theta=0.25),
        lambda: strategies.precisions(min_value=0),
        lambda: strategies.precisions(min_value=30, max_value=20),
        lambda: strategies.precisions(min_value=15.5),
        lambda: strategies.precisions(max_value=True),
        lambda: strategies.rates(min_magnitude=0),
        lambda: strategies.scales(min_value="1"),
    ]
    for call in bad_calls:
        with pytest.raises(InvalidArgument):
            call()


@settings(max_examples=50, deadline=None)
@given(b=scales(min_value=3.0, max_value=3.0), theta=thresholds(min_value=0.25, max_value=0.5))
def test_degenerate_and_narrow_ranges(b, theta):
    assert b == 3.0 and 0.25 <= theta <= 0.5
