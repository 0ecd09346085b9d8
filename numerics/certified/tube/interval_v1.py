"""One interval of the first-version tube (format /1, kept for its re-check): Hermite piece, defect, log norm, radius.

In log time s = log(1 + t) the population flow is dz/ds = F(s, z) = −e^s ∇L(z), z = (a, b). On an
interval S = [s₀, s₁] (h = s₁ − s₀) the approximate solution z̃ is the cubic Hermite interpolant of two
nodes (s_i, z_i, z̃'(s_i)) whose entries are float64 numbers (exact binary rationals, so the piece is the
same exact polynomial wherever it is re-evaluated), with τ = (s − s₀)/h,

    z̃(s) = z₀ + c₁τ + c₂τ² + c₃τ³,   c₁ = h f₀,  c₂ = 3(z₁ − z₀) − h(2f₀ + f₁),  c₃ = 2(z₀ − z₁) + h(f₀ + f₁).

**Defect.** d(s) = z̃'(s) − F(s, z̃(s)) = z̃'(s) + e^s ∇L(z̃(s)). At a node it is a rigorous point
θ-integral (:func:`stumpcheck.numerics.certified.enclosures.theta_integrals.certified_loss_gradient` at the node's exact
(a, b)); the node's slope f_i is the float64 midpoint of −e^{s_i}∇L, so d(s_i) is tiny. Between the
nodes, by the mean-value theorem on each half of S,

    d(s) ∈ d(s₀) + d'(S)·[0, h/2]  (first half),   d(s) ∈ d(s₁) − d'(S)·[0, h/2]  (second half),
    d'(s) = z̃''(s) + e^s ∇L(z̃(s)) + e^s ∇²L(z̃(s)) z̃'(s),

with ∇L and ∇²L enclosed over the hull of z̃(S) (only z̃ enters the defect, not the unknown z) by
``acb.integral`` with ball parameters (the integrand balls contain the integrand at every (a, b) of the
box, so the integral's ball contains the integral at every point of it). δ = sup_S ‖d‖₂ is bounded by
the larger of the two halves.

**Logarithmic norm.** ∂F/∂z = −e^s ∇²L is symmetric, so in the Euclidean norm its logarithmic norm is
−e^s λ_min(∇²L). Over the box W = hull z̃(S) ± ρ (a second Hessian integral), λ_min = (p + r)/2 − √(((p − r)/2)² + q²) is evaluated on the balls
(p, q, r) = (L_aa, L_ab, L_bb)(W): this encloses λ_min of every symmetric matrix with entries in those
balls, in particular of the averaged Jacobian ∫₀¹ ∇²L(z̃ + σw) dσ whenever z̃ and z lie in W (W is
convex). μ = max_{s ∈ S} (−e^s λ_min) is taken at s₀ or s₁ by the sign of the lower bound.

**Radius (the bootstrap).** W = hull z̃(S) ± ρ for an a-priori radius ρ. While ‖w‖ = ‖z − z̃‖ ≤ ρ,
z ∈ W and D⁺‖w‖ ≤ μ‖w‖ + δ, hence ‖w(s)‖ ≤ r(s) = e^{μ(s−s₀)} r₀ + δ (e^{μ(s−s₀)} − 1)/μ, which is
monotone in s, so sup_S r = max(r₀, r(s₁)). If that is < ρ the solution never reaches ‖w‖ = ρ on S
(continuity), and z(s) ∈ hull z̃(S) ± sup r for every s ∈ S: the interval's box. Both formulas are
increasing in μ and δ, so recorded upper bounds of μ and δ give a valid radius.
"""

from __future__ import annotations

from dataclasses import dataclass

from flint import arb

from stumpcheck.numerics.certified.enclosures.balls import mpf_to_arb
from stumpcheck.numerics.certified.enclosures.theta_integrals import certified_loss_gradient, certified_loss_hessian

__all__ = ["Node", "node_defect", "hermite_piece", "piece_hull", "IntervalBounds", "interval_bounds", "radius_bound"]

#: τ-subranges used to enclose z̃, z̃', z̃'' over S (a tighter hull than one Horner evaluation on [0, 1])
_HULL_PIECES = 8


@dataclass(frozen=True)
class Node:
    """A node of the approximate solution: log time s, the state (a, b) and the slope (fa, fb) of z̃ there."""

    s: float
    a: float
    b: float
    fa: float
    fb: float


def _ball(enclosure) -> arb:
    return mpf_to_arb(enclosure.lower).union(mpf_to_arb(enclosure.upper))


def gradient_balls(a: arb, b: arb, dps: int) -> tuple[arb, arb]:
    """Balls containing ∇L at every (a, b) in the balls a × b (rigorous θ-integrals)."""
    ga, gb = certified_loss_gradient(a, b, dps=dps)
    return _ball(ga), _ball(gb)


def hessian_balls(a: arb, b: arb, dps: int) -> tuple[arb, arb, arb]:
    """Balls containing (L_aa, L_ab, L_bb) at every (a, b) in the balls a × b."""
    return tuple(_ball(x) for x in certified_loss_hessian(a, b, dps=dps))


def node_defect(node: Node, dps: int) -> tuple[arb, arb]:
    """Balls containing d(s) = z̃'(s) + e^s ∇L(z̃(s)) at the node (z̃ = (a, b), z̃' = (fa, fb) there)."""
    ga, gb = gradient_balls(arb(node.a), arb(node.b), dps)
    scale = arb(node.s).exp()
    return arb(node.fa) + scale * ga, arb(node.fb) + scale * gb


def hermite_piece(n0: Node, n1: Node, tau: arb):
    """(z̃, z̃', z̃'') at τ (a ball in [0, 1]) of the cubic Hermite piece between the nodes; each a pair of balls."""
    h = arb(n1.s) - arb(n0.s)
    out = []
    for z0, z1, f0, f1 in ((n0.a, n1.a, n0.fa, n1.fa), (n0.b, n1.b, n0.fb, n1.fb)):
        z0, z1, f0, f1 = arb(z0), arb(z1), arb(f0), arb(f1)
        c1 = h * f0
        c2 = 3 * (z1 - z0) - h * (2 * f0 + f1)
        c3 = 2 * (z0 - z1) + h * (f0 + f1)
        value = z0 + tau * (c1 + tau * (c2 + tau * c3))
        slope = (c1 + tau * (2 * c2 + tau * (3 * c3))) / h
        curvature = (2 * c2 + 6 * c3 * tau) / (h * h)
        out.append((value, slope, curvature))
    (a, da, dda), (b, db, ddb) = out
    return (a, b), (da, db), (dda, ddb)


def _tau_range(lo, hi) -> arb:
    return arb(lo).union(arb(hi))


def piece_hull(n0: Node, n1: Node):
    """Balls containing (z̃, z̃', z̃'') over the whole interval (union over τ-subranges)."""
    hull = None
    for k in range(_HULL_PIECES):
        tau = _tau_range(arb(k) / _HULL_PIECES, arb(k + 1) / _HULL_PIECES)
        z, dz, ddz = hermite_piece(n0, n1, tau)
        parts = (*z, *dz, *ddz)
        hull = parts if hull is None else tuple(x.union(y) for x, y in zip(hull, parts))
    a, b, da, db, dda, ddb = hull
    return (a, b), (da, db), (dda, ddb)


def _abs_upper(x: arb) -> arb:
    return abs(x).upper()


def _norm_upper(x: arb, y: arb) -> arb:
    return (_abs_upper(x) ** 2 + _abs_upper(y) ** 2).sqrt().upper()


@dataclass(frozen=True)
class IntervalBounds:
    """What one interval's validation computed: the box W of the a-priori radius, δ = sup ‖d‖₂ and μ (upper
    bounds, exact arb numbers), the Hessian balls over W and z̃'s hull over S (for the box)."""

    window: tuple          # (a ball, b ball) = hull z̃(S) ± ρ
    hull: tuple            # (a ball, b ball) = hull z̃(S)
    delta: arb
    mu: arb
    lambda_min: arb        # ball containing λ_min(∇²L) over W
    hessian: tuple


def interval_bounds(n0: Node, n1: Node, d0, d1, rho: arb, dps: int) -> IntervalBounds:
    """δ and μ on [n0.s, n1.s] for the a-priori radius ρ (see the module doc); d0, d1 are the node defects."""
    (ha, hb), (dza, dzb), (ddza, ddzb) = piece_hull(n0, n1)
    # the defect involves z̃ only: its integrals are over the hull of z̃(S), not over W
    ga, gb = gradient_balls(ha, hb, dps)
    p0, q0, r0 = hessian_balls(ha, hb, dps)
    wa = ha + arb(0, rho)
    wb = hb + arb(0, rho)
    p, q, r = hessian_balls(wa, wb, dps)
    s0, s1 = arb(n0.s), arb(n1.s)
    scale = s0.union(s1).exp()
    prime_a = ddza + scale * (ga + p0 * dza + q0 * dzb)
    prime_b = ddzb + scale * (gb + q0 * dza + r0 * dzb)
    half = (s1 - s0) / 2
    step = arb(0).union(half)
    delta = _norm_upper(d0[0] + prime_a * step, d0[1] + prime_b * step)
    second = _norm_upper(d1[0] - prime_a * step, d1[1] - prime_b * step)
    delta = max(delta, second)
    lam = (p + r) / 2 - (((p - r) / 2) ** 2 + q * q).sqrt()
    lam_lo = lam.lower()
    at = s0 if lam_lo >= 0 else s1
    mu = (-(at.exp()) * lam_lo).upper()
    return IntervalBounds(window=(wa, wb), hull=(ha, hb), delta=delta, mu=mu, lambda_min=lam, hessian=(p, q, r))


def radius_bound(r0: arb, delta: arb, mu: arb, h: arb) -> arb:
    """An upper bound of e^{μh} r₀ + δ (e^{μh} − 1)/μ (= r₀ + δh at μ = 0), for exact μ, δ, r₀ ≥ 0."""
    x = mu * h
    if mu == 0:
        phi = h
    else:
        phi = x.expm1() / mu
    return (x.exp() * r0 + delta * phi).upper()
