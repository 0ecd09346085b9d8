"""The digits a flow earns: the decimals its two solves agree on, rounded, with the error estimate beside them.

A flow is solved twice, at rtol and at rtol/10 (:mod:`stumpcheck.numerics.flow.engine`). For a final value x
(the rtol solve) and y (the rtol/10 solve), the error estimate E is |x − y| or, if larger, the largest relative
difference of the two solves over the trajectory times |y| (:func:`~stumpcheck.numerics.flow.engine.checked_solve`),
and the value is printed to
the n significant digits, n ≤ ``limit``, that

* both solves round to: x and y rounded to n significant digits give the same decimal, and
* the estimate supports with a margin: :data:`SAFETY`·E ≤ ½·10^(k − n + 1), k = ⌊log₁₀|y|⌋, half a unit in
  the last printed place.

Then the printed decimal p is within ½ unit of y, and y within E/10 of x: if the exact value is within
10·E of the solves (the premise, with a factor 10 to spare: a tighter solve's error need not be ten times
smaller), it is within one unit of the last printed place, and rounds to p unless it lies within 10·E of a
rounding boundary. The estimate is an estimate, not a bound (docs/model.md §4.1); the certified tube
(:func:`stumpcheck.numerics.certified.tube.flow_enclosures.certified_flow`) gives enclosures.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import mpmath

__all__ = ["EarnedValue", "earned_value", "rounded_decimal", "SAFETY"]

#: The margin between the error estimate and half a unit of the last printed digit. Measured: LSODA from
#: (10, 10) to 10⁶ at rtol 10⁻¹⁰ estimates a(10⁶) to 3.3·10⁻¹⁰ while it is 3.9·10⁻¹⁰ off the 36-digit value,
#: which lies 5·10⁻¹¹ from a rounding boundary of the 11th digit: with a margin of one that digit was printed
#: wrong. An estimate can be short by a factor of a few.
SAFETY = 10


def rounded_decimal(x, digits: int) -> str:
    """x rounded to ``digits`` significant digits, as a plain decimal string (no exponent; mpmath's rounding)."""
    with mpmath.workprec(max(mpmath.mp.prec, int(digits * 3.33) + 20)):
        text = mpmath.nstr(mpmath.mpf(x), digits, min_fixed=-math.inf, max_fixed=math.inf, strip_zeros=False)
    return text[:-1] if text.endswith(".") else text


@dataclass(frozen=True)
class EarnedValue:
    """A final value printed to the digits its two solves earn (module docstring).

    ``text``: the decimal (``digits`` significant digits, "" when none is earned); ``error``: the estimate
    E = |x − y|, as a float; ``digits``: n.
    """

    text: str
    error: float
    digits: int

    def __str__(self) -> str:
        return f"{self.text or '?'} (estimated error {self.error:.1e})"


def earned_value(x, y, limit: int, *, error: float = 0.0) -> EarnedValue:
    """The :class:`EarnedValue` of ``x`` (the rtol solve) checked by ``y`` (the rtol/10 solve), at most ``limit``
    significant digits (what the solves' shared field supports); the estimate E is the larger of |x − y| and
    ``error`` (another estimate of the same error, e.g. from the whole trajectory)."""
    with mpmath.workprec(max(mpmath.mp.prec, int(limit * 3.33) + 30)):
        x, y = mpmath.mpf(x), mpmath.mpf(y)
        error = max(abs(x - y), mpmath.mpf(error))
        if not (mpmath.isfinite(x) and mpmath.isfinite(y)) or y == 0:
            return EarnedValue("", float(error) if mpmath.isfinite(error) else math.nan, 0)
        exponent = int(mpmath.floor(mpmath.log10(abs(y))))
        digits = 0
        for n in range(1, limit + 1):
            half_unit = mpmath.mpf(10) ** (exponent - n + 1) / 2
            if SAFETY * error > half_unit or rounded_decimal(x, n) != rounded_decimal(y, n):
                break
            digits = n
        return EarnedValue(rounded_decimal(y, digits) if digits else "", float(error), digits)
