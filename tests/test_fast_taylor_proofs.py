"""Proofs of Taylor-form θ-integral margins with the float64 θ-integrals (proofs.margin_taylor_fast).

* the fast enclosure of a box contains the margin's Arb value at points of the box (the lemmas'
  margins on the calibration relation and the region's two margins, b from 20 to 10⁴), and is within an
  order of magnitude of the width of Arb's Taylor form there (measured: 1 to 5 times);
* a proof records, for each leaf, the arithmetic that proved it, and the certificate an ``arithmetic``
  record (fast and Arb leaves, fallbacks, the fast layer's ASSUMPTIONS); ``recheck`` passes with the fast
  layer and with ``arithmetic="arb"`` (every leaf re-enclosed in Arb, also by ``stumpcheck recheck --arb``);
* an edited arithmetic record, or a leaf's arithmetic edited, is refused; a proof in Arb alone records
  nothing (the certificates of earlier versions still re-check).
"""

from __future__ import annotations

import copy
import json
from fractions import Fraction

import pytest
from flint import arb

from stumpcheck.lemmas.certified_builtins import certified_specs
from stumpcheck.numerics.certified.certificates.lemma_certificate import certificate, digest
from stumpcheck.numerics.certified.certificates.lemma_recheck import recheck
from stumpcheck.numerics.certified.fast.rounding import ASSUMPTIONS
from stumpcheck.numerics.certified.proofs.domains import Domain
from stumpcheck.numerics.certified.proofs.margin_proof import prove
from stumpcheck.numerics.certified.region.invariant_region import Region, obligations

BITS = 140


def _region_margin(name):
    region = Region(Fraction(30), Fraction(10_000), Fraction(1, 2), Fraction(5, 2), Fraction(11, 2))
    return obligations(region)[name][1]


def _cases():
    specs = certified_specs()
    for name in ("leading_loss", "progress_direction"):
        for b in (20, 700, 9000):
            yield specs[name][0], {"b": (Fraction(b), Fraction(b) * Fraction(1003, 1000)),
                                   "lam": (Fraction(0), Fraction(0))}
    for name, w in (("inward_upper", (Fraction(1, 2), Fraction(1, 2))), ("drift_lower_half", (Fraction(-1, 2), Fraction(-3, 8)))):
        for b in (31, 400, 3000):
            yield _region_margin(name), {"b": (Fraction(b), Fraction(b) * Fraction(1002, 1000)), "w": w}


@pytest.mark.parametrize("case", range(12))
def test_the_fast_enclosure_contains_the_margin_at_points_and_is_near_arbs(case):
    margin, box = list(_cases())[case]
    fast = margin.enclose_fast(box, BITS)
    assert fast is not None and fast[0].is_finite() and fast[1] == f"taylor-{margin.taylor_order}"
    ball = fast[0]
    for t in (Fraction(0), Fraction(1, 3), Fraction(1)):
        point = {n: (lo + (hi - lo) * t,) * 2 for n, (lo, hi) in box.items()}
        value = margin.enclose(point, BITS)[0]  # Arb, at the point
        assert ball.lower() <= value.upper() and value.lower() <= ball.upper()
        assert ball.contains(arb(value.mid())) or value.rad() > 0
    arb_ball = margin.enclose(box, BITS)[0]
    # the remainder integrals are summed to a looser goal than Arb's 8 bits: measured 1-5 times Arb's radius
    assert float(ball.rad()) <= 10 * float(arb_ball.rad()) + 1e-12


@pytest.fixture(scope="module")
def fast_certificate():
    margin, domain, strict = certified_specs()["progress_direction"]
    small = Domain({"b": (Fraction(20), Fraction("20.8")), "lam": (Fraction(0), Fraction(0))}, "calibration")
    proof = prove(margin, small, strict=strict, b_ratio=1.02)
    return certificate("progress along the relation", margin, small, proof, strict=strict), proof


def test_a_fast_proof_records_its_arithmetic(fast_certificate):
    document, proof = fast_certificate
    assert proof.proved and proof.arithmetic == "fast"
    record = document["arithmetic"]
    arithmetics = [leaf["arithmetic"] for leaf in document["leaves"]]
    assert record["fast_leaves"] == arithmetics.count("fast") > 0
    assert record["arb_leaves"] == arithmetics.count("arb")
    assert record["fallbacks"] == proof.fallbacks
    assert record["assumptions"] == json.loads(json.dumps(ASSUMPTIONS))


def test_the_fast_certificate_rechecks_fast_and_in_arb(fast_certificate):
    document, _ = fast_certificate
    fast = recheck(document, prec_bits=document["prec_bits"] + 20, points="midpoint")
    assert fast.passed, fast.message
    assert any("float64" in note for note in fast.notes)
    arb_only = recheck(document, prec_bits=document["prec_bits"] + 20, points="midpoint", arithmetic="arb")
    assert arb_only.passed, arb_only.message
    assert not any("float64" in note for note in arb_only.notes)


def _redigest(document):
    document["digest"] = digest(document)
    return document


@pytest.mark.parametrize("edit", ["count", "leaf", "field", "missing"])
def test_an_edited_arithmetic_record_is_refused(fast_certificate, edit):
    document = copy.deepcopy(fast_certificate[0])
    if edit == "count":
        document["arithmetic"]["fast_leaves"] += 1
    elif edit == "leaf":
        document["leaves"][0]["arithmetic"] = "arb"
    elif edit == "field":
        document["arithmetic"]["note"] = "trust me"
    else:
        del document["arithmetic"]
    result = recheck(_redigest(document), prec_bits=document["prec_bits"] + 20, points="midpoint")
    assert not result.passed and "arithmetic" in result.message


def test_a_proof_in_arb_alone_records_nothing():
    margin, _, strict = certified_specs()["leading_loss"]
    small = Domain({"b": (Fraction(20), Fraction("20.2")), "lam": (Fraction(0), Fraction(0))}, "calibration")
    proof = prove(margin, small, strict=strict, arithmetic="arb")
    document = certificate("the leading loss", margin, small, proof, strict=strict)
    assert proof.proved and "arithmetic" not in document
    assert all("arithmetic" not in leaf for leaf in document["leaves"])
    assert recheck(document, prec_bits=document["prec_bits"] + 20, points="midpoint").passed


def test_recheck_arb_on_the_command_line(fast_certificate, tmp_path):
    from click.testing import CliRunner

    from stumpcheck.cli.recheck import recheck as command

    # The fixture proves the built-in margin over a smaller domain than the built-in lemma's, so its words
    # would overstate it: the command line refuses it. Renamed, it is a user's lemma with the same proof.
    path = tmp_path / "lemma.json"
    path.write_text(json.dumps(fast_certificate[0]), encoding="utf-8")
    refused = CliRunner().invoke(command, [str(path), "--points", "midpoint"])
    assert refused.exit_code == 1 and "neither the built-in lemma" in refused.output, refused.output
    document = copy.deepcopy(fast_certificate[0])
    document["margin"]["name"] = "users_progress"
    path.write_text(json.dumps(_redigest(document)), encoding="utf-8")
    result = CliRunner().invoke(command, [str(path), "--arb", "--points", "midpoint"])
    assert result.exit_code == 0, result.output
    assert "PASS" in result.output and "float64" not in result.output
    result = CliRunner().invoke(command, [str(path), "--points", "midpoint"])
    assert result.exit_code == 0 and "float64 θ-integrals" in result.output
