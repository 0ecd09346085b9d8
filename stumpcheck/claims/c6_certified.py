"""C6's certified per-corpus figures: the trainer's run proved step by step, and the exact risk of its frozen head.

For a cell of the large-resolution row (:func:`stumpcheck.claims.c6_protocol.c6_cell`), :func:`certify_cell`

1. encloses the exact-arithmetic GD of the cell's own run — the trainer's doubles a₀, b₀ = (m ∧ n)/4, η (the
   population-Hessian step the cell trained with), its stopping rule b ≥ (m ∧ n)/2 or ``step_cap`` steps — by
   :func:`stumpcheck.numerics.corpus.certified_run.certify_training` (docs/training_certificate.md), and builds
   its certificate (format ``stumpcheck-training-certificate/1``, with the float64 run's every iterate compared
   with its set);
2. at the frozen head encloses, for each (θ, N) of the cell's grid, the bias and MSE of θ̂_N − θ on fresh
   contexts and the bracket |bias| ≤ E|θ̂_N − θ| ≤ √MSE
   (:func:`stumpcheck.numerics.certified.enclosures.fresh_risk.fresh_context_risk`, one head, ``dps`` = 15).
   The head is the certified final box: its bracket holds for every (a, b) in it, so for the exact run's
   frozen head, and for the float64-trained (a, b) whenever that lies in the box (checked, exactly, on the
   doubles). When it does not, the float64 (a, b) gets brackets of its own;
3. reports, beside each bracket, the cell's Monte Carlo mean and whether it, and its 95 % interval, meet the
   bracket (a control: the Monte Carlo error of 128 contexts is far wider than a bracket at large N, so the
   mean alone often falls outside; the interval should meet the bracket about 95 % of the time or more).

Evidence: each bracket is *certified* (the training certificate, under the fast layer's stated arithmetic
assumptions, and Arb's enclosures of the risk). A fit across corpora stays statistical: the corpora are random
draws, and the rate is a statement about their law.

:func:`training_coverage` is C6's coverage answer per size from these certificates: proved (steps, final box)
or not, and why. :func:`save_training_certificates` writes each cell's certificate and corpus for
``stumpcheck recheck FILE --corpus C``.
"""

from __future__ import annotations

import time
from decimal import Decimal

__all__ = ["CERTIFIED_DPS", "CERTIFICATE_FOLDER", "certificate_stem", "chain_skipped", "certified_summary", "certified_table",
           "certified_text", "certify_cell", "save_training_certificates",
           "training_coverage", "training_coverage_text"]

#: digits the risk enclosures aim at (the smallest fresh_context_risk takes; a box of width ~10⁻¹² sets the
#: width reached, far below the bracket's own gap |bias| .. √MSE)
CERTIFIED_DPS = 15
#: folder of verify's --out that holds the cells' training certificates and corpora
CERTIFICATE_FOLDER = "c6_training"


def _cpu() -> float:
    return time.process_time()


def _inside(value: float, low: str, high: str) -> bool:
    return Decimal(low) <= Decimal(repr(float(value))) <= Decimal(high)


def _risk_rows(a, b, cell: dict, fresh: list) -> list:
    """One row per (θ, N): the certified bias, MSE and bracket at the head (a, b) (points or (lo, hi) boxes),
    with the cell's Monte Carlo figure beside it."""
    from stumpcheck.numerics.certified.enclosures.fresh_risk import fresh_context_risk

    mc = {(float(r["theta"]), int(r["N"])): r for r in fresh}
    rows = []
    for theta in cell["thetas"]:
        for N in cell["N"]:
            risk = fresh_context_risk(a, b, float(theta), int(N), estimator="one-head", dps=CERTIFIED_DPS)
            bracket = risk.bounds("mean_abs_error")
            row = {"theta": float(theta), "N": int(N), "bias": risk.bounds("bias"), "mse": risk.bounds("mse"),
                   "bracket": bracket}
            control = mc.get((float(theta), int(N)))
            if control is not None:
                row.update(mc_mean=control["mean_abs_error"], mc_ci95=[control["ci_low"], control["ci_high"]],
                           mc_in_bracket=_inside(control["mean_abs_error"], *bracket),
                           mc_ci_meets_bracket=bool(Decimal(repr(float(control["ci_low"]))) <= Decimal(bracket[1])
                                                    and Decimal(repr(float(control["ci_high"]))) >= Decimal(bracket[0])))
            rows.append(row)
    return rows


def chain_skipped(cell: dict, out: dict) -> str | None:
    """Why the cell's chain is not run (its cost, steps × m·n tokens, above the mode's ``chain_token_steps``),
    or None. The risk brackets are computed either way: at the float64 head they need no chain."""
    cap = cell.get("chain_token_steps")
    cost = int(out["steps"]) * int(out["m"]) * int(out["n"])
    if cap is None or cost <= cap:
        return None
    return (f"not certified in this mode: its chain costs {out['steps']} steps x {out['m']}·{out['n']} tokens = "
            f"{cost:.3g} > {cap:.3g} (the mode's chain_token_steps); `stumpcheck train --m {out['m']} --n {out['n']} "
            f"--seed {out['seed']} --init large-resolution --steps {cell['step_cap']} --certify --out DIR` proves it")


def certify_cell(corpus, cell: dict, out: dict, run) -> dict:
    """The certified figures of one large-resolution cell (module docstring).

    ``corpus`` the cell's corpus, ``cell`` its parameters (thetas, N, step_cap, chain_token_steps), ``out`` its
    result so far (m, n, seed, a0, b0, b_target, eta, a, b, steps, fresh) and ``run`` the float64
    :class:`~stumpcheck.numerics.corpus.gd.TrainResult` recorded at every step. Returns ``{"proved", "steps",
    "stopped_because", "final_box", "float64_in_box", "same_step", "risk", "risk_float64", "risk_head",
    "seconds_cpu", "certificate"}`` where ``certificate`` is the training certificate's document (written by
    :func:`save_training_certificates`). When :func:`chain_skipped` gives a reason, there is no chain
    (``proved`` False, ``why`` the reason, no box, no certificate) and the brackets are at the float64 head."""
    skipped = chain_skipped(cell, out)
    result = {"proved": False, "steps": None, "stopped_because": None, "final_box": None, "final_box_float": None,
              "relative_width_b": None, "float64_in_box": None, "same_step": None, "float64_iterates_inside": None,
              "risk": None, "risk_float64": None, "risk_head": None, "certificate": None}
    chain_cpu = 0.0
    if skipped is None:
        chain_cpu = _chain(corpus, cell, out, run, result)
    else:
        result["why"] = skipped
    started = _cpu()
    inside = bool(result["float64_in_box"])
    if result["proved"]:
        box = result["final_box_float"]
        result["risk"] = _risk_rows(tuple(box["a"]), tuple(box["b"]), cell, out["fresh"])
        result["risk_head"] = ("the certified final box (it holds the float64-trained (a, b))" if inside else
                               "the certified final box (the float64-trained (a, b) has its own, risk_float64)")
    if not (result["proved"] and inside):  # the float64 head is not covered by the box's brackets: its own
        result["risk_float64"] = _risk_rows(out["a"], out["b"], cell, out["fresh"])
        if result["risk"] is None:
            result["risk_head"] = "the float64-trained (a, b) (no proved chain)"
            result["risk"] = result["risk_float64"]
    result["seconds_cpu"] = {"chain": round(chain_cpu, 2), "risk": round(_cpu() - started, 2)}
    return result


def _chain(corpus, cell: dict, out: dict, run, result: dict) -> float:
    """Run the cell's certified chain, fill ``result`` with what it proves; its CPU seconds."""
    from stumpcheck.numerics.corpus.certified_run import certify_training
    from stumpcheck.numerics.corpus.certified_run.certificate import double_text, training_certificate
    from stumpcheck.numerics.corpus.checkpoint import corpus_fingerprint
    from stumpcheck.numerics.provenance import provenance

    started = _cpu()
    chain = certify_training(corpus.x, corpus.theta, a0=out["a0"], b0=out["b0"], eta=out["eta"],
                             b_target=out["b_target"], max_steps=int(cell["step_cap"]))
    chain_cpu = _cpu() - started
    info = {"sha256": corpus_fingerprint(corpus.x, corpus.theta), "m": corpus.m, "n": corpus.n, "seed": corpus.seed,
            "file": f"{certificate_stem(out)}.npz"}
    float_run = {"a": run.trajectory["a"], "b": run.trajectory["b"], "steps": run.steps,
                 "stopped_because": run.stopped_because, "method": run.settings.get("method", "pruned")}
    document = training_certificate(chain, info, float_run=float_run, eta_rule=run.eta_rule,
                                    seconds={"cpu": round(chain_cpu, 2)}, versions=provenance())
    box = chain.final_box
    result.update(proved=bool(chain.proved), steps=chain.steps, stopped_because=chain.stopped_because,
                  final_box={k: [double_text(v[0]), double_text(v[1])] for k, v in box.items()},
                  final_box_float={k: [float(v[0]), float(v[1])] for k, v in box.items()},
                  relative_width_b=chain.relative_width_b(),
                  float64_in_box=bool(box["a"][0] <= out["a"] <= box["a"][1] and box["b"][0] <= out["b"] <= box["b"][1]),
                  same_step=chain.steps == out["steps"],
                  float64_iterates_inside=[document["float64_run"]["inside_hull"],
                                           document["float64_run"]["steps_compared"]],
                  certificate=document)
    if not chain.proved:
        result["why"] = f"the chain ended unproved at step {chain.steps}: {chain.stopped_because}"
    return chain_cpu


def certificate_stem(cell: dict) -> str:
    """File stem of a cell's certificate and corpus: m64_n64_seed0."""
    return f"m{cell['m']}_n{cell['n']}_seed{cell['seed']}"


def save_training_certificates(results: list, out_dir) -> list:
    """Move each certified cell's certificate document out of its result into
    ``out_dir``/c6_training/<stem>.training_certificate.json (and the corpus into <stem>.npz); the cell's
    ``certified.certificate`` becomes the file's path relative to ``out_dir`` (or None without ``out_dir``).
    Returns the paths written."""
    from pathlib import Path

    from stumpcheck.numerics.certified.certificates.lemma_certificate import write_certificate
    from stumpcheck.numerics.corpus.corpora import make_corpus, save_corpus

    written = []
    for r in results:
        cert = r.get("certified")
        if not cert or not isinstance(cert.get("certificate"), dict):
            continue
        document = cert["certificate"]
        if out_dir is None:
            cert["certificate"] = None
            continue
        folder = Path(out_dir) / CERTIFICATE_FOLDER
        folder.mkdir(parents=True, exist_ok=True)
        stem = certificate_stem(r)
        save_corpus(make_corpus(int(r["m"]), int(r["n"]), seed=int(r["seed"])), folder / f"{stem}.npz")
        path = write_certificate(document, folder / f"{stem}.training_certificate.json", one_per_line=("chain",))
        cert["certificate"] = f"{CERTIFICATE_FOLDER}/{path.name}"
        cert["corpus_file"] = f"{CERTIFICATE_FOLDER}/{stem}.npz"
        written.append(cert["certificate"])
    return written


def training_coverage(cells: list) -> dict:
    """Per size of the large-resolution ``cells``: each corpus's run proved by its training certificate or not."""
    sizes: dict = {}
    for r in sorted(cells, key=lambda c: (c["m_min_n"], c["seed"])):
        cert = r.get("certified")
        if cert is None:
            entry = {"seed": r["seed"], "proved": False, "why": "not certified in this mode"}
        else:
            entry = {"seed": r["seed"], "proved": cert["proved"], "steps": cert["steps"],
                     "stopped_because": cert["stopped_because"], "final_box": cert["final_box"],
                     "float64_in_box": cert["float64_in_box"], "same_step": cert["same_step"],
                     "certificate": cert.get("certificate")}
            if not cert["proved"]:
                entry["why"] = cert.get("why") or f"the chain ended unproved at step {cert['steps']}"
        sizes.setdefault(int(r["m_min_n"]), []).append(entry)
    rows = [{"m_min_n": s, "proved": all(e["proved"] for e in entries), "corpora": entries}
            for s, entries in sorted(sizes.items())]
    return {"rows": rows, "evidence": "certified (training certificates, fast float64 interval layer)",
            "rule": "proved iff the exact-arithmetic GD from the trainer's start with its step is enclosed step by "
                    "step until its stopping rule holds for the whole set (docs/training_certificate.md)"}


def training_coverage_text(summary: dict) -> str:
    """One clause for C6's figure: per size, each corpus's run proved (steps, final b) or not."""
    parts = []
    for row in summary["rows"]:
        runs = []
        for e in row["corpora"]:
            if e["proved"]:
                lo, hi = e["final_box"]["b"]
                runs.append(f"seed {e['seed']}: {e['steps']} steps ({e['stopped_because']}), b in "
                            f"[{_short(lo, 'down')}, {_short(hi, 'up')}]")
            else:
                runs.append(f"seed {e['seed']}: not proved ({e.get('why', '')})")
        parts.append(f"{row['m_min_n']}: {'proved' if row['proved'] else 'not proved'} ({'; '.join(runs)})")
    return "trained run proved by its training certificate (certified): " + ", ".join(parts)


def _short(text: str, direction: str, digits: int = 12) -> str:
    """An exact decimal rounded outward to ``digits`` significant digits."""
    from decimal import ROUND_CEILING, ROUND_FLOOR, localcontext

    with localcontext() as ctx:
        ctx.prec = digits
        ctx.rounding = ROUND_FLOOR if direction == "down" else ROUND_CEILING
        return str(+Decimal(text))


def certified_table(cells: list, *, theta: float = 0.5, Ns=(16, 1024)) -> list:
    """Per cell with brackets: m ∧ n, seed, whether its run is proved, steps, the certified final b (outward, 12
    digits; None without a proved chain, then ``float64_b`` is the head's), the bracket at ``theta`` and each of
    ``Ns`` with the Monte Carlo mean beside it, and the CPU seconds of the chain and of the risks."""
    table = []
    for r in sorted(cells, key=lambda c: (c["m_min_n"], c["seed"])):
        cert = r.get("certified")
        if not cert or not cert.get("risk"):
            continue
        at = {int(row["N"]): row for row in cert["risk"] if row["theta"] == theta}
        final_b = None
        if cert["final_box"] is not None:
            lo, hi = cert["final_box"]["b"]
            final_b = [_short(lo, "down"), _short(hi, "up")]
        table.append({"m_min_n": r["m_min_n"], "seed": r["seed"], "proved": cert["proved"],
                      "steps": cert["steps"] if cert["proved"] else r.get("steps"),
                      "stopped_because": cert["stopped_because"] if cert["proved"] else r.get("stopped_because"),
                      "final_b": final_b, "float64_b": r.get("b"),
                      "brackets": {str(N): {"bracket": at[N]["bracket"], "mc_mean": at[N].get("mc_mean")}
                                   for N in Ns if N in at},
                      "seconds_cpu": cert["seconds_cpu"]})
    return table


def _end_fits(cells: list, mode: dict, seed: int) -> dict:
    """Power-mean fits of the row on the brackets' midpoints and on each end (the lower end only when every
    |bias| is > 0: a zero has no logarithm)."""
    from stumpcheck.claims.c6_fit import row_fit

    fits = {"mid": row_fit(cells, bootstrap=mode["bootstrap"], seed=seed, value="certified-mid"),
            "high": row_fit(cells, bootstrap=mode["bootstrap"], seed=seed, value="certified-high"), "low": None}
    if all(float(row["bracket"][0]) > 0 for r in cells for row in r["certified"]["risk"]):
        fits["low"] = row_fit(cells, bootstrap=mode["bootstrap"], seed=seed, value="certified-low")
    return fits


def certified_summary(cells: list, mode: dict, seed: int, monte_carlo_fit: dict | None = None) -> dict:
    """What C6 reports from the certified cells of its large-resolution row ``cells``: which cells carry
    brackets, the fits on them when every cell does (``fit_value`` "certified-mid": the verdict fits the
    midpoints; else "monte-carlo"), the Monte Carlo control's agreement, the table of :func:`certified_table`
    and the row's ``evidence_parts``."""
    bracketed = [r for r in cells if r.get("certified") and r["certified"].get("risk")]
    every = bool(cells) and len(bracketed) == len(cells)
    rows = [row for r in bracketed for row in r["certified"]["risk"]]
    controlled = [row for row in rows if "mc_in_bracket" in row]
    summary = {"cells": len(cells), "certified_cells": len(bracketed),
               "proved_runs": sum(bool(r["certified"]["proved"]) for r in bracketed),
               "uncertified": [[r["m_min_n"], r["seed"]] for r in cells if r not in bracketed],
               "fit_value": "certified-mid" if every else "monte-carlo", "dps": CERTIFIED_DPS,
               "monte_carlo_control": {"points": len(controlled),
                                       "mean_in_bracket": sum(row["mc_in_bracket"] for row in controlled),
                                       "ci95_meets_bracket": sum(row["mc_ci_meets_bracket"] for row in controlled)},
               "table": certified_table(bracketed), "fits": _end_fits(cells, mode, seed) if every else {},
               "monte_carlo_fit": None if monte_carlo_fit is None else monte_carlo_fit["power_mean"],
               "seconds_cpu": {"chains": round(sum(r["certified"]["seconds_cpu"]["chain"] for r in bracketed), 2),
                               "risks": round(sum(r["certified"]["seconds_cpu"]["risk"] for r in bracketed), 2)}}
    part = "per-corpus risk brackets of the large-resolution row (exact fresh-context risk at each frozen head)"
    fit = "rate fit across corpora (p, q, k and their bootstrap intervals)"
    proved, unproved = summary["proved_runs"], len(bracketed) - summary["proved_runs"]
    heads = ("every run proved by its training certificate, brackets over its certified final box" if not unproved
             else f"{proved} of {len(bracketed)} runs proved by their training certificate, brackets over the "
                  f"certified final box; {unproved} at the float64-trained head, its run not proved")
    if every:
        summary["evidence_parts"] = {
            part: f"certified ({heads})",
            fit: "sampled (statistical: the corpora are random draws; fitted on the brackets' midpoints, bootstrap "
                 "over corpora)",
            "mechanism row": "sampled (Monte Carlo fresh contexts)"}
    else:
        summary["evidence_parts"] = {
            part: f"certified for {len(bracketed)} of {len(cells)} cells",
            fit: "sampled (Monte Carlo means: not every cell carries a certified bracket)",
            "mechanism row": "sampled (Monte Carlo fresh contexts)"}
    return summary


def _round_bracket(bracket, digits: int = 4) -> str:
    return f"[{_short(bracket[0], 'down', digits)}, {_short(bracket[1], 'up', digits)}]"


def certified_text(summary: dict) -> str:
    """Clauses for C6's figure: the certified brackets by size, the fits on them and the Monte Carlo control."""
    control = summary["monte_carlo_control"]
    head = (f"certified per corpus (exact risk |bias| <= E|err| <= sqrt(MSE) at the frozen head of "
            f"{summary['certified_cells']} of {summary['cells']} large-resolution cells; their runs proved by a "
            f"training certificate: {summary['proved_runs']})")
    table = summary["table"]
    if table:
        by_size: dict = {}
        for t in table:
            brackets = ", ".join(f"N={N}: {_round_bracket(v['bracket'])}"
                                 + ("" if v["mc_mean"] is None else f" (MC {v['mc_mean']:.4g})")
                                 for N, v in t["brackets"].items())
            by_size.setdefault(t["m_min_n"], []).append(f"seed {t['seed']}: {brackets}")
        head += "; brackets at θ = 0.5: " + "; ".join(f"{s}: {' / '.join(v)}" for s, v in by_size.items())
    fits = summary["fits"]
    if fits:
        def pq(fit):
            f = fit["power_mean"]
            return f"p = {f['p']:.3f} [{f['p_ci95'][0]:.3f}, {f['p_ci95'][1]:.3f}], q = {f['q']:.3f}"
        head += (f"; fit on the lower ends |bias|: {pq(fits['low']) if fits.get('low') else 'none (a zero end)'}"
                 f"; on the upper ends sqrt(MSE): {pq(fits['high'])}; the verdict fits the midpoints, and its "
                 "intervals are statistical (random corpora, bootstrap over corpora)")
    mc = summary["monte_carlo_fit"]
    if mc is not None and summary["fit_value"] != "monte-carlo":
        head += f"; Monte Carlo control fit p = {mc['p']:.3f}, q = {mc['q']:.3f}"
    head += (f"; Monte Carlo means inside their brackets {control['mean_in_bracket']} of {control['points']}, 95% "
             f"CIs meeting them {control['ci95_meets_bracket']} of {control['points']}")
    if summary["uncertified"]:
        head += f"; not certified (m∧n, seed): {summary['uncertified']}"
    return head
