"""Files and plots for a population-flow run: flow.csv, flow.json, PNG figures."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import numpy as np

from stumpcheck.numerics.json_output import finite_json
from stumpcheck.numerics.flow.run import FlowRun

__all__ = ["write_flow_outputs", "flow_table"]

_COLUMNS = ("t", "a", "b", "loss", "grad_a", "grad_b", "sup_error_interior", "calibration_residual")


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


def write_flow_outputs(run: FlowRun, out_dir: str | Path, *, provenance: dict) -> list[Path]:
    """Write flow.csv, flow.json and the PNG plots into ``out_dir``; return the paths."""
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    paths = []
    csv_path = out / "flow.csv"
    with csv_path.open("w", newline="", encoding="utf-8") as handle:
        writer = csv.writer(handle)
        writer.writerow(_COLUMNS)
        for row in zip(*(getattr(run, c) for c in _COLUMNS)):
            writer.writerow([repr(float(v)) for v in row])
    paths.append(csv_path)
    payload = {c: getattr(run, c) for c in _COLUMNS}
    payload.update(fits=run.fits, status=run.status.name, status_message=run.status.message,
                   a_posteriori_rel_error_b=run.a_posteriori_rel_error_b, settings=run.settings, stats=run.stats,
                   evidence=("sampled (float64 trajectory; sup over θ by grid + refinement)"
                             if run.settings.get("dps") is None else
                             f"sampled ({run.settings['dps']}-digit mpmath trajectory, float64 diagnostics; "
                             "sup over θ by grid + refinement)"),
                   provenance=provenance)
    json_path = out / "flow.json"
    json_path.write_text(json.dumps(finite_json(payload), indent=1) + "\n", encoding="utf-8")
    paths.append(json_path)
    paths += _plots(run, out)
    return paths


def _plots(run: FlowRun, out: Path) -> list[Path]:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from stumpcheck.numerics.generated import asymptotics_numpy as derived

    positive = run.t > 0
    t = run.t[positive]
    paths = []

    fig, ax = plt.subplots(figsize=(6, 4.2))
    ax.loglog(t, run.b[positive], label="b(t), computed")
    ax.loglog(t, (derived.FLOW_CONSTANT_C * t) ** 0.25, "--", label=f"(C t)^(1/4), derived C = {derived.FLOW_CONSTANT_C:g}")
    fit = run.fits.get("scale_exponent")
    if fit:
        ax.set_title(f"attention scale: fitted slope {fit['value']:.5f} on t ∈ [{fit['t_range'][0]:.1e}, {fit['t_range'][1]:.1e}]",
                     fontsize=9)
    ax.set_xlabel("t")
    ax.set_ylabel("b")
    ax.legend()
    paths.append(_save(fig, out / "scale.png"))

    fig, ax = plt.subplots(figsize=(6, 4.2))
    bp = run.b[positive]
    ax.loglog(t, np.abs(run.calibration_residual[positive]), label="|a − (b + 2 log b − ρ₁/b)|")
    ax.loglog(t, derived.RHO1 / bp, ":", label="ρ₁/b (size of the last term kept)")
    ax.loglog(t, np.log(bp) / bp**2, "--", label="log b / b² (order of the first term dropped)")
    ax.set_xlabel("t")
    ax.set_ylabel("residual")
    ax.legend(fontsize=8)
    ax.set_title("distance from the derived calibration relation", fontsize=9)
    paths.append(_save(fig, out / "calibration_residual.png"))

    fig, ax = plt.subplots(figsize=(6, 4.2))
    ax.semilogx(t, run.loss[positive] * run.b[positive] ** 2, label="L·b², computed")
    ax.semilogx(t, derived.leading_loss(run.b[positive]) * run.b[positive] ** 2, "--", label="derived leading loss · b²")
    ax.set_xlabel("t")
    ax.set_ylabel("L·b²")
    ax.legend()
    ax.set_title("normalised population loss (→ 1/2)", fontsize=9)
    paths.append(_save(fig, out / "normalised_loss.png"))

    fig, ax = plt.subplots(figsize=(6, 4.2))
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
    paths.append(_save(fig, out / "interior_error.png"))
    return paths


def _save(fig, path: Path) -> Path:
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    import matplotlib.pyplot as plt

    plt.close(fig)
    return path
