"""Rigorous float64 enclosures of the Hessian ∇²L = ∫₀¹ (∇e ∇eᵀ + e ∇²e) dθ over a small real (a, b)
box.

**The integrand.** ∇²e is not typed here: the generated one-head jet ``error_jet_one_head`` (e, ∂e/∂a, ∂e/∂b,
∂²e/∂a², ∂²e/∂a∂b, ∂²e/∂b², printed from SymPy by the theory into
:mod:`stumpcheck.numerics.generated.population_arb`) is translated from its source to outward-rounded float64
interval code by :func:`stumpcheck.numerics.certified.fast.integrand_translation.translate` (the inclusion
property holds operation by operation), and the three entries h_ij = ∂_i e ∂_j e + e ∂_i∂_j e are formed from
it in interval arithmetic. They are the second derivatives of f = ½e² in (a, b).

**The rule.** On each breakpoint piece (:func:`stumpcheck.numerics.certified.fast.theta_integrals.split_pieces`)
the ``order``-point Gauss–Legendre rule with enclosed nodes and weights
(:func:`stumpcheck.numerics.certified.fast.gauss_legendre.rule_tables`), plus the Bernstein-ellipse remainder
(64/15)·M·ρ^{2−2n}/(ρ² − 1) times the half-length (the bound of
:mod:`stumpcheck.numerics.certified.fast.gauss_legendre`), with M ≥ |h_ij| on the ellipse from a Cauchy
estimate: for f holomorphic in (a, b) on the closed polydisk of radius r about a point,
|∂²f/∂a²|, |∂²f/∂b²| ≤ 2 sup|f|/r² and |∂²f/∂a∂b| ≤ sup|f|/r² (Cauchy's integral formula in each
variable).
sup|f| = ½ sup|e|² over the rectangles A = [a_lo − r, a_hi + r] + i[−r, r], B likewise (which contain the
polydisk about every point of the box) and a cover of the ellipse's upper half by θ-rectangles, is bounded
by :func:`stumpcheck.numerics.certified.fast.complex_parameters.error_modulus`; a finite bound there also
says that e is holomorphic in (a, b, θ) on those rectangles (no denominator vanishes), which both the
Cauchy estimate and the Gauss–Legendre remainder need; the lower half of the ellipse mirrors the upper
(e is real for real (a, b, θ)). :data:`CAUCHY_RADIUS` r = 1/8 keeps the weights' poles (Im y = ±π,
y = a − bθ) off the polydisk. A piece on which no ρ of
:data:`~stumpcheck.numerics.certified.fast.gauss_legendre.RHOS` gives a finite M is halved, up to
:data:`MAX_SPLITS` times; a piece that still fails makes the whole enclosure fail (``ok`` false: the caller
falls back to Arb).

Domain: a real box with b_lo > 2r (so that Re b ≥ r > 0 on B), the one-head model, prior Uniform[0, 1].
Precision: the node sums' rounding (a few dozen ulps of Σ|w h|) plus the remainder. Assumptions:
:data:`stumpcheck.numerics.certified.fast.rounding.ASSUMPTIONS` (which include the sin/cos bound of the
complex exponentials on the ellipse).
"""

from __future__ import annotations

import functools
import inspect

import numpy as np

from stumpcheck.numerics.certified.fast.gauss_legendre import DEFAULT_ORDER, rule_tables
from stumpcheck.numerics.certified.fast.interval import as_pair
from stumpcheck.numerics.precision import InputError

__all__ = ["CAUCHY_RADIUS", "MAX_SPLITS", "hessian_enclosure", "jet_module", "compile_once", "is_compiled"]

#: The radius r of the Cauchy estimate (in a and in b).
CAUCHY_RADIUS = 0.125
#: Halvings of a piece on which no Bernstein ellipse gives a finite bound.
MAX_SPLITS = 6

_DRIVER = '''
from stumpcheck.numerics.certified.fast.complex_parameters import error_modulus
from stumpcheck.numerics.certified.fast.gauss_legendre import _map, cell_rectangles
from stumpcheck.numerics.certified.fast.interval import mul_pos, sqr, sub


@numba.njit(fastmath=False, error_model="numpy")
def _hessian_piece(v, p0, p1, upper, rule, cells, offsets, factors, radius, out):
    """Add the rule's sums of h_aa, h_ab, h_bb on [p0, p1] (θ, or u if ``upper``) widened by the remainder to
    ``out`` (6 doubles); False (``out`` untouched) when no ρ gives a finite M."""
    slo, shi = add(p0, p0, p1, p1)
    clo, chi = mul(slo, shi, 0.5, 0.5)
    dlo, dhi = sub(p1, p1, p0, p0)
    klo, khi = mul(max(dlo, 0.0), dhi, 0.5, 0.5)
    klo = max(klo, 0.0)
    sums = np.zeros(6)
    scale = 0.0
    for i in range(rule.shape[1]):
        tlo, thi, ulo, uhi = _map(clo, chi, klo, khi, rule[0, i], rule[1, i], upper)
        wlo, whi = mul_pos(klo, khi, rule[2, i], rule[3, i])
        r = kernel(v, tlo, thi, ulo, uhi)
        e, ea, eb, eaa, eab, ebb = r[0], r[1], r[2], r[3], r[4], r[5]
        x = sqr(ea[0], ea[1])
        y = mul(e[0], e[1], eaa[0], eaa[1])
        haa = add(x[0], x[1], y[0], y[1])
        x = mul(ea[0], ea[1], eb[0], eb[1])
        y = mul(e[0], e[1], eab[0], eab[1])
        hab = add(x[0], x[1], y[0], y[1])
        x = sqr(eb[0], eb[1])
        y = mul(e[0], e[1], ebb[0], ebb[1])
        hbb = add(x[0], x[1], y[0], y[1])
        for j, h in enumerate((haa, hab, hbb)):
            q = mul(h[0], h[1], wlo, whi)
            sums[2 * j], sums[2 * j + 1] = add(sums[2 * j], sums[2 * j + 1], q[0], q[1])
            scale = max(scale, up(max(abs(q[0]), abs(q[1])) * rule.shape[1]))
    a = (down(v[0] - radius), up(v[1] + radius), -radius, radius)
    b = (down(v[2] - radius), up(v[3] + radius), -radius, radius)
    best = math.inf
    for g in range(factors.size):
        m = 0.0
        for c in range(offsets[g], offsets[g + 1]):
            xlo, xhi, ylo, yhi = cells[c, 0], cells[c, 1], cells[c, 2], cells[c, 3]
            t, u = cell_rectangles(clo, chi, klo, khi, xlo, xhi, ylo, yhi, upper)
            m = max(m, error_modulus(a, b, t, u))
            if m == math.inf:
                break
        # sup|f| = ½ sup|e|²; the Cauchy factor 2/r² (the mixed entry needs only 1/r²)
        bound = up(up(khi * factors[g]) * up(up(m * m) / down(radius * radius)))
        if bound < best:
            best = bound
        if best <= up(scale * 2.0 ** -54):
            break
    if best == math.inf:
        return False
    for j in range(3):
        lo, hi = add(sums[2 * j], sums[2 * j + 1], -best, best)
        out[2 * j], out[2 * j + 1] = add(out[2 * j], out[2 * j + 1], lo, hi)
    return True


@numba.njit(fastmath=False, error_model="numpy")
def hessian_pieces(v, theta_points, rest_points, rule, cells, offsets, factors, radius, max_splits):
    """((h_aa lo, hi, h_ab lo, hi, h_bb lo, hi), pieces, ok) over all pieces (halving failed ones)."""
    out = np.zeros(6)
    stack = np.empty((max_splits + 2, 2))
    depth = np.empty(max_splits + 2, dtype=np.int64)
    ruled = 0
    for half in range(2):
        points = theta_points if half == 0 else rest_points
        for i in range(points.size - 1):
            top = 0
            stack[0, 0], stack[0, 1] = points[i], points[i + 1]
            depth[0] = 0
            while top >= 0:
                p0, p1, d = stack[top, 0], stack[top, 1], depth[top]
                top -= 1
                if _hessian_piece(v, p0, p1, half == 1, rule, cells, offsets, factors, radius, out):
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
                    return out, ruled, False
    return out, ruled, True
'''
_DEPENDENCIES = ("complex_parameters.py", "complex_one_head.py", "complex_interval.py", "gauss_legendre.py")


@functools.lru_cache(maxsize=1)
def _text() -> str:
    from stumpcheck.numerics.certified.fast.integrand_translation import translate
    from stumpcheck.numerics.generated import population_arb

    text, outputs = translate(inspect.getsource(population_arb), "error_jet_one_head", ("a", "b"))
    if outputs != 6:
        raise RuntimeError(f"the generated one-head jet has {outputs} outputs, not 6")
    return text + _DRIVER


def is_compiled() -> bool:
    """Whether numba's disk cache already holds the compiled driver (a later process then only loads it)."""
    from stumpcheck.numerics.certified.fast.generated_integrands import module_path

    path = module_path(_text(), _DEPENDENCIES)
    return path is not None and any((path.parent / "__pycache__").glob(f"{path.stem}.hessian_pieces-*.nbi"))


def compile_once() -> None:
    """Compile the driver in this process (and write numba's cache) unless it is cached already, so that worker
    processes started afterwards load it instead of each compiling it (about 15–30 s of CPU each). Without a
    cache folder nothing is shared, so nothing is done here."""
    from stumpcheck.numerics.certified.fast.generated_integrands import module_path

    if module_path(_text(), _DEPENDENCIES) is not None and not is_compiled():
        hessian_enclosure(10.0, 10.0)


@functools.lru_cache(maxsize=1)
def jet_module():
    """The translated one-head jet (``kernel(v, θ lo, θ hi, u lo, u hi)`` → (e, e_a, e_b, e_aa, e_ab, e_bb) as
    pairs, v = (a lo, a hi, b lo, b hi)) with the driver above (compiled once; cached on disk by numba)."""
    from stumpcheck.numerics.certified.fast.generated_integrands import load_module

    return load_module(_text(), _DEPENDENCIES)


def hessian_enclosure(a, b, *, order: int = DEFAULT_ORDER, grid=None) -> tuple[np.ndarray, bool]:
    """([[∂²L/∂a² lo, hi], [∂²L/∂a∂b lo, hi], [∂²L/∂b² lo, hi]], ok) over a ∈ [a], b ∈ [b] (floats or
    pairs), b > 2·:data:`CAUCHY_RADIUS`; ok False when a piece found no finite remainder bound (module
    docstring). ``grid``: the cells of each ellipse's upper half (as for
    :func:`~stumpcheck.numerics.certified.fast.gauss_legendre.rule_tables`)."""
    from stumpcheck.numerics.certified.fast.theta_integrals import split_pieces

    alo, ahi = as_pair("a", a)
    blo, bhi = as_pair("b", b)
    if not blo > 2 * CAUCHY_RADIUS:
        raise InputError(f"b must be > {2 * CAUCHY_RADIUS} for the fast Hessian, got {b!r}")
    theta_points, rest_points = split_pieces(0.5 * (alo + ahi), 0.5 * (blo + bhi))
    rule, cells, offsets, factors = rule_tables(order) if grid is None else rule_tables(order, grid=tuple(grid))
    v = np.array([alo, ahi, blo, bhi])
    out, _, ok = jet_module().hessian_pieces(v, theta_points, rest_points, rule, cells, offsets, factors, CAUCHY_RADIUS,
                                             MAX_SPLITS)
    return np.array(out).reshape(3, 2), bool(ok)
