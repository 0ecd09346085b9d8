"""``stumpcheck region --b-max inf`` (the tail b ≥ B) and ``stumpcheck recheck`` of its certificate."""

from __future__ import annotations

import json

import pytest
from stumpcheck.cli.commands import main


def _run(capsys, args):
    code = main(args)
    captured = capsys.readouterr()
    return code, captured.out, captured.err


@pytest.fixture()
def tail_dir(tmp_path, capsys):
    out = tmp_path / "tail"
    code, stdout, stderr = _run(capsys, ["region", "--b-min", "1000", "--b-max", "inf", "--out", str(out)])
    assert code == 0, stdout + stderr
    assert stdout.startswith("PROVED: R_inf")
    return out


def test_region_tail_proves_and_rechecks(tail_dir, capsys):
    path = tail_dir / "region_certificate.json"
    document = json.loads(path.read_text())
    assert document["assumptions"] == [] and "assum" not in document["statement"]
    assert float(document["rest"]["bound"]) < 1e-200
    code, stdout, _ = _run(capsys, ["recheck", str(path)])
    assert code == 0 and stdout.startswith("PASS") and "4 leaves tile" in stdout, stdout
    code, stdout, _ = _run(capsys, ["region", "--recheck", str(path), "--b-max", "inf", "--b-min", "1000"])
    assert code == 0, stdout


def _raise_a_margin(document):
    """The drift leaf's lower end raised to 1.5 (its margin is about 1.07), its records made to agree."""
    record = document["obligations"]["drift_upper_half"]
    record["leaves"][0]["lower"] = record["smallest_lower"] = "1.5"
    document["summary"]["drift_upper_half"]["smallest_lower"] = "1.5"


def test_recheck_rejects_a_tampered_copy_and_a_wrong_ask(tail_dir, tmp_path, capsys):
    from stumpcheck.numerics.certified.certificates.lemma_certificate import digest

    document = json.loads((tail_dir / "region_certificate.json").read_text())
    leaf = document["obligations"]["inward_lower"]["leaves"][0]
    leaf["upper"] = leaf["lower"]
    document["digest"] = digest(document)
    path = tmp_path / "tampered.json"
    path.write_text(json.dumps(document, ensure_ascii=False))
    code, stdout, _ = _run(capsys, ["recheck", str(path)])
    assert code == 1 and stdout.startswith("FAIL") and "narrowed" in stdout, stdout
    for edit, reason in ((lambda d: d["assumptions"].append("Lemma E (docs/tail.md §4)"), "assumptions"),
                         (_raise_a_margin, "narrowed"),
                         (lambda d: d["rest"].update(bound="1.00000000000E-300"), "rest")):
        document = json.loads((tail_dir / "region_certificate.json").read_text())
        edit(document)
        document["digest"] = digest(document)
        path.write_text(json.dumps(document, ensure_ascii=False))
        code, stdout, _ = _run(capsys, ["recheck", str(path)])
        assert code == 1 and stdout.startswith("FAIL") and reason in stdout, (reason, stdout)
    original = str(tail_dir / "region_certificate.json")
    code, stdout, _ = _run(capsys, ["region", "--recheck", original, "--b-max", "1000"])
    assert code == 1 and "b_max = inf" in stdout
    code, stdout, _ = _run(capsys, ["region", "--recheck", original, "--b-max", "inf", "--b-min", "2000"])
    assert code == 1 and "not the asked --b-min" in stdout


@pytest.mark.parametrize("args,text", [
    (["--b-max", "1000", "--join", "x.json"], "--join goes with --b-max inf"),
    (["--b-max", "inf", "--b-min", "500", "--join", "x.json"], "--join needs --b-min"),
    (["--b-max", "inf", "--b-min", "1000", "--entry-t", "1", "--entry-box", "1,2,3,4"], "--entry-t"),
    (["--b-max", "inf", "--b-min", "30", "--entry-t", "1", "--entry-box", "1,2,0,4"], "b > 0"),
])
def test_bad_input_exits_2(args, text, tmp_path, capsys):
    code, stdout, stderr = _run(capsys, ["region", *args, "--out", str(tmp_path / "o")])
    assert code == 2 and text in stderr and "Traceback" not in stderr, stderr


@pytest.mark.slow
def test_join_with_a_proved_finite_region():
    """The finite region b ∈ [990, 1000] (one leaf per obligation) joined to the tail from 1000: the whole
    certificate re-checks; an edited finite leaf inside the join is rejected even with both digests resealed."""
    import copy
    from fractions import Fraction

    from stumpcheck.numerics.certified.certificates.lemma_certificate import digest
    from stumpcheck.numerics.certified.region.certificate import region_certificate
    from stumpcheck.numerics.certified.region.invariant_region import Region
    from stumpcheck.numerics.certified.region.tail import DEFAULT_TAIL
    from stumpcheck.numerics.certified.region.tail_certificate import recheck_tail, tail_certificate

    finite = region_certificate(Region(990, 1000, Fraction(1, 2), Fraction(5, 2), Fraction(11, 2)))
    assert finite["status"] == "proved"
    joined = tail_certificate(DEFAULT_TAIL, finite=finite)
    ok, message = recheck_tail(joined)
    assert ok and "joined with the finite region from b = 990" in message, message
    forged = copy.deepcopy(joined)
    inner = forged["join"]["finite"]
    inner["obligations"]["inward_upper"]["leaves"] = []
    inner["digest"] = digest(inner)
    forged["digest"] = digest(forged)
    ok, message = recheck_tail(forged)
    assert not ok and "finite region" in message, message


def test_flow_refuses_a_lone_tail_certificate_at_once(tail_dir, tmp_path, capsys):
    """A tail with no joined finite region gives the tube's entry nowhere to land: one line, exit 2, before any
    tube is computed; --region-b-max inf with a finite region certificate likewise."""
    code, _, stderr = _run(capsys, ["flow", "--certified", "--t-max", "1", "--region-certificate",
                                    str(tail_dir / "region_certificate.json"), "--out", str(tmp_path / "f")])
    assert code == 2 and "joined finite region" in stderr and "Traceback" not in stderr, stderr
    finite = tmp_path / "finite"
    code, _, _ = _run(capsys, ["region", "--b-min", "990", "--b-max", "1000", "--out", str(finite)])
    assert code == 0
    code, _, stderr = _run(capsys, ["flow", "--certified", "--t-max", "1", "--region-certificate",
                                    str(finite / "region_certificate.json"), "--region-b-max", "inf",
                                    "--out", str(tmp_path / "g")])
    assert code == 2 and "needs a tail certificate" in stderr and "Traceback" not in stderr, stderr
