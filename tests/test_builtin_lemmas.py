"""Every built-in lemma of :mod:`stumpcheck.lemmas.builtin` gets a property test (its margin
is ≥ 0 on its domain), plus checks that each bound is not vacuous (it is nearly attained,
or fails when its constant is lowered) and that the certified level proves and refutes."""

from __future__ import annotations

import mpmath
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from hypothesis.errors import InvalidArgument

from stumpcheck.numerics.generated import asymptotics_numpy as derived
from stumpcheck.numerics.population.quantities import loss_and_gradient_float64
from stumpcheck.lemmas import builtin as bl
from stumpcheck import strategies as sc
from stumpcheck.lemmas.catalogue import registry
from stumpcheck.lemmas.check import check_lemma
from stumpcheck.lemmas import Lemma

_FAST = settings(max_examples=15, deadline=None, suppress_health_check=list(HealthCheck))


def _lemma(name: str) -> Lemma:
    return registry()[name]


def test_every_builtin_lemma_is_registered_with_a_reference():
    for name in bl.LEMMA_NAMES:
        entry = _lemma(name)
        assert isinstance(entry, Lemma) and entry.reference and entry.precision


#: lemmas whose margin builds corpora (O(n²) per size and seed): their 15-example property run is slow;
#: the default suite checks them at their verify budget below
_SLOW_LEMMAS = ("progress_along_error",)


@pytest.mark.parametrize("name", [pytest.param(n, marks=pytest.mark.slow) if n in _SLOW_LEMMAS else n
                                  for n in bl.LEMMA_NAMES])
@_FAST
@given(data=st.data())
def test_builtin_lemma_margin_is_nonnegative_on_its_domain(name, data):
    entry = _lemma(name)
    point = data.draw(entry.strategy(), label="point")
    with mpmath.workdps(30):
        assert entry.margin(**point) >= 0, point


# --------------------------------------------------------------------------------------
# the bounds are not vacuous


def test_bulk_error_bound_is_attained_when_the_left_mass_vanishes():
    """The bound drops only (1 − w₁)·v/(e^v − 1) and an e^{u−a} fraction of the left term:
    at b = 100, θ = 0.05, λ = 2 it is attained to ~e^{−97}: the margin (its SymPy expression, evaluated until
    two precisions agree) is about 7·10⁻⁴³."""
    with mpmath.workdps(30):
        margin = _lemma("bulk_error").margin(b=100.0, theta=0.05, excess=2.0)
    assert 0 < margin <= 1e-40


def test_bulk_error_sign_e_below_one_over_b():
    """The identity behind the bound says b·e − 1 < 0 everywhere: e(θ) < 1/b (checked at 60 digits)."""
    from stumpcheck.numerics.generated.population_mpmath import error_one_head

    with mpmath.workdps(60):
        for a, b, theta in [(12, 10, "0.5"), (3, 10, "0.2"), (150, 100, "0.9"), (-5, 1, "0.01")]:
            B = mpmath.mpf(b)
            assert B * error_one_head(mpmath.mpf(a), B, mpmath.mpf(theta)) < 1


def test_right_layer_bound_is_within_a_factor_two_and_a_half():
    """Its slack is the factor 2 ≥ 1/(1 − e^{−bθ}) and |v(1 − r) + rb| ≤ v + rb: at θ = 1 − 2/b,
    λ = 1 the ratio |e − e_R|/bound is above 0.4."""
    with mpmath.workdps(30):
        margin = _lemma("right_layer").margin(b=50.0, theta=1 - 2 / 50, excess=1.0)
    assert 0 <= margin <= 0.6


def test_right_layer_fails_with_a_too_small_precision():
    """The e^{−bθ} difference is invisible at 15 digits without the extra digits the lemma adds."""
    from stumpcheck.numerics.generated.population_mpmath import error_one_head

    layer = bl._right_layer_function()
    with mpmath.workdps(15):
        B, T = mpmath.mpf(100), mpmath.mpf("0.75")
        V, R = B * (1 - T), mpmath.exp(-1)
        diff = error_one_head(B + 1, B, T) - layer(1 / B, mpmath.exp(V), R, V)
        bound = 2 * mpmath.exp(-B * T) * R * (V + R * B) / (B * (mpmath.exp(V) - 1 + R) ** 2)
    assert abs(diff) > bound  # rounding noise, which is why the margin raises the precision


def test_leading_loss_next_term_is_the_derived_one():
    """b²·(L/L₀ − 1) → 2c₄ = 3/2 − 3ζ(3) (the ε⁴ term of the loss expansion): at b = 5000 within 0.02,
    and |2c₄| ≈ 2.106 is below the lemma's constant 3, which is therefore not vacuous at b = 20 (> 2.1)."""
    two_c4 = 1.5 - 3 * float(mpmath.zeta(3))
    for b, tol in ((5000.0, 0.02),):
        value, _ = loss_and_gradient_float64(float(derived.calibration_a(b)), b)
        scaled = b**2 * (value / float(derived.leading_loss(b)) - 1)
        assert abs(scaled - two_c4) < tol, scaled
    assert 2.1 < bl.LOSS_K - _lemma("leading_loss").margin(b=20.0, lam=0.0) < bl.LOSS_K


def test_progress_direction_deviation_is_order_one_over_b():
    """b·max deviation stays in (1, 5] from b = 20 to 5000: order exactly 1/b, not smaller."""
    for b in (20.0, 200.0, 5000.0):
        scaled = bl.PROGRESS_K - _lemma("progress_direction").margin(b=b, lam=0.0)
        assert 1 < scaled <= bl.PROGRESS_K, (b, scaled)


def test_interior_error_bound_is_certified_on_its_whole_domain():
    result = check_lemma(_lemma("interior_error_bound"), level="certified", quick=False)
    assert result.status == "PASS", result.figure
    assert result.evidence == "certified"
    summary = result.details["certified"]
    assert summary["status"] == "proved" and summary["whole_domain"] and summary["undecided_fraction"] == 0
    assert summary["domain"]["variables"] == {"b": ["20", "10000"], "lam": ["-1", "1"], "theta": ["0.05", "0.95"]}


def test_interior_error_bound_with_c_one_half_is_refuted_by_certification():
    from stumpcheck.numerics.certified.proofs.box_prover import Box, certify

    (a, b, theta) = bl._interior_boxes(quick=True)[1]
    certificate = certify("error_abs_le_c_over_b", Box(a=a, b=b, theta=theta), params={"c": "0.5"})
    assert certificate.status == "failed"


def test_interior_error_bound_is_nearly_attained_in_the_bulk():
    """b|e| = 1 in the bulk: the margin 2 − b|e| is 1 there (the bound has a factor-2 slack)."""
    margin = _lemma("interior_error_bound").margin(b=500.0, lam=0.0, theta=0.5)
    assert margin == pytest.approx(1.0, abs=1e-9)


def test_label_encoding_fails_without_halving_the_label_score():
    """Using label score a (not a/2) with ±1 labels doubles the gap: θ̂ changes, so the identity
    is specific to the common shift."""
    x = [0.1, 0.4, 0.6, 0.9]
    labels = [1 if xi >= 0.5 else 0 for xi in x]
    with mpmath.workdps(30):
        zero_one = bl.attention_average([3 * y - 2 * xi for y, xi in zip(labels, x)], x)
        wrong = bl.attention_average([3 * (2 * y - 1) - 2 * xi for y, xi in zip(labels, x)], x)
        assert abs(zero_one - wrong) > 0.01
        assert _lemma("label_encoding").margin(x=x, theta=0.5, a=3.0, b=2.0) >= 0


# --------------------------------------------------------------------------------------
# the public strategies module (the corpora strategy is new there)


@pytest.mark.parametrize("build", [
    lambda: sc.corpora(min_m=0),
    lambda: sc.corpora(min_n=5, max_n=4),
    lambda: sc.corpora(max_m=2.5),
    lambda: sc.corpora(min_seed=-1),
    lambda: sc.corpora(prior=(0.5, 0.5)),
    lambda: sc.corpora(prior=(0.0, 1.5)),
    lambda: sc.corpora(prior=[0.0, 1.0]),
])
def test_corpora_rejects_bad_arguments_eagerly(build):
    with pytest.raises(InvalidArgument):
        build()


@settings(max_examples=10, deadline=None)
@given(corpus=sc.corpora(min_m=2, max_m=5, min_n=3, max_n=7, prior=(0.25, 0.75)))
def test_corpora_draws_reproducible_corpora_of_the_drawn_size(corpus):
    from stumpcheck.numerics.corpus.corpora import make_corpus

    m, n = corpus.x.shape
    assert 2 <= m <= 5 and 3 <= n <= 7 and corpus.theta.shape == (m,)
    assert ((0.25 <= corpus.theta) & (corpus.theta <= 0.75)).all()
    again = make_corpus(m, n, seed=corpus.seed, prior=(0.25, 0.75))
    assert (again.x == corpus.x).all() and (again.theta == corpus.theta).all()


def test_tests_strategies_reexports_the_public_module():
    from tests import strategies as old

    assert set(old.__all__) == set(sc.__all__)
    assert all(getattr(old, name) is getattr(sc, name) for name in sc.__all__)


# --------------------------------------------------------------------------------------
# progress_along_error (C5's criterion as a property)


def test_progress_along_error_passes_at_the_quick_budget():
    entry = _lemma("progress_along_error")
    result = check_lemma(entry, max_examples=entry.max_examples, seed=0)
    assert result.status == "PASS", result.figure
    assert result.evidence == "sampled" and 0 <= result.details["min_margin"] <= 0.5
    point = result.details["argmin"]
    assert point["n"] in bl.ALONG_SIZES and 8 <= point["b"] <= point["n"] / 8


def _along_lemma(name, *, limit, domain):
    from stumpcheck.claims.c5 import along_rms_on_relation
    from stumpcheck.lemmas import lemma

    @lemma(name=name, statement=f"rms along ≤ {limit}", domain=domain, register_it=False, max_examples=20)
    def margin(n, b):
        return limit - along_rms_on_relation(n, b, seeds=bl.ALONG_SEEDS)

    return margin


def test_progress_along_error_with_an_impossible_limit_fails_at_the_shrunk_smallest_point():
    """rms along ≤ 0.01 is false everywhere (≈ 0.1 at m = n = 256, b = 8): the counterexample shrinks
    to the smallest size and a simple scale (Hypothesis shrinks the log-uniform b to 10.0)."""
    entry = _along_lemma("along_below_one_hundredth", limit=0.01, domain=lambda: bl._sizes_and_scales())
    result = check_lemma(entry, seed=0)
    assert result.status == "FAIL"
    counterexample = result.details["counterexample"]
    assert counterexample["n"] == 256 and 8 <= counterexample["b"] <= 16, counterexample
    assert result.details["counterexample_margin"] < 0 and "shrunk" in result.figure


def test_progress_along_error_beyond_its_scale_range_fails_at_a_large_scale():
    """Extended to b ∈ [8, 2n] the statement is false (rms along ≈ 0.7–1.3 at b ≥ n/2 for m = n = 256):
    Hypothesis finds a counterexample, and the shrunk one lies above the lemma's range b ≤ n/8."""
    entry = _along_lemma("along_up_to_twice_n", limit=0.5,
                         domain={"n": st.just(256), "b": sc.scales(min_value=8.0, max_value=512.0)})
    result = check_lemma(entry, seed=0)
    assert result.status == "FAIL", result.figure
    counterexample = result.details["counterexample"]
    assert counterexample["b"] > 256 / 8 and result.details["counterexample_margin"] < 0
    assert entry.margin(n=256, b=8.0) > 0


def test_label_encoding_symbolic_proof_covers_every_context_size():
    from stumpcheck.lemmas.certified_builtins import prove_label_encoding

    record = prove_label_encoding()
    assert record["status"] == "proved" and record["shift"] == "-a/2"
    assert record["general_n"]["difference"] == "0"
    assert [c["n"] for c in record["contexts"]] == [1, 2, 3, 4, 5, 6]
    assert all(c["difference"] == "0" for c in record["contexts"])
