"""Plots of C6: c6_rates.png (frozen error against N and m ∧ n with the fitted power-mean surface, both
rows) and c6_controls.png (the controls of :mod:`stumpcheck.claims.c6_controls`)."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np

from stumpcheck.claims.c6_fit import k_text, row_data
from stumpcheck.numerics.fits import power_mean_surface

__all__ = ["plot_c6", "c6_figures", "rates_title"]


def _surface(fit: dict, size, N):
    return np.exp(power_mean_surface(size, N, log_A=math.log(fit["A"]), p=fit["p"], log_B=math.log(fit["B"]),
                                     q=fit["q"], k=fit.get("k_fit", fit["k"])))


def rates_title(row: str, fit: dict) -> str:
    """The title of one row's panel: p, q and k as the report prints them (k from :func:`k_text`)."""
    return f"{row}: p = {fit['p']:.2f}, q = {fit['q']:.2f}, k = {k_text(fit)} (lines: fit)"


def plot_c6(out: Path, by_row: dict, fits: dict, controls: dict, seed: int) -> list:
    """Write :func:`c6_figures` into the folder ``out``; their file names."""
    from stumpcheck.numerics.plotting import save_figure

    figures = c6_figures(by_row, fits, controls, seed)
    for name, fig in figures.items():
        save_figure(fig, Path(out) / name, dpi=80)
    return list(figures)


def c6_figures(by_row: dict, fits: dict, controls: dict, seed: int) -> dict:
    """C6's figures by file name: ``c6_rates.png`` (the large-resolution and mechanism rows of ``by_row`` with the
    power-mean surfaces of ``fits``) and ``c6_controls.png`` (the start-rule and fixed-scale ``controls``)."""
    from stumpcheck.numerics.plotting import pyplot

    plt = pyplot()
    cmap = plt.get_cmap("viridis")
    fig, axes = plt.subplots(2, 2, figsize=(12, 9))
    for col, row in enumerate(("large-resolution", "mechanism")):
        # the points the fit read: Monte Carlo means, or the certified brackets' midpoints (c6_certified)
        fit = fits[row]["power_mean"]
        data = row_data(by_row[row], fit.get("value", "monte-carlo"))
        sizes = sorted(data)
        for i, s in enumerate(sizes):
            color = cmap(i / max(1, len(sizes) - 1))
            Ns = np.array(data[s]["N"], dtype=float)
            axes[0, col].plot(Ns, data[s]["mean"].mean(axis=0), "o", color=color, ms=4, label=f"m∧n = {s}")
            grid = np.geomspace(Ns[0], Ns[-1], 100)
            axes[0, col].plot(grid, _surface(fit, np.full_like(grid, s), grid), "-", color=color, lw=1)
        axes[0, col].set_xlabel("N (fresh context size)")
        axes[0, col].set_title(rates_title(row, fit), fontsize=10)
        if sizes:
            Ns = data[sizes[0]]["N"]
            for j, N in enumerate(Ns[::3]):
                color = plt.get_cmap("plasma")(j / max(1, len(Ns[::3]) - 1))
                values = [data[s]["mean"].mean(axis=0)[Ns.index(N)] for s in sizes]
                axes[1, col].plot(sizes, values, "s", color=color, ms=4, label=f"N = {N}")
                grid = np.geomspace(sizes[0], sizes[-1], 50)
                axes[1, col].plot(grid, _surface(fit, grid, np.full_like(grid, N)), "-", color=color, lw=1)
        axes[1, col].set_xlabel("m ∧ n")
    for ax in axes.ravel():
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_ylabel("mean |θ̂_N − θ|, θ ∈ {0.3, 0.5, 0.7}")
        ax.grid(True, which="both", alpha=0.3)
        ax.legend(fontsize=7)
    fig.suptitle(f"C6: frozen-estimator error and the fitted power-mean surface (seed {seed})", fontsize=11)
    figures = {"c6_rates.png": fig}

    fig, axes = plt.subplots(1, 2, figsize=(12, 4.5))
    for name, fmt in (("fixed_b0", "o-"), ("sqrt_b0", "s-")):
        summary = controls.get(name)
        if summary:
            cells = summary["cells"]
            axes[0].plot([c["m_min_n"] for c in cells], [c["error_at_largest_N"] for c in cells], fmt,
                         label=f"{name.replace('_', ' ')} (frozen b {cells[0]['b']:.3g}..{cells[-1]['b']:.3g})")
    lr = row_data(by_row["large-resolution"])
    if lr:
        sizes = sorted(lr)
        axes[0].plot(sizes, [lr[s]["mean"].mean(axis=0)[-1] for s in sizes], "k^-", label="large-resolution row")
    axes[0].set_xlabel("m ∧ n")
    axes[0].set_ylabel("error at the largest N")
    axes[0].set_title("controls: start rules", fontsize=10)
    for curve in controls["fixed_scale"]:
        axes[1].plot(curve["N"], curve["error"], "o-", ms=4, label=f"fixed b = {curve['b']:g}")
        axes[1].plot(curve["N"], [1 / curve["b"] + 1 / N for N in curve["N"]], ":", label=f"1/b + 1/N, b = "
                                                                                             f"{curve['b']:g}")
    axes[1].set_xlabel("N")
    axes[1].set_title("fixed (a, b) on the calibration relation", fontsize=10)
    for ax in axes:
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.grid(True, which="both", alpha=0.3)
        ax.legend(fontsize=7)
    figures["c6_controls.png"] = fig
    return figures
