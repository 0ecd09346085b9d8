"""The certified all-time band of b(t)⁴/t on log axes, beside the float64 flow where it exists.

The band is :func:`stumpcheck.numerics.certified.region.all_time.all_time_band` at 8 log-spaced times per
decade from T to 10³⁰ (each end rounded outward, so the shaded area contains b⁴/t at those times; between
them the drawing interpolates). The float64 flow (sampled evidence, not part of the proof) is drawn over the
times it covers, and the rate bound 2 ± K·t^{−1/4} of the band's ends as dashed lines.
"""

from __future__ import annotations

from fractions import Fraction
from pathlib import Path

import numpy as np

__all__ = ["plot_all_time_band"]


def plot_all_time_band(region, t_entry, beta_lo, beta_hi, path, *, flow=None, rate=None, t_end: float = 1e30) -> Path:
    """Write the plot to ``path`` (PNG). ``region``: constants b_start, c, d_minus, d_plus of R ∪ R_∞;
    ``flow``: (t, b) arrays of a float64 flow or None; ``rate``: {"K", "t0"} of
    :func:`~stumpcheck.numerics.certified.region.all_time.rate_constant` or None."""
    from stumpcheck.numerics.certified.region.all_time import all_time_table
    from stumpcheck.numerics.plotting import pyplot, save_figure

    start = float(Fraction(t_entry))
    decades = max(1, int(np.ceil(np.log10(t_end) - np.log10(start))))
    times = [Fraction(float(t)) for t in np.logspace(np.log10(start), np.log10(t_end), 8 * decades + 1)]
    rows = all_time_table(region, t_entry, beta_lo, beta_hi, times)
    t = np.array([r["t"] for r in rows])
    low = np.array([float(r["b4_over_t"][0]) for r in rows])
    high = np.array([float(r["b4_over_t"][1]) for r in rows])
    plt = pyplot()
    fig, (ax, scaled) = plt.subplots(1, 2, figsize=(11, 4.2))
    quarter = t ** 0.25
    ax.fill_between(t, low, high, color="tab:blue", alpha=0.3, lw=0, label="certified band of b⁴/t (for all t ≥ T)")
    scaled.fill_between(t, quarter * (low - 2), quarter * (high - 2), color="tab:blue", alpha=0.3, lw=0,
                        label="certified band of t^(1/4)·(b⁴/t − 2)")
    if rate is not None:
        k, t0 = float(rate["K"]), float(rate["t0"])
        mask = t >= t0
        ax.plot(t[mask], 2 - k * t[mask] ** -0.25, "k--", lw=0.8, label=f"2 ± {k:g}·t^(−1/4) (t ≥ {t0:g})")
        ax.plot(t[mask], 2 + k * t[mask] ** -0.25, "k--", lw=0.8)
        scaled.plot(t[mask], np.full(mask.sum(), -k), "k--", lw=0.8, label=f"± K = {k:g} (t ≥ {t0:g})")
        scaled.plot(t[mask], np.full(mask.sum(), k), "k--", lw=0.8)
    if flow is not None:
        ft, fb = (np.asarray(x, dtype=float) for x in flow)
        keep = ft >= start
        ratio = fb[keep] ** 4 / ft[keep]
        ax.plot(ft[keep], ratio, color="tab:orange", lw=1.2, label="float64 flow (sampled)")
        scaled.plot(ft[keep], ft[keep] ** 0.25 * (ratio - 2), color="tab:orange", lw=1.2, label="float64 flow (sampled)")
    ax.axhline(2.0, color="grey", lw=0.6)
    for axis in (ax, scaled):
        axis.set_xscale("log")
        axis.set_xlabel("t")
        axis.legend(fontsize=8, loc="lower right" if axis is ax else "center right")
    ax.set_ylim(max(0.0, low.min() - 0.05), 2.0 + max(0.05, float(high.max() - 2.0) + 0.02))
    ax.set_ylabel("b(t)⁴/t")
    scaled.set_ylabel("t^(1/4)·(b(t)⁴/t − 2)")
    fig.suptitle(f"certified for all t ≥ {start:g}", fontsize=10)
    return save_figure(fig, path)
