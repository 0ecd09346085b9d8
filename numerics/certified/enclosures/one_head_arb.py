"""The one-head e, ∇e, ∇²e in real Arb balls from the tilted-moment closed forms: one exponential per segment.

The same mathematics as the float64 node of :mod:`stumpcheck.numerics.population.one_head_float64` (its
docstring derives it), in python-flint ``arb`` balls at the current ``flint.ctx.prec``: at a
threshold θ ∈ (0, 1) with u = 1 − θ, segment rates β_R = bu and β_L = bθ, and for each segment
E = 1 − e^{−β}, q = e^{−β}, p = q/E = 1/(e^β − 1),

    κ₁ = 1/β − p,   κ₂ = 1/β² − p(1 + p),   κ₃ = 2/β³ − p(1 + p)(1 + 2p),

the right weight w = σ(z) with z = a − bθ + log E_R − log E_L, taken without logarithms as

    w = E_R X / (E_L + E_R X),   1 − w = E_L / (E_L + E_R X),   X = e^{a − bθ} = e^{a}·q_L = e^{a − b}/q_R,

(both quotients of positive terms) and, with Δ = uκ₁(β_R) + θ(1 − κ₁(β_L)), V_R = u²κ₂(β_R),
V_L = θ²κ₂(β_L), T_R = u³κ₃(β_R), T_L = θ³κ₃(β_L):

    e = w·uκ₁(β_R) − (1 − w)·θ(1 − κ₁(β_L)),   ∂e/∂a = w(1 − w)Δ,   ∂e/∂b = −[wV_R + (1 − w)V_L + w(1 − w)Δ²],
    ∂²e/∂a² = w(1 − w)(1 − 2w)Δ,   ∂²e/∂a∂b = −w(1 − w)[V_R − V_L + (1 − 2w)Δ²],
    ∂²e/∂b² = wT_R + (1 − w)T_L + 3w(1 − w)Δ(V_R − V_L) + w(1 − w)(1 − 2w)Δ³.

Where β is small the closed forms of κ_k cancel (κ₁ → ½, κ₂ → 1/12, κ₃ ≈ β/120, from terms of
size 1/β^k): below β = 4 they are evaluated at 2·log₂(4/β) + 16 more bits (κ₂), or 4·log₂(4/β) + 16
(κ₃), from the exact product β and with E from expm1, so that they keep the working precision's
relative accuracy. Every operation is a ball operation, so the results enclose the exact values at
the given a, b, θ, u; they are what the generated ``error_and_gradient_one_head`` and
``error_jet_one_head`` (:mod:`stumpcheck.numerics.generated.population_arb`) enclose, with about a fifth of
the ball operations and no complex balls, series or logarithms (tests compare the two).

Domain: a, b real with b > 0, θ and u = 1 − θ balls in (0, 1) (a quadrature node and its
complement, each enclosing the exact value); for θ or u not in (0, 1) the result is not defined
here (use the generated code). Evidence: the balls enclose the rounding; the caller's quadrature
rule decides what the values are evidence of.
"""

from __future__ import annotations

import math

from flint import arb, ctx

__all__ = ["exp_a", "segment_cumulants", "one_head_jet"]

#: Below this rate the closed forms of κ_k are evaluated with extra bits.
_RAISE_BELOW = 4.0


def segment_cumulants(b: arb, length: arb, order: int) -> tuple:
    """(E, q, κ₁, …, κ_order) of one segment of ``length`` (θ or 1 − θ) at rate β = b·length > 0,
    order 2 or 3 (module docstring).

    Where the closed forms cancel (β < 4) the product β is formed exactly (at thrice the working
    precision: b and an exact node have at most the working precision's bits, and a complement 1 − θ
    at most twice that), since the rounding of β would otherwise enter κ_k multiplied by 1/β^(k+1).
    """
    mid = float(b) * float(length)
    if mid < _RAISE_BELOW:
        prec = ctx.prec
        try:
            # (ctx.prec set directly: ctx.workprec costs more than the rest of a node)
            ctx.prec = 3 * prec + 32
            beta = b * length
            # bits the forms cancel: log₂(2/β), log₂(12/β²), log₂(240/β⁴) for κ₁, κ₂, κ₃ (κ₃ ≈ β/120)
            log2_beta = math.log2(mid) if mid > 1e-250 else _log2_below(beta)
            ctx.prec = prec + int((2 * order - 2) * (math.log2(_RAISE_BELOW) - log2_beta)) + 16
            rest = -(-beta).expm1()
            return _cumulants(beta, rest, 1 - rest, order)
        finally:
            ctx.prec = prec
    beta = b * length
    q = (-beta).exp()
    return _cumulants(beta, 1 - q, q, order)


def _log2_below(beta: arb) -> float:
    """An upper bound of log₂ β for a positive exact ball β below float64's range (a node a
    switch layer at 1 − θ ≈ 10⁻⁴⁰⁰ puts there): from its binary exponent."""
    mantissa, exponent = beta.mid().man_exp()
    return float(int(exponent) + int(mantissa).bit_length())


def _cumulants(beta, rest, q, order):
    p = q / rest
    inv = 1 / beta
    p_one = p * (1 + p)
    k2 = inv * inv - p_one
    if order == 2:
        return rest, q, inv - p, k2
    return rest, q, inv - p, k2, 2 * inv * inv * inv - p_one * (1 + 2 * p)


def exp_a(a: arb, b: arb) -> tuple[arb, arb]:
    """(e^a, e^{a − b}): the factors of X = e^{a − bθ} shared by every node of one evaluation."""
    return a.exp(), (a - b).exp()


def one_head_jet(b: arb, factors: tuple, theta: arb, rest: arb, hessian: bool, upper: bool) -> tuple:
    """(e, ∂e/∂a, ∂e/∂b) or, with ``hessian``, also (∂²e/∂a², ∂²e/∂a∂b, ∂²e/∂b²) at one node.

    ``factors`` = :func:`exp_a` (a, b); ``theta`` and ``rest`` balls in (0, 1) that contain a θ and
    1 − θ (exact for the narrowest balls: the node, and its complement at twice the working
    precision); ``upper``: θ ≥ ½ (X is then formed from e^{−bu}, else from e^{−bθ}: the smaller rate,
    whose exponential loses fewer bits).
    """
    order = 3 if hessian else 2
    right = segment_cumulants(b, rest, order)
    left = segment_cumulants(b, theta, order)
    e_a, e_a_minus_b = factors
    mass_right = right[0] * (e_a_minus_b / right[1] if upper else e_a * left[1])
    total = left[0] + mass_right
    w, v = mass_right / total, left[0] / total
    mean_right = rest * right[2]
    mean_left = theta * (1 - left[2])
    delta = mean_right + mean_left
    wv = w * v
    rest2, theta2 = rest * rest, theta * theta
    var_right, var_left = rest2 * right[3], theta2 * left[3]
    e = w * mean_right - v * mean_left
    ea = wv * delta
    delta2 = delta * delta
    eb = -(w * var_right + v * var_left + wv * delta2)
    if not hessian:
        return e, ea, eb
    tilt = v - w
    spread = var_right - var_left
    eaa = wv * tilt * delta
    eab = -wv * (spread + tilt * delta2)
    ebb = (w * (rest2 * rest) * right[4] + v * (theta2 * theta) * left[4] + 3 * wv * delta * spread
           + wv * tilt * delta2 * delta)
    return e, ea, eb, eaa, eab, ebb
