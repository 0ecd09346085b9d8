"""The part of C2–C4 beyond T (stumpcheck.claims.population_beyond): a region certificate, the tube's state at T
checked to lie in it, the horizon and the bands; certified only when the region was proved or re-checked in this
run and z(T) is in R.

The default tests prove a short region, b ∈ [36, 36.6] (one 2 % piece per obligation, a few seconds), which
holds the T = 10⁶ tube's b(T) = 36.11; the default region (b ∈ [30, 1000]) is far too long for them."""

from __future__ import annotations

import json
import shutil
from fractions import Fraction
from pathlib import Path

import pytest
from flint import ctx

from stumpcheck.numerics.certified.region.invariant_region import Region
from stumpcheck.numerics.certified.tube.readings import state_at, tube_rows
from stumpcheck.numerics.precision import InputError
from stumpcheck.claims.population_beyond import beyond_markdown, beyond_t, region_document

CERTIFICATE_1E6 = Path(__file__).parent / "flow_certificate_1e6.json"
STORED_TUBE = Path(__file__).parent / "data" / "tube_t1"
SHORT = Region(Fraction(36), Fraction("36.6"), Fraction(1, 2), Fraction(5, 2), Fraction(11, 2))
#: the 30-digit flow at t = 10⁶
A_1E6, B_1E6 = Fraction("43.24704294247210819808"), Fraction("36.11083725333580302094")


@pytest.fixture(scope="module")
def short_region():
    from stumpcheck.numerics.certified.region.certificate import region_certificate

    document = region_certificate(SHORT)
    assert document["status"] == "proved"
    return document


@pytest.fixture(scope="module")
def tube():
    return tube_rows(CERTIFICATE_1E6)


def _box(tube, t):
    with ctx.workprec(128):
        return state_at(tube, t)


def test_the_region_beyond_T_is_certified_when_checked_and_entered(short_region, tube):
    part = beyond_t(short_region, t_entry=10**6, box=_box(tube, 10**6), checked="proved in this run")
    assert part["evidence"] == "certified" and part["why_not"] is None and part["entry"]["inside"]
    assert "|w| <= 0.5" in part["statement"] and "w = b*lambda" in part["statement"]
    # w = b·λ over the tube's box at T holds w of the 30-digit flow (float64 λ: 1e-12 is far inside the width)
    import math

    rho1 = -3 * 1.2020569031595942 + 1.5 + math.pi**2 / 3
    a, b = float(A_1E6), float(B_1E6)
    w = b * (a - (b + 2 * math.log(b) - rho1 / b))
    lo, hi = (float(x) for x in part["entry"]["w"])
    assert lo < w < hi and hi - lo < 1e-6
    # b ≤ 36.6 only up to t_B ≈ 1.05e6: the bands at 10⁸ and 10¹¹ are beyond it, t_B's is there
    assert 10**6 < part["horizon_t_B"] < 10**8 and [band["t"] for band in part["bands"]] == [part["horizon_t_B"]]
    band = part["bands"][0]
    assert Fraction(band["b4_over_t"][0]) <= Fraction(band["b4_over_t"][1])
    assert part["covers"].startswith("certified on [1e+06, ")
    assert any("Beyond T** (certified" in line for line in beyond_markdown(part))


def test_the_region_beyond_T_is_not_certified_unchecked_or_not_entered(short_region, tube):
    unchecked = beyond_t(short_region, t_entry=10**6, box=_box(tube, 10**6), checked=None)
    assert unchecked["evidence"] == "not certified" and "not proved or re-checked" in unchecked["why_not"]
    early = beyond_t(short_region, t_entry=10**5, box=_box(tube, 10**5), checked="proved in this run")
    assert not early["entry"]["inside"] and early["evidence"] == "not certified" and "bands" not in early
    assert "not certainly in R" in early["why_not"]
    edited = dict(short_region, status="not proved")
    assert beyond_t(edited, t_entry=10**6, box=_box(tube, 10**6), checked="proved in this run")["evidence"] == \
        "not certified"


def test_a_region_is_read_from_its_file_or_from_a_flow_certificate(short_region, tmp_path):
    (tmp_path / "region.json").write_text(json.dumps(short_region), encoding="utf-8")
    assert region_document(tmp_path / "region.json") == short_region
    flow = json.loads(CERTIFICATE_1E6.read_text(encoding="utf-8"))
    assert region_document(dict(flow, region=short_region)) == short_region
    with pytest.raises(InputError, match="no region certificate"):
        region_document(flow)
    (tmp_path / "bad.json").write_text("{", encoding="utf-8")
    with pytest.raises(InputError, match="not a readable"):
        region_document(tmp_path / "bad.json")


def test_the_readings_carry_the_beyond_T_part(short_region, tmp_path):
    from stumpcheck.claims.population_certified import certified_readings, claim_markdown, claim_reading

    readings = certified_readings(CERTIFICATE_1E6, sup_evaluations=40, region=short_region,
                                  region_checked="re-checked in this run")
    assert readings["beyond_t"]["evidence"] == "certified"
    text, details = claim_reading(readings, "C2")
    assert "beyond T (certified): |w| = b|λ| <= 0.5 for t in [1e+06, " in text
    assert details["beyond_t"]["region_checked"] == "re-checked in this run"
    assert "**Beyond T** (certified" in claim_markdown(details)
    # a region embedded in the tube's own certificate is read, but not re-checked here: not certified
    flow = json.loads(CERTIFICATE_1E6.read_text(encoding="utf-8"))
    (tmp_path / "flow_certificate.json").write_text(json.dumps(dict(flow, region=short_region)), encoding="utf-8")
    embedded = certified_readings(tmp_path, sup_evaluations=40)
    assert embedded["beyond_t"]["evidence"] == "not certified" and embedded["beyond_t"]["entry"]["inside"]


def test_verify_reads_the_region_beside_the_tube(short_region, monkeypatch, tmp_path):
    """The wiring of verify --full with the stored T = 1 tube: its state at T (b ≈ 10) is not in R, so the
    beyond-T part is shown and not certified; the sampled verdict stays the row's."""
    from stumpcheck.claims import population_shared as shared

    shared.clear_flow_cache()
    monkeypatch.setitem(shared.TUBE_T, "quick", 1.0)
    monkeypatch.setattr(shared, "_run_tube", lambda t_max, out_dir: (STORED_TUBE, "stored tube"))
    monkeypatch.setattr(shared, "_run_region", lambda out_dir, tube: (short_region, "proved in this run", "short"))
    readings = shared.shared_tube_readings(True, tmp_path)
    assert readings["covers"] == "certified on [0, 1]" and "short" in readings["note"]
    assert readings["beyond_t"]["evidence"] == "not certified" and not readings["beyond_t"]["entry"]["inside"]
    shared.clear_flow_cache()


@pytest.mark.slow
def test_verify_reuses_a_rechecked_region_and_proves_one_over_a_tampered_file(short_region, monkeypatch, tmp_path):
    import stumpcheck.numerics.certified.region.invariant_region as invariant_region
    from stumpcheck.claims import population_shared as shared

    folder = tmp_path / shared.REGION_FOLDER
    folder.mkdir()
    (folder / "region_certificate.json").write_text(json.dumps(short_region), encoding="utf-8")
    document, checked, note = shared._run_region(tmp_path, None)
    assert document == short_region and checked == "re-checked in this run" and "re-checked" in note
    tampered = dict(short_region, region=dict(short_region["region"], c="0.25"))
    (folder / "region_certificate.json").write_text(json.dumps(tampered), encoding="utf-8")
    monkeypatch.setattr(invariant_region, "DEFAULT_REGION", SHORT)  # the default region takes ~635 s
    document, checked, note = shared._run_region(tmp_path, None)
    assert checked == "proved in this run" and document["region"]["c"] == "0.5"
    assert json.loads((folder / "region_certificate.json").read_text(encoding="utf-8"))["digest"] == document["digest"]
    # a region embedded in the tube's certificate is taken first
    tube_folder = tmp_path / "tube"
    tube_folder.mkdir()
    flow = json.loads(CERTIFICATE_1E6.read_text(encoding="utf-8"))
    (tube_folder / "flow_certificate.json").write_text(json.dumps(dict(flow, region=short_region)), encoding="utf-8")
    shutil.rmtree(folder)
    document, checked, note = shared._run_region(tmp_path, tube_folder)
    assert checked == "re-checked in this run" and "embedded" in note


def test_a_tail_without_its_finite_region_gives_no_beyond_part(tube):
    from stumpcheck.numerics.certified.region.tail import DEFAULT_TAIL
    from stumpcheck.numerics.certified.region.tail_certificate import tail_certificate

    lone = tail_certificate(DEFAULT_TAIL)
    assert region_document(lone) is lone
    with pytest.raises(InputError, match="joined finite region"):
        beyond_t(lone, t_entry=10**6, box=_box(tube, 10**6), checked="proved in this run")


@pytest.mark.slow
def test_the_joined_tail_makes_the_beyond_part_hold_for_all_t(tube):
    """The finite region b ∈ [30, 1000] (about 30 s) joined with the tail: C2's, C3's and C4's clauses for all t."""
    from stumpcheck.claims.population_certified import _beyond_clause
    from stumpcheck.numerics.certified.region.certificate import region_certificate
    from stumpcheck.numerics.certified.region.invariant_region import DEFAULT_REGION
    from stumpcheck.numerics.certified.region.tail import DEFAULT_TAIL
    from stumpcheck.numerics.certified.region.tail_certificate import tail_certificate

    joined = tail_certificate(DEFAULT_TAIL, finite=region_certificate(DEFAULT_REGION))
    part = beyond_t(joined, t_entry=10**6, box=_box(tube, 10**6), checked="proved in this run")
    assert part["evidence"] == "certified" and part["horizon"] == "inf" and "∞" in part["covers"]
    assert part["assumptions"] == [] and not any("Lemma E" in x for x in part["not_proved"])
    at_1e30 = part["bands_all_time"][-1]
    assert at_1e30["t"] == 1e30 and float(at_1e30["b4_over_t"][0]) < 2 < float(at_1e30["b4_over_t"][1]) + 1e-6
    assert "log b/log t → 1/4" in _beyond_clause(part, "C3")
    assert "|λ| <= c/b" in _beyond_clause(part, "C2")
    assert not any(x.startswith("nothing for b > b_max") for x in part["not_proved"])  # the tail proves it
    clause = _beyond_clause(part, "C4")
    assert "sup|e|·b in [0.9999999999, 1] at t = T" in clause and "log sup|e|/log t → −1/4" in clause
    rows = part["interior_error_all_time"]["rows"]
    assert rows[0]["t"] == 1e6 and rows[-1]["t"] == 1e30 and float(rows[0]["M"]) < 0.4
    assert any("For all t" in line for line in beyond_markdown(part))
    unchecked = beyond_t(joined, t_entry=10**6, box=_box(tube, 10**6), checked=None)
    assert unchecked["evidence"] == "not certified" and "for all t" not in _beyond_clause(unchecked, "C3")
