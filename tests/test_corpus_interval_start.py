"""The start search of a corpus interval (numerics/corpus/interval/start.py): b_start and the step chosen so
that the first column proves, the η rule text and its halvings, and the fallback when nothing proves."""

from __future__ import annotations

from fractions import Fraction

import pytest

from stumpcheck.numerics.corpus.corpora import make_corpus
from stumpcheck.numerics.corpus.interval import start as start_module
from stumpcheck.numerics.corpus.interval.centre import eta_half_curvature
from stumpcheck.numerics.corpus.interval.run import HALF_CURVATURE_RULE, prove_interval
from stumpcheck.numerics.corpus.interval.start import MAX_HALVINGS, choose_start, halved_rule, halvings_of_rule

F = Fraction
BAND = (F(1, 20), F(1, 2))


@pytest.fixture(scope="module")
def corpus():
    return make_corpus(32, 32, seed=1)


def test_a_too_large_step_is_halved_until_the_first_column_proves(corpus, monkeypatch):
    """With the half-curvature rule made 16 times too large (340 → 5440), the gd obligation fails at b = 8;
    the search halves the step and takes the first one that proves, recording every trial."""
    real = eta_half_curvature
    monkeypatch.setattr(start_module, "eta_half_curvature", lambda *a, **k: 16 * real(*a, **k))
    chosen = choose_start(corpus.x, corpus.theta, b_max=F(10), band=BAND)
    assert chosen.b_start == 8 and chosen.halvings is not None and chosen.halvings > 0
    assert chosen.eta == F(5440) / 2 ** chosen.halvings
    outcomes = [t[2] for t in chosen.tried]
    assert outcomes == ["not proved"] * chosen.halvings + ["proved"]
    assert chosen.first is not None and chosen.record()["chosen"]["halvings"] == chosen.halvings


def test_the_rule_text_of_a_halved_step():
    assert halved_rule(HALF_CURVATURE_RULE, 0) == HALF_CURVATURE_RULE
    for k in range(1, MAX_HALVINGS + 1):
        assert halvings_of_rule(halved_rule(HALF_CURVATURE_RULE, k), HALF_CURVATURE_RULE) == k
    assert halvings_of_rule(HALF_CURVATURE_RULE + "; halved 9 time(s) so that the first column proves",
                            HALF_CURVATURE_RULE) is None
    assert halvings_of_rule("given: 3", HALF_CURVATURE_RULE) is None


def test_the_proof_starts_from_the_search_and_states_its_rule(corpus, monkeypatch):
    real = eta_half_curvature
    monkeypatch.setattr(start_module, "eta_half_curvature", lambda *a, **k: 16 * real(*a, **k))
    run, document = prove_interval(corpus.x, corpus.theta, b_start=None, b_max=F(9), start_search=True)
    k = document["start_search"]["chosen"]["halvings"]
    assert document["eta_rule"] == halved_rule(HALF_CURVATURE_RULE, k) and k > 0
    assert document["statement"]["eta"] == str(F(5440) / 2 ** k) and run.b_end == 9
    assert document["end"]["status"] == "b_max reached"


def test_nothing_proves_falls_back_to_the_first_candidate(corpus):
    """A given step far too large: no trial proves; the unhalved given step at b = 8 is returned."""
    chosen = choose_start(corpus.x, corpus.theta, b_max=F(16), band=BAND, eta=F(10) ** 6)
    assert chosen.b_start == 8 and chosen.eta == F(10) ** 6 and chosen.halvings is None and chosen.first is None
    assert all(t[2] == "not proved" for t in chosen.tried)


def test_a_halved_step_rechecks_and_its_search_is_run_again(corpus, monkeypatch):
    """The half-curvature rule made 16 times too large on both sides (prover and re-check): the certificate of a
    halved step passes; the re-check runs every earlier trial's first column again (one call each, at the
    recorded steps); a trial recorded as not proved that the re-check proves, a dropped trial, or the record
    removed are refused. With the true rule the statement's η is not the rule's."""
    import copy

    from stumpcheck.numerics.certified.certificates.lemma_certificate import digest
    from stumpcheck.numerics.corpus.interval import certificate
    from stumpcheck.numerics.corpus.interval.certificate import recheck_interval

    real = eta_half_curvature

    def large(*args, **kwargs):
        return 16 * real(*args, **kwargs)

    monkeypatch.setattr(start_module, "eta_half_curvature", large)
    monkeypatch.setattr(certificate, "eta_half_curvature", large)
    _, document = prove_interval(corpus.x, corpus.theta, b_start=None, b_max=F(9), start_search=True,
                                 corpus_info={"seed": 1, "file": "corpus.npz"})
    k = document["start_search"]["chosen"]["halvings"]
    assert k > 0 and [t[2] for t in document["start_search"]["tried"]] == ["not proved"] * k + ["proved"]

    def recheck(edit=None):
        d = copy.deepcopy(document)
        if edit is not None:
            edit(d)
            d["digest"] = digest(d)
        return recheck_interval(d, corpus.x, corpus.theta, arb="none")

    real_prove, steps = start_module.prove_column, []

    def counted(*args, **kwargs):
        steps.append(args[5])
        return real_prove(*args, **kwargs)

    monkeypatch.setattr(start_module, "prove_column", counted)
    ok, reason, _ = recheck()
    assert ok, reason
    assert steps == [F(5440) / 2 ** j for j in range(k)]
    monkeypatch.setattr(start_module, "prove_column", lambda *args, **kwargs: ([], None))
    assert recheck()[1] == (f"start_search says the first column at b_start = 8, eta = 5440 was not proved, but the "
                            "re-check proves it")
    monkeypatch.setattr(start_module, "prove_column", real_prove)
    assert recheck(lambda d: d["start_search"]["tried"].pop(0))[1].startswith(
        "start_search's trials at b_start = 8 are not the search's steps")
    assert recheck(lambda d: d.pop("start_search"))[1] == (
        "the eta_rule says the step was halved by a start search, but there is no start_search")
    monkeypatch.setattr(certificate, "eta_half_curvature", real)
    assert recheck()[1] == (f"the half-curvature rule gives eta = {F(340) / 2 ** k} on this corpus and centre, not "
                            f"the statement's {document['statement']['eta']}")
