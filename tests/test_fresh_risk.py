"""The exact fresh-context risk (numerics/certified/enclosures/fresh_risk.py, docs/fresh_risk.md).

Checked against: mpmath quadrature of the one-point transforms from their definitions (the closed forms),
an independent float64 double quadrature of the whole identity (scipy), Monte Carlo runs of the sampled
engine, the exact N = 1 values, the reflection symmetry, the population error as N → ∞, and boxes of
parameters; bad input is refused.
"""

from __future__ import annotations

import json
import math

import mpmath
import numpy as np
import pytest
from flint import acb, arb, ctx

from stumpcheck.numerics.certified.enclosures import EnclosureTooWide, certified_error, fresh_context_risk
from stumpcheck.numerics.certified.enclosures.fresh_segments import ClosedFormWeights
from stumpcheck.numerics.precision import InputError


def _segments(a, b, theta, estimator):
    """(sign, length, log v at distance t from θ) of each segment, in mpmath."""
    a, b, theta = mpmath.mpf(a), mpmath.mpf(b), mpmath.mpf(theta)
    if estimator == "one-head":
        pieces = [(-1, theta, lambda t: -b * (theta - t)), (1, 1 - theta, lambda t: a - b * (theta + t))]
    else:
        pieces = [(-1, theta, lambda t: a - b * (1 - theta + t)), (1, 1 - theta, lambda t: -b * (1 - theta - t))]
    return [p for p in pieces if p[1] > 0]


def _transforms(a, b, theta, estimator, s):
    """q = 1 − φ, φ, s·A₁ and s²·A₂ at s from their definitions (mpmath quadrature, split where s·v = 1)."""
    out = [mpmath.mpf(0)] * 4
    for sign, length, log_v in _segments(a, b, theta, estimator):
        l0, l1 = log_v(0), log_v(length)
        cut = (-mpmath.log(s) - l0) / (l1 - l0) * length
        points = [0] + ([cut] if 0 < cut < length else []) + [length]
        u = lambda t: s * mpmath.exp(log_v(t))  # noqa: E731
        out[0] += mpmath.quad(lambda t: -mpmath.expm1(-u(t)), points)
        out[1] += mpmath.quad(lambda t: mpmath.exp(-u(t)), points)
        out[2] += mpmath.quad(lambda t: sign * t * u(t) * mpmath.exp(-u(t)), points)
        out[3] += mpmath.quad(lambda t: (t * u(t)) ** 2 * mpmath.exp(-u(t)), points)
    return out


@pytest.mark.parametrize("estimator", ["one-head", "reflected"])
@pytest.mark.parametrize("a, b, theta", [(25, 20, "0.4"), (3, 7, "0.8"), (-2, 5, "0.5")])
def test_closed_forms_contain_the_definitions(a, b, theta, estimator):
    """At σ across the bulk, the closed-form balls contain a 40-digit quadrature of the definitions."""
    with mpmath.workdps(40), ctx.workprec(140):
        weights = ClosedFormWeights(arb(a), arb(b), arb(theta), 10, estimator, 140)
        for sigma in (-12, -2, 0, 3, 8):
            sums = weights.sums(acb(sigma))
            s = mpmath.exp(sigma - mpmath.mpf(float(weights.K.mid())))
            for ball, exact in zip((sums.q, sums.phi, sums.s_a1, sums.s2_a2), _transforms(a, b, theta, estimator, s)):
                assert ball.real.rel_accuracy_bits() > 100
                slack = abs(exact) * mpmath.mpf(10) ** -36
                lower, upper = (mpmath.mpf(x.str(45, radius=False)) for x in (ball.real.lower(), ball.real.upper()))
                assert lower - slack <= exact <= upper + slack, (sigma, ball, exact)


def _float_reference(a, b, theta, N, estimator="one-head"):
    """bias and MSE by scipy double quadrature of the identity (float64, about 1e-9 relative; σ ∈ [−30, 30]
    leaves out less than 1e-12 at the points tested)."""
    from scipy.integrate import quad

    segs = [(sign, float(length), lambda t, f=f: float(f(t))) for sign, length, f in _segments(a, b, theta, estimator)]
    shift = max(max(f(0), f(length)) for _, length, f in segs)
    mean = sum(quad(lambda t, f=f: math.exp(f(t) - shift), 0, length, epsabs=0, epsrel=1e-13)[0]
               for _, length, f in segs)
    log_star = -math.log(N * mean) - shift

    def moments(sigma):
        q = phi = a1 = a2 = 0.0
        for sign, length, f in segs:
            l0, l1 = f(0), f(length)
            cut = (-(sigma + log_star) - l0) / (l1 - l0) * length
            points = [cut] if 0 < cut < length else None
            u = lambda t: math.exp(sigma + log_star + f(t))  # noqa: E731
            opts = dict(points=points, epsabs=0, epsrel=1e-11, limit=100)
            q += quad(lambda t: -math.expm1(-u(t)), 0, length, **opts)[0]
            phi += quad(lambda t: math.exp(-u(t)), 0, length, **opts)[0]
            a1 += quad(lambda t: sign * t * u(t) * math.exp(-u(t)), 0, length, **opts)[0]
            a2 += quad(lambda t: (t * u(t)) ** 2 * math.exp(-u(t)), 0, length, **opts)[0]
        return q, phi, a1, a2

    def integrand(sigma, k):
        q, phi, a1, a2 = moments(sigma)
        if phi <= 1e-300:
            return 0.0  # beyond float range; the integrand is below 1e-300 there
        log_phi = math.log1p(-q) if q < 0.5 else math.log(phi)
        if k == 0:
            return N * a1 * math.exp((N - 1) * log_phi)
        return N * a2 * math.exp((N - 1) * log_phi) + N * (N - 1) * a1 * a1 * math.exp((N - 2) * log_phi)

    return [quad(integrand, -30, 30, args=(k,), epsabs=0, epsrel=1e-10, limit=200)[0] for k in (0, 1)]


@pytest.mark.slow
@pytest.mark.parametrize("a, b, theta, N", [(25, 20, "0.4", 10), (60, 50, "0.3", 40)])
def test_risk_against_an_independent_double_quadrature(a, b, theta, N):
    risk = fresh_context_risk(a, b, theta, N, dps=15, rel_width=1e-10)
    bias, mse = _float_reference(a, b, theta, N)
    assert risk.evidence == "certified"
    assert risk.relative_radius_bias <= 1e-10 and risk.relative_radius_mse <= 1e-10
    assert abs(float(risk.bias.mid) - bias) <= 1e-8 * abs(bias)
    assert abs(float(risk.mse.mid) - mse) <= 1e-8 * mse


def test_thirty_digits_meet_the_issue_target():
    risk = fresh_context_risk(25, 20, "0.4", 10, dps=30)
    assert risk.relative_radius_bias <= 1e-8 and risk.relative_radius_mse <= 1e-8
    assert risk.relative_radius_bias <= 1e-28 and risk.relative_radius_mse <= 1e-28  # it reaches the aim
    low, high = (float(x) for x in risk.bounds("mean_abs_error"))
    assert low <= float(risk.mse.mid) ** 0.5 <= high + 1e-15


def _sampled_errors(a, b, theta, N, reps, estimator="one-head"):
    from stumpcheck.numerics.corpus.fresh import _errors

    return _errors(float(a), float(b), float(theta), N, estimator=estimator, reps=reps, seed=0, sampler=None,
                   chunk=2 ** 20)


def _agrees_with_sampling(risk, errors, z=4.0):
    """The sample mean of e and of e² within z standard errors of bias and MSE; the 95% CI of |e| meets the bracket."""
    reps = len(errors)
    for values, ball in ((errors, risk.bias), (errors ** 2, risk.mse)):
        se = values.std(ddof=1) / math.sqrt(reps)
        assert abs(values.mean() - float(ball.mid)) <= z * se, (values.mean(), ball, se)
    absolute = np.abs(errors)
    half = 1.96 * absolute.std(ddof=1) / math.sqrt(reps)
    low, high = (float(x) for x in risk.bounds("mean_abs_error"))
    assert absolute.mean() - half <= high and absolute.mean() + half >= low


@pytest.mark.parametrize("a, b, theta, N", [(25, 20, "0.4", 10), (60, 50, "0.3", 40)])
def test_agrees_with_the_sampled_engine(a, b, theta, N):
    risk = fresh_context_risk(a, b, theta, N, dps=15, rel_width=1e-8)
    _agrees_with_sampling(risk, _sampled_errors(a, b, theta, N, 20_000))


@pytest.mark.slow
def test_agrees_with_a_million_contexts():
    risk = fresh_context_risk(25, 20, "0.4", 10, dps=30)
    _agrees_with_sampling(risk, _sampled_errors(25, 20, "0.4", 10, 1_000_000))


@pytest.mark.slow
def test_pooled_agrees_with_the_sampled_engine():
    risk = fresh_context_risk(25, 20, "0.4", 10, dps=15, rel_width=1e-6, estimator="pooled")
    _agrees_with_sampling(risk, _sampled_errors(25, 20, "0.4", 10, 200_000, estimator="pooled"))


@pytest.mark.parametrize("estimator", ["one-head", "reflected", "pooled"])
@pytest.mark.parametrize("theta", ["0", "0.25", "1"])
def test_one_point_is_exact(theta, estimator):
    """N = 1: θ̂ = x₁, so bias = ½ − θ, MSE = (θ³ + (1 − θ)³)/3 and E|x − θ| = (θ² + (1 − θ)²)/2 exactly."""
    risk = fresh_context_risk(25, 20, theta, 1, dps=20, estimator=estimator)
    t = float(theta)
    assert 0.5 - t in risk.bias
    assert abs(float(risk.mse.mid) - (t ** 3 + (1 - t) ** 3) / 3) <= 1e-18
    assert abs(float(risk.mean_abs_error.mid) - (t * t + (1 - t) ** 2) / 2) <= 1e-18
    assert float(risk.mean_abs_error.rad) <= 1e-18


def test_the_integral_reproduces_the_one_point_values():
    """The s-integral itself (not the N = 1 shortcut) at N = 1 gives ½ − θ and (θ³ + (1 − θ)³)/3."""
    from stumpcheck.numerics.certified.enclosures.fresh_inputs import validate_inputs
    from stumpcheck.numerics.certified.enclosures.fresh_risk import _integrate

    inputs = validate_inputs(3, 4, "0.25", 1, estimator="one-head", dps=15, rel_width=None)
    bias, mse, _ = _integrate(inputs, 90, 1e-12)
    assert bias.contains(arb("0.25")) and bias.rad() < 1e-11
    assert mse.overlaps(arb(0.25 ** 3 + 0.75 ** 3) / 3) and mse.rad() < 1e-11


def test_reflection_symmetry():
    """The reflected head at θ is the one-head at 1 − θ reflected: bias flips sign, MSE is the same."""
    one = fresh_context_risk(25, 20, "0.7", 12, dps=15, rel_width=1e-10)
    reflected = fresh_context_risk(25, 20, "0.3", 12, dps=15, rel_width=1e-10, estimator="reflected")
    assert reflected.bias.to_arb().overlaps(-one.bias.to_arb())
    assert reflected.mse.to_arb().overlaps(one.mse.to_arb())
    assert float(abs(one.bias.mid)) > 1e-3


def test_pooled_transforms_contain_the_definitions():
    """The pooled weight w = v + v′: the quadrature balls contain a 30-digit quadrature of the definitions."""
    from stumpcheck.numerics.certified.enclosures.fresh_pooled import PooledWeights

    a, b = 25, 20
    with mpmath.workdps(30), ctx.workprec(110):
        theta = mpmath.mpf("0.4")
        weights = PooledWeights(arb(a), arb(b), arb("0.4"), 10, 110)
        for sigma in (-3, 2):
            sums = weights.sums(acb(sigma))
            s = mpmath.exp(sigma - mpmath.mpf(float(weights.K.mid())))

            def w(x):
                label = 1 if x >= theta else 0
                return mpmath.exp(a * label - b * x) + mpmath.exp(a * (1 - label) - b * (1 - x))

            def mean(f):
                return mpmath.quad(lambda x: f(x, s * w(x)), [0, theta / 2, theta, (1 + theta) / 2, 1])

            exact = (mean(lambda x, u: -mpmath.expm1(-u)), mean(lambda x, u: mpmath.exp(-u)),
                     mean(lambda x, u: (x - theta) * u * mpmath.exp(-u)),
                     mean(lambda x, u: ((x - theta) * u) ** 2 * mpmath.exp(-u)))
            for ball, value in zip((sums.q, sums.phi, sums.s_a1, sums.s2_a2), exact):
                lower, upper = (mpmath.mpf(x.str(40, radius=False)) for x in (ball.real.lower(), ball.real.upper()))
                slack = abs(value) * mpmath.mpf(10) ** -25
                assert lower - slack <= value <= upper + slack, (sigma, ball, value)


@pytest.mark.slow
def test_pooled_is_unbiased_at_one_half():
    """At θ = ½ the pooled estimator is its own reflection, so its bias is 0 (and the ball says so)."""
    risk = fresh_context_risk(25, 20, "0.5", 2, dps=15, rel_width=1e-3, estimator="pooled")
    assert 0 in risk.bias and risk.mse.lower > 0
    assert float(risk.bias.rad) <= 1e-3 * float(risk.mse.mid) ** 0.5


def test_large_contexts_approach_the_population_error():
    """As N → ∞ the bias tends to e(θ) = θ̂∞ − θ (certified_error), within O(1/N)."""
    risk = fresh_context_risk(25, 20, "0.4", 10 ** 9, dps=15, rel_width=1e-10)
    population = certified_error(25, 20, "0.4", dps=30)
    assert abs(float(risk.bias.mid) - float(population.mid)) <= 1e-7
    assert abs(float(risk.mse.mid) - float(population.mid) ** 2) <= 1e-7


def test_boxes_contain_their_points():
    box = fresh_context_risk(("24.999", "25.001"), ("19.999", "20.001"), "0.4", 10, dps=15)
    for a, b in ((25, 20), ("24.999", "20.001")):
        point = fresh_context_risk(a, b, "0.4", 10, dps=15, rel_width=1e-8)
        assert point.bias.to_arb() in box.bias and point.mse.to_arb() in box.mse
    with ctx.workprec(80):
        ball = arb(25, 1e-9)
    from_ball = fresh_context_risk(ball, 20, "0.4", 10, dps=15)
    assert fresh_context_risk(25, 20, "0.4", 10, dps=15, rel_width=1e-8).bias.to_arb() in from_ball.bias


def test_a_nearly_flat_weight():
    """a = 0, b = 10⁻³: the weights are nearly equal, θ̂ is nearly the mean of the points, so the MSE is
    nearly 1/(12N) + (½ − θ)²; the closed forms cancel here (b·Δ small) and the precision is raised."""
    risk = fresh_context_risk(0, "0.001", "0.5", 100, dps=15, rel_width=1e-10)
    assert abs(float(risk.mse.mid) - 1 / 1200) <= 1e-7 and abs(float(risk.bias.mid)) <= 2e-4
    assert risk.relative_radius_mse <= 1e-10


def test_a_wide_box_is_refused_at_once():
    with pytest.raises(EnclosureTooWide, match="split the box"):
        fresh_context_risk(("24", "26"), 20, "0.4", 10, dps=15)


def test_result_shows_and_serialises():
    risk = fresh_context_risk(25, 20, "0.4", 10, dps=15, rel_width=1e-10)
    data = json.loads(json.dumps(risk.to_dict(), allow_nan=False))
    assert {"bias", "mse", "mean_abs_error", "evidence", "a", "b", "theta", "N", "estimator"} <= set(data)
    assert data["evidence"] == "certified"
    lo, hi = (mpmath.mpf(x) for x in data["bias"])
    assert lo <= risk.bias.lower and risk.bias.upper <= hi
    assert "bias" in repr(risk) and "certified" in repr(risk)


@pytest.mark.parametrize("kwargs, message", [
    (dict(b=0), "b must be > 0"), (dict(b=-1), "b must be > 0"), (dict(theta="1.5"), "theta"),
    (dict(theta=(0.2, 0.3)), "theta must be a number"), (dict(N=0), "N must lie"), (dict(N=10 ** 9 + 1), "N must lie"),
    (dict(N=2.5), "N must be an integer"), (dict(N=True), "N must be an integer"), (dict(dps=10), "precision"),
    (dict(estimator="averaged"), "two-dimensional s-integral"), (dict(estimator="foo"), "unknown estimator"),
    (dict(rel_width=0), "rel_width"), (dict(a="x"), "a must be"), (dict(a=(3, 2)), "lo <= hi"),
    (dict(b=1e9), "at most"), (dict(a=float("nan")), "finite")])
def test_bad_input_is_refused(kwargs, message):
    args = dict(a=25, b=20, theta="0.4", N=10)
    args.update(kwargs)
    extra = {k: args.pop(k) for k in ("dps", "estimator", "rel_width") if k in args}
    with pytest.raises(InputError, match=message):
        fresh_context_risk(args["a"], args["b"], args["theta"], args["N"], **extra)


def test_plateaus_agree_with_the_plain_integral(monkeypatch):
    """N small against b: the long stretches by the entire stand-in plus its error bound (the default)
    overlap the plain integral of the closed forms over the whole σ-range."""
    from stumpcheck.numerics.certified.enclosures import fresh_risk

    a, b = 200 + 2 * math.log(200), 200
    fast = fresh_context_risk(a, b, "0.3", 2, dps=15, rel_width=1e-10)
    assert fast.attempts[-1]["plateaus"]["stretches"]
    monkeypatch.setattr(fresh_risk, "_pieces", lambda weights, lo, hi: [(lo, hi, None)])
    plain = fresh_context_risk(a, b, "0.3", 2, dps=15, rel_width=1e-10)
    assert not plain.attempts[-1]["plateaus"]["stretches"]
    assert fast.bias.to_arb().overlaps(plain.bias.to_arb()) and fast.mse.to_arb().overlaps(plain.mse.to_arb())


def test_large_scales_small_contexts():
    """b = 10⁷, a = b + 32, N = 2: the σ-range is 10⁷ long and the plateaus make it cheap. As b → ∞ with
    a − b → ∞ the softmax picks the smallest positive point if there is one, else the smallest point, so at
    θ = 0.3: E θ̂ = 0.3²·(0.3/3) + 2·0.3·0.7·(0.3 + 0.7/2) + 0.7²·(0.3 + 0.7/3), the bias that minus θ."""
    risk = fresh_context_risk(10 ** 7 + 32, 10 ** 7, "0.3", 2, dps=15, rel_width=1e-10)
    assert risk.attempts[-1]["sigma_range"][1] > 10 ** 6
    limit = 0.09 * 0.1 + 0.42 * 0.65 + 0.49 * (0.3 + 0.7 / 3) - 0.3
    assert abs(float(risk.bias.mid) - limit) < 1e-6


def test_command_line(capsys):
    from stumpcheck.cli.commands import main

    base = ["fresh", "--exact", "--a", "25", "--b", "20", "--theta", "0.4", "--N", "10"]
    assert main(base + ["--dps", "15", "--rel-width", "1e-10", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["evidence"] == "certified" and len(data["bias"]) == 2 and len(data["mse"]) == 2
    assert main(["fresh", "--exact", "--a", "24.999,25.001", "--b", "20", "--theta", "0.4", "--N", "1,10",
                 "--dps", "15"]) == 0
    text = capsys.readouterr().out
    assert "N = 10" in text and "mean_abs_error" in text and "certified" in text
    for extra in (["--reps", "10"], ["--seed", "3"], ["--estimator", "averaged"], ["--a", "3,2"]):
        assert main(base + extra) == 2
        assert len(capsys.readouterr().err.strip().splitlines()) == 1
    assert main(["fresh", "--a", "25", "--b", "20", "--theta", "0.4", "--N", "10", "--dps", "20"]) == 2


def test_enclosure_too_wide_is_an_error(monkeypatch):
    from stumpcheck.numerics.certified.enclosures import fresh_risk

    monkeypatch.setattr(fresh_risk, "_MAX_ATTEMPTS", 1)
    with pytest.raises(EnclosureTooWide, match="wider than the required"):
        fresh_context_risk(25, 20, "0.4", 10, dps=15, rel_width=1e-30)
