"""High-precision evidence that can see its own error: two independent evaluations, raised until they agree.

A value computed at d digits is *verified to k digits* when a second,
independent evaluation agrees with it to k significant digits,

    k = −log₁₀(|x − y| / |y|),

where the second evaluation runs at d' = d + 10 + ⌊d/10⌋ digits **and** with a
different quadrature (every breakpoint piece cut in two), so that a rounding
or quadrature error of the first cannot repeat itself in the second. Inputs
are never rounded to the working precision of either: decimals are read
exactly by the callee (θ near 1 keeps 1 − θ exact).

:func:`verified_evaluation` raises the working precision (Ziv's strategy: by
the digits that were missing plus 10) until every component agrees to the
requested digits, within a budget of working digits; what it cannot verify is
reported per component, never hidden.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass

import mpmath

from stumpcheck.numerics.precision import agreeing_digits, guard_bits, validate_dps

__all__ = ["VerifiedEvaluation", "verified_evaluation", "check_digits"]

_BITS_PER_DIGIT = 3.3219280948873626


def check_digits(dps: int) -> int:
    """The precision of the second evaluation: dps + 10 + ⌊dps/10⌋ digits."""
    return dps + 10 + dps // 10


@dataclass(frozen=True)
class VerifiedEvaluation:
    """Values with, per component, the digits two independent evaluations share.

    ``values`` come from the more precise evaluation; ``digits[i]`` is the
    agreement of component i (``math.inf`` when both are identical);
    ``verified[i]`` = min(requested, ⌊digits[i]⌋) is how many significant
    digits may be printed; ``working_dps`` and ``check_dps`` are the
    precisions of the last attempt. ``complete`` is True when every component
    has all ``requested`` digits.
    """

    values: tuple
    digits: tuple
    requested: int
    working_dps: int
    check_dps: int
    attempts: int
    evidence: str = "high-precision"

    @property
    def verified(self) -> tuple:
        return tuple(self.requested if d >= self.requested else max(0, int(math.floor(d))) for d in self.digits)

    @property
    def complete(self) -> bool:
        return all(k >= self.requested for k in self.verified)

    @property
    def agreeing_digits(self) -> float:
        return min(self.digits)


def _at(dps: int, compute, subdivide: int) -> tuple:
    with mpmath.workprec(int(dps * _BITS_PER_DIGIT) + guard_bits(dps)):
        return tuple(compute(subdivide))


def verified_evaluation(compute, dps: int, *, max_dps: int, progress=None,
                        time_budget: float = math.inf) -> VerifiedEvaluation:
    """Evaluate ``compute(subdivide)`` (a tuple of mpf at the current precision) until verified.

    First at ``dps`` digits (``subdivide=1``) and at :func:`check_digits` with
    ``subdivide=2``; while some component agrees to fewer than ``dps`` digits,
    the working precision is raised by the missing digits + 10 (at least
    doubling the margin each time), up to ``max_dps`` working digits.
    ``progress(message)`` is called before each evaluation (for long ones).
    No new attempt starts once ``time_budget`` seconds have passed (the first
    always runs): the result then reports what the last attempt verified.
    """
    dps = validate_dps(dps)
    start = time.monotonic()
    work = dps
    attempts = 0
    while True:
        attempts += 1
        check = check_digits(work)
        if progress:
            progress(f"evaluating at {work} digits")
        values = _at(work, compute, 1)
        if progress:
            progress(f"independent check at {check} digits (pieces halved)")
        reference = _at(check, compute, 2)
        with mpmath.workprec(int(check * _BITS_PER_DIGIT) + guard_bits(check)):
            digits = tuple(agreeing_digits(v, r) for v, r in zip(values, reference))
        result = VerifiedEvaluation(values=reference, digits=digits, requested=dps, working_dps=work,
                                    check_dps=check, attempts=attempts)
        if result.complete or work >= max_dps or time.monotonic() - start > time_budget:
            return result
        missing = dps - max(0.0, min(digits))
        work = min(max_dps, work + max(int(math.ceil(missing)) + 10, work - dps + 10))
