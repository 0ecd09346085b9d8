"""A lemma proved over a whole domain: in the bulk, e(θ) falls with the attention scale at least as fast as 1/(2b²).

The bulk law e = 1/b + O((v + u·r)e^{−v}) suggests ∂e/∂b ≈ −1/b²; the lemma states half of that,
−b²·∂e/∂b ≥ 1/2, for θ ∈ [0.2, 0.8], b ∈ [20, 30] and a within 1 of the calibration relation
(a = calibration_a(b) + λ, |λ| ≤ 1). It is not among the built-in lemmas.

    stumpcheck verify --lemma docs/examples/bulk_slope.py:error_slope_in_the_bulk --certified
    stumpcheck recheck stumpcheck-report/error_slope_in_the_bulk.certificate.json
"""

import math

import mpmath
from hypothesis import strategies as st

from stumpcheck.api import Domain, Margin, certified, error_gradient, lemma
from stumpcheck.strategies import scales, thresholds

#: ρ₁ = 3/2 + π²/3 − 3ζ(3): the calibration relation a*(b) = b + 2 log b − ρ₁/b (docs/derivations.md)
RHO1 = float(mpmath.mpf(3) / 2 + mpmath.pi ** 2 / 3 - 3 * mpmath.zeta(3))


def calibration_a(b):
    return b + 2 * math.log(b) - RHO1 / b


#: the certified margin: SymPy text in the model's symbols (e_b is ∂e/∂b of the one-head estimator)
SLOPE_MARGIN = "-b**2*e_b - 1/2"
DOMAIN = {"b": ("20", "30"), "lam": ("-1", "1"), "theta": ("0.2", "0.8")}


def slope_margin():
    return Margin.from_sympy(SLOPE_MARGIN, coordinates="calibration", name="error_slope_in_the_bulk")


def slope_domain():
    return Domain(dict(DOMAIN), coordinates="calibration")


@lemma(
    name="error_slope_in_the_bulk",
    statement="−b²·∂e/∂b ≥ 1/2 for θ ∈ [0.2, 0.8], b ∈ [20, 30], a = calibration_a(b) + λ, |λ| ≤ 1",
    domain={
        "b": scales(min_value=20.0, max_value=30.0),
        "lam": st.floats(min_value=-1.0, max_value=1.0),
        "theta": thresholds(min_value=0.2, max_value=0.8),
    },
    evidence=("sampled", "certified"),
    certify=certified(slope_margin, slope_domain),
    reference="bulk law e = 1/b, so ∂e/∂b ≈ −1/b²",
    tolerance="margin −b²·∂e/∂b − 1/2 >= 0",
    precision="float64 (sampled); Arb balls (certified)",
)
def error_slope_in_the_bulk(b, lam, theta):
    a = calibration_a(b) + lam
    return float(-b * b * error_gradient(a, b, theta, dps=None)[1] - 0.5)
