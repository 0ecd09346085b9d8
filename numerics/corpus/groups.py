"""The per-task algebra of the corpus estimators: groups of points with one score slope.

This docstring states the algebra of the corpus estimators. The compiled kernel
(:mod:`stumpcheck.numerics.corpus.kernel_algebra`, :mod:`stumpcheck.numerics.corpus.kernel`) runs the same
operations on one task at a time; the functions here run them on arrays with one row
per task, in float64, for the numpy path (:mod:`stumpcheck.numerics.corpus.kernel_numpy`).
Model: docs/model.md §2, §5.

Group decomposition (why it is exact and cancellation-free). Every estimator
is a softmax over a union of *groups* g (one-head: P = {y = 1}, N = {y = 0};
reflected: N with label bonus, P without; pooled: all four). Inside a group the
score is K_g − β_g x with a constant K_g and β_g = b (one-head) or −b
(reflected), so with the group's best point c_g (min x if β_g ≥ 0, else max x)

    S_g = Σ_{i∈g} exp(−β_g (xᵢ − c_g)) ∈ [1, n],      log Z_g = K_g − β_g c_g + log S_g,
    lo_g = Σ ωᵢ (xᵢ − min_g x) ≥ 0,  hi_g = Σ ωᵢ (max_g x − xᵢ) ≥ 0,  V_g = Σ ωᵢ (xᵢ − μ_g)²,

with ωᵢ = exp(−β_g (xᵢ − c_g)) / S_g (every exponent ≤ 0: nothing overflows)
and μ_g = min_g x + lo_g. The group weights w_g = softmax(log Z) use
differences log Z_g − log Z_h summed in double-double (Dekker products for
b·c), so that a − b·(c_P − c_N) keeps full relative accuracy at a, b ~ 10⁶.
Then, with ∂s/∂a = κ_g (1 for the label-bonus groups) and ∂s/∂b = σ_g x + k_g
(one-head: −x; reflected: x − 1),

    θ̂ = Σ_g w_g μ_g,      θ̂ − θ = Σ_g w_g (μ_g − θ),
    ∂θ̂/∂a = Cov_α(κ, x) = Σ_{g<h} w_g w_h (κ_g − κ_h)(μ_g − μ_h),
    ∂θ̂/∂b = Cov_α(σx + k, x) = Σ_g w_g σ_g V_g + Σ_{g<h} w_g w_h (f_g − f_h)(μ_g − μ_h),  f = σμ + k.

Differences of means between groups on opposite sides of θ are sums of
non-negative terms, μ_P − μ_N = (min_P x − max_N x) + lo_P + hi_N, and
μ_g − θ likewise; so for the one-head and reflected estimators θ̂, ∂θ̂/∂a
(= w_P w_N (μ_P − μ_N)) and ∂θ̂/∂b (= −Var_α x, a sum of non-positive terms)
are computed without cancellation (relative error a small multiple of n·2⁻⁵³).
For averaged and pooled, terms of both signs meet; each term is still exact
to a few ulps, so the error is a few hundred ulps of Σ|terms| (see
:mod:`stumpcheck.numerics.corpus.empirical` for the measured accuracy). Where the data make a
difference small, it is formed from exact differences of the data first
(:func:`mean_difference`, :func:`mean_minus`, :func:`one_minus_sum`), and the
small moments are added afterwards.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

__all__ = ["Group", "group_moments", "mixture", "combine", "mean_difference", "mean_minus", "one_minus_sum",
           "two_sum", "two_prod", "sum2", "row_dot"]

# (side, label coefficient κ, head) per group; head +1 = one-head scores, −1 = reflected scores.
_ONE_HEAD = (("P", 1, +1), ("N", 0, +1))
_REFLECTED = (("N", 1, -1), ("P", 0, -1))


# ---------------------------------------------------------------- error-free transforms

_SPLITTER = 134217729.0  # 2^27 + 1 (Dekker)


def two_sum(s, t):
    """s + t = u + v exactly (Knuth's TwoSum), returned as (u, v)."""
    u = s + t
    v = u - s
    return u, (s - (u - v)) + (t - v)


def two_prod(p, q):
    """p·q = hi + lo exactly (Dekker/Veltkamp split; ``|p q|`` far below overflow here)."""
    hi = p * q
    cp = _SPLITTER * p
    p_hi = cp - (cp - p)
    p_lo = p - p_hi
    cq = _SPLITTER * q
    q_hi = cq - (cq - q)
    q_lo = q - q_hi
    lo = ((p_hi * q_hi - hi) + p_hi * q_lo + p_lo * q_hi) + p_lo * q_lo
    return hi, lo


def sum2(terms):
    """Σ terms as if in twice the working precision (Ogita–Rump–Oishi Sum2), rounded to double."""
    s = np.zeros_like(terms[0])
    c = np.zeros_like(terms[0])
    for t in terms:
        s, e = two_sum(s, t)
        c = c + e
    return s + c


# ---------------------------------------------------------------- one group

@dataclass
class Group:
    kappa: int      # ∂s/∂a coefficient
    head: int       # +1 one-head scores (∂s/∂b = −x), −1 reflected scores (∂s/∂b = x − 1)
    empty: np.ndarray
    xmin: np.ndarray
    xmax: np.ndarray
    terms: list     # log Z_g as an unevaluated sum of doubles
    lo: np.ndarray
    hi: np.ndarray
    var: np.ndarray
    forward: bool   # β_g ≥ 0: the best point is min_g x (else max_g x)

    @property
    def mu(self):
        return self.xmin + self.lo

    @property
    def best(self):
        """c_g, the point of the group with the largest score."""
        return self.xmin if self.forward else self.xmax

    @property
    def near(self):
        """μ_g − c_g (signed): lo_g if β_g ≥ 0, else −hi_g; small once ``|β_g|`` spans the group."""
        return self.lo if self.forward else -self.hi


def group_moments(values: np.ndarray, mask: np.ndarray, *, beta: float, a: float, b: float, kappa: int,
           head: int) -> Group:
    """Moments of one group (rows of ``values`` where ``mask``), within-group score −β x.

    Masked-out entries must hold values inside the row's group range (the pruned path repeats the
    last kept point), so that every distance below is ≥ 0 and every exponent ≤ 0.
    """
    keep = mask.astype(np.float64)
    empty = ~mask.any(axis=1)
    # values in [0, 1]: adding 2 (subtracting 2) moves masked-out entries out of the min (max)
    xmin = np.where(empty, 0.0, (values + 2.0 * (1.0 - keep)).min(axis=1))
    xmax = np.where(empty, 0.0, (values - 2.0 * (1.0 - keep)).max(axis=1))
    if beta >= 0:
        dist = (values - xmin[:, None]) * keep
    else:
        dist = (xmax[:, None] - values) * keep
    weight = dist * (-abs(beta))
    np.exp(weight, out=weight)
    weight *= keep
    total = np.where(empty, 1.0, weight.sum(axis=1))
    near = row_dot(weight, dist) / total
    dev = dist - near[:, None]
    dev *= dev
    var = row_dot(weight, dev) / total
    span = xmax - xmin
    lo, hi = (near, span - near) if beta >= 0 else (span - near, near)
    c = xmin if beta >= 0 else xmax
    p_hi, p_lo = two_prod(np.full_like(c, -beta), c)
    rows = values.shape[0]
    terms = [np.full(rows, a * kappa), np.full(rows, -b if head < 0 else 0.0), p_hi, p_lo, np.log(total)]
    return Group(kappa=kappa, head=head, empty=empty, xmin=xmin, xmax=xmax, terms=terms, lo=lo, hi=hi, var=var,
                  forward=beta >= 0)


def mean_difference(g: Group, h: Group) -> np.ndarray:
    """μ_g − μ_h, as a sum of same-sign terms when the groups lie on opposite sides."""
    above = (g.xmin - h.xmax) + g.lo + h.hi
    below = -((h.xmin - g.xmax) + h.lo + g.hi)
    overlap = (g.xmin - h.xmin) + (g.lo - h.lo)
    return np.where(g.xmin >= h.xmax, above, np.where(g.xmax <= h.xmin, below, overlap))


def mean_minus(g: Group, theta: np.ndarray) -> np.ndarray:
    """μ_g − θ without cancellation when the group lies on one side of θ."""
    above = (g.xmin - theta) + g.lo
    below = -((theta - g.xmax) + g.hi)
    return np.where(g.xmin >= theta, above, np.where(g.xmax <= theta, below, above))


def one_minus_sum(g: Group, h: Group) -> np.ndarray:
    """1 − μ_g − μ_h = ((1 − c_u) − c_v) − (near_u + near_v), u the group with the larger best point c.

    μ = c + near (c the best point, near the signed moment about it). The data part is formed
    first: 1 − c_u is exact once c_u ≥ ½, and its difference with c_v is exact when the two are
    within a factor 2 (Sterbenz), the case where the result can be small; the moments, small
    wherever the weight sits on the best points, are added last. Forming 1 − μ_g first costs an
    absolute error of ulp(1): fatal for the pooled head when its two heads attend to mirrored
    points (near x = 0 and x = 1 at a = −b, or on both sides of θ ≈ ½).
    """
    g_first = g.best >= h.best
    edges = np.where(g_first, (1.0 - g.best) - h.best, (1.0 - h.best) - g.best)
    return edges - (g.near + h.near)


def mixture(groups: list, theta: np.ndarray):
    """(θ̂, θ̂ − θ, ∂θ̂/∂a, ∂θ̂/∂b) of one softmax over the given groups."""
    approx = np.stack([np.where(g.empty, -np.inf, sum(g.terms)) for g in groups])
    ref = np.argmax(approx, axis=0)
    rows = np.arange(approx.shape[1])
    ref_terms = [np.stack([g.terms[k] for g in groups])[ref, rows] for k in range(len(groups[0].terms))]
    weights = []
    for g in groups:
        diff = sum2(g.terms + [-t for t in ref_terms])
        weights.append(np.exp(np.where(g.empty, -np.inf, diff)))
    norm = sum(weights)
    weights = [w / norm for w in weights]
    theta_hat = sum(w * g.mu for w, g in zip(weights, groups))
    error = sum(w * mean_minus(g, theta) for w, g in zip(weights, groups))
    d_a = np.zeros_like(theta_hat)
    d_b = sum(w * (-g.head) * g.var for w, g in zip(weights, groups))
    for i, g in enumerate(groups):
        for j in range(i + 1, len(groups)):
            h = groups[j]
            pair = weights[i] * weights[j]
            delta = mean_difference(g, h)
            if g.kappa != h.kappa:
                d_a = d_a + pair * (g.kappa - h.kappa) * delta
            if g.head == h.head:
                f_diff = -g.head * delta
            else:                   # one-head f = −μ, reflected f = μ − 1: ±(1 − μ_g − μ_h)
                f_diff = g.head * one_minus_sum(g, h)
            d_b = d_b + pair * f_diff * delta
    return theta_hat, error, d_a, d_b


def combine(estimator: str, make_group, theta: np.ndarray):
    """Apply the estimator's group structure; ``make_group(side, kappa, head)`` builds a group."""
    one = [make_group(side, kappa, head) for side, kappa, head in _ONE_HEAD] \
        if estimator in ("one-head", "averaged", "pooled") else None
    ref = [make_group(side, kappa, head) for side, kappa, head in _REFLECTED] \
        if estimator in ("reflected", "averaged", "pooled") else None
    if estimator == "one-head":
        return mixture(one, theta)
    if estimator == "reflected":
        return mixture(ref, theta)
    if estimator == "pooled":
        return mixture(one + ref, theta)
    first, second = mixture(one, theta), mixture(ref, theta)
    return tuple(0.5 * (u + v) for u, v in zip(first, second))



def row_dot(u, v):
    """Σ_j u_ij v_ij per row (batched BLAS dot)."""
    return np.matmul(u[:, None, :], v[:, :, None])[:, 0, 0]
