"""One certificate for the tube and the region: embedding, the combined re-check, and its tampers.

The default tests build a real small case: a tube from near the slow manifold inside R (b₀ = 30,
a₀ = calibration_a(30) − 0.15/30, T = 1, the light settings of tests/test_tube.py) with the region
b ∈ [30, 30.6] embedded. tests/flow_certificate_1e6.json (the tube from (10, 10) to T = 10⁶) serves the
checks that need no θ-integrals. The full T = 10⁶ tube with the region b ∈ [30, 1000] is behind ``slow``.
"""

from __future__ import annotations

import copy
import functools
import json
from fractions import Fraction
from pathlib import Path

import pytest
from hypothesis import given, settings, strategies as st

from stumpcheck.numerics.certified.region.flow_certificate import (embed_region, embed_region_certificate, for_all_t_summary,
                                                        recheck_flow_region, tube_box_at_t_max)
from stumpcheck.numerics.certified.region.invariant_region import DEFAULT_REGION
from stumpcheck.numerics.certified.region.bounds import entry_check
from stumpcheck.numerics.certified.region.certificate import entry_record, region_certificate
from stumpcheck.numerics.certified.certificates.lemma_certificate import digest as region_digest
from stumpcheck.numerics.certified.tube.certificate import digest as flow_digest, recheck_flow_certificate
from stumpcheck.numerics.certified.tube.piece import Settings
from stumpcheck.numerics.precision import InputError
from stumpcheck.cli.commands import main

HERE = Path(__file__).parent
MILLION = HERE / "flow_certificate_1e6.json"
SHORT = DEFAULT_REGION.with_b_max(Fraction("30.6"))
LIGHT = Settings(defect_points=8, hessian_points=3, subdivisions=2, cells=(3, 1))
#: calibration_a(30) − 0.15/30 as a float64 (w = −0.15 at b = 30: on the slow manifold's side of R)
A0 = "36.757938182517044"


@pytest.fixture(scope="module")
def million() -> dict:
    return json.loads(MILLION.read_text(encoding="utf-8"))


@pytest.fixture(scope="module")
def short_region(tmp_path_factory) -> Path:
    path = tmp_path_factory.mktemp("region") / "region_certificate.json"
    path.write_text(json.dumps(region_certificate(SHORT)), encoding="utf-8")
    return path


@pytest.fixture(scope="module")
def combined(tmp_path_factory, short_region) -> Path:
    """OUT of ``stumpcheck flow --certified --region-certificate`` for the small tube (light settings)."""
    import stumpcheck.numerics.certified.tube.build as tube_module

    out = tmp_path_factory.mktemp("combined")
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(tube_module, "certified_tube", functools.partial(tube_module.certified_tube, settings=LIGHT))
        code = main(["flow", "--certified", "--quiet", "--a0", A0, "--b0", "30", "--t-max", "1", "--workers", "1",
                     "--out", str(out), "--region-certificate", str(short_region)])
    assert code == 0
    return out


def _document(out: Path) -> dict:
    return json.loads((out / "flow_certificate.json").read_text(encoding="utf-8"))


def _redigest(flow: dict) -> dict:
    """Both digests made consistent again, as a forger would."""
    if isinstance(flow.get("region"), dict):
        flow["region"]["digest"] = region_digest(flow["region"])
    flow["digest"] = flow_digest(flow)
    return flow


def test_the_tube_and_region_go_into_one_file_and_recheck_in_a_fresh_process(combined, capsys):
    document = _document(combined)
    own = tube_box_at_t_max(document)
    entry = document["region"]["entry"]
    assert entry["t"] == document["t_max"] and entry["box"] == own and entry["check"]["inside"]
    assert float(entry["check"]["w"][0]) < -0.1499 and float(entry["check"]["w"][1]) > -0.1501
    summary = json.loads((combined / "tube.json").read_text(encoding="utf-8"))["for_all_t"]
    assert summary == document["for_all_t"] and summary["proved"] is True
    assert list(summary["bands"]) == ["t_B"]  # t_B ≈ 3.6e4 < 10⁸ for B = 30.6
    capsys.readouterr()
    assert main(["recheck", str(combined / "flow_certificate.json")]) == 0
    out = capsys.readouterr().out
    assert out.startswith("PASS") and "the embedded region re-checks" in out and "contains the tube's box at T" in out


def test_a_narrowed_tube_box_is_rejected(combined):
    forged = _document(combined)
    row = forged["intervals"][0]["rows"][-1]
    row[5] = row[4]  # b_hi := b_lo
    result = recheck_flow_certificate(_redigest(forged), 25)
    assert not result.passed and "does not contain the piece's hull" in result.message


def test_a_region_edited_without_its_digests_is_rejected(combined, capsys):
    forged = _document(combined)
    forged["region"]["region"]["c"] = "0.25"
    path = combined.parent / "edited_flow_certificate.json"
    path.write_text(json.dumps(forged), encoding="utf-8")
    assert main(["recheck", str(path)]) == 1
    assert "digest does not match" in capsys.readouterr().out


def test_a_smaller_c_or_a_dropped_leaf_in_the_embedded_region_is_rejected(combined):
    from stumpcheck.numerics.certified.region.invariant_region import Region

    forged = _document(combined)
    forged["region"]["region"]["c"] = "0.25"
    forged["region"]["statement"] = Region.from_json(forged["region"]["region"]).statement()
    ok, message = recheck_flow_region(_redigest(forged))
    assert not ok and "does not state what the region needs" in message
    forged = _document(combined)
    lemma = forged["region"]["obligations"]["inward_lower"]
    lemma["leaves"] = lemma["leaves"][:-1]
    lemma["digest"] = region_digest(lemma)
    ok, message = recheck_flow_region(_redigest(forged))
    assert not ok and "inward_lower" in message


def _with_entry(document: dict, t: str, box: dict) -> dict:
    forged = copy.deepcopy(document)
    forged["region"]["entry"] = entry_record(SHORT, {"t": t, "box": box})
    forged["for_all_t"] = for_all_t_summary(forged["region"])
    return _redigest(forged)


def test_an_entry_box_that_misses_the_tubes_box_or_another_time_is_rejected(combined):
    document = _document(combined)
    own = tube_box_at_t_max(document)
    lo, hi = (Fraction(x) for x in own["b"])
    narrower = {"a": own["a"], "b": [own["b"][0], str(float(lo + (hi - lo) / 2))]}
    ok, message = recheck_flow_region(_with_entry(document, document["t_max"], narrower))
    assert not ok and "does not contain the tube's box at T" in message
    ok, message = recheck_flow_region(_with_entry(document, "2", own))
    assert not ok and "is not the tube's T" in message
    wider = {"a": own["a"], "b": [own["b"][0], str(float(hi) + 1e-3)]}  # a wider entry box in R is sound
    ok, message = recheck_flow_region(_with_entry(document, document["t_max"], wider))
    assert ok, message


def test_a_claim_for_all_t_without_a_region_is_rejected(combined):
    forged = _document(combined)
    del forged["region"]
    ok, message = recheck_flow_region(_redigest(forged))
    assert not ok and "claims a proof" in message
    forged["for_all_t"] = for_all_t_summary(None, "the region's obligations were not all proved")
    ok, message = recheck_flow_region(_redigest(forged))
    assert ok and "nothing is claimed" in message
    forged["for_all_t"] = for_all_t_summary(None, "the tube is incomplete: it does not reach T")  # it is complete
    ok, message = recheck_flow_region(_redigest(forged))
    assert not ok and "not one the writer gives" in message


def test_a_malformed_embedded_region_is_exit_2(combined, capsys):
    forged = _redigest({**_document(combined), "region": [1, 2]})
    path = combined.parent / "malformed_flow_certificate.json"
    path.write_text(json.dumps(forged), encoding="utf-8")
    assert main(["recheck", str(path)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "not a region certificate" in err[0]


def test_the_million_tubes_box_at_T_is_its_own_enclosure_and_lies_in_R(million):
    box = tube_box_at_t_max(million)
    assert box["b"] == ["3.6110837251455331e1", "3.6110837255213172e1"]  # tube.json's enclosure of b(T)
    check = entry_check(DEFAULT_REGION, box)
    assert check["inside"] and -0.1517 < float(check["w"][0]) < float(check["w"][1]) < -0.1516
    row = million["intervals"][-1]["rows"][-1]  # the row box at T spans a whole sub-interval: not in R
    assert not entry_check(DEFAULT_REGION, {"a": row[2:4], "b": row[4:6]})["inside"]


@settings(max_examples=30, deadline=None)
@given(end=st.sampled_from([("a", 0), ("a", 1), ("b", 0), ("b", 1)]), shrink=st.fractions(Fraction(1, 10**6), 1))
def test_every_entry_box_narrower_than_the_tubes_box_at_T_is_rejected(million, end, shrink):
    """No θ-integral: the containment is checked before the region's leaves are re-enclosed."""
    own = tube_box_at_t_max(million)
    lo, hi = (Fraction(x) for x in own[end[0]])
    box = {k: list(v) for k, v in own.items()}
    cut = (hi - lo) * shrink
    box[end[0]][end[1]] = str(float(lo + cut)) if end[1] == 0 else str(float(hi - cut))
    new = Fraction(box[end[0]][end[1]])
    if (end[1] == 0 and new <= lo) or (end[1] == 1 and new >= hi):
        return  # the float rounding did not narrow the box
    if Fraction(box[end[0]][0]) > Fraction(box[end[0]][1]):
        return  # shrink = 1 rounded past the other end: an inverted box, not a narrower one
    forged = {**million, "region": {"format": "stumpcheck-region-certificate/1",
                                    "entry": {"t": million["t_max"], "box": box}}}
    ok, message = recheck_flow_region(forged)
    assert not ok and "does not contain the tube's box at T" in message


def test_no_region_is_embedded_for_an_incomplete_tube_or_a_box_at_T_outside_R(million, short_region):
    region_document = json.loads(short_region.read_text(encoding="utf-8"))
    outside = embed_region_certificate(million, region_document)  # b(T) ≈ 36.1 > B = 30.6
    assert "region" not in outside and outside["for_all_t"]["proved"] is False
    assert "entry box not in R" in outside["for_all_t"]["status"]
    assert outside["digest"] == flow_digest(outside)
    incomplete = embed_region({**million, "complete": False}, SHORT)  # nothing is proved: no θ-integral
    assert "region" not in incomplete and "incomplete" in incomplete["for_all_t"]["status"]
    ok, message = recheck_flow_region(incomplete)
    assert ok and "nothing is claimed" in message
    with pytest.raises(InputError, match="B = 30.6"):
        embed_region_certificate(million, region_document, b_max=1000)
    edited = {**region_document, "status": "not proved"}
    with pytest.raises(InputError, match="digest"):
        embed_region_certificate(million, edited)


@pytest.mark.parametrize("arguments, message", [
    (["--region", "--region-certificate", "x.json"], "exclude each other"),
    (["--region-b-max", "100"], "--region-b-max goes with"),
    (["--region", "--region-b-max", "20"], "b_start < b_max"),
    (["--region-certificate", "missing.json"], "cannot read"),
])
def test_region_options_bad_input_is_one_line_and_exit_2(tmp_path, capsys, arguments, message):
    code = main(["flow", "--certified", "--quiet", "--t-max", "1", "--out", str(tmp_path / "out"),
                 *[str(tmp_path / a) if a.endswith(".json") else a for a in arguments]])
    assert code == 2
    lines = capsys.readouterr().err.strip().splitlines()
    assert len(lines) == 1 and message in lines[0], lines
    assert not (tmp_path / "out" / "tube.csv").exists()


def test_region_options_need_certified(capsys):
    assert main(["flow", "--region", "--t-max", "1"]) == 2
    assert "go with --certified" in capsys.readouterr().err


@pytest.mark.slow
def test_the_million_tube_with_the_region_to_1000_is_one_certificate_that_rechecks(tmp_path, million):
    """The full combination: the region b ∈ [30, 1000] proved (~635 s CPU) with the T = 10⁶ tube's box at T,
    embedded, and re-checked (the region's leaves here; the tube's own integrals by tests/test_tube.py)."""
    combined = embed_region(million, DEFAULT_REGION, workers=2)
    assert combined["for_all_t"]["proved"] is True and set(combined["for_all_t"]["bands"]) == {"1e+08", "1e+11", "t_B"}
    assert float(combined["for_all_t"]["horizon_t_B"]) > 5e11
    ok, message = recheck_flow_region(combined)
    assert ok, message


@pytest.mark.slow
def test_flow_certified_with_region_proves_and_embeds_it(tmp_path, capsys):
    """The command's own path: the tube at the default settings, then the region b ∈ [30, 30.6] proved."""
    out = tmp_path / "out"
    assert main(["flow", "--certified", "--quiet", "--a0", A0, "--b0", "30", "--t-max", "1", "--out", str(out),
                 "--region", "--region-b-max", "30.6"]) == 0
    printed = capsys.readouterr().out
    assert "proved: the tube's box at T = 1.0 lies in R" in printed and "stumpcheck recheck" in printed
    assert main(["recheck", str(out / "flow_certificate.json")]) == 0
