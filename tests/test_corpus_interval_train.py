"""``train --within-interval``: GD started in a certified S stays in S and passes b_end within the stated steps."""

from __future__ import annotations

import json
from fractions import Fraction

import pytest

from stumpcheck.cli.commands import main


@pytest.fixture(scope="module")
def certified(tmp_path_factory):
    out = tmp_path_factory.mktemp("iv")
    status = main(["interval", "--m", "48", "--n", "48", "--seed", "1", "--b-max", "16", "--out", str(out), "--quiet"])
    assert status in (0, 1) and (out / "interval_certificate.json").is_file()
    return out


def test_gd_from_the_start_passes_b_end_within_the_stated_steps(certified, tmp_path, capsys):
    document = json.loads((certified / "interval_certificate.json").read_text())
    steps = document["statement"]["steps"]
    status = main(["train", "--corpus", str(certified / "corpus.npz"), "--within-interval",
                   str(certified / "interval_certificate.json"), "--steps", str(steps + 10), "--record-every", "100",
                   "--out", str(tmp_path / "run"), "--quiet"])
    text = capsys.readouterr().out
    assert status == 0
    assert f"passed b_end = {document['statement']['b_end']} of the certified interval" in text
    frozen = json.loads((tmp_path / "run" / "frozen.json").read_text())
    taken = int(text.split("of the certified interval at step ")[1].split(" ")[0])
    assert 0 < taken <= steps   # the certificate's bound on the steps holds for this run
    assert float(frozen["b"]) > float(Fraction(document["statement"]["b_end"]))


def test_a_start_outside_s_stops_at_once(certified, tmp_path, capsys):
    document = json.loads((certified / "interval_certificate.json").read_text())
    a_start = float(Fraction(document["statement"]["start"][0]))
    status = main(["train", "--corpus", str(certified / "corpus.npz"), "--within-interval",
                   str(certified / "interval_certificate.json"), "--a0", str(a_start + 3), "--b0", "8",
                   "--steps", "50", "--out", str(tmp_path / "run"), "--quiet"])
    assert status == 0
    assert "left the certified interval S at step 0" in capsys.readouterr().out


def test_another_corpus_is_refused(certified, tmp_path, capsys):
    status = main(["train", "--m", "48", "--n", "48", "--seed", "2", "--within-interval",
                   str(certified / "interval_certificate.json"), "--steps", "5", "--out", str(tmp_path / "run")])
    assert status == 2
    assert "another corpus" in capsys.readouterr().err
