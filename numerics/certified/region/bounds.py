"""What the certified region gives for t ≥ T: the entry check, the horizon in t, and bands of b(t)⁴ and b(t)⁴/t.

Hypotheses: the region R of :mod:`stumpcheck.numerics.certified.region.invariant_region` (constants b_T, B, c, d₋, d₊) is
certified, and at a time T the flow's state lies in an entry box A × [β₋, β₊] that lies in R
(:func:`entry_check`: b_T ≤ β₋, β₊ ≤ B and |w| = b·|a − calibration_a(b)| ≤ c at every point of the box,
by Arb). Then z(t) ∈ R for every t ≥ T up to the first time t₁ with b(t₁) = B, and on [T, t₁]

    d(b⁴)/dt = 4b³ḃ = 2·(2b³ḃ) ∈ [2(1 − d₊/b), 2(1 − d₋/b)] ⊆ [2(1 − d₊/b), 2(1 − d₋/B)].

Integrated (b increases, so b(s) ≥ β₋ for s ≥ T):

* (U₁) b(t)⁴ ≤ β₊⁴ + 2(1 − d₋/B)(t − T) =: Y(t);
* (U₂) b(t)⁴ ≤ β₊⁴ + 2(t − T) − (4d₋/3)/(1 − d₋/B)·(Y(t)^{3/4} − β₊³), from 1/b(s) ≥ Y(s)^{−1/4};
* (L₁) b(t)⁴ ≥ β₋⁴ + 2(1 − δ₀)(t − T) =: X(t),  δ₀ = d₊/β₋;
* (L₂) b(t)⁴ ≥ β₋⁴ + 2(t − T) − (4d₊/3)/(1 − δ₀)·(X(t)^{3/4} − β₋³), from 1/b(s) ≤ X(s)^{−1/4} and
  ∫_T^t X(s)^{−1/4} ds = (2/3)(X(t)^{3/4} − β₋³)/(1 − δ₀).

By (U₁) at t₁, the horizon is t₁ ≥ t_B := T + (B⁴ − β₊⁴)/(2(1 − d₋/B)): every bound holds for t ∈ [T, t_B].
Hence b(t)⁴/t ∈ [max(L₁, L₂)/t, min(U₁, U₂)/t] there: both ends approach 2 like t^{−1/4} (L₂, U₂), the band
keeps a width of about (4/3)(d₊ − d₋)(2/t)^{1/4}; nothing is said beyond t_B (b > B is not certified).

All numbers are Arb balls rounded outward to decimals (lower ends down, upper ends up).
"""

from __future__ import annotations

from decimal import ROUND_CEILING, ROUND_FLOOR, Decimal, localcontext
from fractions import Fraction

from flint import arb, ctx, fmpq

from stumpcheck.numerics.certified.enclosures.balls import sympy_constant_ball
from stumpcheck.numerics.certified.proofs.domains import to_fraction
from stumpcheck.numerics.precision import InputError

__all__ = ["entry_check", "horizon", "b4_band", "band_table", "lower_decimal", "upper_decimal"]

_PREC = 200


def _ball(x) -> arb:
    x = Fraction(x)
    return arb(fmpq(x.numerator, x.denominator))


def _decimal(x: arb, digits: int, rounding) -> str:
    """An exact Arb number (a ball's end) as a decimal of ``digits`` significant digits, rounded ``rounding``."""
    if not x.is_finite():
        return "-inf" if rounding == ROUND_FLOOR else "inf"
    man, exp = (int(v) for v in x.man_exp())
    value = Fraction(man * 2**exp) if exp >= 0 else Fraction(man, 2**-exp)
    with localcontext() as context:
        context.prec, context.rounding = digits, rounding
        return str(Decimal(value.numerator) / Decimal(value.denominator))


def lower_decimal(ball: arb, digits: int = 12) -> str:
    """The ball's lower end rounded down to ``digits`` significant decimal digits."""
    return _decimal(arb(ball.lower()), digits, ROUND_FLOOR)


def upper_decimal(ball: arb, digits: int = 12) -> str:
    """The ball's upper end rounded up to ``digits`` significant decimal digits."""
    return _decimal(arb(ball.upper()), digits, ROUND_CEILING)


def _outward(ball: arb, digits: int = 12) -> list[str]:
    """[lower, upper] as decimals of ``digits`` significant digits that contain the ball."""
    return [lower_decimal(ball, digits), upper_decimal(ball, digits)]


def _calibration(b: arb) -> arb:
    """calibration_a(b) = b + 2 log b − ρ₁/b, ρ₁ = −3ζ(3) + 3/2 + π²/3 (the derived relation, as a ball)."""
    from stumpcheck.theory import margin_quantities as mq
    from stumpcheck.theory.symbols import b as b_symbol

    expression = mq.relation_expression("calibration_a")
    rho = _constant_ball(_rho1(expression, b_symbol))
    return b + 2 * b.log() - rho / b


def _rho1(expression, b_symbol):
    """ρ₁ of the derived relation a = b + 2 log b − ρ₁/b (checked: the relation has exactly that shape)."""
    import sympy as sp

    rest = sp.expand(expression - b_symbol - 2 * sp.log(b_symbol))
    rho = sp.simplify(-rest * b_symbol)
    if rho.free_symbols:
        raise InputError("the derived calibration relation is not b + 2 log b − ρ₁/b")
    return rho


def _constant_ball(constant) -> arb:
    """A ball containing a SymPy constant built from rationals, ζ(3) and π."""
    try:
        return sympy_constant_ball(constant)
    except ArithmeticError:
        raise InputError(f"cannot enclose the constant {constant}") from None


def entry_check(region, box: dict) -> dict:
    """Whether the box {"a": (lo, hi), "b": (lo, hi)} (exact decimals) lies in the region R, by Arb.

    Returns {"inside": bool, "w": [lower, upper] (outward decimals of b·(a − calibration_a(b)) over the box),
    "room": [the w-room c − max|w| down to 6 digits, the b-room β₋ − b_T], "reason": None or why not}."""
    try:
        (a_lo, a_hi), (b_lo, b_hi) = ((to_fraction(x, f"{n} end") for x in box[n]) for n in ("a", "b"))
    except (KeyError, TypeError, ValueError):
        raise InputError("an entry box needs 'a' and 'b' intervals (lo, hi)") from None
    if not (a_lo <= a_hi and b_lo <= b_hi):
        raise InputError("an entry box needs lo <= hi in a and b")
    reason = None
    if b_lo < region.b_start or b_hi > region.b_max:
        reason = f"b ∈ [{float(b_lo)}, {float(b_hi)}] is not within the region's b range"
    with ctx.workprec(_PREC):
        if b_lo <= 0:
            raise InputError("an entry box needs b > 0")
        a = _ball(a_lo).union(_ball(a_hi))
        b = _ball(b_lo).union(_ball(b_hi))
        w = b * (a - _calibration(b))
        c = _ball(region.c)
        if reason is None and not (w >= -c and w <= c):
            reason = f"w = b·(a − calibration_a(b)) ∈ {_outward(w, 8)} is not certainly within [−c, c]"
        room = c - abs(w)
    return {"inside": reason is None, "w": _outward(w, 10), "room_w": lower_decimal(room, 6),
            "room_b": str(float(b_lo - region.b_start)), "reason": reason}


def horizon(region, t_entry, beta_hi) -> arb:
    """t_B = T + (B⁴ − β₊⁴)/(2(1 − d₋/B)): a time up to which b(t) ≤ B is certain (a ball)."""
    with ctx.workprec(_PREC):
        b_max = _ball(region.b_max)
        return _ball(t_entry) + (b_max**4 - _ball(beta_hi) ** 4) / (2 * (1 - _ball(region.d_minus) / b_max))


def b4_band(region, t_entry, beta_lo, beta_hi, t) -> dict:
    """Bands of b(t)⁴ and b(t)⁴/t at time t ∈ [T, t_B] from b(T) ∈ [β₋, β₊] (see the module doc).

    Returns {"t", "b4": [lower, upper], "b4_over_t": [lower, upper], "minus_2_scaled": t^{1/4}·(b⁴/t − 2) as
    [lower, upper], "lower_from": "L1" or "L2", "upper_from": "U1" or "U2"} (outward decimals); InputError for t outside [T, t_B]."""
    t_entry, beta_lo, beta_hi, t = (to_fraction(x, n) for x, n in
                                    ((t_entry, "T"), (beta_lo, "β₋"), (beta_hi, "β₊"), (t, "t")))
    if not (region.b_start <= beta_lo <= beta_hi <= region.b_max):
        raise InputError("the entry's b range must lie in the region's [b_start, b_max]")
    with ctx.workprec(_PREC):
        t_b = horizon(region, t_entry, beta_hi)
        if t < t_entry or not _ball(t) <= t_b:
            raise InputError(f"t must lie in [T, t_B] = [{float(t_entry):g}, {lower_decimal(t_b, 6)}], got {float(t):g}")
        bl, bh, d_minus, d_plus = (_ball(x) for x in (beta_lo, beta_hi, region.d_minus, region.d_plus))
        elapsed = _ball(t - t_entry)
        shrink = 1 - d_minus / _ball(region.b_max)
        upper_1 = bh**4 + 2 * shrink * elapsed
        upper_2 = bh**4 + 2 * elapsed - (4 * d_minus / 3) / shrink * (upper_1 ** (arb(3) / 4) - bh**3)
        upper = upper_2 if upper_2.upper() < upper_1.upper() else upper_1
        delta0 = d_plus / bl
        lower_1 = bl**4 + 2 * (1 - delta0) * elapsed
        lower_2 = bl**4 + 2 * elapsed - (4 * d_plus / 3) / (1 - delta0) * (lower_1 ** (arb(3) / 4) - bl**3)
        use_2 = lower_2.lower() > lower_1.lower()
        lower = lower_2 if use_2 else lower_1
        band = arb(lower.lower()).union(arb(upper.upper()))
        over_t = band / _ball(t) if t > 0 else arb.nan()
        scaled = (over_t - 2) * _ball(t) ** (arb(1) / 4) if t > 0 else arb.nan()
    return {"t": float(t), "b4": [lower_decimal(lower), upper_decimal(upper)], "b4_over_t": _outward(over_t, 10),
            "minus_2_scaled": _outward(scaled, 6), "lower_from": "L2" if use_2 else "L1",
            "upper_from": "U2" if upper is upper_2 else "U1"}


def band_table(region, t_entry, beta_lo, beta_hi, times) -> list[dict]:
    """:func:`b4_band` at each of ``times`` that lies in [T, t_B] (the others are left out)."""
    with ctx.workprec(_PREC):
        t_b = horizon(region, t_entry, beta_hi)
    out = []
    for t in times:
        t = to_fraction(t, "t")
        if t >= to_fraction(t_entry, "T") and _ball(t) <= t_b:
            out.append(b4_band(region, t_entry, beta_lo, beta_hi, t))
    return out
