"""The cancellation-free margins of bulk_error and right_layer: the SymPy identities, a 50-digit check at real
points against the model's own e, and the Arb proofs built on them (stumpcheck.theory.margin_identities)."""

from __future__ import annotations

import json

import mpmath
import pytest
import sympy as sp
from hypothesis import example, given, settings
from hypothesis import strategies as st

from stumpcheck.theory import margin_identities as mi
from stumpcheck.theory.symbols import r, u, v


def test_bulk_margin_is_the_left_softmax_mass():
    """Independent of the derivation: |b·e − 1|/bound = Z/(Z + rP), the mass right of θ, so the margin is
    rP/(Z + rP) (in the atoms Z = e^v − 1, P = 1 − e^{−u})."""
    identity = mi.bulk_error_identity()
    assert sp.cancel(identity.rewritten - mi.P * r / (mi.P * r + mi.Z)) == 0
    assert [s[2] for s in identity.signs] == ["−"]  # b·e − 1 < 0: e < 1/b in the bulk
    assert identity.strict_atoms() == (mi.P,)


def test_right_layer_margin_is_a_quotient_of_positive_polynomials():
    identity = mi.right_layer_identity()
    numerator, denominator = sp.fraction(sp.together(identity.rewritten))
    for part, atoms in ((numerator, (mi.Z, mi.R, r, u, v)), (denominator, (mi.Z, mi.P, r, u, v))):
        coefficients = sp.Poly(sp.expand(part), *atoms).coeffs()
        assert coefficients and all(c > 0 for c in coefficients)
    assert [s[2] for s in identity.signs] == ["−"]  # e < e_R in the right layer
    assert set(identity.strict_atoms()) == {mi.P, mi.R}


def test_a_false_bound_is_not_rewritten_into_a_positive_form():
    """Halving the bulk bound makes the lemma false (the margin is 1 − 2w₁): the derivation must refuse it."""
    halved = 1 - 2 * (1 - mi.stated_bulk_margin())
    with pytest.raises(ArithmeticError, match="not a quotient of positive polynomials"):
        mi._prove("halved_bulk", sp.expand(halved))


def _stated(name: str, a, b, theta):
    """The stated ratio margin from the model's generated mpmath e, at the current (high) precision."""
    from stumpcheck.numerics.generated.population_mpmath import error_one_head
    from stumpcheck.lemmas.builtin import _right_layer_function

    V, U, R = b * (1 - theta), b * theta, mpmath.exp(b - a)
    e = error_one_head(a, b, theta)
    if name == "bulk_error":
        return 1 - abs(b * e - 1) * -mpmath.expm1(-V) / ((V + U * R) * mpmath.exp(-V))
    Y = mpmath.exp(V)
    bound = 2 * mpmath.exp(-U) * R * (V + R * b) / (b * (Y - 1 + R) ** 2)
    return 1 - abs(e - _right_layer_function()(1 / b, Y, R, V)) / bound


def _rewritten(name: str, a, b, theta):
    margin = mi.identity_for(name).margin()
    return sp.lambdify((r, u, v), margin, modules="mpmath")(mpmath.exp(b - a), b * theta, b * (1 - theta))


@settings(max_examples=15, deadline=None)
@given(b=st.floats(1, 300), theta=st.floats(0.05, 0.95), lam=st.floats(-20, 30))
@example(b=40.0, theta=0.05, lam=10.0)     # a = 50: margin 1.2e-21
@example(b=300.0, theta=0.9, lam=0.0)      # margin 9e-14
def test_bulk_rewritten_margin_equals_the_stated_one_to_50_digits(b, theta, lam):
    _agree("bulk_error", b, theta, lam)


@settings(max_examples=15, deadline=None)
@given(b=st.floats(2, 300), theta=st.floats(0.5, 1.0), lam=st.floats(0, 30))
@example(b=300.0, theta=1.0, lam=0.0)
@example(b=2.0, theta=0.5, lam=30.0)
@example(b=2.0, theta=1.0, lam=15.0)
def test_right_layer_rewritten_margin_equals_the_stated_one_to_50_digits(b, theta, lam):
    _agree("right_layer", b, theta, lam)


def _agree(name, b, theta, lam):
    # the stated margin cancels: e^{−bθ}-small differences and margins down to 1e-21 need the extra digits
    with mpmath.workdps(60 + int((2 * b + abs(lam)) / 2.3)):
        B, T = mpmath.mpf(b), mpmath.mpf(theta)
        stated = _stated(name, B + lam, B, T)
    # the rewritten form is evaluated as SymPy prints it (not as a quotient of positive terms): 60 digits
    # leave room for its own rounding (at 50, b = 2, θ = 1, λ = 15 misses 1e-45 by 2.7×)
    with mpmath.workdps(60):
        rewritten = _rewritten(name, B + lam, B, T)
        assert rewritten > 0
        assert abs(stated - rewritten) <= mpmath.mpf(10) ** -45 * abs(rewritten)


def test_tight_points_have_the_stated_tiny_margins():
    with mpmath.workdps(50):
        assert _rewritten("bulk_error", mpmath.mpf(50), mpmath.mpf(40), mpmath.mpf("0.05")) == pytest.approx(
            1.2e-21, rel=0.05)
        assert _rewritten("bulk_error", mpmath.mpf(300), mpmath.mpf(300), mpmath.mpf("0.9")) == pytest.approx(
            9.3e-14, rel=0.05)


@pytest.mark.parametrize("name", ["bulk_error", "right_layer"])
def test_rewritten_margin_is_also_proved_by_bisection_on_a_small_box(name):
    """A cross-check of the symbolic positivity: Arb proves the whole rewritten margin > 0 on the quick box."""
    from stumpcheck.numerics.certified.proofs.margins import Margin
    from stumpcheck.numerics.certified.proofs.margin_proof import prove
    from stumpcheck.lemmas.certified_builtins import quick_domain

    margin = Margin.from_sympy(mi.identity_for(name).margin(), coordinates="excess")
    domain = quick_domain(name)
    if name == "right_layer":
        domain = domain.split("theta", ["0.95"])[1]
    proof = prove(margin, domain, strict=True, max_boxes=3000)
    assert proof.status == "proved", proof.summary()


@pytest.mark.parametrize("name", ["bulk_error", "right_layer"])
def test_whole_domain_certificate_records_the_identity_and_rechecks(name, tmp_path):
    from stumpcheck.numerics.certified.certificates.lemma_certificate import read_certificate
    from stumpcheck.numerics.certified.certificates.lemma_recheck import recheck
    from stumpcheck.lemmas.check import check_lemma
    from stumpcheck.lemmas import registered

    import stumpcheck.lemmas.catalogue  # noqa: F401 - registers the built-ins

    result = check_lemma(registered()[name], level="certified", out_dir=str(tmp_path), quick=True)
    assert result.status == "PASS" and result.evidence == "certified"
    assert result.details["evidence_reached"] == "certified"
    summary = result.details["certified"]
    assert summary["whole_domain"] and summary["undecided_fraction"] == 0.0 and summary["boxes"] > 0
    path = tmp_path / f"{name}.certificate.json"
    document = read_certificate(path)
    identity = document["identity"]
    assert identity["rewritten_margin"]["srepr"] == sp.srepr(mi.identity_for(name).margin())
    assert "cancel(stated − rewritten) == 0" in identity["proved_by"]
    assert identity["interval_part"].startswith(sp.sstr(mi.identity_for(name).atom_margin()))
    bits = document["prec_bits"] + 40
    passed = recheck(document, prec_bits=bits)
    assert passed.passed and "the symbolic identity re-derives (SymPy) from its stated margin" in passed.notes
    edited = json.loads(json.dumps(document))
    edited["identity"]["rewritten_margin"]["in_atoms"] = "1"
    tampered = tmp_path / "tampered.json"
    tampered.write_text(json.dumps(edited), encoding="utf-8")
    assert "digest does not match" in recheck(read_certificate(tampered), prec_bits=bits).message
    # a consistent forgery (digest recomputed): the identity is re-derived, and a stated margin that is not
    # the recorded one's source, or a certificate margin that is not its atom margin, is caught
    from stumpcheck.numerics.certified.certificates.lemma_certificate import digest

    other = "right_layer" if name == "bulk_error" else "bulk_error"
    for field, value in (("stated_margin", mi.identity_for(other).record()["stated_margin"]),
                         ("rewritten_margin", mi.identity_for(other).record()["rewritten_margin"])):
        forged = json.loads(json.dumps(document))
        forged["identity"][field] = value
        forged["digest"] = digest(forged)
        outcome = recheck(forged, prec_bits=bits)
        assert not outcome.passed and "identity does not re-derive" in outcome.message, outcome.message
