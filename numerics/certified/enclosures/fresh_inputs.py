"""Validated inputs of the exact fresh-context risk: a, b (numbers, balls or intervals), θ, N, estimator, dps.

Every argument of :func:`~stumpcheck.numerics.certified.enclosures.fresh_risk.fresh_context_risk` is
checked here before any work, and bad input is an
:class:`~stumpcheck.numerics.precision.InputError` with one line saying what is wrong. The
parameters are kept as given and turned into Arb balls at each working precision
(:meth:`RiskInputs.balls`), so that a decimal such as ``"0.4"`` is re-read, not rounded once.
"""

from __future__ import annotations

import math
import numbers
from dataclasses import dataclass

from flint import arb, ctx

from stumpcheck.numerics.certified.enclosures.balls import ESTIMATORS, to_arb
from stumpcheck.numerics.certified.enclosures.pointwise import _unit_ball
from stumpcheck.numerics.precision import InputError, finite_float, validate_dps

__all__ = ["RISK_ESTIMATORS", "MAX_N", "MAX_SCORE", "RiskInputs", "validate_inputs", "parameter_ball"]

#: the estimators whose exact risk is computed (averaged: refused, see :func:`validate_inputs`)
RISK_ESTIMATORS = ("one-head", "reflected", "pooled")
#: largest context size
MAX_N = 10 ** 9
#: largest |a| and b (tested up to 10⁸; the working precision grows like log₂(|a| + b))
MAX_SCORE = 10 ** 8

_AVERAGED = ("the averaged estimator is not supported: its MSE needs the cross moment E[(U/V)(U'/V')] of two "
             "heads with different weights, a two-dimensional s-integral (bias and MSE of one-head and "
             "reflected are available)")


def parameter_ball(value, name: str) -> arb:
    """A ball containing ``value`` at the current precision: a number, an arb ball, or an interval (lo, hi)."""
    if isinstance(value, (tuple, list)):
        if len(value) != 2:
            raise InputError(f"{name} as an interval must be (lo, hi), got {value!r:.60}")
        lo, hi = to_arb(value[0], f"{name} lo"), to_arb(value[1], f"{name} hi")
        if not lo.lower() <= hi.upper() or (lo > hi):
            raise InputError(f"{name} interval needs lo <= hi, got ({value[0]}, {value[1]})")
        return arb(lo.lower()).union(arb(hi.upper()))
    if isinstance(value, numbers.Integral) and not isinstance(value, (bool, int)):
        value = int(value)  # numpy integers
    elif isinstance(value, numbers.Real) and not isinstance(value, (bool, int, float)) and not hasattr(value, "_mpf_") \
            and type(value).__module__.startswith("numpy"):
        value = finite_float(value, name)  # numpy floats of other widths
    return to_arb(value, name)


@dataclass(frozen=True)
class RiskInputs:
    """The validated arguments (a, b, θ kept as given; N, estimator, dps, rel_width checked)."""

    a: object
    b: object
    theta: object
    N: int
    estimator: str
    dps: int
    rel_width: float | None
    is_box: bool

    def balls(self) -> tuple[arb, arb, arb]:
        """a, b and θ as balls at the current ``flint.ctx.prec`` (θ cut back to [0, 1])."""
        return parameter_ball(self.a, "a"), parameter_ball(self.b, "b"), _unit_ball(self.theta, "theta")

    def text(self, name: str) -> str:
        """A parameter as text: the decimal as given, a ball by Arb, an interval as "[lo, hi]"."""
        value = getattr(self, name)
        if isinstance(value, (tuple, list)):
            return f"[{value[0]}, {value[1]}]"
        if isinstance(value, arb):
            return value.str(20, radius=True)
        return str(value).strip()


def _context_size(N) -> int:
    if isinstance(N, bool) or not isinstance(N, numbers.Integral):
        raise InputError(f"N must be an integer context size, got {N!r:.60}")
    N = int(N)
    if not 1 <= N <= MAX_N:
        raise InputError(f"N must lie in [1, {MAX_N}], got {N}")
    return N


def validate_inputs(a, b, theta, N, *, estimator: str, dps, rel_width) -> RiskInputs:
    """Check every argument of the exact fresh-context risk; return them as :class:`RiskInputs`."""
    dps = validate_dps(dps)
    from stumpcheck.numerics.certified.enclosures.fresh_segments import POOLED_ENVELOPE

    if not isinstance(estimator, str) or (estimator not in ESTIMATORS and estimator != POOLED_ENVELOPE):
        raise InputError(f"unknown estimator {estimator!r:.40}; expected one of {', '.join(RISK_ESTIMATORS)}")
    if estimator == "averaged":
        raise InputError(_AVERAGED)
    N = _context_size(N)
    if rel_width is not None:
        rel_width = finite_float(rel_width, "rel_width", positive=True)
        if not rel_width < 1:
            raise InputError(f"rel_width must be < 1 (a relative radius), got {rel_width}")
    if isinstance(theta, (tuple, list)) or (isinstance(theta, arb) and not theta.rad().is_zero()):
        raise InputError("theta must be a number in [0, 1] (the segments of the weight depend on it), "
                         f"got {theta!r:.60}")
    with ctx.workprec(64):
        a_ball, b_ball = parameter_ball(a, "a"), parameter_ball(b, "b")
        _unit_ball(theta, "theta")
        if not b_ball > 0:
            raise InputError(f"b must be > 0 (the attention scale), got {b!r:.60}")
        if not (abs(a_ball) <= MAX_SCORE and b_ball <= MAX_SCORE):
            raise InputError(f"|a| and b must be at most {MAX_SCORE:.0e} (the range this function is tested on), "
                             f"got a={a!r:.40}, b={b!r:.40}")
    is_box = any(isinstance(v, (tuple, list)) or (isinstance(v, arb) and not v.rad().is_zero()) for v in (a, b))
    return RiskInputs(a=a, b=b, theta=theta, N=N, estimator=estimator, dps=dps, rel_width=rel_width, is_box=is_box)


def digits_for(relative_radius: float, dps: int) -> int:
    """Significant digits worth printing for a ball of this relative radius: its correct digits plus 2, at most dps."""
    if not math.isfinite(relative_radius):
        return 3
    if relative_radius <= 0:
        return dps
    return max(3, min(dps, math.ceil(-math.log10(relative_radius)) + 2))
