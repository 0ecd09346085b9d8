"""Real balls and enclosures (evidence level *certified*, docs/model.md §7): the shared ball helpers.

An :class:`Enclosure` is a ball [mid ± rad] that provably contains an exact real value;
:func:`format_ball` prints one as a decimal ``[mid +/- rad]`` that is still an enclosure, and a
ball wider than requested is a failure (:class:`EnclosureTooWide`), never a value. The
conversions :func:`to_arb`, :func:`arb_to_mpf` and :func:`mpf_to_arb` move numbers between
Python, mpmath and Arb without rounding (a decimal becomes a ball that contains it), and
:func:`working_bits` gives the working precision ⌈dps·log₂10⌉ + guard bits + ``log₂(2 + |a| + b)``
used by the pointwise enclosures (:mod:`stumpcheck.numerics.certified.enclosures.pointwise`), the θ-integrals
(:mod:`stumpcheck.numerics.certified.enclosures.theta_integrals`) and the box prover (:mod:`stumpcheck.numerics.certified.proofs.box_prover`).
"""

from __future__ import annotations

import math
import numbers
from dataclasses import dataclass, field
from decimal import ROUND_CEILING, ROUND_FLOOR, Decimal, localcontext
from fractions import Fraction

import mpmath
from flint import acb, arb, ctx, fmpq, fmpz

from stumpcheck.numerics.certified.enclosures.ball_numbers import BallNumber
from stumpcheck.numerics.display import html_table
from stumpcheck.numerics.precision import InputError, finite_float, guard_bits

__all__ = ["Enclosure", "EnclosureTooWide", "format_ball", "require_relative_width", "to_arb", "working_bits",
           "ESTIMATORS", "arb_to_mpf", "mpf_to_arb", "outward_bounds"]

ESTIMATORS = ("one-head", "reflected", "averaged", "pooled")
_LOG2_10 = math.log2(10)
#: Never raise the working precision beyond this many bits.
_MAX_BITS = 200_000


class EnclosureTooWide(ArithmeticError):
    """A certified enclosure is wider than requested (or not finite): a failure, not a value."""


@dataclass(frozen=True, repr=False)
class Enclosure(BallNumber):
    """A rigorous enclosure [mid ± rad] = [lower, upper] of a real number.

    ``mid``, ``rad``, ``lower`` and ``upper`` are exact :class:`mpmath.mpf`
    (binary) values when built by this module, at full precision: never rounded to
    53 bits or to the current mpmath precision (``mid`` may also be a decimal
    string when built by hand). Built from an Arb ball (:meth:`from_arb`), lower =
    mid − rad and upper = mid + rad exactly. ``prec_bits`` is the working precision
    used. ``str()`` gives ``[mid +/- rad]`` with the midpoint rounded to at most ``digits``
    significant digits and the rounding added to the radius (:func:`format_ball`), so
    that the printed ball still contains the value; it is formatted when asked for.
    ``float()`` is the double nearest to the midpoint (a point, not a bound); :meth:`to_dict` is
    JSON-ready.

    Interoperation with python-flint: :meth:`from_arb` and :meth:`to_arb` convert
    without loss (``enclosure.to_arb() in enclosure`` for every enclosure made from a ball), and
    ``x in enclosure`` tests containment exactly. Enclosures are numbers too
    (:mod:`stumpcheck.numerics.certified.enclosures.ball_numbers`): ``+ − × ÷`` and integer powers with
    numbers and enclosures give enclosures (Arb's ball arithmetic), and ``<``, ``<=``, ``>``, ``>=`` are
    True only when certainly true (Arb's comparisons); ``==`` compares the balls as records.

        >>> from flint import arb, ctx
        >>> from stumpcheck.numerics.certified.enclosures import Enclosure
        >>> with ctx.workprec(200):
        ...     third = arb(1) / 3
        >>> enclosure = Enclosure.from_arb(third, prec_bits=200)
        >>> enclosure.lower in enclosure, enclosure.upper in enclosure, 0.5 in enclosure
        (True, True, False)
        >>> float(enclosure), (3 * enclosure).contains(1), enclosure < 0.34, enclosure > 0.34
        (0.3333333333333333, True, True, False)
    """

    mid: object
    rad: object
    lower: object
    upper: object
    prec_bits: int
    evidence: str = "certified"
    text: str = field(default="", compare=False, repr=False)
    digits: int = field(default=30, compare=False, repr=False)

    def __str__(self) -> str:
        if self.text:
            return self.text
        return format_ball(_stored(self.mid), _stored(self.rad), self.digits)

    def __repr__(self) -> str:
        """``Enclosure(mid='…', rad='…', prec_bits=…, evidence=…)``, mid and rad at full precision: decimals with
        the digits that read back (at their mantissa's bits) to the same binary numbers."""
        return (f"Enclosure(mid={_full_digits(self.mid)!r}, rad={_full_digits(self.rad)!r}, "
                f"prec_bits={self.prec_bits}, evidence={self.evidence!r})")

    def _repr_html_(self) -> str:
        return html_table("Enclosure", [("ball", str(self)), ("mid", _full_digits(self.mid)),
                                        ("rad", _full_digits(self.rad)),
                                        ("rad/|mid|", mpmath.nstr(self.relative_radius, 3)),
                                        ("working precision", f"{self.prec_bits} bits"), ("evidence", self.evidence)])

    @property
    def is_finite(self) -> bool:
        """Both ends finite (a non-finite enclosure is [nan ± inf], the whole real line)."""
        return bool(mpmath.isfinite(_stored(self.lower)) and mpmath.isfinite(_stored(self.upper)))

    @property
    def relative_radius(self):
        """``rad / |mid|`` (0 for the exact ball [0 ± 0], +inf for [0 ± r], r > 0, or a non-finite ball)."""
        mid, rad = _stored(self.mid), _stored(self.rad)
        if not self.is_finite:
            return mpmath.inf
        if rad == 0:
            return mpmath.mpf(0)
        return rad / abs(mid) if mid != 0 else mpmath.inf

    def contains(self, value) -> bool:
        """True if the exact binary number ``value`` (mpf, int or float) lies in [lower, upper].

        Compared exactly (mpmath compares mpf values of any precision without rounding).
        """
        return bool(_stored(self.lower) <= _exact_mpf(value) <= _stored(self.upper))

    def __contains__(self, value) -> bool:
        """``value in enclosure``: lower ≤ value ≤ upper, decided exactly.

        ``value``: an int, float, :class:`~fractions.Fraction`, :class:`~decimal.Decimal` or
        :class:`mpmath.mpf` (compared without rounding; NaN is in no enclosure), or a real
        ``flint.arb`` ball, which counts as contained only if all of it is: lower ≤ mid − rad and
        mid + rad ≤ upper. Anything else raises :class:`~stumpcheck.numerics.precision.InputError`.

            >>> from fractions import Fraction
            >>> from flint import arb
            >>> from stumpcheck.numerics.certified.enclosures import Enclosure
            >>> enclosure = Enclosure.from_arb(arb(1, (1, -10)), prec_bits=53)  # [1 ± 2⁻¹⁰]
            >>> 1 + 2.0 ** -10 in enclosure, Fraction(1025, 1024) in enclosure, 1.5 in enclosure
            (True, True, False)
            >>> arb(1, (1, -11)) in enclosure, arb(1, (1, -9)) in enclosure
            (True, False)
        """
        lower, upper = _stored(self.lower), _stored(self.upper)
        if isinstance(value, arb):
            if not value.is_finite():  # an indeterminate or unbounded ball: only the whole line holds it
                return bool(lower == mpmath.ninf and upper == mpmath.inf)
            mid, rad = arb_to_mpf(value.mid()), arb_to_mpf(value.rad())
            return bool(lower <= mpmath.fsub(mid, rad, exact=True) and mpmath.fadd(mid, rad, exact=True) <= upper)
        if isinstance(value, (Fraction, Decimal)):
            if isinstance(value, Decimal) and not value.is_finite():
                return False if value.is_nan() else bool(lower <= _exact_mpf(float(value)) <= upper)
            value = Fraction(value)
            return bool(_fraction_or_inf(lower) <= value <= _fraction_or_inf(upper))
        if isinstance(value, numbers.Integral) and not isinstance(value, bool):
            value = int(value)
        if isinstance(value, bool) or not isinstance(value, (int, float, mpmath.mpf)):
            raise InputError(f"in: expected a real number (int, float, Fraction, Decimal, mpf) or an arb ball, "
                             f"got {type(value).__name__}")
        return bool(lower <= _exact_mpf(value) <= upper)

    def to_arb(self) -> arb:
        """This enclosure as a python-flint ``arb`` ball, without loss (independent of ``flint.ctx.prec``).

        The midpoint converts exactly; the radius too when its mantissa fits Arb's 30-bit radii (always,
        for an enclosure made by :meth:`from_arb`), else it is rounded up. A hand-built enclosure whose
        [lower, upper] is not exactly [mid − rad, mid + rad] gives the ball of their hull. A non-finite
        enclosure gives ``arb.nan()``.

            >>> from flint import arb
            >>> from stumpcheck.numerics.certified.enclosures import Enclosure
            >>> ball = arb(2, (3, -40))
            >>> back = Enclosure.from_arb(ball, prec_bits=53).to_arb()
            >>> back.mid() == ball.mid(), back.rad() == ball.rad()
            (True, True)
        """
        if not self.is_finite:
            return arb.nan()
        mid, rad = _stored(self.mid), _stored(self.rad)
        lower, upper = _stored(self.lower), _stored(self.upper)
        low, high = mpmath.fsub(mid, rad, exact=True), mpmath.fadd(mid, rad, exact=True)
        if not (lower >= low and upper <= high):  # the hull of both descriptions (hand-built enclosures)
            low, high = min(lower, low), max(upper, high)
            mid = mpmath.ldexp(mpmath.fadd(low, high, exact=True), -1)
            rad = mpmath.ldexp(mpmath.fsub(high, low, exact=True), -1)
        sign, man, exp, _ = rad._mpf_
        if not man:
            return arb(mpf_to_arb(mid))
        return _ball_with_radius(mpf_to_arb(mid), int(man), int(exp))

    def to_dict(self) -> dict:
        """JSON-ready: ``ball`` (the printed, still enclosing text), ``mid``, ``rad``, ``lower``, ``upper`` at full
        precision (decimals that read back, at their mantissa's bits, to the same binary numbers), ``prec_bits``,
        ``evidence``."""
        return {"ball": str(self), "mid": _full_digits(self.mid), "rad": _full_digits(self.rad),
                "lower": _full_digits(self.lower), "upper": _full_digits(self.upper), "prec_bits": self.prec_bits,
                "evidence": self.evidence}

    _ball_of = staticmethod(lambda value: to_arb(value))

    def require(self, rel_width) -> "Enclosure":
        """Return self if ``rad/|mid| ≤ rel_width``, else raise :class:`EnclosureTooWide`."""
        return require_relative_width(self, rel_width)

    @classmethod
    def from_arb(cls, x, *, prec_bits: int | None = None, digits: int = 30) -> "Enclosure":
        """The enclosure [m ± r] of a real python-flint ball ``x`` = [m ± r], without loss.

        mid = m and rad = r exactly (as :class:`mpmath.mpf` of any length: a 1000-bit midpoint stays
        1000 bits, whatever ``flint.ctx.prec`` and ``mpmath.mp.prec`` are), lower = m − r and upper =
        m + r exactly. ``prec_bits`` (keyword-only) records the working precision the ball was computed
        at; default: the larger of ``flint.ctx.prec`` and the bits of m. ``digits``: significant digits
        ``str()`` shows. A non-finite ball gives the enclosure [nan ± inf] of the whole real line.
        Not a real ball (an ``acb``: pass its ``.real``), or a bad ``prec_bits``:
        :class:`~stumpcheck.numerics.precision.InputError`.

            >>> from flint import arb, ctx
            >>> from stumpcheck.numerics.certified.enclosures import Enclosure
            >>> with ctx.workprec(1000):
            ...     x = arb(2).sqrt()
            >>> enclosure = Enclosure.from_arb(x, prec_bits=1000)
            >>> enclosure.mid._mpf_[3] > 900, enclosure.lower < enclosure.mid < enclosure.upper
            (True, True)
        """
        if isinstance(x, acb):
            raise InputError(f"from_arb needs a real arb ball, got the complex ball {x} (pass its .real)")
        if not isinstance(x, arb):
            raise InputError(f"from_arb needs a flint.arb ball, got {type(x).__name__}")
        if prec_bits is None:
            prec_bits = max(ctx.prec, x.bits())
        if isinstance(prec_bits, bool) or not isinstance(prec_bits, int) or not 2 <= prec_bits <= _MAX_BITS:
            raise InputError(f"prec_bits must be an int in [2, {_MAX_BITS}], got {prec_bits!r:.40}")
        if isinstance(digits, bool) or not isinstance(digits, int) or digits < 1:
            raise InputError(f"digits must be a positive int, got {digits!r:.40}")
        if not x.is_finite():
            return cls(mid=mpmath.nan, rad=mpmath.inf, lower=mpmath.ninf, upper=mpmath.inf,
                       prec_bits=prec_bits, text="[nan +/- inf]")
        mid, rad = arb_to_mpf(x.mid()), arb_to_mpf(x.rad())
        return cls(mid=mid, rad=rad, lower=mpmath.fsub(mid, rad, exact=True), upper=mpmath.fadd(mid, rad, exact=True),
                   prec_bits=prec_bits, digits=digits)

    @classmethod
    def from_ball(cls, ball, *, prec_bits: int, digits: int = 30) -> "Enclosure":
        """The enclosure given by a real Arb ball (an ``arb`` or the real part of an ``acb``; other
        values are first made a ball by ``arb()``): :meth:`from_arb` of it."""
        return cls.from_arb(arb(ball), prec_bits=prec_bits, digits=digits)


#: The bits of an Arb radius (``mag_t``): a radius with a longer mantissa is rounded up to them.
_RADIUS_BITS = 30


def _odd(man: int, exp: int) -> tuple[int, int]:
    while man and man % 2 == 0:
        man, exp = man // 2, exp + 1
    return man, exp


def _ball_with_radius(mid: arb, man: int, exp: int) -> arb:
    """The ball [mid ± man·2^exp] with exactly that radius when man has at most 30 bits (else rounded up).

    python-flint builds a radius through Arb's ``arf_get_mag``, which rounds up and adds one unit in the
    last of its 30 bits even to a radius it could hold exactly. So the radius less one such unit is passed
    (at either of the two exponents a 30-bit mantissa can have), and the one that comes back exact is kept.
    """
    if man.bit_length() > _RADIUS_BITS:
        return arb(mid, (man, exp))
    wanted = _odd(man, exp)
    shift = _RADIUS_BITS - man.bit_length()
    top, low = man << shift, exp - shift
    for candidate in ((top - 1, low), (2 * top - 1, low - 1)):
        ball = arb(mid, candidate)
        got_man, got_exp = ball.rad().man_exp()
        if _odd(int(got_man), int(got_exp)) == wanted:
            return ball
    return arb(mid, (man, exp))  # rounded up: still an enclosure


def format_ball(mid, rad, digits: int = 30) -> str:
    """``[mid +/- rad]`` in decimal, still an enclosure: the midpoint is rounded to at most
    ``digits`` significant digits (fewer when the radius makes more meaningless) and the
    rounding error is added to the radius, which is rounded up to 3 digits."""
    mid, rad = _stored(mid) if isinstance(mid, str) else _exact_mpf(mid), _exact_mpf(rad)
    if not (mpmath.isfinite(mid) and mpmath.isfinite(rad)):
        return "[nan +/- inf]"
    with mpmath.workprec(max(mpmath.mp.prec, mid._mpf_[3] + 64, 4 * digits + 64)):
        if mid == 0:
            shown, text = mpmath.mpf(0), "0"
        else:
            keep = digits
            if rad > 0:
                keep = max(1, min(digits, int(mpmath.floor(mpmath.log10(abs(mid) / rad))) + 3))
            text = mpmath.nstr(mid, keep, strip_zeros=False, min_fixed=-4, max_fixed=6).replace(".e", "e").rstrip(".")
            shown = mpmath.mpf(text)
        # |text − mid| ≤ |shown − mid| + |text − shown|, the last below |mid|·2^(2 − prec)
        slack = abs(mid) * mpmath.ldexp(1, 2 - mpmath.mp.prec)
        total = rad + abs(shown - mid) + slack
        if total == 0:
            return f"[{text} +/- 0]"
        exponent = int(mpmath.floor(mpmath.log10(total))) - 2
        mantissa = int(mpmath.ceil(total / mpmath.mpf(10) ** exponent * (1 + mpmath.ldexp(1, 8 - mpmath.mp.prec))))
        if mantissa >= 1000:
            mantissa, exponent = (mantissa + 9) // 10, exponent + 1
    return f"[{text} +/- {mantissa / 100:.2f}e{exponent + 2}]"


def _outward_decimal(value, digits: int, rounding) -> str:
    """An exact mpf as a decimal of ``digits`` significant digits rounded down (ROUND_FLOOR) or up."""
    if not mpmath.isfinite(value):
        return "-inf" if rounding == ROUND_FLOOR else "inf"
    frac = _fraction_or_inf(value)
    with localcontext() as context:
        context.prec, context.rounding = digits, rounding
        context.Emax, context.Emin = 10 ** 9, -10 ** 9
        return str(Decimal(frac.numerator) / Decimal(frac.denominator))


def outward_bounds(enclosure: Enclosure, digits: int) -> list[str]:
    """[lower, upper] of an enclosure as decimals of ``digits`` significant digits, rounded outward
    (lower down, upper up), so that the printed interval still contains the exact value."""
    if isinstance(digits, bool) or not isinstance(digits, int) or digits < 1:
        raise InputError(f"digits must be a positive int, got {digits!r:.40}")
    if not enclosure.is_finite:
        return ["-inf", "inf"]
    return [_outward_decimal(_stored(enclosure.lower), digits, ROUND_FLOOR),
            _outward_decimal(_stored(enclosure.upper), digits, ROUND_CEILING)]


def require_relative_width(enclosure: Enclosure, rel_width) -> Enclosure:
    """Raise :class:`EnclosureTooWide` unless ``enclosure`` is finite with ``rad/|mid| ≤ rel_width``."""
    rel_width = _validate_rel_width(rel_width)
    if not enclosure.is_finite:
        raise EnclosureTooWide(f"the enclosure {enclosure} is not finite")
    if rel_width is not None and enclosure.relative_radius > rel_width:
        raise EnclosureTooWide(
            f"the enclosure {enclosure} has relative radius {mpmath.nstr(enclosure.relative_radius, 3)}, "
            f"wider than the requested {rel_width:g}")
    return enclosure


# ---------------------------------------------------------------------------------------------
# inputs


def _validate_rel_width(rel_width):
    """None (no width requirement) or a positive finite relative width."""
    return None if rel_width is None else finite_float(rel_width, "rel_width", positive=True)


def _tag(estimator: str) -> str:
    if estimator not in ESTIMATORS:
        raise InputError(f"unknown estimator {estimator!r}; expected one of {', '.join(ESTIMATORS)}")
    return estimator.replace("-", "_")


def _exact_mpf(value):
    """``value`` as an mpf without rounding (mpf, int, float only)."""
    if isinstance(value, mpmath.mpf):
        return value
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise InputError(f"expected an exact binary number (mpf, int or float), got {value!r}")
    with mpmath.workprec(max(64, abs(value).bit_length() + 8 if isinstance(value, int) else 64)):
        return mpmath.mpf(value)


def _stored(value):
    """A stored field as an mpf, never rounded: mpf values are returned as they are and
    decimal strings (hand-built enclosures) are read at 4 bits per character plus 64."""
    if isinstance(value, mpmath.mpf):
        return value
    with mpmath.workprec(4 * len(str(value)) + 64):
        return mpmath.mpf(value)


def _full_digits(value) -> str:
    """A stored mpf in decimal with ⌈bits·log₁₀2⌉ + 1 significant digits (bits: its mantissa's), which read back
    at that many bits to the same number; a decimal string as it is."""
    if not isinstance(value, mpmath.mpf) or not mpmath.isfinite(value) or value == 0:
        return str(value) if not isinstance(value, mpmath.mpf) else mpmath.libmp.to_str(value._mpf_, 1)
    return mpmath.libmp.to_str(value._mpf_, math.ceil(value._mpf_[3] * math.log10(2)) + 1)


def _fraction_or_inf(value):
    """An mpf bound as an exact Fraction (±inf as float infinities, which Fractions compare with)."""
    if not mpmath.isfinite(value):
        return float(value)
    sign, man, exp, _ = value._mpf_
    magnitude = Fraction(int(man)) * (Fraction(2) ** int(exp))
    return -magnitude if sign else magnitude


def arb_to_mpf(x):
    """An exact arb (a midpoint, radius or bound) as an exact mpf."""
    if x.is_zero():
        return mpmath.mpf(0)
    if not x.is_finite():
        return mpmath.inf if x > 0 else mpmath.ninf
    man, exp = x.man_exp()
    return mpmath.mp.make_mpf(mpmath.libmp.from_man_exp(int(man), int(exp)))


def mpf_to_arb(x) -> arb:
    """An mpf as the exact arb with the same (binary) value."""
    sign, man, exp, bits = _exact_mpf(x)._mpf_
    if not man:
        if exp:  # mpmath's special values (inf, nan) have a zero mantissa and a nonzero exponent
            raise InputError(f"{x} is not finite")
        return arb(0)
    with ctx.workprec(max(ctx.prec, bits + 8)):  # python-flint rounds a negation too: negate in here
        value = arb(fmpz(int(man))) * arb(2) ** int(exp)  # int(): gmpy2 mantissas are mpz
        return -value if sign else value


def to_arb(value, name: str = "value") -> arb:
    """A real ball containing ``value``, exactly when ``value`` is binary.

    int, float, :class:`mpmath.mpf` and dyadic Fractions convert exactly;
    decimal strings and :class:`~decimal.Decimal` become balls (at the current
    ``flint.ctx.prec``) that contain the decimal number; arb balls pass through.
    """
    if isinstance(value, bool):
        raise InputError(f"{name} must be a real number, got {value!r}")
    if isinstance(value, arb):
        ball = value
    elif isinstance(value, acb):
        raise InputError(f"{name} must be real, got the complex ball {value}")
    elif isinstance(value, int):
        ball = arb(fmpz(value))
    elif isinstance(value, (float, mpmath.mpf)):
        if not mpmath.isfinite(value):
            raise InputError(f"{name} must be finite, got {value}")
        ball = mpf_to_arb(value)
    elif isinstance(value, Fraction):
        ball = arb(fmpq(value.numerator, value.denominator))
    elif isinstance(value, (str, Decimal)):
        text = str(value).strip()
        try:
            parsed = Decimal(text)
        except ArithmeticError:
            raise InputError(f"{name} must be a decimal number, got {value!r}") from None
        if not parsed.is_finite():
            raise InputError(f"{name} must be finite, got {value!r}")
        ball = arb(text)
    else:
        raise InputError(f"{name} must be a real number, got {value!r}")
    if not ball.is_finite():
        raise InputError(f"{name} must be finite, got {value}")
    return ball


def _magnitude(ball: arb) -> float:
    return float(ball.abs_upper().upper())


def working_bits(dps: int, *magnitudes: float) -> int:
    """⌈dps·log₂10⌉ + guard bits + log₂(2 + Σ magnitudes): exponents of size ``|a| + b`` lose that many."""
    return math.ceil(dps * _LOG2_10) + guard_bits(dps) + math.ceil(math.log2(2 + sum(magnitudes)))


def _parameters(a, b):
    """Balls for a and b (at the current flint precision), validated: finite, b > 0."""
    a_ball, b_ball = to_arb(a, "a"), to_arb(b, "b")
    if not b_ball > 0:
        raise InputError(f"b must be > 0 (the attention scale), got {b}")
    return a_ball, b_ball


def _next_bits(bits: int, ball, rel_width: float) -> int:
    """Ziv's strategy: add the bits the last evaluation lost (if it shows them) plus a margin;
    quadruple when the ball does not even fix the sign (cancellation of unknown depth)."""
    if not ball.is_finite() or ball.contains(0):
        return min(4 * bits, _MAX_BITS)
    rel = _magnitude(ball.rad()) / _magnitude(ball)
    missing = math.ceil(math.log2(rel / rel_width)) if rel > 0 else 0
    return min(bits + max(32, missing + 32), _MAX_BITS)


def sympy_constant_ball(expr) -> arb:
    """An exact SymPy constant built from rationals, π and ζ(n) (n an integer) by +, × and integer powers, as
    an Arb ball at the current precision; ArithmeticError for anything else."""
    import sympy as sp

    expr = sp.sympify(expr)
    if expr.is_Rational:
        return arb(fmpq(int(expr.p), int(expr.q)))
    if expr is sp.pi:
        return arb.pi()
    if isinstance(expr, sp.zeta) and len(expr.args) == 1 and expr.args[0].is_Integer:
        return arb(int(expr.args[0])).zeta()
    if expr.is_Add:
        return sum((sympy_constant_ball(x) for x in expr.args), arb(0))
    if expr.is_Mul:
        value = arb(1)
        for x in expr.args:
            value *= sympy_constant_ball(x)
        return value
    if expr.is_Pow and expr.exp.is_Integer:
        return sympy_constant_ball(expr.base) ** int(expr.exp)
    raise ArithmeticError(f"no exact Arb form for the constant {expr}")

