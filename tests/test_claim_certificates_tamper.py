"""The certificates of C7's and C8's population proofs and of C9's descent: they re-check, and tampered copies (the
digest recomputed, so only the re-proof can catch them) are rejected; `stumpcheck recheck` on them."""

from __future__ import annotations

import copy
import json

import pytest
from click.testing import CliRunner

from stumpcheck.cli import cli, main
from stumpcheck.numerics.certified.boundary.certificate import boundary_certificate, recheck_boundary
from stumpcheck.numerics.certified.certificates.lemma_certificate import digest
from stumpcheck.numerics.corpus.corpora import make_corpus
from stumpcheck.numerics.corpus.descent import certify_descent
from stumpcheck.numerics.corpus.descent_certificate import descent_certificate, recheck_descent
from stumpcheck.numerics.corpus.gd import default_eta, train_gd
from stumpcheck.numerics.precision import InputError


@pytest.fixture(scope="module")
def boundary_documents():
    return {claim: json.loads(json.dumps(boundary_certificate(claim))) for claim in ("C7", "C8")}


@pytest.fixture(scope="module")
def descent_document():
    corpus = make_corpus(16, 16, seed=4)
    eta, _ = default_eta(corpus.x, corpus.theta, 10.0, 10.0)
    run = train_gd(corpus.x, corpus.theta, a0=10.0, b0=10.0, eta=eta, steps=30)
    proof = certify_descent(corpus.x, corpus.theta, run.trajectory["a"], run.trajectory["b"], float(eta))
    info = {"m": 16, "n": 16, "seed": 4, "prior": corpus.prior, "sampler": corpus.sampler_name}
    return json.loads(json.dumps(descent_certificate(corpus.x, corpus.theta, info, run, float(eta), proof)))


def _sealed(document, edit):
    changed = copy.deepcopy(document)
    edit(changed)
    changed["digest"] = digest(changed)
    return changed


def test_boundary_certificates_recheck(boundary_documents):
    for claim, document in boundary_documents.items():
        ok, message, statement = recheck_boundary(document)
        assert ok, message
        assert statement == document["statement"] and statement.startswith("for every b >= 10")


def _set(path, value):
    def edit(document):
        target = document
        for key in path[:-1]:
            target = target[key]
        target[path[-1]] = value
    return edit


@pytest.mark.parametrize("claim, edit, reason", [
    ("C7", _set(("leaves", 0, "upper"), "2.0"), "does not contain its re-enclosure"),           # narrowed: K smaller
    ("C7", lambda d: d["leaves"].pop(3), "gap or overlap"),                                      # a dropped leaf
    ("C7", _set(("statement",), "for every b >= 10: nothing"), "statement is not the one"),
    ("C7", _set(("parameters", "b_min"), "5"), "do not cover"),                                  # a larger domain
    ("C7", _set(("parameters", "c"), "1"), "does not contain"),                                  # a wider band
    ("C7", _set(("checks", "interior_constant"), "0.5"), "interior bounds"),
    ("C7", _set(("checks", "interior_floor"), "1"), "interior bounds"),
    ("C8", _set(("checks", "pooled_floor"), "1.001"), "pooled floor"),
    ("C7", _set(("identities", "one head: e(1) = κ₁(b) − 1"), False), "identities"),
    ("C7", _set(("extra",), 1), "does not define"),
    ("C7", _set(("leaves", 0, "note"), "x"), "exactly the fields"),
    ("C8", _set(("leaves", 0, "upper"), "0.5"), "does not contain"),
    ("C8", lambda d: d["leaves"].pop(), "do not cover"),
    ("C8", _set(("parameters", "target"), "0.9"), "target"),
    ("C8", _set(("statement",), "for every b >= 10 and every a >= b: sup |e| <= 0.1/b"), "statement is not"),
    ("C8", _set(("arithmetic", "balls"), "float64"), "arithmetic"),
])
def test_tampered_boundary_certificates_are_rejected(boundary_documents, claim, edit, reason):
    ok, message, statement = recheck_boundary(_sealed(boundary_documents[claim], edit))
    assert not ok and statement is None and reason in message, message


def test_an_edit_without_a_new_digest_is_rejected(boundary_documents):
    changed = copy.deepcopy(boundary_documents["C8"])
    changed["leaves"][0]["upper"] = "0.9"
    ok, message, _ = recheck_boundary(changed)
    assert not ok and "digest" in message


def test_boundary_limits_are_checked_before_work(boundary_documents):
    with pytest.raises(InputError, match="C7 or C8"):
        recheck_boundary(_sealed(boundary_documents["C7"], _set(("claim",), "C9")))
    with pytest.raises(InputError, match="leaves"):
        recheck_boundary(_sealed(boundary_documents["C7"], _set(("leaves",), [])))
    with pytest.raises(InputError):
        recheck_boundary({"format": "something else"})


def test_descent_certificate_rechecks(descent_document):
    ok, message, statement, notes = recheck_descent(descent_document)
    assert ok, message
    assert statement == descent_document["statement"] and "30 recorded steps" in statement
    assert notes and "bit for bit" in notes[0]


@pytest.mark.parametrize("edit, reason", [
    (lambda d: d["curvature"].__setitem__(0, d["curvature"][0] * 0.5), "M_k is not the one recomputed"),
    (_set(("M",), 1e-6), "M or 2/M"),
    (_set(("bound",), 1e9), "M or 2/M"),
    (lambda d: d["iterates"]["b"].__setitem__(7, d["iterates"]["b"][7] + 1e-4), "recomputed"),
    (_set(("run", "eta"), 1e4), "recomputed"),   # a larger step: other segments, other bounds
    (_set(("corpus", "seed"), 5), "sha256 differs"),
    (_set(("statement",), "anything"), "statement is not"),
    (_set(("run", "estimator"), "pooled"), "one-head"),
    (_set(("corpus", "note"), "x"), "exactly the fields"),
    (_set(("arithmetic", "fast_layer"), {}), "arithmetic"),
])
def test_tampered_descent_certificates_are_rejected(descent_document, edit, reason):
    ok, message, statement, _ = recheck_descent(_sealed(descent_document, edit))
    assert not ok and statement is None and reason in message, message


def test_descent_limits_are_checked_before_work(descent_document):
    with pytest.raises(InputError, match="steps"):
        recheck_descent(_sealed(descent_document, _set(("run", "steps"), 10**9)))
    with pytest.raises(InputError, match="iterates.a"):
        recheck_descent(_sealed(descent_document, lambda d: d["iterates"]["a"].pop()))


def test_recheck_cli_on_claim_certificates(tmp_path, capsys, boundary_documents, descent_document):
    runner = CliRunner()
    good = tmp_path / "c8.json"
    good.write_text(json.dumps(boundary_documents["C8"]), encoding="utf-8")
    result = runner.invoke(cli, ["recheck", str(good)])
    assert result.exit_code == 0 and result.output.startswith(f"PASS {good}: for every b >= 10"), result.output
    bad = tmp_path / "c9.json"
    bad.write_text(json.dumps(_sealed(descent_document, _set(("M",), 1e-6))), encoding="utf-8")
    result = runner.invoke(cli, ["recheck", str(bad)])
    assert result.exit_code == 1 and result.output.startswith(f"FAIL {bad}: M or 2/M"), result.output
    descent = tmp_path / "c9_good.json"
    descent.write_text(json.dumps(descent_document), encoding="utf-8")
    result = runner.invoke(cli, ["recheck", str(descent)])
    assert result.exit_code == 0 and "note: a GD run" in result.output, result.output
    assert main(["recheck", str(good), "--corpus", str(descent)]) == 2   # bad input: one line, exit 2
    assert "--corpus goes with" in capsys.readouterr().err
    assert main(["recheck", str(good), "--dps", "40"]) == 2    # an option this re-check does not use
    assert "--dps does nothing for a claim certificate" in capsys.readouterr().err
