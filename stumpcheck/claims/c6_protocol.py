"""Claim C6's protocol (docs/model.md §7): one cell per corpus, from the start to the frozen (a, b) to
the fresh-context errors, and the certified horizon of each size.

Rows (:data:`ROWS`; :func:`c6_cell` runs one cell, :func:`c6_cells` lists the grid):

* **large-resolution** (the verdict) — b₀ = (m ∧ n)/4, a₀ = calibration_a(b₀); η = 1/λ_max(∇²L(a₀, b₀))
  of the population Hessian; constant-step GD on the corpus loss L̂ until b ≥ (m ∧ n)/2, at most
  ``step_cap`` steps; freeze. Beside it, the C5 certified interval from b₀ (:func:`c6_horizon`: rms over
  the size's corpora of the error of ∇L̂ along −∇L/‖∇L‖, relative to ‖∇L‖, at most ½ at every rung
  b₀·2^(j/4) from b₀ up) and whether the trained interval lies inside it;
* **certified-horizon** (control) — the same start, trained only to the size's certified end;
* **mechanism** — from a₀ = calibration_a(10), b₀ = 10, the corpus gradient flow dz/dt = −∇L̂ until
  b ≥ (m ∧ n)/4; freeze;
* **fixed-b0**, **sqrt-b0**, **above-n** — the controls (GD from a₀ = b₀ = 10, from b₀ = √(m ∧ n), from
  b₀ = 2n on small corpora).

Evaluation: fresh contexts at θ ∈ :data:`INTERIOR_THETAS` and N = 16 … 8192, the mean |θ̂_N − θ| per
(θ, N) (evidence: sampled, seeded corpora and contexts, float64). A large-resolution cell with ``certify``
(set by :func:`c6_cells` up to the mode's ``certify_max_size``) also gets its certified figures
(:func:`stumpcheck.claims.c6_certified.certify_cell`: the training certificate of its run and the exact
risk brackets at its frozen head) under ``certified``.
"""

from __future__ import annotations

import math
import time

import numpy as np

from stumpcheck.numerics.corpus.fresh import fresh_context_errors
from stumpcheck.numerics.corpus.steps import HORIZON_FRACTION, large_resolution_start
from stumpcheck.numerics.generated import asymptotics_numpy as derived
from stumpcheck.numerics.precision import InputError

__all__ = ["C6_SETTINGS", "CELL_PROTOCOL", "HORIZON_RULE", "INTERIOR_THETAS", "MECHANISM_B0", "ROWS", "C6_LADDER_B0",
           "HORIZON_RUNGS", "c6_cell", "c6_cells", "c6_horizon", "size_horizons"]

#: interior thresholds evaluated on fresh contexts
INTERIOR_THETAS = (0.3, 0.5, 0.7)
#: the mechanism row's start: a₀ = calibration_a(10), b₀ = 10
MECHANISM_B0 = 10.0
ROWS = ("large-resolution", "certified-horizon", "mechanism", "fixed-b0", "sqrt-b0", "above-n")
#: first rung of the horizon's C5 ladder b_k = C6_LADDER_B0·2^k (C5's progress-criterion ladder starts at 8)
C6_LADDER_B0 = 8.0
#: rungs per octave of the horizon's ladder from b₀ = (m∧n)/4 to the cap (m∧n)/2
HORIZON_RUNGS = 4
_N_GRID = tuple(2 ** j for j in range(4, 14))  # 16 … 8192
_N_QUICK = tuple(2 ** j for j in range(4, 11)) + (8192,)  # 16 … 1024 and 8192 (the floor), for speed
C6_SETTINGS = {
    "quick": {"sizes": (64, 128, 256), "mechanism_sizes": (64, 128, 256), "seeds": 2, "horizon_corpora": 8, "N": _N_QUICK, "reps": 128,
              "step_cap": 4000, "bootstrap": 100, "flow_rtol": 1e-4, "control_sizes": (64, 128, 256),
              "control_steps": 150, "above_n": {"size": 16, "seeds": 4, "steps": 200}, "certify_max_size": 256,
              "chain_token_steps": 5e7},
    "full": {"sizes": (64, 128, 256, 512, 1024), "mechanism_sizes": (64, 128, 256, 512, 1024), "seeds": 4,
             "horizon_corpora": 8, "N": _N_GRID, "reps": 400, "step_cap": 20000, "bootstrap": 400, "flow_rtol": 1e-5,
             "control_sizes": (64, 128, 256, 512), "control_steps": 3000,
             "above_n": {"size": 32, "seeds": 8, "steps": 1000}, "certify_max_size": 512,
             "chain_token_steps": 3e8},
}

#: a sweep store keys cells by their settings: a new protocol must not be answered from an old store
CELL_PROTOCOL = "c6-large-resolution-v3"

HORIZON_RULE = ("large-resolution row (the verdict): b0 = (m∧n)/4, a0 = calibration_a(b0), eta = 1/lambda_max of the "
                "population Hessian at (a0, b0); GD on the cell's corpus until b >= (m∧n)/2 (the protocol of "
                "`train --init large-resolution`), or the step cap. Beside it: the C5 progress interval (sampled) from b0 "
                "(C5's criterion, rms over 8 corpora of the size of the error along -grad L/|grad L| <= 1/2 at every "
                "rung b0*2^(j/4) from b0 up) and whether the trained interval lies inside it; the certified-horizon "
                "control row trains each size only to that certified end (no step if the criterion fails at b0). "
                "Mechanism row: corpus gradient flow from a0 = calibration_a(10), b0 = 10 until b >= (m∧n)/4")


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


def _train(corpus, a0, b0, *, b_target, steps, estimator, step_rule, every_step=False):
    from stumpcheck.numerics.corpus.gd import train_gd

    # every_step: a certified cell compares every float64 iterate with its enclosure (c6_certified)
    run = train_gd(corpus.x, corpus.theta, a0=a0, b0=b0, b_target=b_target, steps=steps, estimator=estimator,
                   record_every=1 if every_step else max(1, steps // 200), method="pruned", step_rule=step_rule)
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
    sqrt-b0 rows), steps (fixed-b0, above-n), flow_rtol (mechanism), certify (large-resolution, one head:
    certify the run and bracket the risk, :mod:`stumpcheck.claims.c6_certified`). Keys other rows do not use are
    ignored (``k_max``, ``long_steps`` from older grids: the horizon's ladder is sized from m ∧ n).
    """
    from stumpcheck.numerics.corpus.corpora import make_corpus

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
            certify = row == "large-resolution" and bool(cell.get("certify")) and estimator == "one-head"
            run, summary = _train(corpus, a0, b0, b_target=target, steps=int(cell["step_cap"]), estimator=estimator,
                                  step_rule="population", every_step=certify)
            if certify:  # the summary keeps about 200 points of b, as without certification
                summary["trajectory_b"] = summary["trajectory_b"][::max(1, int(cell["step_cap"]) // 200)]
            out.update(summary)
    elif row == "mechanism":
        from stumpcheck.numerics.corpus.gradient_flow import empirical_flow

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
    if row == "large-resolution" and cell.get("certify") and out["steps"] > 0 and estimator == "one-head":
        from stumpcheck.claims.c6_certified import certify_cell

        out["certified"] = certify_cell(corpus, cell, out, run)
    out["seconds"] = time.perf_counter() - started
    out["precision"], out["evidence"] = "float64", "sampled"
    return out


def c6_cells(*, quick: bool = True, seed: int = 0, estimator: str = "one-head") -> list[dict]:
    """The C6 grid: both rows over the mode's sizes × seeds, then the control cells."""
    mode = C6_SETTINGS["quick" if quick else "full"]
    common = {"N": list(mode["N"]), "thetas": list(INTERIOR_THETAS), "reps": mode["reps"], "estimator": estimator,
              "protocol": CELL_PROTOCOL}
    seeds = [seed + i for i in range(mode["seeds"])]
    horizon_seeds = [seed + i for i in range(mode["horizon_corpora"])]
    cells = [dict(common, row=row, m=s, n=s, seed=i, c5_seeds=horizon_seeds, step_cap=mode["step_cap"])
             for row in ("large-resolution", "certified-horizon") for s in mode["sizes"] for i in seeds]
    for cell in cells:  # the large-resolution row is certified up to the mode's size (c6_certified); a chain
        # costlier than chain_token_steps (steps × m·n) is skipped, its brackets taken at the float64 head
        if cell["row"] == "large-resolution" and estimator == "one-head" and cell["m"] <= mode["certify_max_size"]:
            cell.update(certify=True, chain_token_steps=mode["chain_token_steps"])
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


def size_horizons(cells: list) -> dict:
    """Each size's certified horizon (:func:`c6_horizon`), computed once for all its cells."""
    horizons = {}
    for cell in cells:
        key = (cell["m"], cell["n"])
        if cell["row"] in ("large-resolution", "certified-horizon") and key not in horizons:
            horizons[key] = c6_horizon(cell["m"], cell["n"], cell.get("c5_seeds", [cell["seed"]]),
                                       estimator=cell.get("estimator", "one-head"))
    return horizons
