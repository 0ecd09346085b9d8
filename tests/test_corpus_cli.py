"""``stumpcheck corpus make`` and ``stumpcheck grad``."""

from __future__ import annotations

import json

import numpy as np
import pytest

from stumpcheck.numerics.corpus.corpora import load_corpus, make_corpus
from stumpcheck.numerics.corpus.empirical import loss_and_gradient, pruned_window_bound
from stumpcheck.cli.commands import main


def run(argv, capsys):
    status = main(argv)
    captured = capsys.readouterr()
    return status, captured.out, captured.err


def test_make_then_grad_json(tmp_path, capsys):
    path = tmp_path / "c.npz"
    status, out, _ = run(["corpus", "make", "--m", "20", "--n", "15", "--seed", "4", "--out", str(path),
                          "--prior", "0.1,0.9"], capsys)
    assert status == 0 and "seed=4" in out
    data = load_corpus(path)
    expected = make_corpus(20, 15, seed=4, prior=(0.1, 0.9))
    assert np.array_equal(data.x, expected.x) and data.prior == (0.1, 0.9)
    status, out, _ = run(["grad", "--corpus", str(path), "--a", "12.5", "--b", "10", "--json"], capsys)
    assert status == 0
    result = json.loads(out)
    loss, grad = loss_and_gradient(data.x, data.theta, 12.5, 10.0)
    assert result["loss"] == loss and result["grad_a"] == grad[0] and result["grad_b"] == grad[1]
    assert result["precision"] == "float64" and result["corpus_seed"] == 4
    assert all(isinstance(result[k], float) for k in ("loss", "grad_a", "grad_b"))


def test_grad_text_and_pruned(tmp_path, capsys):
    path = tmp_path / "c.npz"
    run(["corpus", "make", "--m", "10", "--n", "200", "--seed", "1", "--out", str(path)], capsys)
    status, out, _ = run(["grad", "--corpus", str(path), "--a", "520", "--b", "500", "--estimator", "pooled",
                          "--method", "pruned"], capsys)
    assert status == 0
    values = {line.split(" = ")[0]: float(line.split(" = ")[1]) for line in out.splitlines() if " = " in line}
    data = load_corpus(path)
    loss, grad = loss_and_gradient(data.x, data.theta, 520.0, 500.0, estimator="pooled")
    assert values["L"] == pytest.approx(loss, rel=1e-12)
    # pruned values below the documented window bound are not resolved (here dL/da ~ 1e-124)
    assert values["dL/da"] == pytest.approx(grad[0], rel=1e-12, abs=64 * pruned_window_bound(200))
    assert values["dL/db"] == pytest.approx(grad[1], rel=1e-12)


def _bad_corpus(tmp_path):
    path = tmp_path / "bad.npz"
    np.savez(path, x=np.array([[0.2, np.nan]]), theta=np.array([0.5]))
    return path


@pytest.mark.parametrize("argv, fragment", [
    (["corpus", "make", "--m", "0", "--n", "3", "--seed", "1", "--out", "{tmp}/o.npz"], "--m must be >= 1"),
    (["corpus", "make", "--m", "2", "--n", "x", "--seed", "1", "--out", "{tmp}/o.npz"], "--n must be an integer"),
    (["corpus", "make", "--m", "2", "--n", "3", "--seed", "-4", "--out", "{tmp}/o.npz"], "--seed must be"),
    (["corpus", "make", "--m", "2", "--n", "3", "--seed", "1", "--out", "{tmp}/o.npz", "--prior", "0.5"], "--prior"),
    (["corpus", "make", "--m", "2", "--n", "3", "--seed", "1", "--out", "{tmp}/o.npz", "--prior", "0.6,0.2"],
     "prior must satisfy"),
    (["corpus", "make", "--m", "2", "--n", "3", "--seed", "1", "--out", "{tmp}/no/such/dir/o.npz"], "cannot write"),
    (["grad", "--corpus", "{tmp}/absent.npz", "--a", "1", "--b", "1"], "does not exist"),
    (["grad", "--corpus", "{bad}", "--a", "1", "--b", "1"], "non-finite"),
    (["grad", "--corpus", "{good}", "--a", "nan", "--b", "1"], "a must be finite"),
    (["grad", "--corpus", "{good}", "--a", "1", "--b", "1e999"], "out of the float64 range"),
    (["grad", "--corpus", "{good}", "--a", "1", "--b", "1", "--method", "fast"], "Invalid value"),
])
def test_bad_input_exits_2_with_one_line(tmp_path, capsys, argv, fragment):
    good = tmp_path / "good.npz"
    np.savez(good, x=np.array([[0.2, 0.7]]), theta=np.array([0.5]))
    argv = [a.format(tmp=tmp_path, bad=_bad_corpus(tmp_path), good=good) for a in argv]
    status, _, err = run(argv, capsys)
    assert status == 2 and fragment in err and len(err.strip().splitlines()) == 1, err
