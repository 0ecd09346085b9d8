"""The Taylor-form enclosures of the θ-integral lemmas (leading_loss, progress_direction) and their stored forms.

The enclosure of a box must contain the margin at every point of it: checked against an independent
point value (the closed-form θ-integral of L, or the generated ∇L, by ``acb.integral`` at a point, with
the margin formed here in ball arithmetic), at random points of random boxes of the lemmas' domain.
"""

from __future__ import annotations

import json
from fractions import Fraction

import pytest
from flint import arb, ctx
from hypothesis import given, settings
from hypothesis import strategies as st

from stumpcheck.numerics.certified.proofs import margin_taylor
from stumpcheck.numerics.certified.enclosures.theta_integrals import certified_loss, certified_loss_gradient
from stumpcheck.lemmas.certified_builtins import TAYLOR_ORDERS, certified_specs
from stumpcheck.theory.taylor_codegen import form_key


def _calibration_a(b: arb) -> arb:
    rho1 = -3 * arb(3).zeta() + arb(3) / 2 + arb.pi() ** 2 / 3
    return b + 2 * b.log() - rho1 / b


def _ball(enclosure) -> arb:
    return arb(str(enclosure.lower)).union(arb(str(enclosure.upper)))


def _independent_margin(name: str, b: Fraction) -> arb:
    """The lemma's margin at the point b (lam = 0), from certified_loss / certified_loss_gradient."""
    with ctx.workprec(160):
        bb = arb(b.numerator) / b.denominator
        a = _calibration_a(bb)
        if name == "leading_loss":
            loss = _ball(certified_loss(a, bb, dps=30, integrand="closed-form"))
            leading = 1 / (2 * bb**2) - arb(3).zeta() / bb**3 + 1 / (2 * bb**3)
            return 3 - bb**2 * abs(loss / leading - 1)
        la, lb = (_ball(x) for x in certified_loss_gradient(a, bb, dps=30))
        return 5 - bb * max(abs(-2 * bb**3 * la - 1), abs(-2 * bb**3 * lb - 1))


def _enclose(name: str, lo: Fraction, hi: Fraction) -> arb:
    margin = certified_specs()[name][0]
    ball, form = margin.enclose({"b": (lo, hi), "lam": (Fraction(0), Fraction(0))}, 136)
    assert form == f"taylor-{TAYLOR_ORDERS[name]}"
    return ball


@settings(max_examples=3, deadline=None, derandomize=True)
@given(name=st.sampled_from(sorted(TAYLOR_ORDERS)), lo=st.integers(min_value=20, max_value=9_900),
       width=st.sampled_from([Fraction(1, 8), Fraction(1, 2), Fraction(2)]),
       where=st.fractions(min_value=0, max_value=1, max_denominator=64))
def test_the_box_enclosure_contains_the_margin_at_its_points(name, lo, width, where):
    lo = Fraction(lo)
    hi = lo + width * lo / 1000  # relative widths 1/8000 .. 1/500
    ball = _enclose(name, lo, hi)
    assert ball.is_finite()
    point = _independent_margin(name, lo + where * (hi - lo))
    assert ball.overlaps(point), (name, float(lo), float(hi), ball, point)


def test_a_decisive_box_and_its_ends():
    """b ∈ [1000, 1005]: the enclosure is positive, contains both ends' values and is not much wider than
    the margin's own variation plus the slack the proof needs (a few tenths)."""
    for name in sorted(TAYLOR_ORDERS):
        ball = _enclose(name, Fraction(1000), Fraction(1005))
        assert ball > 0
        for b in (Fraction(1000), Fraction(1005)):
            assert ball.overlaps(_independent_margin(name, b))
        assert float(ball.rad()) < 0.2


def test_the_sub_intervals_cover_the_ball():
    with ctx.workprec(80):
        x = arb(1000).union(arb(1030))
        subs = margin_taylor.sub_intervals(x, arb(1015))
        assert 1 < len(subs) <= margin_taylor.MAX_SUB_INTERVALS
        assert subs[0].lower() <= x.lower() and subs[-1].upper() >= x.upper()
        for left, right in zip(subs, subs[1:]):
            assert left.upper() >= right.lower()  # consecutive ones share an end ball: no gap


def test_the_stored_forms_hold_the_builtin_lemmas():
    """verify --quick must not derive the Taylor forms with SymPy: the stored file has both built-ins."""
    stored = json.loads(margin_taylor.STORED_FORMS.read_text(encoding="utf-8"))["forms"]
    for name, order in TAYLOR_ORDERS.items():
        margin = certified_specs()[name][0]
        key = form_key(margin.source["sympy_srepr"], margin.coordinates, ("b", "lam"), "b", order, margin.estimator)
        assert key in stored and stored[key]["order"] == order


@pytest.mark.slow
def test_the_stored_forms_are_what_sympy_derives():
    from stumpcheck.theory.taylor_codegen import main

    assert main([str(margin_taylor.STORED_FORMS), "--check"]) == 0


def test_a_taylor_certificate_rechecks_and_a_narrowed_ball_does_not():
    """Prove leading_loss on b ∈ [20, 20.5] (the Taylor form), re-check its certificate at another precision
    (the same enclosure procedure), and reject a copy whose first leaf's recorded enclosure was narrowed."""
    import copy

    from stumpcheck.numerics.certified.proofs.domains import Domain
    from stumpcheck.numerics.certified.certificates.lemma_certificate import certificate, digest
    from stumpcheck.numerics.certified.proofs.margin_proof import prove
    from stumpcheck.numerics.certified.certificates.lemma_recheck import recheck

    margin, domain, _ = certified_specs()["leading_loss"]
    part = Domain({**domain.variables, "b": ("20", "20.5")}, domain.coordinates)
    proof = prove(margin, part, b_ratio=1.02)
    assert proof.proved and all(leaf.form == "taylor-3" for leaf in proof.leaves)
    document = certificate("leading_loss on b ∈ [20, 20.5]", margin, part, proof, strict=False)
    assert recheck(document, prec_bits=proof.prec_bits + 33, points="midpoint").passed
    forged = copy.deepcopy(document)
    leaf = forged["leaves"][0]
    leaf["lower"] = leaf["upper"] = str(float(leaf["upper"]) + 0.01)  # a ball that misses the margin
    forged.pop("digest", None)
    forged["digest"] = digest(forged)
    assert not recheck(forged, prec_bits=proof.prec_bits + 33, points="midpoint").passed


def test_the_margin_code_digest_covers_the_stored_forms(tmp_path, monkeypatch):
    """A certificate's margin_code identifies the stored Taylor forms too: another forms file, another digest
    for a Taylor-form margin, the same digest for a pointwise one (which does not use them)."""
    from stumpcheck.numerics.certified.proofs import margin_taylor
    from stumpcheck.numerics.certified.certificates.lemma_certificate import margin_code_identity
    from stumpcheck.lemmas.certified_builtins import certified_specs

    loss, loss_domain, _ = certified_specs()["leading_loss"]
    interior, interior_domain, _ = certified_specs()["interior_error_bound"]
    before = [margin_code_identity(m, d)["sha256"] for m, d in ((loss, loss_domain), (interior, interior_domain))]
    edited = tmp_path / "forms.json"
    edited.write_text(margin_taylor.STORED_FORMS.read_text(encoding="utf-8") + " ", encoding="utf-8")
    monkeypatch.setattr(margin_taylor, "STORED_FORMS", edited)
    after = [margin_code_identity(m, d)["sha256"] for m, d in ((loss, loss_domain), (interior, interior_domain))]
    assert after[0] != before[0] and after[1] == before[1]
