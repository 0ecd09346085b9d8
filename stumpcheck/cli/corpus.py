"""``stumpcheck corpus make`` and ``stumpcheck grad``: finite corpora and the exact corpus gradient.

Registered in :mod:`stumpcheck.cli.commands`. Bad input raises
:class:`stumpcheck.numerics.precision.InputError` (the CLI turns it into exit 2, one line).
"""

from __future__ import annotations

import json

import click

from stumpcheck.numerics.precision import InputError
from stumpcheck.cli.options import parse_float, parse_int, parse_scale, parse_score, parse_seed

__all__ = ["corpus", "grad"]


def _prior(text) -> tuple[float, float]:
    parts = [p.strip() for p in str(text).split(",")]
    if len(parts) != 2 or not all(parts):
        raise InputError(f"--prior must be LO,HI (two decimals separated by a comma), got {text!r}")
    return parse_float(parts[0], "prior"), parse_float(parts[1], "prior")


@click.group("corpus")
def corpus() -> None:
    """Finite corpora: m tasks, θ ~ Uniform[l, u], n features x ~ Uniform[0, 1] each (docs/model.md §1)."""


@corpus.command("make")
@click.option("--m", "m_text", required=True, help="Number of tasks m >= 1 (m·n at most 2e9 and within memory).")
@click.option("--n", "n_text", required=True, help="Points per task n >= 1.")
@click.option("--seed", "seed_text", required=True, help="Sampling seed, an integer in [0, 2^63 - 1].")
@click.option("--out", "out_file", required=True, type=click.Path(dir_okay=False), help="Output .npz file.")
@click.option("--prior", "prior_text", default="0,1", show_default=True, help="Threshold prior Uniform[LO,HI].")
def make(m_text, n_text, seed_text, out_file, prior_text) -> None:
    """Sample a seeded corpus and write it as .npz (arrays x: m × n, theta: m)."""
    from stumpcheck.numerics.corpus.corpora import make_corpus, save_corpus

    from stumpcheck.numerics.corpus.corpora import MAX_TOKENS
    from stumpcheck.numerics.resources import check_writable_file

    m = parse_int(m_text, "m", minimum=1, maximum=MAX_TOKENS)
    n = parse_int(n_text, "n", minimum=1, maximum=MAX_TOKENS)
    seed = parse_seed(seed_text)
    if m * n > MAX_TOKENS:
        raise InputError(f"m·n = {m * n} tokens is more than this command writes ({MAX_TOKENS:.0e})")
    prior = _prior(prior_text)
    check_writable_file(out_file, "--out")
    data = make_corpus(m, n, seed=seed, prior=prior)
    path = save_corpus(data, out_file)
    click.echo(f"wrote {path}: m={m}, n={n}, seed={seed}, prior=Uniform[{data.prior[0]}, {data.prior[1]}], "
               f"sampler {data.sampler_name}, float64")


@click.command("grad")
@click.option("--corpus", "corpus_file", required=True, type=click.Path(dir_okay=False), help="Corpus .npz file.")
@click.option("--a", "a_text", required=True, help="Label score a, |a| <= 1e150.")
@click.option("--b", "b_text", required=True, help="Feature score / attention scale b, 0 < b <= 1e150.")
@click.option("--estimator", default="one-head", show_default=True,
              type=click.Choice(["one-head", "reflected", "averaged", "pooled"]))
@click.option("--method", default="dense", show_default=True, type=click.Choice(["dense", "pruned"]))
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object (keys loss, grad_a, grad_b, ...).")
def grad(corpus_file, a_text, b_text, estimator, method, as_json) -> None:
    """Print the corpus loss L̂(a, b) and its exact gradient (float64)."""
    from stumpcheck.numerics.corpus.corpora import load_corpus
    from stumpcheck.numerics.corpus.empirical import loss_and_gradient

    a = parse_score(a_text, "a")
    b = parse_scale(b_text, "b")
    data = load_corpus(corpus_file)
    from stumpcheck.progress import fraction_bar

    with fraction_bar("loss and gradient", quiet=data.m * data.n < 10**7) as progress:
        loss, gradient = loss_and_gradient(data.x, data.theta, a, b, estimator=estimator, method=method,
                                           progress=progress)
    result = {"loss": loss, "grad_a": float(gradient[0]), "grad_b": float(gradient[1]), "a": a, "b": b,
              "estimator": estimator, "method": method, "precision": "float64", "m": data.m, "n": data.n,
              "corpus_seed": data.seed, "corpus": str(corpus_file), "evidence": "sampled"}
    if as_json:
        click.echo(json.dumps(result, sort_keys=True))
        return
    click.echo(f"# corpus {corpus_file} (m={data.m}, n={data.n}, seed={data.seed}), estimator {estimator}, "
               f"method {method}, a={a_text}, b={b_text}; float64")
    click.echo(f"L = {loss:.17g}")
    click.echo(f"dL/da = {gradient[0]:.17g}")
    click.echo(f"dL/db = {gradient[1]:.17g}")
