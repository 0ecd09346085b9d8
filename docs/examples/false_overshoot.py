"""A false lemma: "the population estimator overshoots by at least 1/b", b·e(θ) ≥ 1, near the calibration relation.

The bulk law e = 1/b makes it plausible, but the mixture identity b·e − 1 = −[w·v/(e^v − 1) +
(1 − w)·u/(1 − e^{−u})] ≤ 0 says the opposite: b·e ≤ 1, with a gap of order (v + u·r)e^{−v}, which is
visible at small b towards the right end of the bulk (v = b(1 − θ) of a few units). The prover returns
a box there where the margin b·e − 1 is certainly negative.

    stumpcheck verify --lemma docs/examples/false_overshoot.py:overshoot_at_least_one_over_b --certified
"""

import math

import mpmath
from hypothesis import strategies as st

from stumpcheck.api import Domain, Margin, certified, error, lemma
from stumpcheck.strategies import scales, thresholds

#: ρ₁ = 3/2 + π²/3 − 3ζ(3): the calibration relation a*(b) = b + 2 log b − ρ₁/b (docs/derivations.md)
RHO1 = float(mpmath.mpf(3) / 2 + mpmath.pi ** 2 / 3 - 3 * mpmath.zeta(3))


def calibration_a(b):
    return b + 2 * math.log(b) - RHO1 / b

OVERSHOOT_MARGIN = "b*e - 1"
DOMAIN = {"b": ("20", "30"), "lam": ("-1", "1"), "theta": ("0.2", "0.8")}


def overshoot_margin():
    return Margin.from_sympy(OVERSHOOT_MARGIN, coordinates="calibration", name="overshoot_at_least_one_over_b")


def overshoot_domain():
    return Domain(dict(DOMAIN), coordinates="calibration")


@lemma(
    name="overshoot_at_least_one_over_b",
    statement="b·e(θ) ≥ 1 for θ ∈ [0.2, 0.8], b ∈ [20, 30], a = calibration_a(b) + λ, |λ| ≤ 1 (false)",
    domain={
        "b": scales(min_value=20.0, max_value=30.0),
        "lam": st.floats(min_value=-1.0, max_value=1.0),
        "theta": thresholds(min_value=0.2, max_value=0.8),
    },
    evidence=("sampled", "certified"),
    certify=certified(overshoot_margin, overshoot_domain),
    reference="deliberately false: the mixture identity gives b·e ≤ 1",
    tolerance="margin b·e(θ) − 1 >= 0",
    precision="float64 (sampled); Arb balls (certified)",
)
def overshoot_at_least_one_over_b(b, lam, theta):
    a = calibration_a(b) + lam
    return float(b * error(a, b, theta, dps=None) - 1.0)
