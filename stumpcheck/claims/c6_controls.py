"""C6 controls, reported beside the verdict and not part of it.

* ``fixed-b0`` — GD from a₀ = b₀ = 10 with the corpus-curvature step and a
  feasible step budget: the frozen scale stays near 10 for every size, so the
  error cannot fall like (m ∧ n)⁻¹.
* ``sqrt-b0`` — b₀ = √(m ∧ n) on the calibration relation, population step,
  the same budget, towards (m ∧ n)/2: a frozen scale ∝ √(m ∧ n) gives p ≈ ½.
* fixed (a, b) — the fresh-context error against N at (calibration_a(b), b),
  with its ratio to 1/b + 1/N: the shape the rate surface is made of.
* ``above-n`` — GD from b₀ = 2n on a small corpus (population step): whether
  b goes down, as it can where L̂ has a finite minimiser.
"""

from __future__ import annotations

import numpy as np

from stumpcheck.claims.c6_fit import cell_curve
from stumpcheck.numerics.fits import fit_power_mean
from stumpcheck.numerics.corpus.fresh import fresh_context_errors
from stumpcheck.numerics.generated import asymptotics_numpy as derived

__all__ = ["FIXED_SCALES", "fixed_scale_curve", "summarize_controls"]

#: frozen scales of the fixed-(a, b) control
FIXED_SCALES = (32.0, 128.0)


def fixed_scale_curve(b: float, Ns, *, thetas, reps: int, seed: int) -> dict:
    """θ-averaged fresh mean |θ̂_N − θ| at (calibration_a(b), b) for each N, and its ratio to 1/b + 1/N."""
    a = float(derived.calibration_a(b))
    errors = [float(np.mean([fresh_context_errors(a, b, t, int(N), reps=reps, seed=seed).mean_abs_error
                             for t in thetas])) for N in Ns]
    return {"a": a, "b": float(b), "N": [int(N) for N in Ns], "error": errors,
            "ratio_to_1/b+1/N": [e / (1 / b + 1 / N) for e, N in zip(errors, Ns)]}


def _row_summary(results: list) -> dict:
    rows = []
    for r in sorted(results, key=lambda r: (r["m_min_n"], r["seed"])):
        curve = cell_curve(r)
        Ns = sorted(curve)
        rows.append({"m_min_n": r["m_min_n"], "seed": r["seed"], "b0": r["b0"], "b": r["b"], "a": r["a"],
                     "steps": r["steps"], "stopped_because": r["stopped_because"], "eta": r.get("eta"),
                     "error_at_largest_N": curve[Ns[-1]][0], "largest_N": Ns[-1]})
    out = {"cells": rows}
    if len({r["m_min_n"] for r in rows}) >= 2:
        size = [r["m_min_n"] for r in results for _ in cell_curve(r)]
        N = [n for r in results for n in cell_curve(r)]
        error = [v[0] for r in results for v in cell_curve(r).values()]
        try:
            fit = fit_power_mean(size, N, error)
            out["power_mean_point_fit"] = {k: fit[k] for k in ("p", "q", "k", "rms_log_residual")}
        except ValueError as exc:
            out["power_mean_point_fit"] = {"error": str(exc)}
    return out


def summarize_controls(by_row: dict, mode: dict) -> dict:
    """The control figures of one C6 run (see the module docstring)."""
    thetas = (0.3, 0.5, 0.7)
    above = by_row.get("above-n", [])
    return {
        "fixed_b0": _row_summary(by_row.get("fixed-b0", [])) if by_row.get("fixed-b0") else None,
        "sqrt_b0": _row_summary(by_row.get("sqrt-b0", [])) if by_row.get("sqrt-b0") else None,
        "fixed_scale": [fixed_scale_curve(b, mode["N"], thetas=thetas, reps=mode["reps"], seed=0)
                        for b in FIXED_SCALES],
        "above_n": {"cells": [{"m": r["m"], "n": r["n"], "seed": r["seed"], "b0": r["b0"], "b": r["b"],
                               "b_min": r["b_min"], "steps": r["steps"], "stopped_because": r["stopped_because"],
                               "lowered_b": r["lowered_b"], "loss_start": r["loss_start"], "loss_end": r["loss_end"]}
                              for r in above],
                    "lowered": int(sum(r["lowered_b"] for r in above)), "of": len(above)},
    }
