"""A certified tube around the population flow: boxes that provably contain (a(t), b(t)) for t ∈ [0, T].

Method: a-posteriori validation of a float64 solution, chosen because the field is stiff and contracting
and each rigorous evaluation of it (a θ-integral with ``acb.integral``) costs about a second: the float64
solver does the stepping, and only a few rigorous integrals per interval are needed (∇L at each node, ∇L
and ∇²L over one box per interval), whatever the stiffness. A Lohner/Picard method would need rigorous
enclosures of F over boxes at every stage and its step is limited by the stiff eigenvalue.

In s = log(1 + t) (dz/ds = F(s, z) = −e^s ∇L(z)) the float64 flow (scipy's Radau with the exact Jacobian,
the field of the compiled one-head quadrature as in :class:`numerics.flow.field.PopulationFlowField`)
gives nodes s_k, z_k; the node slope is the float64
midpoint of the rigorous −e^{s_k}∇L(z_k), so the interpolant's defect at a node is tiny. On each interval
:mod:`numerics.certified.tube_interval` bounds the defect δ_k of the cubic Hermite piece and the
logarithmic norm μ_k of ∂F/∂z over a box of a-priori radius ρ_k around the piece, and the Gronwall bound
gives the radius r_{k+1} ≥ ‖z(s_{k+1}) − z_{k+1}‖ from r_k and the interval's box Z_k (confirmed when the
bound stays below ρ_k). δ_k, μ_k and r are recorded as decimals rounded up (δ, μ padded by a small relative
margin so that a re-check at another precision reproduces them as bounds), and the next interval starts
from the recorded r_{k+1}: the certificate is the chain of these records.

Step control: δ ≈ K h² (a first-order form on each half interval), so the next h is scaled by
√(δ_goal/δ) within [½, 2]; an interval whose δ exceeds δ_goal = rel_goal·b/s_T is recomputed with a
smaller h. Validation stops (never a partial tube called complete) when h falls below ``min_step``, the
radius is not confirmed after a few enlargements of ρ, or a rigorous integral fails; the result says
where and why.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass, field

import numpy as np
from fractions import Fraction

from flint import arb, ctx, fmpq

from numerics.certified.balls import working_bits
from numerics.certified.tube_interval import Node, gradient_balls, interval_bounds, radius_bound
from numerics.certified.tube_numbers import exact_fraction, padded_upper, parse_upper, upper_decimal
from numerics.precision import InputError

__all__ = ["TubeInterval", "Tube", "certified_tube", "MAX_TUBE_T", "check_tube_arguments"]

#: The largest T accepted (s_T = log(1 + T) ≈ 27.6); the target of this version is 10⁶.
MAX_TUBE_T = 1e12
#: ρ = this × the predicted radius (plus ``_RHO_FLOOR``) on the first attempt: a wider ρ widens the box of
#: the integrals (and the rigorous integrals over wide boxes fail), a narrower one is refuted more often
_RHO_FACTOR = 1.5
_RHO_FLOOR = 1e-14
_RHO_ATTEMPTS = 3
#: relative padding of the recorded δ and μ (μ: also of e^s times the Hessian balls' radii): the balls of a
#: re-check at another precision differ by a fraction of their widths, and must stay below the records
PADDING = 0.05


@dataclass
class TubeInterval:
    """One validated interval [s0, s1] with its nodes, bounds (decimal strings, upper bounds) and box."""

    n0: Node
    n1: Node
    rho: str
    r_start: str
    r_end: str
    r_sup: str
    delta: str
    mu: str
    box: tuple  # (a_lo, a_hi, b_lo, b_hi) as arb exact balls (outward ends)


@dataclass
class Tube:
    """The validated intervals from s = 0 up to ``s_reached``; ``complete`` iff s_reached ≥ log(1 + T)."""

    a0: float
    b0: float
    r0: str
    t_max: float
    intervals: list = field(default_factory=list)
    complete: bool = False
    stop_reason: str = ""
    dps: int = 20
    seconds: float = 0.0
    rigorous_integrals: int = 0
    rejected: int = 0

    @property
    def s_reached(self) -> float:
        return self.intervals[-1].n1.s if self.intervals else 0.0

    @property
    def t_reached(self) -> float:
        return math.expm1(self.s_reached)


def check_tube_arguments(a0: float, b0: float, t_max: float, rel_goal: float, r0: float = 0.0) -> None:
    """InputError (one line) unless the request can be attempted."""
    for name, value in (("a0", a0), ("b0", b0), ("t-max", t_max), ("rel-goal", rel_goal), ("initial radius", r0)):
        if not math.isfinite(value):
            raise InputError(f"{name} must be a finite number, got {value}")
    if not 1 <= b0 <= 1e3 or abs(a0) > 1e3:
        raise InputError(f"the certified tube starts from 1 <= b0 <= 1000 and |a0| <= 1000, got a0={a0}, b0={b0}")
    if not 0 < t_max <= MAX_TUBE_T:
        raise InputError(f"t-max must be in (0, {MAX_TUBE_T:g}] for the certified tube, got {t_max:g}")
    if not 1e-12 <= rel_goal < 1:
        raise InputError(f"rel-goal must be in [1e-12, 1), got {rel_goal:g}")
    if not 0 <= r0 < 1:
        raise InputError(f"the initial radius must be in [0, 1), got {r0:g}")


def _float_field(s: float, z, jacobian: bool = False):
    """F(s, z) = −e^s ∇L(z) (or ∂F/∂z = −e^s ∇²L) in float64 by the compiled one-head quadrature
    (:mod:`numerics.population.one_head_float64`, the float64 flow's own field; not part of any proof)."""
    from numerics.population.one_head_float64 import loss_gradient_hessian

    a, b = float(z[0]), float(z[1])
    if not (b >= 1e-3 and math.isfinite(a) and math.isfinite(b)):
        raise ArithmeticError(f"state outside the domain b > 0: {z}")
    _, gradient, hessian = loss_gradient_hessian(a, b, hessian=jacobian)
    return -math.exp(s) * (hessian if jacobian else gradient)


def _float_step(s0: float, z0, s1: float):
    """z(s1) from z(s0) by scipy's Radau at rtol 1e-12 with the exact Jacobian (float64; not part of any proof)."""
    from scipy.integrate import solve_ivp

    solution = solve_ivp(_float_field, (s0, s1), np.asarray(z0, dtype=float), method="Radau", rtol=1e-12,
                         atol=1e-13, jac=lambda s, z: _float_field(s, z, jacobian=True))
    if not solution.success:
        raise ArithmeticError(f"the float64 solve failed: {solution.message}")
    return solution.y[:, -1]


def _node(s: float, a: float, b: float, dps: int):
    """The node at (s, a, b) with slope the float64 midpoint of −e^s∇L(a, b), and its defect balls."""
    ga, gb = gradient_balls(arb(a), arb(b), dps)
    scale = arb(s).exp()
    node = Node(s, a, b, float((-scale * ga).mid()), float((-scale * gb).mid()))
    return node, node_defect_from(node, ga, gb)


def node_defect_from(node: Node, ga: arb, gb: arb):
    scale = arb(node.s).exp()
    return arb(node.fa) + scale * ga, arb(node.fb) + scale * gb


def interval_box(hull, r_sup: arb) -> tuple:
    """(a_lo, a_hi, b_lo, b_hi): exact arb ends of hull z̃(S) ± r_sup, rounded outward."""
    ha, hb = hull
    return ((ha.lower() - r_sup).lower(), (ha.upper() + r_sup).upper(),
            (hb.lower() - r_sup).lower(), (hb.upper() + r_sup).upper())


def _validate(n0, n1, d0, d1, r0_text, rho_guess, dps):
    """(TubeInterval, δ) for the interval, or (None, reason). Tries up to ``_RHO_ATTEMPTS`` a-priori radii."""
    r0 = parse_upper(r0_text)
    h = arb(n1.s) - arb(n0.s)
    rho = rho_guess
    for _ in range(_RHO_ATTEMPTS):
        rho_text = upper_decimal(arb(rho), 3)
        bounds = interval_bounds(n0, n1, d0, d1, parse_upper(rho_text), dps)
        delta_text = padded_upper(bounds.delta, PADDING, 6)
        spread = sum(float(x.rad()) for x in bounds.hessian) * math.exp(n1.s)
        mu_text = padded_upper(bounds.mu, PADDING, 6, absolute=PADDING * spread)
        r_end = radius_bound(r0, parse_upper(delta_text), parse_upper(mu_text), h)
        r_end_text = padded_upper(r_end, 1e-9, 6)  # room for a re-check's rounding
        r_sup = max(r0, parse_upper(r_end_text))
        r_sup_text = upper_decimal(r_sup, 6)
        if exact_fraction(r_sup_text) < exact_fraction(rho_text):
            box = interval_box(bounds.hull, parse_upper(r_sup_text))
            return TubeInterval(n0, n1, rho_text, r0_text, r_end_text, r_sup_text, delta_text, mu_text, box), bounds
        rho = 2 * float(r_sup.mid()) + _RHO_FLOOR
    return None, (f"the a-priori radius was not confirmed on s in [{n0.s:.6g}, {n1.s:.6g}] "
                  f"(bound {float(r_sup.mid()):.3e} >= rho {float(rho):.3e}; mu <= {mu_text}, delta <= {delta_text})")


def certified_tube(a0: float = 10.0, b0: float = 10.0, t_max: float = 100.0, *, rel_goal: float = 1e-6,
                   r0: float = 0.0, dps: int = 20, first_step: float = 0.02, min_step: float = 1e-5,
                   max_intervals: int = 100_000, time_limit: float | None = None, progress=None) -> Tube:
    """The certified tube from the disk of radius r0 (a float or a Fraction) about (a0, b0) to T = t_max
    (see the module doc).

    ``rel_goal``: the defect goal per unit s is rel_goal·b/s_T (with μ ≤ 0 the radius grows by at most
    rel_goal·b over [0, s_T]); ``progress(fraction of s_T)`` is called after each interval; after
    ``time_limit`` seconds the tube stops (incomplete, and says so).
    """
    check_tube_arguments(a0, b0, t_max, rel_goal, float(r0))
    started = time.perf_counter()
    # a float at or above log(1 + T) (the re-check confirms e^{s_end} - 1 >= T with Arb)
    s_end = math.nextafter(math.nextafter(math.log1p(t_max), math.inf), math.inf)
    r0 = Fraction(r0)  # exact (a float is its exact binary value)
    with ctx.workprec(128):
        r0_text = upper_decimal(arb(fmpq(r0.numerator, r0.denominator)), 6)
    tube = Tube(a0=float(a0), b0=float(b0), r0=r0_text, t_max=float(t_max), dps=dps)
    bits = working_bits(dps, abs(a0) + 100, b0 + 100)
    h = min(first_step, s_end)
    with ctx.workprec(bits):
        try:
            n0, d0 = _node(0.0, float(a0), float(b0), dps)
        except ArithmeticError as exc:
            tube.stop_reason = f"the rigorous gradient at the start failed: {exc}"
            return tube
        tube.rigorous_integrals += 1
        r_text = tube.r0
        predicted = 0.0
        while n0.s < s_end and len(tube.intervals) < max_intervals:
            if time_limit is not None and time.perf_counter() - started > time_limit:
                tube.stop_reason = f"the time limit of {time_limit:g} s was reached at t = {math.expm1(n0.s):.6g}"
                break
            s1 = min(n0.s + h, s_end)
            if s_end - s1 < 1e-3 * h:
                s1 = s_end
            try:
                z1 = _float_step(n0.s, (n0.a, n0.b), s1)
                n1, d1 = _node(s1, float(z1[0]), float(z1[1]), dps)
                tube.rigorous_integrals += 1
                rho_guess = _RHO_FACTOR * max(float(parse_upper(r_text).mid()), predicted) + _RHO_FLOOR
                interval, bounds = _validate(n0, n1, d0, d1, r_text, rho_guess, dps)
                tube.rigorous_integrals += 3
            except ArithmeticError as exc:
                interval, bounds = None, f"a rigorous θ-integral failed on s in [{n0.s:.6g}, {s1:.6g}]: {exc}"
            if interval is None:  # not validated: a shorter interval, down to min_step
                h = 0.5 * (s1 - n0.s)
                tube.rejected += 1
                if h < min_step:
                    tube.stop_reason = bounds
                    break
                continue
            goal = rel_goal * max(n0.b, 1.0) / s_end
            delta = float(parse_upper(interval.delta).mid())
            if delta > goal and s1 - n0.s > min_step:
                tube.rejected += 1
                h = max(0.5, min(0.9, 0.9 * math.sqrt(goal / delta))) * (s1 - n0.s)
                if h < min_step:
                    tube.stop_reason = (f"the step fell below {min_step:g} at s = {n0.s:.6g} "
                                        f"(t = {math.expm1(n0.s):.6g}): defect {delta:.3e} > goal {goal:.3e}")
                    break
                continue
            tube.intervals.append(interval)
            # the next radius if the defect stays as it is (μ ≈ 0): r_end + δ·h_next
            r_end = float(parse_upper(interval.r_end).mid())
            h = min(2.0, max(0.5, 0.9 * math.sqrt(goal / max(delta, 1e-300)))) * (s1 - n0.s)
            predicted = r_end + delta * h
            n0, d0, r_text = n1, d1, interval.r_end
            if progress is not None:
                progress(min(1.0, n0.s / s_end))
    tube.complete = bool(tube.intervals) and tube.intervals[-1].n1.s >= s_end
    if not tube.complete and not tube.stop_reason:
        tube.stop_reason = f"stopped after {len(tube.intervals)} intervals (max_intervals)"
    tube.seconds = time.perf_counter() - started
    return tube
