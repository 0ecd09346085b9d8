"""Power-law fits with confidence intervals.

The data fitted here are deterministic (a computed trajectory, not noisy
samples), so an OLS interval measures how far the data are from an exact power
law over the range, i.e. the leftover curvature, not sampling noise. It is
reported as such, together with the range used.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass

import numpy as np

__all__ = ["PowerLawFit", "fit_power_law"]

# two-sided 95% Student-t quantiles for small degrees of freedom; normal beyond
_T95 = {1: 12.706, 2: 4.303, 3: 3.182, 4: 2.776, 5: 2.571, 6: 2.447, 7: 2.365, 8: 2.306, 9: 2.262,
        10: 2.228, 12: 2.179, 15: 2.131, 20: 2.086, 30: 2.042}


def _t95(dof: int) -> float:
    if dof <= 0:
        return math.inf
    keys = [k for k in _T95 if k <= dof]
    return _T95[max(keys)] if dof <= 30 else 1.96


@dataclass(frozen=True)
class PowerLawFit:
    """y ≈ prefactor · x^exponent over x ∈ [x_min, x_max] (n points), OLS in log–log."""

    exponent: float
    exponent_ci: tuple
    prefactor: float
    prefactor_ci: tuple
    x_min: float
    x_max: float
    n: int

    def as_dict(self) -> dict:
        return asdict(self)


def fit_power_law(x, y, *, x_min: float | None = None, x_max: float | None = None) -> PowerLawFit:
    """Fit log y = log c + p log x by least squares over x_min ≤ x ≤ x_max.

    Needs at least three points with x > 0 and y > 0 in the range.
    """
    x, y = np.asarray(x, dtype=float), np.asarray(y, dtype=float)
    keep = (x > 0) & (y > 0) & np.isfinite(x) & np.isfinite(y)
    if x_min is not None:
        keep &= x >= x_min
    if x_max is not None:
        keep &= x <= x_max
    lx, ly = np.log(x[keep]), np.log(y[keep])
    n = int(lx.size)
    if n < 3:
        raise ValueError(f"need at least 3 positive points in the fit range, got {n}")
    design = np.column_stack([np.ones(n), lx])
    coef, residual, *_ = np.linalg.lstsq(design, ly, rcond=None)
    dof = n - 2
    sigma2 = float(np.sum((ly - design @ coef) ** 2) / dof) if dof > 0 else math.inf
    cov = sigma2 * np.linalg.inv(design.T @ design)
    half = _t95(dof) * np.sqrt(np.diag(cov))
    intercept, slope = coef
    return PowerLawFit(
        exponent=float(slope), exponent_ci=(float(slope - half[1]), float(slope + half[1])),
        prefactor=float(math.exp(intercept)),
        prefactor_ci=(float(math.exp(intercept - half[0])), float(math.exp(intercept + half[0]))),
        x_min=float(np.min(x[keep])), x_max=float(np.max(x[keep])), n=n)
