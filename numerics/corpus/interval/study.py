"""The slope study: the certified b₂ of many corpora, proved on a scheduler, and its log-log slope against m ∧ n.

For each size s = m = n and corpus seed k (make_corpus(s, s, seed=k)), :func:`prove_b2` runs the interval
proof of docs/corpus_interval.md with the command's defaults (the start search of
:mod:`~stumpcheck.numerics.corpus.interval.start`, the default band) up to b_max = ``cap``·s, and records
b₂ = b_end (certified, under the fast layer's stated assumptions), whether it was capped (b₂ = b_max: then
only a lower bound of what the obligations could prove), the chosen start and step, and its CPU seconds.
:func:`slope_study` sends one corpus per job to a scheduler (:mod:`stumpcheck.numerics.scheduling`: local
processes or Dask; each job single-threaded) and fits log b₂ = log c + p·log s by least squares
(:func:`~stumpcheck.numerics.fits.fit_power_law`: the slope p and its 95 % interval, Student t over the
corpora; None with fewer than three b₂ or one size). The fit is a statistic over sampled corpora, not a certified figure; each b₂ it uses is. The
paper's rate is p = 1. A corpus whose proof proves nothing (b₂ = b_start) enters the fit at b_start (a
lower bound) and is counted.
"""

from __future__ import annotations

import time
from fractions import Fraction

__all__ = ["prove_b2", "slope_study", "study_table"]


def prove_b2(size: int, seed: int, cap: int, threads: int = 1) -> dict:
    """One corpus's row (module docstring); runs where the scheduler puts it."""
    import resource

    from stumpcheck.numerics.corpus.corpora import make_corpus
    from stumpcheck.numerics.corpus.interval.centre import NoPositiveCurvature
    from stumpcheck.numerics.corpus.interval.run import prove_interval

    def cpu():
        usage = resource.getrusage(resource.RUSAGE_SELF)
        return usage.ru_utime + usage.ru_stime

    started, wall = cpu(), time.perf_counter()
    corpus = make_corpus(size, size, seed=seed)
    row = {"m": size, "n": size, "seed": seed, "b_max": cap * size}
    try:
        run, document = prove_interval(corpus.x, corpus.theta, b_start=None, b_max=Fraction(cap * size),
                                       threads=threads, start_search=True, corpus_info={"seed": seed})
    except NoPositiveCurvature as exc:
        return {**row, "b2": None, "end": f"no step: {exc}", "cpu_seconds": round(cpu() - started, 2)}
    search = document.get("start_search") or {}
    row.update(b_start=float(run.b_start), b2=float(run.b_end), capped=run.b_end >= run.b_max,
               proved=run.b_end > run.b_start, end=document["end"].get("status"), eta=document["statement"]["eta"],
               halvings=search.get("chosen", {}).get("halvings"), leaves=document["proof"]["leaf_count"],
               boxes=run.stats["boxes"], group_passes=run.stats["passes"],
               cpu_seconds=round(cpu() - started, 2), wall_seconds=round(time.perf_counter() - wall, 2))
    return row


def slope_study(sizes, corpora: int, *, cap: int = 4, workers: int = 2, progress=None) -> dict:
    """Rows for every (size, seed 0 … corpora − 1), proved on :func:`~stumpcheck.numerics.scheduling.for_workers`
    (the command's scheduler if one was chosen), and the fit of b₂ against m ∧ n."""
    from stumpcheck.numerics.fits import fit_power_law
    from stumpcheck.numerics.scheduling import for_workers

    jobs = [(size, seed, cap) for size in sorted(sizes, reverse=True) for seed in range(corpora)]
    rows = []
    with for_workers(workers) as scheduler:
        for row in scheduler.imap(prove_b2, iter(jobs), window=len(jobs)):
            rows.append(row)
            if progress is not None:
                progress(len(rows) / len(jobs))
    rows.sort(key=lambda r: (r["m"], r["seed"]))
    points = [(r["m"], r["b2"]) for r in rows if r.get("b2") is not None]
    slope = None
    if len({m for m, _ in points}) >= 2 and len(points) >= 3:
        fit = fit_power_law([m for m, _ in points], [b for _, b in points])
        slope = {"exponent": fit.exponent, "ci95": list(fit.exponent_ci), "corpora": fit.n,
                 "capped": sum(bool(r.get("capped")) for r in rows),
                 "unproved": sum(not r.get("proved", False) for r in rows)}
    return {"rows": rows, "slope": slope, "sizes": sorted(sizes), "corpora_per_size": corpora, "cap": cap}


def study_table(study: dict) -> str:
    """A markdown table b₂ by size (rows) and seed (columns), "≥" for capped values, and the slope line."""
    seeds = sorted({r["seed"] for r in study["rows"]})
    lines = ["| m = n | " + " | ".join(f"seed {k}" for k in seeds) + " | median b₂/(m∧n) |",
             "|---" * (len(seeds) + 2) + "|"]
    for size in study["sizes"]:
        cells, ratios = [], []
        for k in seeds:
            r = next((r for r in study["rows"] if r["m"] == size and r["seed"] == k), None)
            if r is None or r.get("b2") is None:
                cells.append("–")
                continue
            mark = "≥" if r.get("capped") else ("" if r.get("proved") else "none from ")
            cells.append(f"{mark}{r['b2']:g}")
            ratios.append(r["b2"] / size)
        ratios.sort()
        median = ratios[len(ratios) // 2] if ratios else float("nan")
        lines.append(f"| {size} | " + " | ".join(cells) + f" | {median:.2f} |")
    s = study["slope"]
    lines.append("")
    if s is None:
        lines.append("no slope (fewer than three corpora with a b₂, or one size)")
        return "\n".join(lines)
    lines.append(f"log-log slope of b₂ against m ∧ n: {s['exponent']:.2f} [{s['ci95'][0]:.2f}, {s['ci95'][1]:.2f}] "
                 f"(95 %, {s['corpora']} corpora; {s['capped']} capped at {study['cap']}·(m∧n), "
                 f"{s['unproved']} with nothing proved; the paper's rate is 1)")
    return "\n".join(lines)
