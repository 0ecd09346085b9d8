"""Boxes of (a, b, θ) with exact decimal ends, and balls printed as outward-rounded decimals.

A :class:`Box` is a product of closed intervals for a, b and θ, each an exact (lo, hi) pair of
Decimals (b > 0, θ ⊆ [0, 1]); :func:`_outward` turns the ends into exact Arb ends that enclose
them (lo rounded down, hi up, at the working precision), so a proved box contains the requested
one. The printers give ends and ball bounds as decimals rounded outward to a number of
significant digits (lower ends down, upper ends up), and the dyadic θ-cuts of a partition as
their exact finite decimal expansions, so that a certificate's printed boxes and bounds still
contain what was evaluated.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from decimal import ROUND_CEILING, ROUND_FLOOR, Decimal, localcontext
from fractions import Fraction

from flint import arb

from stumpcheck.numerics.precision import InputError, parse_decimal

__all__ = ["Box"]

_DIMS = ("a", "b", "theta")


def _parse_end(value, name: str) -> Decimal:
    if isinstance(value, bool):
        raise InputError(f"{name} must be a real number, got {value!r}")
    if isinstance(value, float):
        if not math.isfinite(value):
            raise InputError(f"{name} must be finite, got {value!r}")
        return Decimal(value)  # exact
    if isinstance(value, int):
        return Decimal(value)
    if isinstance(value, Decimal):
        if not value.is_finite():
            raise InputError(f"{name} must be finite, got {value!r}")
        return value
    if isinstance(value, str):
        return parse_decimal(value, name)
    raise InputError(f"{name} must be a decimal string or a number, got {value!r}")


def _interval(value, name: str) -> tuple[Decimal, Decimal]:
    if isinstance(value, (str, int, float, Decimal)) and not isinstance(value, bool):
        value = (value, value)  # a single number is a degenerate interval
    if not isinstance(value, (tuple, list)) or len(value) != 2:
        raise InputError(f"{name} must be an interval (lo, hi), got {value!r}")
    lo, hi = _parse_end(value[0], f"{name} lo"), _parse_end(value[1], f"{name} hi")
    if not lo <= hi:
        raise InputError(f"{name} interval needs lo <= hi, got [{value[0]}, {value[1]}]")
    return lo, hi


@dataclass(frozen=True)
class Box:
    """Closed intervals for a, b and θ, each an exact (lo, hi) pair of Decimals.

    Built from decimal strings, ints, floats (exact) or Decimals; validated:
    finite, lo ≤ hi, b > 0, 0 ≤ θ ≤ 1. θ defaults to [0, 1].
    """

    a: tuple
    b: tuple
    theta: tuple = ("0", "1")

    def __post_init__(self):
        a, b, theta = _interval(self.a, "a"), _interval(self.b, "b"), _interval(self.theta, "theta")
        if not b[0] > 0:
            raise InputError(f"b must be > 0 (the attention scale), got b lo = {b[0]}")
        if not (theta[0] >= 0 and theta[1] <= 1):
            raise InputError(f"theta must lie in [0, 1], got [{theta[0]}, {theta[1]}]")
        object.__setattr__(self, "a", a)
        object.__setattr__(self, "b", b)
        object.__setattr__(self, "theta", theta)

    def to_dict(self) -> dict:
        return {name: [str(lo), str(hi)] for name, (lo, hi) in zip(_DIMS, (self.a, self.b, self.theta))}

    @classmethod
    def from_dict(cls, data: dict) -> "Box":
        return cls(a=tuple(data["a"]), b=tuple(data["b"]), theta=tuple(data.get("theta", ("0", "1"))))


def _outward(lo: Decimal, hi: Decimal) -> tuple[arb, arb]:
    """Exact arb ends enclosing [lo, hi] at the current flint precision."""
    return arb(arb(str(lo)).lower()), arb(arb(str(hi)).upper())


# ---------------------------------------------------------------------------------------------
# decimal printing (outward)


def _arb_fraction(x: arb) -> Fraction:
    """An exact (radius 0, finite) arb as a Fraction."""
    if x.is_zero():
        return Fraction(0)
    man, exp = x.man_exp()
    man, exp = int(man), int(exp)
    return Fraction(man * 2 ** exp) if exp >= 0 else Fraction(man, 2 ** -exp)


def _decimal(x: arb, digits: int, rounding) -> str:
    """An exact arb printed with ``digits`` significant digits, rounded down (ROUND_FLOOR) or up."""
    if not x.is_finite():
        return "-inf" if rounding == ROUND_FLOOR else "inf"
    frac = _arb_fraction(x)
    with localcontext() as context:
        context.prec, context.rounding = digits, rounding
        context.Emax, context.Emin = 10 ** 9, -10 ** 9
        value = Decimal(frac.numerator) / Decimal(frac.denominator)
    return str(value)


def _exact_decimal(frac: Fraction) -> str:
    """A dyadic rational m/2^k as its exact finite decimal expansion (k digits after the point)."""
    k = 0
    while frac.denominator > 1:   # multiply by 10 until the power of 2 divides out
        frac *= 10
        k += 1
    digits = str(abs(frac.numerator)).rjust(k + 1, "0")
    body = digits if k == 0 else f"{digits[:-k]}.{digits[-k:]}"
    return ("-" if frac < 0 else "") + body


def _ball_bounds(ball: arb, digits: int) -> list[str]:
    """[lower, upper] of a real ball, rounded outward to ``digits`` digits."""
    if not ball.is_finite():
        return ["-inf", "inf"]
    return [_decimal(arb(ball.lower()), digits, ROUND_FLOOR), _decimal(arb(ball.upper()), digits, ROUND_CEILING)]
