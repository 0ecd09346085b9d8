"""The pruned path of the compiled corpus kernel: each group of a sorted task restricted to its window.

Mathematics: :mod:`stumpcheck.numerics.corpus.kernel` (the per-task sweep and its groups) and
:func:`stumpcheck.numerics.corpus.empirical.pruned_window_bound` (what the windows leave out). On a sorted task
(N = row[:split], P = row[split:]) each group g's points with |β|·|x − c_g| ≤ T form one run of the
row that starts at the group's best point c_g (:func:`window`); the kernel sums only that run
(:func:`_group_sums`: one exp per touched point), and leaves out a whole group whose softmax weight
is certainly below e^{−T} (:func:`_negligible_groups`). Precision: float64, the same operations as
the dense kernel on the points it touches, so the same accuracy plus the window bound.

Cost. A task's windows are short runs of a row that is not in cache (the rows are 8 n bytes apart
and touched once per call), so the kernel asks for them ahead of use: while task j is computed,
the cache lines of task j + ``_AHEAD``'s best points and windows (sized as the windows of the
task just computed) are prefetched (:mod:`stumpcheck.numerics.corpus.kernel_prefetch`). The fixed cost per
task is kept off the libm: the log n_g of the group-dropping test is read from a table of
log k, k ≤ n, built once per call, and a softmax with one non-empty group has weight 1 without
its double-double differences (:func:`stumpcheck.numerics.corpus.kernel_algebra.mixture`). Measured on one
thread (10⁴ tasks of n = 1000, b = 500, one-head, 14 % of the points touched): the same windows
already in cache take as long as from memory (the waits are hidden); what is left is ~2.5 ns
per touched point (the exp and the sums of :func:`_group_sums`) and ~210 ns per task (window
ends, group dropping, the group table and its mixture, the prefetches), about 60 % and 40 %.

Two entry points with one task loop (:func:`_tasks`): :func:`pruned_tasks` splits the tasks across
numba's threads (``prange`` over blocks of tasks), :func:`pruned_tasks_serial` runs them on the
calling thread without starting a parallel region; both give the same bits.
"""

from __future__ import annotations

import numpy as np
from numba import njit, prange

from stumpcheck.numerics.corpus.kernel import _BLOCK, _ROW, ONE_HEAD, POOLED, REFLECTED, _combine
from stumpcheck.numerics.corpus.kernel_algebra import N_FIELDS, set_group
from stumpcheck.numerics.corpus.kernel_exp import EXP_FLUSH, exp_above_flush, exp_nonpositive
from stumpcheck.numerics.corpus.kernel_prefetch import prefetch

__all__ = ["pruned_tasks", "pruned_tasks_serial", "window"]

_STRIDE = 8  # points per step of the window scan (one cache line)
_AHEAD = 2   # tasks between a task's prefetch and its computation
# A window keeps the points up to its limit fl(c + T/β), which is within 2T/|β| of c (it rounds to c
# when T/|β| is below half an ulp of c), so every exponent of its weights is ≥ −2T(1 + 4·2⁻⁵³); with
# T up to this they are all above the exp's flush point
_BOUNDED_WINDOW = -EXP_FLUSH / 2.0 - 4.0


@njit(cache=True, fastmath={"reassoc"})
def _weighted_sums(points, c, sign, slope, omega):
    """(Σ ω, Σ ω d) with ωᵢ = exp(slope·dᵢ) stored in omega[i], dᵢ = (xᵢ − c)·sign ≥ 0 (the loop of
    :func:`_group_sums`; any exponent, clamped at the flush point)."""
    total = moment = 0.0
    for i in range(points.shape[0]):
        d = (points[i] - c) * sign
        w = exp_nonpositive(d * slope)
        omega[i] = w
        total += w
        moment += w * d
    return total, moment


@njit(cache=True, fastmath={"reassoc"})
def _weighted_sums_above_flush(points, c, sign, slope, omega):
    """:func:`_weighted_sums` when every exponent slope·dᵢ is known to be ≥ −708: the same bits,
    without the clamp (an explicit second loop: a function passed as an argument would not be cached)."""
    total = moment = 0.0
    for i in range(points.shape[0]):
        d = (points[i] - c) * sign
        w = exp_above_flush(d * slope)
        omega[i] = w
        total += w
        moment += w * d
    return total, moment


@njit(cache=True, fastmath={"reassoc"})
def _group_sums(row, first, last, beta, c, omega, bounded):
    """(S, near, Σ ω (d − near)²) of one group whose points are row[first:last] (a window of a sorted
    task): ωᵢ = exp(−|β| dᵢ) into omega[i − first], dᵢ = |xᵢ − c| (c the group's best point),
    S = Σ ω, near = Σ ω d / S. ``bounded``: every exponent −|β| dᵢ is known to be ≥ −708 (a window
    with T ≤ ``_BOUNDED_WINDOW`` = 350), so the exp skips its clamp (the same bits, ~8 % less time per point).

    The pruned path's form of the dense sweep and spread: one group, so no side test and two
    accumulators instead of four, kept in the exp loop (on a window of 117 points that loop and
    the spread took ~380 ns, against ~670 ns for the dense sweep + spread, before the view below;
    measured on one thread). Reassociation is allowed for the four sums only (so that they vectorise: the order
    of a sum of non-negative terms changes, not its error bound); the exp keeps its own order.
    """
    slope = -abs(beta)
    sign = 1.0 if beta >= 0.0 else -1.0
    # loops over a view from index 0: the compiler then knows no index is negative and drops numba's
    # wrap-around of negative indices, which had made the loads scalar (2.8 against 2.2 ns per point
    # on a window of 128 points, one thread)
    points = row[first:last]
    count = points.shape[0]
    if count == 0:
        return 0.0, 0.0, 0.0
    if bounded:
        total, moment = _weighted_sums_above_flush(points, c, sign, slope, omega)
    else:
        total, moment = _weighted_sums(points, c, sign, slope, omega)
    near = moment / total
    spread = 0.0
    for i in range(count):
        dev = (points[i] - c) * sign - near
        spread += dev * dev * omega[i]
    return total, near, spread


@njit(cache=True)
def window(row, start, stop, beta, T):
    """[first, last) of the points of row[start:stop] (one group, sorted) with |β|·|x − c| ≤ T,
    c the group's best point (row[start] if β > 0, row[stop − 1] if β < 0).

    Found by a scan from the best point rather than a binary search: the scan reads only the
    window (and one point past it), which the sums read next, where a binary search over a row
    that is not in cache costs a memory access per probe. Its cost is O(window), like the sums'.
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


@njit(cache=True, inline="always")
def _unused(h, estimator):
    """Whether head h (0 one-head scores, 1 reflected) is not part of the estimator."""
    return (h == 0 and estimator == REFLECTED) or (h == 1 and estimator == ONE_HEAD)


@njit(cache=True, inline="always")
def _group_range(n, split, h, side):
    """(start, stop, β's sign) of group (head h, side) of a sorted task: P = [split, n), N = [0, split)."""
    start, stop = (split, n) if side == 0 else (0, split)
    return start, stop, 1 if h == 0 else -1


@njit(cache=True)
def _negligible_groups(row, split, a, b, estimator, T, log_count, keep, best, upper):
    """keep[g] = False for each group g of the task whose whole softmax weight is below e^{−T}.

    With s_g = K_g − β c_g the score of the group's best point and n_g its size, Z_g ≤ n_g e^{s_g}
    and the softmax's largest Z_h ≥ e^{max_h s_h}; so w_g < e^{−T} once s_g + log n_g < max_h s_h − T
    (one more unit of margin covers the rounding of the scores and of log n_g, read from
    ``log_count[k] = log k``). Groups compete within a softmax: one-head (rows 0, 1), reflected
    (rows 2, 3), pooled (all four); averaged has two softmaxes. ``best`` and ``upper`` are scratch of
    length 4 (s_g and s_g + log n_g). Only the estimator's heads are read.
    """
    n = row.shape[0]
    for h in range(2):
        beta = b if h == 0 else -b
        for side in range(2):
            g = _ROW[h][side]
            start, stop = (split, n) if side == 0 else (0, split)
            keep[g] = stop > start and not _unused(h, estimator)
            if not keep[g]:
                best[g] = -np.inf
                upper[g] = -np.inf
                continue
            c = row[start] if beta >= 0.0 else row[stop - 1]
            kappa = (1.0 if side == 0 else 0.0) if h == 0 else (1.0 if side == 1 else 0.0)
            best[g] = a * kappa - (b if h == 1 else 0.0) - beta * c
            upper[g] = best[g] + log_count[stop - start]
    for first, count in ((0, 4), (0, 2), (2, 2)):
        if (count == 4) != (estimator == POOLED):
            continue
        top = -np.inf
        for g in range(first, first + count):
            top = max(top, best[g])
        for g in range(first, first + count):
            if upper[g] < top - T - 1.0:
                keep[g] = False


@njit(cache=True)
def _prefetch_task(row, split, b, estimator, extent):
    """Prefetch the cache lines a sorted task will be read at: each group's best point (read by
    :func:`_negligible_groups` whether or not the group is kept) and its window, guessed as
    ``extent[g]`` points from the best point (a hint only: see :mod:`stumpcheck.numerics.corpus.kernel_prefetch`)."""
    n = row.shape[0]
    for h in range(2):
        if _unused(h, estimator):
            continue
        for side in range(2):
            start, stop, sign = _group_range(n, split, h, side)
            if stop <= start:
                continue
            forward = b * sign >= 0.0
            prefetch(row, start if forward else stop - 1)
            size = min(extent[_ROW[h][side]], stop - start)
            if size <= 1:
                continue
            first = start if forward else stop - size   # a window starts at its best point
            for i in range(first, first + size, _STRIDE):
                prefetch(row, i)
            prefetch(row, first + size - 1)


@njit(cache=True)
def _tasks(xs, theta, split, a, b, estimator, T, out, first_task, last_task, log_count):
    """Tasks first_task … last_task − 1 of :func:`pruned_tasks`; returns (valid, points touched)."""
    m, n = xs.shape
    omega = np.empty(n)
    G = np.zeros((4, N_FIELDS))
    scratch = np.empty(4)
    best = np.empty(4)
    upper = np.empty(4)
    keep = np.empty(4, dtype=np.bool_)
    extent = np.zeros(4, dtype=np.int64)
    valid = True
    touched = 0
    for j in range(first_task, last_task):
        row = xs[j]
        ahead = j + _AHEAD
        if ahead < m:   # past this range too: a hint, whichever thread computes that task
            _prefetch_task(xs[ahead], split[ahead], b, estimator, extent)
        _negligible_groups(row, split[j], a, b, estimator, T, log_count, keep, best, upper)
        for h in range(2):
            if _unused(h, estimator):
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
                touched += count
                # a sorted window's extremes are its ends (sort_corpus checked every point; this
                # rejects a window of a hand-made SortedCorpus whose ends are not in [0, 1])
                lo = row[first] if count > 0 else 0.0
                hi = row[last - 1] if count > 0 else 0.0
                if count > 0 and not (lo >= 0.0 and hi <= 1.0):
                    valid = False
                total, near, spread = _group_sums(row, first, last, beta, lo if beta >= 0.0 else hi, omega,
                                                  T <= _BOUNDED_WINDOW)
                kappa = (1 if side == 0 else 0) if sign > 0 else (1 if side == 1 else 0)
                set_group(G, g, count, lo, hi, total, near, spread / total if count > 0 else 0.0,
                          beta, a, b, kappa, sign)
        out[0, j], out[1, j], out[2, j], out[3, j] = _combine(G, estimator, theta[j], scratch)
    return valid, touched


@njit(cache=True)
def _log_counts(n):
    """log k for k = 0 … n (log 0 = −inf is never read: empty groups are dropped first)."""
    return np.log(np.arange(n + 1).astype(np.float64))


@njit(cache=True, parallel=True)
def pruned_tasks(xs, theta, split, a, b, estimator, T, out):
    """As :func:`stumpcheck.numerics.corpus.kernel.dense_tasks` on sorted tasks (N = xs[j, :split[j]],
    P = xs[j, split[j]:]), each group restricted to its window (:func:`window`), and a group whose
    whole weight is below e^{−T} left out (:func:`_negligible_groups`); blocks of tasks split across
    numba's threads. Returns (valid, points touched)."""
    m, n = xs.shape
    log_count = _log_counts(n)
    blocks = (m + _BLOCK - 1) // _BLOCK
    valid = np.ones(blocks, dtype=np.bool_)
    touched = np.zeros(blocks, dtype=np.int64)
    for k in prange(blocks):
        valid[k], touched[k] = _tasks(xs, theta, split, a, b, estimator, T, out, k * _BLOCK,
                                      min(m, (k + 1) * _BLOCK), log_count)
    return valid.all(), touched.sum()


def pruned_tasks_serial(xs, theta, split, a, b, estimator, T, out):
    """:func:`pruned_tasks` on the calling thread alone (no parallel region is started); the same bits.

    A Python function calling the compiled task loop :func:`_tasks` with the argument types
    :func:`pruned_tasks` gives it, so that one compiled loop serves both entry points (a compiled wrapper
    passing the constant 0 would compile a second loop specialised on it: about 4 s of a fresh
    environment's first call).
    """
    m, n = xs.shape
    return _tasks(xs, theta, split, float(a), float(b), int(estimator), float(T), out, int(0), int(m),
                  _log_counts(int(n)))
