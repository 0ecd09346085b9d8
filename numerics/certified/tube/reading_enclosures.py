"""C2–C4 from the certified tube, part 2: rigorous enclosures over a box of states, and of least-squares slopes.

Every function here takes a box [a_lo, a_hi] × [b_lo, b_hi] (exact rationals; z(τ) lies in it) and returns
an Arb ball containing the quantity at every state of the box, evaluated in the form that overestimates
least; the working precision is the caller's ``flint.ctx.prec`` (:data:`PRECISION_BITS` in the callers).

* **Calibration residual** λ = a − g(b), g(b) = b + 2 log b − ρ₁/b = calibration_a(b) (docs/model.md §6.2).
  ρ₁ is read from the derived relation (:func:`stumpcheck.theory.margin_quantities.relation_expression`), whose form
  is checked to be b + 2 log b − ρ₁/b, and evaluated exactly in Arb (π, ζ(3), rationals). g is increasing
  for b > 0 (g' = 1 + 2/b + ρ₁/b² > 0 as ρ₁ > 0, checked), so the range of λ over the box is exactly
  [a_lo − g(b_hi), a_hi − g(b_lo)]: no dependency loss. The same for a − (b + 2 log b) (the relation
  without its ρ₁/b term).
* **Scale ratio** b⁴/(2t) at τ ∈ [t_lo, t_hi]: [b_lo⁴/(2t_hi), b_hi⁴/(2t_lo)] (exact rationals).
* **Interior error** sup over θ ∈ [δ, 1 − δ] of |e(θ)|, e the generated Arb error
  (:func:`stumpcheck.numerics.certified.enclosures.pointwise.error_ball`, balls in a, b and θ): branch and bound over θ. An
  upper bound is the largest |e| ball over θ-pieces covering [δ, 1 − δ] (every state of the box); a lower
  bound the largest lower end of |e| at δ, 1 − δ and the pieces' midpoints over the box (for the true
  state, sup ≥ that).
  Over a piece, e is the tighter of its ball over the piece and the mean-value form in θ with
  ∂e/∂θ = q·e − 1 (:func:`error_theta_derivative`, from the definition), and in (a, b) with the generated
  gradient: the overestimate is second order in the widths, which matters in the flat bulk (|e| ≈ 1/b).
  Where the ball of ∂e/∂θ over the piece excludes 0, e is monotone in θ there for every state of the box,
  so its values over the piece lie in the union of its balls at the piece's two ends (no width lost).
  Pieces whose upper end is above the best lower bound are bisected until the two are within ``rel_tol``
  or the evaluation budget is spent, or the upper end stalls (300 evaluations lowering it by less than
  ``rel_tol``: the box's width limits it): [lower, upper] is always an enclosure; the stops set its width.
* **Least-squares slope** of y on x over points (x_i, y_i) known as balls: slope = Σ w_i y_i with
  w_i = (x_i − x̄)/Σ_j (x_j − x̄)², a linear function of the y's, so with exact or narrow x the ball
  Σ W_i·Y_i is the exact range of the slope over the y balls up to the width of the W_i (Arb encloses
  the w_i over the x balls). A certified figure of the fit over the points, not an asymptotic exponent.
"""

from __future__ import annotations

import heapq
import itertools
from fractions import Fraction
from functools import cache

import sympy as sp
from flint import arb, fmpq

from stumpcheck.numerics.certified.enclosures.balls import sympy_constant_ball
from stumpcheck.numerics.precision import InputError

__all__ = ["PRECISION_BITS", "rho1_expression", "rho1_ball", "exact_ball", "calibration_residual",
           "error_theta_derivative",
           "residual_without_rho1", "scale_ratio", "interior_error_sup", "ols_slope", "ols_slope_float"]

#: the working precision of the readings (the boxes' rationals have ~15 significant digits)
PRECISION_BITS = 128
#: the sup search stops when this many evaluations lowered its upper end by less than rel_tol (relative)
_STALL_EVALUATIONS = 300


@cache
def rho1_expression() -> sp.Expr:
    """ρ₁ from the derived calibration relation a = calibration_a(b), checked to be b + 2 log b − ρ₁/b."""
    from stumpcheck.theory.margin_quantities import relation_expression
    from stumpcheck.theory.symbols import b

    relation = relation_expression("calibration_a")
    rho1 = sp.simplify((b + 2 * sp.log(b) - relation) * b)
    if rho1.free_symbols or sp.simplify(relation - (b + 2 * sp.log(b) - rho1 / b)) != 0:
        raise ArithmeticError(f"the derived calibration relation is not b + 2 log b - rho1/b: {relation}")
    return rho1


def rho1_ball() -> arb:
    """ρ₁ = −3ζ(3) + 3/2 + π²/3 (as derived) as a ball; ArithmeticError unless it is certainly > 0."""
    value = sympy_constant_ball(rho1_expression())
    if not value > 0:
        raise ArithmeticError("rho1 is not certainly positive: the monotone form of the residual does not apply")
    return value


def exact_ball(x) -> arb:
    """An exact rational (Fraction or int) as an Arb ball (exact when dyadic, else a tight ball)."""
    x = Fraction(x)
    return arb(fmpq(x.numerator, x.denominator))


def _g(b: Fraction, rho1: arb | None) -> arb:
    ball = exact_ball(b)
    value = ball + 2 * ball.log()
    return value if rho1 is None else value - rho1 / ball


def calibration_residual(box) -> arb:
    """λ = a − calibration_a(b) over the box (a_lo, a_hi, b_lo, b_hi): [a_lo − g(b_hi), a_hi − g(b_lo)]."""
    a_lo, a_hi, b_lo, b_hi = box
    rho1 = rho1_ball()
    return (exact_ball(a_lo) - _g(b_hi, rho1)).union(exact_ball(a_hi) - _g(b_lo, rho1))


def residual_without_rho1(box) -> arb:
    """a − (b + 2 log b) over the box (increasing in a, decreasing in b)."""
    a_lo, a_hi, b_lo, b_hi = box
    return (exact_ball(a_lo) - _g(b_hi, None)).union(exact_ball(a_hi) - _g(b_lo, None))


def scale_ratio(t_lo, t_hi, b_lo, b_hi) -> arb:
    """b⁴/(2t) for every t ∈ [t_lo, t_hi] (t_lo > 0) and b ∈ [b_lo, b_hi] (b_lo > 0)."""
    if not 0 < t_lo <= t_hi:
        raise InputError("b^4/(2t) needs t > 0")
    lo = Fraction(b_lo) ** 4 / (2 * Fraction(t_hi))
    hi = Fraction(b_hi) ** 4 / (2 * Fraction(t_lo))
    return exact_ball(lo).union(exact_ball(hi))


def _error_enclosure(a: arb, b: arb, a_mid: arb, b_mid: arb, theta: arb) -> arb:
    """A ball of e(θ) for every (a, b) in the balls a, b and θ in the ball θ: the direct evaluation
    intersected with the mean-value form in (a, b), e(a_m, b_m, θ) + ∂_a e(A, B, θ)(A − a_m) +
    ∂_b e(A, B, θ)(B − b_m) (both enclose e; the second loses only second-order terms to the dependency
    between a and b in the closed form)."""
    from stumpcheck.numerics.generated import population_arb as gen_arb

    _, da, db = gen_arb.error_and_gradient_one_head(a, b, theta)
    centre = gen_arb.error_one_head(a_mid, b_mid, theta).real
    direct = gen_arb.error_one_head(a, b, theta).real
    mean_value = centre + da.real * (a - a_mid) + db.real * (b - b_mid)
    if not mean_value.is_finite():
        return direct
    if not direct.is_finite():
        return mean_value
    return direct.intersection(mean_value)


def error_theta_derivative(a: arb, b: arb, theta: arb, error: arb) -> arb:
    """∂e/∂θ = q·e − 1 with q = b(e^a − 1)/(expm1(bθ) − e^a·expm1(−b(1 − θ))), given a ball ``error`` of
    e over the same balls.

    From the definition: θ̂ = N/D with N = ∫₀^θ x e^{−bx}dx + e^a ∫_θ^1 x e^{−bx}dx and D the same without
    x; by Leibniz' rule N' = (1 − e^a)θe^{−bθ} and D' = (1 − e^a)e^{−bθ}, so θ̂' = (N'D − ND')/D² =
    (e^a − 1)e^{−bθ}(θ̂ − θ)/D, and q = (e^a − 1)e^{−bθ}/D, D = [expm1(bθ) − e^a expm1(−b(1 − θ))]e^{−bθ}/b
    (both terms of the bracket ≥ 0: no cancellation). Checked against a numerical derivative of the
    generated e in tests/test_tube_claims.py."""
    q = b * (a.exp() - 1) / ((b * theta).expm1() - a.exp() * (-b * (1 - theta)).expm1())
    return q * error - 1


def _piece_enclosure(a: arb, b: arb, a_mid: arb, b_mid: arb, left: arb, right: arb) -> arb:
    """e over the box × the θ-piece [left, right]: the (a, b)-enclosure over the piece intersected with the
    mean-value form in θ, e(·, θ_m) + ∂_θ e(·, piece)·(piece − θ_m) (second order in the piece's width)."""
    piece = left.union(right)
    middle = ((left + right) / 2).mid()
    over = _error_enclosure(a, b, a_mid, b_mid, piece)
    if not over.is_finite():
        return over
    slope = error_theta_derivative(a, b, piece, over)
    mean_value = _error_enclosure(a, b, a_mid, b_mid, middle) + slope * (piece - middle)
    if mean_value.is_finite():
        over = over.intersection(mean_value)
    if slope.is_finite() and not slope.contains(0):
        # e is monotone in θ on the piece for every state of the box: its values lie between those at the ends
        ends = _error_enclosure(a, b, a_mid, b_mid, left).union(_error_enclosure(a, b, a_mid, b_mid, right))
        if ends.is_finite():
            over = over.intersection(ends)
    return over


def interior_error_sup(box, *, delta: Fraction = Fraction(1, 20), rel_tol: float = 1e-3, pieces: int = 16,
                       max_evaluations: int = 2000) -> tuple[arb, dict]:
    """sup over θ ∈ [δ, 1 − δ] of |e(θ)| (one head) for every state of the box, as a ball [lower, upper]
    (module doc); and the search's counts (evaluations, pieces, the θ of the best lower bound)."""
    a_lo, a_hi, b_lo, b_hi = box
    a = exact_ball(a_lo).union(exact_ball(a_hi))
    b = exact_ball(b_lo).union(exact_ball(b_hi))
    a_mid, b_mid = a.mid(), b.mid()
    counter = itertools.count()
    evaluations = 0

    def enclose(theta: arb) -> arb:
        nonlocal evaluations
        evaluations += 1
        return _error_enclosure(a, b, a_mid, b_mid, theta)

    def upper_of(left: arb, right: arb) -> arb:
        nonlocal evaluations
        evaluations += 1
        value = _piece_enclosure(a, b, a_mid, b_mid, left, right)
        if not value.is_finite():
            raise ArithmeticError(f"the error ball over theta in [{float(left):.6g}, {float(right):.6g}] "
                                  "is not finite")
        return abs(value).upper()

    lo, hi = exact_ball(delta), exact_ball(1 - Fraction(delta))
    # exact interior ends (midpoints); the first and last are the balls of δ and 1 − δ (the unions cover them)
    ends = [lo] + [(lo + (hi - lo) * arb(fmpq(i, pieces))).mid() for i in range(1, pieces)] + [hi]
    best, best_theta = arb(0), None
    heap = []

    def push(left, right):
        nonlocal best, best_theta
        middle = ((left + right) / 2).mid()
        value = enclose(middle)
        if value.is_finite() and abs(value).lower() > best:
            best, best_theta = abs(value).lower(), middle
        upper = upper_of(left, right)
        heapq.heappush(heap, (-float(upper), next(counter), left, right, upper))

    for end in (lo, hi):  # the sup is often at an end (|e| grows towards the layers): they bound it from below
        value = enclose(end)
        if value.is_finite() and abs(value).lower() > best:
            best, best_theta = abs(value).lower(), end
    for left, right in zip(ends, ends[1:]):
        push(left, right)
    checkpoint, top_then = evaluations, -heap[0][0]
    while evaluations < max_evaluations and -heap[0][0] > float(best) * (1 + rel_tol):
        if evaluations - checkpoint >= _STALL_EVALUATIONS:
            # stalled: the box's width, not the θ-pieces, limits the upper end (a wide box); stop early
            if top_then - -heap[0][0] < float(best) * rel_tol:
                break
            checkpoint, top_then = evaluations, -heap[0][0]
        _, _, left, right, _ = heapq.heappop(heap)
        middle = ((left + right) / 2).mid()
        push(left, middle)
        push(middle, right)
    upper_end = arb(0)
    for item in heap:  # the largest upper end, exactly (the float keys only ordered the search)
        upper_end = upper_end.max(item[4])
    return best.union(upper_end), {"evaluations": evaluations, "pieces": len(heap),
                                   "theta_of_lower": None if best_theta is None else float(best_theta)}


def ols_slope(xs, ys) -> arb:
    """The least-squares slope of y on x (balls; at least 2 distinct x) as a ball (module doc)."""
    if len(xs) != len(ys) or len(xs) < 2:
        raise InputError("a least-squares slope needs at least 2 points")
    n = len(xs)
    mean = sum(xs, arb(0)) / n
    centred = [x - mean for x in xs]
    spread = sum((c * c for c in centred), arb(0))
    if not spread > 0:
        raise InputError("a least-squares slope needs distinct x values")
    return sum((c * y for c, y in zip(centred, ys)), arb(0)) / spread


def ols_slope_float(xs, ys) -> float:
    """The same slope of the floats (the midpoints' fit, for comparison)."""
    n = len(xs)
    mean_x, mean_y = sum(xs) / n, sum(ys) / n
    return sum((x - mean_x) * (y - mean_y) for x, y in zip(xs, ys)) / sum((x - mean_x) ** 2 for x in xs)
