"""``stumpcheck recheck`` on files that are not certificates: one line on stderr and exit status 2."""

from __future__ import annotations

import json

import pytest

from stumpcheck.cli import main


@pytest.mark.parametrize("content, message", [
    (None, "cannot read"),
    (b"\xff\xfe not text", "cannot read"),
    (b"{not json", "not a JSON certificate"),
    (b"[1, 2]", "not a certificate (a JSON object)"),
    (b'{"a": NaN}', "not a JSON certificate"),
    (json.dumps({"format": "stumpcheck-lemma-certificate/0", "dps": 30}).encode(), "not a lemma certificate"),
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
