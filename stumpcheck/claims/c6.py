"""Claim C6 (docs/model.md §7): frozen-estimator error Õ((m ∧ n)⁻¹ + N⁻¹) at each fixed interior θ.

Protocol (one cell per corpus, :func:`c6_cell`, run by :func:`numerics.corpus.sweep.run_sweep`):

* **large-resolution row** — start b₀ = (m ∧ n)/4, a₀ = calibration_a(b₀)
  (:func:`numerics.corpus.steps.large_resolution_start`); η = 1/λ_max(∇²L(a₀, b₀))
  of the *population* Hessian; constant-step GD on the corpus loss L̂ until
  b ≥ (m ∧ n)/2, at most ``step_cap`` steps; freeze. Reported beside it: the C5
  certified interval from b₀ (the progress criterion, rms over the size's
  corpora of the error of ∇L̂ along −∇L/‖∇L‖, relative to ‖∇L‖, at most ½ at
  every rung b₀·2^(j/4) from b₀ up, :func:`c6_horizon`) and whether the trained
  interval lies inside it.
* **certified-horizon control row** — the same start, trained only to each
  size's certified end (the literal rule "to the C5 certified scale, or
  (m ∧ n)/2 if smaller"); in the report, not the verdict: that end moves by a
  rung between corpus sets, so each size freezes at a different fraction of
  m ∧ n and the fitted p follows the fraction (see the report's explanation).
* **mechanism row** — from a₀ = calibration_a(10), b₀ = 10, the corpus gradient
  flow dz/dt = −∇L̂ (the small-step limit of GD,
  :func:`numerics.corpus.empirical_flow.empirical_flow`) until b ≥ (m ∧ n)/4; freeze.
* evaluation — fresh contexts (:func:`numerics.corpus.fresh.fresh_context_errors`) at
  θ ∈ {0.3, 0.5, 0.7} and N = 16 … 8192; the figure is the mean |θ̂_N − θ|
  averaged over the three θ and the corpora of a size.

Fit (:mod:`stumpcheck.claims.c6_fit`): the power mean (A^k s^{−pk} + B^k N^{−qk})^{1/k},
s = m ∧ n, k free, with bootstrap 95 % intervals over corpora and fresh
contexts together; the additive fit (k = 1) is kept as a secondary figure.
PASS iff for both rows |p − 1| ≤ 0.1, |q − 1| ≤ 0.1 and each interval is at
most 0.3 wide, and GD took steps in at least half of the large-resolution cells. Controls (reported, not in the verdict) are in
:mod:`stumpcheck.claims.c6_controls`. Evidence: sampled (seeded corpora and contexts, float64).
"""

from __future__ import annotations

import math
import time
from pathlib import Path

import numpy as np

from stumpcheck.claims.result import ClaimResult
from numerics.corpus.fresh import fresh_context_errors
from numerics.generated import asymptotics_numpy as derived
from numerics.precision import InputError
from numerics.corpus.steps import HORIZON_FRACTION, large_resolution_start

__all__ = ["C6_SETTINGS", "C6_CI_WIDTH", "C6_TOLERANCE", "HORIZON_RULE", "INTERIOR_THETAS", "MECHANISM_B0",
           "ROWS", "c6_cell", "c6_cells", "c6_horizon", "check_c6", "size_horizons"]

#: interior thresholds evaluated on fresh contexts
INTERIOR_THETAS = (0.3, 0.5, 0.7)
#: the mechanism row's start: a₀ = calibration_a(10), b₀ = 10
MECHANISM_B0 = 10.0
ROWS = ("large-resolution", "certified-horizon", "mechanism", "fixed-b0", "sqrt-b0", "above-n")
#: a power-mean fit with a larger rms log residual is flagged in the figure (not in the verdict): its bootstrap
#: interval then measures the sampling spread only, not the misfit
C6_POOR_FIT = 0.1
#: PASS: |p − 1|, |q − 1| ≤ C6_TOLERANCE and each 95 % interval at most C6_CI_WIDTH wide (fixed before looking)
C6_TOLERANCE = 0.1
C6_CI_WIDTH = 0.3
#: first rung of the horizon's C5 ladder b_k = C6_LADDER_B0·2^k (C5's progress-criterion ladder starts at 8)
C6_LADDER_B0 = 8.0
#: rungs per octave of the horizon's ladder from b₀ = (m∧n)/4 to the cap (m∧n)/2
HORIZON_RUNGS = 4
#: the large-resolution row's verdict needs GD steps in at least this fraction of its cells (else it tests the start)
C6_TRAINED_FRACTION = 0.5
_N_GRID = tuple(2 ** j for j in range(4, 14))  # 16 … 8192
_N_QUICK = tuple(2 ** j for j in range(4, 11)) + (8192,)  # 16 … 1024 and 8192 (the floor), for speed
C6_SETTINGS = {
    "quick": {"sizes": (64, 128, 256), "mechanism_sizes": (64, 128, 256), "seeds": 2, "horizon_corpora": 8, "N": _N_QUICK, "reps": 128,
              "step_cap": 4000, "bootstrap": 100, "flow_rtol": 1e-4, "control_sizes": (64, 128, 256),
              "control_steps": 150, "above_n": {"size": 16, "seeds": 4, "steps": 200}},
    "full": {"sizes": (64, 128, 256, 512, 1024), "mechanism_sizes": (64, 128, 256, 512, 1024), "seeds": 4,
             "horizon_corpora": 8, "N": _N_GRID, "reps": 400, "step_cap": 20000, "bootstrap": 400, "flow_rtol": 1e-5,
             "control_sizes": (64, 128, 256, 512), "control_steps": 3000,
             "above_n": {"size": 32, "seeds": 8, "steps": 1000}},
}

HORIZON_RULE = ("large-resolution row (the verdict): b0 = (m∧n)/4, a0 = calibration_a(b0), eta = 1/lambda_max of the "
                "population Hessian at (a0, b0); GD on the cell's corpus until b >= (m∧n)/2 (the protocol of "
                "`train --init large-resolution`), or the step cap. Beside it: the C5 certified interval from b0 "
                "(C5's criterion, rms over 8 corpora of the size of the error along -grad L/|grad L| <= 1/2 at every "
                "rung b0*2^(j/4) from b0 up) and whether the trained interval lies inside it; the certified-horizon "
                "control row trains each size only to that certified end (no step if the criterion fails at b0). "
                "Mechanism row: corpus gradient flow from a0 = calibration_a(10), b0 = 10 until b >= (m∧n)/4")


def _check_seed(seed) -> int:
    if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)) or seed < 0:
        raise InputError(f"seed must be a non-negative integer, got {seed!r}")
    return int(seed)


def _progress_certified_b(c5: dict):
    """b* from a C5 result: its ``certified_b`` if it states one, else from its ``along`` figures
    (rms over seeds ≤ ½ at every rung up to b*); None if the first rung fails."""
    if "certified_b" in c5:
        return c5["certified_b"]
    along = np.asarray(c5["along"], dtype=float)
    rms = np.sqrt(np.mean(along ** 2, axis=0))
    certified = None
    for b, value in zip(c5["b"], rms):
        if not value <= 0.5:
            break
        certified = float(b)
    return certified


def c6_horizon(m: int, n: int, seeds, *, estimator: str = "one-head") -> dict:
    """The large-resolution row's horizon: the end of the certified training interval that starts at
    b₀ = (m∧n)/4, capped at (m∧n)/2, over the corpora make_corpus(m, n, seed=s), s in ``seeds``.

    Two ladders, one criterion (C5's: rms over the corpora of the error along −∇L/‖∇L‖, relative to
    ‖∇L‖, at most ½, a on the calibration relation):

    * C5's ladder b = 8·2^k up to 2·(m∧n)/2 gives b* as C5 reports it (``certified_b``);
    * the horizon's ladder b₀·2^(j/4), j = 0..4 (b₀ to the cap 2b₀), gives the certified interval
      [b₀, b_h] that GD may train over: b_h is the last rung with every rung from b₀ up passing.
      C5's octave ladder alone puts b* at (m∧n)/4 or (m∧n)/2 by rounding, which leaves a cell with no
      step whenever b* rounds down to b₀ although the criterion holds beyond it.

    ``horizon`` = b_h (None when the criterion fails already at b₀: no certified step).
    """
    from stumpcheck.claims import c5 as claim_c5

    size = min(m, n)
    cap = HORIZON_FRACTION * size
    b0 = size / 4
    seeds = [int(s) for s in seeds]
    ladder_b0 = max(float(claim_c5.LADDER_B0), C6_LADDER_B0)
    k_max = max(0, math.ceil(math.log2(2 * cap / ladder_b0)))
    c5 = claim_c5.gradient_error_by_scale(m, n, b0=ladder_b0, k_max=k_max, seeds=seeds,
                                          estimator=estimator, method="pruned")
    certified = _progress_certified_b(c5)
    fine = claim_c5.gradient_error_by_scale(m, n, b0=b0, k_max=HORIZON_RUNGS, seeds=seeds, estimator=estimator,
                                            method="pruned", rungs_per_octave=HORIZON_RUNGS)
    fine_rms = np.sqrt(np.mean(np.asarray(fine["along"], dtype=float) ** 2, axis=0))
    horizon = None
    for b, value in zip(fine["b"], fine_rms):
        if not value <= 0.5:
            break
        horizon = min(float(b), cap)
    binding = ("criterion fails at the start" if horizon is None else
               "(m∧n)/2 cap" if horizon >= cap else "certified interval from the start")
    k_star = -1 if certified is None else int(round(math.log2(float(certified) / ladder_b0)))
    return {"certified_b": certified, "certified_k": k_star, "certified_source": "C5 ladder 8·2^k",
            "cap": cap, "horizon": horizon, "binding": binding, "ladder_b": c5["b"], "seeds": c5["seeds"],
            "along": c5["along"], "ratio": c5["ratio"],
            "horizon_ladder_b": fine["b"], "horizon_along_rms": fine_rms.tolist()}


def _evaluate(a: float, b: float, cell: dict, seed: int, estimator: str) -> list:
    rows = []
    for theta in cell["thetas"]:
        for N in cell["N"]:
            r = fresh_context_errors(a, b, float(theta), int(N), estimator=estimator, reps=int(cell["reps"]),
                                     seed=seed)
            rows.append({"theta": r.theta, "N": r.N, "mean_abs_error": r.mean_abs_error, "ci_low": r.ci_low,
                         "ci_high": r.ci_high, "sd_abs_error": r.sd_abs_error, "reps": r.reps,
                         "median_abs_error": r.median_abs_error, "q90_abs_error": r.q90_abs_error})
    return rows


def _train(corpus, a0, b0, *, b_target, steps, estimator, step_rule):
    from numerics.corpus.gd import train_gd

    run = train_gd(corpus.x, corpus.theta, a0=a0, b0=b0, b_target=b_target, steps=steps, estimator=estimator,
                   record_every=max(1, steps // 200), method="pruned", step_rule=step_rule)
    loss = np.asarray(run.trajectory["loss"])
    return run, {"a": run.a, "b": run.b, "steps": run.steps, "stopped_because": run.stopped_because, "eta": run.eta,
                 "eta_rule": run.eta_rule, "loss_start": float(loss[0]), "loss_end": float(loss[-1]),
                 "largest_loss_increase": float(max(0.0, np.max(np.diff(loss)))) if loss.size > 1 else 0.0,
                 "b_min": float(np.min(run.trajectory["b"])), "trajectory_b": np.asarray(run.trajectory["b"]).tolist()}


def c6_cell(cell: dict) -> dict:
    """One C6 cell: corpus → start → GD (or flow) → frozen (a, b) → fresh-context errors.

    ``cell``: m, n, seed (corpus and fresh-context seed), N (list), thetas, reps, estimator, and
    ``row`` (default "large-resolution"; one of :data:`ROWS`), c5_seeds (the corpus seeds whose rms
    along-error sets b* for the size; default [seed]), step_cap (large-resolution and
    sqrt-b0 rows), steps (fixed-b0, above-n), flow_rtol (mechanism). Keys other rows do not use are
    ignored (``k_max``, ``long_steps`` from older grids: the horizon's ladder is sized from m ∧ n).
    """
    from numerics.corpus.corpora import make_corpus

    started = time.perf_counter()
    m, n, seed = int(cell["m"]), int(cell["n"]), int(cell["seed"])
    size = min(m, n)
    row = cell.get("row", "large-resolution")
    estimator = cell.get("estimator", "one-head")
    if row not in ROWS:
        raise InputError(f"unknown C6 row {row!r}; one of {', '.join(ROWS)}")
    corpus = make_corpus(m, n, seed=seed)
    out = {"m": m, "n": n, "m_min_n": size, "seed": seed, "row": row, "estimator": estimator,
           "horizon_rule": HORIZON_RULE, "long_steps": None, "k_star": None}
    if row in ("large-resolution", "certified-horizon"):
        a0, b0 = large_resolution_start(m, n)
        horizon = cell.get("horizon") or c6_horizon(m, n, cell.get("c5_seeds", [seed]), estimator=estimator)
        cap = HORIZON_FRACTION * size
        out.update(a0=a0, b0=b0, horizon=horizon, k_star=horizon["certified_k"], step_cap=int(cell["step_cap"]))
        # the verdict row trains to the fixed fraction (m∧n)/2; the control row to its size's certified end
        target = cap if row == "large-resolution" else horizon["horizon"]
        out["b_target"] = target if target is not None else b0
        out["trained_within_certified"] = horizon["horizon"] is not None and target is not None and \
            target <= horizon["horizon"]
        if target is None or target <= b0:
            out["note"] = (f"C5's criterion fails at the start b0 = {b0:g} (C5 ladder b* = {horizon['certified_b']}): "
                           "no certified GD step, the frozen (a, b) is the start")
            out.update(a=a0, b=b0, steps=0, stopped_because="horizon at or below the start", eta=None,
                       eta_rule=None, largest_loss_increase=0.0)
        else:
            _, summary = _train(corpus, a0, b0, b_target=target, steps=int(cell["step_cap"]), estimator=estimator,
                                step_rule="population")
            out.update(summary)
    elif row == "mechanism":
        from numerics.corpus.empirical_flow import empirical_flow

        a0, b0 = float(derived.calibration_a(MECHANISM_B0)), MECHANISM_B0
        target = size / 4
        flow = empirical_flow(corpus.x, corpus.theta, a0=a0, b0=b0, b_target=target, method="pruned",
                              rtol=float(cell.get("flow_rtol", 1e-5)), estimator=estimator, refine_crossing=False)
        out.update(a0=a0, b0=b0, b_target=target, a=flow.a, b=flow.b, steps=int(flow.stats["accepted"]),
                   stopped_because=flow.stopped_because, t_final=flow.t_final, kind=flow.kind,
                   flow_settings=flow.settings, flow_stats=flow.stats)
    elif row == "fixed-b0":
        a0 = b0 = 10.0
        _, summary = _train(corpus, a0, b0, b_target=None, steps=int(cell["steps"]), estimator=estimator,
                            step_rule="corpus")
        out.update(a0=a0, b0=b0, b_target=None, **summary)
    elif row == "sqrt-b0":
        b0 = math.sqrt(size)
        a0 = float(derived.calibration_a(b0))
        _, summary = _train(corpus, a0, b0, b_target=HORIZON_FRACTION * size, steps=int(cell["step_cap"]),
                            estimator=estimator, step_rule="population")
        out.update(a0=a0, b0=b0, b_target=HORIZON_FRACTION * size, **summary)
    else:  # above-n: GD from b0 = 2n, where a small corpus can have a finite minimiser of L̂
        b0 = 2.0 * n
        a0 = float(derived.calibration_a(b0))
        _, summary = _train(corpus, a0, b0, b_target=None, steps=int(cell["steps"]), estimator=estimator,
                            step_rule="population")
        out.update(a0=a0, b0=b0, b_target=None, lowered_b=bool(summary["b"] < b0), **summary)
    out["calibration_residual"] = float(derived.calibration_residual(out["a"], out["b"]))
    if row != "above-n":
        out["fresh"] = _evaluate(out["a"], out["b"], cell, seed, estimator)
    else:
        out["fresh"] = []
    out["seconds"] = time.perf_counter() - started
    out["precision"], out["evidence"] = "float64", "sampled"
    return out


def c6_cells(*, quick: bool = True, seed: int = 0, estimator: str = "one-head") -> list[dict]:
    """The C6 grid: both rows over the mode's sizes × seeds, then the control cells."""
    mode = C6_SETTINGS["quick" if quick else "full"]
    common = {"N": list(mode["N"]), "thetas": list(INTERIOR_THETAS), "reps": mode["reps"], "estimator": estimator,
              "protocol": "c6-large-resolution-v1"}
    seeds = [seed + i for i in range(mode["seeds"])]
    horizon_seeds = [seed + i for i in range(mode["horizon_corpora"])]
    cells = [dict(common, row=row, m=s, n=s, seed=i, c5_seeds=horizon_seeds, step_cap=mode["step_cap"])
             for row in ("large-resolution", "certified-horizon") for s in mode["sizes"] for i in seeds]
    cells += [dict(common, row="mechanism", m=s, n=s, seed=seed + i, flow_rtol=mode["flow_rtol"])
              for s in mode["mechanism_sizes"] for i in range(mode["seeds"])]
    cells += [dict(common, row="fixed-b0", m=s, n=s, seed=seed, steps=mode["control_steps"])
              for s in mode["control_sizes"]]
    cells += [dict(common, row="sqrt-b0", m=s, n=s, seed=seed, step_cap=mode["control_steps"])
              for s in mode["control_sizes"]]
    above = mode["above_n"]
    cells += [dict(common, row="above-n", m=above["size"], n=above["size"], seed=seed + i, steps=above["steps"])
              for i in range(above["seeds"])]
    return cells


def _literal_control(cells: list, mode: dict, seed: int) -> dict:
    """The certified-horizon control row (each size trained only to its own certified end): its fit when
    enough of its cells trained, the frozen b/(m∧n) by size, and a one-line text for the figure."""
    from stumpcheck.claims.c6_fit import row_fit

    if not cells:
        return {"text": "not run", "trained_fraction": 0.0}
    trained = float(np.mean([r["steps"] > 0 for r in cells]))
    fraction = {s: float(np.mean([r["b"] / s for r in cells if r["m_min_n"] == s]))
                for s in sorted({r["m_min_n"] for r in cells})}
    out = {"trained_fraction": trained, "frozen_b_over_size": {str(s): v for s, v in fraction.items()}}
    text = (f"frozen b/(m∧n) {', '.join(f'{s}: {v:.2f}' for s, v in fraction.items())}, cells with GD steps "
            f"{trained:.0%}")
    if trained > 0:
        fit = row_fit(cells, bootstrap=mode["bootstrap"], seed=seed)["power_mean"]
        out["power_mean_fit"] = fit
        text += f", p = {fit['p']:.3f} [{fit['p_ci95'][0]:.3f}, {fit['p_ci95'][1]:.3f}], q = {fit['q']:.3f}"
    out["text"] = text
    return out


def size_horizons(cells: list) -> dict:
    """Each size's certified horizon (:func:`c6_horizon`), computed once for all its cells."""
    horizons = {}
    for cell in cells:
        key = (cell["m"], cell["n"])
        if cell["row"] in ("large-resolution", "certified-horizon") and key not in horizons:
            horizons[key] = c6_horizon(cell["m"], cell["n"], cell.get("c5_seeds", [cell["seed"]]),
                                       estimator=cell.get("estimator", "one-head"))
    return horizons


def _row_verdict(fit: dict) -> bool:
    def ok(value, ci):
        return (math.isfinite(value) and abs(value - 1) <= C6_TOLERANCE and all(math.isfinite(c) for c in ci)
                and ci[1] - ci[0] <= C6_CI_WIDTH)

    return ok(fit["p"], fit["p_ci95"]) and ok(fit["q"], fit["q_ci95"])


def check_c6(*, quick: bool = True, seed: int = 0, out_dir=None, scheduler=None, workers: int = 1,
             progress=None) -> ClaimResult:
    """C6: frozen-estimator error Õ((m ∧ n)⁻¹ + N⁻¹) at θ ∈ {0.3, 0.5, 0.7} (protocol: module docstring).

    Runs :func:`c6_cells` through :func:`numerics.corpus.sweep.run_sweep` (in-process for ``workers=1``, a
    process pool for more, Dask with ``scheduler``) with the store ``out_dir/c6_sweep.jsonl``
    (resumable) or a temporary one. Tolerance (fixed before looking): for the large-resolution row
    and for the mechanism row, the power-mean exponents p (in m ∧ n) and q (in N) are within 0.1 of 1
    and each bootstrap 95 % interval is at most 0.3 wide.
    """
    import tempfile

    from stumpcheck.claims.c6_controls import summarize_controls
    from stumpcheck.claims.c6_fit import row_fit
    from stumpcheck.claims.c6_plots import plot_c6
    from numerics.corpus.sweep import run_sweep

    start = time.perf_counter()
    seed = _check_seed(seed)
    mode = C6_SETTINGS["quick" if quick else "full"]
    cells = c6_cells(quick=quick, seed=seed)
    horizons = size_horizons(cells)
    for cell in cells:
        if (cell["m"], cell["n"]) in horizons and cell["row"] in ("large-resolution", "certified-horizon"):
            cell["horizon"] = horizons[(cell["m"], cell["n"])]
    if out_dir is not None:
        Path(out_dir).mkdir(parents=True, exist_ok=True)
        records = run_sweep(c6_cell, cells, store=Path(out_dir) / "c6_sweep.jsonl", scheduler=scheduler,
                            workers=workers, progress=progress)
    else:
        with tempfile.TemporaryDirectory() as tmp:
            records = run_sweep(c6_cell, cells, store=Path(tmp) / "c6_sweep.jsonl", scheduler=scheduler,
                                workers=workers, progress=progress)
    results = [r["result"] for r in records]
    by_row = {row: [r for r in results if r["row"] == row] for row in ROWS}
    fits = {row: row_fit(by_row[row], bootstrap=mode["bootstrap"], seed=seed)
            for row in ("large-resolution", "mechanism")}
    verdicts = {row: _row_verdict(fit["power_mean"]) for row, fit in fits.items()}
    literal = _literal_control(by_row["certified-horizon"], mode, seed)
    trained_fraction = (float(np.mean([r["steps"] > 0 for r in by_row["large-resolution"]]))
                        if by_row["large-resolution"] else 0.0)
    verdicts["large-resolution"] = verdicts["large-resolution"] and trained_fraction >= C6_TRAINED_FRACTION
    controls = summarize_controls(by_row, mode)
    plots = []
    if out_dir is not None:
        plots = plot_c6(Path(out_dir), by_row, fits, controls, seed)
    lr = by_row["large-resolution"]
    no_step = [(r["m_min_n"], r["seed"]) for r in lr if r["steps"] == 0]
    binding = sorted({(r["m_min_n"], r["horizon"]["binding"], r["horizon"]["certified_b"]) for r in lr},
                     key=lambda t: (t[0], str(t[2])))

    def describe(row):
        f = fits[row]["power_mean"]
        add = fits[row]["additive"]
        return (f"{row}: p = {f['p']:.3f} [{f['p_ci95'][0]:.3f}, {f['p_ci95'][1]:.3f}], q = {f['q']:.3f} "
                f"[{f['q_ci95'][0]:.3f}, {f['q_ci95'][1]:.3f}], k = {f['k']:.2f} [{f['k_ci95'][0]:.2f}, "
                f"{f['k_ci95'][1]:.2f}], rms log residual {f['rms_log_residual']:.3f} (additive fit: p = "
                f"{add['p']:.3f}, q = {add['q']:.3f}, rms {add['rms_log_residual']:.3f}) "
                f"[{'PASS' if verdicts[row] else 'FAIL'}]"
                + (f" (POOR FIT: rms log residual {f['rms_log_residual']:.2f} > {C6_POOR_FIT:g}; the interval "
                   "measures sampling only)" if f["rms_log_residual"] > C6_POOR_FIT else ""))

    figure = ("power-mean fit error ≈ (A^k (m∧n)^-pk + B^k N^-qk)^(1/k), bootstrap 95% intervals: "
              + "; ".join(describe(row) for row in fits)
              + f"; frozen b by m∧n (large-resolution): "
              + ", ".join(f"{s}: {np.mean([r['b'] for r in lr if r['m_min_n'] == s]):.4g}"
                          for s in sorted({r['m_min_n'] for r in lr}))
              + f"; horizon (m∧n, binding bound, b*): {binding}"
              + "; trained interval [(m∧n)/4, (m∧n)/2] inside the C5 certified interval from b0 (8 corpora): "
              + ", ".join(f"{m}: {'yes' if h['horizon'] is not None and h['horizon'] >= h['cap'] else 'no'}"
                          f" (certified to {h['horizon'] if h['horizon'] is None else round(h['horizon'], 1)})"
                          for (m, n), h in sorted(horizons.items()))
              + f"; control, trained only to each size's certified end: {literal['text']}"
              + f"; large-resolution cells with GD steps: {trained_fraction:.0%} (needed: {C6_TRAINED_FRACTION:.0%})"
              + (f"; cells with no GD step (criterion fails at b0): {no_step}" if no_step else ""))
    details = {"seed": seed, "quick": quick, "precision": "float64", "horizon_rule": HORIZON_RULE,
               "certified_horizon_control": literal,
               "horizons": {f"{m}x{n}": {k: h[k] for k in ("horizon", "certified_b", "binding", "horizon_ladder_b",
                                                          "horizon_along_rms")} for (m, n), h in horizons.items()},
               "explanation": _explanation(fits, controls, no_step, len(lr)),
               "b0_rule": "b0 = (m∧n)/4, a0 = calibration_a(b0); eta = 1/lambda_max(population Hessian at start)",
               "power_mean_fit": fits["large-resolution"]["power_mean"],
               "mechanism_fit": fits["mechanism"]["power_mean"],
               "additive_fit": fits["large-resolution"]["additive"],
               "mechanism_additive_fit": fits["mechanism"]["additive"],
               "joint_fit": fits["large-resolution"]["additive"], "verdicts": verdicts,
               "rate_ok": all(verdicts.values()), "cells_without_steps": no_step,
               "poor_fit_rows": [row for row, f in fits.items()
                                 if f["power_mean"]["rms_log_residual"] > C6_POOR_FIT],
               "trained_fraction": trained_fraction,
               "tolerance_rule": {"exponent_within": C6_TOLERANCE, "ci95_width_at_most": C6_CI_WIDTH},
               "controls": controls, "long_training": None, "interior_thetas": list(INTERIOR_THETAS),
               "settings": {k: (list(v) if isinstance(v, tuple) else v) for k, v in mode.items()},
               "cells": lr + by_row["mechanism"],
               "ci_method": ("bootstrap percentile 95%: corpora resampled with replacement within each m∧n, and each "
                             "fresh-context mean redrawn from its sampling law N(mean, sd²/reps) (the law of a "
                             "resampled mean of reps contexts, by the CLT); seeded"),
               "plots": plots}
    return ClaimResult(
        id="C6", statement="frozen-estimator error is Õ((m∧n)^-1 + N^-1) at each fixed interior θ",
        figure=figure,
        tolerance=(f"large-resolution and mechanism rows: power-mean p and q within {C6_TOLERANCE:g} of 1 and each "
                   f"bootstrap 95% interval at most {C6_CI_WIDTH:g} wide; GD steps in >= {C6_TRAINED_FRACTION:.0%} of "
                   "the large-resolution cells"),
        status="PASS" if all(verdicts.values()) else "FAIL", evidence="sampled",
        seconds=time.perf_counter() - start, details=details)


def _explanation(fits: dict, controls: dict, no_step: list, cells: int) -> str:
    """The paragraph of the report: the criterion, why the fit is a power mean, and what the controls show."""
    def point(name):
        summary = controls.get(name) or {}
        fit = summary.get("power_mean_point_fit") or {}
        b = [c["b"] for c in summary.get("cells", [])]
        return (f"p = {fit.get('p', float('nan')):.2f}, frozen b {min(b):.3g}..{max(b):.3g}" if b and "p" in fit
                else "not run")

    fixed = controls.get("fixed_scale") or []
    ratios = "; ".join(f"b = {c['b']:g}: error/(1/b + 1/N) from {min(c['ratio_to_1/b+1/N']):.2f} to "
                       f"{max(c['ratio_to_1/b+1/N']):.2f}" for c in fixed)
    above = controls.get("above_n") or {}
    above_cells = above.get("cells", [])
    dipped = sum(c["b_min"] < c["b0"] for c in above_cells)
    diverged = sum(str(c["stopped_because"]).startswith("diverged") for c in above_cells)
    lr, mech = fits["large-resolution"], fits["mechanism"]
    poor = [row for row, f in fits.items() if f["power_mean"]["rms_log_residual"] > C6_POOR_FIT]
    warning = (f" The power-mean fit of the {' and '.join(poor)} row is poor (rms log residual > {C6_POOR_FIT:g}): "
               "its bootstrap interval measures the spread over corpora and contexts, not the misfit. For the "
               "large-resolution row this happens when the certified interval ends at different fractions of m∧n "
               "at different sizes, so the frozen b is not one power of m∧n."
               if poor else "")
    return (
        "Criterion: the frozen error, averaged over θ ∈ {0.3, 0.5, 0.7} and the corpora of a size, is fitted by the "
        "power mean (A^k (m∧n)^(-pk) + B^k N^(-qk))^(1/k) with k free; PASS needs p and q within 0.1 of 1 with "
        "bootstrap 95% intervals at most 0.3 wide, for both rows. The additive surface (k = 1) is misspecified: the "
        f"crossover is sharper than a sum (fitted k = {lr['power_mean']['k']:.2f} and {mech['power_mean']['k']:.2f}), "
        f"and the additive fit reports q = {lr['additive']['q']:.2f} / {mech['additive']['q']:.2f} with rms log "
        f"residual {lr['additive']['rms_log_residual']:.3f} / {mech['additive']['rms_log_residual']:.3f} against "
        f"{lr['power_mean']['rms_log_residual']:.3f} / {mech['power_mean']['rms_log_residual']:.3f} for the power "
        "mean. At a fixed (a, b) on the calibration relation the error is about 1/b + 1/N "
        f"({ratios}), so the rate in m∧n appears exactly when the frozen b grows like m∧n: from b0 = (m∧n)/4 or by "
        f"following the corpus flow from b0 = 10. The large-resolution row trains every size from (m∧n)/4 to "
        "(m∧n)/2, one fixed fraction, and reports beside it the C5 certified interval from b0 (8 corpora). The "
        "literal rule 'train to the C5 certified scale, or (m∧n)/2 if smaller' is kept as the certified-horizon "
        "control: that scale sits at 0.25-0.5 of m∧n, moves by a rung between corpus sets (its statistic is "
        "carried by the few tasks with no positive point), and trained to it each size freezes at a different "
        "fraction of m∧n, so the fitted p measures that fraction's drift, not the estimator (measured, quick, "
        "4 corpora: sizes 64/128/256 froze at 0.35/0.5/0.5 of m∧n and gave p = 1.26; 128/256/512 at 0.5/0.5/0.42 "
        "and p = 0.88; with 8 corpora the criterion already failed at b0 and no cell trained). "
        f"Cells of the verdict row without a GD step: {len(no_step)} of {cells}. "
        f"Controls (not in the verdict): a0 = b0 = 10 with a feasible step budget: {point('fixed_b0')}; "
        f"b0 = sqrt(m∧n): {point('sqrt_b0')}; GD from b0 = 2n on small corpora: b went below b0 in {dipped} of "
        f"{len(above_cells)} runs, ended below b0 in {above.get('lowered', 0)}, and left the model (stopped) in "
        f"{diverged}." + warning)
