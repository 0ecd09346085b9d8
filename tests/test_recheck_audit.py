"""An adversarial audit of ``recheck`` after issue 27: tampers the other tamper suites do not cover.

Each test reproduces one attack, with the digest recomputed as a forger would where the certificate has one,
and asserts the one-line reason and the exit status (2: not a certificate the re-check reads, refused before
any work; 1: a certificate that says more than its proof). Fixtures are cheap: a one-leaf ``certify``
certificate, the region b ∈ [30, 30.6] (about 3 s) and tests/flow_certificate_1e6.json (every tamper here
fails before a θ-integral is recomputed).
"""

from __future__ import annotations

import copy
import json
import os
from fractions import Fraction
from pathlib import Path

import pytest

from stumpcheck.numerics.certified.region.invariant_region import DEFAULT_REGION
from stumpcheck.numerics.certified.region.certificate import recheck_region, region_certificate
from stumpcheck.numerics.certified.certificates.lemma_certificate import digest as lemma_digest, read_certificate
from stumpcheck.numerics.certified.tube.certificate import digest as flow_digest, recheck_flow_certificate
from stumpcheck.numerics.precision import InputError
from stumpcheck.cli.commands import main

HERE = Path(__file__).parent
SHORT = DEFAULT_REGION.with_b_max(Fraction("30.6"))


def _recheck_cli(tmp_path, document, capsys, *, name="certificate.json", raw: bytes | None = None):
    path = tmp_path / name
    if raw is None:
        path.write_text(json.dumps(document), encoding="utf-8")
    else:
        path.write_bytes(raw)
    code = main(["recheck", str(path)])
    captured = capsys.readouterr()
    return code, captured.out, captured.err


# -- certify certificates (no digest: anyone may edit them) -------------------------------------------------------


@pytest.fixture(scope="module")
def certify_document() -> dict:
    from stumpcheck.numerics.certified.proofs.box_prover import Box, certify

    proof = certify("error_abs_le_c_over_b", Box(a=("109.2", "109.4"), b=("100", "100.2"), theta=("0.4", "0.5")),
                    params={"c": "2"}, dps=30)
    assert proof.proved
    return json.loads(proof.to_json())


def test_the_untampered_certify_certificate_passes(certify_document, tmp_path, capsys):
    code, out, _ = _recheck_cli(tmp_path, certify_document, capsys)
    assert code == 0 and "theta ∈ [0.4, 0.5]" in out


@pytest.mark.parametrize("dim, ends, reason", [
    # before: PASS printing "theta ∈ [0.5, 0]" (an empty range: the covering check skipped the dimension)
    ("theta", ["0.5", "0"], "box: theta needs lo <= hi, got [0.5, 0]"),
    # before: FAIL on prec_bits only; with prec_bits fixed up, it would pass the same way
    ("b", ["100.2", "1"], "box: b needs lo <= hi, got [100.2, 1]"),
    # before: internal error (OverflowError) computing the working precision
    ("a", ["1e400", "1e401"], "the box has an end beyond 1e300 in magnitude (certify's limit)"),
    ("b", ["-1", "100.2"], "the box needs b > 0, got b lo = -1"),
    ("theta", ["0.4", "1.5"], "the box's theta must lie in [0, 1]"),
])
def test_a_certify_box_that_certify_would_not_prove_on_is_refused(certify_document, tmp_path, capsys, dim, ends,
                                                                     reason):
    forged = copy.deepcopy(certify_document)
    forged["box"][dim] = ends
    code, out, err = _recheck_cli(tmp_path, forged, capsys)
    assert (code, out) == (2, "")
    assert err.strip().endswith(reason) and len(err.strip().splitlines()) == 1, err


# -- the certificate file itself ------------------------------------------------------------------------------------


def test_a_fifo_or_dev_zero_as_the_certificate_is_refused_without_reading(tmp_path, capsys):
    """Before: a FIFO blocked recheck forever; a link to /dev/zero read until memory ran out (MemoryError)."""
    fifo = tmp_path / "fifo.json"
    os.mkfifo(fifo)
    zero = tmp_path / "zero.json"
    zero.symlink_to("/dev/zero")
    for path in (fifo, zero):
        assert main(["recheck", str(path)]) == 2
        err = capsys.readouterr().err.strip()
        assert err == f"stumpcheck: error: cannot read {path}: not a regular file", err


def test_a_certificate_larger_than_the_limit_is_refused_before_reading(tmp_path, monkeypatch):
    import stumpcheck.numerics.certified.certificates.limits as limits

    path = tmp_path / "big.json"
    path.write_text(json.dumps({"leaves": [1] * 100}), encoding="utf-8")
    monkeypatch.setattr(limits, "MAX_CERTIFICATE_BYTES", 64)
    with pytest.raises(InputError, match=r"bytes, more than the limit 64 of a certificate"):
        read_certificate(path)


def test_a_lone_surrogate_is_bad_input_not_an_internal_error(tmp_path, capsys):
    """Before: the digest's UTF-8 encoding raised UnicodeEncodeError: 'internal error', exit 1."""
    document = json.loads((HERE / "flow_certificate_v1.json").read_text(encoding="utf-8"))
    raw = json.dumps({**document, "method": "\ud800"}).encode("ascii")  # the escape \ud800 in the file's text
    code, out, err = _recheck_cli(tmp_path, None, capsys, raw=raw)
    assert (code, out) == (2, "")
    assert err.strip().endswith("is not a JSON certificate: a string holds a lone surrogate (\\ud800-\\udfff), "
                                "which is not text"), err


# -- flow certificates ------------------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def million() -> dict:
    return json.loads((HERE / "flow_certificate_1e6.json").read_text(encoding="utf-8"))


def _forged(document: dict, edit) -> dict:
    forged = copy.deepcopy(document)
    edit(forged)
    forged["digest"] = flow_digest(forged)
    return forged


def _negative_radius(document):
    document["initial"]["radius"] = "-0.001"
    document["statement"] = document["statement"].replace("radius 0 ", "radius -0.001 ")


@pytest.mark.parametrize("edit, reason", [
    # before: PASS, the unread field in the file
    (lambda d: d.__setitem__("claim", "b(t) = 42 for all t >= 0 (proved)"),
     "the certificate has fields a flow certificate does not define, which the re-check would not check: claim"),
    (lambda d: d["initial"].__setitem__("note", "the flow converges to (42, 42)"),
     "'initial' must hold exactly a0, b0, radius"),
    (lambda d: d["intervals"][3].__setitem__("claim", "x"),
     "interval 3 must hold exactly the fields delta, g, m, mu, p, piece, r_end, r_start, r_sup, rho, rows"),
    # before: PASS printing "from the disk of radius -0.001" (an empty disk: a vacuous statement, and the
    # Gronwall chain started below 0 lets the rows' boxes shrink inside the pieces' hulls)
    (_negative_radius, "the initial radius -0.001 is negative: a disk of negative radius is empty, so the "
                       "statement would say nothing about the flow"),
])
def test_a_flow_certificate_saying_more_than_its_proof_fails(million, edit, reason):
    result = recheck_flow_certificate(_forged(million, edit), 25)
    assert not result.passed and result.message == reason


def test_a_settings_decimal_beyond_the_limits_is_refused_before_any_work(million):
    """Before: Fraction('1e999999999') of the settings' rho_ellipse built a billion-digit integer (a hang)."""
    forged = _forged(million, lambda d: d["settings"].__setitem__("rho_ellipse", "1e999999999"))
    with pytest.raises(InputError, match=r"^settings.rho_ellipse has the exponent 999999999, beyond the limit ±1000"):
        recheck_flow_certificate(forged, 25)


def test_the_committed_flow_certificates_define_no_other_field(million):
    from stumpcheck.numerics.certified.tube.statement import FIELDS, FIELDS_V1

    assert set(million) <= FIELDS
    v1 = json.loads((HERE / "flow_certificate_v1.json").read_text(encoding="utf-8"))
    assert set(v1) <= FIELDS_V1


# -- region certificates ----------------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def region_document() -> dict:
    return region_certificate(SHORT)


def _reseal(document: dict, edit) -> dict:
    forged = copy.deepcopy(document)
    edit(forged)
    forged["digest"] = lemma_digest(forged)
    return forged


@pytest.mark.parametrize("edit, reason", [
    # before: PASS (standalone and embedded in a flow certificate)
    (lambda d: d.__setitem__("claim", "R is forward invariant for every b >= 30 (proved)"),
     "the certificate has fields a region certificate does not define, which the re-check would not check: claim"),
    (lambda d: d["region"].__setitem__("coordinates", "scaled; R is forward invariant for every b >= 30"),
     "the recorded region's coordinates is not what its constants give"),
    (lambda d: d["region"].__setitem__("b_max_proved", "infinity"),
     "the recorded region's b_max_proved is not what its constants give"),
])
def test_a_region_certificate_with_unread_text_fails(region_document, edit, reason):
    assert recheck_region(region_document)[0]
    assert recheck_region(_reseal(region_document, edit)) == (False, reason)


# -- eval ---------------------------------------------------------------------------------------------------------


def test_eval_asks_the_theta_integrals_for_a_positive_width_beyond_float64s_range(monkeypatch):
    """Before: rel_width = 10.0 ** -(digits + 1) underflowed to 0.0 at --dps >= 323, and
    ``eval grad --a 400 --b 100 --dps 330`` was refused: 'rel_width must be > 0, got 0.0' (exit 2)."""
    from decimal import Decimal

    from stumpcheck.numerics.certified import enclosures
    from stumpcheck.cli.evaluate_arb import arb_verified_digits

    asked = {}

    def fake_gradient(a, b, *, rel_width, **options):
        asked["rel_width"] = rel_width
        raise enclosures.EnclosureTooWide("not computed here")

    monkeypatch.setattr(enclosures, "certified_loss_gradient", fake_gradient)
    assert arb_verified_digits("grad", Decimal(400), Decimal(100), None, 400, "one-head")[0] is None
    assert asked["rel_width"] > 0
