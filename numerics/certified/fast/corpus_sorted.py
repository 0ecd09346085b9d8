"""Corpus enclosures on sorted tasks: group moments shared by the boxes of one b-range, pruned beyond a cut.

The algebra is that of :mod:`~stumpcheck.numerics.certified.fast.corpus_algebra` (per group g of a task,
Z_g, m_g, V_g, K_g over a b-range; its docstring proves the enclosures and their rounding) and
:mod:`~stumpcheck.numerics.certified.fast.corpus_mixture` (the two groups mixed through t = b·D − a).
Two things change the cost, not the mathematics:

**Sharing.** The group moments depend on the b-range [b_lo, b_hi] alone; only the mixture depends on a
(and on the shear s). :func:`group_moments` computes them once (two passes over the tokens) and
:func:`mixed_enclosure` turns them into the enclosure of (L̂, ∇L̂[, ∇²L̂]) over any (sheared) box with
that b-range at O(m) cost. Every box of one column of an interval proof with the same b-range shares
them.

**Pruning.** Each task's points are sorted once (:func:`sort_tasks`); in a group the offsets
dᵢ = xᵢ − x*_g then increase along the row, and so does t₀ = RN(b_lo·RN(dᵢ)) (RN is monotone). The
pass stops at the first point with t₀ > C (the cut, :data:`CUT`); the rest of the group, ``q`` points,
is pruned. Each pruned point has exact exponent τ(b) = b·δᵢ ≥ τ(b_lo) ≥ t₀/(1 + γ₂) > C/(1 + γ₂) for
every b of the range (δᵢ the exact difference, γ₂ = 2u/(1 − 2u), u = 2⁻⁵³: two RN operations), so its
weight uᵢ = e^{−τ} < E(C) := an upper bound of e^{−C/(1+γ₂)} (:func:`pruning_bound`, a double rounded
up). Its terms are bounded by that weight times their largest factor: uᵢ·dᵢ ≤ E (dᵢ ≤ 1) in Z_g and
Σuᵢdᵢ, uᵢ(dᵢ − m_g)² ≤ E·c² and −E·c³ ≤ uᵢ(dᵢ − m_g)³ ≤ E·c³ with c = max(1, m_g hi) ≥ abs(dᵢ − m_g) in the
centred moments; the group's sums get q × these bounds added to their upper ends (and, for the
signed third moment, subtracted from its lower end), rounded outward. Lower ends of the
non-negative sums drop the pruned terms (≥ 0). The smallest point of a group (d = 0) is never pruned,
so Z_g ≥ 1 still holds exactly.

Why C = 64 (:data:`CUT`): the pruned remainder relative to a group's Z_g ≥ 1 is at most n·e^{−C}, and
relative to its centred second moment (≈ Z_g/b²) at most n·b²·e^{−C}; with C = 64 both are below 10⁻¹⁵
for n ≤ 10⁴ and b ≤ 10⁴, under the sums' own rounding slack ε ≈ 2(n + 16)·2⁻⁵²
(:mod:`~stumpcheck.numerics.certified.fast.corpus_algebra`). At scale b a group keeps the points with
dᵢ ≤ C/b: all of them for b ≤ 64, 1/8 of a uniform group at b = 512. (A cut at 745, where a weight
is below 2⁻¹⁰⁷⁴ and the pruning costs nothing, would keep every point for b ≤ 745 when x ∈ [0, 1].)

Results are deterministic (each task on one thread, sums in task order) but not the bits of
:func:`~stumpcheck.numerics.certified.fast.corpus.corpus_enclosure`: the points are summed in sorted
order and the pruned ones are bounded instead of summed. Both are rigorous under :data:`ASSUMPTIONS`.

Domain: as :func:`~stumpcheck.numerics.certified.fast.corpus.corpus_enclosure`; 16 ≤ C ≤ 600.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction

import numba
import numpy as np

from stumpcheck.numerics.certified.fast.corpus import ASSUMPTIONS as _CORPUS
from stumpcheck.numerics.certified.fast.corpus import _check_corpus, _check_threads, _sums
from stumpcheck.numerics.certified.fast.corpus_mixture import E_FAR, FAR, diff, div, mixture, mul, sqr, sub
from stumpcheck.numerics.certified.fast.interval import as_pair
from stumpcheck.numerics.certified.fast.rounding import down, up
from stumpcheck.numerics.precision import InputError

__all__ = ["CUT", "ASSUMPTIONS", "SortedTasks", "GroupMoments", "sort_tasks", "pruning_bound", "pruning_record",
           "group_moments", "mixed_enclosure", "sorted_enclosure"]

_JIT = dict(cache=True, fastmath=False, error_model="numpy")
_BLOCK = 8
_PARALLEL_POINTS = 2 ** 18
_FIELDS = 9      # per group: Z lo, hi, m lo, hi, V lo, hi, K lo, hi, kept points
#: The default cut C: points of a group with RN(b_lo·d) > C are pruned (module docstring).
CUT = 64.0
CUT_RANGE = (16.0, 600.0)
_GAMMA2 = Fraction(2, 2 ** 53) / (1 - Fraction(2, 2 ** 53))

ASSUMPTIONS = dict(_CORPUS, pruning=(
    "sorted tasks; in a group the points with RN(b_lo*RN(x - x*)) > cut are pruned: each has weight below "
    "bound >= exp(-cut/(1 + gamma_2)) at every b of the range, and its terms are bounded by the weight times "
    "their largest factor (1, c^2, c^3 with c = max(1, m_g hi)), count x bound added outward"))


def pruning_bound(cut: float) -> float:
    """E(C): a double ≥ e^{−C/(1+γ₂)}, from libm's exp (within 2 ulp) at a rounded-down exponent, widened
    by four steps (a caller re-checks it in Arb: :func:`pruning_record`)."""
    exponent = Fraction(cut) / (1 + _GAMMA2)
    low = float(exponent)
    if Fraction(low) > exponent:
        low = math.nextafter(low, -math.inf)
    bound = math.exp(-low)
    for _ in range(4):
        bound = math.nextafter(bound, math.inf)
    return bound


def pruning_record(cut: float = CUT) -> dict:
    """What a certificate records of the pruning: the cut, the bound (both as float.hex) and the rule."""
    return {"cut": float(cut).hex(), "bound": pruning_bound(cut).hex(),
            "rule": "count x bound x the largest factor of a pruned term, added outward (corpus_sorted)"}


def _check_cut(cut) -> float:
    if isinstance(cut, bool) or not isinstance(cut, (int, float, np.floating)) or not (
            CUT_RANGE[0] <= float(cut) <= CUT_RANGE[1]):
        raise InputError(f"the pruning cut must be a number in [{CUT_RANGE[0]}, {CUT_RANGE[1]}], got {cut!r}")
    return float(cut)


@dataclass(frozen=True, eq=False)
class SortedTasks:
    """A corpus with each task's points sorted ascending (``xs``), ``split`` = #{x < θ} (N = xs[:, :split],
    P = xs[:, split:]) and ``theta``; built once by :func:`sort_tasks`."""

    xs: np.ndarray
    split: np.ndarray
    theta: np.ndarray

    @property
    def shape(self):
        return self.xs.shape


@dataclass(frozen=True, eq=False)
class GroupMoments:
    """The groups' enclosures over one b-range (``rows``: m × 18 doubles, P then N: per group Z lo, hi,
    m lo, hi, V lo, hi, K lo, hi and the count of points kept)."""

    b: tuple
    hessian: bool
    cut: float
    rows: np.ndarray

    def kept(self) -> int:
        """How many points the passes touched (the rest were pruned)."""
        return int(self.rows[:, _FIELDS - 1].sum() + self.rows[:, 2 * _FIELDS - 1].sum())


def sort_tasks(x, theta) -> SortedTasks:
    """Sort each task's points once (O(m n log n)); the labels yᵢ = 1{xᵢ ≥ θ} on the exact doubles."""
    x, theta = _check_corpus(x, theta)
    xs = np.sort(x, axis=1)
    split = np.count_nonzero(xs < theta[:, None], axis=1).astype(np.int64)
    return SortedTasks(xs=xs, split=split, theta=theta)


@numba.njit(**_JIT)
def _slack(tmax, n):
    return up(2.0 * up(up((1.0 + tmax) * 2.0 ** -49) + up((n + 16.0) * 2.0 ** -52)))


@numba.njit(**_JIT)
def _bounded(lo, hi, far, pruned, ecut, eps, n):
    """[lo(1 − ε) − n·2⁻¹⁰⁰⁰, hi(1 + ε) + n·2⁻¹⁰⁰⁰ + far·E_far + pruned·E] (corpus_algebra's bound of an RN
    sum of non-negative terms, plus the pruned points' bound); the lower end clamped at 0."""
    slack = up(n * 2.0 ** -1000)
    lo = max(down(down(lo * down(1.0 - eps)) - slack), 0.0)
    hi = up(up(hi * up(1.0 + eps)) + up(up(slack + up(far * E_FAR)) + up(pruned * ecut)))
    return lo, hi


@numba.njit(**_JIT)
def _group(row, first, last, blo, bhi, cut, ecut, hessian, scratch, out, at):
    """One group row[first:last] (sorted, x* = row[first]) over [blo, bhi]: Z, m, V, K enclosures and the
    kept count into out[at:at + 9] (module docstring; per point the operations of ``task_box``)."""
    n = last - first
    if n == 0:
        for k in range(_FIELDS):
            out[at + k] = 0.0
        return
    xg = row[first]
    point = blo == bhi
    db = bhi - blo
    z1 = z0 = s1 = s0 = zl = sl = 0.0
    t1max = t0max = 0.0
    f1 = f0 = 0
    kept = 0
    for i in range(first, last):
        d = row[i] - xg
        if blo * d > cut:
            break
        t1 = bhi * d
        far1 = t1 > FAR
        r1 = 0.0 if far1 else math.exp(-t1)
        t0 = t1
        if point:
            far0, r0, r0l = far1, r1, r1
        else:
            h = db * d
            if h <= 0.5 and not far1:        # e^{H} ∈ [1 + H, 1 + H + H²]: no second exponential
                far0 = False
                r0l = r1 * (1.0 + h)
                r0 = r1 * ((1.0 + h) + h * h)
            elif h <= 0.5 and t1 > FAR + 1.0:
                far0, r0, r0l = True, 0.0, 0.0
            else:
                t0 = blo * d
                far0 = t0 > FAR
                r0 = 0.0 if far0 else math.exp(-t0)
                r0l = r0
        scratch[2 * kept] = r1
        scratch[2 * kept + 1] = E_FAR if far0 else r0
        if far1:
            f1 += 1
        else:
            z1 += r1
            s1 += r1 * d
            t1max = max(t1max, t1)
        if far0:
            f0 += 1
        else:
            z0 += r0
            s0 += r0 * d
            zl += r0l
            sl += r0l * d
            t0max = max(t0max, t0)
        kept += 1
    pruned = n - kept
    eps = _slack(max(t0max, t1max), kept)
    z1lo, z1hi = _bounded(z1, z1, f1, pruned, ecut, eps, kept)
    s1lo, s1hi = _bounded(s1, s1, f1, pruned, ecut, eps, kept)
    z0lo, z0hi = _bounded(zl, z0, f0, pruned, ecut, eps, kept)
    s0lo, s0hi = _bounded(sl, s0, f0, pruned, ecut, eps, kept)
    z1lo, z0lo = max(z1lo, 1.0), max(z0lo, 1.0)
    mlo, _ = div(s1lo, s1hi, z1lo, z1hi)
    _, mhi = div(s0lo, s0hi, z0lo, z0hi)
    mlo = max(mlo, 0.0)
    # pass 2: Q = Σ u c², c = d − m_g (an interval), and with ``hessian`` K = Σ u c³ as K₊ − K₋, the
    # sums over the points with c³ ≥ 0 and ≤ 0: all four are RN sums of a stored r times a rigorous
    # non-negative factor, bounded afterwards like the sums of pass 1 (lower ends with r(b_hi), upper
    # ends with r(b_lo)); a point whose c³ straddles 0 adds only to the upper ends of both
    qlo = qhi = kplo = kphi = knlo = knhi = 0.0
    for k in range(kept):
        dlo, dhi = diff(row[first + k], xg)
        clo, chi = sub(dlo, dhi, mlo, mhi)
        c2lo, c2hi = sqr(clo, chi)
        qlo += scratch[2 * k] * c2lo
        qhi += scratch[2 * k + 1] * c2hi
        if hessian:
            c3lo, c3hi = mul(clo, chi, c2lo, c2hi)
            if c3lo >= 0.0:
                kplo += scratch[2 * k] * c3lo
                kphi += scratch[2 * k + 1] * c3hi
            elif c3hi <= 0.0:
                knlo += scratch[2 * k] * -c3hi
                knhi += scratch[2 * k + 1] * -c3lo
            else:
                kphi += scratch[2 * k + 1] * c3hi
                knhi += scratch[2 * k + 1] * -c3lo
    qlo, qhi = _bounded(qlo, qhi, 0, 0, 0.0, eps, kept)
    c = max(1.0, mhi)
    c2 = up(c * c)
    rest = up(pruned * ecut)
    qhi = up(qhi + up(rest * c2))
    vlo, vhi = div(qlo, qhi, z1lo, z0hi)
    vlo = max(vlo, 0.0)
    klo = khi = 0.0
    if hessian:
        r3 = up(rest * up(c2 * c))
        kplo, kphi = _bounded(kplo, kphi, 0, 0, 0.0, eps, kept)
        knlo, knhi = _bounded(knlo, knhi, 0, 0, 0.0, eps, kept)
        klo, khi = down(kplo - up(knhi + r3)), up(up(kphi + r3) - knlo)   # K₊ − K₋ ± the pruned points
        klo, khi = div(klo, khi, z1lo, z0hi)
    out[at], out[at + 1], out[at + 2], out[at + 3] = z1lo, z0hi, mlo, mhi
    out[at + 4], out[at + 5], out[at + 6], out[at + 7] = vlo, vhi, klo, khi
    out[at + 8] = kept


@numba.njit(**_JIT)
def _task(xs, split, j, blo, bhi, cut, ecut, hessian, scratch, out):
    n = xs.shape[1]
    _group(xs[j], split[j], n, blo, bhi, cut, ecut, hessian, scratch, out[j], 0)
    _group(xs[j], 0, split[j], blo, bhi, cut, ecut, hessian, scratch, out[j], _FIELDS)


@numba.njit(**_JIT)
def _moments_serial(xs, split, blo, bhi, cut, ecut, hessian, out):
    scratch = np.empty(2 * xs.shape[1])
    for j in range(xs.shape[0]):
        _task(xs, split, j, blo, bhi, cut, ecut, hessian, scratch, out)


@numba.njit(parallel=True, **_JIT)
def _moments_parallel(xs, split, blo, bhi, cut, ecut, hessian, out):
    m = xs.shape[0]
    for k in numba.prange((m + _BLOCK - 1) // _BLOCK):
        scratch = np.empty(2 * xs.shape[1])
        for j in range(k * _BLOCK, min(m, (k + 1) * _BLOCK)):
            _task(xs, split, j, blo, bhi, cut, ecut, hessian, scratch, out)


@numba.njit(**_JIT)
def _mix(xs, split, theta, rows, alo, ahi, blo, bhi, slo, shi, hessian, out):
    n = xs.shape[1]
    for j in range(xs.shape[0]):
        nn = split[j]
        np_ = n - nn
        xp = xs[j, nn] if np_ > 0 else math.inf
        xn = xs[j, 0] if nn > 0 else math.inf
        p, q = rows[j], rows[j, _FIELDS:]
        r = mixture(theta[j], xp, xn, np_, nn, p[0], p[1], q[0], q[1], p[2], p[3], q[2], q[3], p[4], p[5],
                    q[4], q[5], p[6], p[7], q[6], q[7], alo, ahi, blo, bhi, slo, shi, hessian)
        for k in range(12):
            out[j, k] = r[k]


def group_moments(tasks: SortedTasks, b, *, hessian: bool = False, cut: float = CUT,
                  threads: int | None = None) -> GroupMoments:
    """The groups' enclosures of every task over the b-range ``b`` (a float: a point, or a pair lo ≤ hi,
    b > 0), pruned at ``cut`` (module docstring). ``threads``: as in corpus_enclosure (the result does not
    depend on it)."""
    blo, bhi = as_pair("b", b)
    if not blo > 0.0:
        raise InputError(f"b must be > 0 over the box, got {b!r}")
    cut = _check_cut(cut)
    threads = _check_threads(threads)
    out = np.empty((tasks.xs.shape[0], 2 * _FIELDS))
    args = (tasks.xs, tasks.split, blo, bhi, cut, pruning_bound(cut), bool(hessian), out)
    if tasks.xs.size < _PARALLEL_POINTS or threads == 1:
        _moments_serial(*args)
    else:
        before = numba.get_num_threads()
        numba.set_num_threads(before if threads is None else threads)
        try:
            _moments_parallel(*args)
        finally:
            numba.set_num_threads(before)
    return GroupMoments(b=(blo, bhi), hessian=bool(hessian), cut=cut, rows=out)


def mixed_enclosure(tasks: SortedTasks, moments: GroupMoments, a, *, shear=0.0) -> np.ndarray:
    """[[L̂], [∂L̂/∂a], [∂L̂/∂b]] (and with the moments' ``hessian`` the three second derivatives: shape
    (6, 2)) over the box a × moments.b, or the parallelogram {(a′ + s·b, b)} with ``shear`` s, as
    :func:`~stumpcheck.numerics.certified.fast.corpus.corpus_enclosure` states them."""
    alo, ahi = as_pair("a", a)
    slo, shi = as_pair("shear", shear)
    blo, bhi = moments.b
    out = np.empty((tasks.xs.shape[0], 12))
    _mix(tasks.xs, tasks.split, tasks.theta, moments.rows, alo, ahi, blo, bhi, slo, shi, moments.hessian, out)
    box = _sums(out)
    return box.reshape(6, 2) if moments.hessian else box[:6].reshape(3, 2)


def sorted_enclosure(tasks: SortedTasks, a, b, *, hessian: bool = False, shear=0.0, cut: float = CUT,
                     threads: int | None = None) -> np.ndarray:
    """:func:`group_moments` and :func:`mixed_enclosure` in one call (nothing shared)."""
    return mixed_enclosure(tasks, group_moments(tasks, b, hessian=hessian, cut=cut, threads=threads), a, shear=shear)
