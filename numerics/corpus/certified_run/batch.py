"""The fast layer's corpus enclosures for many boxes in one compiled call, steps in parallel (for the re-check).

:func:`batch_enclosures` returns, for boxes Z_s (s = 0 … S−1, a point being a degenerate box), exactly the
rows :func:`stumpcheck.numerics.certified.fast.corpus.corpus_enclosure` returns for each (bit for bit): the
same per-task enclosures (:func:`~stumpcheck.numerics.certified.fast.corpus_algebra.task_box`) summed in task
order by the same function. Only the order in which boxes are computed changes: numba's threads take
(box, block of tasks) pairs in parallel, which a GD chain, one step after the other, cannot do, and a
re-check of its recorded steps can.

Domain: the corpus as validated by :func:`~stumpcheck.numerics.certified.fast.corpus.corpus_enclosure`;
every box with 0 < b_lo ≤ b_hi finite and a_lo ≤ a_hi finite. Memory: S × m × 12 doubles a call.
"""

from __future__ import annotations

import numba
import numpy as np

from stumpcheck.numerics.certified.fast.corpus import _check_corpus, _sums as fast_sums  # the layer's own summation
from stumpcheck.numerics.certified.fast.corpus_algebra import task_box
from stumpcheck.numerics.precision import InputError

__all__ = ["batch_enclosures"]

_JIT = dict(cache=True, fastmath=False, error_model="numpy")
_BLOCK = 16


@numba.njit(parallel=True, **_JIT)
def _tasks(x, theta, boxes, hessian, out):
    m = x.shape[0]
    blocks = (m + _BLOCK - 1) // _BLOCK
    for q in numba.prange(boxes.shape[0] * blocks):
        s = q // blocks
        k = q % blocks
        scratch = np.empty(2 * x.shape[1])
        for j in range(k * _BLOCK, min(m, (k + 1) * _BLOCK)):
            r = task_box(x[j], theta[j], boxes[s, 0], boxes[s, 1], boxes[s, 2], boxes[s, 3], 0.0, 0.0, scratch,
                         hessian[s])
            for p in range(12):
                out[s, j, p] = r[p]


def batch_enclosures(x, theta, boxes, hessian, *, threads: int | None = None) -> np.ndarray:
    """(S, 6, 2): for each row (a_lo, a_hi, b_lo, b_hi) of ``boxes`` the enclosures [L̂], [∂L̂/∂a], [∂L̂/∂b],
    [∂²L̂/∂a²], [∂²L̂/∂a∂b], [∂²L̂/∂b²] of ``corpus_enclosure`` (the last three zeros unless ``hessian[s]``)."""
    x, theta = _check_corpus(x, theta)
    boxes = np.ascontiguousarray(boxes, dtype=np.float64).reshape(-1, 4)
    hessian = np.ascontiguousarray(hessian, dtype=np.bool_).reshape(-1)
    if hessian.shape[0] != boxes.shape[0]:
        raise InputError("batch_enclosures: one hessian flag a box")
    if boxes.size and not (np.all(np.isfinite(boxes)) and np.all(boxes[:, 2] > 0.0)
                           and np.all(boxes[:, 0] <= boxes[:, 1]) and np.all(boxes[:, 2] <= boxes[:, 3])):
        raise InputError("batch_enclosures: every box needs finite ends lo <= hi and b > 0")
    out = np.empty((boxes.shape[0], x.shape[0], 12))
    before = numba.get_num_threads()
    if threads is not None:
        numba.set_num_threads(threads)
    try:
        _tasks(x, theta, boxes, hessian, out)
    finally:
        numba.set_num_threads(before)
    result = np.empty((boxes.shape[0], 6, 2))
    for s in range(boxes.shape[0]):
        result[s] = fast_sums(out[s]).reshape(6, 2)
    return result
