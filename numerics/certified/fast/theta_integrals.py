"""Rigorous float64 enclosures of L = ∫₀¹ ½e² dθ and ∇L = ∫₀¹ e∇e dθ at a point or over an (a, b) box.

Prior Uniform[0, 1], one-head estimator. [0, 1] is tiled exactly by doubles: θ ∈ [0, ½] by θ, and
θ ∈ [½, 1] by its distance u = 1 − θ ∈ [0, ½] (exact ends, so a switch layer at u ≈ b⁻³ ≪ 2⁻⁵³ keeps
its pieces apart). The pieces are the model's breakpoints at the box's midpoint
(:func:`stumpcheck.numerics.population.quadrature.breakpoints_float64_split`: θ = 0, θ = 1 and the
switch, with geometric ladders), each cut into ``subdivisions`` sub-boxes at doubles x₀ < x₁ < … (any
doubles tiling [0, ½] give a valid result; the breakpoints only make it tight). On a sub-box
[x_k, x_{k+1}] of width h the integrand f ∈ {½e², e·∂e/∂a, e·∂e/∂b} is enclosed over the whole
(a, b, θ) box by :func:`stumpcheck.numerics.certified.fast.one_head.jet_box` (½e² as the range of a
square), and

    ∫ f dθ ∈ Σ_k [h_k]·[f_k lo, f_k hi]

in outward-rounded interval arithmetic (h_k = x_{k+1} − x_k enclosed). This first-order sum
(``method="first-order"``) is wide: the relative width at a point falls like 1/``subdivisions``
(about 10⁻² for L and 6–9·10⁻² for ∇L at 64, 4–6·10⁻³ for ∇L at 1024).

**Several nearby points** (:func:`loss_gradient_points`: c and c ± δ of a difference quotient): the rule's
sums at each point, one remainder bound per piece for all of them, from M over the hull of their (a, b)
boxes (which contains each), so the costly part, M on the ellipse, is paid once.

**Default, ``method="gauss-legendre"``:** on each piece the ``order``-point Gauss–Legendre rule with a
rigorous Bernstein-ellipse remainder (:func:`stumpcheck.numerics.certified.fast.gauss_legendre.gl_piece`:
enclosed nodes and weights, the bound (64/15)·M·ρ^{2−2n}/(ρ² − 1) times the half-length, M from complex
intervals over a cover of the ellipse). A piece on which no ellipse gives a finite M is halved (up to
:data:`MAX_SPLITS` times along a branch); a half that still fails gets the first-order sum with
``subdivisions`` sub-boxes, and the result counts those pieces (``fallbacks``). Measured relative widths
of ∇L at points of the calibration relation, b from 10 to 10⁵: about 10⁻¹³ (tests and
benchmarks/bench_fast.py measure it).

Domain: a finite, b > 0 (both as points or intervals), the one-head model. Precision: float64
intervals; assumptions: :data:`stumpcheck.numerics.certified.fast.rounding.ASSUMPTIONS`.
"""

from __future__ import annotations

import math

import numba
import numpy as np

from stumpcheck.numerics.certified.fast.complex_one_head import integrand_bounds
from stumpcheck.numerics.certified.fast.gauss_legendre import DEFAULT_ORDER, _map, cell_rectangles, gl_piece, rule_tables
from stumpcheck.numerics.certified.fast.interval import add, as_pair, mul, mul_pos, one_minus, sqr, sub
from stumpcheck.numerics.certified.fast.one_head import jet_box
from stumpcheck.numerics.certified.fast.rounding import down, up
from stumpcheck.numerics.precision import InputError

__all__ = ["DEFAULT_SUBDIVISIONS", "MAX_SPLITS", "METHODS", "integrate_pieces", "integrate_pieces_gl",
           "split_pieces", "loss_gradient_enclosure", "loss_gradient_enclosure_counted", "loss_gradient_points"]

#: Sub-boxes per breakpoint piece (first-order method, and the fallback of the Gauss–Legendre one).
DEFAULT_SUBDIVISIONS = 64
#: Halvings of a piece on which no Bernstein ellipse gives a finite bound, before the first-order fallback.
MAX_SPLITS = 6
METHODS = ("gauss-legendre", "first-order")
#: Boxes within this relative distance share the remainder bounds (:func:`loss_gradient_points`): the hull's
#: M on the ellipse stays close to each box's.
NEARBY = 2.0 ** -16

_JIT = dict(cache=True, fastmath=False, error_model="numpy")


@numba.njit(**_JIT)
def _first_order_piece(alo, ahi, blo, bhi, p0, p1, upper, subdivisions, out_lo, out_hi):
    """Add the first-order sum over the piece [p0, p1] (of θ, or of u if ``upper``) to out_lo/out_hi."""
    step = (p1 - p0) / subdivisions
    x0 = p0
    for k in range(subdivisions):
        x1 = p1 if k == subdivisions - 1 else min(max(p0 + (k + 1) * step, x0), p1)
        if not upper:
            tlo, thi = x0, x1
            ulo, uhi = one_minus(x0, x1)
        else:
            ulo, uhi = x0, x1
            tlo, thi = one_minus(x0, x1)
        elo, ehi, ealo, eahi, eblo, ebhi = jet_box(alo, ahi, blo, bhi, max(tlo, 0.0), min(thi, 1.0),
                                                   max(ulo, 0.0), min(uhi, 1.0))
        hlo = max(down(x1 - x0), 0.0)
        hhi = up(x1 - x0)
        flo, fhi = sqr(elo, ehi)
        flo, fhi = mul_pos(flo, fhi, 0.5 * hlo, up(0.5 * hhi))
        out_lo[0], out_hi[0] = add(out_lo[0], out_hi[0], flo, fhi)
        flo, fhi = mul(elo, ehi, ealo, eahi)
        flo, fhi = mul(flo, fhi, hlo, hhi)
        out_lo[1], out_hi[1] = add(out_lo[1], out_hi[1], flo, fhi)
        flo, fhi = mul(elo, ehi, eblo, ebhi)
        flo, fhi = mul(flo, fhi, hlo, hhi)
        out_lo[2], out_hi[2] = add(out_lo[2], out_hi[2], flo, fhi)
        x0 = x1


@numba.njit(**_JIT)
def integrate_pieces(alo, ahi, blo, bhi, theta_points, rest_points, subdivisions):
    """(L lo, L hi, ∂L/∂a lo, hi, ∂L/∂b lo, hi, sub-boxes) by the first-order sum over the pieces of
    θ ∈ [0, ½] (``theta_points``) and u = 1 − θ ∈ [0, ½] (``rest_points``), both sorted doubles from 0 to ½."""
    out = np.zeros(7)
    out_lo = np.zeros(3)
    out_hi = np.zeros(3)
    count = 0
    for half in range(2):
        points = theta_points if half == 0 else rest_points
        for i in range(points.size - 1):
            _first_order_piece(alo, ahi, blo, bhi, points[i], points[i + 1], half == 1, subdivisions,
                               out_lo, out_hi)
            count += subdivisions
    for j in range(3):
        out[2 * j] = out_lo[j]
        out[2 * j + 1] = out_hi[j]
    out[6] = count
    return out


@numba.njit(**_JIT)
def integrate_pieces_gl(alo, ahi, blo, bhi, theta_points, rest_points, subdivisions, rule, cells, offsets,
                        factors, max_splits):
    """(L lo, L hi, ∂L/∂a lo, hi, ∂L/∂b lo, hi, rule pieces, first-order fallbacks) by the Gauss–Legendre
    rule on each piece (halving a failed piece up to ``max_splits`` times, then the first-order sum)."""
    out = np.zeros(8)
    out_lo = np.zeros(3)
    out_hi = np.zeros(3)
    ruled = 0
    fallbacks = 0
    stack = np.empty((max_splits + 2, 2))
    depth = np.empty(max_splits + 2, dtype=np.int64)
    for half in range(2):
        points = theta_points if half == 0 else rest_points
        for i in range(points.size - 1):
            top = 0
            stack[0, 0], stack[0, 1] = points[i], points[i + 1]
            depth[0] = 0
            while top >= 0:
                p0, p1, d = stack[top, 0], stack[top, 1], depth[top]
                top -= 1
                r = gl_piece(alo, ahi, blo, bhi, p0, p1, half == 1, rule, cells, offsets, factors)
                if r[6] == 0.0:
                    for j in range(3):
                        out_lo[j], out_hi[j] = add(out_lo[j], out_hi[j], r[2 * j], r[2 * j + 1])
                    ruled += 1
                    continue
                mid = 0.5 * p0 + 0.5 * p1
                if d < max_splits and p0 < mid < p1:
                    top += 1
                    stack[top, 0], stack[top, 1] = p0, mid
                    depth[top] = d + 1
                    top += 1
                    stack[top, 0], stack[top, 1] = mid, p1
                    depth[top] = d + 1
                else:
                    _first_order_piece(alo, ahi, blo, bhi, p0, p1, half == 1, subdivisions, out_lo, out_hi)
                    fallbacks += 1
    for j in range(3):
        out[2 * j] = out_lo[j]
        out[2 * j + 1] = out_hi[j]
    out[6] = ruled
    out[7] = fallbacks
    return out


def split_pieces(a: float, b: float) -> tuple[np.ndarray, np.ndarray]:
    """(θ points in [0, ½], u points in [0, ½]), sorted doubles with both ends: the one-head breakpoints
    at (a, b) by half (:func:`stumpcheck.numerics.population.quadrature.breakpoints_float64_split`)."""
    from stumpcheck.numerics.population.quadrature import breakpoints_float64_split

    thetas, rests = breakpoints_float64_split(float(a), float(b))
    lower = {0.0, 0.5}
    upper = {0.0, 0.5}
    for theta, rest in zip(thetas, rests):
        if not (math.isfinite(theta) and math.isfinite(rest)):
            continue
        if 0.0 < theta < 0.5:
            lower.add(float(theta))
        elif 0.0 < rest < 0.5:
            upper.add(float(rest))
    return np.array(sorted(lower)), np.array(sorted(upper))


def loss_gradient_enclosure_counted(a, b, *, method: str = "gauss-legendre", order: int = DEFAULT_ORDER,
                                    subdivisions: int = DEFAULT_SUBDIVISIONS, grid=None) -> tuple[np.ndarray, dict]:
    """(:func:`loss_gradient_enclosure`'s array, counts): counts = {"pieces": pieces integrated by the rule,
    "fallbacks": pieces that fell back to the first-order sum} (Gauss–Legendre), or {"sub_boxes": n}.
    ``grid``: the cells of each Bernstein ellipse's upper half (default that of
    :func:`~stumpcheck.numerics.certified.fast.gauss_legendre.rule_tables`; a coarser grid gives a cruder,
    still valid, remainder at less cost)."""
    alo, ahi = as_pair("a", a)
    blo, bhi = as_pair("b", b)
    if not blo > 0:
        raise InputError(f"b must be > 0, got {b!r}")
    if isinstance(subdivisions, bool) or not isinstance(subdivisions, int) or not 1 <= subdivisions <= 10 ** 6:
        raise InputError(f"subdivisions must be an integer in [1, 1000000], got {subdivisions!r}")
    if method not in METHODS:
        raise InputError(f"method must be one of {', '.join(METHODS)}, got {method!r}")
    theta_points, rest_points = split_pieces(0.5 * (alo + ahi), 0.5 * (blo + bhi))
    if method == "first-order":
        out = integrate_pieces(alo, ahi, blo, bhi, theta_points, rest_points, subdivisions)
        return out[:6].reshape(3, 2), {"sub_boxes": int(out[6])}
    rule, cells, offsets, factors = rule_tables(order) if grid is None else rule_tables(order, grid=tuple(grid))
    out = integrate_pieces_gl(alo, ahi, blo, bhi, theta_points, rest_points, subdivisions, rule, cells, offsets,
                              factors, MAX_SPLITS)
    return out[:6].reshape(3, 2), {"pieces": int(out[6]), "fallbacks": int(out[7])}


def loss_gradient_enclosure(a, b, *, subdivisions: int = DEFAULT_SUBDIVISIONS, method: str = "gauss-legendre",
                            order: int = DEFAULT_ORDER) -> np.ndarray:
    """[[L lo, L hi], [∂L/∂a lo, hi], [∂L/∂b lo, hi]] over a ∈ [a], b ∈ [b] (floats or pairs (lo, hi)).

    The one-head model, prior Uniform[0, 1]; ``method`` "gauss-legendre" (default: ``order`` nodes a
    piece, rigorous remainder) or "first-order" (``subdivisions`` sub-boxes a piece); method and
    assumptions in the module docstring.
    """
    return loss_gradient_enclosure_counted(a, b, method=method, order=order, subdivisions=subdivisions)[0]


@numba.njit(**_JIT)
def _gl_points(boxes, p0, p1, upper, rule, cells, offsets, factors, out):
    """Add to ``out`` (K, 6) the rule's sums on [p0, p1] at each of the K (a, b) boxes (rows of ``boxes``:
    a lo, a hi, b lo, b hi), each widened by one remainder bound from M over the hull of the boxes; False
    (``out`` untouched) when some component finds no finite M."""
    count = boxes.shape[0]
    slo, shi = add(p0, p0, p1, p1)
    clo, chi = mul(slo, shi, 0.5, 0.5)
    dlo, dhi = sub(p1, p1, p0, p0)
    klo, khi = mul(max(dlo, 0.0), dhi, 0.5, 0.5)
    klo = max(klo, 0.0)
    sums = np.zeros((count, 6))
    scale = np.zeros(3)
    for i in range(rule.shape[1]):
        tlo, thi, ulo, uhi = _map(clo, chi, klo, khi, rule[0, i], rule[1, i], upper)
        wlo, whi = mul_pos(klo, khi, rule[2, i], rule[3, i])
        for q in range(count):
            elo, ehi, ealo, eahi, eblo, ebhi = jet_box(boxes[q, 0], boxes[q, 1], boxes[q, 2], boxes[q, 3],
                                                       tlo, thi, ulo, uhi)
            flo, fhi = sqr(elo, ehi)
            flo, fhi = mul_pos(flo, fhi, 0.5 * wlo, up(0.5 * whi))
            sums[q, 0], sums[q, 1] = add(sums[q, 0], sums[q, 1], flo, fhi)
            scale[0] = max(scale[0], fhi)
            flo, fhi = mul(elo, ehi, ealo, eahi)
            flo, fhi = mul(flo, fhi, wlo, whi)
            sums[q, 2], sums[q, 3] = add(sums[q, 2], sums[q, 3], flo, fhi)
            scale[1] = max(scale[1], max(abs(flo), abs(fhi)))
            flo, fhi = mul(elo, ehi, eblo, ebhi)
            flo, fhi = mul(flo, fhi, wlo, whi)
            sums[q, 4], sums[q, 5] = add(sums[q, 4], sums[q, 5], flo, fhi)
            scale[2] = max(scale[2], max(abs(flo), abs(fhi)))
    alo, ahi = boxes[0, 0], boxes[0, 1]
    blo, bhi = boxes[0, 2], boxes[0, 3]
    for q in range(1, count):
        alo, ahi = min(alo, boxes[q, 0]), max(ahi, boxes[q, 1])
        blo, bhi = min(blo, boxes[q, 2]), max(bhi, boxes[q, 3])
    best = np.full(3, np.inf)
    for r in range(factors.size):
        m = np.zeros(3)
        for c in range(offsets[r], offsets[r + 1]):
            xlo, xhi, ylo, yhi = cells[c, 0], cells[c, 1], cells[c, 2], cells[c, 3]
            t, u = cell_rectangles(clo, chi, klo, khi, xlo, xhi, ylo, yhi, upper)
            m0, m1, m2 = integrand_bounds(alo, ahi, blo, bhi, t, u)
            m[0] = max(m[0], m0)
            m[1] = max(m[1], m1)
            m[2] = max(m[2], m2)
            if m[0] == np.inf and m[1] == np.inf and m[2] == np.inf:
                break
        done = True
        for j in range(3):
            bound = up(up(khi * factors[r]) * m[j])
            if bound < best[j]:
                best[j] = bound
            if not best[j] <= up(up(rule.shape[1] * 2.0 * scale[j]) * 2.0 ** -54):
                done = False
        if done:
            break
    for j in range(3):
        if best[j] == np.inf:
            return False
    for q in range(count):
        for j in range(3):
            lo, hi = add(sums[q, 2 * j], sums[q, 2 * j + 1], -best[j], best[j])
            out[q, 2 * j], out[q, 2 * j + 1] = add(out[q, 2 * j], out[q, 2 * j + 1], lo, hi)
    return True


@numba.njit(**_JIT)
def _gl_points_pieces(boxes, theta_points, rest_points, rule, cells, offsets, factors, max_splits):
    """((K, 6) sums over all pieces, True), or (partial, False) when a piece still fails after
    ``max_splits`` halvings (no first-order fallback here: the caller uses :func:`integrate_pieces_gl`)."""
    out = np.zeros((boxes.shape[0], 6))
    stack = np.empty((max_splits + 2, 2))
    depth = np.empty(max_splits + 2, dtype=np.int64)
    for half in range(2):
        points = theta_points if half == 0 else rest_points
        for i in range(points.size - 1):
            top = 0
            stack[0, 0], stack[0, 1] = points[i], points[i + 1]
            depth[0] = 0
            while top >= 0:
                p0, p1, d = stack[top, 0], stack[top, 1], depth[top]
                top -= 1
                if _gl_points(boxes, p0, p1, half == 1, rule, cells, offsets, factors, out):
                    continue
                mid = 0.5 * p0 + 0.5 * p1
                if d < max_splits and p0 < mid < p1:
                    top += 1
                    stack[top, 0], stack[top, 1] = p0, mid
                    depth[top] = d + 1
                    top += 1
                    stack[top, 0], stack[top, 1] = mid, p1
                    depth[top] = d + 1
                else:
                    return out, False
    return out, True


def loss_gradient_points(boxes, *, order: int = DEFAULT_ORDER) -> np.ndarray:
    """(K, 3, 2): [[L lo, hi], [∂L/∂a lo, hi], [∂L/∂b lo, hi]] over each of K nearby (a, b) boxes (rows
    (a lo, a hi, b lo, b hi), b > 0), by the Gauss–Legendre rule with one remainder bound per piece for all
    of them (module docstring). Boxes farther apart than :data:`NEARBY` (relative, in a or b), or whose
    pieces fail, are each enclosed on its own by :func:`loss_gradient_enclosure_counted`."""
    boxes = np.array(boxes, dtype=np.float64).reshape(-1, 4)
    for row in boxes:
        as_pair("a", (row[0], row[1]))
        as_pair("b", (row[2], row[3]))
        if not row[2] > 0:
            raise InputError(f"b must be > 0, got {row[2]!r}")
    b_span = boxes[:, 3].max() - boxes[:, 2].min()
    a_span = boxes[:, 1].max() - boxes[:, 0].min()
    if b_span > NEARBY * boxes[:, 2].min() or a_span > NEARBY * max(1.0, abs(boxes[:, 0].min())):
        return np.array([loss_gradient_enclosure_counted((r[0], r[1]), (r[2], r[3]), order=order)[0] for r in boxes])
    theta_points, rest_points = split_pieces(0.5 * (boxes[:, 0].min() + boxes[:, 1].max()),
                                             0.5 * (boxes[:, 2].min() + boxes[:, 3].max()))
    rule, cells, offsets, factors = rule_tables(order)
    out, ok = _gl_points_pieces(boxes, theta_points, rest_points, rule, cells, offsets, factors, MAX_SPLITS)
    if ok:
        return out.reshape(-1, 3, 2)
    return np.array([loss_gradient_enclosure_counted((r[0], r[1]), (r[2], r[3]), order=order)[0] for r in boxes])
