"""The Taylor form of a θ-integral margin along one variable, enclosed with rigorous θ-integrals.

For a box where one variable x is free (the others fixed, e.g. b on the calibration relation with
lam = 0), :func:`taylor_enclosure` encloses the margin's smooth kernels (:mod:`theory.margin_taylor`)
by their Taylor form of order n about the box's centre c,

    K(X) ⊆ Σ_{j<n} K^{(j)}(c)·(X − c)^j/j! + K^{(n)}(X)·(X − c)^n/n!,

and evaluates the outer expression on the kernels' balls. The θ-integrals Q^{(m)} = ∫₀¹ ∂_x^m q dθ
are enclosed by Arb's rigorous integrator (``acb.integral``; the printed integrands honour its
``analytic`` flag) on the model's breakpoint pieces (:func:`numerics.population.quadrature.
breakpoints_float64`, only a choice of exact binary cuts of [0, 1]): at the point c for j < n,
and with x the ball X for the remainder, where each integrand ball contains ∂_x^m q at every
x ∈ X, so the integral's ball contains Q^{(m)}(x) for every x ∈ X.
"""

from __future__ import annotations

import math
from functools import cache

from flint import acb, arb

from numerics.certified.balls import mpf_to_arb
from numerics.population.quadrature import breakpoints_float64
from theory import margin_quantities as mq
from theory.codegen_margins import margin_function_source
from theory.margin_taylor import taylor_form

__all__ = ["compile_taylor", "taylor_enclosure"]

#: relative tolerance of the θ-integrals (bits): a choice only, the results are rigorous balls
_GOAL_BITS = 56


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


def _integrate(function, args, index: int, pieces, prec_bits: int) -> arb:
    goal = arb(2) ** -min(_GOAL_BITS, prec_bits - 8)

    def integrand(t, analytic):
        return function(*args, t, analytic)[index]

    total = acb(0)
    for lo, hi in zip(pieces, pieces[1:]):
        part = acb.integral(integrand, lo, hi, rel_tol=goal, abs_tol=goal * arb(2) ** -40)
        if not part.is_finite():
            return arb.nan()
        total += part
    return total.real


def _pieces(a_mid: float, b_mid: float, estimator: str) -> list:
    try:
        points = breakpoints_float64(a_mid, b_mid, estimator=estimator, lo=0.0, hi=1.0)
    except (ArithmeticError, ValueError, FloatingPointError):
        points = [0.0, 1.0]
    inner = sorted({float(p) for p in points if 0 < p < 1 and math.isfinite(p)})
    return [arb(0)] + [mpf_to_arb(p) for p in inner] + [arb(1)]


def _q_values(compiled, m: int, args, pieces, prec_bits) -> list:
    function = compiled["namespace"][f"integrands_{m}"]
    return [_integrate(function, args, k, pieces, prec_bits) for k in range(len(compiled["integral_names"][m]))]


def taylor_enclosure(compiled, names, balls: dict, centre: dict, free: str, a_b_mid, estimator: str,
                     prec_bits: int, point: bool = False) -> arb:
    """A ball containing the margin on the box (balls) from its Taylor form about ``centre``
    (``point``: the box is a point, the kernels are evaluated there)."""
    order = compiled["form"].order
    pieces = _pieces(*a_b_mid, estimator)
    ns = compiled["namespace"]
    at_c = [centre[n] for n in names]
    on_x = [balls[n] for n in names]
    if point:
        q = _q_values(compiled, 0, on_x, pieces, prec_bits)
        if not all(v.is_finite() for v in q):
            return arb.nan()
        kernels = [k.real for k in ns["kernels_0"](*on_x, *q)]
        return ns["outer"](*on_x, *kernels)[0].real
    q_centre = [_q_values(compiled, m, at_c, pieces, prec_bits) for m in range(order)]
    q_box = [_q_values(compiled, m, on_x, pieces, prec_bits) for m in range(order + 1)]
    if not all(v.is_finite() for level in q_centre + q_box for v in level):
        return arb.nan()
    delta = balls[free] - centre[free]
    count = len(compiled["form"].kernel_symbols)
    kernels = [arb(0)] * count
    factorial, power = 1, arb(1)
    for j in range(order + 1):
        if j:
            factorial *= j
            power = power * delta  # not delta**j: Arb's power of a ball containing 0 is indeterminate
        values = q_box if j == order else q_centre
        point = on_x if j == order else at_c
        arguments = point + [v for m in range(j + 1) for v in values[m]]
        derivative = ns[f"kernels_{j}"](*arguments)
        for i in range(count):
            kernels[i] += derivative[i].real * power / factorial
    return ns["outer"](*on_x, *kernels)[0].real
