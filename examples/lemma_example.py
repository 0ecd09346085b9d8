"""A user lemma: in the interior, the population estimator overshoots once a ≥ b + 2 log b.

Statement: for b ∈ [10, 10⁴], a ≥ b + 2 log b (up to 100 more) and θ ∈ [0.05, 0.95],
the population error e(θ) = θ̂∞ − θ is positive. The margin is b·e(θ): positive
where the statement holds, and its size is how much the estimator overshoots in
units of 1/b (about 1 in the bulk, where e = 1/b).

Why it should hold: writing θ̂∞ as a mixture of the softmax mass left of θ
(weight 1 − w₁) and right of θ (weight w₁) gives the exact identity
b·e − 1 = −[w₁·v/(e^v − 1) + (1 − w₁)·u/(1 − e^{−u})] with v = b(1 − θ),
u = bθ; with a ≥ b + 2 log b the left mass is at most e^{u−a}/(1 − e^{−v}),
small enough that the right segment wins. It needs b large enough: with
b ∈ [1, 10] the same search finds b = 1, a = 1, θ = 0.75, where b·e ≈ −0.23.

Check it with:

    stumpcheck verify --lemma examples/lemma_example.py:overshoot_in_the_interior
"""

import math

from hypothesis import strategies as st

from stumpcheck.api import error, lemma
from stumpcheck.strategies import scales, thresholds


@lemma(
    name="overshoot_in_the_interior",
    statement="e(θ) > 0 for θ ∈ [0.05, 0.95] when b ∈ [10, 1e4] and a − (b + 2 log b) ∈ [0, 100]",
    domain={
        "b": scales(min_value=10.0, max_value=1e4),
        "extra": st.floats(min_value=0.0, max_value=100.0),
        "theta": thresholds(min_value=0.05, max_value=0.95),
    },
    evidence=("sampled",),
    reference="examples/lemma_example.py (mixture identity for b·e − 1)",
    tolerance="margin b·e(θ) > 0 (float64)",
    precision="float64",
)
def overshoot_in_the_interior(b, extra, theta):
    a = b + 2 * math.log(b) + extra
    return float(b * error(a, b, theta, dps=None))
