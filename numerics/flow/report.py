"""Files and plots for a population-flow run: flow.csv, flow.json, PNG figures.

:func:`plot_flow` draws a :class:`~stumpcheck.numerics.flow.run.FlowRun` or a
:class:`~stumpcheck.numerics.flow.integrate.FlowSolution` as a matplotlib figure, one panel each of
:data:`FLOW_PANELS`; :func:`write_flow_outputs` writes flow.csv and flow.json (the run's
:meth:`~stumpcheck.numerics.flow.run.FlowRun.to_csv` and :meth:`~stumpcheck.numerics.flow.run.FlowRun.to_dict`)
and each panel of :func:`plot_flow` as ``<panel>.png`` (or none: ``plots=False``).

The figures are drawn to be cheap: a single panel gets fixed margins (:data:`SINGLE_PANEL_MARGINS`) instead of
matplotlib's tight layout, which draws every text once more to measure it, and the log axes get plain-text
tick labels and no unlabelled minor ticks (:func:`~stumpcheck.numerics.plotting.light_log_axes`), and titles
sit at a fixed height (matplotlib otherwise measures the tick labels at each draw to place them). The four
files of ``stumpcheck flow --out`` then take about a third of the CPU they took with tight layout and mathtext
labels (0.22 s against 0.70 s for drawing and saving them, after a flow to 10¹²; importing matplotlib adds
about 0.3 s): about a third of the whole command's CPU, where it was about half.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np

from stumpcheck.numerics.flow.run import FlowRun
from stumpcheck.numerics.json_output import finite_json
from stumpcheck.numerics.plotting import light_log_axes, pyplot, save_figure
from stumpcheck.numerics.precision import InputError

__all__ = ["write_flow_outputs", "draw_flow_plots", "flow_table", "plot_flow", "FLOW_PANELS", "SINGLE_PANEL_MARGINS"]

#: The panels of :func:`plot_flow`, each also a PNG file of :func:`write_flow_outputs` (``scale.png``, …);
#: ``interior_error`` needs a :class:`~stumpcheck.numerics.flow.run.FlowRun` (its sup over interior θ).
FLOW_PANELS = ("scale", "calibration_residual", "normalised_loss", "interior_error")

#: Margins of a one-panel figure (fractions of its 6 × 4.2 in), which leave room for the title, the axis
#: labels and tick labels up to seven characters wide without a layout pass.
SINGLE_PANEL_MARGINS = {"left": 0.12, "right": 0.97, "bottom": 0.11, "top": 0.93}


def flow_table(run: FlowRun, rows: int = 12) -> str:
    """A fixed-width table at about ``rows`` logarithmically spaced saved times."""
    index = np.unique(np.linspace(0, len(run.t) - 1, rows).round().astype(int))
    header = f"{'t':>10} {'a':>14} {'b':>14} {'L':>12} {'L*b^2':>10} {'sup|e|*b':>9} {'calib.resid':>12}"
    lines = [header, "-" * len(header)]
    for i in index:
        lines.append(f"{run.t[i]:10.3e} {run.a[i]:14.6f} {run.b[i]:14.6f} {run.loss[i]:12.5e} "
                     f"{run.loss[i] * run.b[i] ** 2:10.6f} {run.sup_error_interior[i] * run.b[i]:9.6f} "
                     f"{run.calibration_residual[i]:12.4e}")
    return "\n".join(lines)


def write_flow_outputs(run: FlowRun, out_dir: str | Path, *, provenance: dict, plots: bool = True,
                       worker=None) -> list[Path]:
    """Write flow.csv, flow.json and (``plots``, the default) the PNG plots of :func:`draw_flow_plots` into
    ``out_dir`` (drawn by ``worker``, a :class:`~stumpcheck.numerics.flow.plot_worker.PlotWorker`, when given);
    return the paths."""
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    paths = [run.to_csv(out / "flow.csv")]
    json_path = out / "flow.json"
    payload = finite_json(dict(run.to_dict(), provenance=provenance))
    json_path.write_text(json.dumps(payload, indent=1) + "\n", encoding="utf-8")
    paths.append(json_path)
    if plots:
        paths += draw_flow_plots(run, out) if worker is None else worker.draw(run, out)
    return paths


def draw_flow_plots(run: FlowRun, out_dir: str | Path) -> list[Path]:
    """One PNG per panel of :func:`plot_flow` as it draws a single panel (``scale.png``, …) in ``out_dir``."""
    out = Path(out_dir)
    return [save_figure(plot_flow(run, panels=(name,)), out / f"{name}.png", tight=False) for name in FLOW_PANELS]


def plot_flow(run_or_solution, *, panels=None):
    """A matplotlib figure of a population flow: one panel for each name of ``panels`` (default: all that apply).

    ``run_or_solution``: a :class:`~stumpcheck.numerics.flow.run.FlowRun` or a
    :class:`~stumpcheck.numerics.flow.integrate.FlowSolution` (float64 arrays over the saved times t > 0).
    Panels (:data:`FLOW_PANELS`): ``scale``, b(t) against the derived law (C t)^{1/4} (log-log);
    ``calibration_residual``, ``|a − (b + 2 log b − ρ₁/b)|`` against ρ₁/b and log b/b²; ``normalised_loss``,
    L·b² against the derived leading loss·b² (→ ½); ``interior_error`` (a FlowRun only), the sup over interior
    θ of ``|e(θ)|`` with its fitted slope. One panel is a 6 × 4.2 in figure with fixed margins
    (:data:`SINGLE_PANEL_MARGINS`), more a grid of two columns laid out by
    :meth:`~matplotlib.figure.Figure.tight_layout`.
    matplotlib's backend: :func:`stumpcheck.numerics.plotting.pyplot`.

        >>> from stumpcheck.api import integrate_flow, plot_flow
        >>> figure = plot_flow(integrate_flow(10.0, 10.0, 100.0))
        >>> [ax.get_ylabel() for ax in figure.axes]
        ['b', 'residual', 'L·b²']
    """
    is_run = isinstance(run_or_solution, FlowRun)
    if not (is_run or all(hasattr(run_or_solution, k) for k in ("t", "a", "b", "loss", "status"))):
        raise InputError(f"plot_flow needs a FlowRun or a FlowSolution, got {type(run_or_solution).__name__}")
    available = FLOW_PANELS if is_run else FLOW_PANELS[:3]
    panels = available if panels is None else tuple(panels)
    unknown = [p for p in panels if p not in available]
    if unknown or not panels:
        raise InputError(f"panels must be some of {', '.join(available)} for a {type(run_or_solution).__name__}, "
                         f"got {list(panels)}")
    plt = pyplot()
    columns = min(2, len(panels))
    rows = -(-len(panels) // columns)
    # titles at a fixed height: matplotlib otherwise measures every axis' tick labels at each draw to place them
    with plt.rc_context({"axes.titley": 1.0}):
        fig, axes = plt.subplots(rows, columns, figsize=(6 * columns, 4.2 * rows), squeeze=False)
    for ax, name in zip(axes.ravel(), panels):
        _PANELS[name](ax, run_or_solution)
        light_log_axes(ax)
    for ax in axes.ravel()[len(panels):]:
        fig.delaxes(ax)
    if len(panels) > 1:
        fig.tight_layout()
    else:  # the files of write_flow_outputs: no layout pass
        fig.subplots_adjust(**SINGLE_PANEL_MARGINS)
    return fig


def _positive(run):
    positive = run.t > 0
    return run.t[positive], positive


def _scale_panel(ax, run) -> None:
    from stumpcheck.numerics.generated import asymptotics_numpy as derived

    t, positive = _positive(run)
    ax.loglog(t, run.b[positive], label="b(t), computed")
    ax.loglog(t, (derived.FLOW_CONSTANT_C * t) ** 0.25, "--", label=f"(C t)^(1/4), derived C = {derived.FLOW_CONSTANT_C:g}")
    fit = getattr(run, "fits", {}).get("scale_exponent")
    if fit:
        ax.set_title(f"attention scale: fitted slope {fit['value']:.5f} on t ∈ [{fit['t_range'][0]:.1e}, {fit['t_range'][1]:.1e}]",
                     fontsize=9)
    ax.set_xlabel("t")
    ax.set_ylabel("b")
    ax.legend()


def _calibration_panel(ax, run) -> None:
    from stumpcheck.numerics.generated import asymptotics_numpy as derived

    t, positive = _positive(run)
    bp = run.b[positive]
    residual = getattr(run, "calibration_residual", None)
    residual = derived.calibration_residual(run.a, run.b) if residual is None else residual
    ax.loglog(t, np.abs(residual[positive]), label="|a − (b + 2 log b − ρ₁/b)|")
    ax.loglog(t, derived.RHO1 / bp, ":", label="ρ₁/b (size of the last term kept)")
    ax.loglog(t, np.log(bp) / bp**2, "--", label="log b / b² (order of the first term dropped)")
    ax.set_xlabel("t")
    ax.set_ylabel("residual")
    ax.legend(fontsize=8)
    ax.set_title("distance from the derived calibration relation", fontsize=9)


def _loss_panel(ax, run) -> None:
    from stumpcheck.numerics.generated import asymptotics_numpy as derived

    t, positive = _positive(run)
    ax.semilogx(t, run.loss[positive] * run.b[positive] ** 2, label="L·b², computed")
    ax.semilogx(t, derived.leading_loss(run.b[positive]) * run.b[positive] ** 2, "--", label="derived leading loss · b²")
    ax.set_xlabel("t")
    ax.set_ylabel("L·b²")
    ax.legend()
    ax.set_title("normalised population loss (→ 1/2)", fontsize=9)


def _interior_panel(ax, run) -> None:
    t, positive = _positive(run)
    ax.loglog(t, run.sup_error_interior[positive], label=f"sup |e(θ)|, θ ∈ [{run.settings['delta']}, {1 - run.settings['delta']}]")
    fit = run.fits.get("error_exponent")
    if fit:
        lo, hi = fit["t_range"]
        tt = np.array([lo, hi])
        anchor = np.interp(hi, t, run.sup_error_interior[positive])
        ax.loglog(tt, anchor * (tt / hi) ** fit["value"], "--", label=f"fitted slope {fit['value']:.5f}")
    ax.set_xlabel("t")
    ax.set_ylabel("sup interior |e|")
    ax.legend()


_PANELS = {"scale": _scale_panel, "calibration_residual": _calibration_panel, "normalised_loss": _loss_panel,
           "interior_error": _interior_panel}
