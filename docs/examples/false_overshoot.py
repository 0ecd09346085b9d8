"""A false lemma: "the population estimator overshoots by at least 1/b", b·e(θ) ≥ 1, near the calibration relation.

The bulk law e = 1/b makes it plausible, but the mixture identity b·e − 1 = −[w·v/(e^v − 1) +
(1 − w)·u/(1 − e^{−u})] ≤ 0 says the opposite: b·e ≤ 1, with a gap of order (v + u·r)e^{−v}, which is
visible at small b towards the right end of the bulk (v = b(1 − θ) of a few units). The prover returns
a box there where the margin b·e − 1 is certainly negative.

    stumpcheck verify --lemma docs/examples/false_overshoot.py:overshoot_at_least_one_over_b --certified
"""

from hypothesis import strategies as st

from stumpcheck.numerics.certified.proofs.domains import Domain
from stumpcheck.numerics.certified.proofs.margins import Margin
from stumpcheck.numerics.generated import asymptotics_numpy as derived
from stumpcheck.numerics.generated import population_numpy as gen_np
from stumpcheck.lemmas import certified, lemma
from stumpcheck.strategies import scales, thresholds

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
    a = float(derived.calibration_a(b)) + lam
    return float(b * gen_np.error_one_head(a, b, theta) - 1.0)
