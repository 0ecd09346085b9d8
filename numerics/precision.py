"""Precision handling: validated digit counts, exact parsing, scoped precision.

mpmath's precision is global state; every function here that raises it does so
inside ``mpmath.workdps``/``workprec`` blocks, which restore it on exit, even on
error (mpmath's own design).
"""

from __future__ import annotations

import math
from decimal import Decimal, InvalidOperation

from stumpcheck.theory.errors import InputError

__all__ = ["MIN_DPS", "MAX_DPS", "InputError", "validate_dps", "parse_decimal", "finite_float", "guard_bits",
           "agreeing_digits"]

MIN_DPS = 15
MAX_DPS = 10_000


def validate_dps(dps) -> int:
    """Return ``dps`` as an int after checking MIN_DPS ≤ dps ≤ MAX_DPS."""
    # ASCII digits only: str.isdigit and int() also take other scripts' digits ("３０", "٣٠")
    if isinstance(dps, bool) or not isinstance(dps, (int,)) and not (isinstance(dps, str) and dps.strip().isascii()
                                                                     and dps.strip().isdigit()):
        raise InputError(f"precision must be an integer number of digits, got {dps!r:.60}")
    if isinstance(dps, str) and len(dps.strip().lstrip("0")) > 6:  # int() of a huge digit string is refused
        raise InputError(f"precision {dps.strip()[:20]}... digits is outside [{MIN_DPS}, {MAX_DPS}]")
    value = int(dps)
    if not MIN_DPS <= value <= MAX_DPS:
        raise InputError(f"precision {value} digits is outside [{MIN_DPS}, {MAX_DPS}]")
    return value


def parse_decimal(text, name: str) -> Decimal:
    """Parse a decimal string exactly (no detour through float); reject NaN and infinities, and digits other than
    ASCII (``Decimal`` reads "３０" as 30: a number a reader of the command line would not see as one)."""
    if not str(text).isascii():
        raise InputError(f"{name} must be a decimal number written in ASCII digits, got {str(text)[:40]!r}")
    try:
        value = Decimal(str(text).strip())
    except InvalidOperation:
        raise InputError(f"{name} must be a decimal number, got {text!r}") from None
    if not value.is_finite():
        raise InputError(f"{name} must be finite, got {text!r}")
    return value


def finite_float(value, name: str, *, positive: bool = False) -> float:
    """``value`` as a finite float (and > 0 when ``positive``), else :class:`InputError` naming ``name``."""
    if isinstance(value, bool):
        raise InputError(f"{name} must be a real number, got {value!r}")
    try:
        number = float(value)
    except (TypeError, ValueError):
        raise InputError(f"{name} must be a real number, got {value!r}") from None
    if not math.isfinite(number):
        raise InputError(f"{name} must be finite, got {value!r}")
    if positive and not number > 0:
        raise InputError(f"{name} must be > 0, got {value!r}")
    return number


def guard_bits(dps: int) -> int:
    """Extra working bits used on top of ``dps`` digits: 10% plus 20 bits."""
    return 20 + math.ceil(0.1 * dps * math.log2(10))


def agreeing_digits(x, y) -> float:
    """−log₁₀(|x − y| / |y|): how many significant digits two evaluations share."""
    import mpmath  # here, so that the command line's help and input errors do not load it

    x, y = mpmath.mpf(x), mpmath.mpf(y)
    if x == y:
        return math.inf
    scale = abs(y) if y != 0 else abs(x)
    return float(-mpmath.log10(abs(x - y) / scale))
