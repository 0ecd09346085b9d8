"""Long stretches of the exact fresh-context s-integral: an entire stand-in integrand and a proven error bound.

When N is small against |a| + b the σ-range of the s-integral is long (about (b/N)·log(1/aim)) and
the integrand's strip of analyticity, |Im σ| < π/2, caps Gauss–Legendre subintervals at a few units.
Away from the four segment ends' transition zones, though, every end's z = e^{σ + c} is either
*tiny* (|z| ≤ ¼ on the stretch) or *large* (z ≥ Z₀ on the stretch). On such a **plateau** the
integrand F is replaced by G, the same closed forms with each large end's exponentially small terms
dropped (E₁(z) → 0, e^{−z} → 0, W(z) → 0: Ein = γ + w and J = c₀ + ½w² + γw, polynomials in w = σ + c;
a segment with both ends large then adds exactly Δ to q = 1 − φ and nothing to A₁, A₂) and φ^{N−1} =
(1 − q)^{N−1} as an integer power. A plateau needs one large end at least, and a segment with both
ends tiny needs bΔ ≥ 8 (else its ends' series cancel on the integrator's wide balls). G is entire in σ
with moderate growth, so ``acb.integral`` takes long subintervals; the difference is bounded on the
real stretch.

**The bound.** On a plateau [σ₁, σ₂] a large end has z ≥ Z := e^{σ₁ + c} ≥ Z₀, so (real z)
|E₁(z)| ≤ e^{−Z}/Z, e^{−z} ≤ e^{−Z}, (1 + z)e^{−z} ≤ (1 + Z)e^{−Z} (decreasing for z ≥ 0) and
|W(z)| ≤ e^{−Z}/Z². Through the formulas of :mod:`~stumpcheck.numerics.certified.enclosures.fresh_segments`
(an end with L, L = 0 at θ) these move q = 1 − φ, s·A₁ and s²·A₂ by at most

    D_q = Σ e^{−Z}/(Z b),   D₁ = Σ (|L| + 1/Z) e^{−Z}/b²,
    D₂ = Σ [L²(1 + Z) + 2|L|(1 + 1/Z) + 2(1/Z + 1/Z²)] e^{−Z}/b³,

over the large ends. On the real line 0 ≤ φ ≤ 1, |s A₁| ≤ Δ_max/e and s² A₂ ≤ 4Δ_max²/e² (sup y e^{−y} = 1/e,
sup y² e^{−y} = 4/e²), and |x^n − y^n| ≤ n|x − y| max(|x|, |y|)^{n−1}, so with P = (1 + D_q)

    |F_bias − G_bias| ≤ N D₁ + N(N − 1)(Δ_max/e + D₁) D_q P^{N−2},
    |F_MSE − G_MSE| ≤ N D₂ + N(N − 1)(4Δ_max²/e² + D₂) D_q P^{N−2}
                      + N(N − 1)[D₁(2Δ_max/e + D₁) + (Δ_max/e + D₁)² (N − 2) D_q P^{N−3}],

and the plateau's length times these bounds is added to the balls' radii.
"""

from __future__ import annotations

import math

from flint import acb, arb

from stumpcheck.numerics.certified.enclosures.fresh_segments import SegmentSums, _euler_constants

__all__ = ["plateaus", "PlateauIntegrand", "plateau_error"]

#: an end is tiny on a stretch where |z| ≤ this everywhere
_TINY = 0.25
#: shortest stretch worth a stand-in integrand (units of σ)
_MIN_LENGTH = 24


def _ends(weights):
    """(segment index, is the θ-end, c, L) of every segment end: z = e^{σ + c} there."""
    out = []
    for index, (piece, c_theta, far_l) in enumerate(weights.pieces):
        out.append((index, True, c_theta, arb(0)))
        out.append((index, False, c_theta - far_l, far_l))
    return out


def plateaus(weights, lo: int, hi: int) -> list[tuple[int, int, dict]]:
    """Integer stretches [p₁, p₂] ⊆ [lo, hi] of length ≥ 24 on which every end is tiny or large; each with
    the map (segment, is θ-end) → True for a large end."""
    zones = []
    for _, _, c, _ in _ends(weights):
        start = math.log(_TINY) - float(c.upper()) - 1e-9
        stop = math.log(weights.z0) - float(c.lower()) + 1e-9
        zones.append((start, stop))
    zones.sort()
    free, cursor = [], float(lo)
    for start, stop in zones:
        if start > cursor:
            free.append((cursor, min(start, float(hi))))
        cursor = max(cursor, stop)
    if cursor < hi:
        free.append((cursor, float(hi)))
    out = []
    for start, stop in free:
        p1, p2 = math.ceil(start), math.floor(stop)
        if p2 - p1 < _MIN_LENGTH:
            continue
        large = {}
        for index, near, c, _ in _ends(weights):
            if (arb(p1) + c).lower() >= math.log(weights.z0):
                large[(index, near)] = True
            elif not (arb(p2) + c).upper() <= math.log(_TINY):  # pragma: no cover - the zones exclude it
                break
        else:
            if large and all(_tiny_segment_is_long(weights, index, large) for index in range(len(weights.pieces))):
                out.append((p1, p2, large))
    return out


def _tiny_segment_is_long(weights, index: int, large: dict) -> bool:
    """A segment with both ends tiny needs |L| = bΔ ≥ 8: its two ends' series then do not cancel (on the wide
    complex balls the integrator bounds G on, a short one would lose about 3·log₂(1/|L|) bits)."""
    if large.get((index, True)) or large.get((index, False)):
        return True
    return bool(abs(weights.pieces[index][2]).lower() >= 8)


def _stand_in_end(w: acb, large: bool):
    """(Ein, J, γ₁, γ₂) at z = e^w: polynomials in w for a large end, the entire series for a tiny one."""
    gamma, c0 = _euler_constants()
    if large:
        return gamma + w, c0 + w * w / 2 + gamma * w, acb(1), acb(1)
    z = w.exp()
    g1 = -(-z).expm1()
    return z * (-z).hypgeom([1, 1], [2, 2]), z * (-z).hypgeom([1, 1, 1], [2, 2, 2]), g1, g1 - z * (-z).exp()


def _stand_in_sums(sigma: acb, weights, large: dict) -> SegmentSums:
    b = weights.b
    q = s_a1 = s2_a2 = acb(0)
    for index, (piece, c_theta, far_l) in enumerate(weights.pieces):
        if large.get((index, True), False) and large.get((index, False), False):
            # both ends large: Ein and J are polynomials in w and the differences are exact (w_f − w_n = −L):
            # the segment adds Δ to q and nothing to s·A₁, s²·A₂ (computed so, with no cancellation in σ)
            q += acb(piece.length)
            continue
        ein_n, j_n, _, _ = _stand_in_end(sigma + c_theta, large.get((index, True), False))
        ein_f, j_f, g1, g2 = _stand_in_end(sigma + c_theta - far_l, large.get((index, False), False))
        p1_near, p2_near = ein_n, 2 * (j_n - ein_n)
        p1_far = far_l * g1 + ein_f
        p2_far = far_l * far_l * g2 + 2 * far_l * (ein_f - g1) + 2 * (j_f - ein_f)
        sign = 1 if piece.eta > 0 else -1  # hi − lo: the far end is hi when v grows away from θ
        q += sign * (ein_f - ein_n) / b
        s_a1 += (-piece.sign * piece.eta) * sign * (p1_far - p1_near) / (b * b)
        s2_a2 += sign * (p2_far - p2_near) / (b * b * b)
    return SegmentSums(q, 1 - q, s_a1, s2_a2, acb(0))


class PlateauIntegrand:
    """G = G_bias + i·κ·G_MSE on one plateau: entire in σ (no ``analytic`` check needed)."""

    def __init__(self, weights, N: int, kappa: arb, large: dict):
        self.weights, self.N, self.kappa, self.large = weights, N, kappa, large
        self.calls = 0

    def __call__(self, sigma: acb, analytic: bool) -> acb:
        self.calls += 1
        sums = _stand_in_sums(sigma, self.weights, self.large)
        N = self.N
        phi = 1 - sums.q
        power1 = phi ** (N - 1)
        bias = N * sums.s_a1 * power1
        mse = N * sums.s2_a2 * power1
        if N >= 2:
            mse += N * (N - 1) * sums.s_a1 * sums.s_a1 * phi ** (N - 2)
        return bias + acb(0, 1) * (self.kappa * mse)


def plateau_error(weights, N: int, p1: int, large: dict) -> tuple[arb, arb]:
    """Upper bounds of |F_bias − G_bias| and |F_MSE − G_MSE| on the plateau starting at p₁ (real σ)."""
    b = weights.b
    d_q = d_1 = d_2 = arb(0)
    for index, near, c, L in _ends(weights):
        if not large.get((index, near), False):
            continue
        Z = arb((arb(p1) + c).exp().lower())
        decay = (-Z).exp()
        ell = abs(L)
        d_q += decay / (Z * b)
        d_1 += (ell + 1 / Z) * decay / (b * b)
        d_2 += (ell * ell * (1 + Z) + 2 * ell * (1 + 1 / Z) + 2 * (1 / Z + 1 / (Z * Z))) * decay / (b * b * b)
    e = arb(1).exp()
    m1 = weights.max_length / e
    m2 = 4 * weights.max_length ** 2 / (e * e)
    power = (1 + d_q) ** max(N - 2, 0)
    bias = N * d_1 + N * (N - 1) * (m1 + d_1) * d_q * power
    mse = N * d_2 + N * (N - 1) * (m2 + d_2) * d_q * power
    if N >= 2:
        mse += N * (N - 1) * (d_1 * (2 * m1 + d_1) + (m1 + d_1) ** 2 * max(N - 2, 0) * d_q * (1 + d_q) ** max(N - 3, 0))
    return arb(bias.upper()), arb(mse.upper())
