"""The numpy path of the corpus kernel: the group algebra on (rows × n) arrays, a chunk of tasks at a time.

The algebra and its array functions live in :mod:`stumpcheck.numerics.corpus.groups`.

This is the implementation the compiled kernel (:mod:`stumpcheck.numerics.corpus.kernel`) replaced; it is
kept, reachable as ``backend="numpy"`` in :mod:`stumpcheck.numerics.corpus.empirical`, as an independent
second implementation of the same algebra for the tests and the benchmark. Same mathematics and
accuracy; slower, because every pass writes a fresh chunk-sized temporary.
"""

from __future__ import annotations

import numpy as np

from stumpcheck.numerics.corpus.groups import Group, combine, group_moments, row_dot, two_prod

__all__ = ["dense_chunk", "pruned_chunk", "window_bounds"]


# ---------------------------------------------------------------- dense path

def _dense_pair(xs, positive, pos_f, neg_f, extremes, *, beta: float, a: float, b: float, head: int):
    """Both groups (P, N) of one head in one sweep: a single exponent array, centred per group.

    The per-element centre is the group's best point, so every exponent is ≤ 0; the group
    sums are masked dot products (no (rows × n) temporaries per group). The moment about the
    best point ("near") is summed directly; the one about the other end of the group is
    range − near (the weights fall away from the best point, so near ≤ the unweighted mean
    distance and range − near keeps its relative accuracy).
    """
    xmin_p, xmax_p, xmin_n, xmax_n, empty_p, empty_n = extremes
    # centre = c_P on P, c_N on N, exactly: one of the two products is an exact 0
    if beta >= 0:
        centre = pos_f * xmin_p[:, None] + neg_f * xmin_n[:, None]
        dist = xs - centre
    else:
        centre = pos_f * xmax_p[:, None] + neg_f * xmax_n[:, None]
        dist = centre - xs
    weight = dist * (-abs(beta))
    np.exp(weight, out=weight)
    total_p = row_dot(weight, pos_f)
    total_n = row_dot(weight, neg_f)
    total_p = np.where(empty_p, 1.0, total_p)
    total_n = np.where(empty_n, 1.0, total_n)
    weighted = weight * dist
    near_p = row_dot(weighted, pos_f) / total_p
    near_n = row_dot(weighted, neg_f) / total_n
    dev = dist - (pos_f * near_p[:, None] + neg_f * near_n[:, None])
    dev *= dev
    dev *= weight
    var_p = row_dot(dev, pos_f) / total_p
    var_n = row_dot(dev, neg_f) / total_n
    groups = {}
    rows = xs.shape[0]
    for side, xmin, xmax, total, near, var, empty in (("P", xmin_p, xmax_p, total_p, near_p, var_p, empty_p),
                                                     ("N", xmin_n, xmax_n, total_n, near_n, var_n, empty_n)):
        kappa = (1 if side == "P" else 0) if head > 0 else (1 if side == "N" else 0)
        span = xmax - xmin
        lo, hi = (near, span - near) if beta >= 0 else (span - near, near)
        c = xmin if beta >= 0 else xmax
        p_hi, p_lo = two_prod(np.full_like(c, -beta), c)
        terms = [np.full(rows, a * kappa), np.full(rows, -b if head < 0 else 0.0), p_hi, p_lo, np.log(total)]
        groups[side] = Group(kappa=kappa, head=head, empty=empty, xmin=xmin, xmax=xmax, terms=terms,
                              lo=lo, hi=hi, var=var, forward=beta >= 0)
    return groups


def dense_chunk(xs, th, a, b, estimator):
    positive = xs >= th[:, None]
    pos_f = positive.astype(np.float64)
    neg_f = 1.0 - pos_f
    count_p = pos_f.sum(axis=1)
    empty_p = count_p == 0
    empty_n = count_p == xs.shape[1]
    row_min = xs.min(axis=1)
    row_max = xs.max(axis=1)
    # x + 2 on N (resp. x − 2 on P) moves those points out of the min (max); P (N) values stay exact
    xmin_p = np.where(empty_p, 0.0, (xs + 2.0 * neg_f).min(axis=1))
    xmax_n = np.where(empty_n, 0.0, (xs - 2.0 * pos_f).max(axis=1))
    xmax_p = np.where(empty_p, 0.0, row_max)
    xmin_n = np.where(empty_n, 0.0, row_min)
    extremes = (xmin_p, xmax_p, xmin_n, xmax_n, empty_p, empty_n)
    pairs = {}

    def make_group(side, kappa, head):
        if head not in pairs:
            pairs[head] = _dense_pair(xs, positive, pos_f, neg_f, extremes, beta=b * head, a=a, b=b, head=head)
        return pairs[head][side]

    return combine(estimator, make_group, th)


# ---------------------------------------------------------------- pruned path

def _first_index(xs, lo, hi, value, *, strict: bool):
    """Per row, the first i in [lo, hi) with xs[i] > value (strict) or ≥ value; hi if none (rows sorted)."""
    lo = lo.copy()
    hi = hi.copy()
    rows = np.arange(xs.shape[0])
    last = xs.shape[1] - 1
    while True:
        active = lo < hi
        if not active.any():
            return lo
        mid = (lo + hi) // 2
        probe = xs[rows, np.minimum(mid, last)]
        right = probe > value if strict else probe >= value
        hi = np.where(active & right, mid, hi)
        lo = np.where(active & ~right, mid + 1, lo)


def window_bounds(xs, start, stop, beta: float, window: float):
    """[first, last) of the points of xs[:, start:stop] with β (x − c) ≤ T (c the group's best point)."""
    if beta == 0.0 or window / abs(beta) >= 1.0:
        return start, stop
    rows = np.arange(xs.shape[0])
    nonempty = stop > start
    if beta > 0:
        best = xs[rows, np.minimum(start, xs.shape[1] - 1)]
        end = _first_index(xs, start, stop, best + window / beta, strict=True)
        return start, np.where(nonempty, end, stop)
    best = xs[rows, np.maximum(stop - 1, 0)]
    first = _first_index(xs, start, stop, best - window / -beta, strict=False)
    return np.where(nonempty, first, start), stop


def _gather(xs, first, last):
    width = int((last - first).max()) if xs.shape[0] else 0
    width = max(width, 1)
    index = first[:, None] + np.arange(width)[None, :]
    mask = index < last[:, None]
    # past the window, repeat its last point (keeps masked-out values inside the group's range)
    index = np.minimum(index, np.maximum(last - 1, 0)[:, None])
    values = np.take_along_axis(xs, index, axis=1)
    return values, mask


def pruned_chunk(xs, th, split, a, b, estimator, window, chunk_tokens):
    if b == 0.0 or window / abs(b) >= 1.0:   # the window is the whole group: nothing to prune
        return dense_chunk(xs, th, a, b, estimator)
    m, n = xs.shape
    bounds = {"N": (np.zeros(m, dtype=np.int64), split), "P": (split, np.full(m, n, dtype=np.int64))}
    heads = {"one-head": (1,), "reflected": (-1,)}.get(estimator, (1, -1))
    windows = {(side, head): window_bounds(xs, *bounds[side], b * head, window) for side in "PN" for head in heads}
    width = max(int((last - first).max()) for first, last in windows.values())
    if m > 1 and m * width > chunk_tokens:   # keep the gathered arrays within chunk_tokens
        half = m // 2
        first_half = pruned_chunk(xs[:half], th[:half], split[:half], a, b, estimator, window, chunk_tokens)
        second_half = pruned_chunk(xs[half:], th[half:], split[half:], a, b, estimator, window, chunk_tokens)
        return tuple(np.concatenate([u, v]) for u, v in zip(first_half, second_half))

    def make_group(side, kappa, head):
        first, last = windows[(side, head)]
        values, mask = _gather(xs, first, last)
        return group_moments(values, mask, beta=b * head, a=a, b=b, kappa=kappa, head=head)

    return combine(estimator, make_group, th)
