"""The compiled corpus kernel: θ̂, e, ∂θ̂/∂a, ∂θ̂/∂b of every task in one fused pass per task.

Model and algebra: docs/model.md §2, §5 and :mod:`numerics.corpus.groups` (groups of points with
one score slope, their moments about the group's best point, the double-double group weights and
the cancellation-free pairwise formulas); the scalar algebra is :mod:`numerics.corpus.kernel_algebra`.
Precision: float64, the same operations as the group algebra, so the same accuracy
(:mod:`numerics.corpus.empirical` states it).

Per task and per head (β = b for one-head scores, −b for reflected scores), the kernel

1. finds the extremes of each side (P = {x ≥ θ}, N = {x < θ}) over the points it touches (no exp);
2. computes ωᵢ = exp(−|β| dᵢ), dᵢ = |xᵢ − c_g| ≥ 0 the distance to the best point of the point's
   group g, into a scratch row, in a loop with no reduction (:func:`_weights`: one exp per token
   per group, every exponent ≤ 0, so nothing overflows), then sums S_g = Σ ωᵢ and Σ ωᵢ dᵢ;
3. sweeps again without exp for V_g = Σ ωᵢ (dᵢ − near_g)² / S_g, near_g = Σ ωᵢ dᵢ / S_g
   (the centred form: the uncentred Σ ω d² − near² would cancel);

then combines the groups (:func:`numerics.corpus.kernel_algebra.mixture`). The dense path touches
every point of a task; the pruned path runs the same steps on each group's window of a sorted
task (the points with |β|·|x − c_g| ≤ T, found by a scan from the best point), one group at a
time (:func:`_group_sums`), with the next task's windows prefetched, so its cost follows the
touched points.

Vectorisation (checked in the compiled machine code on an AVX2 machine): the loops of steps 1–3
compile to 256-bit (ymm) instructions, 4 doubles at a time; the exp is branch-free arithmetic
(:mod:`numerics.corpus.kernel_exp`), so the loop of step 2 is a vector loop with no call in it.
Tasks are split across threads with ``prange`` (``numba.set_num_threads``, or the
environment variable NUMBA_NUM_THREADS before the first import); scratch memory is one row of n
doubles per block of tasks, nothing is allocated per task. Results do not depend on the thread
count (each task is computed by one thread, in a fixed order).

Compiled on first use and cached on disk (``cache=True``): the first call in a fresh environment
pays the compile time once (see benchmarks/bench_empirical.py for the figure).
"""

from __future__ import annotations

import numpy as np
from numba import njit, prange

from numerics.corpus.kernel_algebra import N_FIELDS, mixture, set_group
from numerics.corpus.kernel_exp import exp_nonpositive, float_bits, float_from_bits
from numerics.corpus.kernel_prefetch import prefetch

__all__ = ["ONE_HEAD", "REFLECTED", "AVERAGED", "POOLED", "ESTIMATOR_CODES", "dense_tasks", "pruned_tasks",
           "window"]

ONE_HEAD, REFLECTED, AVERAGED, POOLED = 0, 1, 2, 3
ESTIMATOR_CODES = {"one-head": ONE_HEAD, "reflected": REFLECTED, "averaged": AVERAGED, "pooled": POOLED}
_BLOCK = 16  # tasks per scheduling block (a block shares its scratch row)
_STRIDE = 8  # points per step of the window scan (one cache line)


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


@njit(cache=True, fastmath={"reassoc"})
def _group_sums(row, first, last, beta, c, omega):
    """(S, near, Σ ω (d − near)²) of one group whose points are row[first:last] (a window of a sorted
    task): ωᵢ = exp(−|β| dᵢ) into omega[i − first], dᵢ = |xᵢ − c| (c the group's best point),
    S = Σ ω, near = Σ ω d / S.

    The pruned path's form of :func:`_sweep` and :func:`_spread`: one group, so no side test and two
    accumulators instead of four, kept in the exp loop (on a window of 117 points that loop and
    the spread take ~380 ns, against ~670 ns for :func:`_sweep` + :func:`_spread`; measured on one
    thread). Reassociation as in :func:`_sweep`: the four sums only, the exp keeps its own order.
    """
    slope = -abs(beta)
    sign = 1.0 if beta >= 0.0 else -1.0
    total = moment = 0.0
    for i in range(first, last):
        d = (row[i] - c) * sign
        w = exp_nonpositive(d * slope)
        omega[i - first] = w
        total += w
        moment += w * d
    near = moment / total if last > first else 0.0
    spread = 0.0
    for i in range(first, last):
        dev = (row[i] - c) * sign - near
        spread += dev * dev * omega[i - first]
    return total, near, spread


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


@njit(cache=True)
def window(row, start, stop, beta, T):
    """[first, last) of the points of row[start:stop] (one group, sorted) with |β|·|x − c| ≤ T,
    c the group's best point (row[start] if β > 0, row[stop − 1] if β < 0).

    Found by a scan from the best point rather than a binary search: the scan reads only the
    window (and one point past it), which the sweeps read next, where a binary search over a row
    that is not in cache costs a memory access per probe. Its cost is O(window), like the sweeps'.
    """
    if beta == 0.0 or T / abs(beta) >= 1.0 or stop <= start:
        return start, stop
    if beta > 0.0:
        limit = row[start] + T / beta
        last = start + 1
        while last + _STRIDE <= stop and not row[last + _STRIDE - 1] > limit:   # sorted: a stride at a time
            last += _STRIDE
        while last < stop and not row[last] > limit:
            last += 1
        return start, last
    limit = row[stop - 1] - T / -beta
    first = stop - 1
    while first - _STRIDE >= start and row[first - _STRIDE] >= limit:
        first -= _STRIDE
    while first > start and row[first - 1] >= limit:
        first -= 1
    return first, stop


@njit(cache=True)
def _negligible_groups(row, split, a, b, estimator, T, keep, best, upper):
    """keep[g] = False for each group g of the task whose whole softmax weight is below e^{−T}.

    With s_g = K_g − β c_g the score of the group's best point and n_g its size, Z_g ≤ n_g e^{s_g}
    and the softmax's largest Z_h ≥ e^{max_h s_h}; so w_g < e^{−T} once s_g + log n_g < max_h s_h − T
    (one more unit of margin covers the rounding of the scores). Groups compete within a softmax:
    one-head (rows 0, 1), reflected (rows 2, 3), pooled (all four); averaged has two softmaxes.
    ``best`` and ``upper`` are scratch of length 4 (s_g and s_g + log n_g). Only the estimator's
    heads are read (the other head's best points are cache lines the kernel would not touch).
    """
    n = row.shape[0]
    for h in range(2):
        beta = b if h == 0 else -b
        unused = (h == 0 and estimator == REFLECTED) or (h == 1 and estimator == ONE_HEAD)
        for side in range(2):
            g = _ROW[h][side]
            start, stop = (split, n) if side == 0 else (0, split)
            keep[g] = stop > start and not unused
            if not keep[g]:
                best[g] = -np.inf
                upper[g] = -np.inf
                continue
            c = row[start] if beta >= 0.0 else row[stop - 1]
            kappa = (1.0 if side == 0 else 0.0) if h == 0 else (1.0 if side == 1 else 0.0)
            best[g] = a * kappa - (b if h == 1 else 0.0) - beta * c
            upper[g] = best[g] + np.log(stop - start)
    for first, count in ((0, 4), (0, 2), (2, 2)):
        if (count == 4) != (estimator == POOLED):
            continue
        top = -np.inf
        for g in range(first, first + count):
            top = max(top, best[g])
        for g in range(first, first + count):
            if upper[g] < top - T - 1.0:
                keep[g] = False


@njit(cache=True, inline="always")
def _group_range(n, split, h, side):
    """(start, stop, β's sign) of group (head h, side) of a sorted task: P = [split, n), N = [0, split)."""
    start, stop = (split, n) if side == 0 else (0, split)
    return start, stop, 1 if h == 0 else -1


@njit(cache=True)
def _prefetch_windows(row, split, b, estimator, extent):
    """Prefetch the cache lines of a sorted task's windows, guessed as the previous task's window
    sizes ``extent[g]`` (a hint only: see :mod:`numerics.corpus.kernel_prefetch`)."""
    n = row.shape[0]
    for h in range(2):
        if (h == 0 and estimator == REFLECTED) or (h == 1 and estimator == ONE_HEAD):
            continue
        for side in range(2):
            start, stop, sign = _group_range(n, split, h, side)
            size = min(extent[_ROW[h][side]], stop - start)
            if size <= 0:
                continue
            first = start if b * sign >= 0.0 else stop - size   # a window starts at its best point
            for i in range(first, first + size, _STRIDE):
                prefetch(row, i)
            prefetch(row, first + size - 1)


@njit(cache=True, parallel=True)
def pruned_tasks(xs, theta, split, a, b, estimator, T, out):
    """As :func:`dense_tasks` on sorted tasks (N = xs[j, :split[j]], P = xs[j, split[j]:]), each group
    restricted to its window (:func:`window`), and a group whose whole weight is below e^{−T} left out
    (:func:`_negligible_groups`). Returns (valid, points touched).

    Each task's windows are short runs of a row that is not in cache; while a task is computed the
    next task's windows are prefetched (:func:`_prefetch_windows`, sized as this task's), which took
    the window scans from 3.1 to 2.2 ms per 10⁴ tasks at b = 500 (measured on one thread).
    """
    m, n = xs.shape
    blocks = (m + _BLOCK - 1) // _BLOCK
    valid = np.ones(blocks, dtype=np.bool_)
    touched = np.zeros(blocks, dtype=np.int64)
    for k in prange(blocks):
        omega = np.empty(n)
        G = np.zeros((4, N_FIELDS))
        scratch = np.empty(4)
        best = np.empty(4)
        upper = np.empty(4)
        keep = np.empty(4, dtype=np.bool_)
        extent = np.zeros(4, dtype=np.int64)
        for j in range(k * _BLOCK, min(m, (k + 1) * _BLOCK)):
            row = xs[j]
            if j + 1 < m:   # the next block's first task too: a hint, whichever thread computes it
                _prefetch_windows(xs[j + 1], split[j + 1], b, estimator, extent)
            _negligible_groups(row, split[j], a, b, estimator, T, keep, best, upper)
            for h in range(2):
                if (h == 0 and estimator == REFLECTED) or (h == 1 and estimator == ONE_HEAD):
                    continue
                for side in range(2):
                    start, stop, sign = _group_range(n, split[j], h, side)
                    beta = b * sign
                    g = _ROW[h][side]
                    if keep[g]:
                        first, last = window(row, start, stop, beta, T)
                    else:
                        first, last = start, start
                    count = last - first
                    extent[g] = count
                    touched[k] += count
                    # a sorted window's extremes are its ends (sort_corpus checked every point; this
                    # rejects a window of a hand-made SortedCorpus whose ends are not in [0, 1])
                    lo = row[first] if count > 0 else 0.0
                    hi = row[last - 1] if count > 0 else 0.0
                    if count > 0 and not (lo >= 0.0 and hi <= 1.0):
                        valid[k] = False
                    total, near, spread = _group_sums(row, first, last, beta, lo if beta >= 0.0 else hi, omega)
                    kappa = (1 if side == 0 else 0) if sign > 0 else (1 if side == 1 else 0)
                    set_group(G, g, count, lo, hi, total, near, spread / total if count > 0 else 0.0,
                              beta, a, b, kappa, sign)
            out[0, j], out[1, j], out[2, j], out[3, j] = _combine(G, estimator, theta[j], scratch)
    return valid.all(), touched.sum()
