"""``stumpcheck recheck`` on files that are not certificates: one line on stderr and exit status 2."""

from __future__ import annotations

import json

import pytest

from stumpcheck.cli.commands import main


@pytest.mark.parametrize("content, message", [
    (None, "cannot read"),
    (b"\xff\xfe not text", "cannot read"),
    (b"{not json", "not a JSON certificate"),
    (b"[1, 2]", "not a certificate (a JSON object)"),
    (b'{"a": NaN}', "not a JSON certificate"),
    (json.dumps({"format": "stumpcheck-lemma-certificate/0", "dps": 30}).encode(),
     "unknown certificate format 'stumpcheck-lemma-certificate/0'; known: stumpcheck-KIND-certificate/N for lemma/1,2 "),
    (json.dumps({"format": "stumpcheck-lemma-certificate/1"}).encode(), "'dps' is missing"),
])
def test_a_corrupt_or_unreadable_certificate_is_one_line_and_exit_2(tmp_path, capsys, content, message):
    path = tmp_path / "cert.json"
    if content is not None:
        path.write_bytes(content)
    assert main(["recheck", str(path)]) == 2
    captured = capsys.readouterr()
    lines = captured.err.strip().splitlines()
    assert len(lines) == 1 and message in lines[0], captured.err
    assert captured.out == ""


def test_recheck_is_listed_and_a_bad_dps_is_exit_2(tmp_path, capsys):
    assert main(["recheck", "--help"]) == 0
    assert "CERT.json" in capsys.readouterr().out
    path = tmp_path / "cert.json"
    path.write_text(json.dumps({"format": "stumpcheck-lemma-certificate/1", "dps": 30}))
    assert main(["recheck", str(path), "--dps", "3"]) == 2
    assert len(capsys.readouterr().err.strip().splitlines()) == 1


def _box_certificate(tmp_path):
    from stumpcheck.numerics.certified.proofs.box_prover import Box, certify

    certificate = certify("error_abs_le_c_over_b", Box(a=("24", "29"), b=("20", "21"), theta=("0.05", "0.95")),
                          params={"c": "2"}, dps=30)
    assert certificate.proved and len(certificate.leaves) > 4
    return json.loads(certificate.to_json())


def test_certify_certificates_are_rechecked_and_tampered_copies_fail(tmp_path, capsys):
    document = _box_certificate(tmp_path)
    path = tmp_path / "box.json"
    path.write_text(json.dumps(document))
    assert main(["recheck", str(path)]) == 0
    assert capsys.readouterr().out.startswith(f"PASS {path}: error_abs_le_c_over_b")
    gap = dict(document, leaves=document["leaves"][:-1])
    path.write_text(json.dumps(gap))
    assert main(["recheck", str(path)]) == 1
    assert "do not cover the box" in capsys.readouterr().out
    weaker = dict(document, params={"c": "1.5"})  # b|e| ≈ 1 in the bulk, but larger near θ = 0.05 at this a
    path.write_text(json.dumps(weaker))
    status = main(["recheck", str(path)])
    out = capsys.readouterr().out
    assert status == 1 and "fails: error_abs_le_c_over_b is not certainly true" in out, out
