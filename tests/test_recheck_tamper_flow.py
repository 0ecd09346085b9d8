"""Tampered flow (tube) and region certificates, each with its digest recomputed as a forger would: the
re-check rejects every one with a specific one-line reason (a FAIL, or bad input for what exceeds a limit).

Fixtures: the small tube of tests/test_tube.py (T = 0.05, two intervals of two rows, light settings; a few
seconds), the region b ∈ [30, 30.6] of tests/test_invariant_region.py, and tests/flow_certificate_1e6.json
for the row checks that need no θ-integral. Every tamper here fails before any θ-integral is recomputed.
"""

from __future__ import annotations

import copy
import json
from fractions import Fraction
from pathlib import Path

import pytest

from stumpcheck.numerics.certified.region.flow_certificate import for_all_t_summary, recheck_flow_region
from stumpcheck.numerics.certified.region.invariant_region import DEFAULT_REGION, Region
from stumpcheck.numerics.certified.region.certificate import recheck_region, region_certificate
from stumpcheck.numerics.certified.certificates.lemma_certificate import digest as region_digest
from stumpcheck.numerics.certified.tube.build import certified_tube
from stumpcheck.numerics.certified.tube.certificate import digest, flow_certificate, recheck_flow_certificate
from stumpcheck.numerics.certified.tube.piece import Settings
from stumpcheck.numerics.precision import InputError

HERE = Path(__file__).parent
LIGHT = Settings(defect_points=8, hessian_points=3, subdivisions=2, cells=(3, 1))
SHORT = DEFAULT_REGION.with_b_max(Fraction("30.6"))


@pytest.fixture(scope="module")
def tube_document(tmp_path_factory):
    tube = certified_tube(10.0, 10.0, 0.05, settings=LIGHT, max_step=0.03,
                          checkpoint=tmp_path_factory.mktemp("tube") / "tube_checkpoint.jsonl")
    assert tube.complete and len(tube.intervals) == 2
    return flow_certificate(tube)


@pytest.fixture(scope="module")
def million():
    return json.loads((HERE / "flow_certificate_1e6.json").read_text(encoding="utf-8"))


@pytest.fixture(scope="module")
def region_document():
    import math

    rho1 = -3 * 1.2020569031595942 + 1.5 + math.pi**2 / 3
    a = 30.1 + 2 * math.log(30.1) - rho1 / 30.1 - 0.158 / 30.1  # w = −0.158: inside R
    entry = {"t": "500000", "box": {"a": (f"{a - 1e-7:.9f}", f"{a + 1e-7:.9f}"), "b": ("30.100000", "30.100001")}}
    document = region_certificate(SHORT, entry=entry)
    assert document["status"] == "proved" and document["entry"]["check"]["inside"], document["entry"]
    return document


def _signed(document):
    document["digest"] = digest(document)
    return document


def _cheap(document):
    """The tube re-check's verdict before any θ-integral (a FAIL of the derived statement or the rows)."""
    from flint import ctx

    from stumpcheck.numerics.certified.tube import certificate as tc
    from stumpcheck.numerics.certified.tube.workers import bound_bits

    tc.check_limits(document, 25)
    a0, b0, radius, t_max, settings, parsed = tc._parse(document)
    assert document["digest"] == digest(document)
    fault = tc.statement_fault(document, a0, b0)
    if fault is not None:
        return fault
    settings = settings.at_dps(25)
    with ctx.workprec(bound_bits(settings)):
        return tc._cheap_checks(document, a0, b0, radius, t_max, settings, parsed)[1]


def _row(document, k, i):
    return document["intervals"][k]["rows"][i]


def _t_hi_to_next_end(d):
    _row(d, 0, 0)[1] = _row(d, 0, 1)[1]


def _t_lo_moved_earlier(d):
    _row(d, 1, 1)[0] = _row(d, 1, 0)[0]


def _overlap(d):
    _row(d, 1, 0)[0] = _row(d, 0, 0)[1]


def _last_past_t(d):
    _row(d, 1, 1)[1] = "2000"


def _t_hi_short(d):
    _row(d, 0, 1)[1] = _row(d, 0, 1)[0]


def _narrowed_box(d):
    _row(d, 1, 0)[5] = _row(d, 1, 0)[4]


def _dropped_row(d):
    d["intervals"][1]["rows"].pop()


def _estimator(d):
    d["estimator"] = "pooled"


def _false_start(d):
    d["statement"] = d["statement"].replace("(10.0, 10.0)", "(12.0, 10.0)")


def _statement_42(d):
    d["statement"] = "b(t) = 42 for all t"


def _t_max_lowered(d):
    d["t_max"] = "0.02"


def _t_max_raised(d):
    d["t_max"] = "0.5"


def _incomplete_valid_to(d):
    d["complete"], d["stop_reason"], d["valid_to_t"] = False, "stopped", "1000"


def _complete_as_text(d):
    d["complete"] = "yes"


def _stop_reason_on_complete(d):
    d["stop_reason"] = "b(t) = 42 for all t"


def _first_t_lo(d):
    _row(d, 0, 0)[0] = "-1"


def _incomplete_reaching_t(d):
    """Called incomplete, though its last interval reaches T: the re-check said 'valid to t = 0.05… < T'."""
    d["complete"], d["stop_reason"], d["valid_to_t"] = False, "stopped", _row(d, 1, 1)[1]


def _arithmetic_deleted(d):
    del d["arithmetic"]


def _arithmetic_rewritten(d):
    d["arithmetic"] = "correctly rounded; no assumption"


def _method_claim(d):
    d["method"] = "proved by hand and checked by two referees"


def _padding_text(d):
    d["padding"] = "none needed"


def _interval_note(d):
    d["intervals"][0]["note"] = "exact"


def _arithmetic_assumption_edited(d):
    d["arithmetic"]["assumptions"]["libm"] = "correctly rounded"


ROW_AND_STATEMENT = [
    (_t_hi_to_next_end, "ends at t"),
    (_t_lo_moved_earlier, "starts at t"),
    (_overlap, "starts at t"),
    (_last_past_t, "ends at t = 2000"),
    (_t_hi_short, "does not contain its proved time range"),
    (_narrowed_box, "does not contain the piece's hull"),
    (_dropped_row, "not the 2 sub-intervals of its settings"),
    (_estimator, "estimator 'pooled' is not what the re-check proves"),
    (_false_start, "the statement is not the one its start and radius give"),
    (_statement_42, "the statement is not the one its start and radius give"),
    (_t_max_lowered, "beyond T = 0.02"),
    (_t_max_raised, "called complete but its last interval ends before T"),
    (_incomplete_valid_to, "called incomplete but its last interval reaches T"),
    (_complete_as_text, "'complete' must be true or false"),
    (_stop_reason_on_complete, "a complete tube with a stop_reason"),
    (_first_t_lo, "starts at t = -1"),
    (_incomplete_reaching_t, "called incomplete but its last interval reaches T"),
    (_arithmetic_deleted, "the certificate has no arithmetic record (how its θ-integrals were enclosed): format /3 "
                          "requires it"),
    (_arithmetic_rewritten, "the arithmetic record needs 'integrals': 'fast' or 'arb'"),
    (_method_claim, "the method text is not the method this format's re-check checks"),
    (_padding_text, "'padding' (the relative padding of the recorded bounds) must be a number in [0, 1)"),
    (_interval_note, "interval 0 must hold exactly the fields"),
]


@pytest.mark.parametrize("tamper, reason", ROW_AND_STATEMENT, ids=[t.__name__.strip("_") for t, _ in ROW_AND_STATEMENT])
def test_a_tampered_tube_fails_its_recheck_with_the_reason(tube_document, tamper, reason):
    forged = copy.deepcopy(tube_document)
    tamper(forged)
    result = recheck_flow_certificate(_signed(forged), dps=25)
    assert not result.passed and reason in result.message and "\n" not in result.message, result.message
    assert result.leaves_checked == 0  # refused before any interval's θ-integrals


def test_the_untampered_small_tube_passes_and_says_what_it_proved(tube_document):
    result = recheck_flow_certificate(tube_document, dps=25)
    assert result.passed and "complete on [0, T = 0.05]" in result.message and "estimator one-head" in result.message
    assert result.statement == f"{tube_document['statement']}, for t in [0, T = 0.05]"
    assert tube_document["format"] == "stumpcheck-flow-certificate/3"


def test_an_edited_arithmetic_assumption_is_refused(tube_document):
    forged = copy.deepcopy(tube_document)
    if forged["arithmetic"]["integrals"] != "fast":
        pytest.skip("the tube was enclosed in Arb alone: no assumptions recorded")
    _arithmetic_assumption_edited(forged)
    result = recheck_flow_certificate(_signed(forged), dps=25)
    assert not result.passed and "assumptions are not the fast layer's" in result.message


def test_a_format_2_certificate_without_an_arithmetic_record_is_still_read(tube_document):
    """Format /2 was written before the record existed: without it, it is read (the record is required from /3)."""
    older = copy.deepcopy(tube_document)
    older["format"] = "stumpcheck-flow-certificate/2"
    del older["arithmetic"]
    assert _cheap(_signed(older)) is None


@pytest.mark.parametrize("edit, limit", [
    (lambda d: d.update(dps=100000), "outside the limits [15, 50]"),
    (lambda d: d.update(t_max="1e999999999"), "beyond the limit ±1000"),
    (lambda d: d["initial"].update(radius="1e-999999999"), "beyond the limit ±1000"),
    (lambda d: d["intervals"][0].update(delta="1" + "0" * 200), "more than the limit 100"),
    (lambda d: d["intervals"][0]["rows"][0].__setitem__(3, "1e99999"), "beyond the limit ±1000"),
    (lambda d: d["settings"].update(dps=10**6), "settings.dps = 1000000 is outside the limits"),
    (lambda d: d["intervals"][0]["piece"]["a"].extend(["0x0.0p+0"] * 100), "more than the limit 64"),
    (lambda d: d.update(intervals=d["intervals"] * 50001), "more than the limit 100000"),
], ids=["dps", "t_max_exponent", "radius_exponent", "long_decimal", "row_exponent", "settings_dps", "coefficients",
        "interval_count"])
def test_a_certificate_beyond_a_limit_is_refused_before_any_work(tube_document, edit, limit):
    forged = copy.deepcopy(tube_document)
    edit(forged)
    with pytest.raises(InputError, match=limit.replace("[", r"\[").replace("+", r"\+")):
        recheck_flow_certificate(_signed(forged), dps=25)


def test_a_recheck_precision_beyond_the_limit_is_refused(tube_document):
    with pytest.raises(InputError, match="the re-check's dps = 100010"):
        recheck_flow_certificate(tube_document, dps=100010)


@pytest.mark.parametrize("tamper, reason", [
    ("next_end", "ends at t"), ("last_2e6", "ends at t = 2000000"), ("lo_earlier", "starts at t"),
])
def test_the_1e6_tubes_rows_may_not_claim_unproved_time(million, tamper, reason):
    """The issue's tampers on the T = 10⁶ certificate (the true flow leaves a row's box stretched to the next
    row's end: b = 9.388357 < b_lo = 9.414176 at t = 103.82)."""
    assert _cheap(million) is None
    forged = copy.deepcopy(million)
    rows = [row for item in forged["intervals"] for row in item["rows"]]
    if tamper == "next_end":
        rows[100][1] = rows[101][1]
    elif tamper == "last_2e6":  # a T = 10⁶ tube whose last row claims up to 2·10⁶
        forged["intervals"][-1]["rows"][-1][1] = "2000000"
    else:
        rows[200][0] = rows[199][0]
    message = _cheap(_signed(forged))
    assert message is not None and reason in message, message


# ----- flow certificates with a region, and region certificates -----

def _region_signed(document):
    document["digest"] = region_digest(document)
    return document


def _c_smaller(d):
    d["region"]["c"] = "0.25"
    d["statement"] = Region.from_json(d["region"]).statement()


def _b_max_larger(d):
    d["region"]["b_max"] = "1000"
    d["statement"] = Region.from_json(d["region"]).statement()


def _statement_text(d):
    d["statement"] = d["statement"].replace("is forward invariant", "is forward invariant for all t and b")


def _proved_text(d):
    d["proved"] = d["proved"] + ["b(t) = 42 for all t"]


def _not_proved_text(d):
    d["not_proved"] = []


def _leaf_dropped(d):
    lemma = d["obligations"]["inward_upper"]
    lemma["leaves"] = []
    lemma["digest"] = region_digest(lemma)


def _summary_leaves(d):
    d["summary"]["drift_lower_half"]["leaves"] = 712


def _entry_box(d):
    d["entry"]["box"]["b"] = ["30.1", "30.2"]


def _entry_time(d):
    d["entry"]["t"] = "600000"


def _entry_bands(d):
    d["entry"]["horizon_t_B"] = "1e15"


REGION_TAMPERS = [
    (_c_smaller, "inward_upper does not state what the region needs"),
    (_b_max_larger, "inward_upper does not state what the region needs"),
    (_statement_text, "the statement is not the one the recorded region states"),
    (_proved_text, "'proved' or 'not_proved' texts are not the ones the recorded region gives"),
    (_not_proved_text, "'proved' or 'not_proved' texts are not the ones the recorded region gives"),
    (_leaf_dropped, "the summary of inward_upper is not the one its record gives"),
    (_summary_leaves, "the summary of drift_lower_half is not the one its record gives"),
    (_entry_box, "the entry's check, horizon or bands are not what the recorded box and region give"),
    (_entry_time, "the entry's check, horizon or bands are not what the recorded box and region give"),
    (_entry_bands, "the entry's check, horizon or bands are not what the recorded box and region give"),
]


@pytest.mark.parametrize("tamper, reason", REGION_TAMPERS, ids=[t.__name__.strip("_") for t, _ in REGION_TAMPERS])
def test_a_tampered_region_certificate_fails_with_the_reason(region_document, tamper, reason, monkeypatch):
    import stumpcheck.numerics.certified.certificates.lemma_recheck as recheck_module

    def no_leaves(*args, **kwargs):  # every tamper here must be refused before a leaf is re-enclosed
        raise AssertionError("a leaf was re-enclosed")

    monkeypatch.setattr(recheck_module, "recheck", no_leaves)
    forged = copy.deepcopy(region_document)
    tamper(forged)
    ok, message = recheck_region(_region_signed(forged))
    assert not ok and reason in message and "\n" not in message, message


@pytest.mark.parametrize("edit, limit", [
    (lambda d: d["obligations"]["inward_upper"].update(dps=100000), "outside the limits [15, 100]"),
    (lambda d: d["region"].update(b_max="1e999999999"), "beyond the limit ±1000"),
    (lambda d: d["entry"].update(t="1e999999999"), "beyond the limit ±1000"),
    (lambda d: d["entry"]["box"].update(a=["36.9", "36.8"]), "lo <= hi"),
    (lambda d: d["entry"].update(box=[1, 2]), "an entry needs 't'"),
    (lambda d: d["obligations"]["drift_upper_half"]["leaves"][0].update(lower="1e-999999999"), "beyond the limit"),
    (lambda d: d["obligations"]["inward_lower"].update(leaves=d["obligations"]["inward_lower"]["leaves"] * 20001),
     "more than the limit 20000"),
], ids=["lemma_dps", "b_max_exponent", "entry_t_exponent", "entry_box_reversed", "entry_box_shape", "leaf_lower",
        "leaf_count"])
def test_a_region_certificate_beyond_a_limit_is_refused_before_any_work(region_document, edit, limit):
    forged = copy.deepcopy(region_document)
    edit(forged)
    with pytest.raises(InputError, match=limit.replace("[", r"\[").replace("+", r"\+")):
        recheck_region(_region_signed(forged))


def test_for_all_t_without_a_region_must_be_the_writers_not_proved_record(million):
    for summary, reason in (({"proved": False, "status": "b(t) = 42 for all t"}, "must be exactly"),
                            ({"proved": False, "status": "for all t >= T: not proved (x)", "statement": "b = 42"},
                             "must be exactly"),
                            (for_all_t_summary(None, "b(t) = 42 for all t"), "not one the writer gives"),
                            ({"proved": True, "status": "for all t: b(t) = 42"}, "claims a proof")):
        ok, message = recheck_flow_region({**million, "for_all_t": summary})
        assert not ok and reason in message, message
    ok, _ = recheck_flow_region({**million, "for_all_t": for_all_t_summary(None, "entry box not in R: b > B")})
    assert ok


def test_a_first_format_tube_refuses_an_undefined_interval_field():
    from stumpcheck.numerics.certified.tube import certificate_v1

    document = json.loads((HERE / "flow_certificate_v1.json").read_text(encoding="utf-8"))
    document["intervals"][0]["note"] = "exact"
    result = certificate_v1.recheck_flow_certificate(_signed(document), dps=25)
    assert not result.passed and result.message.startswith("interval 0 must hold exactly the fields box, delta"), \
        result.message


@pytest.mark.parametrize("edit, message", [
    (lambda d: d["region_code"].__setitem__("note", "machine-checked"), "region_code must hold exactly"),
    (lambda d: d.__setitem__("seconds", "instant"), "seconds must be a number"),
], ids=["region_code_note", "seconds_text"])
def test_a_region_certificates_provenance_holds_nothing_else(region_document, edit, message):
    forged = copy.deepcopy(region_document)
    edit(forged)
    forged["digest"] = region_digest(forged)
    ok, reason = recheck_region(forged)
    assert not ok and reason.startswith(message), reason
