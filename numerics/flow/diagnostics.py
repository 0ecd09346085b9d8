"""The population flow's diagnostics and fits (claims C2–C4) along a computed trajectory.

* :func:`sup_interior_error` — sup over the interior θ ∈ [δ, 1 − δ] (δ = :data:`DEFAULT_DELTA`) of the
  error |e(θ)| at a state (a, b): a 2001-point grid plus local refinement, float64 (evidence: sampled);
* :func:`flow_fits` — over the saved times t ≥ fit_from: the exponent of b in t (raw, and of b − c₁
  with c₁ from the derived db/dt), the constant C of (b − c₁)⁴ = C·t + D, and the exponent of the sup
  interior error in t (OLS, with intervals that measure departure from the model). These are fits of
  the large-t laws, derived along the calibration relation: each fit says whether its window is there
  (``valid``, ``validity``: the largest |a − calibration_a(b)| over the window at most
  :data:`CALIBRATED_RESIDUAL`). From (10, 10) the default window of a flow to t = 10 gives C = −48.8
  (residual 4.5, not calibrated), to 10⁸ C = 1.997 against the derived 2 (residual 0.004).
"""

from __future__ import annotations

import math

import numpy as np

from stumpcheck.numerics.fits import PowerLawFit, fit_power_law
from stumpcheck.numerics.generated import asymptotics_numpy as derived
from stumpcheck.numerics.generated import population_numpy as gen_np

__all__ = ["DEFAULT_DELTA", "CALIBRATED_RESIDUAL", "sup_interior_error", "sup_interior_errors", "flow_fits"]

DEFAULT_DELTA = 0.05
#: The largest |a − calibration_a(b)| over a fit window for the large-t laws to be fitted there
#: (measured from (10, 10) on the default windows: 4.5 for t-max 10, 2.9 for 10⁵, 0.43 for 10⁶, 0.008 for 10⁷,
#: 0.004 for 10⁸ and 10¹²).
CALIBRATED_RESIDUAL = 0.1


def sup_interior_error(a: float, b: float, *, delta: float = DEFAULT_DELTA, estimator: str = "one-head") -> float:
    """sup over θ ∈ [δ, 1 − δ] of ``|e(θ)|``: grid of 2001 points, then refinement around the maximum.

    The refinement zooms on the grid maximum's two neighbouring cells: 8 rounds of
    a 65-point grid, each keeping the two cells around its maximum (a factor 32
    per round, ~1e−15 of the interval at the end), each round one vectorised
    evaluation. Evidence level: sampled (a grid maximum refined locally, float64).
    """
    error = getattr(gen_np, f"error_{estimator.replace('-', '_')}")
    grid = np.linspace(delta, 1 - delta, 2001)
    values = np.abs(error(a, b, grid))
    i = int(np.argmax(values))
    best = float(values[i])
    lo, hi = grid[max(i - 1, 0)], grid[min(i + 1, grid.size - 1)]
    for _ in range(8):
        fine = np.linspace(lo, hi, 65)
        fine_values = np.abs(error(a, b, fine))
        j = int(np.argmax(fine_values))
        best = max(best, float(fine_values[j]))
        lo, hi = fine[max(j - 1, 0)], fine[min(j + 1, fine.size - 1)]
        if not hi > lo:
            break
    return best


def sup_interior_errors(a, b, *, delta: float = DEFAULT_DELTA, estimator: str = "one-head") -> np.ndarray:
    """:func:`sup_interior_error` at many states (a_i, b_i) at once: the same grid and refinement, each round one
    vectorised evaluation over all states (the same values; about 10× faster for the 100 states of a flow)."""
    error = getattr(gen_np, f"error_{estimator.replace('-', '_')}")
    a = np.asarray(a, dtype=float).reshape(-1, 1)
    b = np.asarray(b, dtype=float).reshape(-1, 1)
    if a.size == 0:
        return np.zeros(0)
    rows = np.arange(a.shape[0])
    grid = np.linspace(delta, 1 - delta, 2001)
    values = np.abs(error(a, b, grid[None, :]))
    i = np.argmax(values, axis=1)
    best = values[rows, i]
    lo, hi = grid[np.maximum(i - 1, 0)], grid[np.minimum(i + 1, grid.size - 1)]
    for _ in range(8):
        fine = np.linspace(lo, hi, 65, axis=1)
        fine_values = np.abs(error(a, b, fine))
        j = np.argmax(fine_values, axis=1)
        best = np.maximum(best, fine_values[rows, j])
        lo, hi = fine[rows, np.maximum(j - 1, 0)], fine[rows, np.minimum(j + 1, fine.shape[1] - 1)]
        if not np.any(hi > lo):
            break
    return best


def flow_fits(t, a, b, sups, fit_from) -> dict:
    """Exponents of b and of the sup interior error in t, and the constant C.

    * ``scale_exponent``: OLS slope of log b on log t (raw; the derived law
      b ≈ (C t)^{1/4} + c₁ makes it exceed 1/4 by about c₁/(4b) at finite t);
    * ``scale_exponent_corrected``: the same for b − c₁, with c₁ from the
      derived db/dt;
    * ``scale_constant``: C from the linear fit (b − c₁)⁴ = C·t + D (D absorbs
      the start), with its OLS interval;
    * ``error_exponent``: OLS slope of log sup|e| on log t.
    """
    keep = t >= fit_from
    out: dict = {}
    if np.count_nonzero(keep) < 3:
        return {"error": f"fewer than 3 saved times with t >= {fit_from:g}"}
    c1 = float(derived.scale_two_term(1.0) - derived.FLOW_CONSTANT_C ** 0.25)  # the law is (Ct)^¼ + c1
    raw = fit_power_law(t[keep], b[keep])
    out["scale_exponent"] = _fit_entry(raw.exponent, raw.exponent_ci, raw, "log b = p log t + const (OLS)")
    corrected = fit_power_law(t[keep], b[keep] - c1)
    out["scale_exponent_corrected"] = _fit_entry(
        corrected.exponent, corrected.exponent_ci, corrected,
        f"log(b - c1) = p log t + const (OLS), c1 = {c1:.6g} from the derived db/dt")
    out["scale_constant"] = _linear_constant(t[keep], (b[keep] - c1) ** 4, c1)
    err = fit_power_law(t[keep], sups[keep])
    out["error_exponent"] = _fit_entry(err.exponent, err.exponent_ci, err, "log sup|e| = p log t + const (OLS)")
    residual = float(np.max(np.abs(derived.calibration_residual(a[keep], b[keep]))))
    valid = bool(residual <= CALIBRATED_RESIDUAL)
    lo, hi = float(t[keep].min()), float(t[keep].max())
    validity = (f"the window t in [{lo:.3g}, {hi:.3g}] is on the calibration relation (max |a - calibration_a(b)| "
                f"= {residual:.2g} <= {CALIBRATED_RESIDUAL:g}), where the large-t laws are derived" if valid else
                f"not a fit of the large-t law: on the window t in [{lo:.3g}, {hi:.3g}] the flow is not yet "
                f"calibrated (max |a - calibration_a(b)| = {residual:.2g} > {CALIBRATED_RESIDUAL:g}); run to a "
                f"larger t-max (from (10, 10): 1e7 or more)")
    for entry in out.values():
        entry.update(valid=valid, validity=validity)
    return out


def _linear_constant(t, y, c1) -> dict:
    design = np.column_stack([t, np.ones_like(t)])
    coef, *_ = np.linalg.lstsq(design, y, rcond=None)
    dof = max(len(t) - 2, 1)
    sigma2 = float(np.sum((y - design @ coef) ** 2) / dof)
    half = 1.96 * math.sqrt(sigma2 * np.linalg.inv(design.T @ design)[0, 0])
    return {"value": float(coef[0]), "ci95": [float(coef[0] - half), float(coef[0] + half)],
            "t_range": [float(t.min()), float(t.max())], "points": int(len(t)),
            "model": f"(b - c1)^4 = C t + D (OLS), c1 = {c1:.6g} from the derived db/dt",
            "derived_C": float(derived.FLOW_CONSTANT_C),
            "ci_meaning": "OLS interval on deterministic data: measures departure from the model"}


def _fit_entry(value, ci, fit: PowerLawFit, model: str) -> dict:
    return {"value": value, "ci95": list(ci), "t_range": [fit.x_min, fit.x_max], "points": fit.n,
            "model": model, "ci_meaning": "OLS interval on deterministic data: measures departure from the model"}
