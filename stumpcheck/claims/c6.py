"""Claim C6 (docs/model.md §7): frozen-estimator error Õ((m ∧ n)⁻¹ + N⁻¹) at each fixed interior θ.

The check (:func:`check_c6`: grid, fits, verdict, figure, explanation). Protocol (one cell per corpus,
:func:`c6_cell` in :mod:`stumpcheck.claims.c6_protocol`, run by :func:`stumpcheck.numerics.corpus.sweep.run_sweep`):

* **large-resolution row** — start b₀ = (m ∧ n)/4, a₀ = calibration_a(b₀)
  (:func:`stumpcheck.numerics.corpus.steps.large_resolution_start`); η = 1/λ_max(∇²L(a₀, b₀))
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
  :func:`stumpcheck.numerics.corpus.gradient_flow.empirical_flow`) until b ≥ (m ∧ n)/4; freeze.
* evaluation — fresh contexts (:func:`stumpcheck.numerics.corpus.fresh.fresh_context_errors`) at
  θ ∈ {0.3, 0.5, 0.7} and N = 16 … 8192; the figure is the mean |θ̂_N − θ|
  averaged over the three θ and the corpora of a size.
* certified per corpus (:mod:`stumpcheck.claims.c6_certified`, sizes up to the mode's ``certify_max_size``) —
  each large-resolution cell's run gets its training certificate (the exact-arithmetic GD from the trainer's
  start with its η and stopping rule, enclosed step by step), written to ``out_dir/c6_training/``, and at
  the frozen head (the certified final box, which holds the float64-trained (a, b)) the exact risk bracket
  |bias| ≤ E|θ̂_N − θ| ≤ √MSE at every (θ, N) of the grid. The coverage answer per size is whether the
  certificates prove the runs.

Fit (:mod:`stumpcheck.claims.c6_fit`): the power mean (A^k s^{−pk} + B^k N^{−qk})^{1/k},
s = m ∧ n, k free; the large-resolution row fits the midpoints of the certified brackets when every cell
has them (bootstrap over corpora; the fits on the brackets' lower and upper ends, and on the Monte Carlo
means, are reported beside it), else the Monte Carlo means (bootstrap over corpora and fresh contexts);
the mechanism row fits Monte Carlo means. The additive fit (k = 1) is kept as a secondary figure.
PASS iff for both rows |p − 1| ≤ 0.1, |q − 1| ≤ 0.1 and each interval is at
most 0.3 wide, and GD took steps in at least half of the large-resolution cells. Controls (reported, not in the verdict) are in
:mod:`stumpcheck.claims.c6_controls`. Evidence: the per-corpus brackets are certified; the rate is
sampled (a statistical fit across random corpora, and the mechanism row's Monte Carlo), so the row's
``evidence`` and ``evidence_reached`` stay *sampled* and ``details["evidence_parts"]`` names each part.
"""

from __future__ import annotations

import math
import time
from functools import partial
from pathlib import Path

import numpy as np

from stumpcheck.numerics.precision import InputError
from stumpcheck.claims.c6_protocol import (C6_LADDER_B0, C6_SETTINGS, HORIZON_RULE, HORIZON_RUNGS,  # noqa: F401
                                           INTERIOR_THETAS, MECHANISM_B0, ROWS, c6_cell, c6_cells, c6_horizon,
                                           size_horizons)
from stumpcheck.claims.c6_fit import k_text
from stumpcheck.claims.result import ClaimResult

__all__ = ["C6_SETTINGS", "C6_CI_WIDTH", "C6_TOLERANCE", "HORIZON_RULE", "INTERIOR_THETAS", "MECHANISM_B0",
           "ROWS", "background_task", "c6_cell", "c6_cells", "c6_horizon", "check_c6", "size_horizons"]

#: a power-mean fit with a larger rms log residual is flagged in the figure (not in the verdict): its bootstrap
#: interval then measures the sampling spread only, not the misfit
C6_POOR_FIT = 0.1
#: PASS: |p − 1|, |q − 1| ≤ C6_TOLERANCE and each 95 % interval at most C6_CI_WIDTH wide (fixed before looking)
C6_TOLERANCE = 0.1
C6_CI_WIDTH = 0.3
#: the large-resolution row's verdict needs GD steps in at least this fraction of its cells (else it tests the start)
C6_TRAINED_FRACTION = 0.5


def _check_seed(seed) -> int:
    if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)) or seed < 0:
        raise InputError(f"seed must be a non-negative integer, got {seed!r}")
    return int(seed)


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


def _row_verdict(fit: dict) -> bool:
    def ok(value, ci):
        return (math.isfinite(value) and abs(value - 1) <= C6_TOLERANCE and all(math.isfinite(c) for c in ci)
                and ci[1] - ci[0] <= C6_CI_WIDTH)

    return ok(fit["p"], fit["p_ci95"]) and ok(fit["q"], fit["q_ci95"])


def _cells_with_horizons(quick: bool, seed: int) -> tuple[list, dict]:
    """The mode's cells, each large-resolution and certified-horizon cell with its size's horizon."""
    cells = c6_cells(quick=quick, seed=seed)
    horizons = size_horizons(cells)
    for cell in cells:
        if (cell["m"], cell["n"]) in horizons and cell["row"] in ("large-resolution", "certified-horizon"):
            cell["horizon"] = horizons[(cell["m"], cell["n"])]
    return cells, horizons


def _records(quick: bool, seed: int, store: str) -> list:
    """The sweep's records of the mode's cells, in one process, stored in (and resumed from) ``store``: what a
    background worker runs."""
    from stumpcheck.numerics.corpus.sweep import run_sweep

    cells, _ = _cells_with_horizons(quick, seed)
    return run_sweep(c6_cell, cells, store=store, workers=1)


def _background_key(quick: bool, seed: int, store: str) -> tuple:
    return ("C6", bool(quick), int(seed), str(store))


def background_task(seed: int, out_dir, *, quick: bool = True) -> tuple:
    """C6's sweep as a task for :func:`stumpcheck.claims.background.start` (its cells are seeded and
    independent of what a run computes first; the store under ``out_dir`` keeps finished cells)."""
    store = str(Path(out_dir) / "c6_sweep.jsonl")
    return _background_key(quick, seed, store), _records, (bool(quick), int(seed), store)


def check_c6(*, quick: bool = True, seed: int = 0, out_dir=None, scheduler=None, workers: int | None = None,
             progress=None) -> ClaimResult:
    """C6: frozen-estimator error Õ((m ∧ n)⁻¹ + N⁻¹) at θ ∈ {0.3, 0.5, 0.7} (protocol: module docstring).

    Runs :func:`c6_cells` through :func:`stumpcheck.numerics.corpus.sweep.run_sweep` (in-process for ``workers=1``, a
    process pool for more (default: in-process); Dask with ``scheduler``; the cells
    are seeded and independent, so the result does not depend on where they ran) with the store ``out_dir/c6_sweep.jsonl``
    (resumable) or a temporary one. Tolerance (fixed before looking): for the large-resolution row
    and for the mechanism row, the power-mean exponents p (in m ∧ n) and q (in N) are within 0.1 of 1
    and each bootstrap 95 % interval is at most 0.3 wide.
    """
    import tempfile

    from stumpcheck.claims import background
    from stumpcheck.claims.c6_certified import (certified_summary, certified_text, save_training_certificates,
                                                training_coverage, training_coverage_text)
    from stumpcheck.claims.c6_controls import summarize_controls
    from stumpcheck.claims.c6_interval import certified_coverage, coverage_text
    from stumpcheck.claims.c6_fit import row_fit
    from stumpcheck.claims.c6_plots import plot_c6
    from stumpcheck.numerics.corpus.sweep import run_sweep

    start = time.perf_counter()
    seed = _check_seed(seed)
    if workers is None:
        # in-process: a pool forked after the compiled corpus kernel has run its OpenMP threads here
        # terminates its children (GNU OpenMP is not fork-safe)
        workers = 1
    mode = C6_SETTINGS["quick" if quick else "full"]
    cells, horizons = _cells_with_horizons(quick, seed)
    if out_dir is not None:
        Path(out_dir).mkdir(parents=True, exist_ok=True)
        store = str(Path(out_dir) / "c6_sweep.jsonl")
        # the cells are built above already: the inline fallback sweeps them, not a second copy
        records = background.take(_background_key(quick, seed, store),
                                  partial(run_sweep, c6_cell, cells, store=store, scheduler=scheduler,
                                          workers=workers, progress=progress))
    else:
        with tempfile.TemporaryDirectory() as tmp:
            records = run_sweep(c6_cell, cells, store=Path(tmp) / "c6_sweep.jsonl", scheduler=scheduler,
                                workers=workers, progress=progress)
    results = [r["result"] for r in records]
    by_row = {row: [r for r in results if r["row"] == row] for row in ROWS}
    certificates = save_training_certificates(by_row["large-resolution"], out_dir)
    fits = {row: row_fit(by_row[row], bootstrap=mode["bootstrap"], seed=seed)
            for row in ("large-resolution", "mechanism")}
    certified = certified_summary(by_row["large-resolution"], mode, seed, monte_carlo_fit=fits["large-resolution"])
    if certified["fit_value"] != "monte-carlo":  # the verdict reads the certified brackets' midpoints
        fits["large-resolution"] = certified["fits"]["mid"]
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
    coverage = certified_coverage(lr, out_dir=out_dir)
    trained_coverage = training_coverage(lr)
    no_step = [(r["m_min_n"], r["seed"]) for r in lr if r["steps"] == 0]
    binding = sorted({(r["m_min_n"], r["horizon"]["binding"], r["horizon"]["certified_b"]) for r in lr},
                     key=lambda t: (t[0], str(t[2])))

    def describe(row):
        f = fits[row]["power_mean"]
        add = fits[row]["additive"]
        digits = f.get("k_decimals", 2) + 1  # the interval's ends one decimal further than k itself
        source = {"monte-carlo": "Monte Carlo means", "certified-mid": "midpoints of the certified brackets"}
        return (f"{row} ({source.get(fits[row].get('value', 'monte-carlo'))}): p = {f['p']:.3f} [{f['p_ci95'][0]:.3f}, {f['p_ci95'][1]:.3f}], q = {f['q']:.3f} "
                f"[{f['q_ci95'][0]:.3f}, {f['q_ci95'][1]:.3f}], k = {k_text(f)} [{f['k_ci95'][0]:.{digits}f}, "
                f"{f['k_ci95'][1]:.{digits}f}], rms log residual {f['rms_log_residual']:.3f} (additive fit: p = "
                f"{add['p']:.3f}, q = {add['q']:.3f}, rms {add['rms_log_residual']:.3f}) "
                f"[{'PASS' if verdicts[row] else 'FAIL'}]"
                + (f" (POOR FIT: rms log residual {f['rms_log_residual']:.2f} > {C6_POOR_FIT:g}; the interval "
                   "measures sampling only)" if f["rms_log_residual"] > C6_POOR_FIT else ""))

    figure = ("power-mean fit error ≈ (A^k (m∧n)^-pk + B^k N^-qk)^(1/k), bootstrap 95% intervals: "
              + "; ".join(describe(row) for row in fits)
              + "; frozen b by m∧n (large-resolution): "
              + ", ".join(f"{s}: {np.mean([r['b'] for r in lr if r['m_min_n'] == s]):.4g}"
                          for s in sorted({r['m_min_n'] for r in lr}))
              + f"; horizon (m∧n, binding bound, b*): {binding}"
              + "; trained interval [(m∧n)/4, (m∧n)/2] inside the C5 progress interval from b0 (sampled, 8 corpora; not the certified corpus interval): "
              + ", ".join(f"{m}: {'yes' if h['horizon'] is not None and h['horizon'] >= h['cap'] else 'no'}"
                          f" (criterion holds to {h['horizon'] if h['horizon'] is None else round(h['horizon'], 1)})"
                          for (m, n), h in sorted(horizons.items()))
              + f"; {certified_text(certified)}"
              + f"; {training_coverage_text(trained_coverage)}"
              + f"; {coverage_text(coverage)}"
              + f"; control, trained only to each size's certified end: {literal['text']}"
              + f"; large-resolution cells with GD steps: {trained_fraction:.0%} (needed: {C6_TRAINED_FRACTION:.0%})"
              + (f"; cells with no GD step (criterion fails at b0): {no_step}" if no_step else ""))
    details = {"seed": seed, "quick": quick, "precision": "float64", "horizon_rule": HORIZON_RULE,
               "certified_horizon_control": literal, "certified_interval_coverage": coverage,
               "training_coverage": trained_coverage, "training_certificates": certificates,
               "certified_risk": {k: v for k, v in certified.items() if k != "fits"},
               "certified_end_fits": {end: certified["fits"][end]["power_mean"] if certified["fits"].get(end) else None
                                      for end in ("low", "high")},
               "monte_carlo_fit": certified["monte_carlo_fit"],
               "evidence_parts": certified["evidence_parts"],
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
        f"crossover is sharper than a sum (fitted k = {k_text(lr['power_mean'])} and {k_text(mech['power_mean'])}), "
        f"and the additive fit reports q = {lr['additive']['q']:.2f} / {mech['additive']['q']:.2f} with rms log "
        f"residual {lr['additive']['rms_log_residual']:.3f} / {mech['additive']['rms_log_residual']:.3f} against "
        f"{lr['power_mean']['rms_log_residual']:.3f} / {mech['power_mean']['rms_log_residual']:.3f} for the power "
        "mean. At a fixed (a, b) on the calibration relation the error is about 1/b + 1/N "
        f"({ratios}), so the rate in m∧n appears exactly when the frozen b grows like m∧n: from b0 = (m∧n)/4 or by "
        f"following the corpus flow from b0 = 10. The large-resolution row trains every size from (m∧n)/4 to "
        "(m∧n)/2, one fixed fraction, and reports beside it the C5 progress interval from b0 (sampled, 8 corpora). The "
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
