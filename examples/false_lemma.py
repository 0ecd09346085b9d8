"""A deliberately false lemma: |e(θ)| ≤ 0.5/b in the interior near the calibration relation.

In the bulk e(θ) = 1/b (up to exponentially small terms), so b·|e| ≈ 1 > 0.5
everywhere in the interior: ``stumpcheck verify --lemma
examples/false_lemma.py:half_over_b`` exits 1 and prints the shrunk
counterexample and the seed that replays it. (The true bound with c = 2 is the
built-in lemma ``interior_error_bound``, also certified on boxes.)
"""

import math

import mpmath
from hypothesis import strategies as st

from stumpcheck.api import error, lemma
from stumpcheck.strategies import scales, thresholds

#: ρ₁ = 3/2 + π²/3 − 3ζ(3): the calibration relation a*(b) = b + 2 log b − ρ₁/b (docs/derivations.md)
RHO1 = float(mpmath.mpf(3) / 2 + mpmath.pi ** 2 / 3 - 3 * mpmath.zeta(3))


def calibration_a(b):
    return b + 2 * math.log(b) - RHO1 / b


@lemma(
    name="half_over_b",
    statement="|e(θ)| ≤ 0.5/b for θ ∈ [0.05, 0.95], b ∈ [20, 1e4], |a − a*(b)| ≤ 1 (a* the calibration relation)",
    domain={
        "b": scales(min_value=20.0, max_value=1e4),
        "offset": st.floats(min_value=-1.0, max_value=1.0),
        "theta": thresholds(min_value=0.05, max_value=0.95),
    },
    reference="deliberately false (bulk law e = 1/b)",
    tolerance="margin 0.5 − b|e(θ)| >= 0 (float64)",
    precision="float64",
)
def half_over_b(b, offset, theta):
    a = calibration_a(b) + offset
    return float(0.5 - b * abs(error(a, b, theta, dps=None)))
