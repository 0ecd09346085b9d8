"""Power-law fits with confidence intervals, and the two-term rate surfaces of C6.

The data fitted here are deterministic (a computed trajectory, not noisy
samples), so an OLS interval measures how far the data are from an exact power
law over the range, i.e. the leftover curvature, not sampling noise. It is
reported as such, together with the range used.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass

import numpy as np

__all__ = ["PowerLawFit", "fit_additive_surface", "fit_power_law", "fit_power_mean", "power_mean_surface"]

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


# ---------------------------------------------------------------- two-term rate surfaces (C6)

def power_mean_surface(size, N, *, log_A: float, p: float, log_B: float, q: float, k: float) -> np.ndarray:
    """log of (A^k s^(−pk) + B^k N^(−qk))^(1/k), computed as logaddexp(k(log A − p log s), k(log B − q log N))/k.

    k > 0. k = 1 is the additive surface A s^−p + B N^−q; k → ∞ tends to the
    maximum of the two terms (a sharp crossover), k → 0 to their product-like
    blend. Stable in log space for any exponents.
    """
    ls, ln = np.log(np.asarray(size, dtype=float)), np.log(np.asarray(N, dtype=float))
    return np.logaddexp(k * (log_A - p * ls), k * (log_B - q * ln)) / k


def _positive_points(size, N, error):
    size, N, error = (np.asarray(v, dtype=float).ravel() for v in (size, N, error))
    if not (size.shape == N.shape == error.shape):
        raise ValueError("size, N and error must have the same length")
    keep = (error > 0) & np.isfinite(error) & (size > 0) & (N > 0)
    if int(keep.sum()) < 6:
        raise ValueError(f"need at least 6 points with a positive error, got {int(keep.sum())}")
    return size[keep], N[keep], error[keep]


def fit_power_mean(size, N, error, *, x0=None) -> dict:
    """Least squares on log error of log E = (1/k)·logaddexp(k(log A − p log s), k(log B − q log N)), k free.

    Parameters (log A, p, log B, q, log k), so k > 0 throughout; starts from the
    additive fit's exponents and k ∈ {1, 4} and keeps the better optimum.
    Returns p, q, k, A, B, the rms log residual and the number of points. No
    interval here: see the bootstrap of the caller (the residuals of a fit to
    Monte Carlo means are not independent across N at one corpus).
    """
    from scipy.optimize import least_squares

    size, N, error = _positive_points(size, N, error)
    target = np.log(error)

    def residual(z):
        log_a, p, log_b, q, log_k = z
        return power_mean_surface(size, N, log_A=log_a, p=p, log_B=log_b, q=q, k=math.exp(log_k)) - target

    starts = [np.asarray(x0, dtype=float)] if x0 is not None else [np.array([0.0, 1.0, 0.0, 1.0, math.log(k)])
                                                                    for k in (1.0, 4.0)]
    best = None
    for start in starts:
        fit = least_squares(residual, x0=start, method="trf", bounds=([-50, -5, -50, -5, math.log(0.05)],
                                                                       [50, 5, 50, 5, math.log(200.0)]))
        if best is None or fit.cost < best.cost:
            best = fit
    log_a, p, log_b, q, log_k = best.x
    return {"model": "error ≈ (A^k (m∧n)^(-pk) + B^k N^(-qk))^(1/k), k free",
            "p": float(p), "q": float(q), "k": float(math.exp(log_k)), "A": float(math.exp(log_a)),
            "B": float(math.exp(log_b)), "points": int(target.size),
            "rms_log_residual": float(math.sqrt(np.mean(best.fun ** 2))), "x": [float(v) for v in best.x]}


def fit_additive_surface(size, N, error) -> dict:
    """The power mean at k = 1: error ≈ A (m∧n)^−p + B N^−q, least squares on log error (no interval)."""
    from scipy.optimize import least_squares

    size, N, error = _positive_points(size, N, error)
    target = np.log(error)

    def residual(z):
        log_a, p, log_b, q = z
        return power_mean_surface(size, N, log_A=log_a, p=p, log_B=log_b, q=q, k=1.0) - target

    fit = least_squares(residual, x0=np.array([0.0, 1.0, 0.0, 1.0]), method="trf",
                        bounds=([-50, -5, -50, -5], [50, 5, 50, 5]))
    log_a, p, log_b, q = fit.x
    return {"model": "error ≈ A (m∧n)^(-p) + B N^(-q)", "p": float(p), "q": float(q), "A": float(math.exp(log_a)),
            "B": float(math.exp(log_b)), "points": int(target.size),
            "rms_log_residual": float(math.sqrt(np.mean(fit.fun ** 2)))}
