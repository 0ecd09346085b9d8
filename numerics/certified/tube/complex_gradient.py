"""∇L enclosed in Arb over complex rectangles of (a, b): the reference the tube's ellipse bound rests on.

∂L/∂a, ∂L/∂b = ∫₀¹ e·∂e/∂(a, b) dθ with the generated Arb integrands evaluated at complex (a, b, θ) in
``analytic`` mode, by ``acb.integral`` on the breakpoint pieces of the real midpoint: a finite result means
the integrand is holomorphic in (a, b) over the rectangles (docs/certified_flow.md, the Bernstein ellipse).
Used by :mod:`stumpcheck.numerics.certified.tube.analytic` and, as the fallback of the fast layer, by
:mod:`stumpcheck.numerics.certified.tube.arithmetic`.
"""

from __future__ import annotations

from flint import acb, arb, ctx

from stumpcheck.numerics.certified.enclosures.theta_integrals import _pieces
from stumpcheck.numerics.generated import population_arb as gen_arb

__all__ = ["complex_gradient"]

#: the relative tolerance of the crude integrals (their balls are wide anyway: wide parameter rectangles)
_TOLERANCE_BITS = 8


def complex_gradient(a: acb, b: acb) -> tuple[acb, acb]:
    """Balls containing (∂L/∂a, ∂L/∂b) at every (a, b) in the complex rectangles a × b (see the module doc);
    ArithmeticError if an enclosure is not finite. At the current working precision."""
    a, b = acb(a), acb(b)
    if not (b.real > 0):
        raise ArithmeticError("the rectangle of b reaches Re b <= 0")
    bits = ctx.prec
    ends = _pieces(arb(a.real.mid()), arb(b.real.mid()), "one-head", bits)
    error, gradient = gen_arb.error_one_head, gen_arb.error_gradient_one_head
    values = {}

    def products(t):
        # both components' integrals visit mostly the same θ-balls: compute e·∇e there once
        key = (t.real.mid().man_exp(), t.real.rad().man_exp(), t.imag.mid().man_exp(), t.imag.rad().man_exp())
        if key not in values:
            e = error(a, b, t, True)
            values[key] = tuple(e * g for g in gradient(a, b, t, True))
        return values[key]

    out = []
    for component in (0, 1):
        def integrand(t, analytic, k=component):
            return products(t)[k]

        total = acb(0)
        for lo, hi in zip(ends, ends[1:]):
            part = acb.integral(integrand, lo, hi, rel_tol=arb(2) ** -_TOLERANCE_BITS, abs_tol=arb(2) ** -(bits // 2))
            if not part.is_finite():
                raise ArithmeticError(f"∇L is not finite on the complex box a = {a.str(3)}, b = {b.str(3)}")
            total += part
        out.append(total)
    return out[0], out[1]
