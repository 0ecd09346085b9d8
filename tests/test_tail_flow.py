"""The tail joined to a finite region, embedded in a flow certificate: for_all_t with horizon ∞.

Default: the cheap refusals (a tail without a joined finite region, an edited tail). Slow: the finite region
b ∈ [30, 1000] and the tail proved, embedded in the stored T = 10⁶ tube (tests/flow_certificate_1e6.json),
the region part re-checked, and an edited for_all_t rejected.
"""

from __future__ import annotations

import copy
import json
from pathlib import Path

import pytest

from stumpcheck.numerics.certified.certificates.lemma_certificate import digest
from stumpcheck.numerics.certified.region.flow_certificate import (checked_region_certificate,
                                                                embed_region_certificate, recheck_flow_region)
from stumpcheck.numerics.certified.region.tail import DEFAULT_TAIL
from stumpcheck.numerics.certified.region.tail_certificate import tail_certificate
from stumpcheck.numerics.certified.tube.certificate import digest as flow_digest
from stumpcheck.numerics.precision import InputError

MILLION = Path(__file__).parent / "flow_certificate_1e6.json"


@pytest.fixture(scope="module")
def lone_tail():
    return tail_certificate(DEFAULT_TAIL)


def test_a_tail_without_a_finite_region_is_refused(lone_tail):
    with pytest.raises(InputError, match="only where asked"):
        checked_region_certificate(lone_tail)
    with pytest.raises(InputError, match="joined finite region"):
        checked_region_certificate(lone_tail, tail=True)
    edited = copy.deepcopy(lone_tail)
    edited["status"] = "proved "
    with pytest.raises(InputError, match="digest"):
        checked_region_certificate(edited, tail=True)


@pytest.mark.slow
def test_flow_certificate_with_the_tail_holds_for_all_t():
    from stumpcheck.numerics.certified.region.certificate import region_certificate
    from stumpcheck.numerics.certified.region.invariant_region import DEFAULT_REGION

    finite = region_certificate(DEFAULT_REGION)
    assert finite["status"] == "proved"
    joined = tail_certificate(DEFAULT_TAIL, finite=finite)
    flow = json.loads(MILLION.read_text(encoding="utf-8"))
    combined = embed_region_certificate(flow, joined, tail=True)
    summary = combined["for_all_t"]
    assert summary["proved"] and summary["horizon"] == "inf" and "R_inf" in summary["status"]
    assert summary["assumptions"] == [] and "assum" not in summary["status"]
    ok, message = recheck_flow_region(combined)
    assert ok and "joined with the finite region from b = 30" in message, message
    bands = summary["bands_all_time"]
    assert list(bands) == ["1e+08", "1e+10", "1e+12", "1e+15", "1e+20", "1e+25", "1e+30"]
    low, high = (float(x) for x in bands["1e+12"]["b4_over_t"])
    assert 1.98 < low < 2 < high + 0.01 and high - low < 0.04  # the target: at most 2 % wide at 10¹²
    assert [r["t0"] for r in summary["rate"]] == [1e6, 1e12] and float(summary["rate"][1]["K"]) < 20
    interior = summary["interior_error_all_time"]
    assert [r["t"] for r in interior["rows"]] == [1e6, 1e8, 1e10, 1e12, 1e15, 1e20, 1e25, 1e30]
    assert float(interior["rows"][0]["sup_e_b"][0]) > 0.999999999 and interior["rows"][0]["sup_e_b"][1] == "1"
    assert "−1/4" in interior["limits"] and "−1/4" in summary["limits"]
    forged = copy.deepcopy(combined)
    forged["for_all_t"]["interior_error_all_time"]["rows"][0]["M"] = "1.000E-1"
    forged["digest"] = flow_digest(forged)
    ok, message = recheck_flow_region(forged)
    assert not ok and "for_all_t" in message
    older = copy.deepcopy(combined)  # as written before the C4 bounds were part of the summary: still accepted
    del older["for_all_t"]["interior_error_all_time"]
    older["for_all_t"]["limits"] = ("b(t)⁴/t → 2 (both band ends, at the rate above), hence log b/log t → 1/4; "
                                    "|a − calibration_a(b)| ≤ c/b → 0")
    older["digest"] = flow_digest(older)
    ok, message = recheck_flow_region(older)
    assert ok, message
    older["for_all_t"]["bands_all_time"]["1e+12"]["b4_over_t"][0] = "1.999"
    older["digest"] = flow_digest(older)
    ok, message = recheck_flow_region(older)
    assert not ok and "for_all_t" in message
    forged = copy.deepcopy(combined)
    forged["for_all_t"]["rate"][0]["K"] = "1"
    forged["digest"] = flow_digest(forged)
    ok, message = recheck_flow_region(forged)
    assert not ok and "for_all_t" in message
    forged = copy.deepcopy(combined)
    inner = forged["region"]["join"]["finite"]
    inner["entry"]["box"]["b"][0] = inner["entry"]["box"]["b"][1]
    inner["digest"] = digest(inner)
    forged["region"]["digest"] = digest(forged["region"])
    forged["digest"] = flow_digest(forged)
    ok, message = recheck_flow_region(forged)
    assert not ok, message
