"""The arithmetic of the certified tube's θ-integrals (tube.arithmetic): the fast float64 layer with Arb
fallbacks by default, Arb only with ``arithmetic="arb"`` / ``flow --certified --arb``.

The small tube of tests/test_tube.py (T = 0.05, two intervals, light settings) in both arithmetics: each
certificate records its arithmetic (method, the fast layer's assumptions, the environment, counts that match
the integrals the settings call for), re-checks in either arithmetic (``recheck --arb`` re-encloses the
fast tube in Arb), and an edited record is rejected with its reason, even with the digest recomputed. The
checkpoint key includes the arithmetic, so neither run resumes from the other's intervals.
"""

from __future__ import annotations

import copy
import json

import pytest
from flint import arb, ctx

from stumpcheck.cli.commands import main
from stumpcheck.numerics.certified.fast.rounding import ASSUMPTIONS
from stumpcheck.numerics.certified.tube import arithmetic
from stumpcheck.numerics.certified.tube.analytic import ellipse_cells
from stumpcheck.numerics.certified.tube.build import certified_tube
from stumpcheck.numerics.certified.tube.certificate import (digest, flow_certificate, recheck_flow_certificate,
                                                            write_flow_certificate)
from stumpcheck.numerics.certified.tube.piece import Settings
from stumpcheck.numerics.certified.tube.workers import interval_key

LIGHT = Settings(defect_points=8, hessian_points=3, subdivisions=2, cells=(3, 1))


@pytest.fixture(scope="module")
def checkpoint(tmp_path_factory):
    return tmp_path_factory.mktemp("tube") / "tube_checkpoint.jsonl"


@pytest.fixture(scope="module")
def fast_tube(checkpoint):
    return certified_tube(10.0, 10.0, 0.05, settings=LIGHT, max_step=0.03, checkpoint=checkpoint)


@pytest.fixture(scope="module")
def arb_tube(fast_tube, checkpoint):
    # the same checkpoint: the Arb run must not resume from the fast run's intervals
    return certified_tube(10.0, 10.0, 0.05, settings=LIGHT, max_step=0.03, checkpoint=checkpoint, arithmetic="arb")


@pytest.fixture(scope="module")
def fast_document(fast_tube):
    return flow_certificate(fast_tube)


def _signed(document):
    document["digest"] = digest(document)
    return document


def test_the_fast_tube_records_its_arithmetic_and_counts_every_integral(fast_tube, fast_document):
    assert fast_tube.complete and len(fast_tube.intervals) == 2
    record = fast_document["arithmetic"]
    assert record["integrals"] == "fast" and record["assumptions"] == ASSUMPTIONS
    assert record["method"] == arithmetic.FAST_METHOD and record["environment"]["machine"]
    counts = record["counts"]
    intervals = len(fast_tube.intervals)
    assert sum(counts["gradients"].values()) == intervals * (LIGHT.defect_points + 1)
    assert sum(counts["hessians"].values()) == intervals * (LIGHT.hessian_points + 1)
    assert sum(counts["cells"].values()) == intervals * len(ellipse_cells(LIGHT.rho_ellipse, *LIGHT.cells))
    assert counts["gradients"]["fast"] > 0 and counts["hessians"]["fast"] > 0 and counts["cells"]["fast"] > 0


def test_the_arb_tube_does_not_resume_the_fast_checkpoint_and_records_arb(fast_tube, arb_tube, checkpoint):
    assert arb_tube.complete
    piece = fast_tube.intervals[0].piece
    assert interval_key(piece, LIGHT, "fast") != interval_key(piece, LIGHT, "arb")
    counts = arb_tube.counts.as_json()
    assert all(counts[k]["fast"] == 0 and counts[k]["arb"] > 0 for k in ("gradients", "hessians", "cells"))
    record = flow_certificate(arb_tube)["arithmetic"]
    assert record["integrals"] == "arb" and "assumptions" not in record
    lines = [json.loads(line) for line in checkpoint.read_text().splitlines()]
    assert len({line["key"] for line in lines}) == len(lines) == 2 * len(fast_tube.intervals)


def test_both_tubes_contain_each_other_s_start_and_have_comparable_boxes(fast_tube, arb_tube):
    """Both are rigorous enclosures of the same flow: their last boxes meet."""
    with ctx.workprec(128):
        fast_row, arb_row = fast_tube.intervals[-1].rows[-1], arb_tube.intervals[-1].rows[-1]
        for k in (2, 4):
            assert arb(fast_row[k]) <= arb(arb_row[k + 1]) and arb(arb_row[k]) <= arb(fast_row[k + 1])


def test_the_fast_certificate_rechecks_fast(fast_document):
    """(Its re-check in Arb: the command-line test below.)"""
    result = recheck_flow_certificate(fast_document, dps=25)
    assert result.passed, result.message
    assert "Arb fallbacks" in result.message


def test_a_fast_recheck_of_an_arb_certificate_passes(arb_tube):
    result = recheck_flow_certificate(flow_certificate(arb_tube), dps=25)
    assert result.passed, result.message


def _edit(document, change):
    forged = copy.deepcopy(document)
    change(forged["arithmetic"])
    return _signed(forged)


@pytest.mark.parametrize("change, reason", [
    (lambda r: r.update(integrals="float128"), "'integrals'"),
    (lambda r: r.update(integrals="arb"), "must hold exactly"),
    (lambda r: r["assumptions"].update(libm="exp within 0.5 ulp"), "assumptions are not the fast layer's"),
    (lambda r: r["assumptions"].pop("fused_operations"), "assumptions are not the fast layer's"),
    (lambda r: r.update(method="exact arithmetic"), "method is not the fast layer's"),
    (lambda r: r.pop("environment"), "must hold exactly"),
    (lambda r: r["counts"]["gradients"].update(arb=-1), "integers >= 0"),
    (lambda r: r["counts"].pop("cells"), "counts must give"),
    (lambda r: r["counts"].update(hessians={"fast": 0, "arb": 0}), "counts no integral"),
    (lambda r: r["environment"].update(numba=5), "environment must map"),
])
def test_an_edited_arithmetic_record_is_rejected(fast_document, change, reason):
    result = recheck_flow_certificate(_edit(fast_document, change), dps=25)
    assert not result.passed and reason in result.message, result.message


def test_an_arb_record_that_counts_fast_integrals_is_rejected(arb_tube):
    document = flow_certificate(arb_tube)
    forged = _edit(document, lambda r: r["counts"]["cells"].update(fast=3))
    result = recheck_flow_certificate(forged, dps=25)
    assert not result.passed and "says Arb but counts fast" in result.message


def test_a_certificate_without_a_record_is_read_as_arb_only(fast_document):
    """Certificates written before the fast layer (format /2) have no record; they stay readable (and re-check).
    Format /3 requires the record: deleting it from a /3 certificate is refused."""
    older = copy.deepcopy(fast_document)
    del older["arithmetic"]
    assert arithmetic.record_fault(None, 2) is None
    refused = recheck_flow_certificate(_signed(copy.deepcopy(older)), dps=25)
    assert not refused.passed and "format /3 requires it" in refused.message, refused.message
    older["format"] = "stumpcheck-flow-certificate/2"
    result = recheck_flow_certificate(_signed(older), dps=25)
    assert result.passed, result.message


def test_recheck_cli_arb_reencloses_a_fast_tube_in_arb(fast_document, tmp_path, capsys):
    path = tmp_path / "flow_certificate.json"
    write_flow_certificate(fast_document, path)
    assert main(["recheck", str(path), "--arb"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("PASS") and "in Arb" in out
    assert main(["recheck", str(path)]) == 0
    assert "Arb fallbacks" in capsys.readouterr().out


def test_flow_arb_needs_certified_and_is_passed_to_the_tube(tmp_path, capsys, monkeypatch):
    assert main(["flow", "--arb", "--t-max", "1"]) == 2
    assert "--arb needs --certified" in capsys.readouterr().err
    from stumpcheck.numerics.certified.tube import build

    seen = {}

    def fake(*args, **kwargs):
        seen.update(kwargs)
        raise KeyboardInterrupt

    monkeypatch.setattr(build, "certified_tube", fake)
    for flags, expected in (([], "fast"), (["--arb"], "arb")):
        assert main(["flow", "--certified", "--quiet", "--t-max", "0.01", "--out", str(tmp_path / "o"), *flags]) == 130
        assert seen["arithmetic"] == expected


def test_an_unknown_arithmetic_is_refused():
    with pytest.raises(ValueError):
        certified_tube(10.0, 10.0, 0.05, settings=LIGHT, arithmetic="float32")
