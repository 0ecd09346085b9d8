"""The compiled corpus kernel: θ̂, e, ∂θ̂/∂a, ∂θ̂/∂b of every task in one fused pass per task.

Model and algebra: docs/model.md §2, §5 and :mod:`stumpcheck.numerics.corpus.groups` (groups of points with
one score slope, their moments about the group's best point, the double-double group weights and
the cancellation-free pairwise formulas); the scalar algebra is :mod:`stumpcheck.numerics.corpus.kernel_algebra`.
Precision: float64, the same operations as the group algebra, so the same accuracy
(:mod:`stumpcheck.numerics.corpus.empirical` states it).

Per task and per head (β = b for one-head scores, −b for reflected scores), the kernel

1. finds the extremes of each side (P = {x ≥ θ}, N = {x < θ}) over the points it touches (no exp);
2. computes ωᵢ = exp(−|β| dᵢ), dᵢ = |xᵢ − c_g| ≥ 0 the distance to the best point of the point's
   group g, into a scratch row, in a loop with no reduction (:func:`_weights`: one exp per token
   per group, every exponent ≤ 0, so nothing overflows), then sums S_g = Σ ωᵢ and Σ ωᵢ dᵢ;
3. sweeps again without exp for V_g = Σ ωᵢ (dᵢ − near_g)² / S_g, near_g = Σ ωᵢ dᵢ / S_g
   (the centred form: the uncentred Σ ω d² − near² would cancel);

then combines the groups (:func:`stumpcheck.numerics.corpus.kernel_algebra.mixture`). The dense path
(:func:`dense_tasks`) touches every point of a task; the pruned path
(:mod:`stumpcheck.numerics.corpus.kernel_pruned`) runs the same steps on each group's window of a sorted
task, so its cost follows the touched points.

Vectorisation (checked in the compiled machine code on an AVX2 machine): the loops of steps 1–3
compile to 256-bit (ymm) instructions, 4 doubles at a time; the exp is branch-free arithmetic
(:mod:`stumpcheck.numerics.corpus.kernel_exp`), so the loop of step 2 is a vector loop with no call in it.
Tasks are split across threads with ``prange`` (``numba.set_num_threads``, or the
environment variable NUMBA_NUM_THREADS before the first import); scratch memory is one row of n
doubles per block of tasks, nothing is allocated per task. Results do not depend on the thread
count (each task is computed by one thread, in a fixed order).

Compiled on first use and cached on disk (``cache=True``): the first call in a fresh environment
pays the compile time once (see benchmarks/bench_empirical.py for the figure).
"""

from __future__ import annotations

import os

# The worker threads of numba's OpenMP layer sleep as soon as a parallel region ends, unless the
# environment says otherwise: by default they spin for milliseconds after every call, and on a
# machine with few cores that spinning takes a core from whatever the caller runs next (measured:
# a one-thread pruned call right after a two-thread dense call ran with the other thread spinning
# through all of it, 20.8 ms of process CPU in a 12.5 ms call). The OpenMP runtime reads this when
# it is loaded, at numba's first parallel call, and it then applies to the whole process; a runtime
# loaded earlier (torch imported first brings its own, which numba's calls may then use) keeps its
# policy.
os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")

import numpy as np  # noqa: E402
from numba import njit, prange  # noqa: E402

from stumpcheck.numerics.corpus.kernel_algebra import N_FIELDS, mixture, set_group  # noqa: E402
from stumpcheck.numerics.corpus.kernel_exp import exp_nonpositive, float_bits, float_from_bits  # noqa: E402

__all__ = ["ONE_HEAD", "REFLECTED", "AVERAGED", "POOLED", "ESTIMATOR_CODES", "dense_tasks"]

ONE_HEAD, REFLECTED, AVERAGED, POOLED = 0, 1, 2, 3
ESTIMATOR_CODES = {"one-head": ONE_HEAD, "reflected": REFLECTED, "averaged": AVERAGED, "pooled": POOLED}
_BLOCK = 16  # tasks per scheduling block (a block shares its scratch row)


_NO_POINT = np.int64(0x7FF0000000000000)   # the bits of +inf: above the bits of every x in [0, 1]


@njit(cache=True)
def _extremes(row, first, last, theta):
    """(min_P x, max_P x, count_P, min_N x, max_N x, count_N, valid) over row[first:last]; valid is
    False if a point is not a number in [0, 1].

    The extremes are taken over the points' bits as integers (ordered as the values are on
    [0, 1]): integer min/max vectorise without fast-math flags, and the sides stay branch-free.
    """
    lo_p, hi_p, lo_n, hi_n = _NO_POINT, np.int64(-1), _NO_POINT, np.int64(-1)
    count_p = 0
    invalid = 0
    for i in range(first, last):
        v = row[i]
        invalid += 0 if (v >= 0.0 and v <= 1.0) else 1
        on_p = v >= theta
        count_p += 1 if on_p else 0
        key = float_bits(v + 0.0)   # + 0.0 turns −0.0 into +0.0, whose bits sort with the rest
        lo_p = min(lo_p, key if on_p else _NO_POINT)
        hi_p = max(hi_p, key if on_p else np.int64(-1))
        lo_n = min(lo_n, _NO_POINT if on_p else key)
        hi_n = max(hi_n, np.int64(-1) if on_p else key)
    count_n = (last - first) - count_p
    if invalid > 0:
        return 0.0, 0.0, count_p, 0.0, 0.0, count_n, False
    min_p = float_from_bits(lo_p) if count_p > 0 else 0.0
    max_p = float_from_bits(hi_p) if count_p > 0 else 0.0
    min_n = float_from_bits(lo_n) if count_n > 0 else 0.0
    max_n = float_from_bits(hi_n) if count_n > 0 else 0.0
    return min_p, max_p, count_p, min_n, max_n, count_n, True


@njit(cache=True)
def _weights(row, first, last, theta, beta, c_p, c_n, omega):
    """ωᵢ = exp(−|β| dᵢ) into omega[i − first], dᵢ = xᵢ − c_g if β ≥ 0 (c_g = min_g x), c_g − xᵢ if
    β < 0 (c_g = max_g x): always ≥ 0.

    A loop of its own with no reduction: it vectorises into independent exps (4 doubles per AVX2
    step) whose latency the processor overlaps; fused with the sums of :func:`_sweep` it ran 1.7×
    slower (3.8 against 2.2 ns per token, measured on one thread).
    """
    slope = -abs(beta)
    sign = 1.0 if beta >= 0.0 else -1.0
    for i in range(first, last):
        v = row[i]
        d = (v - (c_p if v >= theta else c_n)) * sign
        omega[i - first] = exp_nonpositive(d * slope)


@njit(cache=True, fastmath={"reassoc"})
def _sweep(row, first, last, theta, beta, c_p, c_n, omega):
    """One exp per point (:func:`_weights`, into omega[i − first]); returns (S_P, Σ_P ω d, S_N, Σ_N ω d).

    Reassociation is allowed for these four sums only (so that they vectorise: the order of a
    sum of n non-negative terms changes, not its error bound); the exp is a separate function
    compiled without it.
    """
    _weights(row, first, last, theta, beta, c_p, c_n, omega)
    sign = 1.0 if beta >= 0.0 else -1.0
    s_p = m_p = s_n = m_n = 0.0
    for i in range(first, last):
        v = row[i]
        on_p = v >= theta
        d = (v - (c_p if on_p else c_n)) * sign
        w = omega[i - first]
        wd = w * d
        s_p += w if on_p else 0.0
        s_n += 0.0 if on_p else w
        m_p += wd if on_p else 0.0
        m_n += 0.0 if on_p else wd
    return s_p, m_p, s_n, m_n


@njit(cache=True, fastmath={"reassoc"})
def _spread(row, first, last, theta, beta, c_p, c_n, near_p, near_n, omega):
    """(Σ_P ω (d − near_P)², Σ_N ω (d − near_N)²) from the weights of :func:`_sweep` (no exp)."""
    sign = 1.0 if beta >= 0.0 else -1.0
    v_p = v_n = 0.0
    for i in range(first, last):
        v = row[i]
        on_p = v >= theta
        dev = (v - (c_p if on_p else c_n)) * sign - (near_p if on_p else near_n)
        t = dev * dev * omega[i - first]
        v_p += t if on_p else 0.0
        v_n += 0.0 if on_p else t
    return v_p, v_n


@njit(cache=True)
def _head(row, first, last, theta, beta, a, b, head, extremes, G, g_p, g_n, omega):
    """Sweep row[first:last] for one head and write its P and N groups into rows g_p, g_n of G
    (a negative row index: that side is not in this range and is left as it is)."""
    min_p, max_p, count_p, min_n, max_n, count_n = extremes
    forward = beta >= 0.0
    c_p = min_p if forward else max_p
    c_n = min_n if forward else max_n
    s_p, m_p, s_n, m_n = _sweep(row, first, last, theta, beta, c_p, c_n, omega)
    near_p = m_p / s_p if count_p > 0 else 0.0
    near_n = m_n / s_n if count_n > 0 else 0.0
    v_p, v_n = _spread(row, first, last, theta, beta, c_p, c_n, near_p, near_n, omega)
    kappa_p = 1 if head > 0 else 0   # the label bonus is on P for one-head scores, on N for reflected ones
    if g_p >= 0:
        set_group(G, g_p, count_p, min_p, max_p, s_p, near_p, v_p / s_p if count_p > 0 else 0.0,
                  beta, a, b, kappa_p, head)
    if g_n >= 0:
        set_group(G, g_n, count_n, min_n, max_n, s_n, near_n, v_n / s_n if count_n > 0 else 0.0,
                  beta, a, b, 1 - kappa_p, head)


# Rows of the group table: one-head P, N; reflected N, P (the pooled softmax's order, as in groups.py).
_ROW = ((0, 1), (3, 2))   # _ROW[h][side]: h = 0 one-head, 1 reflected; side 0 = P, 1 = N


@njit(cache=True)
def _combine(G, estimator, theta, scratch):
    if estimator == ONE_HEAD:
        return mixture(G, 0, 2, theta, scratch)
    if estimator == REFLECTED:
        return mixture(G, 2, 2, theta, scratch)
    if estimator == POOLED:
        return mixture(G, 0, 4, theta, scratch)
    t1, e1, a1, b1 = mixture(G, 0, 2, theta, scratch)
    t2, e2, a2, b2 = mixture(G, 2, 2, theta, scratch)
    return 0.5 * (t1 + t2), 0.5 * (e1 + e2), 0.5 * (a1 + a2), 0.5 * (b1 + b2)


@njit(cache=True, parallel=True)
def dense_tasks(x, theta, a, b, estimator, out):
    """Every point of every task: out[:, j] = (θ̂ⱼ, eⱼ, ∂θ̂ⱼ/∂a, ∂θ̂ⱼ/∂b). Returns False (and leaves out
    partly written) if some x is not a number in [0, 1]."""
    m, n = x.shape
    blocks = (m + _BLOCK - 1) // _BLOCK
    valid = np.ones(blocks, dtype=np.bool_)
    for k in prange(blocks):
        omega = np.empty(n)
        G = np.zeros((4, N_FIELDS))
        scratch = np.empty(4)
        for j in range(k * _BLOCK, min(m, (k + 1) * _BLOCK)):
            row = x[j]
            min_p, max_p, count_p, min_n, max_n, count_n, ok = _extremes(row, 0, n, theta[j])
            if not ok:
                valid[k] = False
                continue
            extremes = (min_p, max_p, count_p, min_n, max_n, count_n)
            if estimator != REFLECTED:
                _head(row, 0, n, theta[j], b, a, b, 1, extremes, G, 0, 1, omega)
            if estimator != ONE_HEAD:
                _head(row, 0, n, theta[j], -b, a, b, -1, extremes, G, 3, 2, omega)
            out[0, j], out[1, j], out[2, j], out[3, j] = _combine(G, estimator, theta[j], scratch)
    return valid.all()
