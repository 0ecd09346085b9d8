"""C5's certified part: for some of its corpora, the certified training interval [8, b₂] and the rate of b₂.

For each corpus (C5's own corpora, make_corpus(m, n, seed=_seed_of(s, m, n)) for the first seeds of
each size), :func:`stumpcheck.numerics.corpus.interval.run.prove_interval` proves, with the default
band and step rule, that GD from S = {8 ≤ b ≤ b₂, |a − A(b)| within the band} stays in S and raises b
until b ≥ b₂ (docs/corpus_interval.md); b₂ is then *certified* (under the fast layer's stated
assumptions), capped at --b-max = 4·(m ∧ n) (a capped b₂ is only a lower bound of what could be
proved). The paper predicts b₂ ∝ m ∧ n. C5's verdict (:func:`interval_verdict`, fixed in docs/claims.md before it
was run) is that every corpus's interval reaches b₂ ≥ (m ∧ n)/4, the scale at which the large-resolution protocol
starts GD; the log-log slope of b₂ against m ∧ n over the corpora (OLS with a 95 % interval: the spread between
corpora, a sampled figure) is a control.

Sizes: quick m = n ∈ {64, 128}, 3 corpora each (about a minute); full m = n ∈ {64, 128, 256, 512, 1024},
3 corpora each (with the shared and pruned enclosures one corpus at m = n = 1024 takes 40–100 s of CPU to
4·(m ∧ n) or to where it stops, docs/corpus_interval.md). Each certificate is written to the claim's folder
(``c5_intervals/``) when one is given, so that ``stumpcheck recheck`` can re-check it against its corpus
(also written there).

Beside C5's own fit, the report quotes the recorded slope study of docs/corpus_interval.md
(:data:`SLOPE_STUDY`: 40 corpora, 8 per size, 64 … 1024, the same proof; not recomputed by C5).
"""

from __future__ import annotations

import time
from fractions import Fraction

from stumpcheck.numerics.corpus.corpora import make_corpus

__all__ = ["INTERVAL_SETTINGS", "C5_FRACTION", "SLOPE_STUDY", "certified_intervals", "interval_text",
           "interval_verdict", "save_interval"]

INTERVAL_SETTINGS = {"quick": {"sizes": (64, 128), "corpora": 3},
                     "full": {"sizes": (64, 128, 256, 512, 1024), "corpora": 3}}
#: C5's criterion (docs/claims.md C5): every corpus's certified b₂ is at least this fraction of m ∧ n
C5_FRACTION = Fraction(1, 4)

#: The recorded slope study (docs/corpus_interval.md, "The certified slope"; its rows in
#: benchmarks/results-interval-slope.json, its command ``python -m benchmarks.bench_interval_slope``):
#: b₂ of make_corpus(s, s, seed 0 … 7) for s = 64 … 1024, proved to at most 4·s, and the OLS slope of
#: log b₂ on log s with its 95 % interval. Quoted, not recomputed, by C5.
SLOPE_STUDY = {"corpora": 40, "sizes": [64, 128, 256, 512, 1024], "exponent": 1.01, "ci95": [0.77, 1.26],
               "capped": 5, "source": "benchmarks/results-interval-slope.json"}


def interval_verdict(summary: dict, fraction: Fraction = C5_FRACTION) -> dict:
    """C5's certified verdict on :func:`certified_intervals`' rows: PASS iff there is at least one corpus and every
    corpus has a proved interval with b₂ ≥ fraction·(m ∧ n) (b₂ compared exactly, as the prover's rational end).
    {"passed", "fraction", "least_ratio" (the least b₂/(m ∧ n), None if a corpus has none), "misses" (the
    corpora that miss it), "corpora"}."""
    rows = summary["rows"]
    misses, ratios = [], []
    for r in rows:
        size = min(r["m"], r["n"])
        b2 = None if r.get("b2") is None else Fraction(r.get("b2_exact", r["b2"]))
        ratios.append(None if b2 is None else b2 / size)
        if b2 is None or b2 < fraction * size:
            misses.append({"m": r["m"], "n": r["n"], "corpus_seed": r["corpus_seed"],
                           "b2": r.get("b2"), "end": r.get("end")})
    least = None if not ratios or None in ratios else float(min(ratios))
    return {"passed": bool(rows) and not misses, "fraction": f"{fraction.numerator}/{fraction.denominator}",
            "least_ratio": least, "misses": misses, "corpora": len(rows)}


def certified_intervals(*, quick: bool, seed: int, seed_of, out_dir=None) -> dict:
    """Per corpus: b₂, whether it was capped, why the proof stopped, leaves, smallest margins and seconds;
    and the log-log slope of b₂ against m ∧ n with its 95 % interval."""
    from stumpcheck.numerics.corpus.interval.centre import NoPositiveCurvature
    from stumpcheck.numerics.corpus.interval.run import prove_interval
    from stumpcheck.numerics.fits import fit_power_law

    mode = INTERVAL_SETTINGS["quick" if quick else "full"]
    rows = []
    for size in mode["sizes"]:
        for i in range(mode["corpora"]):
            corpus_seed = seed_of(seed * mode["corpora"] + i, size, size)
            corpus = make_corpus(size, size, seed=corpus_seed)
            started = time.perf_counter()
            b_max = Fraction(4 * size)
            stem = f"m{size}_n{size}_seed{corpus_seed}"
            try:
                run, document = prove_interval(corpus.x, corpus.theta, b_max=b_max,
                                               corpus_info={"seed": corpus_seed, "file": f"{stem}.npz"})
            except NoPositiveCurvature as exc:
                rows.append({"m": size, "n": size, "corpus_seed": corpus_seed, "b2": None, "capped": False,
                             "end": f"no step: {exc}", "seconds": round(time.perf_counter() - started, 1)})
                continue
            b2 = float(run.b_end)
            end = document["end"]
            row = {"m": size, "n": size, "corpus_seed": corpus_seed, "b2": b2 if run.b_end > run.b_start else None,
                   "b2_exact": str(Fraction(run.b_end)),
                   "b2_over_m_min_n": b2 / size, "capped": run.b_end >= b_max, "end": end.get("status"),
                   "eta": document["statement"]["eta"], "steps": document["statement"]["steps"],
                   "leaves": document["proof"]["leaf_count"],
                   "smallest_margins": document["proof"]["smallest_margins"],
                   "seconds": round(time.perf_counter() - started, 1)}
            if out_dir is not None and run.b_end > run.b_start:
                row["certificate"] = save_interval(out_dir, "c5_intervals", stem, corpus, document)
            rows.append(row)
    points = [(r["m"], r["b2"]) for r in rows if r["b2"] is not None]
    slope = None
    if len({m for m, _ in points}) >= 2 and len(points) >= 3:
        fit = fit_power_law([m for m, _ in points], [b for _, b in points])
        slope = {"exponent": fit.exponent, "ci95": list(fit.exponent_ci), "corpora": fit.n,
                 "capped": sum(r["capped"] for r in rows),
                 "note": "capped b2 (= 4(m∧n)) enter at the cap: they are lower bounds, so the slope is "
                         "then a lower estimate"}
    return {"rows": rows, "slope": slope, "sizes": list(mode["sizes"]), "corpora_per_size": mode["corpora"],
            "evidence": "certified b2 per corpus (fast float64 intervals with outward rounding + Arb margins); "
                        "the slope is a fit over corpora (sampled)",
            "band": "c_minus = 1/20, c_plus = 1/2", "b_start": 8, "slope_study": SLOPE_STUDY}


def save_interval(out_dir, folder_name: str, stem: str, corpus, document: dict) -> str:
    """Write ``corpus`` (``stem``.npz) and its interval certificate (``stem``.interval_certificate.json) into
    ``out_dir``/``folder_name`` for ``stumpcheck recheck … --corpus``; the certificate's file name."""
    from pathlib import Path

    from stumpcheck.numerics.certified.certificates.lemma_certificate import write_certificate
    from stumpcheck.numerics.corpus.corpora import save_corpus

    folder = Path(out_dir) / folder_name
    folder.mkdir(parents=True, exist_ok=True)
    save_corpus(corpus, folder / f"{stem}.npz")
    return str(write_certificate(document, folder / f"{stem}.interval_certificate.json", one_per_line=("leaves",)).name)


def interval_text(summary: dict) -> str:
    """One clause for C5's figure: the certified b₂ by size and the slope."""
    by_size: dict = {}
    for r in summary["rows"]:
        value = "none" if r["b2"] is None else (f"≥{r['b2']:g}" if r["capped"] else f"{r['b2']:g}")
        by_size.setdefault(r["m"], []).append(value)
    parts = "; ".join(f"{m}→{', '.join(v)}" for m, v in by_size.items())
    slope = summary["slope"]
    slope_text = "no slope" if slope is None else (
        f"slope {slope['exponent']:.2f} [{slope['ci95'][0]:.2f}, {slope['ci95'][1]:.2f}] (paper: 1)")
    study = summary.get("slope_study") or SLOPE_STUDY
    study_text = (f"; recorded slope study, {study['corpora']} corpora at m = n = {study['sizes'][0]}–"
                  f"{study['sizes'][-1]}: slope {study['exponent']:.2f} [{study['ci95'][0]:.2f}, {study['ci95'][1]:.2f}]")
    return f"certified b₂ (corpus interval, certified): {parts} ({slope_text}{study_text})"

