"""C6's large-resolution row beside the certified training interval of its own corpus.

For each size s = m ∧ n of the row, the corpus of its first cell (make_corpus(m, n, seed)) gets the
interval proof of docs/corpus_interval.md (:func:`stumpcheck.numerics.corpus.interval.run.prove_interval`,
default band and step rule, b from 8 up to b_max = s/2, the end of the trained interval). Its statement:
GD with the certificate's constant step η_S, started anywhere in S = {b_start ≤ b ≤ b₂, A(b) − c₋ ≤ a ≤ A(b) + c₊},
stays in S and raises b until b ≥ b₂. The row's run is covered by it when

* its b-range [b₀, s/2] = [s/4, s/2] lies in [b_start, b₂],
* its start (a₀, b₀) = (calibration_a(b₀), b₀) lies in S: μ₀ = a₀ − A(b₀) ∈ [−c₋, c₊], and
* its step is the certificate's: η = η_S (the statement is about one constant step).

Each is reported, and "covered" only when all three hold. The trainer's large-resolution start lies
λ ≈ +5 … +9 above the corpus nullcline (docs/corpus_interval.md, Entry), far above S's band; this version
certifies no entry phase, so the row's start is expected outside S and the answer "no" says why. b₂ is
*certified* (under the fast layer's stated assumptions); the rest is arithmetic on the certificate.

Sizes above :data:`MAX_SIZE` get a row without a proof (``stumpcheck interval --m M --n N --seed S`` proves
them: its default target is s/2). Up to s = 1024 the proof takes about 40 CPU seconds (the shared and pruned
enclosures of docs/corpus_interval.md), so every size of ``verify --full`` is proved. The start b_start and
the step are chosen per corpus as the command chooses them (:mod:`stumpcheck.numerics.corpus.interval.start`).
"""

from __future__ import annotations

import time
from fractions import Fraction

__all__ = ["MAX_SIZE", "certified_coverage", "coverage_text"]

#: the largest m ∧ n whose interval C6 proves (module doc)
MAX_SIZE = 1024


def certified_coverage(cells: list[dict], *, out_dir=None, max_size: int = MAX_SIZE) -> dict:
    """Per size of the large-resolution ``cells`` (results of :func:`~stumpcheck.claims.c6_protocol.c6_cell`):
    b₂ of the first cell's corpus and whether the row's run is covered by its certificate (module docstring);
    sizes above ``max_size`` are listed without a proof."""
    from stumpcheck.claims.c5_interval import save_interval
    from stumpcheck.numerics.corpus.corpora import make_corpus
    from stumpcheck.numerics.corpus.interval.centre import Centre, NoPositiveCurvature
    from stumpcheck.numerics.corpus.interval.run import DEFAULT_B_START, prove_interval

    first: dict = {}
    for cell in sorted(cells, key=lambda c: (c["m_min_n"], c["seed"])):
        first.setdefault(cell["m_min_n"], cell)
    rows = []
    for size, cell in sorted(first.items()):
        m, n, seed = int(cell["m"]), int(cell["n"]), int(cell["seed"])
        row = {"m": m, "n": n, "corpus_seed": seed, "trained_to": size / 2}
        b_max = Fraction(size, 2)
        if "a0" not in cell or "b0" not in cell:
            rows.append({**row, "b0": cell.get("b0"), "b2": None, "covered": False,
                         "why": "the cell records no start (a0, b0)"})
            continue
        if size > max_size:
            rows.append({**row, "b0": cell["b0"], "b2": None, "covered": False,
                         "why": f"not proved here (m ∧ n > {max_size}: minutes per corpus; stumpcheck interval "
                                f"--m {m} --n {n} --seed {seed} --b-max {size / 2:g} proves it)"})
            continue
        if b_max <= DEFAULT_B_START:
            rows.append({**row, "b0": cell["b0"], "b2": None, "covered": False,
                         "why": f"the trained interval ends at {float(b_max):g}, not above b_start = {DEFAULT_B_START}"})
            continue
        corpus = make_corpus(m, n, seed=seed)
        started = time.perf_counter()
        stem = f"m{m}_n{n}_seed{seed}"
        try:
            run, document = prove_interval(corpus.x, corpus.theta, b_max=b_max, b_start=None, start_search=True,
                                           corpus_info={"seed": seed, "file": f"{stem}.npz"})
        except NoPositiveCurvature as exc:
            rows.append({**row, "b0": cell["b0"], "b2": None, "covered": False, "why": f"no step: {exc}"})
            continue
        statement = document["statement"]
        b2 = float(run.b_end) if run.b_end > run.b_start else None
        centre = Centre.from_nodes(statement["centre"]["nodes"])
        band = statement["band"]
        c_minus, c_plus = Fraction(band["c_minus"]), Fraction(band["c_plus"])
        b0 = Fraction(cell["b0"])
        mu0 = Fraction(cell["a0"]) - centre.value(b0)
        eta_s = Fraction(statement["eta"])
        checks = {"b_range_inside": b2 is not None and float(run.b_start) <= cell["b0"] and size / 2 <= b2,
                  "start_in_S": -c_minus <= mu0 <= c_plus,
                  "same_step": cell.get("eta") is not None and Fraction(cell["eta"]) == eta_s}
        reasons = {"b_range_inside": f"[b0, (m∧n)/2] = [{cell['b0']:g}, {size / 2:g}] not inside [{float(run.b_start):g}, b₂]",
                   "start_in_S": "start outside S", "same_step": "another step than the certificate's"}
        why = [reasons[name] for name, ok in checks.items() if not ok]
        row.update(b0=cell["b0"], b2=b2, eta_certificate=float(eta_s), eta_row=cell.get("eta"),
                   mu0=float(mu0), band=[-float(c_minus), float(c_plus)], **checks, covered=not why,
                   why="; ".join(why) if why else "", end=document["end"].get("status"),
                   seconds=round(time.perf_counter() - started, 1))
        if out_dir is not None and b2 is not None:
            row["certificate"] = save_interval(out_dir, "c6_intervals", stem, corpus, document)
        rows.append(row)
    return {"rows": rows, "evidence": "b2 certified (corpus interval); coverage is arithmetic on the certificate",
            "rule": "covered iff [b0, (m∧n)/2] ⊂ [8, b2], the start (a0, b0) lies in S and eta equals the "
                    "certificate's; the large-resolution start lies far above S's band (no entry phase "
                    "is certified), so 'no' is expected"}


def coverage_text(summary: dict) -> str:
    """One clause for C6's figure."""
    parts = []
    for r in summary["rows"]:
        if r["b2"] is None:
            parts.append(f"{min(r['m'], r['n'])}: no certified interval ({r['why']})")
            continue
        reach = f"b₂ {'≥' if r['b2'] >= r['trained_to'] else '='} {min(r['b2'], r['trained_to']):g}"
        start = f"start μ0 = {r['mu0']:+.2f} {'in' if r['start_in_S'] else 'outside'} band " \
                f"[{r['band'][0]:g}, {r['band'][1]:g}]"
        parts.append(f"{min(r['m'], r['n'])}: {'yes' if r['covered'] else 'no'} ({reach}, {start})")
    return ("trained run inside its corpus's certified interval (certified b₂, corpus of the first seed): "
            + ", ".join(parts))
