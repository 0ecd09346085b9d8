"""Decimal upper and lower bounds of balls for the tube's records, and their exact reading back.

A bound is recorded as a short decimal string rounded outward from an Arb ball's end (``upper_decimal``
rounds up, ``lower_decimal`` down, to a given number of significant digits, with exact integer
arithmetic on the ball's binary end). Read back, :func:`exact_fraction` is the decimal's exact rational
value and :func:`parse_upper` (:func:`parse_lower`) an exact binary number above (below) it, so a bound
survives the round trip as a bound at any working precision.
"""

from __future__ import annotations

import math
import re
from fractions import Fraction

from flint import arb, fmpq

from stumpcheck.numerics.precision import InputError

__all__ = ["upper_decimal", "lower_decimal", "padded_upper", "exact_fraction", "parse_upper", "parse_lower",
           "arb_fraction", "check_decimal_size", "check_record_sizes", "MAX_DECIMAL_LENGTH", "MAX_DECIMAL_EXPONENT"]

#: the longest recorded decimal read back (the tube writes at most ~25 characters)
MAX_DECIMAL_LENGTH = 100
#: the largest |exponent| of a recorded decimal read back: ``Fraction("1e999999999")`` would build a
#: billion-digit integer, so a hostile file could stall a re-check before any check ran
MAX_DECIMAL_EXPONENT = 1000
_EXPONENT = re.compile(r"[eE]\s*([+-]?\d+)")


def arb_fraction(x: arb) -> Fraction:
    """The exact rational value of an exact arb (radius 0)."""
    man, exp = x.mid().man_exp()
    man, exp = int(man), int(exp)
    return Fraction(man * 2 ** exp) if exp >= 0 else Fraction(man, 2 ** -exp)


def _rounded(value: Fraction, digits: int, up: bool) -> str:
    if value == 0:
        return "0"
    exponent = math.floor(math.log10(abs(value.numerator)) - math.log10(value.denominator))
    shift = digits - 1 - exponent
    scaled = value * Fraction(10) ** shift
    integer = math.ceil(scaled) if up else math.floor(scaled)
    sign, digits_text = ("-", str(-integer)) if integer < 0 else ("", str(integer))
    exponent = len(digits_text) - 1 - shift
    mantissa = digits_text[0] + ("." + digits_text[1:].rstrip("0") if digits_text[1:].rstrip("0") else "")
    return f"{sign}{mantissa}" + (f"e{exponent}" if exponent else "")


def upper_decimal(x: arb, digits: int = 8) -> str:
    """A decimal ≥ every point of the ball x (``digits`` significant digits)."""
    if not x.is_finite():
        raise ArithmeticError("a non-finite ball has no decimal upper bound")
    return _rounded(arb_fraction(x.upper()), digits, True)


def lower_decimal(x: arb, digits: int = 8) -> str:
    """A decimal ≤ every point of the ball x."""
    if not x.is_finite():
        raise ArithmeticError("a non-finite ball has no decimal lower bound")
    return _rounded(arb_fraction(x.lower()), digits, False)


def padded_upper(x: arb, relative: float, digits: int, absolute: float = 0.0) -> str:
    """upper_decimal of x + |x|·relative + absolute (a bound with room for a re-check at another precision)."""
    return upper_decimal(x + abs(x) * arb(relative) + arb(absolute), digits)


def check_decimal_size(text, name: str = "value") -> None:
    """InputError (one line) unless the decimal text is at most ``MAX_DECIMAL_LENGTH`` characters with an
    exponent of at most ``MAX_DECIMAL_EXPONENT`` in absolute value: checked before the text is converted."""
    text = str(text)
    if len(text) > MAX_DECIMAL_LENGTH:
        raise InputError(f"{name} is a decimal of {len(text)} characters, more than the limit "
                         f"{MAX_DECIMAL_LENGTH}: {text[:20]!r}...")
    if text.strip().lstrip("+-").lower().startswith("0x"):  # a float64 hex string: its 'e' is a digit
        return
    match = _EXPONENT.search(text)
    if match is not None and abs(int(match.group(1))) > MAX_DECIMAL_EXPONENT:
        raise InputError(f"{name} has the exponent {match.group(1)[:12]}, beyond the limit "
                         f"±{MAX_DECIMAL_EXPONENT}: {text[:40]!r}")


def check_record_sizes(item, where: str) -> None:
    """:func:`check_decimal_size` on every string or number of a nested record (dicts and lists), before any of
    them is converted; ``where`` names the record in the error."""
    if isinstance(item, dict):
        for key, value in item.items():
            check_record_sizes(value, f"{where}.{key}")
    elif isinstance(item, list):
        for value in item:
            check_record_sizes(value, where)
    elif isinstance(item, (str, int, float)) and not isinstance(item, bool):
        check_decimal_size(item, where)


def exact_fraction(text, name: str = "value") -> Fraction:
    """The exact rational value of a recorded decimal; InputError (one line) if it is not one, or if it is
    longer or has a larger exponent than the limits (:func:`check_decimal_size`)."""
    check_decimal_size(text, name)
    try:
        value = Fraction(str(text))
    except (ValueError, ZeroDivisionError, TypeError):
        raise InputError(f"{name} must be a decimal number, got {str(text)[:40]!r}") from None
    return value


def parse_upper(text, name: str = "value") -> arb:
    """An exact arb ≥ the recorded decimal (at the current working precision)."""
    value = exact_fraction(text, name)
    return arb(fmpq(value.numerator, value.denominator)).upper()


def parse_lower(text, name: str = "value") -> arb:
    """An exact arb ≤ the recorded decimal."""
    value = exact_fraction(text, name)
    return arb(fmpq(value.numerator, value.denominator)).lower()
