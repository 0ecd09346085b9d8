"""Rigorous float64 enclosures of the corpus loss L̂ and its gradient ∇L̂ over an (a, b) box or at a point.

For a corpus (x, θ) of m tasks with n points each (x ∈ [0, 1]^{m×n}, θ ∈ [0, 1]^m, docs/model.md §2–§3,
one head) and a box Z = [a_lo, a_hi] × [b_lo, b_hi] with b_lo > 0,

    L̂ = (1/m) Σⱼ ½ eⱼ²,   ∇L̂ = (∂L̂/∂a, ∂L̂/∂b) = (1/m) Σⱼ eⱼ (∂θ̂ⱼ/∂a, ∂θ̂ⱼ/∂b),   eⱼ = θ̂ⱼ − θⱼ,

:func:`corpus_enclosure` returns intervals that contain L̂(a, b) and ∇L̂(a, b) for every (a, b) ∈ Z (a
point is the box a_lo = a_hi, b_lo = b_hi). Each task's eⱼ, ∂θ̂ⱼ/∂a = Cov_α(x, y), ∂θ̂ⱼ/∂b = −Var_α(x)
is enclosed over the box by :func:`~stumpcheck.numerics.certified.fast.corpus_algebra.task_box`
(the overflow-free shifted softmax, the centred variance, and the monotone refinements in b: its
docstring states and proves the algebra); then, by inclusion, the sums of the interval products
eⱼ², eⱼ∂θ̂ⱼ contain the sums of the true values at each (a, b) of the box, and the division by m (resp.
2m, exact doubles for m < 2⁵²) rounds outward.

**Refinement** (``refine=True``, boxes only; off by default): the mean-value form
L̂(z) = L̂(c) + ∇L̂(ξ)·(z − c), ξ on the segment [c, z] ⊂ Z (Z is convex), with c the box's midpoint
(a double inside the box), gives L̂(Z) ⊂ L̂(c) + ∇L̂(Z)·(Z − c); it is intersected with the direct
enclosure (both contain L̂(Z)). It costs a point evaluation (about doubling the cost) and, measured at
m = n = 256, (a, b) = (3, 10), narrows L̂ by 10–15 % over boxes of half-width 5·10⁻⁷ to 10⁻³ and
1 % at 0.1: the direct enclosure is already first order with the true slope, since the per-task
ranges in b are monotone ones (:mod:`~stumpcheck.numerics.certified.fast.corpus_algebra`). With
``hessian=True`` the second derivatives of each task are enclosed too
(:func:`~stumpcheck.numerics.certified.fast.corpus_algebra.task_box`) and summed to
∇²L̂ = (1/m) Σⱼ (∇θ̂ⱼ∇θ̂ⱼᵀ + eⱼ∇²θ̂ⱼ) over the box; with ``refine`` as well, ∇L̂ is intersected with
its mean-value form ∇L̂(c) + ∇²L̂(Z)·(Z − c) (3–4× narrower at box half-width 10⁻²).

**Arithmetic and assumptions.** IEEE binary64, round to nearest, each operation widened outward by
one step (:mod:`stumpcheck.numerics.certified.fast.rounding`), no fused operations, libm's exp within
2 ulp: every enclosure here rests on :data:`~stumpcheck.numerics.certified.fast.rounding.ASSUMPTIONS`,
which :func:`corpus_enclosure`'s caller copies into any certificate (:data:`ASSUMPTIONS` here is the
same dict plus this module's own statement). The labels yᵢ = 1{xᵢ ≥ θ} are taken on the exact doubles
given (the corpus *is* those doubles: no conversion happens).

**Cost and threads.** Per box two passes over the corpus: pass one takes one libm exp per point (over
a box a second one only where (b_hi − b_lo)·d > ½), pass two none; ``refine`` adds a point
evaluation. Tasks are split across numba's threads (``threads=``, as in
:mod:`stumpcheck.numerics.corpus.empirical`) from 2¹⁸ points on; each task is computed by one thread and the per-task enclosures are summed on one thread in task
order, so the result does not depend on the thread count. Memory: m × 6 doubles and 2n doubles of
scratch per block of tasks.

Domain: x (m, n) float64 in [0, 1], θ (m,) in [0, 1], a finite, 0 < b finite; m < 2⁵².
"""

from __future__ import annotations


import numba
import numpy as np

from stumpcheck.numerics.certified.fast.corpus_algebra import task_box
from stumpcheck.numerics.certified.fast.interval import add, div, intersect, mul, sqr, sub
from stumpcheck.numerics.certified.fast.rounding import ASSUMPTIONS as _ROUNDING
from stumpcheck.numerics.certified.fast.interval import as_pair
from stumpcheck.numerics.precision import InputError

__all__ = ["ASSUMPTIONS", "corpus_enclosure", "task_enclosures"]

_JIT = dict(cache=True, fastmath=False, error_model="numpy")
_PARALLEL_POINTS = 2 ** 18   # below this many points one thread (waking others costs more than it saves)
_BLOCK = 8                   # tasks per block (one scratch allocation each)

#: What a corpus enclosure rests on: the fast layer's assumptions and this module's algebra.
ASSUMPTIONS = dict(_ROUNDING, corpus=(
    "one-head softmax per task, groups P (x >= theta) and N shifted by their smallest point; "
    "weights e^{-b d} in (0, 1], beyond exponent -600 enclosed as [0, 2^-865]; monotone ranges in b "
    "for Z_g, m_g, u_i; centred variance; per-task enclosures summed in task order"))


@numba.njit(**_JIT)
def _tasks_serial(x, theta, alo, ahi, blo, bhi, slo, shi, out, hessian):
    scratch = np.empty(2 * x.shape[1])
    for j in range(x.shape[0]):
        r = task_box(x[j], theta[j], alo, ahi, blo, bhi, slo, shi, scratch, hessian)
        for k in range(12):
            out[j, k] = r[k]


@numba.njit(parallel=True, **_JIT)
def _tasks_parallel(x, theta, alo, ahi, blo, bhi, slo, shi, out, hessian):
    m = x.shape[0]
    blocks = (m + _BLOCK - 1) // _BLOCK
    for k in numba.prange(blocks):
        scratch = np.empty(2 * x.shape[1])
        for j in range(k * _BLOCK, min(m, (k + 1) * _BLOCK)):
            r = task_box(x[j], theta[j], alo, ahi, blo, bhi, slo, shi, scratch, hessian)
            for q in range(12):
                out[j, q] = r[q]


@numba.njit(**_JIT)
def _sums(out):
    """[L̂], [∂L̂/∂a], [∂L̂/∂b], [∂²L̂/∂a²], [∂²L̂/∂a∂b], [∂²L̂/∂b²] (12 doubles) from the per-task rows
    (e, ∂θ̂/∂a, ∂θ̂/∂b, ∂²θ̂/∂a², ∂²θ̂/∂a∂b, ∂²θ̂/∂b²), summed in task order; ∇²L̂ = (1/m)Σ(∇θ̂∇θ̂ᵀ + e∇²θ̂)
    (meaningless if the rows hold no second derivatives)."""
    m = out.shape[0]
    acc = np.zeros(12)
    for j in range(m):
        elo, ehi = out[j, 0], out[j, 1]
        qlo, qhi = sqr(elo, ehi)
        acc[0], acc[1] = add(acc[0], acc[1], qlo, qhi)
        qlo, qhi = mul(elo, ehi, out[j, 2], out[j, 3])
        acc[2], acc[3] = add(acc[2], acc[3], qlo, qhi)
        qlo, qhi = mul(elo, ehi, out[j, 4], out[j, 5])
        acc[4], acc[5] = add(acc[4], acc[5], qlo, qhi)
        plo, phi = sqr(out[j, 2], out[j, 3])
        qlo, qhi = mul(elo, ehi, out[j, 6], out[j, 7])
        plo, phi = add(plo, phi, qlo, qhi)
        acc[6], acc[7] = add(acc[6], acc[7], plo, phi)
        plo, phi = mul(out[j, 2], out[j, 3], out[j, 4], out[j, 5])
        qlo, qhi = mul(elo, ehi, out[j, 8], out[j, 9])
        plo, phi = add(plo, phi, qlo, qhi)
        acc[8], acc[9] = add(acc[8], acc[9], plo, phi)
        plo, phi = sqr(out[j, 4], out[j, 5])
        qlo, qhi = mul(elo, ehi, out[j, 10], out[j, 11])
        plo, phi = add(plo, phi, qlo, qhi)
        acc[10], acc[11] = add(acc[10], acc[11], plo, phi)
    fm = float(m)
    acc[0], acc[1] = div(acc[0], acc[1], 2.0 * fm, 2.0 * fm)
    acc[0] = max(acc[0], 0.0)
    for k in range(1, 6):
        acc[2 * k], acc[2 * k + 1] = div(acc[2 * k], acc[2 * k + 1], fm, fm)
    return acc


@numba.njit(**_JIT)
def _mean_value(box, point, alo, ahi, blo, bhi, ca, cb, hessian):
    """f(Z) ⊂ f(c) + Df(Z)·(Z − c) for f = L̂ (Df = ∇L̂) and, with ``hessian``, f = ∇L̂ (Df = ∇²L̂),
    each intersected with the direct enclosure in ``box`` (updated in place)."""
    dalo, dahi = sub(alo, ahi, ca, ca)
    dblo, dbhi = sub(blo, bhi, cb, cb)
    # rows: 0 L̂, 1 ∂a, 2 ∂b, 3 ∂aa, 4 ∂ab, 5 ∂bb; f = row k with derivative rows (ka, kb)
    for k, ka, kb in ((0, 1, 2), (1, 3, 4), (2, 4, 5)):
        if k > 0 and not hessian:
            break
        plo, phi = mul(box[2 * ka], box[2 * ka + 1], dalo, dahi)
        qlo, qhi = mul(box[2 * kb], box[2 * kb + 1], dblo, dbhi)
        plo, phi = add(plo, phi, qlo, qhi)
        plo, phi = add(point[2 * k], point[2 * k + 1], plo, phi)
        if k == 0:
            plo = max(plo, 0.0)
        box[2 * k], box[2 * k + 1] = intersect(box[2 * k], box[2 * k + 1], plo, phi)


def _check_corpus(x, theta):
    x = np.ascontiguousarray(x, dtype=np.float64)
    theta = np.ascontiguousarray(theta, dtype=np.float64)
    if x.ndim != 2 or x.shape[0] < 1 or x.shape[1] < 1:
        raise InputError(f"x must be a non-empty (m, n) array, got shape {x.shape}")
    if theta.shape != (x.shape[0],):
        raise InputError(f"theta must have shape ({x.shape[0]},), got {theta.shape}")
    if not (x.min() >= 0.0 and x.max() <= 1.0):
        raise InputError("x must be finite and lie in [0, 1]")
    if not (theta.min() >= 0.0 and theta.max() <= 1.0):
        raise InputError("theta must be finite and lie in [0, 1]")
    if x.shape[0] >= 2 ** 52:
        raise InputError(f"m must be below 2^52, got {x.shape[0]}")
    return x, theta


def _check_threads(threads):
    if threads is None:
        return None
    limit = numba.config.NUMBA_NUM_THREADS
    if isinstance(threads, bool) or not isinstance(threads, (int, np.integer)) or not 1 <= threads <= limit:
        raise InputError(f"threads must be an integer in [1, {limit}] (NUMBA_NUM_THREADS), got {threads!r}")
    return int(threads)


def _run_tasks(x, theta, alo, ahi, blo, bhi, threads, hessian=False, shear=(0.0, 0.0)) -> np.ndarray:
    out = np.empty((x.shape[0], 12))
    slo, shi = shear
    if x.size < _PARALLEL_POINTS or threads == 1:
        _tasks_serial(x, theta, alo, ahi, blo, bhi, slo, shi, out, hessian)
        return out
    before = numba.get_num_threads()
    numba.set_num_threads(before if threads is None else threads)
    try:
        _tasks_parallel(x, theta, alo, ahi, blo, bhi, slo, shi, out, hessian)
    finally:
        numba.set_num_threads(before)
    return out


def _box(a, b):
    alo, ahi = as_pair("a", a)
    blo, bhi = as_pair("b", b)
    if not blo > 0.0:
        raise InputError(f"b must be > 0 over the box, got {b!r}")
    return alo, ahi, blo, bhi


def task_enclosures(x, theta, a, b, *, hessian: bool = False, threads: int | None = None) -> np.ndarray:
    """Per-task enclosures over the box, shape (m, 4, 2): rows θ̂ⱼ, eⱼ = θ̂ⱼ − θⱼ, ∂θ̂ⱼ/∂a, ∂θ̂ⱼ/∂b as [lo, hi];
    with ``hessian`` (m, 7, 2), rows ∂²θ̂ⱼ/∂a², ∂²θ̂ⱼ/∂a∂b, ∂²θ̂ⱼ/∂b² added.

    ``a``, ``b``: a float (a point, that double exactly) or a pair (lo, hi); b > 0. θ̂ⱼ is eⱼ + θⱼ
    rounded outward.
    """
    x, theta = _check_corpus(x, theta)
    alo, ahi, blo, bhi = _box(a, b)
    out = _run_tasks(x, theta, alo, ahi, blo, bhi, _check_threads(threads), bool(hessian))
    rows = 7 if hessian else 4
    result = np.empty((x.shape[0], rows, 2))
    result[:, 1:, :] = out[:, :2 * (rows - 1)].reshape(-1, rows - 1, 2)
    for j in range(x.shape[0]):
        result[j, 0] = add(out[j, 0], out[j, 1], theta[j], theta[j])
    return result


def corpus_enclosure(x, theta, a, b, *, hessian: bool = False, refine: bool = False,
                     threads: int | None = None, shear=0.0) -> np.ndarray:
    """Enclosures [[L̂ lo, hi], [∂L̂/∂a lo, hi], [∂L̂/∂b lo, hi]] valid at every (a, b) of the box (module docstring);
    with ``hessian`` shape (6, 2), rows [∂²L̂/∂a²], [∂²L̂/∂a∂b], [∂²L̂/∂b²] added.

    ``a``, ``b``: a float (a point, taken exactly as that double) or a pair (lo, hi); b > 0 on the box.
    ``refine``: intersect L̂ (and, with ``hessian``, ∇L̂) with its mean-value form about the box's
    midpoint (one more point evaluation; no effect at a point; off by default, see the module
    docstring). ``threads``: numba threads from m·n ≥ 2¹⁸ on (default numba's); the result does not
    depend on it. ``shear``: a slope s (a float, or a pair lo <= hi containing it); then the set is the
    parallelogram {(a′ + s·b, b) : a′ ∈ ``a``, b ∈ ``b``} and ``a`` gives the intercepts a′
    (:mod:`~stumpcheck.numerics.certified.fast.corpus_algebra`, "Sheared boxes"); the derivatives are
    still ∂/∂a and ∂/∂b. ``refine`` needs an axis box (shear 0).
    """
    x, theta = _check_corpus(x, theta)
    alo, ahi, blo, bhi = _box(a, b)
    threads = _check_threads(threads)
    hessian = bool(hessian)
    shear = as_pair("shear", shear)
    if refine and shear != (0.0, 0.0):
        raise InputError("refine=True needs an axis box (shear 0)")
    box = _sums(_run_tasks(x, theta, alo, ahi, blo, bhi, threads, hessian, shear))
    if refine and (alo < ahi or blo < bhi):
        ca = min(max(0.5 * alo + 0.5 * ahi, alo), ahi)
        cb = min(max(0.5 * blo + 0.5 * bhi, blo), bhi)
        point = _sums(_run_tasks(x, theta, ca, ca, cb, cb, threads, False))
        _mean_value(box, point, alo, ahi, blo, bhi, ca, cb, hessian)
    return box.reshape(6, 2) if hessian else box[:6].reshape(3, 2)
