"""The corpus loss L̂ and its exact gradient, float64, stable for |a|, |b| up to 10⁶ and beyond.

Model (docs/model.md §2, §5). For one task with points xᵢ ∈ [0, 1], labels
yᵢ = 1{xᵢ ≥ θ} and scores sᵢ, α = softmax(s) and θ̂ = Σ αᵢ xᵢ:

* one-head:  sᵢ = a yᵢ − b xᵢ;
* reflected: s'ᵢ = a (1 − yᵢ) − b (1 − xᵢ), same values xᵢ;
* averaged:  (θ̂ + θ̂') / 2;
* pooled:    one softmax over the 2n scores {sᵢ} ∪ {s'ᵢ}, values xᵢ.

Per task ℓ = ½ (θ̂ − θ)², L̂ = (1/m) Σⱼ ℓⱼ, ∇L̂ = (1/m) Σⱼ (θ̂ⱼ − θⱼ) ∇θ̂ⱼ.

The per-task algebra (groups of points with one score slope, their moments
and the pairwise covariance formulas, and why they avoid cancellation) lives
in :mod:`numerics.corpus.groups`; this module validates the input and runs
it over the corpus in chunks, densely or on pruned windows.

Accuracy (float64, measured against an 80-digit mpmath evaluation of the
defining softmax in tests/test_empirical_accuracy.py). Write scale(v) for the
defining sum of v with every term replaced by its absolute value: Σᵢ αᵢ|xᵢ − θ|
for θ̂ − θ, Σ_{i<j} αᵢαⱼ|Δ∂s||Δx| for ∂θ̂/∂a, ∂θ̂/∂b, and
(1/m) Σⱼ (scale(eⱼ)|∂θ̂ⱼ| + |eⱼ| scale(∂θ̂ⱼ)) for ∇L̂. Every output is within
(``ROUNDING_ULPS`` + 4n)·2⁻⁵³·scale, plus 10⁻³⁰⁰ absolute below the normal
range and, for ``method="pruned"``, :func:`pruned_window_bound` (each weight
carries the rounding of its exponent, |β|·|x − c| ≤ 745 for any weight above
underflow; each sum of n terms ≈ n ulps. Measured ≤ 352·2⁻⁵³·scale on
near-mirrored tasks with n = 12 and |a|, b ≤ 10⁶; this is an error model
checked by tests, not a proof).

* one-head and reflected: every term has one sign, value = ±scale, so this is
  a relative error (≤ 4·10⁻¹⁴ measured, asserted ≤ 10⁻¹² for a, b up to 10⁶);
* averaged and pooled: terms of both signs meet, and on a task that is nearly
  its own reflection (points {hᵢ} ∪ {1 − hᵢ} around θ = ½) e and ∇θ̂ are far
  below their scale: there the error is absolute, a few hundred ulps of the
  scale, and the relative error can reach 1 (e.g. a pooled e = −4.6·10⁻¹⁷
  with scale 0.47 comes out as −8.3·10⁻¹⁷). Resolving such values needs more
  than double precision: moving one input point by one ulp changes them by as
  much. No cancellation comes from the algebra
  itself: away from such tasks, e.g. pooled at a = −b, where ∂θ̂/∂b holds
  1 − μ_N − μ_P ≈ 10⁻¹², the result keeps its relative accuracy.

Domain: a, b any finite reals (b < 0 and b = 0 are handled; the model's
regime is b > 0); x ∈ [0, 1] float64 (m × n), θ ∈ [0, 1] (m,), used only for
the labels and the loss. Precision: float64.

Two paths. ``method="dense"`` touches every token (one exp per token and
score), in chunks of about ``chunk_tokens`` tokens (default 2¹⁶: each
temporary is 512 KiB and stays in cache); memory O(chunk_tokens + m), not
O(m n). ``method="pruned"`` sorts each task once (:class:`SortedCorpus`) and,
in each group, touches only the window of points with |β_g|·|x − c_g| ≤ T
(``window``, default T = 64), found by binary search: see
:func:`pruned_window_bound` for the bound on what the window leaves out
(absolute, ≤ 32 (n − 1) e^{−T} per task output; so dense and pruned agree to
rounding except for per-task values that are themselves below that bound,
e.g. a ∂θ̂/∂b ~ 10⁻¹⁰⁰ when all the weight sits on one point).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from numerics.corpus.groups import Group, combine, group_moments, row_dot, two_prod
from numerics.precision import InputError, finite_float

__all__ = ["ESTIMATORS", "METHODS", "DEFAULT_WINDOW", "ROUNDING_ULPS", "SortedCorpus", "sort_corpus", "estimate",
           "estimate_and_gradient", "error_and_gradient", "loss_and_gradient", "pruned_window_bound",
           "window_sizes"]

ESTIMATORS = ("one-head", "reflected", "averaged", "pooled")
METHODS = ("dense", "pruned")
DEFAULT_WINDOW = 64.0
DEFAULT_CHUNK_TOKENS = 2**16

#: Every output is within (ROUNDING_ULPS + 4n)·2⁻⁵³ of its condition scale (see the module docstring).
ROUNDING_ULPS = 1024


# ---------------------------------------------------------------- validation

@dataclass(frozen=True, eq=False)
class SortedCorpus:
    """A corpus with each task's points sorted once: ``xs`` (m, n) rows ascending, ``theta`` (m,),
    ``split`` (m,) = number of points with x < θ (so N = xs[:, :split], P = xs[:, split:]).

    The estimators are permutation invariant, so results equal those on the unsorted x.
    """

    xs: np.ndarray
    theta: np.ndarray
    split: np.ndarray

    @property
    def shape(self):
        return self.xs.shape


def _check_estimator(estimator: str) -> None:
    if estimator not in ESTIMATORS:
        raise InputError(f"unknown estimator {estimator!r}; expected one of {', '.join(ESTIMATORS)}")


def _check_arrays(x, theta):
    x = np.asarray(x)
    theta = np.asarray(theta)
    if x.ndim != 2 or x.shape[0] < 1 or x.shape[1] < 1:
        raise InputError(f"x must be a non-empty (m, n) array, got shape {x.shape}")
    if theta.shape != (x.shape[0],):
        raise InputError(f"theta must have shape ({x.shape[0]},), got {theta.shape}")
    if x.dtype != np.float64:
        if not (np.issubdtype(x.dtype, np.floating) or np.issubdtype(x.dtype, np.integer)):
            raise InputError(f"x must be real, got dtype {x.dtype}")
        x = x.astype(np.float64)
    theta = theta.astype(np.float64, copy=False)
    if not (theta.min() >= 0.0 and theta.max() <= 1.0):
        raise InputError("theta must be finite and lie in [0, 1]")
    return x, theta


def _check_chunk(xs: np.ndarray) -> None:
    # min/max are NaN if any entry is NaN, which fails the comparisons too.
    if not (xs.min() >= 0.0 and xs.max() <= 1.0):
        raise InputError("x must be finite and lie in [0, 1]")


def _rows_per_chunk(n: int, chunk_tokens) -> int:
    if isinstance(chunk_tokens, bool) or not isinstance(chunk_tokens, (int, np.integer)) or chunk_tokens < 1:
        raise InputError(f"chunk_tokens must be a positive integer, got {chunk_tokens!r}")
    return max(1, int(chunk_tokens) // n)


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


def _dense_chunk(xs, th, a, b, estimator):
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

def sort_corpus(x, theta, *, chunk_tokens: int = DEFAULT_CHUNK_TOKENS) -> SortedCorpus:
    """Sort each task's points once (O(m n log n)); reuse the result for every (a, b)."""
    x, theta = _check_arrays(x, theta)
    m, n = x.shape
    xs = np.empty_like(x)
    split = np.empty(m, dtype=np.int64)
    step = _rows_per_chunk(n, chunk_tokens)
    for start in range(0, m, step):
        rows = slice(start, min(m, start + step))
        chunk = x[rows]
        _check_chunk(chunk)
        xs[rows] = np.sort(chunk, axis=1)
        split[rows] = np.count_nonzero(chunk < theta[rows, None], axis=1)
    xs.setflags(write=False)
    theta = np.array(theta, dtype=np.float64)
    theta.setflags(write=False)
    split.setflags(write=False)
    return SortedCorpus(xs=xs, theta=theta, split=split)


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


def _window(xs, start, stop, beta: float, window: float):
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


def _pruned_chunk(xs, th, split, a, b, estimator, window, chunk_tokens):
    if b == 0.0 or window / abs(b) >= 1.0:   # the window is the whole group: nothing to prune
        return _dense_chunk(xs, th, a, b, estimator)
    m, n = xs.shape
    bounds = {"N": (np.zeros(m, dtype=np.int64), split), "P": (split, np.full(m, n, dtype=np.int64))}
    heads = {"one-head": (1,), "reflected": (-1,)}.get(estimator, (1, -1))
    windows = {(side, head): _window(xs, *bounds[side], b * head, window) for side in "PN" for head in heads}
    width = max(int((last - first).max()) for first, last in windows.values())
    if m > 1 and m * width > chunk_tokens:   # keep the gathered arrays within chunk_tokens
        half = m // 2
        first_half = _pruned_chunk(xs[:half], th[:half], split[:half], a, b, estimator, window, chunk_tokens)
        second_half = _pruned_chunk(xs[half:], th[half:], split[half:], a, b, estimator, window, chunk_tokens)
        return tuple(np.concatenate([u, v]) for u, v in zip(first_half, second_half))

    def make_group(side, kappa, head):
        first, last = windows[(side, head)]
        values, mask = _gather(xs, first, last)
        return group_moments(values, mask, beta=b * head, a=a, b=b, kappa=kappa, head=head)

    return combine(estimator, make_group, th)


def window_sizes(sorted_corpus: SortedCorpus, b: float, *, window: float = DEFAULT_WINDOW) -> dict:
    """How many points the pruned path touches at scale b (one-head groups P and N, β = b), and the total."""
    b = finite_float(b, "b")
    xs, split = sorted_corpus.xs, sorted_corpus.split
    m, n = xs.shape
    touched = 0
    for lo, hi in ((np.zeros(m, dtype=np.int64), split), (split, np.full(m, n, dtype=np.int64))):
        first, last = _window(xs, lo, hi, b, window)
        touched += int((last - first).sum())
    return {"touched": touched, "total": m * n, "fraction": touched / (m * n)}


def pruned_window_bound(n: int, *, window: float = DEFAULT_WINDOW) -> float:
    """Bound on |pruned − dense| for every per-task output (θ̂, θ̂ − θ, ∂θ̂/∂a, ∂θ̂/∂b), to first order in δ.

    In each group g the pruned path keeps the points with |β|·|x − c_g| ≤ T
    (T = ``window``); each left-out point has weight < e^{−T} relative to the
    group's best point, and there are at most n − 1 of them, so with
    δ = (n − 1) e^{−T}:

    * S_g (hence Z_g) changes by a relative ≤ δ, so each w_g by ≤ 2δ w_g;
    * lo_g, μ_g change by ≤ 2δ and V_g by ≤ 3δ (every left-out term has |x − ·| ≤ 1,
      plus the same bound for the renormalisation);
    * summing over the groups and pairs (Σ w_g = 1, |μ_g − μ_h| ≤ 1, |f_g − f_h| ≤ 2)
      every per-task output changes by ≤ 32 δ; the loss gradient (1/m) Σ e ∇θ̂ by ≤ 64 δ.

    Returned: 32 δ. At the default T = 64, δ < 1.7·10⁻²⁸ n: far below one ulp of
    any output that matters, so dense and pruned agree to rounding.
    """
    if window < 2:
        raise InputError(f"window T must be >= 2, got {window}")
    return 32.0 * (max(int(n), 1) - 1) * math.exp(-window)


# ---------------------------------------------------------------- public API

def _per_task(x, theta, a, b, estimator, method, chunk_tokens, window, progress=None):
    """(θ̂, θ̂ − θ, ∂θ̂/∂a, ∂θ̂/∂b) per task, each (m,)."""
    a = finite_float(a, "a")
    b = finite_float(b, "b")
    _check_estimator(estimator)
    if method not in METHODS:
        raise InputError(f"unknown method {method!r}; expected one of {', '.join(METHODS)}")
    window = finite_float(window, "window")
    if window < 2:
        raise InputError(f"window T must be >= 2, got {window}")
    if isinstance(x, SortedCorpus):
        sc = x
        if theta is not None and not np.array_equal(np.asarray(theta), sc.theta):
            raise InputError("theta differs from the SortedCorpus's theta")
        theta = sc.theta
        m, n = sc.xs.shape
    else:
        x, theta = _check_arrays(x, theta)
        m, n = x.shape
        sc = None
    step = _rows_per_chunk(n, chunk_tokens)
    out = np.empty((4, m))
    if method == "pruned" and sc is None:
        sc = sort_corpus(x, theta, chunk_tokens=chunk_tokens)
    if method == "pruned" and b != 0.0 and window / abs(b) < 1.0:
        # blocks sized for the expected window (two groups of ≈ n·T/|b| points on a spread-out
        # corpus); _pruned_chunk halves any block whose windows turn out wider than chunk_tokens
        expected = min(n, 2 * math.ceil(n * window / abs(b)) + 2)
        step = _rows_per_chunk(expected, chunk_tokens)
    with np.errstate(invalid="raise", over="raise", divide="raise"):
        for start in range(0, m, step):
            rows = slice(start, min(m, start + step))
            if method == "dense":
                xs = sc.xs[rows] if sc is not None else x[rows]
                _check_chunk(xs)
                result = _dense_chunk(xs, theta[rows], a, b, estimator)
            else:
                result = _pruned_chunk(sc.xs[rows], theta[rows], sc.split[rows], a, b, estimator, window,
                                       int(chunk_tokens))
            for k, values in enumerate(result):
                out[k, rows] = values
            if progress is not None:
                progress(rows.stop / m)
    if not np.all(np.isfinite(out)):
        raise ArithmeticError(f"non-finite estimate or gradient at a={a}, b={b} (a bug: please report)")
    return out


def estimate(x, theta, a, b, *, estimator: str = "one-head", method: str = "dense",
             chunk_tokens: int = DEFAULT_CHUNK_TOKENS, window: float = DEFAULT_WINDOW) -> np.ndarray:
    """θ̂ per task, shape (m,). ``x`` (m, n) or a :class:`SortedCorpus`; θ gives the labels y = 1{x ≥ θ}."""
    return _per_task(x, theta, a, b, estimator, method, chunk_tokens, window)[0]


def estimate_and_gradient(x, theta, a, b, *, estimator: str = "one-head", method: str = "dense",
                          chunk_tokens: int = DEFAULT_CHUNK_TOKENS, window: float = DEFAULT_WINDOW):
    """(θ̂, ∂θ̂/∂a, ∂θ̂/∂b) per task, each shape (m,), float64 (see the module docstring)."""
    out = _per_task(x, theta, a, b, estimator, method, chunk_tokens, window)
    return out[0], out[2], out[3]


def error_and_gradient(x, theta, a, b, *, estimator: str = "one-head", method: str = "dense",
                       chunk_tokens: int = DEFAULT_CHUNK_TOKENS, window: float = DEFAULT_WINDOW):
    """(θ̂ − θ, ∂θ̂/∂a, ∂θ̂/∂b) per task; θ̂ − θ = Σ_g w_g (μ_g − θ) is formed without subtracting θ from θ̂."""
    out = _per_task(x, theta, a, b, estimator, method, chunk_tokens, window)
    return out[1], out[2], out[3]


def loss_and_gradient(x, theta, a, b, *, estimator: str = "one-head", method: str = "dense",
                      chunk_tokens: int = DEFAULT_CHUNK_TOKENS, window: float = DEFAULT_WINDOW, progress=None):
    """(L̂, ∇L̂) with L̂ = (1/m) Σ ½ eⱼ², ∇L̂ = (1/m) Σ eⱼ (∂θ̂ⱼ/∂a, ∂θ̂ⱼ/∂b), eⱼ = θ̂ⱼ − θⱼ.

    ``method="dense"`` or ``"pruned"`` (pass a :class:`SortedCorpus` as ``x`` to sort only once;
    with a raw array the pruned path sorts on every call). Memory O(chunk_tokens).
    ``progress(fraction)`` is called after each chunk, if given.
    """
    out = _per_task(x, theta, a, b, estimator, method, chunk_tokens, window, progress)
    error = out[1]
    loss = 0.5 * float(np.mean(error * error))
    grad = np.array([np.mean(error * out[2]), np.mean(error * out[3])])
    return loss, grad
