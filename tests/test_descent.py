"""C9's certified descent (numerics/corpus/descent.py): λ_max bounds over boxes, boxes that cover the segments, the
proof on a short run, and that it fails when it should."""

from __future__ import annotations

import numpy as np
import pytest
from flint import arb

from stumpcheck.numerics.corpus.corpora import make_corpus
from stumpcheck.numerics.corpus.curvature import loss_gradient_hessian
from stumpcheck.numerics.corpus.descent import (certify_descent, certify_descent_from_enclosures, curvature_bounds,
                                                lambda_max_upper, segment_boxes, training_iterate_boxes)
from stumpcheck.numerics.corpus.empirical import loss_and_gradient
from stumpcheck.numerics.corpus.gd import default_eta, train_gd
from stumpcheck.numerics.precision import InputError


@pytest.fixture(scope="module")
def short_run():
    corpus = make_corpus(16, 16, seed=2)
    eta, _ = default_eta(corpus.x, corpus.theta, 10.0, 10.0)
    run = train_gd(corpus.x, corpus.theta, a0=10.0, b0=10.0, eta=eta, steps=40)
    return corpus, eta, run


def test_lambda_max_upper_bounds_every_matrix_of_the_box():
    rng = np.random.default_rng(0)
    for _ in range(200):
        lo = rng.normal(size=3)
        hi = lo + rng.uniform(0, 1, size=3)
        bound = float(lambda_max_upper(np.column_stack([lo, hi])))
        for _ in range(5):
            p, h, q = (rng.uniform(l, u) for l, u in zip(lo, hi))
            assert np.linalg.eigvalsh([[p, h], [h, q]])[-1] <= bound


def test_segment_boxes_cover_the_segment():
    direction = ((-0.3, -0.29), (0.5, 0.5000001))
    boxes = segment_boxes(10.0, 9.0, direction, 8)
    for s in np.linspace(0, 1, 101):
        for da in direction[0]:
            for db in direction[1]:
                a, b = 10.0 + s * da, 9.0 + s * db
                assert any(alo <= a <= ahi and blo <= b <= bhi for (alo, ahi), (blo, bhi) in boxes)


def test_curvature_bound_holds_the_exact_hessian(short_run):
    corpus, _, run = short_run
    a, b = run.trajectory["a"], run.trajectory["b"]
    box = ((min(a[:3]), max(a[:3])), (min(b[:3]), max(b[:3])))
    bound = curvature_bounds(corpus.x, corpus.theta, [box])[0]
    for ta in np.linspace(*box[0], 5):
        for tb in np.linspace(*box[1], 5):
            hessian = loss_gradient_hessian(corpus.x, corpus.theta, float(ta), float(tb))[2]
            assert np.linalg.eigvalsh(hessian)[-1] <= float(bound)


def test_certify_descent_on_a_short_run(short_run):
    corpus, eta, run = short_run
    proof = certify_descent(corpus.x, corpus.theta, run.trajectory["a"], run.trajectory["b"], float(eta))
    assert proof.proved and proof.steps == 40 and proof.eta_below_bound and proof.eta < proof.bound
    assert proof.bound * proof.M <= 2.0 and proof.smallest_decrease > 0
    assert arb(proof.M) >= 0 and proof.boxes >= 40 and "libm" in str(proof.assumptions)
    # the recorded losses do decrease (what the proof says of the iterates)
    losses = [loss_and_gradient(corpus.x, corpus.theta, float(a), float(b))[0]
              for a, b in zip(run.trajectory["a"], run.trajectory["b"])]
    assert np.all(np.diff(losses) < 0)


def test_certify_descent_takes_given_boxes_and_fails_honestly(short_run):
    corpus, eta, run = short_run
    a, b = run.trajectory["a"][10:16], run.trajectory["b"][10:16]   # short steps: one hull box each is enough
    hulls = [[((min(a[k], a[k + 1]) - 1e-9, max(a[k], a[k + 1]) + 1e-9),
               (min(b[k], b[k + 1]) - 1e-9, max(b[k], b[k + 1]) + 1e-9))] for k in range(5)]
    given = certify_descent(corpus.x, corpus.theta, a, b, float(eta), step_boxes=hulls)
    assert given.box_source == "given (step_boxes)" and given.boxes == 5 and given.iterate_decreases == 5
    # iterates of a run far above the step bound: the loss is not proved to decrease
    checked = 0
    for factor in (4.0, 30.0):
        wild = train_gd(corpus.x, corpus.theta, a0=10.0, b0=10.0, eta=factor * float(eta), steps=5)
        if wild.trajectory["b"].size < 2:
            continue
        checked += 1
        proof = certify_descent(corpus.x, corpus.theta, wild.trajectory["a"], wild.trajectory["b"],
                                factor * float(eta))
        assert not proof.proved and not proof.eta_below_bound
    assert checked >= 1


def test_certify_descent_from_iterate_enclosures(short_run):
    """A certified run's boxes Z_k (here: the recorded iterates widened by 10⁻⁹, a stand-in) feed the same proof."""
    corpus, eta, run = short_run
    boxes = [((a - 1e-9, a + 1e-9), (b - 1e-9, b + 1e-9)) for a, b in zip(run.trajectory["a"], run.trajectory["b"])]
    proof = certify_descent_from_enclosures(corpus.x, corpus.theta, boxes, float(eta))
    assert proof.proved and proof.steps == 40 and proof.iterate_decreases is None
    assert proof.box_source == "segments from the given iterate enclosures" and proof.eta < proof.bound
    point = certify_descent(corpus.x, corpus.theta, run.trajectory["a"], run.trajectory["b"], float(eta))
    assert point.M <= proof.M * (1 + 1e-3)  # wider starts, no smaller curvature bound
    with pytest.raises(InputError):
        certify_descent_from_enclosures(corpus.x, corpus.theta, boxes[:1], float(eta))
    with pytest.raises(InputError):
        certify_descent_from_enclosures(corpus.x, corpus.theta, [((1.0, 2.0), (-1.0, 1.0))] * 2, float(eta))


def test_training_certificate_boxes_feed_the_proof(short_run):
    """A training certificate's chain (here a stand-in with the format's fields: hulls in float.hex, eta exact)."""
    from fractions import Fraction

    corpus, eta, run = short_run
    chain = [{"k": k, "box": {"a": [(a - 1e-9).hex(), (a + 1e-9).hex()], "b": [(b - 1e-9).hex(), (b + 1e-9).hex()]}}
             for k, (a, b) in enumerate(zip(run.trajectory["a"], run.trajectory["b"]))]
    document = {"format": "stumpcheck-training-certificate/1", "chain": chain,
                "statement": {"eta": str(Fraction(float(eta)))}}
    boxes, eta_read = training_iterate_boxes(document)
    assert eta_read == float(eta) and len(boxes) == 41 and boxes[0][0][0] == run.trajectory["a"][0] - 1e-9
    assert certify_descent_from_enclosures(corpus.x, corpus.theta, boxes, eta_read).proved
    with pytest.raises(InputError):
        training_iterate_boxes({**document, "format": "x"})
    with pytest.raises(InputError):
        training_iterate_boxes({**document, "statement": {"eta": "1/3"}})


def test_segment_boxes_from_a_box_of_starts():
    boxes = segment_boxes((1.0, 1.5), (2.0, 2.25), ((0.1, 0.2), (-0.3, -0.1)), 4)
    for s in np.linspace(0, 1, 21):
        for a0 in (1.0, 1.5):
            for b0 in (2.0, 2.25):
                a, b = a0 + s * 0.2, b0 - s * 0.3
                assert any(alo <= a <= ahi and blo <= b <= bhi for (alo, ahi), (blo, bhi) in boxes)


def test_bad_input_is_refused(short_run):
    corpus, eta, run = short_run
    with pytest.raises(InputError):
        certify_descent(corpus.x, corpus.theta, [10.0], [10.0], float(eta))
    with pytest.raises(InputError, match="b > 0"):
        certify_descent(corpus.x, corpus.theta, [10.0, 11.0], [1.0, -1.0], float(eta))
    with pytest.raises(InputError):
        certify_descent(corpus.x, corpus.theta, run.trajectory["a"], run.trajectory["b"], -1.0)
    with pytest.raises(InputError):
        certify_descent(corpus.x, corpus.theta, run.trajectory["a"][:3], run.trajectory["b"][:3], float(eta),
                        step_boxes=[[]])
