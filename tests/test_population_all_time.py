"""C2–C4 decided by their certified statements (stumpcheck/claims/population_all_time.py): the committed
certificate ships with the package and re-checks, the verdicts read what it proves, and anything not certified
is a FAIL with its reason."""

from __future__ import annotations

import copy
import json

import pytest

from stumpcheck.claims import population_all_time as all_time
from stumpcheck.claims.population_all_time import all_time_part, all_time_verdict, committed_certificate


@pytest.fixture(scope="module")
def document():
    return committed_certificate()


def test_the_committed_certificate_is_package_data_with_the_tail_joined(document):
    from importlib import resources

    from stumpcheck.numerics.certified.region.tail_certificate import TAIL_FORMAT

    assert resources.files("stumpcheck.data").joinpath(all_time.CERTIFICATE).is_file()
    assert float(document["t_max"]) == 1e6 and document["region"]["format"] == TAIL_FORMAT
    assert document["region"]["assumptions"] == [] and document["for_all_t"]["horizon"] == "inf"
    assert document["for_all_t"]["assumptions"] == []
    assert "assum" not in json.dumps(document["for_all_t"]["status"])


@pytest.fixture(scope="module")
def part(document):
    return all_time_part(document, "re-checked in this run")


def test_each_claim_reads_its_certified_statement(part):
    assert part["evidence"] == "certified" and part["horizon"] == "inf" and part["entry"]["inside"]
    c2 = all_time_verdict("C2", part)
    assert c2["passed"] and "<= 0.5/b for every t >= T" in c2["figure"] and "→ 0" in c2["figure"]
    c3 = all_time_verdict("C3", part)
    assert c3["passed"] and "b⁴/t → 2" in c3["figure"] and [r["t0"] for r in c3["facts"]["rate"]] == [1e6, 1e12]
    c4 = all_time_verdict("C4", part)
    assert c4["passed"] and "log sup|e|/log t → −1/4" in c4["figure"]
    assert all("assum" not in v["figure"] for v in (c2, c3, c4))


def test_not_verified_in_the_run_is_a_fail(document):
    unchecked = all_time_part(document, None)
    for claim in ("C2", "C3", "C4"):
        verdict = all_time_verdict(claim, unchecked)
        assert not verdict["passed"] and "not proved or re-checked in this run" in verdict["reason"]
    verdict = all_time_verdict("C3", None, "the committed tube certificate does not re-check: edited")
    assert not verdict["passed"] and verdict["figure"].startswith("not certified: the committed tube")


def test_a_tampered_committed_certificate_is_refused(document, monkeypatch):
    """An edited copy with its digest recomputed: the re-check refuses it, so C2–C4 cannot PASS."""
    from stumpcheck.numerics.certified.certificates.lemma_certificate import digest as region_digest
    from stumpcheck.numerics.certified.tube.certificate import digest

    forged = copy.deepcopy(document)
    forged["region"]["assumptions"] = ["Lemma E (docs/tail.md §4)"]
    forged["region"]["digest"] = region_digest(forged["region"])
    forged["for_all_t"]["assumptions"] = list(forged["region"]["assumptions"])
    forged["digest"] = digest(forged)
    monkeypatch.setattr(all_time, "committed_certificate", lambda: forged)
    monkeypatch.setattr("stumpcheck.numerics.certified.tube.certificate.recheck_flow_certificate",
                        lambda *a, **k: type("R", (), {"passed": True, "message": "tube skipped here"})())
    checked, how, note = all_time.recheck_committed(workers=1)
    assert checked is None and how == "" and "do not re-check" in note and "assumptions" in note, note


@pytest.mark.slow
def test_the_committed_certificate_rechecks_whole():
    checked, how, note = all_time.recheck_committed(workers=2)
    assert checked is not None and how == "re-checked in this run", note
