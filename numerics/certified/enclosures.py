"""Certified enclosures of e(θ), L and ∇L: rigorous ball arithmetic (python-flint / Arb).

Evidence level **certified** (docs/model.md §7): each value comes back as an
:class:`Enclosure`, a ball [mid ± rad] that provably contains the exact value
for the given inputs (decimal inputs are converted to balls that contain them).
A ball wider than requested is a failure, not a value: with ``rel_width`` the
functions raise :class:`EnclosureTooWide` instead of returning it.

Pointwise values come from :mod:`numerics.generated.population_arb`, which
``stumpcheck export`` prints from the SymPy derivation (theory/codegen.py, the
Arb target): the truncated-exponential functions Λ and κ_k are summed from
their moment power series with a rigorous tail bound near β = 0 and from their
large-rate forms beyond, and the softmax weights are printed without the
logarithms of θ and 1 − θ, so e(θ) is finite at θ = 0 and θ = 1.

L = ∫₀¹ ½ e² dθ and ∇L = ∫₀¹ e ∇e dθ are integrated with Arb's rigorous
integrator ``acb.integral`` on the model's breakpoint pieces
(:func:`numerics.population.quadrature.breakpoints_float64`, or the mpmath
:func:`~numerics.population.quadrature.breakpoints` if that fails), taken as exact binary
endpoints: any exact tiling of [0, 1] gives a rigorous result, the breakpoints
only save the integrator work. Its contract (see
``help(flint.acb.integral)``): called with ``analytic=True``, the integrand
must return a non-finite ball wherever it is not analytic on the input ball.

    >>> from flint import acb, arb
    >>> wrong = acb.integral(lambda x, _: x.sqrt(), 1, 4)          # WRONG: ignores the flag
    >>> right = acb.integral(lambda x, analytic: x.sqrt(analytic=analytic), 1, 4)
    >>> right.real.overlaps(arb(14) / 3), wrong.real.overlaps(arb(14) / 3)
    (True, False)

The generated functions forward the flag to every logarithm they evaluate
(Λ = log M₀ is the only one left once the softmax weights are rewritten), so
the integrand is analytic wherever it claims to be. Because the logarithms of
θ and 1 − θ are gone, the pieces that touch θ = 0 and θ = 1 have no endpoint
singularity and converge like the others (no crude endpoint bound is needed).

Precision: ``dps`` decimal digits (validated by
:func:`numerics.precision.validate_dps`) are worked at
⌈dps·log₂10⌉ + guard bits + log₂(2 + |a| + b) bits inside ``flint.ctx.workprec``,
which restores the previous precision on exit, also on error. If a requested
relative width is missed, the evaluation is repeated at a precision raised by
the number of bits that were lost (Ziv's strategy), a few times at most.

    >>> enc = certified_error(25, 20, "0.95", dps=30, rel_width=1e-25)
    >>> enc.evidence, enc.relative_radius < 1e-25
    ('certified', True)
    >>> print(enc)  # doctest: +ELLIPSIS
    [0.017304114159858533636045942954... +/- ...e-32]
"""

from __future__ import annotations

import heapq
import itertools
import math
from dataclasses import dataclass, field
from decimal import Decimal
from fractions import Fraction

import mpmath
from flint import acb, arb, ctx, fmpq, fmpz

from numerics.generated import population_arb as gen_arb
from numerics.population.quantities import MAX_INTEGRAL_SCALE
from numerics.precision import InputError, finite_float, guard_bits, validate_dps
from numerics.population.quadrature import breakpoints, breakpoints_float64

__all__ = ["Enclosure", "EnclosureTooWide", "format_ball", "require_relative_width", "error_ball", "certified_error",
           "certified_loss", "certified_loss_gradient", "certified_loss_hessian", "to_arb", "working_bits", "ESTIMATORS",
           "arb_to_mpf", "mpf_to_arb"]

ESTIMATORS = ("one-head", "reflected", "averaged", "pooled")
_LOG2_10 = math.log2(10)
#: How many times a missed ``rel_width`` triggers a re-evaluation at a higher precision
#: (pointwise, and for the θ-integrals, whose attempts cost far more).
_MAX_ATTEMPTS = 6
_MAX_INTEGRAL_ATTEMPTS = 4
#: The θ-integrals give up (EnclosureTooWide) beyond this many times the initial precision:
#: a component that is 0 or exponentially small (∂L/∂a of the pooled head at large b is
#: ~1e-217178) has no relative width worth grinding for.
_MAX_INTEGRAL_BITS_FACTOR = 8
#: Never raise the working precision beyond this many bits.
_MAX_BITS = 200_000


class EnclosureTooWide(ArithmeticError):
    """A certified enclosure is wider than requested (or not finite): a failure, not a value."""


@dataclass(frozen=True)
class Enclosure:
    """A rigorous enclosure [mid ± rad] = [lower, upper] of a real number.

    ``mid``, ``rad``, ``lower`` and ``upper`` are exact :class:`mpmath.mpf`
    (binary) values when built by this module (``mid`` may also be a decimal
    string when built by hand); ``prec_bits`` is the working precision used.
    ``str()`` gives ``[mid +/- rad]`` with the midpoint rounded outward by Arb,
    so that the printed ball still contains the value.
    """

    mid: object
    rad: object
    lower: object
    upper: object
    prec_bits: int
    evidence: str = "certified"
    text: str = field(default="", compare=False, repr=False)

    def __str__(self) -> str:
        if self.text:
            return self.text
        return format_ball(_stored(self.mid), _stored(self.rad))

    @property
    def is_finite(self) -> bool:
        return bool(mpmath.isfinite(_stored(self.lower)) and mpmath.isfinite(_stored(self.upper)))

    @property
    def relative_radius(self):
        """rad / |mid| (0 for the exact ball [0 ± 0], +inf for [0 ± r], r > 0, or a non-finite ball)."""
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

    def require(self, rel_width) -> "Enclosure":
        """Return self if rad/|mid| ≤ rel_width, else raise :class:`EnclosureTooWide`."""
        return require_relative_width(self, rel_width)

    @classmethod
    def from_ball(cls, ball, *, prec_bits: int, digits: int = 30) -> "Enclosure":
        """The enclosure given by a real Arb ball (an ``arb`` or the real part of an ``acb``)."""
        ball = arb(ball)
        if not ball.is_finite():
            return cls(mid=mpmath.nan, rad=mpmath.inf, lower=mpmath.ninf, upper=mpmath.inf,
                       prec_bits=prec_bits, text="[nan +/- inf]")
        return cls(mid=arb_to_mpf(ball.mid()), rad=arb_to_mpf(ball.rad()), lower=arb_to_mpf(ball.lower()),
                   upper=arb_to_mpf(ball.upper()), prec_bits=prec_bits,
                   text=format_ball(arb_to_mpf(ball.mid()), arb_to_mpf(ball.rad()), digits))


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


def require_relative_width(enclosure: Enclosure, rel_width) -> Enclosure:
    """Raise :class:`EnclosureTooWide` unless ``enclosure`` is finite with rad/|mid| ≤ rel_width."""
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
    with ctx.workprec(max(ctx.prec, bits + 8)):
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
    """⌈dps·log₂10⌉ + guard bits + log₂(2 + Σ magnitudes): exponents of size |a| + b lose that many."""
    return math.ceil(dps * _LOG2_10) + guard_bits(dps) + math.ceil(math.log2(2 + sum(magnitudes)))


def _parameters(a, b):
    """Balls for a and b (at the current flint precision), validated: finite, b > 0."""
    a_ball, b_ball = to_arb(a, "a"), to_arb(b, "b")
    if not b_ball > 0:
        raise InputError(f"b must be > 0 (the attention scale), got {b}")
    return a_ball, b_ball


def _unit_ball(value, name: str) -> arb:
    """A ball for a θ value, checked to lie in [0, 1] exactly.

    Binary inputs convert exactly and are compared exactly; a decimal is
    compared as a Decimal and its ball (which may stick out of [0, 1] when it
    is within a rounding of an end) is cut back to [0, 1], θ's domain (up to
    the radius rounding of the new ball, which the generated code tolerates).
    """
    ball = to_arb(value, name)
    if isinstance(value, (str, Decimal)):
        if not 0 <= Decimal(str(value).strip()) <= 1:
            raise InputError(f"{name} must lie in [0, 1], got {value}")
        if ball.lower() >= 0 and ball.upper() <= 1:
            return ball
        return arb(ball.lower()).max(arb(0)).union(arb(ball.upper()).min(arb(1)))
    if not (ball.lower() >= 0 and ball.upper() <= 1):
        raise InputError(f"{name} must lie in [0, 1], got {value}")
    return ball


def _threshold(theta):
    """θ ⊆ [0, 1] as a ball (a number or an arb ball) or as exact ends (lo, hi) of an interval."""
    if isinstance(theta, (tuple, list)):
        if len(theta) != 2:
            raise InputError(f"a theta interval must be (lo, hi), got {theta!r}")
        lo, hi = _unit_ball(theta[0], "theta"), _unit_ball(theta[1], "theta")
        if not lo <= hi:
            raise InputError(f"a theta interval needs lo <= hi, got {theta!r}")
        return (arb(lo.lower()), arb(hi.upper()))
    ball = _unit_ball(theta, "theta")
    if isinstance(theta, arb) and not ball.rad().is_zero():
        return (arb(ball.lower()), arb(ball.upper()))
    return ball


def _next_bits(bits: int, ball, rel_width: float) -> int:
    """Ziv's strategy: add the bits the last evaluation lost (if it shows them) plus a margin;
    quadruple when the ball does not even fix the sign (cancellation of unknown depth)."""
    if not ball.is_finite() or ball.contains(0):
        return min(4 * bits, _MAX_BITS)
    rel = _magnitude(ball.rad()) / _magnitude(ball)
    missing = math.ceil(math.log2(rel / rel_width)) if rel > 0 else 0
    return min(bits + max(32, missing + 32), _MAX_BITS)


# ---------------------------------------------------------------------------------------------
# pointwise


def error_ball(a, b, theta, *, estimator: str = "one-head", analytic: bool = False) -> acb:
    """The generated Arb e(θ) at the current ``flint.ctx.prec``: an ``acb`` ball, no validation.

    ``theta`` may be a complex ball. With ``analytic=True`` the result is a
    non-finite ball wherever a logarithm evaluated inside may be non-analytic on
    the input balls (``acb.integral``'s contract).
    """
    function = getattr(gen_arb, f"error_{_tag(estimator)}")
    return function(a, b, theta, analytic)


def _enclose_over(function, a_ball, b_ball, theta, rel_width, digits: int, max_pieces: int) -> arb:
    """A real ball containing e(θ) for every θ in ``theta`` (a ball, or exact ends (lo, hi)).

    A ball (a point or a decimal's enclosure) is evaluated once. An interval is bisected, widest enclosure
    first, until every piece's radius is at most an eighth of the spread of
    the values sampled at the ends and the middle (plus 10^-digits relative),
    or rel_width/4 relative when a width is requested, or until there are
    ``max_pieces`` pieces; the hull of the pieces' enclosures is returned.
    """
    def value(t):
        return function(a_ball, b_ball, t).real

    if not isinstance(theta, tuple):
        return value(theta)
    lo, hi = theta
    if lo == hi:
        return value(lo)
    samples = [value(t) for t in (lo, ((lo + hi) / 2).mid(), hi)]
    spread = samples[0].union(samples[1]).union(samples[2])
    size = _magnitude(spread)
    tolerance = float(spread.rad()) / 8 + 10.0 ** -digits * size
    if rel_width is not None:
        tolerance = max(tolerance, rel_width * size / 4)
    counter = itertools.count()

    def entry(left, right):
        ball = value(left.union(right))
        radius = _magnitude(ball.rad()) if ball.is_finite() else math.inf
        return (-radius, next(counter), left, right, ball)

    heap = [entry(lo, hi)]
    while len(heap) < max_pieces and -heap[0][0] > tolerance:
        _, _, left, right, _ = heapq.heappop(heap)
        middle = ((left + right) / 2).mid()
        heapq.heappush(heap, entry(left, middle))
        heapq.heappush(heap, entry(middle, right))
    hull = heap[0][4]
    for item in heap[1:]:
        hull = hull.union(item[4])
    return hull


def certified_error(a, b, theta, *, estimator: str = "one-head", dps: int = 30, rel_width=None,
                    max_pieces: int = 64) -> Enclosure:
    """A certified enclosure of e(θ) = θ̂∞(a, b; θ) − θ.

    ``theta`` is a number, an ``arb`` ball or an interval ``(lo, hi)`` ⊆ [0, 1];
    for a ball the enclosure holds for every θ in it (the ball is bisected into
    at most ``max_pieces`` pieces and the hull of their enclosures returned).
    ``a`` and ``b`` may be balls too. With ``rel_width`` the enclosure must have
    rad/|mid| ≤ rel_width or :class:`EnclosureTooWide` is raised; a non-finite
    enclosure always raises it.
    """
    dps = validate_dps(dps)
    rel_width = _validate_rel_width(rel_width)
    if isinstance(max_pieces, bool) or not isinstance(max_pieces, int) or max_pieces < 1:
        raise InputError(f"max_pieces must be a positive int, got {max_pieces!r}")
    function = getattr(gen_arb, f"error_{_tag(estimator)}")
    with ctx.workprec(64):
        a0, b0 = _parameters(a, b)
        _threshold(theta)
        bits = working_bits(dps, _magnitude(a0), _magnitude(b0))
    for _ in range(_MAX_ATTEMPTS):
        with ctx.workprec(bits):
            a_ball, b_ball = _parameters(a, b)
            ball = _enclose_over(function, a_ball, b_ball, _threshold(theta), rel_width, dps, max_pieces)
        enclosure = Enclosure.from_ball(ball, prec_bits=bits, digits=dps)
        if enclosure.is_finite and (rel_width is None or enclosure.relative_radius <= rel_width):
            return enclosure
        if rel_width is None:
            break
        bits = _next_bits(bits, ball, rel_width)
    return require_relative_width(enclosure, rel_width)


# ---------------------------------------------------------------------------------------------
# integrals


def _as_float(value) -> float:
    if isinstance(value, arb):
        return float(value.mid())
    if isinstance(value, (str, Decimal)):
        return float(Decimal(str(value).strip()))
    if isinstance(value, Fraction):
        return value.numerator / value.denominator
    return float(value)


def _float_estimate(a, b, estimator):
    """(L, ∂L/∂a, ∂L/∂b) in float64, only to scale tolerances (never part of a result)."""
    from numerics.population.quantities import loss_and_gradient_float64

    try:
        value, gradient = loss_and_gradient_float64(_as_float(a), _as_float(b), estimator=estimator)
        return float(value), float(gradient[0]), float(gradient[1])
    except (ArithmeticError, ValueError, TypeError):
        return None


def _pieces(a_ball: arb, b_ball: arb, estimator: str, bits: int) -> list[arb]:
    """Exact binary arb endpoints of the breakpoint pieces of [0, 1] (from the midpoints of a, b).

    The breakpoints only steer the integrator (any exact points tiling [0, 1] give a
    rigorous result): the float64 ones are used, the mpmath ones if those fail.
    """
    a_mid, b_mid = arb_to_mpf(a_ball.mid()), arb_to_mpf(b_ball.mid())
    points = None
    try:
        points = breakpoints_float64(float(a_mid), float(b_mid), estimator=estimator, lo=0.0, hi=1.0)
    except (ArithmeticError, ValueError, FloatingPointError):
        points = None
    if not points or not all(math.isfinite(p) for p in points) or points[0] != 0 or points[-1] != 1:
        with mpmath.workprec(bits):
            points = breakpoints(a_mid, b_mid, estimator=estimator, lo=0, hi=1)
    ends = sorted({mpf_to_arb(p).mid() for p in points}, key=float)
    return [arb(0)] + [p for p in ends if 0 < p < 1] + [arb(1)]


def _integrate(integrand, pieces: list[arb], goal_bits: int, abs_tol: arb) -> acb:
    total = acb(0)
    for lo, hi in zip(pieces, pieces[1:]):
        part = acb.integral(integrand, lo, hi, rel_tol=arb(2) ** -goal_bits, abs_tol=abs_tol)
        if not part.is_finite():
            raise EnclosureTooWide(f"acb.integral returned a non-finite ball on the piece [{lo}, {hi}]")
        total += part
    return total


def _scale_power(estimate) -> int:
    """An exponent k with 2^k ≈ 1/|estimate| (0 when there is no usable estimate)."""
    if estimate is None or not math.isfinite(estimate) or estimate == 0:
        return 0
    return -math.floor(math.log2(abs(estimate)))


def _goal_bits(dps: int, rel_width) -> int:
    goal = math.ceil(dps * _LOG2_10)
    if rel_width is not None:
        goal = max(goal, math.ceil(-math.log2(rel_width)))
    return goal + 10


def _rescaled(ball, goal: int, previous: int) -> int:
    """A new scale exponent from a computed ball: its midpoint if the ball fixes the sign,
    else from its radius (the value is below it) so that the next tolerance is finer."""
    if not ball.is_finite():
        return previous
    if not ball.contains(0):
        return _scale_power(float(ball.mid()))
    radius = float(ball.rad())
    return _scale_power(radius * 2.0 ** -(goal // 2)) if radius > 0 else previous


def _certified_integrals(components, count: int, a, b, estimator: str, dps: int, rel_width,
                         estimates) -> list[Enclosure]:
    """Enclosures of ∫₀¹ f_k(θ) dθ for the ``count`` functions ``components(a, b, θ, analytic)``
    returns (each real on the real axis, analytic where e and its derivatives are).

    Two components share one complex integral (f_j·2^(k_j) + i·f_k·2^(k_k)); the
    scales 2^k ≈ 1/|∫f| come from float64 ``estimates`` (or 1) and make one
    absolute tolerance 2^-(goal+8) mean the same relative accuracy for each. A
    component that misses ``rel_width`` is recomputed (paired with another such one)
    at a higher working precision and a scale taken from its last enclosure.
    """
    scales = [_scale_power(x) for x in (estimates or [None] * count)]
    with ctx.workprec(64):
        a0, b0 = _parameters(a, b)
        if b0 > MAX_INTEGRAL_SCALE:
            raise InputError(f"θ-integrals (L, ∇L, ∇²L) are supported for b <= {MAX_INTEGRAL_SCALE:g}, got b={b}")
        bits = working_bits(dps, _magnitude(a0), _magnitude(b0))
    goal = _goal_bits(dps, rel_width)
    wanted = list(range(count))
    balls: list = [None] * count
    enclosures: list = [None] * count
    most_bits = _MAX_INTEGRAL_BITS_FACTOR * bits
    for _ in range(_MAX_INTEGRAL_ATTEMPTS):
        with ctx.workprec(bits):
            a_ball, b_ball = _parameters(a, b)
            pieces = _pieces(a_ball, b_ball, estimator, bits)
            weights = [arb(2) ** k for k in scales]
            for pair in (wanted[i:i + 2] for i in range(0, len(wanted), 2)):
                def integrand(t, analytic, pair=pair):
                    values = components(a_ball, b_ball, t, analytic)
                    out = values[pair[0]] * weights[pair[0]]
                    if len(pair) == 2:
                        out += acb(0, 1) * values[pair[1]] * weights[pair[1]]
                    return out

                total = _integrate(integrand, pieces, goal, arb(2) ** -(goal + 8))
                balls[pair[0]] = total.real / weights[pair[0]]
                if len(pair) == 2:
                    balls[pair[1]] = total.imag / weights[pair[1]]
        for k in wanted:
            enclosures[k] = Enclosure.from_ball(balls[k], prec_bits=bits, digits=dps)
        wanted = [k for k in range(count) if not enclosures[k].is_finite
                  or (rel_width is not None and enclosures[k].relative_radius > rel_width)]
        if not wanted or rel_width is None or bits >= most_bits:
            break
        bits = min(most_bits, max(_next_bits(bits, balls[k], rel_width) for k in wanted))
        for k in wanted:
            scales[k] = _rescaled(balls[k], goal, scales[k])
    return [require_relative_width(enclosure, rel_width) for enclosure in enclosures]


def certified_loss(a, b, *, estimator: str = "one-head", dps: int = 30, rel_width=None) -> Enclosure:
    """A certified enclosure of L(a, b) = ∫₀¹ ½ e(θ)² dθ (prior Uniform[0, 1]).

    Rigorous integration (``acb.integral``, honouring its ``analytic`` flag)
    on the model's breakpoint pieces. ``rel_width`` as in :func:`certified_error`.
    """
    dps = validate_dps(dps)
    rel_width = _validate_rel_width(rel_width)
    error = getattr(gen_arb, f"error_{_tag(estimator)}")
    estimate = _float_estimate(a, b, estimator)

    def components(a_ball, b_ball, t, analytic):
        e = error(a_ball, b_ball, t, analytic)
        return (e * e / 2,)

    (enclosure,) = _certified_integrals(components, 1, a, b, estimator, dps, rel_width,
                                        estimate[:1] if estimate else None)
    return enclosure


def certified_loss_gradient(a, b, *, estimator: str = "one-head", dps: int = 30,
                            rel_width=None) -> tuple[Enclosure, Enclosure]:
    """Certified enclosures of (∂L/∂a, ∂L/∂b) = ∫₀¹ e ∇e dθ.

    Both components come from one complex integral: the integrand
    e·(2^{k_a} ∂e/∂a + i·2^{k_b} ∂e/∂b) is analytic wherever e and ∇e are, and
    its integral along the real segment has the two (scaled) components as real
    and imaginary parts; 2^{k} ≈ 1/|component| (from a float64 estimate) gives
    both the same relative accuracy. A component that misses ``rel_width`` is
    recomputed at a higher precision.
    """
    dps = validate_dps(dps)
    rel_width = _validate_rel_width(rel_width)
    tag = _tag(estimator)
    error = getattr(gen_arb, f"error_{tag}")
    gradient = getattr(gen_arb, f"error_gradient_{tag}")
    estimate = _float_estimate(a, b, estimator)

    def components(a_ball, b_ball, t, analytic):
        e = error(a_ball, b_ball, t, analytic)
        g = gradient(a_ball, b_ball, t, analytic)
        return (e * g[0], e * g[1])

    return tuple(_certified_integrals(components, 2, a, b, estimator, dps, rel_width,
                                      estimate[1:] if estimate else None))


def certified_loss_hessian(a, b, *, estimator: str = "one-head", dps: int = 30,
                           rel_width=None) -> tuple[Enclosure, Enclosure, Enclosure]:
    """Certified enclosures of (∂²L/∂a², ∂²L/∂a∂b, ∂²L/∂b²) = ∫₀¹ (∇e ∇eᵀ + e ∇²e) dθ.

    Same rigorous integration as :func:`certified_loss_gradient`; the three
    integrands are analytic wherever e and its derivatives are. Tolerances are
    scaled by a float64 estimate of the Hessian (never part of the result).
    """
    dps = validate_dps(dps)
    rel_width = _validate_rel_width(rel_width)
    tag = _tag(estimator)
    gradient = getattr(gen_arb, f"error_gradient_{tag}")
    hessian = getattr(gen_arb, f"error_hessian_{tag}")
    error = getattr(gen_arb, f"error_{tag}")

    def components(a_ball, b_ball, t, analytic):
        e = error(a_ball, b_ball, t, analytic)
        g = gradient(a_ball, b_ball, t, analytic)
        h = hessian(a_ball, b_ball, t, analytic)
        return (g[0] * g[0] + e * h[0], g[0] * g[1] + e * h[1], g[1] * g[1] + e * h[2])

    return tuple(_certified_integrals(components, 3, a, b, estimator, dps, rel_width,
                                      _float_hessian_estimate(a, b, estimator)))


def _float_hessian_estimate(a, b, estimator):
    """(H_aa, H_ab, H_bb) in float64, only to scale tolerances (never part of a result)."""
    try:
        from numerics.population.quantities import loss_gradient_hessian_float64

        _, _, hessian = loss_gradient_hessian_float64(_as_float(a), _as_float(b), estimator=estimator)
        import numpy as np

        hessian = np.asarray(hessian, dtype=float)
        if hessian.shape == (2, 2):
            hessian = hessian[0, 0], hessian[0, 1], hessian[1, 1]
        return tuple(float(h) for h in hessian)
    except (ArithmeticError, ValueError, TypeError, ImportError):
        return None
