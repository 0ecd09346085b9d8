"""L, ∇L and ∇²L to ``dps`` correctly rounded digits, verified by their certified enclosures, and cached.

An enclosure [lower, upper] of an exact value v verifies k significant digits when lower and upper round to
the same k-digit decimal (:func:`correctly_rounded`): rounding is monotone, so v rounds to it too, and that
decimal is the correct rounding of v. :func:`loss`, :func:`loss_gradient` and :func:`loss_hessian` compute the
θ-integrals as rigorous Arb enclosures (:mod:`stumpcheck.numerics.certified.enclosures.theta_integrals`) at
dps + 5 digits with relative width 10^−(dps+1), and, for ∇L and ∇²L, the working bits that resolve the
softmax switch layer at 1 − θ* (:func:`switch_layer_bits`); a component whose ball does not fix dps digits
is computed again at twice the digits. What comes back is the verified decimal as an :class:`mpmath.mpf`
at dps digits. Should the balls still not fix dps digits (a value that is 0, a prior whose ends are not
exact binary numbers), the value comes from the mpmath tanh-sinh quadrature of
:mod:`stumpcheck.numerics.population.quantities` instead (level *high-precision*, not verified).

Results are cached on the exact inputs (``functools.lru_cache``: a, b, the estimator, the prior and dps;
equal numbers are equal keys), so a repeated call costs a dictionary look-up.
"""

from __future__ import annotations

import math
import sys
from decimal import Decimal
from functools import lru_cache

import mpmath

from stumpcheck.numerics.certified.enclosures.balls import EnclosureTooWide
from stumpcheck.numerics.certified.enclosures.theta_integrals import (_prior_ends, certified_loss,
                                                                      certified_loss_gradient, certified_loss_hessian)
from stumpcheck.numerics.population import quantities as population
from stumpcheck.numerics.precision import MAX_DPS, InputError, validate_dps

__all__ = ["loss", "loss_gradient", "loss_hessian", "correctly_rounded", "switch_layer_bits", "GUARD_DIGITS",
           "LAYER_GUARD_BITS"]

#: Digits of the enclosures beyond the requested ones (so that a ball fixes the requested rounding).
GUARD_DIGITS = 5
#: Bits added beyond those of 1/(1 − θ*) (the layer's width and the integrand's own cancellations).
LAYER_GUARD_BITS = 16
_CACHE_SIZE = 1024


def correctly_rounded(enclosure, digits: int) -> tuple[str, int]:
    """(text, k): the largest k ≤ ``digits`` for which both ends of ``enclosure`` give the same k-digit
    decimal, and that decimal; ("", 0) if none (e.g. a ball containing 0 and more)."""
    mid, rad = enclosure.mid, enclosure.rad
    if not (enclosure.is_finite and mpmath.isfinite(mid) and mpmath.isfinite(rad)):
        return "", 0
    # the ends exactly, from the exact binary midpoint and radius
    lower, upper = mpmath.fsub(mid, rad, exact=True), mpmath.fadd(mid, rad, exact=True)
    for k in range(digits, 0, -1):
        low = mpmath.nstr(lower, k, strip_zeros=False, min_fixed=-3, max_fixed=3)
        if low == mpmath.nstr(upper, k, strip_zeros=False, min_fixed=-3, max_fixed=3):
            return low, k
    return "", 0


def _mpf(value):
    return mpmath.mpf(str(value).strip()) if isinstance(value, (str, Decimal)) else mpmath.mpf(value)


def switch_layer_bits(a, b) -> int:
    """Bits the θ-integrals' working precision needs beyond the goal: for a θ-ball to resolve the one-head
    switch at 1 − θ* (0 away from θ = 1), and at small b the log₂(1/b) bits that ∂L/∂a = O(b) loses to
    cancellation."""
    small_b = max(0, math.ceil(-math.log2(float(b)))) + LAYER_GUARD_BITS if float(b) < 1 else 0
    return max(small_b, _layer_bits(a, b))


def _layer_bits(a, b) -> int:
    from stumpcheck.numerics.population.quadrature import transition_point

    with mpmath.workprec(80):
        _, rest, _ = transition_point(_mpf(a), _mpf(b))
        if not rest > 0:
            return 0
        bits = -math.floor(float(mpmath.log(rest, 2)))
    return bits + LAYER_GUARD_BITS if bits > 8 else 0


def _relative_width(digits: int) -> float:
    """10^−(digits+1), or the smallest normal float64 where that underflows (digits ≥ 307)."""
    return max(10.0 ** -(digits + 1), sys.float_info.min)


def _enclosures(quantity: str, a, b, estimator: str, prior, work: int, digits: int) -> list:
    width = _relative_width(digits)
    if quantity == "loss":
        return [certified_loss(a, b, estimator=estimator, dps=work, rel_width=width, prior=prior)]
    compute = certified_loss_gradient if quantity == "gradient" else certified_loss_hessian
    return list(compute(a, b, estimator=estimator, dps=work, rel_width=width, prior=prior,
                        extra_bits=switch_layer_bits(a, b)))


@lru_cache(maxsize=_CACHE_SIZE)
def _verified(quantity: str, a, b, estimator: str, prior: tuple, dps: int) -> tuple | None:
    """The components' verified dps-digit decimals, or None when the balls do not fix them."""
    try:
        _prior_ends(prior)
    except InputError:  # a prior end that is not an exact binary number: no exact θ-interval to integrate on
        return None
    decimals = [len(Decimal(str(v).strip()).as_tuple().digits) for v in (a, b) if isinstance(v, (str, Decimal))]
    work = min(MAX_DPS, max([dps + GUARD_DIGITS] + [d + 10 for d in decimals]))
    for attempt in (work, min(MAX_DPS, 2 * work)):
        try:
            values = _enclosures(quantity, a, b, estimator, prior, attempt, dps)
        except EnclosureTooWide:
            continue
        rounded = [correctly_rounded(value, dps) for value in values]
        if all(k == dps for _, k in rounded):
            return tuple(text for text, _ in rounded)
    return None


_FALLBACK = {"loss": population.loss, "gradient": population.loss_gradient, "hessian": population.loss_hessian}


def _value(quantity: str, a, b, estimator: str, prior, dps: int):
    dps = validate_dps(dps)
    population.check_parameters(a, b, prior=prior)
    population._tag(estimator)
    if isinstance(a, bool) or isinstance(b, bool):
        raise InputError("a and b must be numbers, not booleans")
    prior = tuple(prior)
    try:
        texts = _verified(quantity, a, b, estimator, prior, dps)
    except TypeError:  # an unhashable input (a 0-d array, …): computed without the cache
        texts = _verified.__wrapped__(quantity, a, b, estimator, prior, dps)
    with mpmath.workdps(dps):
        if texts is None:
            value = _FALLBACK[quantity](a, b, estimator=estimator, prior=prior)
            return tuple(+v for v in value) if isinstance(value, tuple) else +value
        values = tuple(mpmath.mpf(text) for text in texts)
    return values[0] if quantity == "loss" else values


def loss(a, b, *, estimator: str = "one-head", prior=(0, 1), dps: int = 30):
    """L(a, b) = (u − l)⁻¹ ∫ₗᵘ ½ e(θ)² dθ as an :class:`mpmath.mpf`: the dps-digit correct rounding that its
    certified enclosure verifies (the mpmath quadrature where none does)."""
    return _value("loss", a, b, estimator, prior, dps)


def loss_gradient(a, b, *, estimator: str = "one-head", prior=(0, 1), dps: int = 30):
    """(∂L/∂a, ∂L/∂b), each the dps-digit correct rounding its certified enclosure verifies."""
    return _value("gradient", a, b, estimator, prior, dps)


def loss_hessian(a, b, *, estimator: str = "one-head", prior=(0, 1), dps: int = 30):
    """(∂²L/∂a², ∂²L/∂a∂b, ∂²L/∂b²), each the dps-digit correct rounding its certified enclosure verifies."""
    return _value("hessian", a, b, estimator, prior, dps)
