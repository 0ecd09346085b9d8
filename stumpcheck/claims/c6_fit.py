"""The C6 rate fit: a power-mean surface over (m ∧ n, N) with bootstrap intervals.

Data of one row: for each cell (one corpus of size s = m ∧ n) and each N, the
fresh-context mean |θ̂_N − θ| averaged over the interior θ; the figure at
(s, N) is the mean over the corpora of that size. Fit (:func:`stumpcheck.numerics.fits.fit_power_mean`):

    log E(s, N) = (1/k)·logaddexp(k(log A − p log s), k(log B − q log N)),   k > 0 free.

Bootstrap (percentile, 95 %, ``bootstrap`` replicates, seeded): each replicate
resamples the corpora of every size with replacement and redraws every
fresh-context mean from N(mean, sd²/reps), the sampling law of the mean of
``reps`` resampled contexts (CLT; the errors are bounded), so both sources
of randomness, corpora and fresh contexts, are resampled together. The
additive surface (k = 1) is fitted to the same data as a secondary figure.

What is fitted (``value``, :func:`cell_curve`): the Monte Carlo means, or the certified brackets
[|bias|, √MSE] of :mod:`stumpcheck.claims.c6_certified` — their midpoints, lower or upper ends,
averaged over θ and the corpora of a size like the means. A bracket has no sampling error, so the
bootstrap then resamples the corpora only: the interval is still statistical, since the corpora are
random draws.

The crossover sharpness k is reported to the digits its bootstrap interval
supports (:func:`interval_decimals`: the decimal place of the leading digit
of the interval's half-width), and that one rounded value is what the text,
the plot title and the JSON (``k``) carry; the unrounded least-squares value
is ``k_fit`` (the fitted surface is drawn with it).
"""

from __future__ import annotations

import math

import numpy as np

from stumpcheck.numerics.fits import fit_additive_surface, fit_power_mean

__all__ = ["DEFAULT_DECIMALS", "VALUES", "cell_curve", "interval_decimals", "k_text", "row_data", "row_fit"]

#: decimals of k when there is no interval to size them (no bootstrap replicates)
DEFAULT_DECIMALS = 2


def interval_decimals(ci) -> int:
    """Decimals a value with 95 % interval ``ci`` has: the decimal place of the leading digit of the interval's
    half-width (0.3 → 1, 0.05 → 2, 3 → 0); :data:`DEFAULT_DECIMALS` when the interval is missing or empty."""
    try:
        half = (float(ci[1]) - float(ci[0])) / 2
    except (TypeError, ValueError, IndexError):
        return DEFAULT_DECIMALS
    if not (math.isfinite(half) and half > 0):
        return DEFAULT_DECIMALS
    return max(0, -math.floor(math.log10(half)))


def k_text(fit: dict) -> str:
    """k of a power-mean fit as printed everywhere: the JSON value ``k`` to its ``k_decimals`` decimals."""
    return f"{fit['k']:.{fit.get('k_decimals', DEFAULT_DECIMALS)}f}"


#: what a fit reads from a cell (:func:`cell_curve`)
VALUES = ("monte-carlo", "certified-mid", "certified-low", "certified-high")


def cell_curve(result: dict, value: str = "monte-carlo") -> dict:
    """N → (θ-averaged mean |θ̂_N − θ|, its Monte Carlo standard error) of one cell.

    ``value`` "monte-carlo" (the default): the cell's fresh-context means. "certified-low", "certified-high",
    "certified-mid": the θ-average of the lower ends |bias|, of the upper ends √MSE, or of the midpoints
    (|bias| + √MSE)/2 of the cell's certified brackets (``result["certified"]["risk"]``,
    :mod:`stumpcheck.claims.c6_certified`), with standard error 0 (no sampling in a cell). The θ-average of
    the lower (upper) ends is a certified lower (upper) bound of the θ-averaged mean error; the midpoint's
    average lies between them."""
    if value != "monte-carlo":
        return _certified_curve(result, value)
    by_n: dict = {}
    for row in result["fresh"]:
        by_n.setdefault(int(row["N"]), []).append((row["mean_abs_error"], row["sd_abs_error"] ** 2 / row["reps"]))
    return {N: (float(np.mean([v[0] for v in rows])), float(np.sqrt(np.sum([v[1] for v in rows])) / len(rows)))
            for N, rows in sorted(by_n.items())}


def _certified_curve(result: dict, value: str) -> dict:
    if value not in VALUES:
        raise ValueError(f"unknown value {value!r}; one of {', '.join(VALUES)}")
    by_n: dict = {}
    for row in result["certified"]["risk"]:
        low, high = (float(v) for v in row["bracket"])
        by_n.setdefault(int(row["N"]), []).append({"certified-low": low, "certified-high": high,
                                                   "certified-mid": (low + high) / 2}[value])
    return {N: (float(np.mean(rows)), 0.0) for N, rows in sorted(by_n.items())}


def row_data(results: list, value: str = "monte-carlo") -> dict:
    """Per size: the N grid, the cells' curves (corpora × N) and their standard errors (``value``:
    :func:`cell_curve`)."""
    sizes = sorted({r["m_min_n"] for r in results})
    data = {}
    for s in sizes:
        curves = [cell_curve(r, value) for r in results if r["m_min_n"] == s]
        Ns = sorted(curves[0])
        data[s] = {"N": Ns, "mean": np.array([[c[N][0] for N in Ns] for c in curves]),
                   "se": np.array([[c[N][1] for N in Ns] for c in curves])}
    return data


def _flatten(data: dict, means: dict):
    size, N, error = [], [], []
    for s, block in data.items():
        size += [s] * len(block["N"])
        N += list(block["N"])
        error += list(means[s])
    return np.array(size, dtype=float), np.array(N, dtype=float), np.array(error)


def row_fit(results: list, *, bootstrap: int, seed: int, value: str = "monte-carlo") -> dict:
    """Power-mean fit of one row with bootstrap 95 % intervals, and the additive fit (see the module docstring).

    ``value`` (:func:`cell_curve`) chooses what is fitted: the Monte Carlo means, or an end or the midpoint of
    the certified brackets (then the bootstrap resamples the corpora only: a cell's bracket has no sampling
    error). The result's ``value`` names it."""
    if not results:
        nan = float("nan")
        empty = {"p": nan, "p_ci95": [nan, nan], "q": nan, "q_ci95": [nan, nan], "k": nan, "k_fit": nan,
                 "k_decimals": DEFAULT_DECIMALS, "k_ci95": [nan, nan], "rms_log_residual": nan}
        return {"power_mean": empty, "additive": dict(empty), "data": {}}
    data = row_data(results, value)
    point_means = {s: block["mean"].mean(axis=0) for s, block in data.items()}
    size, N, error = _flatten(data, point_means)
    point = fit_power_mean(size, N, error)
    additive = fit_additive_surface(size, N, error)
    rng = np.random.default_rng(np.random.SeedSequence(int(seed), spawn_key=(6, len(results))))
    draws = []
    for _ in range(int(bootstrap)):
        means = {}
        for s, block in data.items():
            pick = rng.integers(0, block["mean"].shape[0], block["mean"].shape[0])
            noisy = block["mean"][pick] + rng.standard_normal(block["mean"][pick].shape) * block["se"][pick]
            means[s] = np.maximum(noisy, 1e-300).mean(axis=0)
        fit = fit_power_mean(*_flatten(data, means), x0=point["x"])
        draws.append((fit["p"], fit["q"], fit["k"]))
    draws = np.array(draws) if draws else np.full((1, 3), np.nan)

    def ci(column):
        return [float(np.percentile(draws[:, column], 2.5)), float(np.percentile(draws[:, column], 97.5))]

    decimals = interval_decimals(ci(2))
    power_mean = {"p": point["p"], "p_ci95": ci(0), "q": point["q"], "q_ci95": ci(1),
                  "k": round(point["k"], decimals), "k_decimals": decimals, "k_fit": point["k"], "k_ci95": ci(2), "rms_log_residual": point["rms_log_residual"], "A": point["A"], "B": point["B"],
                  "points": point["points"], "bootstrap": int(bootstrap), "model": point["model"],
                  "corpora_per_size": {str(s): int(block["mean"].shape[0]) for s, block in data.items()}}
    power_mean["value"] = value
    return {"power_mean": power_mean, "additive": additive, "value": value,
            "data": {"size": size.tolist(), "N": N.tolist(), "error": error.tolist()}}
