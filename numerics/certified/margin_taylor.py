"""The Taylor form of a θ-integral margin along one variable, enclosed with rigorous θ-integrals.

For a box where one variable x is free (the others fixed, e.g. b on the calibration relation with
lam = 0), :func:`taylor_enclosure` encloses each smooth kernel K of the margin
(:mod:`theory.margin_taylor`) by its Taylor form of order n about the box's centre c, on each of N
sub-intervals X_i tiling the box X (Lagrange's remainder, ξ between c and x):

    K(x) ∈ Σ_{j<n} K^{(j)}(c)·(X_i − c)^j/j! + K^{(n)}(hull(c, X_i))·(X_i − c)^n/n!     (x ∈ X_i),

and returns the union over i of the outer expression evaluated on X_i and the kernels' balls.

* The centre coefficients K^{(j)}(c), j < n, come from the point integrals Q^{(m)}(c) =
  ∫₀¹ ∂_x^m q(c, θ) dθ, m < n, enclosed tightly (``acb.integral``; Q^{(0)} to the working
  precision, the derivatives, which are multiplied by (X − c)^j, to :data:`_DERIVATIVE_BITS`).
* Only the n-th derivative is integrated over balls: Q^{(n)}(X_l) for each sub-interval, with x the
  ball X_l, where each integrand ball contains ∂_x^n q at every x ∈ X_l, so the integral's ball
  contains Q^{(n)}(x) for every x ∈ X_l; a crude relative accuracy (:data:`_REMAINDER_BITS`) at a
  lower working precision suffices, since it only enters the remainder. Interval evaluation of
  the integrand over a wide ball overestimates it (by about 10·width/x relatively), hence the
  sub-intervals of relative width :data:`SUB_WIDTH`.
* K^{(n)} on X_l needs the lower Q^{(m)} there too: Q^{(m)}(X_l) ⊆ Σ_{k<n−m} Q^{(m+k)}(c)·
  (X_l − c)^k/k! + Q^{(n)}(hull(c, X_l))·(X_l − c)^{n−m}/(n−m)!, and Q^{(n)} on hull(c, X_l) is
  the union of the Q^{(n)}(X_j) of the sub-intervals between c and X_l (likewise K^{(n)}).

The θ-pieces are the ladder of :func:`numerics.certified.theta_integrals.ladder_pieces` (exact
binary cuts of [0, 1] near the layers, a steering choice only: any exact tiling is rigorous), the
same for every integral of the box.
"""

from __future__ import annotations

import math
from functools import cache

from flint import acb, arb, ctx

from numerics.certified.theta_integrals import ladder_pieces
from theory import margin_quantities as mq
from theory.codegen_margins import margin_function_source
from theory.margin_taylor import taylor_form

__all__ = ["compile_taylor", "taylor_enclosure", "SUB_WIDTH"]

#: relative tolerance (bits) of the centre integrals Q^{(m)}(c), m ≥ 1 (Q^{(0)}: the working precision)
_DERIVATIVE_BITS = 24
#: relative tolerance (bits) of the remainder integrals Q^{(n)}(X_l): a choice only, the results are balls
_REMAINDER_BITS = 8
#: relative width of the sub-intervals X_l of the remainder (width / centre of the free variable)
SUB_WIDTH = 0.005
#: the most sub-intervals per box (a wider box is left to bisection)
MAX_SUB_INTERVALS = 4


@cache
def compile_taylor(srepr: str, coordinates: str, variables: tuple, free: str, order: int, estimator: str,
                   namespace_factory):
    """The ball functions of the Taylor form (cached per process)."""
    from numerics.certified.margins import parse_srepr

    form = taylor_form(parse_srepr(srepr), coordinates, variables, free, order, estimator)
    names = [mq.symbol_namespace()[n] for n in variables]
    namespace = namespace_factory()
    source = margin_function_source("outer", (*names, *form.kernel_symbols), (form.outer,), "outer")
    for j, level in enumerate(form.kernel_derivatives):
        arguments = [s for m in range(j + 1) for s in form.integrands[m]]
        source += margin_function_source(f"kernels_{j}", (*names, *arguments), tuple(level), f"K^({j})")
    theta = mq.symbol_namespace()["theta"]
    for m, level in enumerate(form.integrands):
        source += margin_function_source(f"integrands_{m}", (*names, theta), tuple(level.values()), f"q^({m})")
    exec(source, namespace)  # noqa: S102 - printed from SymPy by theory.codegen_margins
    return {"form": form, "namespace": namespace, "source": source,
            "integral_names": [list(level) for level in form.integrands]}


def _integrate(function, args, index: int, pieces, goal_bits: int) -> arb:
    """∫₀¹ function(*args, θ)[index] dθ on the pieces, relative tolerance 2^-goal_bits (a ball)."""
    goal = arb(2) ** -goal_bits

    def integrand(t, analytic):
        return function(*args, t, analytic)[index]

    total = acb(0)
    for lo, hi in zip(pieces, pieces[1:]):
        part = acb.integral(integrand, lo, hi, rel_tol=goal, abs_tol=goal * arb(2) ** -(ctx.prec + 40))
        if not part.is_finite():
            return arb.nan()
        total += part
    return total.real


def _pieces(a_mid: float, b_mid: float, estimator: str) -> list:
    try:
        return ladder_pieces(arb(a_mid), arb(b_mid), estimator, 64)
    except (ArithmeticError, ValueError, OverflowError):
        return [arb(0), arb(1)]


def _q_values(compiled, m: int, args, pieces, goal_bits: int) -> list:
    function = compiled["namespace"][f"integrands_{m}"]
    return [_integrate(function, args, k, pieces, goal_bits) for k in range(len(compiled["integral_names"][m]))]


def _finite(levels) -> bool:
    return all(v.is_finite() for level in levels for v in level)


def _union(balls: list) -> list:
    """The componentwise union of a list of equally long lists of balls."""
    out = list(balls[0])
    for row in balls[1:]:
        out = [x.union(y) for x, y in zip(out, row)]
    return out


def _powers(delta: arb, n: int) -> list:
    """[δ^0/0!, …, δ^n/n!] by repeated products (Arb's power of a ball containing 0 is indeterminate)."""
    out, power = [arb(1)], arb(1)
    for j in range(1, n + 1):
        power = power * delta
        out.append(power / math.factorial(j))
    return out


def _sub_intervals(x: arb, centre: arb) -> list:
    """Balls X_1, …, X_N covering the ball x, consecutive ones sharing an end ball."""
    width = float(x.upper() - x.lower())
    scale = max(abs(float(centre.mid())), 1e-300)
    count = max(1, min(MAX_SUB_INTERVALS, math.ceil(width / (SUB_WIDTH * scale) - 1e-9)))
    lo, hi = arb(x.lower()), arb(x.upper())
    ends = [lo + (hi - lo) * k / count for k in range(count)] + [hi]
    return [ends[k].union(ends[k + 1]) for k in range(count)]


def taylor_enclosure(compiled, names, balls: dict, centre: dict, free: str, a_b_mid, estimator: str,
                     prec_bits: int, point: bool = False) -> arb:
    """A ball containing the margin on the box (balls) from its Taylor form about ``centre``
    (``point``: the box is a point, the kernels are evaluated there)."""
    n = compiled["form"].order
    pieces = _pieces(*a_b_mid, estimator)
    ns = compiled["namespace"]
    at_c = [centre[k] for k in names]
    on_x = [balls[k] for k in names]
    goal = max(16, min(48, prec_bits - 8))
    if point:
        q = _q_values(compiled, 0, on_x, pieces, goal)
        if not _finite([q]):
            return arb.nan()
        kernels = [k.real for k in ns["kernels_0"](*on_x, *q)]
        return ns["outer"](*on_x, *kernels)[0].real
    q_centre = [_q_values(compiled, 0, at_c, pieces, goal)]
    with ctx.workprec(max(53, prec_bits // 2)):  # the derivatives are multiplied by (X − c)^m: few digits suffice
        q_centre += [_q_values(compiled, m, at_c, pieces, min(goal, _DERIVATIVE_BITS)) for m in range(1, n)]
    if not _finite(q_centre):
        return arb.nan()
    k_centre = [[v.real for v in ns[f"kernels_{j}"](*at_c, *(v for m in range(j + 1) for v in q_centre[m]))]
                for j in range(n)]
    index = names.index(free)
    c = centre[free]
    subs = _sub_intervals(balls[free], c)
    args = [[*on_x[:index], s, *on_x[index + 1:]] for s in subs]
    with ctx.workprec(max(53, prec_bits // 2)):
        q_top = [_q_values(compiled, n, row, pieces, _REMAINDER_BITS) for row in args]
    if not _finite(q_top):
        return arb.nan()
    inside = [i for i, s in enumerate(subs) if s.overlaps(c)]
    first, last = min(inside), max(inside)

    def between(i):  # the sub-intervals that meet hull(c, X_i)
        return range(min(i, first), max(i, last) + 1)

    top_hull = [_union([q_top[j] for j in between(i)]) for i in range(len(subs))]
    d_top = []
    for i, s in enumerate(subs):
        powers = _powers(s - c, n)
        levels = []
        for m in range(n):
            levels.append([sum((q_centre[m + k][v] * powers[k] for k in range(n - m)), arb(0)) +
                           top_hull[i][v] * powers[n - m] for v in range(len(q_centre[m]))])
        levels.append(q_top[i])
        d_top.append([v.real for v in ns[f"kernels_{n}"](*args[i], *(v for level in levels for v in level))])
    if not _finite(d_top):
        return arb.nan()
    result = None
    for i, s in enumerate(subs):
        powers = _powers(s - c, n)
        remainder = _union([d_top[j] for j in between(i)])
        kernels = [sum((k_centre[j][v] * powers[j] for j in range(n)), arb(0)) + remainder[v] * powers[n]
                   for v in range(len(remainder))]
        value = ns["outer"](*args[i], *kernels)[0].real
        result = value if result is None else result.union(value)
    return result
