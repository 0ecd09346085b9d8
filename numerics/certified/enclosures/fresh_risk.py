"""The exact fresh-context risk of a frozen estimator: certified bias and MSE of θ̂_N − θ (docs/fresh_risk.md).

For N i.i.d. points x ~ U[0, 1] labelled by θ, a frozen (a, b) gives θ̂_N − θ = U/V with
U = Σ (xᵢ − θ)v(xᵢ), V = Σ v(xᵢ). Laplace's 1/V = ∫₀^∞ e^{−sV} ds and 1/V² = ∫₀^∞ s e^{−sV} ds
turn the bias E[U/V] and the MSE E[U²/V²] into one-dimensional integrals over s of products of
one-point transforms (:mod:`stumpcheck.numerics.certified.enclosures.fresh_integrand`), which
:func:`fresh_context_risk` encloses rigorously: closed forms in the exponential integral and
two entire hypergeometric functions for the x-integrals (one-head and reflected:
:mod:`~stumpcheck.numerics.certified.enclosures.fresh_segments`; pooled: Arb quadrature,
:mod:`~stumpcheck.numerics.certified.enclosures.fresh_pooled`), Arb's rigorous integrator for the
s-integral, proven bounds for its two tails added to the balls, and on long stretches (N small against
b) an entire stand-in integrand with a proven error bound
(:mod:`~stumpcheck.numerics.certified.enclosures.fresh_plateaus`). No sampling. The mean absolute
error is then bracketed, |bias| ≤ E|θ̂_N − θ| ≤ √MSE (Jensen; Cauchy–Schwarz).

N = 1 is exact in closed form for every estimator (θ̂₁ = x₁): bias ½ − θ, MSE (θ³ + (1 − θ)³)/3 and
E|x₁ − θ| = (θ² + (1 − θ)²)/2. The averaged estimator is refused: its MSE has the cross moment
E[(U/V)(U′/V′)] of two heads with different weights, a two-dimensional s-integral.

Precision: the enclosures aim at relative radius ``rel_width`` (default 10^{−dps}; the bias's
radius is measured against max(|bias|, √MSE), its natural scale, since the bias may vanish) at a
working precision of ⌈dps·log₂10⌉ + guard + log₂(2 + |a| + b) bits, raised by the bits a missed aim
shows (a few times at most). A ball wider than ``rel_width`` (given) or 10⁻⁸ (default) after those
attempts raises :class:`~stumpcheck.numerics.certified.enclosures.balls.EnclosureTooWide`; interval
inputs (a or b given as (lo, hi) or as Arb balls) give balls that hold for every point of the box, and
have no width requirement unless ``rel_width`` is given.
"""

from __future__ import annotations

import math
import time

from flint import acb, arb, ctx

from stumpcheck.numerics.certified.enclosures.balls import Enclosure, EnclosureTooWide, working_bits
from stumpcheck.numerics.certified.enclosures.fresh_inputs import (MAX_N, RISK_ESTIMATORS, RiskInputs, validate_inputs)
from stumpcheck.numerics.certified.enclosures.fresh_integrand import RiskIntegrand
from stumpcheck.numerics.certified.enclosures.fresh_plateaus import PlateauIntegrand, plateau_error, plateaus
from stumpcheck.numerics.certified.enclosures.fresh_result import FreshRisk
from stumpcheck.numerics.precision import InputError

__all__ = ["fresh_context_risk", "FreshRisk", "RISK_ESTIMATORS", "MAX_N", "DEFAULT_REQUIRED_WIDTH", "MAX_SIGMA_RANGE",
           "MAX_POOLED_RANGE"]

#: the widest relative radius accepted when ``rel_width`` is not given
DEFAULT_REQUIRED_WIDTH = 1e-8
_MAX_ATTEMPTS = 4
_EVAL_LIMIT = 400_000
#: longest σ-range (units of log s) integrated; it is about (b/N)·log(1/aim), and its long plateaus are cheap
MAX_SIGMA_RANGE = 10 ** 9
#: the same for the pooled estimator, whose x-integrals are quadratures and which has no plateaus
MAX_POOLED_RANGE = 300
_BOX_EVAL_LIMIT = 20_000
#: a box whose integrand spreads by more than 4× this (relative, see _box_width) is refused at once
_WIDEST_BOX = 0.05


def _box_width(integrand: RiskIntegrand, lo: int, hi: int) -> float:
    """Σ rad / Σ |mid| of the integrand over a σ-grid of [lo, hi] (each of bias and MSE, the larger):
    the relative width a parameter box alone gives the integral, which the integrator cannot beat."""
    totals = [[0.0, 0.0], [0.0, 0.0]]
    for k in range(1, 32):
        terms = integrand.risk_terms(acb(lo + (hi - lo) * k / 32))
        if terms is None:
            continue
        for total, term in zip(totals, terms):
            total[0] += float(term.real.rad())
            total[1] += abs(float(term.real.mid()))
    return min(max(rad / mid if mid > 0 else 0.0 for rad, mid in totals) / 4, 0.25)


def _weights(inputs: RiskInputs, prec: int):
    a, b, theta = inputs.balls()
    if inputs.estimator == "pooled":
        from stumpcheck.numerics.certified.enclosures.fresh_pooled import PooledWeights
        return PooledWeights(a, b, theta, inputs.N, prec)
    from stumpcheck.numerics.certified.enclosures.fresh_segments import ClosedFormWeights
    return ClosedFormWeights(a, b, theta, inputs.N, inputs.estimator, prec)


def _estimate(integrand: RiskIntegrand) -> tuple[float, float]:
    """Rough |bias| and MSE (trapezoid on a σ-grid): they only set κ and the tail tolerances."""
    d = float(integrand.max_length.mid())
    hi = 1
    while hi < 2 ** 22:
        tb, tm = integrand.upper_tails(arb(hi))
        if tb < 1e-14 * d and tm < 1e-14 * d * d:
            break
        hi *= 2
    lo = -40
    count = 160
    step = (hi - lo) / count
    bias = mse = 0.0
    for k in range(count + 1):
        terms = integrand.risk_terms(acb(lo + k * step))
        if terms is None:
            continue
        weight = 0.5 if k in (0, count) else 1.0
        bias += weight * step * float(terms[0].real.mid())
        mse += weight * step * float(terms[1].real.mid())
    return abs(bias), max(mse, 0.0)


def _sigma_range(integrand: RiskIntegrand, tol_bias: float, tol_mse: float) -> tuple[int, int]:
    """Integers σ_lo < σ_hi whose tail bounds are below the tolerances."""
    cb, cm = integrand.lower_tails(arb(0))  # the lower tails scale as e^σ and e^{2σ}
    lo = min(math.log(tol_bias / max(float(cb.mid()), 1e-300)),
             0.5 * math.log(tol_mse / max(float(cm.mid()), 1e-300)))
    lo = min(math.floor(lo), -1)
    hi, step = 1, 1
    while True:
        tb, tm = integrand.upper_tails(arb(hi))
        if tb < tol_bias and tm < tol_mse:
            break
        if hi > 2 ** 40:
            raise EnclosureTooWide("the upper tail of the s-integral does not fall below the tolerance")
        hi, step = hi + step, 2 * step
    low = max(lo + 1, hi - step // 2)  # bisect back to the smallest integer that passes
    while low < hi:
        mid = (low + hi) // 2
        tb, tm = integrand.upper_tails(arb(mid))
        if tb < tol_bias and tm < tol_mse:
            hi = mid
        else:
            low = mid + 1
    return lo, max(hi, lo + 1)


def _integrate(inputs: RiskInputs, prec: int, aim: float):
    """One rigorous evaluation at ``prec`` bits: (bias, mse) balls and how it went."""
    with ctx.workprec(prec):  # at the working precision: the closed forms cancel for small b·Δ
        estimator = RiskIntegrand(_weights(inputs, prec), inputs.N, prec)
        bias_est, mse_est = _estimate(estimator)
    scale = max(bias_est, math.sqrt(mse_est), 1e-300)
    kappa_float = scale / mse_est if mse_est > 0 else 1.0
    with ctx.workprec(prec):
        kappa = arb(kappa_float)
        integrand = RiskIntegrand(_weights(inputs, prec), inputs.N, prec, kappa)
        tol_bias, tol_mse = aim * scale / 16, aim * max(mse_est, 1e-300) / 16
        lo, hi = _sigma_range(integrand, tol_bias, tol_mse)
        if inputs.estimator == "pooled" and hi - lo > MAX_POOLED_RANGE:
            raise InputError(f"the pooled s-integral spans {hi - lo} units of log s (N = {inputs.N} is small against "
                             f"b), more than the {MAX_POOLED_RANGE} its x-quadratures allow (about 20 evaluations "
                             "a unit, each six quadratures); use a larger N")
        if hi - lo > MAX_SIGMA_RANGE:
            raise InputError(f"the s-integral spans {hi - lo} units of log s, more than the {MAX_SIGMA_RANGE} this "
                             "function integrates")
        goal = arb(2) ** (-math.ceil(-math.log2(aim)) - 8)  # the integrator's error adds up over subintervals
        if inputs.is_box:  # the box's own width sets what the integrator can reach: ask for no more
            width = _box_width(integrand, lo, hi)
            if width > _WIDEST_BOX:
                raise EnclosureTooWide(f"the (a, b) box alone spreads the integrand by more than {4 * _WIDEST_BOX:.0%} "
                                       "(relative): too wide to enclose in one evaluation; split the box")
            goal = goal.max(arb(width))
        limit = _BOX_EVAL_LIMIT if inputs.is_box else _EVAL_LIMIT
        value, stand_in_bias, stand_in_mse, stretches, calls = acb(0), arb(0), arb(0), [], 0
        for start, stop, large in _pieces(integrand.weights, lo, hi):
            if large is None:
                value += acb.integral(integrand, start, stop, rel_tol=goal, abs_tol=goal * arb(scale), eval_limit=limit)
                continue
            stand_in = PlateauIntegrand(integrand.weights, inputs.N, kappa, large)
            value += acb.integral(stand_in, start, stop, rel_tol=goal, abs_tol=goal * arb(scale), eval_limit=limit)
            error_bias, error_mse = plateau_error(integrand.weights, inputs.N, start, large)
            stand_in_bias += (stop - start) * error_bias
            stand_in_mse += (stop - start) * error_mse
            stretches.append([start, stop])
            calls += stand_in.calls
        tb_lo, tm_lo = integrand.lower_tails(arb(lo))
        tb_hi, tm_hi = integrand.upper_tails(arb(hi))
        bias = value.real + arb(0, (tb_lo + tb_hi + stand_in_bias).upper())
        tail = arb((tm_lo + tm_hi).upper())
        mse = value.imag / kappa + arb(tail / 2, arb(tail / 2).upper()) + arb(0, stand_in_mse.upper())
    info = {"sigma_range": [lo, hi], "evaluations": integrand.calls + calls, "kappa": kappa_float,
            "tails": {"bias_below": _text(tb_lo), "bias_above": _text(tb_hi), "mse_below": _text(tm_lo),
                      "mse_above": _text(tm_hi)},
            "plateaus": {"stretches": stretches, "bias_error": _text(stand_in_bias), "mse_error": _text(stand_in_mse)}}
    return bias, mse, info


def _pieces(weights, lo: int, hi: int) -> list[tuple[int, int, dict | None]]:
    """[lo, hi] cut into the plateaus of :func:`plateaus` (closed-form weights only) and the stretches between."""
    if not hasattr(weights, "z0"):
        return [(lo, hi, None)]
    out, cursor = [], lo
    for start, stop, large in plateaus(weights, lo, hi):
        if start > cursor:
            out.append((cursor, start, None))
        out.append((start, stop, large))
        cursor = stop
    if cursor < hi:
        out.append((cursor, hi, None))
    return out


def _text(x: arb) -> str:
    return x.str(3, radius=False)


def _relative_widths(bias: arb, mse: arb) -> tuple[float, float]:
    """rad(bias)/max(|bias|, √MSE) and rad(MSE)/|MSE| as floats (inf when not finite or not positive)."""
    if not (bias.is_finite() and mse.is_finite()) or not mse.mid() > 0:
        return math.inf, math.inf
    root = math.sqrt(float(mse.mid()))
    scale = max(abs(float(bias.mid())), root)
    return float(bias.rad()) / scale, float(mse.rad()) / float(mse.mid())


def fresh_context_risk(a, b, theta, N, *, estimator: str = "one-head", dps: int = 30, rel_width=None) -> FreshRisk:
    """Certified bias, MSE and mean-absolute-error bracket of a frozen (a, b) on fresh contexts of N points.

    ``a``, ``b``: numbers (int, float, decimal string, Decimal, Fraction, mpf), Arb balls or intervals
    (lo, hi), b > 0; ``theta`` ∈ [0, 1] a number (θ = 0: every point labelled 1; θ = 1: labels 0 almost
    surely); ``N`` an int in [1, 10⁹]; ``estimator`` one-head, reflected or pooled (averaged: refused,
    see the module docstring); ``dps`` in [15, 10000]; ``rel_width`` the widest relative radius accepted
    (default: aim at 10^{−dps}, accept up to 10⁻⁸). Returns a :class:`FreshRisk` whose ``bias`` and
    ``mse`` are :class:`Enclosure` balls and whose ``mean_abs_error`` is the certified bracket
    ``[|bias|, √MSE]`` (exact for N = 1). Evidence: certified. Bad input:
    :class:`~stumpcheck.numerics.precision.InputError`; a ball too wide: :class:`EnclosureTooWide`.

        >>> from stumpcheck.numerics.certified.enclosures.fresh_risk import fresh_context_risk
        >>> one = fresh_context_risk(25, 20, 0.25, 1, dps=20)          # N = 1: θ̂ = x₁, exact
        >>> one.bias.contains(0.25), one.mean_abs_error.contains(0.3125)
        (True, True)
        >>> risk = fresh_context_risk(25, 20, "0.4", 10, dps=15, rel_width=1e-10)
        >>> risk.bounds("bias"), risk.evidence  # doctest: +ELLIPSIS
        (['0.10661634602...', '0.10661634602...'], 'certified')
    """
    inputs = validate_inputs(a, b, theta, N, estimator=estimator, dps=dps, rel_width=rel_width)
    started = time.perf_counter()
    aim = inputs.rel_width if inputs.rel_width is not None else 10.0 ** (-inputs.dps)
    required = inputs.rel_width if inputs.rel_width is not None else (None if inputs.is_box else DEFAULT_REQUIRED_WIDTH)
    with ctx.workprec(64):
        a0, b0, _ = inputs.balls()
        bits = working_bits(inputs.dps, float(abs(a0).upper()), float(b0.upper())) + math.ceil(math.log2(inputs.N + 1) / 2)
    if inputs.N == 1:
        return _single_point(inputs, bits, started)
    attempts = []
    for _ in range(_MAX_ATTEMPTS):
        bias, mse, info = _integrate(inputs, bits, aim)
        rel_bias, rel_mse = _relative_widths(bias, mse)
        attempts.append({"prec_bits": bits, "relative_radius_bias": rel_bias, "relative_radius_mse": rel_mse, **info})
        worst = max(rel_bias, rel_mse)
        if worst <= (aim if required is None else min(aim, required)) * 4 and (required is None or worst <= required) \
                or inputs.is_box:
            break
        missing = math.ceil(math.log2(worst / aim)) if math.isfinite(worst) else bits
        bits += max(32, missing + 16)
    if not (bias.is_finite() and mse.is_finite()):
        raise EnclosureTooWide(f"the fresh-context risk enclosures are not finite after {len(attempts)} attempts up to "
                               f"{bits} bits" + (" (the parameter box may be too wide: split it)" if inputs.is_box else ""))
    if required is not None and not max(rel_bias, rel_mse) <= required:
        raise EnclosureTooWide(f"the fresh-context risk enclosures reached relative radius {max(rel_bias, rel_mse):.3g} "
                               f"(bias {rel_bias:.3g}, MSE {rel_mse:.3g}) after {len(attempts)} attempts up to "
                               f"{bits} bits, wider than the required {required:g}")
    return FreshRisk.build(inputs, bias, mse, prec_bits=bits, seconds=time.perf_counter() - started,
                           method="s-integral (acb.integral) with closed-form x-integrals" if inputs.estimator != "pooled"
                           else "s-integral (acb.integral) with x-integrals by acb.integral",
                           attempts=attempts)


def _single_point(inputs: RiskInputs, bits: int, started: float) -> FreshRisk:
    """N = 1: θ̂ = x₁ whatever the weights, so bias, MSE and E|x₁ − θ| are polynomials in θ."""
    with ctx.workprec(bits):
        _, _, theta = inputs.balls()
        bias = arb(1) / 2 - theta
        mse = (theta ** 3 + (1 - theta) ** 3) / 3
        mean_abs = (theta ** 2 + (1 - theta) ** 2) / 2
    return FreshRisk.build(inputs, bias, mse, prec_bits=bits, seconds=time.perf_counter() - started,
                           method="closed form (N = 1: the estimate is the single point)", attempts=[],
                           mean_abs=mean_abs)
