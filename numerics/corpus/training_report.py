"""Files, table and plot of a GD run (:func:`stumpcheck.numerics.corpus.gd.train_gd`).

``trajectory.csv`` (columns step, t, a, b, loss; floats written with ``repr``,
so they read back exactly), ``trajectory.json`` (the same arrays, the
settings, η and its rule, why the run stopped, the corpus and the provenance),
``frozen.json`` (the frozen estimator: a, b, estimator, steps, η, corpus seed)
and ``training.png`` (L̂ and b against the step: the figure of :func:`plot_training`).
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np

from stumpcheck.numerics.json_output import finite_json
from stumpcheck.numerics.corpus.gd import TrainResult
from stumpcheck.numerics.corpus.checkpoint import TRAJECTORY_KEYS
from stumpcheck.numerics.plotting import pyplot, save_figure
from stumpcheck.numerics.precision import InputError

__all__ = ["training_table", "write_training_outputs", "plot_training"]


def training_table(result: TrainResult, rows: int = 10) -> str:
    """A fixed-width table of about ``rows`` recorded steps, spaced evenly in log(1 + step)."""
    steps = result.trajectory["step"]
    if steps.size == 0:
        return "(no steps recorded)"
    wanted = np.unique(np.round(np.expm1(np.linspace(0, math.log1p(steps[-1]), rows))).astype(np.int64))
    index = np.unique(np.clip(np.searchsorted(steps, wanted), 0, steps.size - 1))
    header = f"{'step':>10} {'t = k*eta':>12} {'a':>14} {'b':>14} {'L_hat':>13} {'L_hat*b^2':>10}"
    lines = [header, "-" * len(header)]
    tr = result.trajectory
    for i in index:
        lines.append(f"{tr['step'][i]:10d} {tr['t'][i]:12.5e} {tr['a'][i]:14.6f} {tr['b'][i]:14.6f} "
                     f"{tr['loss'][i]:13.6e} {tr['loss'][i] * tr['b'][i] ** 2:10.5f}")
    return "\n".join(lines)


def write_training_outputs(result: TrainResult, out_dir, *, corpus: dict, provenance: dict) -> list[Path]:
    """Write trajectory.csv, trajectory.json, frozen.json and training.png into ``out_dir``.

    ``corpus`` describes the corpus (m, n, seed, prior, sampler, source); it is
    stored with the fingerprint. Returns the paths written.
    """
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    tr = result.trajectory
    paths = [result.to_csv(out / "trajectory.csv")]
    corpus_info = dict(corpus, fingerprint_sha256=result.corpus_fingerprint)
    payload = {key: tr[key] for key in TRAJECTORY_KEYS}
    payload.update(eta=result.eta, eta_rule=result.eta_rule, steps=result.steps,
                   stopped_because=result.stopped_because, settings=result.settings, corpus=corpus_info,
                   record_rule=f"z_k and L̂(z_k) recorded at k ≡ 0 (mod {result.settings.get('record_every')}) "
                               "and at the final step",
                   precision="float64", evidence="sampled (one seeded corpus, float64 GD)",
                   resumed_from_step=result.resumed_from_step, provenance=provenance)
    json_path = out / "trajectory.json"
    json_path.write_text(json.dumps(finite_json(payload), indent=1) + "\n", encoding="utf-8")
    paths.append(json_path)
    frozen = {"a": result.a, "b": result.b, "estimator": result.settings.get("estimator"), "steps": result.steps,
              "eta": result.eta, "loss": result.loss, "corpus_seed": corpus.get("seed"), "corpus": corpus_info,
              "stopped_because": result.stopped_because}
    frozen_path = out / "frozen.json"
    frozen_path.write_text(json.dumps(finite_json(frozen), indent=1) + "\n", encoding="utf-8")
    paths.append(frozen_path)
    paths.append(save_figure(plot_training(result), out / "training.png"))
    return paths


def plot_training(train_result):
    """A matplotlib figure of a GD run: L̂(z_k) (log scale, top) and a_k, b_k (bottom) against the step k.

    ``train_result``: a :class:`~stumpcheck.numerics.corpus.gd.TrainResult` (its recorded steps, float64); the
    title gives η, the estimator and why the run stopped. Two axes sharing the step axis, 6.4 × 6 in.
    matplotlib's backend: :func:`stumpcheck.numerics.plotting.pyplot`.

        >>> from stumpcheck.api import make_corpus, plot_training, train_gd
        >>> corpus = make_corpus(8, 16, seed=0)
        >>> figure = plot_training(train_gd(corpus.x, corpus.theta, steps=20))
        >>> [ax.get_ylabel() for ax in figure.axes], len(figure.axes[1].lines)
        (['corpus loss L̂', 'parameter'], 2)
    """
    if not isinstance(train_result, TrainResult):
        raise InputError(f"plot_training needs a TrainResult, got {type(train_result).__name__}")
    plt = pyplot()
    tr = train_result.trajectory
    fig, (top, bottom) = plt.subplots(2, 1, figsize=(6.4, 6), sharex=True)
    top.semilogy(tr["step"], tr["loss"], lw=1.2)
    top.set_ylabel("corpus loss L̂")
    top.set_title(f"constant-step GD, η = {train_result.eta:.4g}, {train_result.settings.get('estimator')}; "
                  f"stopped: {train_result.stopped_because[:40]}", fontsize=9)
    bottom.plot(tr["step"], tr["b"], lw=1.2, label="b (attention scale)")
    bottom.plot(tr["step"], tr["a"], lw=1.0, ls="--", label="a (label score)")
    bottom.set_xlabel("step k (t = kη)")
    bottom.set_ylabel("parameter")
    bottom.legend(fontsize=8)
    for ax in (top, bottom):
        ax.grid(alpha=0.3)
    fig.tight_layout()
    return fig
