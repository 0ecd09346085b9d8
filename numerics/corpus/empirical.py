"""The corpus loss L̂ and its exact gradient, float64, stable for |a|, |b| up to 10⁶ and beyond.

Model (docs/model.md §2, §5). For one task with points xᵢ ∈ [0, 1], labels
yᵢ = 1{xᵢ ≥ θ} and scores sᵢ, α = softmax(s) and θ̂ = Σ αᵢ xᵢ:

* one-head:  sᵢ = a yᵢ − b xᵢ;
* reflected: s'ᵢ = a (1 − yᵢ) − b (1 − xᵢ), same values xᵢ;
* averaged:  (θ̂ + θ̂') / 2;
* pooled:    one softmax over the 2n scores {sᵢ} ∪ {s'ᵢ}, values xᵢ.

Per task ℓ = ½ (θ̂ − θ)², L̂ = (1/m) Σⱼ ℓⱼ, ∇L̂ = (1/m) Σⱼ (θ̂ⱼ − θⱼ) ∇θ̂ⱼ.

The per-task algebra (groups of points with one score slope, their moments
and the pairwise covariance formulas, and why they avoid cancellation) is
stated in :mod:`stumpcheck.numerics.corpus.groups`; the compiled kernel
(:mod:`stumpcheck.numerics.corpus.kernel`) runs it in one fused pass per task, densely or
on pruned windows. This module validates the input and calls the kernel.

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
head); memory O(m + n) beyond the corpus (one scratch row of n doubles per
block of tasks). ``method="pruned"`` sorts each task once (:class:`SortedCorpus`) and,
in each group, touches only the window of points with |β_g|·|x − c_g| ≤ T
(``window``, default T = 64), found by a scan from the best point: see
:func:`pruned_window_bound` for the bound on what the window leaves out
(absolute, ≤ 32 (n − 1) e^{−T} per task output; so dense and pruned agree to
rounding except for per-task values that are themselves below that bound,
e.g. a ∂θ̂/∂b ~ 10⁻¹⁰⁰ when all the weight sits on one point).

Threads: tasks are split across numba's threads (``threads=``, or
``numba.set_num_threads`` / the environment variable NUMBA_NUM_THREADS);
every task is computed by one thread in a fixed order, so the results do not
depend on the thread count. ``backend="numpy"`` runs the earlier numpy
implementation (:mod:`stumpcheck.numerics.corpus.kernel_numpy`, chunks of about
``chunk_tokens`` tokens), kept as an independent check of the kernel; with the
kernel, ``chunk_tokens`` only sets how often ``progress`` is called.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from stumpcheck.numerics.precision import InputError, finite_float

__all__ = ["ESTIMATORS", "METHODS", "BACKENDS", "DEFAULT_WINDOW", "ROUNDING_ULPS", "SortedCorpus", "sort_corpus", "estimate",
           "estimate_and_gradient", "error_and_gradient", "loss_and_gradient", "pruned_window_bound",
           "window_sizes"]

ESTIMATORS = ("one-head", "reflected", "averaged", "pooled")
METHODS = ("dense", "pruned")
BACKENDS = ("numba", "numpy")
DEFAULT_WINDOW = 64.0
DEFAULT_CHUNK_TOKENS = 2**16

_DYNAMIC_BLOCKS = 4  # blocks of tasks per dynamic scheduling chunk of the compiled kernel
_PARALLEL_TOKENS = 2**18  # below this many tokens the kernel runs on the calling thread alone

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


# ---------------------------------------------------------------- sorted corpora

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


def window_sizes(sorted_corpus: SortedCorpus, b: float, *, window: float = DEFAULT_WINDOW,
                 a: float | None = None) -> dict:
    """How many points the pruned path touches at scale b, one-head model, and the total.

    Without ``a``: the windows of the groups P and N (β = b). With ``a``: what the kernel touches
    at (a, b), which also leaves out a group whose whole weight is below e^{−T}
    (see :func:`pruned_window_bound`).
    """
    b = finite_float(b, "b")
    xs, split = sorted_corpus.xs, sorted_corpus.split
    m, n = xs.shape
    if a is not None:
        from stumpcheck.numerics.corpus import kernel, kernel_pruned

        a = finite_float(a, "a")
        out = np.empty((4, m))
        _, touched = kernel_pruned.pruned_tasks_serial(
            _readonly(xs, np.float64), _readonly(sorted_corpus.theta, np.float64), _readonly(split, np.int64),
            a, b, kernel.ONE_HEAD, float(window), out)
        return {"touched": int(touched), "total": m * n, "fraction": int(touched) / (m * n)}
    from stumpcheck.numerics.corpus.kernel_numpy import window_bounds

    touched = 0
    for lo, hi in ((np.zeros(m, dtype=np.int64), split), (split, np.full(m, n, dtype=np.int64))):
        first, last = window_bounds(xs, lo, hi, b, window)
        touched += int((last - first).sum())
    return {"touched": touched, "total": m * n, "fraction": touched / (m * n)}


def pruned_window_bound(n: int, *, window: float = DEFAULT_WINDOW) -> float:
    """Bound on ``|pruned − dense|`` for every per-task output (θ̂, θ̂ − θ, ∂θ̂/∂a, ∂θ̂/∂b), to first order in δ.

    In each group g the pruned path keeps the points with ``|β|·|x − c_g| ≤ T``
    (T = ``window``); each left-out point has weight < e^{−T} relative to the
    group's best point, and there are at most n − 1 of them, so with
    δ = (n − 1) e^{−T}:

    * S_g (hence Z_g) changes by a relative ≤ δ, so each w_g by ≤ 2δ w_g;
    * lo_g, μ_g change by ≤ 2δ and V_g by ≤ 3δ (every left-out term has ``|x − ·| ≤ 1``,
      plus the same bound for the renormalisation);
    * summing over the groups and pairs (Σ w_g = 1, ``|μ_g − μ_h| ≤ 1``, ``|f_g − f_h| ≤ 2``)
      every per-task output changes by ≤ 32 δ; the loss gradient (1/m) Σ e ∇θ̂ by ≤ 64 δ.

    It also leaves out a whole group whose softmax weight w_g is certainly below e^{−T}
    (its best score plus log of its size below the softmax's best score minus T); dropping
    it and renormalising the others changes θ̂ and e by ≤ w_g, ∂θ̂/∂a by ≤ 2 w_g and ∂θ̂/∂b
    by ≤ 6 w_g, so at most three such groups add < 24 e^{−T} ≤ 32 e^{−T}.

    Returned: 32 (n − 1) e^{−T} + 32 e^{−T} = 32 n e^{−T}. At the default T = 64 this is
    < 5.2·10⁻²⁷ n: far below one ulp of any output that matters, so dense and pruned agree
    to rounding.
    """
    if window < 2:
        raise InputError(f"window T must be >= 2, got {window}")
    return 32.0 * max(int(n), 1) * math.exp(-window)


# ---------------------------------------------------------------- public API

def _check_threads(threads):
    if threads is None:
        return None
    import numba

    limit = numba.config.NUMBA_NUM_THREADS
    if isinstance(threads, bool) or not isinstance(threads, (int, np.integer)) or not 1 <= threads <= limit:
        raise InputError(f"threads must be an integer in [1, {limit}] (NUMBA_NUM_THREADS), got {threads!r}")
    return int(threads)


def _readonly(array, dtype):
    """A C-contiguous read-only view (one compiled specialisation of the kernel, whatever the caller's flags)."""
    view = np.ascontiguousarray(array, dtype=dtype).view()
    view.setflags(write=False)
    return view


def _kernel_rows(kernel_call, m, step, progress):
    """Run ``kernel_call(rows)`` over [0, m) in blocks of ``step`` rows (one block without ``progress``)."""
    if progress is None:
        kernel_call(slice(0, m))
        return
    for start in range(0, m, step):
        rows = slice(start, min(m, start + step))
        kernel_call(rows)
        progress(rows.stop / m)


def _per_task(x, theta, a, b, estimator, method, chunk_tokens, window, progress=None, *, backend="numba",
              threads=None):
    """(θ̂, θ̂ − θ, ∂θ̂/∂a, ∂θ̂/∂b) per task, each (m,)."""
    a = finite_float(a, "a")
    b = finite_float(b, "b")
    _check_estimator(estimator)
    if method not in METHODS:
        raise InputError(f"unknown method {method!r}; expected one of {', '.join(METHODS)}")
    if backend not in BACKENDS:
        raise InputError(f"unknown backend {backend!r}; expected one of {', '.join(BACKENDS)}")
    window = finite_float(window, "window")
    if window < 2:
        raise InputError(f"window T must be >= 2, got {window}")
    threads = _check_threads(threads)
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
    if method == "pruned" and sc is None:
        sc = sort_corpus(x, theta, chunk_tokens=chunk_tokens)
    if backend == "numpy":
        out = _per_task_numpy(x, theta, sc, a, b, estimator, method, step, int(chunk_tokens), window, progress)
    else:
        out = _per_task_kernel(x, theta, sc, a, b, estimator, method, step, window, progress, threads)
    if not np.all(np.isfinite(out)):
        raise ArithmeticError(f"non-finite estimate or gradient at a={a}, b={b} (a bug: please report)")
    return out


def _per_task_kernel(x, theta, sc, a, b, estimator, method, step, window, progress, threads):
    from stumpcheck.numerics.corpus import kernel   # compiled on first use (cached on disk): keep imports light

    m = theta.shape[0]
    code = kernel.ESTIMATOR_CODES[estimator]
    out = np.empty((4, m))
    # at least ~1 % of the corpus per progress report: each call of the kernel starts its threads
    step = max(step, -(-m // 100))
    if method == "dense" or b == 0.0 or window / abs(b) >= 1.0:   # a window that is the whole group
        xs = _readonly(sc.xs if sc is not None else x, np.float64)
        th = _readonly(theta, np.float64)

        def call(rows):
            block = np.empty((4, rows.stop - rows.start))
            if not kernel.dense_tasks(xs[rows], th[rows], a, b, code, block):
                raise InputError("x must be finite and lie in [0, 1]")
            out[:, rows] = block
    else:
        from stumpcheck.numerics.corpus import kernel_pruned

        xs, th, split = _readonly(sc.xs, np.float64), _readonly(sc.theta, np.float64), _readonly(sc.split, np.int64)

        def call(rows):
            block = np.empty((4, rows.stop - rows.start))
            # on one thread, no parallel region at all (the same bits, without its start-up and scheduling)
            tasks = kernel_pruned.pruned_tasks_serial if wanted == 1 else kernel_pruned.pruned_tasks
            valid, _ = tasks(xs[rows], th[rows], split[rows], a, b, code, window, block)
            if not valid:
                raise InputError("x must be finite and lie in [0, 1]")
            out[:, rows] = block

    import numba

    before = numba.get_num_threads()
    wanted = before if threads is None else threads
    if m * (sc.xs if sc is not None else x).shape[1] < _PARALLEL_TOKENS:
        wanted = 1   # too little work to wake other threads for (each wake-up can cost a scheduler tick)
    numba.set_num_threads(wanted)
    # blocks of tasks handed out dynamically, a few at a time: a thread slowed by other work on its
    # core takes fewer of them
    chunks = numba.set_parallel_chunksize(_DYNAMIC_BLOCKS)
    try:
        _kernel_rows(call, m, step, progress)
    finally:
        numba.set_parallel_chunksize(chunks)
        numba.set_num_threads(before)
    return out


def _per_task_numpy(x, theta, sc, a, b, estimator, method, step, chunk_tokens, window, progress):
    from stumpcheck.numerics.corpus.kernel_numpy import dense_chunk, pruned_chunk

    m, n = theta.shape[0], (sc.xs if sc is not None else x).shape[1]
    out = np.empty((4, m))
    if method == "pruned" and b != 0.0 and window / abs(b) < 1.0:
        # blocks sized for the expected window (two groups of ≈ n·T/|b| points on a spread-out
        # corpus); pruned_chunk halves any block whose windows turn out wider than chunk_tokens
        expected = min(n, 2 * math.ceil(n * window / abs(b)) + 2)
        step = _rows_per_chunk(expected, chunk_tokens)
    with np.errstate(invalid="raise", over="raise", divide="raise"):
        for start in range(0, m, step):
            rows = slice(start, min(m, start + step))
            if method == "dense":
                xs = sc.xs[rows] if sc is not None else x[rows]
                _check_chunk(xs)
                result = dense_chunk(xs, theta[rows], a, b, estimator)
            else:
                result = pruned_chunk(sc.xs[rows], theta[rows], sc.split[rows], a, b, estimator, window,
                                      chunk_tokens)
            for k, values in enumerate(result):
                out[k, rows] = values
            if progress is not None:
                progress(rows.stop / m)
    return out


def estimate(x, theta, a, b, *, estimator: str = "one-head", method: str = "dense",
             chunk_tokens: int = DEFAULT_CHUNK_TOKENS, window: float = DEFAULT_WINDOW, threads: int | None = None,
             backend: str = "numba") -> np.ndarray:
    """θ̂ per task, shape (m,). ``x`` (m, n) or a :class:`SortedCorpus`; θ gives the labels y = 1{x ≥ θ}."""
    return _per_task(x, theta, a, b, estimator, method, chunk_tokens, window, backend=backend, threads=threads)[0]


def estimate_and_gradient(x, theta, a, b, *, estimator: str = "one-head", method: str = "dense",
                          chunk_tokens: int = DEFAULT_CHUNK_TOKENS, window: float = DEFAULT_WINDOW,
                          threads: int | None = None, backend: str = "numba"):
    """(θ̂, ∂θ̂/∂a, ∂θ̂/∂b) per task, each shape (m,), float64 (see the module docstring)."""
    out = _per_task(x, theta, a, b, estimator, method, chunk_tokens, window, backend=backend, threads=threads)
    return out[0], out[2], out[3]


def error_and_gradient(x, theta, a, b, *, estimator: str = "one-head", method: str = "dense",
                       chunk_tokens: int = DEFAULT_CHUNK_TOKENS, window: float = DEFAULT_WINDOW,
                       threads: int | None = None, backend: str = "numba"):
    """(θ̂ − θ, ∂θ̂/∂a, ∂θ̂/∂b) per task; θ̂ − θ = Σ_g w_g (μ_g − θ) is formed without subtracting θ from θ̂."""
    out = _per_task(x, theta, a, b, estimator, method, chunk_tokens, window, backend=backend, threads=threads)
    return out[1], out[2], out[3]


def loss_and_gradient(x, theta, a, b, *, estimator: str = "one-head", method: str = "dense",
                      chunk_tokens: int = DEFAULT_CHUNK_TOKENS, window: float = DEFAULT_WINDOW, progress=None,
                      threads: int | None = None, backend: str = "numba"):
    """(L̂, ∇L̂) with L̂ = (1/m) Σ ½ eⱼ², ∇L̂ = (1/m) Σ eⱼ (∂θ̂ⱼ/∂a, ∂θ̂ⱼ/∂b), eⱼ = θ̂ⱼ − θⱼ.

    ``method="dense"`` or ``"pruned"`` (pass a :class:`SortedCorpus` as ``x`` to sort only once;
    with a raw array the pruned path sorts on every call). ``threads``: how many threads the
    compiled kernel uses (default: numba's, set by ``numba.set_num_threads`` or the environment
    variable NUMBA_NUM_THREADS); results do not depend on it. ``backend="numpy"`` runs the
    earlier numpy implementation of the same algebra (a reference for tests and benchmarks).
    ``progress(fraction)`` is called after each block of tasks (about chunk_tokens tokens, at
    least 1 % of the corpus), if given.
    """
    out = _per_task(x, theta, a, b, estimator, method, chunk_tokens, window, progress, backend=backend,
                    threads=threads)
    error = out[1]
    loss = 0.5 * float(np.mean(error * error))
    grad = np.array([np.mean(error * out[2]), np.mean(error * out[3])])
    return loss, grad
