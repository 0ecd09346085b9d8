"""Enclosures as numbers: + − × ÷ and powers with numbers and other enclosures, certain comparisons, ``float()``.

Every operation delegates to Arb (python-flint): the operands become ``arb`` balls without loss (an
:class:`~stumpcheck.numerics.certified.enclosures.balls.Enclosure` by its exact ``to_arb``, an int, float,
:class:`mpmath.mpf` or dyadic Fraction exactly, a decimal string or :class:`~decimal.Decimal` as a ball that
contains it), Arb computes the result at the larger working precision of the operands (at least 53 bits),
and the result is the enclosure of Arb's ball: it contains every result of the operation on points of the
operands, so it is again certified. A quotient by a ball that contains 0 is the whole line [nan ± inf].

Comparisons are Arb's: ``x < y`` (and ``<=``, ``>``, ``>=``) is True only when it holds for every point of
both balls, so ``not (x < y)`` does not mean ``x >= y``: for overlapping balls both are False (undecided);
:meth:`BallNumber.overlaps` tells whether two balls may be equal. ``==`` is not a numeric comparison: two
enclosures are equal when they are the same ball (same mid, rad, bounds, working precision, evidence).

``float(x)`` is the double nearest to the midpoint (ties to even): a point of the ball up to the double's
rounding, not a bound (``lower`` and ``upper`` are the bounds).
"""

from __future__ import annotations

import mpmath
from flint import arb, ctx

from stumpcheck.numerics.precision import InputError

__all__ = ["BallNumber"]

_MIN_BITS = 53


class BallNumber:
    """Arithmetic, certain comparisons and ``float()`` for a class with ``to_arb()``, ``from_arb(ball, *,
    prec_bits, digits)``, ``prec_bits``, ``digits`` and ``_ball_of(value) → arb`` (a ball containing a number)."""

    __slots__ = ()

    def _operand(self, other):
        """(ball, bits, digits) of ``other``, or None when it is not a real number or a ball."""
        if isinstance(other, BallNumber):
            return other.to_arb(), other.prec_bits, other.digits
        if isinstance(other, arb):
            return other, _MIN_BITS, 0
        try:
            return self._ball_of(other), 0, 0
        except InputError:
            return None

    def _apply(self, other, operation):
        operand = self._operand(other)
        if operand is None:
            return NotImplemented
        ball, bits, digits = operand
        prec = max(self.prec_bits, bits, _MIN_BITS)
        with ctx.workprec(prec):
            if not isinstance(other, (BallNumber, arb)):  # a decimal: its ball at the working precision
                ball = self._ball_of(other)
            result = operation(self.to_arb(), ball)
        return type(self).from_arb(result, prec_bits=prec, digits=max(self.digits, digits))

    def __add__(self, other):
        return self._apply(other, lambda x, y: x + y)

    def __radd__(self, other):
        return self._apply(other, lambda x, y: y + x)

    def __sub__(self, other):
        return self._apply(other, lambda x, y: x - y)

    def __rsub__(self, other):
        return self._apply(other, lambda x, y: y - x)

    def __mul__(self, other):
        return self._apply(other, lambda x, y: x * y)

    def __rmul__(self, other):
        return self._apply(other, lambda x, y: y * x)

    def __truediv__(self, other):
        return self._apply(other, lambda x, y: x / y)

    def __rtruediv__(self, other):
        return self._apply(other, lambda x, y: y / x)

    def __pow__(self, exponent):
        """An integer power ``x ** n`` (Arb's ``arb ** int``): it contains t^n for every point t of the ball."""
        if isinstance(exponent, bool) or not isinstance(exponent, int):
            return NotImplemented
        return self._apply(0, lambda x, _: x ** exponent)

    def __neg__(self):
        return self._apply(0, lambda x, _: -x)

    def __pos__(self):
        return self

    def __abs__(self):
        return self._apply(0, lambda x, _: abs(x))

    def _compare(self, other, relation) -> bool:
        operand = self._operand(other)
        if operand is None:
            return NotImplemented
        ball, bits, _ = operand
        with ctx.workprec(max(self.prec_bits, bits, _MIN_BITS)):
            if not isinstance(other, (BallNumber, arb)):
                ball = self._ball_of(other)
            return bool(relation(self.to_arb(), ball))

    def __lt__(self, other):
        """True only if every point of this ball is below every point of ``other``."""
        return self._compare(other, lambda x, y: x < y)

    def __le__(self, other):
        return self._compare(other, lambda x, y: x <= y)

    def __gt__(self, other):
        return self._compare(other, lambda x, y: x > y)

    def __ge__(self, other):
        return self._compare(other, lambda x, y: x >= y)

    def overlaps(self, other) -> bool:
        """True if this ball and ``other`` (a number or a ball) have a point in common: they may be equal."""
        operand = self._operand(other)
        if operand is None:
            raise InputError(f"overlaps: expected a real number or a ball, got {type(other).__name__}")
        ball, bits, _ = operand
        with ctx.workprec(max(self.prec_bits, bits, _MIN_BITS)):
            if not isinstance(other, (BallNumber, arb)):
                ball = self._ball_of(other)
            return bool(self.to_arb().overlaps(ball))

    def __float__(self) -> float:
        """The double nearest to the midpoint (ties to even); NaN for a non-finite ball."""
        if not self.is_finite:
            return float("nan")
        if not isinstance(self.mid, mpmath.mpf):  # a decimal string (a hand-built enclosure): Python rounds it
            return float(str(self.mid))
        return mpmath.libmp.to_float(self.mid._mpf_, rnd=mpmath.libmp.round_nearest)
