"""The certified training run (``train --certify``): the chain, its certificate, its re-check and the tampers it rejects.

One chain is proved once per module: m = n = 32, seed 0, the trainer's large-resolution start
(b₀ = 8, a₀ = calibration_a(8)), its population step η, stopped by b_target = 16 or 60 steps. Every
tamper recomputes the digest, so only the content checks of
:func:`~stumpcheck.numerics.corpus.certified_run.recheck.recheck_training` can catch it.
"""

from __future__ import annotations

import copy
import json
from fractions import Fraction

import numpy as np
import pytest
from flint import arb, arb_mat, ctx

from stumpcheck.cli.commands import main
from stumpcheck.numerics.certified.certificates.lemma_certificate import digest, read_certificate
from stumpcheck.numerics.certified.enclosures.corpus_arb import corpus_gradient_arb
from stumpcheck.numerics.certified.fast.corpus import corpus_enclosure
from stumpcheck.numerics.corpus.certified_run import certify_training, float_distances
from stumpcheck.numerics.corpus.certified_run.batch import batch_enclosures
from stumpcheck.numerics.corpus.certified_run.certificate import double_text, training_certificate
from stumpcheck.numerics.corpus.certified_run.chain import stop_reason
from stumpcheck.numerics.corpus.certified_run.recheck import recheck_training
from stumpcheck.numerics.corpus.checkpoint import corpus_fingerprint
from stumpcheck.numerics.corpus.corpora import load_corpus, make_corpus
from stumpcheck.numerics.corpus.gd import train_gd
from stumpcheck.numerics.corpus.steps import choose_eta, large_resolution_start
from stumpcheck.numerics.precision import InputError

M = N = 32
STEPS = 60


@pytest.fixture(scope="module")
def run():
    corpus = make_corpus(M, N, seed=0)
    a0, b0 = large_resolution_start(M, N)
    eta, _ = choose_eta(corpus.x, corpus.theta, a0, b0, "population")
    trained = train_gd(corpus.x, corpus.theta, a0=a0, b0=b0, eta=eta, steps=STEPS, b_target=M / 2)
    chain = certify_training(corpus.x, corpus.theta, a0=a0, b0=b0, eta=eta, b_target=M / 2, max_steps=STEPS)
    info = {"sha256": corpus_fingerprint(corpus.x, corpus.theta), "m": M, "n": N, "seed": 0, "file": None}
    float_run = {"a": trained.trajectory["a"], "b": trained.trajectory["b"], "steps": trained.steps,
                 "stopped_because": trained.stopped_because, "method": "dense"}
    document = json.loads(json.dumps(training_certificate(chain, info, float_run=float_run)))
    return corpus, chain, trained, document


def _tampered(document, edit):
    d = copy.deepcopy(document)
    edit(d)
    d["digest"] = digest(d)
    return d


def _reason(run, edit, x=None, theta=None) -> str:
    corpus, _, _, document = run
    ok, reason, _, _ = recheck_training(_tampered(document, edit), corpus.x if x is None else x,
                                        corpus.theta if theta is None else theta, arb="none", float64=False)
    assert not ok and "\n" not in reason
    return reason


def test_the_chain_is_proved_and_rechecks(run):
    corpus, chain, trained, document = run
    assert chain.proved and chain.steps == trained.steps and chain.stopped_because == trained.stopped_because
    assert chain.relative_width_b() < 1e-9
    box = chain.final_box
    assert box["b"][0] <= trained.b <= box["b"][1] or float_distances(chain, trained.trajectory["a"],
                                                                        trained.trajectory["b"])["max_distance"] < 1e-9
    ok, reason, derived, notes = recheck_training(document, corpus.x, corpus.theta, float64=True)
    assert ok, reason
    assert derived["steps"] == chain.steps and derived["final_box"] == document["statement"]["final_box"]
    assert derived["start"] == [double_text(chain.a0), double_text(chain.b0)]
    assert any("float64 run recomputed" in note for note in notes)


def test_the_exact_iterates_computed_in_arb_lie_in_the_sets(run):
    """z_{k+1} = z_k − η∇L̂(z_k) in Arb balls (128 bits) from the exact start: in X_k = c_k + A_k·R_k (the frame
    coordinates A_k⁻¹(z_k − c_k) computed in Arb lie in R_k), hence in the boxes, for the first steps."""
    corpus, chain, _, _ = run
    with ctx.workprec(128):
        a, b = arb(chain.a0), arb(chain.b0)
        eta = arb(chain.eta)
        for k in range(6):
            c, A, R = chain.centres[k], chain.frames[k], chain.boxes[k]
            inverse = arb_mat([[arb(v) for v in row] for row in A]).inv()
            d = arb_mat([[a - arb(c[0])], [b - arb(c[1])]])
            r = inverse * d
            for i in range(2):
                assert r[i, 0].lower() >= R[i, 0] and r[i, 0].upper() <= R[i, 1], (k, i)
            for value, (lo, hi) in zip((a, b), chain.hulls[k]):
                assert value.lower() >= lo and value.upper() <= hi
            _, ga, gb = corpus_gradient_arb(corpus.x, corpus.theta, a, b, prec=128)
            a, b = a - eta * ga, b - eta * gb
            assert a.rad() < 1e-25 and b.rad() < 1e-25


def test_the_float64_run_lies_within_its_reported_distance(run):
    corpus, chain, trained, document = run
    section = document["float64_run"]
    reported = float(section["max_distance"])
    hulls = chain.hulls
    for k in range(section["steps_compared"]):
        za, zb = Fraction(float(trained.trajectory["a"][k])), Fraction(float(trained.trajectory["b"][k]))
        da = max(Fraction(hulls[k, 0, 0]) - za, za - Fraction(hulls[k, 0, 1]), 0)
        db = max(Fraction(hulls[k, 1, 0]) - zb, zb - Fraction(hulls[k, 1, 1]), 0)
        assert float(da) ** 2 + float(db) ** 2 <= reported ** 2 * (1 + 1e-12) + 1e-300
    assert section["steps_compared"] == min(trained.steps, chain.steps) + 1


def test_batch_enclosures_equal_corpus_enclosure_bit_for_bit(run):
    corpus = run[0]
    boxes = np.array([[9.0, 9.0, 8.0, 8.0], [9.0, 9.0 + 1e-9, 8.0, 8.0 + 1e-9], [12.0, 12.5, 10.0, 10.25]])
    flags = np.array([False, True, True])
    got = batch_enclosures(corpus.x, corpus.theta, boxes, flags)
    for (alo, ahi, blo, bhi), flag, row in zip(boxes, flags, got):
        want = corpus_enclosure(corpus.x, corpus.theta, (alo, ahi), (blo, bhi), hessian=bool(flag))
        assert np.array_equal(row[:want.shape[0]], want)


def test_a_narrowed_final_box_is_rejected(run):
    def narrow(d):
        d["statement"]["final_box"]["b"][0] = d["statement"]["final_box"]["b"][1]
    assert _reason(run, narrow) == "final_box is not the hull of the last recorded set"


def test_a_narrowed_intermediate_set_is_rejected_even_with_its_box_recomputed(run):
    k = 7

    def narrow(d):
        rec = d["chain"][k]
        lo, hi = (float.fromhex(v) for v in rec["r"][1])
        rec["r"][1] = [(lo / 2).hex(), (hi / 2).hex()]
        from stumpcheck.numerics.corpus.certified_run.lohner import hull_box
        c = np.array([float.fromhex(v) for v in rec["c"]])
        A = np.array([[float.fromhex(v) for v in row] for row in rec["A"]])
        R = np.array([[float.fromhex(v) for v in row] for row in rec["r"]])
        Z = hull_box(c, A, R)
        rec["box"] = {"a": [v.hex() for v in Z[0]], "b": [v.hex() for v in Z[1]]}
    assert _reason(run, narrow).startswith(f"step {k - 1} -> {k}: the image of X_{k - 1} is not inside the recorded X_{k}")


def test_a_changed_eta_start_or_step_count_is_rejected(run):
    _, chain, _, _ = run

    def eta(value):
        def edit(d):
            d["statement"]["eta"] = double_text(value)
            d["statement"]["text"] = d["statement"]["text"].replace(double_text(chain.eta), d["statement"]["eta"])
        return edit
    # 0.1 % more: the first step already lands elsewhere; one ulp more: some later step's image pokes out
    assert _reason(run, eta(chain.eta * 1.001)).startswith("step 0 -> 1: the image of X_0 is not inside")
    reason = _reason(run, eta(np.nextafter(chain.eta, 2 * chain.eta)))
    assert reason.startswith("step ") and "is not inside the recorded" in reason

    def start(d):
        d["statement"]["start"][1] = double_text(chain.b0 + 0.5)
    assert _reason(run, start) == "chain record 0 is not the start {(a0, b0)}"

    def steps(d):
        d["statement"]["steps"] -= 1
        d["chain"].pop()
    assert "the stopping rule does not hold for the whole box" in _reason(run, steps)


def test_unknown_fields_are_rejected(run):
    assert _reason(run, lambda d: d.update(note="trust me")) == "the certificate has unknown field(s) note"
    assert _reason(run, lambda d: d["statement"].update(b_end="64")) == "statement has unknown field(s) b_end"
    assert _reason(run, lambda d: d["chain"][3].update(w="0")) == "chain record 3 has unknown field(s) w"


def test_a_deleted_or_rewritten_arithmetic_record_is_rejected(run):
    assert _reason(run, lambda d: d.pop("arithmetic")) == "the certificate lacks the field(s) arithmetic"

    def rewrite(d):
        d["arithmetic"]["fast_layer"]["libm"] = "exp correctly rounded"
    assert "assumption 'libm'" in _reason(run, rewrite)

    def machine(d):
        d["arithmetic"]["fast_layer"]["machine"] = "elsewhere"
    corpus, _, _, document = run
    ok, _, _, notes = recheck_training(_tampered(document, machine), corpus.x, corpus.theta, arb="none",
                                       float64=False)
    assert ok and any("elsewhere" in note for note in notes)


def test_another_corpus_or_an_edit_without_the_digest_is_rejected(run):
    corpus, _, _, document = run
    other = make_corpus(M, N, seed=1)
    assert _reason(run, lambda d: None, other.x, other.theta) == "the corpus given is not the certificate's (sha256 differs)"
    edited = copy.deepcopy(document)
    edited["statement"]["steps"] = 1
    ok, reason, _, _ = recheck_training(edited, corpus.x, corpus.theta)
    assert not ok and "digest" in reason


def test_a_chain_too_wide_to_go_on_is_partial_and_its_recheck_fails_with_what_was_proved(run):
    corpus, chain, _, _ = run
    partial = certify_training(corpus.x, corpus.theta, a0=chain.a0, b0=chain.b0, eta=chain.eta, b_target=M / 2,
                               max_steps=STEPS, max_relative_width=1e-14)
    assert not partial.proved and "too wide" in partial.stopped_because and partial.steps < chain.steps
    document = json.loads(json.dumps(training_certificate(partial, {"sha256": corpus_fingerprint(corpus.x, corpus.theta),
                                                                    "m": M, "n": N})))
    assert document["status"] == "partial"
    ok, reason, derived, _ = recheck_training(document, corpus.x, corpus.theta, arb="none")
    assert not ok and "stopped before the trainer's rule held" in reason and derived["steps"] == partial.steps


def test_the_stopping_rule_of_a_set(run):
    rule = dict(eta=2.0, b_target=10.0, max_steps=5, t_max=None)
    assert stop_reason(0, 9.0, 9.5, **rule) == ("go", None)
    assert stop_reason(0, 10.0, 11.0, **rule) == ("stop", "b_target")
    assert stop_reason(5, 1.0, 2.0, **rule) == ("stop", "steps")
    assert stop_reason(1, 9.5, 10.5, **rule)[0] == "undecided"
    assert stop_reason(3, 1.0, 2.0, eta=2.0, b_target=None, max_steps=None, t_max=6.0) == ("stop", "t_max")


def test_bad_input_to_the_library_is_refused(run):
    corpus = run[0]
    with pytest.raises(InputError, match="stopping rule"):
        certify_training(corpus.x, corpus.theta, a0=9.0, b0=8.0, eta=1.0)
    with pytest.raises(InputError, match="b0"):
        certify_training(corpus.x, corpus.theta, a0=9.0, b0=-1.0, eta=1.0, max_steps=2)


def test_train_certify_writes_a_certificate_that_rechecks_and_a_narrowed_one_fails(tmp_path, capsys):
    out = tmp_path / "run"
    status = main(["train", "--m", "16", "--n", "16", "--seed", "0", "--init", "large-resolution", "--steps", "30",
                   "--certify", "--out", str(out), "--quiet"])
    assert status == 0
    assert "certified run: PROVED" in capsys.readouterr().out
    path = out / "training_certificate.json"
    assert main(["recheck", str(path), "--corpus", str(out / "corpus.npz")]) == 0
    assert capsys.readouterr().out.startswith(f"PASS {path}")
    document = read_certificate(path)
    document["statement"]["final_box"]["a"][1] = document["statement"]["final_box"]["a"][0]
    document["digest"] = digest(document)
    path.write_text(json.dumps(document), encoding="utf-8")
    assert main(["recheck", str(path), "--corpus", str(out / "corpus.npz")]) == 1
    assert "FAIL" in capsys.readouterr().out
    assert load_corpus(out / "corpus.npz").m == 16


@pytest.mark.parametrize("extra, message", [
    (["--estimator", "pooled"], "one-head corpus loss only"),
    (["--record-every", "5"], "--record-every at 1"),
])
def test_train_certify_refuses_what_it_cannot_prove(tmp_path, capsys, extra, message):
    out = tmp_path / "refused"
    status = main(["train", "--m", "16", "--n", "16", "--seed", "0", "--init", "large-resolution", "--steps", "5",
                   "--certify", "--out", str(out), "--quiet", *extra])
    assert status == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and message in err[0]
    assert not out.exists()


def test_recheck_of_a_training_certificate_needs_its_corpus(run, tmp_path, capsys):
    path = tmp_path / "training_certificate.json"
    path.write_text(json.dumps(run[3]), encoding="utf-8")
    assert main(["recheck", str(path)]) == 2
    assert "give --corpus" in capsys.readouterr().err


def test_an_interrupted_chain_resumes_to_the_uninterrupted_one(run, tmp_path):
    from stumpcheck.numerics.corpus.certified_run.checkpoint import read_chain, write_chain

    corpus, chain, _, _ = run
    fingerprint = corpus_fingerprint(corpus.x, corpus.theta)
    rule = dict(a0=chain.a0, b0=chain.b0, eta=chain.eta, b_target=M / 2, max_steps=STEPS, t_max=None)

    def interrupt(k, hull):
        if k == 17:
            raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        certify_training(corpus.x, corpus.theta, **rule, progress=interrupt,
                         checkpoint=lambda partial: write_chain(partial, tmp_path, fingerprint))
    paused = read_chain(tmp_path, fingerprint, **rule)
    assert paused.steps == 17 and not paused.proved
    resumed = certify_training(corpus.x, corpus.theta, **rule, resume_from=paused)
    assert resumed.proved and resumed.steps == chain.steps
    for name in ("centres", "frames", "boxes", "hulls"):
        assert np.array_equal(getattr(resumed, name), getattr(chain, name)), name
    with pytest.raises(InputError, match="another run"):
        read_chain(tmp_path, fingerprint, **dict(rule, eta=chain.eta * 2))
    with pytest.raises(InputError, match="another corpus"):
        read_chain(tmp_path, "0" * 64, **rule)


def test_the_certificate_records_what_the_summary_prints(run):
    _, chain, trained, document = run
    st = document["statement"]
    assert document["format"] == "stumpcheck-training-certificate/1" and document["status"] == "proved"
    assert st["eta"] == double_text(chain.eta) and Fraction(st["eta"]) == Fraction(chain.eta)
    assert [Fraction(v) for v in st["final_box"]["b"]] == [Fraction(v) for v in chain.final_box["b"]]
    assert st["stop"] == {"b_target": "16", "max_steps": STEPS, "t_max": None}
    assert document["arithmetic"]["fast_layer"]["libm"].startswith("exp, expm1, log, log1p")
    assert len(document["chain"]) == chain.steps + 1 and document["float64_run"]["steps"] == trained.steps
