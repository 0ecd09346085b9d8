"""One benchmark result row: a measured ratio against a baseline timed in the same run, and its target.

Every benchmark module exposes ``run(quick: bool = False) -> list[dict]`` returning rows made by
:func:`row`; ``python -m benchmarks`` collects them, prints one table and writes them to JSON with
the provenance of the run. A ratio is either a speedup (``"baseline/ours"``: how many times faster we
are than the baseline) or a cost against a bound (``"ours/bound"``: how many times the bound we
take); ``target`` is ``(">=", x)`` or ``("<=", x)`` on that ratio, or None for an informative row.
"""

from __future__ import annotations

import math

__all__ = ["row", "format_rows"]


def row(name: str, ours_s: float, baseline: str, baseline_s: float, *, kind: str = "baseline/ours",
        target: tuple[str, float] | None = None, note: str = "", details: dict | None = None) -> dict:
    """A result row; ``met`` is None without a target, else whether ``ratio`` meets it."""
    if kind not in ("baseline/ours", "ours/bound"):
        raise ValueError(f"kind must be 'baseline/ours' or 'ours/bound', got {kind!r}")
    if ours_s is None or baseline_s is None or not (ours_s > 0 and baseline_s > 0):
        ratio = math.nan
    else:
        ratio = baseline_s / ours_s if kind == "baseline/ours" else ours_s / baseline_s
    met = None
    if target is not None:
        op, value = target
        if op not in (">=", "<="):
            raise ValueError(f"target operator must be '>=' or '<=', got {op!r}")
        met = bool(math.isfinite(ratio) and (ratio >= value if op == ">=" else ratio <= value))
    return {"name": name, "ours_s": ours_s, "baseline": baseline, "baseline_s": baseline_s, "kind": kind,
            "ratio": ratio, "target": None if target is None else f"{target[0]} {target[1]:g}", "met": met,
            "note": note, "details": details or {}}


def _seconds(value) -> str:
    if value is None or not math.isfinite(value):
        return "–"
    return f"{value:.3g}"


def format_rows(rows: list[dict]) -> str:
    """A Markdown table of the rows (ratio to 3 significant digits, seconds to 3)."""
    lines = ["| row | ours s | baseline | baseline s | ratio | target | met | note |",
             "|---|---|---|---|---|---|---|---|"]
    for r in rows:
        ratio = "–" if not math.isfinite(r["ratio"]) else f"{r['ratio']:.3g} ({r['kind']})"
        met = {None: "", True: "yes", False: "**no**"}[r["met"]]
        if r["met"] is False and math.isfinite(r["ratio"]) and r["ratio"] > 0:
            op, value = r["target"].split()
            factor = float(value) / r["ratio"] if op == ">=" else r["ratio"] / float(value)
            met = f"**no** (misses by {factor:.2f}×)"
        lines.append(f"| {r['name']} | {_seconds(r['ours_s'])} | {r['baseline']} | {_seconds(r['baseline_s'])} | "
                     f"{ratio} | {r['target'] or ''} | {met} | {r['note']} |")
    return "\n".join(lines)
