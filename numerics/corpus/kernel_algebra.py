"""The per-task group algebra of the corpus kernel, compiled: one task's groups in, (θ̂, e, ∂θ̂/∂a, ∂θ̂/∂b) out.

The mathematics is :mod:`stumpcheck.numerics.corpus.groups`' (read its docstring: the group decomposition,
the double-double group weights and the cancellation-free differences of means); this module is
the same algebra on scalars, for one task at a time, so that :mod:`stumpcheck.numerics.corpus.kernel` can
run it inside its compiled loop over tasks. Precision: float64, with the group log-partition
differences summed in double-double (Ogita–Rump–Oishi Sum2 of TwoSum/Dekker terms).

A task's groups are the rows of a small float64 table ``G`` (one row per group, columns
``F_*`` below): the group's extremes, the five doubles whose sum is log Z_g, the moments
lo_g, hi_g, V_g about its ends, and its coefficients κ_g (∂s/∂a) and head (+1 one-head
scores, −1 reflected scores). The table is scratch memory owned by the caller, reused for
every task.
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit

__all__ = ["F_EMPTY", "F_XMIN", "F_XMAX", "F_TERMS", "N_TERMS", "F_LO", "F_HI", "F_VAR", "F_KAPPA", "F_HEAD",
           "F_FORWARD", "N_FIELDS", "two_sum", "two_prod", "set_group", "mixture"]

F_EMPTY, F_XMIN, F_XMAX = 0, 1, 2
F_TERMS, N_TERMS = 3, 5          # log Z_g = a κ + (−b if reflected) + hi(−β c) + lo(−β c) + log S_g
F_LO, F_HI, F_VAR = 8, 9, 10
F_KAPPA, F_HEAD, F_FORWARD = 11, 12, 13
N_FIELDS = 14

_SPLITTER = 134217729.0  # 2^27 + 1 (Dekker)


@njit(cache=True, inline="always")
def two_sum(s, t):
    """s + t = u + v exactly (Knuth's TwoSum), returned as (u, v)."""
    u = s + t
    v = u - s
    return u, (s - (u - v)) + (t - v)


@njit(cache=True, inline="always")
def two_prod(p, q):
    """p·q = hi + lo exactly (Dekker/Veltkamp split; |p q| far below overflow here)."""
    hi = p * q
    cp = _SPLITTER * p
    p_hi = cp - (cp - p)
    p_lo = p - p_hi
    cq = _SPLITTER * q
    q_hi = cq - (cq - q)
    q_lo = q - q_hi
    lo = ((p_hi * q_hi - hi) + p_hi * q_lo + p_lo * q_hi) + p_lo * q_lo
    return hi, lo


# set_group and mixture are compiled for these argument types only (eagerly, when this module is first
# imported): the kernels call them with constant group indices, each of which would otherwise compile a
# specialisation of its own (nine in all, about 3 s of a fresh environment's first call); neither is
# in a loop over points, so the constants bought no speed.
_SET_GROUP_SIGNATURE = "(float64[:, ::1], int64, int64, " + ", ".join(["float64"] * 8) + ", int64, int64)"
_MIXTURE_SIGNATURE = "UniTuple(float64, 4)(float64[:, ::1], int64, int64, float64, float64[::1])"


@njit(_SET_GROUP_SIGNATURE, cache=True)
def set_group(G, g, count, xmin, xmax, total, near, var, beta, a, b, kappa, head):
    """Fill row g of the group table from one group's sweep (``near`` = Σ ωᵢ |xᵢ − c_g|, c_g its best point)."""
    empty = count == 0
    if empty:
        xmin = 0.0
        xmax = 0.0
        total = 1.0
    forward = beta >= 0.0
    span = xmax - xmin
    c = xmin if forward else xmax
    p_hi, p_lo = two_prod(-beta, c)
    G[g, F_EMPTY] = 1.0 if empty else 0.0
    G[g, F_XMIN] = xmin
    G[g, F_XMAX] = xmax
    G[g, F_TERMS] = a * kappa
    G[g, F_TERMS + 1] = -b if head < 0 else 0.0
    G[g, F_TERMS + 2] = p_hi
    G[g, F_TERMS + 3] = p_lo
    G[g, F_TERMS + 4] = 0.0 if empty else math.log(total)   # log 1 = 0: no libm call for an empty group
    G[g, F_LO] = near if forward else span - near
    G[g, F_HI] = span - near if forward else near
    G[g, F_VAR] = var
    G[g, F_KAPPA] = kappa
    G[g, F_HEAD] = head
    G[g, F_FORWARD] = 1.0 if forward else 0.0


@njit(cache=True, inline="always")
def _mu(G, g):
    return G[g, F_XMIN] + G[g, F_LO]


@njit(cache=True)
def _mean_difference(G, g, h):
    """μ_g − μ_h, as a sum of same-sign terms when the groups lie on opposite sides."""
    if G[g, F_XMIN] >= G[h, F_XMAX]:
        return (G[g, F_XMIN] - G[h, F_XMAX]) + G[g, F_LO] + G[h, F_HI]
    if G[g, F_XMAX] <= G[h, F_XMIN]:
        return -((G[h, F_XMIN] - G[g, F_XMAX]) + G[h, F_LO] + G[g, F_HI])
    return (G[g, F_XMIN] - G[h, F_XMIN]) + (G[g, F_LO] - G[h, F_LO])


@njit(cache=True)
def _mean_minus(G, g, theta):
    """μ_g − θ without cancellation when the group lies on one side of θ."""
    if G[g, F_XMIN] < theta and G[g, F_XMAX] <= theta:
        return -((theta - G[g, F_XMAX]) + G[g, F_HI])
    return (G[g, F_XMIN] - theta) + G[g, F_LO]


@njit(cache=True, inline="always")
def _best(G, g):
    return G[g, F_XMIN] if G[g, F_FORWARD] > 0.0 else G[g, F_XMAX]


@njit(cache=True, inline="always")
def _near(G, g):
    return G[g, F_LO] if G[g, F_FORWARD] > 0.0 else -G[g, F_HI]


@njit(cache=True)
def _one_minus_sum(G, g, h):
    """1 − μ_g − μ_h = ((1 − c_u) − c_v) − (near_u + near_v), u the group with the larger best point c
    (see :func:`stumpcheck.numerics.corpus.groups.one_minus_sum` for why the data part is formed first)."""
    cg, ch = _best(G, g), _best(G, h)
    edges = (1.0 - cg) - ch if cg >= ch else (1.0 - ch) - cg
    return edges - (_near(G, g) + _near(G, h))


@njit(_MIXTURE_SIGNATURE, cache=True)
def mixture(G, first, count, theta, weights):
    """(θ̂, θ̂ − θ, ∂θ̂/∂a, ∂θ̂/∂b) of one softmax over groups ``first … first + count − 1`` of ``G``.

    w_g = exp(log Z_g − log Z_ref) / Σ_h (…), ref the group with the largest log Z, each difference
    summed in double-double; then θ̂ = Σ w_g μ_g, e = Σ w_g (μ_g − θ) and the pairwise covariance
    formulas of :mod:`stumpcheck.numerics.corpus.groups`. ``weights`` is scratch of length ≥ count.
    """
    last = first + count
    ref = -1
    top = -np.inf
    groups = 0
    for g in range(first, last):
        if G[g, F_EMPTY] > 0.0:
            continue
        groups += 1
        approx = 0.0
        for k in range(N_TERMS):
            approx += G[g, F_TERMS + k]
        if ref < 0 or approx > top:
            ref, top = g, approx
    if groups == 1:
        # the only non-empty group has w = 1 exactly (its difference from itself is 0) and every pair
        # has a factor w = 0: the same values as the general sums below, without them
        return (0.0 + _mu(G, ref), 0.0 + _mean_minus(G, ref, theta), 0.0,
                0.0 + (-G[ref, F_HEAD]) * G[ref, F_VAR])
    norm = 0.0
    for g in range(first, last):
        if G[g, F_EMPTY] > 0.0:
            weights[g - first] = 0.0
            continue
        s = 0.0
        c = 0.0
        for k in range(N_TERMS):
            s, e = two_sum(s, G[g, F_TERMS + k])
            c += e
        for k in range(N_TERMS):
            s, e = two_sum(s, -G[ref, F_TERMS + k])
            c += e
        weights[g - first] = math.exp(s + c)
        norm += weights[g - first]
    theta_hat = 0.0
    error = 0.0
    d_a = 0.0
    d_b = 0.0
    for g in range(first, last):
        w = weights[g - first] / norm
        weights[g - first] = w
        theta_hat += w * _mu(G, g)
        error += w * _mean_minus(G, g, theta)
        d_b += w * (-G[g, F_HEAD]) * G[g, F_VAR]
    for g in range(first, last):
        for h in range(g + 1, last):
            pair = weights[g - first] * weights[h - first]
            delta = _mean_difference(G, g, h)
            if G[g, F_KAPPA] != G[h, F_KAPPA]:
                d_a += pair * (G[g, F_KAPPA] - G[h, F_KAPPA]) * delta
            if G[g, F_HEAD] == G[h, F_HEAD]:
                f_diff = -G[g, F_HEAD] * delta
            else:               # one-head f = −μ, reflected f = μ − 1: ±(1 − μ_g − μ_h)
                f_diff = G[g, F_HEAD] * _one_minus_sum(G, g, h)
            d_b += pair * f_diff * delta
    return theta_hat, error, d_a, d_b
