"""C5's report text and plots (from the figures :func:`stumpcheck.claims.c5.check_c5` computed).

* :func:`explanation`: Markdown for report.md: the criterion, why the full-norm ratio is not the
  progress criterion (the deep layer, measured), what sets b* (tasks without a positive point,
  measured on the same corpora), the controls and the GD trajectory figures. Every number in it
  comes from the details passed in.
* :func:`c5_figures` (the figures) and :func:`plot_c5` (their files): ``c5_gradient_error.png`` (rms over
  seeds of along, across and R against b, one panel per size), ``c5_certified_scale.png`` (b* against
  m ∧ n, log-log, with the fitted slope) and ``c5_trajectory.png`` (rate and margin along the GD trajectory).
"""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np

__all__ = ["explanation", "plot_c5", "c5_figures", "no_positive_split",
           "PLOT_NAME", "SCALE_PLOT_NAME", "TRAJECTORY_PLOT_NAME"]

PLOT_NAME = "c5_gradient_error.png"
SCALE_PLOT_NAME = "c5_certified_scale.png"
TRAJECTORY_PLOT_NAME = "c5_trajectory.png"


def no_positive_split(row: dict, k: int) -> dict:
    """Mean along at rung k over the corpora with and without a task whose n points all lie below θ."""
    along = np.asarray(row["along"])[:, k]
    counts = np.asarray(row["no_positive_tasks"])
    with_, without = along[counts > 0], along[counts == 0]
    return {"b": row["b"][k], "corpora_with": int(with_.size), "corpora_without": int(without.size),
            "mean_along_with": float(with_.mean()) if with_.size else None,
            "mean_along_without": float(without.mean()) if without.size else None,
            "mean_no_positive_tasks": float(counts.mean())}


def _fmt(value, spec: str = ".3g") -> str:
    return "—" if value is None else format(value, spec)


def explanation(details: dict) -> str:
    """The C5 section text for report.md (Markdown), built from ``details`` of check_c5."""
    rows = details["rows"]
    square = [r for r in rows if r["m"] == r["n"]]
    verdict = details["verdict"]
    certified = details.get("certified_verdict")
    lines = []
    if certified is not None:
        lines += [
            "**Verdict (certified).** For each corpus in the table, `stumpcheck interval`'s "
            "prover proves that GD from S = {8 ≤ b ≤ b₂, a in the band around the corpus nullcline} stays in S and "
            f"raises b until b ≥ b₂. PASS iff every corpus has b₂ ≥ {certified['fraction']}·(m ∧ n), the scale at "
            "which the large-resolution protocol starts GD (criterion fixed in docs/claims.md before it was run). "
            f"Measured: least b₂/(m ∧ n) = {_fmt(certified['least_ratio'], '.3g')} over {certified['corpora']} "
            "corpora" + ("" if certified["passed"] else ", missed by " + ", ".join(
                f"m = n = {m['m']} (seed {m['corpus_seed']}, b₂ = {_fmt(m['b2'], 'g')})" for m in certified["misses"]))
            + ". What stays sampled, as controls: b* below and the slopes (they summarise random corpora).", "",
            "| m | n | corpus seed | b₂ | b₂/(m ∧ n) | capped | why the proof stopped |", "|---|---|---|---|---|---|---|"]
        lines += [f"| {r['m']} | {r['n']} | {r['corpus_seed']} | {_fmt(r['b2'], 'g')} | "
                  f"{_fmt(r.get('b2_over_m_min_n'), '.3g')} | {'yes' if r.get('capped') else 'no'} | {r.get('end')} |"
                  for r in details["certified_intervals"]["rows"]]
        lines.append("")
    lines += [
        "**Control (sampled).** At b_k = 8·2^k on the calibration relation a = a_cal(b), for each corpus, "
        "along = (∇L̂ − ∇L)·u/‖∇L‖ with u = −∇L/‖∇L‖ (signed; > 0: less progress than the population). "
        "b* = b_k* with k* the largest k such that the rms over the seeds of along is ≤ ½ at every k' ≤ k: "
        "up to b*, a step along −∇L̂ makes at least half the population's progress. "
        f"The control holds iff b* is non-decreasing in m ∧ n and its log-log slope is ≥ {verdict['slope_min']:g} "
        f"(measured: slope {_fmt(verdict['slope'], '.2f')}, "
        f"{'non-decreasing' if verdict['monotone'] else 'not non-decreasing'}).",
        "",
        "| m | n | b* | k* | along rms at b* | across rms at b* | R rms at b* | full-norm k* (control) | "
        "no-positive tasks per corpus |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for r in rows:
        k = r["certified_k"]
        at = (lambda key: _fmt(r[key][k]) if k >= 0 else "—")
        b_text = _fmt(r["certified_b"], "g") + (" (ladder top)" if r["ladder_top"] else "")
        lines.append(f"| {r['m']} | {r['n']} | {b_text} | {k} | {at('along_rms')} | {at('across_rms')} | "
                     f"{at('ratio_rms')} | {r['certified_k_full_norm']} | {np.mean(r['no_positive_tasks']):.2g} |")
    layer = details["deep_layer"]["rows"]
    lines += [
        "",
        "**Why the full-norm ratio R = ‖∇L̂ − ∇L‖/‖∇L‖ is not the progress criterion.** "
        f"The deep boundary layer {details['deep_layer']['width']} carries "
        + ", ".join(f"{100 * x['share_da']:.1f} %" for x in layer) + " of ∂L/∂a (and "
        + ", ".join(f"{100 * x['share_db']:.1f} %" for x in layer) + " of ∂L/∂b) at b = "
        + ", ".join(f"{x['b']:g}" for x in layer) + "; its contribution to ∇L points along "
        f"({layer[-1]['direction'][0]:.3f}, {layer[-1]['direction'][1]:.3f}), across u ≈ (1, 1)/√2, and its "
        "projection on u is " + ", ".join(f"{x['b_times_projection']:.2f}/b" for x in layer) + " of its size. "
        f"{details['deep_layer']['tasks_in_layer'].capitalize()}: once that is < 1 the corpus misses the layer, R ≈ 1 whatever "
        "m ∧ n, and R can certify b ~ (m ∧ n)^{1/3} at best (the control column). Missing it costs progress "
        "along u only its ~1/b share.",
        "",
    ]
    lines.append(
        "**What sets b*.** A task whose n points all lie below its θ has no positive point: the head attends to "
        "negatives, its error is ≈ −θ, ∂θ̂/∂a = 0 and ∂θ̂/∂b = −Var_α x ≈ −1/b², so against ‖∇L‖ ≈ 1/(√2 b³) it "
        "adds ≈ +b/m to along (a corpus has m/(n + 1) such tasks on average). On these corpora, at the first rung above b*: "
        + "; ".join(_no_positive_text(r) for r in square if r["certified_k"] + 1 <= r["k_max"]) + ". "
        "So rms along ≈ (b/m)·√(λ + λ²) with λ = m/(n + 1): b* ≈ n/2 when m ≫ n, ≈ √(mn)/2 when m ≪ n, "
        "≈ m/(2√2) at m = n (b* is the ladder rung below).")
    extra = details.get("extra_sizes") or {}
    if extra:
        lines.append("")
        lines.append("**Asymmetric sizes.** " + "; ".join(
            f"(m, n) = ({k.replace('x', ', ')}): b* = {_fmt(v['certified_b'], 'g')}"
            + (" (ladder top, a lower bound)" if v["ladder_top"] else "")
            + f" against b*(m = n = {k.split('x')[0]}) = {_fmt(v['symmetric_b_star_at_m'], 'g')} and "
              f"b*(m = n = {k.split('x')[1]}) = {_fmt(v['symmetric_b_star_at_n'], 'g')}: "
              + (f"set by {v['set_by']}" if v["set_by"] in ("m", "n") else v["set_by"])
            for k, v in extra.items()) + "." + _asymmetric_summary(extra))
    trajectory = details.get("trajectory")
    if trajectory:
        first, last = trajectory["points"][0], trajectory["points"][-1]
        lines += ["", (
            f"**Along a corpus's own GD trajectory** (m = n = {trajectory['m']}, seed {trajectory['seed']}, "
            f"b₀ = {trajectory['b0']:g}, a₀ = a_cal(b₀), η = {trajectory['eta']:.4g} = 1/λ_max of the population "
            f"Hessian, {trajectory['steps']} steps): the b-rate ratio −∂L̂/∂b(z_k) ÷ −∂L/∂b(a_cal(b_k), b_k) goes "
            f"from {first['rate']:.3f} at b = {first['b']:.4g} to {last['rate']:.3f} at b = {last['b']:.4g}; "
            f"a_k − a_cal(b_k) from {first['a_minus_a_cal']:+.3f} to {last['a_minus_a_cal']:+.3f}; the margin "
            f"a_k − θ_max·b_k (θ_max = {trajectory['theta_max']:.6f}) from {first['margin']:.3f} to "
            f"{last['margin']:.3f}; the largest relative change of L̂ between recorded steps is "
            f"{trajectory['largest_relative_loss_increase']:+.2e}"
            + (" (L̂ decreased at every recorded step)." if trajectory["largest_relative_loss_increase"] < 0 else "."))]
    return "\n".join(lines)


def _asymmetric_summary(extra: dict) -> str:
    """What the asymmetric sizes show, stated only where every such size shows it."""
    wide = [v for k, v in extra.items() if int(k.split("x")[0]) > int(k.split("x")[1])]
    tall = [v for k, v in extra.items() if int(k.split("x")[0]) < int(k.split("x")[1])]
    text = ""
    if wide and all(v["set_by"] == "n" for v in wide):
        text += (" Every size with m > n has b* set by n: a corpus has ≈ m/(n + 1) tasks without a positive point, "
                 "each adding ≈ b/m to along, so their sum ≈ b/n does not depend on m.")
    if tall and all(v["certified_b"] is not None and v["symmetric_b_star_at_m"] is not None
                    and v["certified_b"] >= v["symmetric_b_star_at_m"] for v in tall):
        text += (" Every size with m < n has b* at least b* of m = n = m ∧ n: tasks without a positive point are "
                 "rare there.")
    return text


def _no_positive_text(row: dict) -> str:
    split = no_positive_split(row, row["certified_k"] + 1)
    return (f"m = n = {row['m']}, b = {split['b']:g}: mean along {_fmt(split['mean_along_with'], '+.3f')} over "
            f"{_corpora(split['corpora_with'])} with such a task, {_fmt(split['mean_along_without'], '+.3f')} over "
            f"{_corpora(split['corpora_without'])} without")


def _corpora(count: int) -> str:
    return f"{count} corpus" if count == 1 else f"{count} corpora"


def plot_c5(rows: list, details: dict, out_dir, *, along_limit: float) -> list:
    """Write the three C5 plots (:func:`c5_figures`) into out_dir; returns their paths (see the module doc)."""
    from stumpcheck.numerics.plotting import save_figure

    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    return [save_figure(fig, out_dir / name, dpi=100, tight=False)
            for name, fig in c5_figures(rows, details, along_limit=along_limit).items()]


def c5_figures(rows: list, details: dict, *, along_limit: float) -> dict:
    """C5's figures by file name (:data:`PLOT_NAME`, :data:`SCALE_PLOT_NAME` and, with a GD trajectory in
    ``details``, :data:`TRAJECTORY_PLOT_NAME`), the progress criterion ``along_limit`` drawn as a dashed line."""
    from stumpcheck.numerics.plotting import pyplot

    plt = pyplot()
    figures = {}
    columns = min(4, len(rows))
    lines_of = math.ceil(len(rows) / columns)
    fig, axes = plt.subplots(lines_of, columns, figsize=(3.2 * columns, 2.8 * lines_of), squeeze=False,
                             sharey=True)
    for ax, row in zip(axes.ravel(), rows):
        ax.loglog(row["b"], row["along_rms"], "o-", ms=3, label="along (rms)")
        ax.loglog(row["b"], row["across_rms"], "s-", ms=3, label="across (rms)")
        ax.loglog(row["b"], row["ratio_rms"], "^-", ms=3, label="R (rms)")
        ax.axhline(along_limit, color="k", ls="--", lw=0.8)
        if row["certified_b"] is not None:
            ax.axvline(row["certified_b"], color="tab:green", lw=0.8)
        ax.set_title(f"m={row['m']}, n={row['n']}, b*={_fmt(row['certified_b'], 'g')}", fontsize=8)
        ax.set_xlabel("b (a = a_cal(b))", fontsize=7)
        ax.tick_params(labelsize=6)
    for ax in axes.ravel()[len(rows):]:
        ax.axis("off")
    axes[0, 0].set_ylabel("relative to ‖∇L‖", fontsize=7)
    axes[0, 0].legend(fontsize=6, loc="upper left")
    fig.suptitle(f"C5: corpus gradient error, {details['n_seeds']} seeds per size (float64, sampled)", fontsize=9)
    # fixed margins: tight_layout on log axes costs seconds, more than the C5 figures themselves
    fig.subplots_adjust(left=0.08, right=0.98, bottom=0.18 / lines_of, top=1 - 0.17 / lines_of, wspace=0.12,
                        hspace=0.45)
    figures[PLOT_NAME] = fig

    fig, ax = plt.subplots(figsize=(5.6, 4.0))
    square = [r for r in rows if r["m"] == r["n"] and r["certified_b"] is not None]
    sizes = np.array([r["m"] for r in square], dtype=float)
    ax.loglog(sizes, [r["certified_b"] for r in square], "o", label="m = n")
    slope = details["verdict"]["slope"]
    if slope is not None and sizes.size >= 2:
        logs = np.log(sizes)
        intercept = np.mean(np.log([r["certified_b"] for r in square])) - slope * logs.mean()
        ax.loglog(sizes, np.exp(intercept + slope * logs), "-", lw=0.8, label=f"fit: slope {slope:.2f}")
    for r in rows:
        if r["m"] != r["n"] and r["certified_b"] is not None:
            ax.loglog([r["m_min_n"]], [r["certified_b"]], "x", ms=7, label=f"m={r['m']}, n={r['n']}")
    ax.set_xlabel("m ∧ n")
    ax.set_ylabel("certified scale b*")
    ax.set_title("C5: b* (rms along ≤ ½ at every rung up to it)", fontsize=9)
    ax.legend(fontsize=7)
    fig.subplots_adjust(left=0.14, right=0.97, bottom=0.13, top=0.92)
    figures[SCALE_PLOT_NAME] = fig

    trajectory = details.get("trajectory")
    if trajectory and trajectory["points"]:
        points = trajectory["points"]
        fig, (left, right) = plt.subplots(1, 2, figsize=(8.0, 3.2))
        left.plot([p["b"] for p in points], [p["rate"] for p in points], "o-", ms=3)
        left.set_xlabel("b_k")
        left.set_ylabel("−∂L̂/∂b(z_k) ÷ −∂L/∂b(a_cal(b_k), b_k)", fontsize=7)
        right.plot([p["b"] for p in points], [p["margin"] for p in points], "o-", ms=3, label="a_k − θ_max b_k")
        right.plot([p["b"] for p in points], [p["a_minus_a_cal"] for p in points], "s-", ms=3,
                   label="a_k − a_cal(b_k)")
        right.set_xlabel("b_k")
        right.legend(fontsize=7)
        fig.suptitle(f"C5 along GD on one corpus (m = n = {trajectory['m']}, seed {trajectory['seed']}, "
                     f"η = {trajectory['eta']:.3g})", fontsize=9)
        fig.subplots_adjust(left=0.1, right=0.98, bottom=0.16, top=0.86, wspace=0.3)
        figures[TRAJECTORY_PLOT_NAME] = fig
    return figures
