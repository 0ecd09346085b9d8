"""Claim C9 (docs/model.md §7): constant-step GD is a descent method below a computed step bound.

On a seeded corpus, GD runs from (a₀, b₀) = (10, 10) with the default step
η = 1/‖∇²L̂(a₀, b₀)‖₂ (:func:`stumpcheck.numerics.corpus.gd.default_eta`). The step bound is
the descent-lemma bound 2/M, M = max ‖∇²L̂‖₂ over every iterate z_k and every
segment midpoint (z_k + z_{k+1})/2 of the run (exact Hessian,
:mod:`stumpcheck.numerics.corpus.curvature`; sampled, not certified between those
points). If η ≥ 2/M the run is repeated with η = M⁻¹ (= half the bound,
measured on the new run) until η < 2/M on its own visited region.

Figure: the number of steps k with L̂(z_{k+1}) > L̂(z_k)·(1 + 8·2⁻⁵²) (an increase
larger than 8 units in the last place relative to L̂, the rounding level of a
float64 mean of m squared errors, each a few ulps accurate), the largest
relative increase L̂(z_{k+1})/L̂(z_k) − 1 (reported even when it is ≤ 0 or below the
rounding level), and the raw count of any increase at all. PASS iff η < 2/M
and there is no increase above that level.

**Certified** (one head, :func:`stumpcheck.numerics.corpus.descent.certify_descent`): λ_max(∇²L̂) ≤ M is
enclosed over boxes that hold every segment of the run (the recorded iterates' and the exact steps'), so the
descent lemma proves that L̂ decreases at each of the run's steps, and η < 2/M with M rigorous. When that proof
holds the row's evidence is *certified* (``details["certified"]``) and the sampled figures above stay in the
row as a control that must agree with it (an increase of the float64 L̂ beyond rounding where every step is
proved to decrease would be a defect: the row FAILs); else the row keeps its sampled verdict and evidence, with
the reason.

For contrast (details and plot, not part of PASS) the same number of steps
runs at η = 3·(2/M) and 10·(2/M), above the bound, with iterates allowed to
leave b > 0 (L̂ is defined for every real b), to show what the bound guards
against: it is sufficient, not necessary, and the loss may still decrease
somewhat above it.
"""

from __future__ import annotations

import time
from pathlib import Path

import numpy as np

from stumpcheck.claims.result import ClaimResult
from stumpcheck.numerics.corpus.corpora import make_corpus
from stumpcheck.numerics.corpus.gd import default_eta, step_bound, train_gd

__all__ = ["ABOVE_FACTORS", "ROUNDING_ULPS", "check_c9", "loss_increases"]

#: an increase of L̂ counts only if larger than this many float64 ulps, relative to L̂
ROUNDING_ULPS = 8
#: step sizes above the bound run for contrast, as multiples of the bound
ABOVE_FACTORS = (3.0, 10.0)
_ULP = 2.0**-52


def loss_increases(loss, *, ulps: int = ROUNDING_ULPS) -> dict:
    """Counts of increases along a loss sequence: above ``ulps``·2⁻⁵² relative, and any at all.

    Also the largest relative change L̂_{k+1}/L̂_k − 1 over the run and the step where it occurs.
    """
    loss = np.asarray(loss, dtype=np.float64)
    if loss.size < 2:
        return {"increases": 0, "raw_increases": 0, "max_relative_increase": None, "at_step": None}
    relative = loss[1:] / loss[:-1] - 1.0
    worst = int(np.argmax(relative))
    return {"increases": int(np.count_nonzero(loss[1:] > loss[:-1] * (1.0 + ulps * _ULP))),
            "raw_increases": int(np.count_nonzero(loss[1:] > loss[:-1])),
            "max_relative_increase": float(relative[worst]), "at_step": worst}


def _bound_over_run(x, theta, result, estimator):
    a, b = result.trajectory["a"], result.trajectory["b"]
    points_a = np.concatenate([a, (a[:-1] + a[1:]) / 2])
    points_b = np.concatenate([b, (b[:-1] + b[1:]) / 2])
    return step_bound(x, theta, points_a, points_b, estimator=estimator)


def check_c9(*, quick: bool = True, seed: int = 0, out_dir=None, estimator: str = "one-head") -> ClaimResult:
    """C9 on a corpus m = n = 64 (quick, 600 steps) or m = n = 256 (2000 steps), corpus seed ``seed``."""
    started = time.perf_counter()
    m, n, steps = (64, 64, 600) if quick else (256, 256, 2000)
    corpus = make_corpus(m, n, seed=seed)
    x, theta = corpus.x, corpus.theta
    eta, rule = default_eta(x, theta, 10.0, 10.0, estimator=estimator)
    attempts = []
    for _ in range(4):
        run = train_gd(x, theta, a0=10.0, b0=10.0, eta=eta, steps=steps, estimator=estimator)
        bound = _bound_over_run(x, theta, run, estimator)
        attempts.append({"eta": eta, "bound": bound.bound, "max_curvature": bound.curvature,
                         "at": [bound.at_a, bound.at_b], "stopped_because": run.stopped_because})
        if eta < bound.bound:
            break
        eta = 1.0 / bound.curvature
        rule = (f"eta = 1/M = {eta:.6g}, M = max ||Hess L̂||_2 over the previous run's iterates and midpoints "
                "(the default rule's step was not below that run's bound)")
    below = loss_increases(run.trajectory["loss"])
    contrast = []
    for factor in ABOVE_FACTORS:
        above_run = train_gd(x, theta, a0=10.0, b0=10.0, eta=factor * bound.bound, steps=steps,
                             estimator=estimator, keep_b_positive=False)
        contrast.append((factor, above_run, loss_increases(above_run.trajectory["loss"])))
    sampled_ok = eta < bound.bound and below["increases"] == 0 and run.stopped_because == "steps"
    certified = _certified_descent(x, theta, run, eta, estimator)
    by_proof = certified is not None and certified["proved"]
    proof_object = certified.pop("_proof") if certified is not None else None
    if by_proof and out_dir is not None:
        certified["certificate"] = _write_certificate(x, theta, corpus, run, eta, proof_object, Path(out_dir))
    ok = sampled_ok  # a proof that fails leaves the sampled verdict, with its reason (details["certified"])
    plots = []
    if out_dir is not None:
        plots.append(_plot(run, [r for _, r, _ in contrast], bound.bound, Path(out_dir)))
    max_inc = below["max_relative_increase"]
    above_text = "; ".join(f"{f:g}x bound: {inc['increases']} increases (max rel. {inc['max_relative_increase']:.3g})"
                           for f, _, inc in contrast)
    figure = (_certified_text(certified) if by_proof else "") + (
              f"sampled: {below['increases']} increases of L̂ (> {ROUNDING_ULPS} ulp) in {run.steps} GD steps at "
              f"eta = {eta:.6g} < bound 2/M = {bound.bound:.6g} (M = {bound.curvature:.4g} at a={bound.at_a:.4g}, "
              f"b={bound.at_b:.4g}); max relative change {max_inc:.3e}; above the bound (not part of PASS): "
              f"{above_text}")
    return ClaimResult(
        id="C9", statement="constant-step GD is a descent method below a computed step bound",
        figure=figure,
        tolerance=(f"0 increases larger than {ROUNDING_ULPS}·2^-52 relative, with eta < 2/max||Hess L̂||_2 over "
                   "the iterates and segment midpoints of the run"),
        status="PASS" if ok else "FAIL", evidence="certified" if by_proof else "sampled",
        seconds=time.perf_counter() - started,
        details={"m": m, "n": n, "seed": seed, "corpus_sampler": corpus.sampler_name, "prior": corpus.prior,
                 "estimator": estimator, "a0": 10.0, "b0": 10.0, "steps": run.steps,
                 "precision": ("float64 run; fast float64 interval enclosures with outward rounding and Arb for "
                               "the proof" if by_proof else "float64"),
                 "certified": certified,
                 "eta": eta, "eta_rule": rule, "bound": bound.bound, "max_curvature": bound.curvature,
                 "curvature_points": bound.points, "attempts": attempts, "below_bound": below,
                 "final": {"a": run.a, "b": run.b, "loss": run.loss},
                 "above_bound": [{"eta": r.eta, "eta_over_bound": f, **inc, "stopped_because": r.stopped_because,
                                  "steps": r.steps, "min_b": float(np.min(r.trajectory["b"])),
                                  "final_loss": r.loss, "final_a": r.a, "final_b": r.b}
                                 for f, r, inc in contrast],
                 "rounding_rule": f"increase counts if L̂(z_k+1) > L̂(z_k)(1 + {ROUNDING_ULPS}·2^-52)",
                 "bound_rule": "2/M, M = max |eigenvalue| of the exact Hessian of L̂ at the iterates and segment "
                               "midpoints (sampled, not certified between them)",
                 "plots": [p.name for p in plots]})


def _certified_descent(x, theta, run, eta: float, estimator: str):
    """The certified descent of the run (:func:`stumpcheck.numerics.corpus.descent.certify_descent`), or None for an
    estimator the fast layer does not enclose (only the one head); a proof that fails is returned with its
    ``reason`` (the row then keeps its sampled verdict and evidence)."""
    if estimator != "one-head":
        return None
    from stumpcheck.numerics.corpus.descent import certify_descent

    result = certify_descent(x, theta, run.trajectory["a"], run.trajectory["b"], float(eta))
    proof = {**result.to_dict(), "_proof": result}
    if not proof["proved"]:
        proof["reason"] = (f"eta < 2/M: {proof['eta_below_bound']}; exact steps decreasing "
                           f"{proof['exact_step_decreases']}/{proof['steps']}; recorded iterates decreasing "
                           f"{proof['iterate_decreases']}/{proof['steps']}")
    return proof


def _write_certificate(x, theta, corpus, run, eta, proof, out: Path) -> str:
    """The descent certificate (format ``stumpcheck-descent-certificate/1``) as ``out/c9_descent_certificate.json``
    (re-checked by ``stumpcheck recheck``, which regenerates the corpus from its seed); its name."""
    import json

    from stumpcheck.numerics.corpus.descent_certificate import descent_certificate

    info = {"m": corpus.x.shape[0], "n": corpus.x.shape[1], "seed": corpus.seed, "prior": corpus.prior,
            "sampler": corpus.sampler_name}
    out.mkdir(parents=True, exist_ok=True)
    name = "c9_descent_certificate.json"
    (out / name).write_text(json.dumps(descent_certificate(x, theta, info, run, float(eta), proof), indent=1,
                                       ensure_ascii=False) + "\n", encoding="utf-8")
    return name


def _certified_text(proof: dict) -> str:
    return (f"certified: lambda_max(Hess L̂) <= M = {proof['M']:.6g} over {proof['boxes']} boxes holding every "
            f"segment of the {proof['steps']} steps (largest at step {proof['worst_step']}), so eta = "
            f"{proof['eta']:.6g} < 2/M = {proof['bound']:.6g}, and L̂ decreases at each of the {proof['steps']} "
            f"steps (the exact step by >= eta(1 - eta M_k/2)|grad L̂|^2 > 0, and the recorded iterates); ")


def _plot(run, above_runs, bound: float, out: Path) -> Path:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    out.mkdir(parents=True, exist_ok=True)
    fig, (left, right) = plt.subplots(1, 2, figsize=(10, 4.2))
    styles = [(run, "-", "below")] + [(r, ls, "above") for r, ls in zip(above_runs, ("--", ":", "-."))]
    for result, style, name in styles:
        tr = result.trajectory
        label = f"η = {result.eta:.4g} ({result.eta / bound:.2f} × bound, {name})"
        line, = left.loglog(tr["step"] + 1, tr["loss"], style, lw=1.2, label=label)
        change = np.diff(tr["loss"]) / tr["loss"][:-1]
        k = tr["step"][1:] + 1
        right.loglog(k, np.abs(change), style, lw=1.0, color=line.get_color(), label=label)
        up = change > 0
        if np.any(up):
            right.loglog(k[up], change[up], "x", color="red", ms=7)
    right.plot([], [], "x", color="red", label="increase of L̂")
    left.set_xlabel("1 + step k")
    left.set_ylabel("corpus loss L̂(z_k)")
    left.set_title(f"GD on L̂; step bound 2/M = {bound:.4g}", fontsize=9)
    left.legend(fontsize=8)
    right.set_xlabel("1 + step k")
    right.set_ylabel("|L̂(z_k)/L̂(z_k−1) − 1|")
    right.set_title("relative change per step (red x: an increase)", fontsize=9)
    right.legend(fontsize=8)
    fig.tight_layout()
    path = out / "c9_descent.png"
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path
