"""The x-integrals of the exact fresh-context risk, in closed form on each segment (docs/fresh_risk.md §2).

For the one-head and reflected estimators the per-point weight v(x) is, on each of the two segments
[0, θ] and [θ, 1], one exponential. Write a segment as the points at distance t ∈ [0, Δ] from θ,
with x − θ = ς·t (ς = −1 left, +1 right) and v = v_θ·e^{η b t} (η = ±1: v grows or falls away
from θ). For s > 0 put u = s·v, u_θ = s·v_θ, L(u) = log(u_θ/u) = −η b t (real, exact), and

    S_k(s) = ∫ ((x − θ)v)^k e^{−s v} dt = (−ςη)^k b^{−k−1} s^{−k} [P_k(u_hi) − P_k(u_lo)],   k = 1, 2,
    P_k(z) = ∫₀^z (log u_θ − log u)^k u^{k−1} e^{−u} du,

with u_lo < u_hi the segment's end values. In terms of γ₁(z) = 1 − e^{−z}, γ₂(z) = 1 − (1 + z)e^{−z},

    Ein(z) = ∫₀^z (1 − e^{−u})/u du = z·₂F₂(1, 1; 2, 2; −z),    J(z) = ∫₀^z Ein(u)/u du = z·₃F₃(1, 1, 1; 2, 2, 2; −z),
    P₁(z) = L·γ₁(z) + Ein(z),
    P₂(z) = L²·γ₂(z) + 2L·(Ein(z) − γ₁(z)) + 2(J(z) − Ein(z)),

(differentiate: P₁′ = L e^{−z}, P₂′ = L² z e^{−z}, using L′ = −1/z; both vanish at 0), and the
weights' own transforms are (1/b)[Ein(u_hi) − Ein(u_lo)] (a segment's share of 1 − φ) and
(1/b)[E₁(u_lo) − E₁(u_hi)] (its share of φ), E₁ the exponential integral.

**Large arguments.** For Re z ≥ Z₀ (:func:`endpoint_functions`): Ein(z) = E₁(z) + γ + log z exactly
(E₁ from flint), and J(z) = c₀ + ½ log²z + γ log z − W(z) with c₀ = γ²/2 + π²/12 and
W(z) = ∫_z^∞ E₁(u)/u du, which is not computed but enclosed: for Re u > 0, |E₁(u)| ≤ e^{−Re u}/|u|
(E₁(u) = e^{−u}∫₀^∞ e^{−t}/(u + t) dt and |u + t| ≥ |u|), so along u = z + t

    |W(z)| ≤ ∫₀^∞ e^{−Re z − t}/|z + t|² dt ≤ e^{−Re z}/|z|².

Here log z is σ + c, the argument's own logarithm (exact for |Im σ| < π, which the integrand
enforces). **Moderate arguments** use flint's hypergeometric series at the ball's midpoint at a
precision raised by log₂(e)·|z| bits (the series' cancellation), and the mean value form
J(B) ⊆ J(m) + J′(B)·(B − m), J′ = Ein/z, so that a ball's width does not meet the alternating
series' dependency blow-up. All functions are entire in z except E₁ and log (cut on z ≤ 0);
every branch here is taken only where Re z > 0.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from flint import acb, arb, ctx

__all__ = ["POOLED_ENVELOPE", "Segment", "segments", "EndpointValues", "endpoint_functions", "segment_sums", "SegmentSums",
           "ClosedFormWeights", "z0_for"]

_LOG2_E = 1.4426950408889634
#: the weight law max-side of the pooled estimator (a risk computed in closed form, not an estimator users pick)
POOLED_ENVELOPE = "pooled-envelope"


@dataclass(frozen=True)
class Segment:
    """One piece of [0, 1] on which v is a single exponential: points x = θ + sign·t, t ∈ [0, length],
    log v = log_v_theta + eta·b·t (before the common normalisation)."""

    sign: int
    eta: int
    length: arb
    log_v_theta: arb


def segments(a: arb, b: arb, theta: arb, estimator: str) -> list[Segment]:
    """The segments of the one-head weight e^{a·1{x ≥ θ} − b x}, the reflected e^{a·1{x < θ} − b(1 − x)}, or
    the pooled weight's envelope (``"pooled-envelope"``): e^{a − b + b x} left of θ, e^{a − b x} right of it,
    the larger of the two heads' weights on each side when a ≥ b
    (:mod:`~stumpcheck.numerics.certified.enclosures.fresh_pooled_envelope`).

    A segment of length exactly 0 (θ = 0 or θ = 1) is dropped: at θ = 0 every point is labelled 1, at
    θ = 1 the label 1 has probability 0.
    """
    if estimator == "one-head":
        pieces = [Segment(-1, +1, theta, -b * theta), Segment(+1, -1, 1 - theta, a - b * theta)]
    elif estimator == "reflected":
        pieces = [Segment(-1, -1, theta, a - b + b * theta), Segment(+1, +1, 1 - theta, b * theta - b)]
    elif estimator == POOLED_ENVELOPE:  # the reflected head's left segment, the one head's right one
        pieces = [Segment(-1, -1, theta, a - b + b * theta), Segment(+1, -1, 1 - theta, a - b * theta)]
    else:  # pragma: no cover - the caller validates
        raise ValueError(estimator)
    return [piece for piece in pieces if not piece.length.is_zero()]


@dataclass(frozen=True)
class EndpointValues:
    """z = e^w and E₁(z), Ein(z), J(z) at one end of a segment (acb balls)."""

    z: acb
    e1: acb
    ein: acb
    j: acb


def _euler_constants() -> tuple[arb, arb]:
    gamma = arb.const_euler()
    return gamma, gamma * gamma / 2 + arb.pi() ** 2 / 12


def endpoint_functions(w: acb, z0: float) -> EndpointValues | None:
    """E₁, Ein and J at z = e^w (w = σ + c), or None where this ball is too wide for the moderate branch.

    Re z ≥ ``z0``: the large-argument forms (Ein exact, J with W enclosed by e^{−Re z}/|z|²);
    |z| < 4·z0 otherwise: the series forms; anything else (a wide complex ball) gives None.
    """
    gamma, c0 = _euler_constants()
    z = w.exp()
    if z.real.lower() > z0:
        re, modulus = arb(z.real.lower()), arb(abs(z).lower())
        decay = (-re).exp()
        if re > 8 * z0:  # |E₁(z)| ≤ e^{−Re z}/|z| < 2^{−8·prec}: flint's E₁ is slow out here
            e1_bound = arb(0, arb(decay / modulus).upper())
            e1 = acb(e1_bound, e1_bound)
        else:
            e1 = z.gamma_upper(0)
        w_bound = arb(0, arb(decay / (modulus * modulus)).upper())
        j = c0 + w * w / 2 + gamma * w - acb(w_bound, w_bound)
        return EndpointValues(z, e1, e1 + gamma + w, j)
    radius = abs(z).upper()
    if not radius < 4 * z0:
        return None
    extra = int(_LOG2_E * float(radius)) + 16
    with ctx.workprec(ctx.prec + extra):
        if radius < 1:
            ein = z * (-z).hypgeom([1, 1], [2, 2])
            e1 = ein - gamma - w
        else:
            e1 = z.gamma_upper(0)
            ein = e1 + gamma + w
        m = acb(z.real.mid(), z.imag.mid())
        j = m * (-m).hypgeom([1, 1, 1], [2, 2, 2]) + (ein / z) * (z - m)
    return EndpointValues(+z, +e1, +ein, +j)


@dataclass(frozen=True)
class SegmentSums:
    """Σ over the segments at one s (acb): q = 1 − φ, phi = φ, s·A₁, s²·A₂, and Σ|s·S₁| (for bounds)."""

    q: acb
    phi: acb
    s_a1: acb
    s2_a2: acb
    s_a1_abs: acb


def segment_sums(sigma: acb, pieces: list[tuple[Segment, arb, arb]], b: arb, z0: float) -> SegmentSums | None:
    """The segment sums at s = e^{σ − K}; ``pieces`` holds (segment, c_θ, L_far) with c_θ = log v_θ − K.

    None where an end's ball is too wide for :func:`endpoint_functions`.
    """
    q = phi = s_a1 = s2_a2 = abs_a1 = acb(0)
    for piece, c_theta, far_l in pieces:
        near = endpoint_functions(sigma + c_theta, z0)
        far = endpoint_functions(sigma + c_theta - far_l, z0)
        if near is None or far is None:
            return None
        g1 = -(-far.z).expm1()
        g2 = g1 - far.z * (-far.z).exp()
        p1_near, p2_near = near.ein, 2 * (near.j - near.ein)
        p1_far = far_l * g1 + far.ein
        p2_far = far_l * far_l * g2 + 2 * far_l * (far.ein - g1) + 2 * (far.j - far.ein)
        if piece.eta > 0:
            hi, lo, p1, p2 = far, near, p1_far - p1_near, p2_far - p2_near
        else:
            hi, lo, p1, p2 = near, far, p1_near - p1_far, p2_near - p2_far
        q += (hi.ein - lo.ein) / b
        phi += (lo.e1 - hi.e1) / b
        term = p1 / (b * b)
        s_a1 += (-piece.sign * piece.eta) * term
        abs_a1 += term if piece.eta < 0 else -term  # the segment's s·S₁ without its sign ς: ≥ 0 on the real line
        s2_a2 += p2 / (b * b * b)
    return SegmentSums(q, phi, s_a1, s2_a2, abs_a1)


def z0_for(prec: int, N: int) -> float:
    """Z₀ = prec·log 2 + log N + 12: beyond it the enclosed W weighs less than 2^{−prec}/N of a point's share."""
    return prec * math.log(2) + math.log(N) + 12


def _segment_mean(piece: Segment, b: arb, K: arb) -> arb:
    """e^{−K}·∫ v over the segment = e^{log v_θ − K}·expm1(η b Δ)/(η b) (≥ 0)."""
    eta_b = piece.eta * b
    return (piece.log_v_theta - K).exp() * (eta_b * piece.length).expm1() / eta_b


class ClosedFormWeights:
    """The one-head or reflected weight law at (a, b, θ), normalised by e^{−K}, K ≈ log(N·E v).

    ``sums(σ)`` gives the segment sums at s = e^{σ − K} (:func:`segment_sums`); ``mean_v`` = e^{−K}·E v,
    ``max_v`` ≥ e^{−K}·max v and ``max_length`` ≥ max(θ, 1 − θ) are what the tail bounds use.
    """

    def __init__(self, a: arb, b: arb, theta: arb, N: int, estimator: str, prec: int):
        self.b = b
        self.raw = segments(a, b, theta, estimator)
        self.max_length = max((arb(p.length.upper()) for p in self.raw), key=lambda x: float(x.mid()))
        self.z0 = z0_for(prec, N)
        with ctx.workprec(64):  # K: an exact float near log(N·E v); any value is correct
            logs = [p.log_v_theta + (p.eta * b * p.length).expm1().abs_upper().log() - b.log() for p in self.raw]
            top = max(float(x.mid()) for x in logs)
            total = sum(((x - top).exp() for x in logs), arb(0))
            self.K = arb(float((total.log() + top + math.log(N)).mid()))
        self.pieces = [(p, p.log_v_theta - self.K, -p.eta * b * p.length) for p in self.raw]
        self.mean_v = sum((_segment_mean(p, b, self.K) for p in self.raw), arb(0))
        ends = [arb((p.log_v_theta + max(0, p.eta) * b * p.length).upper()) for p in self.raw]
        self.max_v = arb(max(ends, key=lambda x: float(x.mid())) - self.K).exp()

    def sums(self, sigma: acb) -> SegmentSums | None:
        return segment_sums(sigma, self.pieces, self.b, self.z0)

    def level_measure(self, log_ratio: arb) -> tuple[arb, arb]:
        """Upper bounds of E[|x − θ|; v ∈ [c, c·R]]/e and 4·E[(x − θ)²; v ∈ [c, c·R]]/e² for any c, log R = ``log_ratio``.

        On a segment v = v_θ e^{η b t}, so {v ∈ [c, cR]} is a t-interval of length ≤ log R / b.
        """
        length = log_ratio / self.b
        m1 = m2 = arb(0)
        for piece in self.raw:
            part = arb(piece.length.upper()).min(arb(length.upper()))
            m1 += piece.length * part
            m2 += piece.length * piece.length * part
        e = arb(1).exp()
        return arb((m1 / e).upper()), arb((4 * m2 / (e * e)).upper())
