"""The Taylor form of a θ-integral margin with its θ-integrals enclosed in float64 intervals instead of Arb.

The form of :mod:`stumpcheck.numerics.certified.proofs.margin_taylor`, K(x) ∈ Σ_{j<n} K^{(j)}(c)(X_i − c)^j/j! + K^{(n)}(hull(c, X_i))(X_i − c)^n/n!, assembled by
:func:`~stumpcheck.numerics.certified.proofs.margin_taylor.assemble` in Arb from balls that contain the
integrals Q^{(m)} = ∫₀¹ ∂_x^m q dθ (x the free variable b; every other variable a point or a ball Y):

* **Q^{(0)}(c, Y)**, the integrals L, L_a, L_b themselves at a = a(c, y), b = c for every y ∈ Y: the
  Gauss–Legendre enclosure over the (a, b) box A × {c}
  (:func:`stumpcheck.numerics.certified.fast.theta_integrals.loss_gradient_enclosure_counted`), A an
  enclosure of the coordinates' a over Y (it contains every a(c, y)), about 10⁻¹³ relative at a point;
* **Q^{(n)}(X_i, Y)** (the remainder), and **Q^{(m)}(c, Y)**, 0 < m < n, when Y is not a point: the generated
  integrands ``integrands_m`` translated to float64 intervals and summed to first order over θ-pieces
  (:func:`stumpcheck.numerics.certified.fast.generated_integrands.first_order_integrals`): an enclosure for
  every point of the argument intervals;
* **Q^{(m)}(c, y)**, 0 < m < n, at a point y, by differences of F(x) = Q^{(0)}(x, y) (Gauss–Legendre values
  at c and c ± δ, δ a power of two) with Taylor's remainder through the top integral over B = [c − δ, c + δ]
  (Z = Q^{(n)}(B, y), an enclosure of F^{(n)} on B):

      n = 2:  F′(c) ∈ (F(c + δ) − F(c − δ))/(2δ) + (δ/4)·(Z − Z),
      n = 3:  F′(c) ∈ (F(c + δ) − F(c − δ))/(2δ) − (δ²/6)·Z,
              F″(c) ∈ (F(c + δ) − 2F(c) + F(c − δ))/δ² − (δ/6)·(Z − Z),

  from F(c ± δ) = Σ_{j<n} F^{(j)}(c)(±δ)^j/j! + F^{(n)}(ξ±)(±δ)^n/n! with ξ± ∈ B (Z − Z, in ball arithmetic,
  contains every difference of two values in Z).

Anything the translation does not cover, an estimator other than one-head, integrals other than L, L_a,
L_b at order 0, an order other than 2 or 3, or a non-finite result gives ``None``: the caller encloses the
box in Arb instead (a fallback it counts). The assembly and the outer expression are Arb, at the caller's
precision. Assumptions of the float64 parts: :data:`stumpcheck.numerics.certified.fast.rounding.ASSUMPTIONS`.
"""

from __future__ import annotations

import math

from flint import arb

from stumpcheck.numerics.certified.proofs.margin_taylor import assemble, sub_intervals

__all__ = ["taylor_enclosure_fast", "point_enclosure_fast", "REMAINDER_GOAL", "DERIVATIVE_GOAL"]

#: relative goal and most sub-boxes a θ-piece of the first-order sums of the remainder integrals, and of the
#: top integral Z of the differences (they are multiplied by (X − c)^n: a few bits suffice; measured on the
#: built-in lemmas and the region, a tighter goal gives the same leaves at twice the time)
REMAINDER_GOAL, REMAINDER_SUBDIVISIONS = 2.0 ** -4, 32
#: the same for the centre derivatives over a parameter ball (they decide the drift obligations of the region)
DERIVATIVE_GOAL, DERIVATIVE_SUBDIVISIONS = 2.0 ** -10, 256
#: δ = 2^-k·c for the differences at a point, by Taylor order
_DELTA_BITS = {2: 19, 3: 17}
_BASES = ("L", "L_a", "L_b")


def _interval(ball: arb) -> tuple[float, float]:
    """Doubles lo ≤ hi with [lo, hi] ⊇ the ball (each end one step outward of its conversion)."""
    if not ball.is_finite():
        return -math.inf, math.inf
    lo, hi = float(arb(ball.lower())), float(arb(ball.upper()))
    return math.nextafter(lo, -math.inf), math.nextafter(hi, math.inf)


def _ball(lo: float, hi: float) -> arb:
    if not (math.isfinite(lo) and math.isfinite(hi)):
        return arb.nan()
    return arb(lo).union(arb(hi))


def _bases(compiled) -> list | None:
    names = compiled["integral_names"]
    bases = [name.split("__d")[0] for name in names[0]]
    if any(b not in _BASES for b in bases):
        return None
    for m, level in enumerate(names):
        if [name.split("__d")[0] for name in level] != bases or any(not name.endswith(f"__d{m}") for name in level):
            return None
    return bases


class _Fast:
    """The fast integrals of one Taylor form (compiled once per form and process)."""

    def __init__(self, compiled, names):
        from stumpcheck.numerics.certified.fast.generated_integrands import Unsupported, compile_integrand

        self.bases = _bases(compiled)
        self.kernels = None
        if self.bases is None or compiled["order"] not in _DELTA_BITS:
            return
        try:
            self.kernels = [None] + [compile_integrand(compiled["source"], f"integrands_{m}", tuple(names))
                                     for m in range(1, compiled["order"] + 1)]
        except Unsupported:
            self.kernels = None


_FAST: dict = {}


def _fast(compiled, names) -> _Fast:
    key = (id(compiled), tuple(names))
    if key not in _FAST:
        _FAST[key] = _Fast(compiled, names)
    return _FAST[key]


def _gl(coords, names, rows: list, bases) -> list | None:
    """[[Q^{(0)} ball per base] per row]: at each row of the variables' balls (b a point or a tiny ball), by
    :func:`stumpcheck.numerics.certified.fast.theta_integrals.loss_gradient_points` (nearby rows share the
    remainder bounds); None if any is not finite."""
    from stumpcheck.numerics.certified.fast.theta_integrals import loss_gradient_points

    boxes = []
    for values in rows:
        a_ball, b_ball = (x.real for x in coords(*values))
        a, b = _interval(a_ball), _interval(b_ball)
        if not (math.isfinite(a[0]) and math.isfinite(a[1]) and b[0] > 0 and math.isfinite(b[1])):
            return None
        boxes.append((*a, *b))
    out = loss_gradient_points(boxes)
    result = [[_ball(*row[_BASES.index(base)]) for base in bases] for row in out]
    return result if all(x.is_finite() for level in result for x in level) else None


def _sums(kernel, values: list, pieces, goal: float, subdivisions: int) -> list | None:
    from stumpcheck.numerics.certified.fast.generated_integrands import first_order_integrals

    out, _ = first_order_integrals(kernel, [_interval(v) for v in values], *pieces, goal=goal,
                                   max_subdivisions=subdivisions)
    balls = [_ball(lo, hi) for lo, hi in out]
    return balls if all(x.is_finite() for x in balls) else None


def point_enclosure_fast(compiled, names, balls: dict, estimator: str, coords) -> arb | None:
    """A ball containing the margin at a point (every variable a point or a tiny ball): Q^{(0)} by
    Gauss–Legendre, then the kernels and the outer expression in Arb; None where this does not apply."""
    if estimator != "one-head":
        return None
    bases = _bases(compiled)
    if bases is None:
        return None
    on_x = [balls[k] for k in names]
    q0 = _gl(coords, names, [on_x], bases)
    if q0 is None:
        return None
    q0 = q0[0]
    ns = compiled["namespace"]
    kernels = [k.real for k in ns["kernels_0"](*on_x, *q0)]
    ball = ns["outer"](*on_x, *kernels)[0].real
    return ball if ball.is_finite() else None


def taylor_enclosure_fast(compiled, names, balls: dict, centre: dict, free: str, a_b_mid, estimator: str,
                          coords, at_centre: list | None = None) -> arb | None:
    """A ball containing the margin on the box (as :func:`~stumpcheck.numerics.certified.proofs.margin_taylor.taylor_enclosure`,
    not ``point``), its integrals in float64 intervals (module docstring); None where this does not apply.
    ``coords``: the margin's ball function of the variables giving (a, b). ``at_centre``, a list: when the
    centre is a point, the margin's ball there (from the same Q^{(0)}) is appended to it."""
    from stumpcheck.numerics.certified.fast.theta_integrals import split_pieces

    if estimator != "one-head" or free != "b":
        return None
    fast = _fast(compiled, names)
    if fast.kernels is None:
        return None
    n = compiled["order"]
    index = names.index(free)
    at_c = [centre[k] for k in names]
    on_x = [balls[k] for k in names]
    try:
        pieces = split_pieces(*a_b_mid)
    except (ValueError, OverflowError, ArithmeticError):
        return None
    c = centre[free]
    parameter_balls = any(at_c[i].rad() > 0 for i in range(len(names)) if i != index)
    if parameter_balls:
        q0 = _gl(coords, names, [at_c], fast.bases)
        if q0 is None:
            return None
        q_centre = [q0[0]]
        for m in range(1, n):
            level = _sums(fast.kernels[m], at_c, pieces, DERIVATIVE_GOAL, DERIVATIVE_SUBDIVISIONS)
            if level is None:
                return None
            q_centre.append(level)
    else:
        exponent = int(math.floor(math.log2(float(c.mid())))) - _DELTA_BITS[n]
        delta = arb(2) ** exponent
        with_b = lambda x: [*at_c[:index], x, *at_c[index + 1:]]  # noqa: E731
        values = _gl(coords, names, [at_c, with_b(c + delta), with_b(c - delta)], fast.bases)
        if values is None:
            return None
        q0, f_plus, f_minus = values
        q_centre = [q0]
        if at_centre is not None:
            ns = compiled["namespace"]
            value = ns["outer"](*at_c, *(k.real for k in ns["kernels_0"](*at_c, *q0)))[0].real
            if value.is_finite():
                at_centre.append(value)
        z = _sums(fast.kernels[n], with_b((c - delta).union(c + delta)), pieces, REMAINDER_GOAL,
                  REMAINDER_SUBDIVISIONS)
        if z is None:
            return None
        first = [(p - m) / (2 * delta) for p, m in zip(f_plus, f_minus)]
        if n == 2:
            q_centre.append([f + (delta / 4) * (y - y) for f, y in zip(first, z)])
        else:
            q_centre.append([f - (delta ** 2 / 6) * y for f, y in zip(first, z)])
            q_centre.append([(p - 2 * f0 + m) / delta ** 2 - (delta / 6) * (y - y)
                             for p, f0, m, y in zip(f_plus, q0, f_minus, z)])
    subs = sub_intervals(balls[free], c)
    q_top = []
    for s in subs:
        level = _sums(fast.kernels[n], [*on_x[:index], s, *on_x[index + 1:]], pieces, REMAINDER_GOAL,
                      REMAINDER_SUBDIVISIONS)
        if level is None:
            return None
        q_top.append(level)
    ball = assemble(compiled, names, on_x, at_c, free, q_centre, q_top, subs, c)
    return ball if ball.is_finite() else None
