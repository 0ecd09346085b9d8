"""Write the results of ``stumpcheck verify``: ``results.json``, ``report.md`` and the PNG plots.

``results.json`` is ``{"claims": [...], "provenance": {...}, "summary": {...}}``;
each claim has the interface keys ``id``, ``status`` (PASS/FAIL), ``figure``,
``tolerance``, ``evidence``, ``evidence_reached`` (:func:`evidence_reached`), ``seconds``,
``provenance`` (package versions, git
commit, machine, precision, seed, date; from :func:`stumpcheck.numerics.provenance.provenance`
plus the Python and hypothesis versions), and ``statement`` and ``details``.
Every number is finite: NaN and ±inf become ``null`` (so the file is strict
JSON). ``report.md`` has the table and a section per claim with its figure,
evidence (and, where ``details["evidence_parts"]`` names them, the level of each part of the row),
tolerance, the control of a certified verdict if ``details["control"]`` has one (its status,
figure and tolerance: statistical, not the verdict), its own Markdown text if ``details["explanation"]`` has one
(C2–C6: the criterion, the controls and what they show), details and its plots embedded as ``![…](file.png)``;
plots named in ``details["plots"]`` are looked up in the output folder (where
the checks write them) and listed only if they exist there.
"""

from __future__ import annotations

import json
import platform
from importlib import metadata
from pathlib import Path

from stumpcheck.claims.result import ClaimResult
from stumpcheck.numerics.json_output import finite_json
from stumpcheck.numerics.precision import InputError

__all__ = ["run_provenance", "claim_provenance", "finite_json", "results_document", "write_report", "table",
           "plot_margins", "evidence_reached"]


def _version(package: str) -> str | None:
    try:
        return metadata.version(package)
    except metadata.PackageNotFoundError:
        return None


def run_provenance(*, seed: int | None, mode: str) -> dict:
    """Provenance of a verify run: :func:`stumpcheck.numerics.provenance.provenance` plus hypothesis, scipy, click, dask."""
    from stumpcheck.numerics.provenance import provenance

    data = provenance(seed=seed, mode=mode)
    data["versions"] = {**data.get("versions", {}),
                        **{p: _version(p) for p in ("hypothesis", "scipy", "click", "dask")}}
    data.setdefault("python", platform.python_version())
    return data


def _precision_of(result: ClaimResult) -> str:
    details = result.details or {}
    if "precision" in details:
        return str(details["precision"])
    if "dps" in details:
        return f"mpmath dps {details['dps']}"
    if result.evidence == "certified":
        return "Arb ball arithmetic (python-flint)"
    return "float64"


def claim_provenance(result: ClaimResult, run: dict) -> dict:
    """The run's provenance with this claim's precision and seed."""
    details = result.details or {}
    seed = details.get("seed", run.get("seed"))
    seeds = details.get("seeds", [seed] if seed is not None else [])
    return {**run, "precision": _precision_of(result), "seed": seed, "seeds": seeds}


def evidence_reached(result: ClaimResult) -> str | None:
    """The highest evidence level the row's statement reached on its whole domain: what a check records in
    ``details["evidence_reached"]`` (a certified lemma left undecided reaches ``"sampled"``), else the row's
    evidence for a PASS; None for a FAIL (the statement reached no level). A row whose parts reached different
    levels (``details["evidence_parts"]``, e.g. a population part proved and a fresh-context part sampled)
    reaches the lowest of them: a partial proof is not a proof of the whole statement."""
    details = result.details or {}
    if "evidence_reached" in details:
        return details["evidence_reached"]
    if result.status != "PASS":
        return None
    parts = details.get("evidence_parts")
    if isinstance(parts, dict) and parts:
        return min([result.evidence, *map(_level, parts.values())], key=_LEVELS.index)
    return result.evidence


_LEVELS = ["sampled", "high-precision", "certified"]


def _level(text) -> str:
    """The evidence level a part's text starts with ("sampled (Monte Carlo, …)" → "sampled"); text that names
    no level counts as the lowest."""
    words = str(text).split()
    return words[0] if words and words[0] in _LEVELS else _LEVELS[0]


def results_document(results: list[ClaimResult], run: dict) -> dict:
    """The ``results.json`` object (finite values only)."""
    claims = []
    for result in results:
        claims.append({"id": result.id, "status": result.status, "figure": result.figure,
                       "tolerance": result.tolerance, "evidence": result.evidence,
                       "evidence_reached": evidence_reached(result), "seconds": round(float(result.seconds), 3),
                       "statement": result.statement,
                       "provenance": claim_provenance(result, run), "details": result.details or {}})
    failed = [r.id for r in results if r.status != "PASS"]
    summary = {"total": len(results), "passed": len(results) - len(failed), "failed": failed,
               "seconds": round(sum(float(r.seconds) for r in results), 3)}
    return finite_json({"claims": claims, "provenance": run, "summary": summary})


def _cell(text) -> str:
    return str(text).replace("|", "\\|").replace("\n", " ")


#: widest text column in the plain table (statement, figure, tolerance); full text in report.md
_WIDTHS = {"statement": 44, "figure": 64, "tolerance": 36}


def table(results: list[ClaimResult], *, markdown: bool = False) -> str:
    """The verify table: id, statement, figure, tolerance, PASS/FAIL, evidence, seconds, reached (the highest
    level the statement reached on its whole domain, :func:`evidence_reached`; "-" for none; last, so the
    earlier columns keep their places). Plain text clips the long columns; ``markdown=True`` keeps them whole."""
    header = ("id", "statement", "figure", "tolerance", "status", "evidence", "seconds", "reached")
    rows = [(r.id, r.statement, r.figure, r.tolerance, r.status, r.evidence, f"{float(r.seconds):.1f}",
             evidence_reached(r) or "-") for r in results]
    if markdown:
        lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
        lines += ["| " + " | ".join(_cell(c) for c in row) + " |" for row in rows]
        return "\n".join(lines)

    def clip(text: str, column: str) -> str:
        text, width = str(text).replace("\n", " "), _WIDTHS.get(column, 60)
        return text if len(text) <= width else text[: width - 1] + "…"

    rows = [tuple(clip(c, h) for c, h in zip(row, header)) for row in rows]
    widths = [max(len(h), *(len(row[i]) for row in rows)) if rows else len(h) for i, h in enumerate(header)]
    out = ["  ".join(h.ljust(w) for h, w in zip(header, widths)).rstrip()]
    out += ["  ".join(c.ljust(w) for c, w in zip(row, widths)).rstrip() for row in rows]
    return "\n".join(out)


def _plots(result: ClaimResult, out: Path) -> list[str]:
    names = (result.details or {}).get("plots") or []
    found = []
    for name in names:
        name = Path(str(name)).name
        if (out / name).is_file() and name not in found:
            found.append(name)
    return found


def _evidence_parts(result: ClaimResult) -> list[str]:
    """A line naming the level of each part of a row whose parts rest on different evidence
    (``details["evidence_parts"]``, e.g. a population part proved and a fresh-context part sampled); none else."""
    parts = (result.details or {}).get("evidence_parts")
    if not isinstance(parts, dict) or not parts:
        return []
    return ["- **evidence per part**: " + "; ".join(f"{part}: {level}" for part, level in parts.items())]


def _markdown(results: list[ClaimResult], run: dict, out: Path) -> str:
    failed = [r.id for r in results if r.status != "PASS"]
    lines = ["# stumpcheck verify report", "",
             f"{len(results) - len(failed)} of {len(results)} PASS"
             + (f"; FAIL: {', '.join(failed)}" if failed else "") + f". Mode {run.get('mode')}, seed {run.get('seed')}, "
             f"{run.get('date')}, commit {run.get('git_commit')}, {run.get('machine')}.", "",
             table(results, markdown=True), ""]
    for result in results:
        lines += [f"## {result.id}: {result.statement}", "",
                  f"- **status**: {result.status}", f"- **figure**: {result.figure}",
                  f"- **tolerance**: {result.tolerance}", f"- **evidence**: {result.evidence}",
                  f"- **evidence reached**: {evidence_reached(result) or 'none'}",
                  *_evidence_parts(result),
                  f"- **precision**: {_precision_of(result)}",
                  f"- **seconds**: {float(result.seconds):.1f}"]
        control = (result.details or {}).get("control")
        if isinstance(control, dict) and "status" in control:  # a certified verdict's statistical control
            lines.append(f"- **control** ({control.get('evidence', 'sampled')}, not the verdict): "
                         f"{control['status']}: {control.get('figure', '')} (tolerance {control.get('tolerance', '')})")
        lines.append("")
        explanation = (result.details or {}).get("explanation")
        if isinstance(explanation, str) and explanation.strip():
            lines += [explanation.strip(), ""]  # a claim's own Markdown: criterion, controls, what they show
        for name in _plots(result, out):
            lines += [f"![{result.id}: {name}]({name})", ""]
        details = {k: v for k, v in (result.details or {}).items() if k not in ("plots", "explanation")}
        if details:
            text = json.dumps(finite_json(details), indent=1, sort_keys=True, ensure_ascii=False)
            if len(text) > 6000:
                text = text[:6000] + "\n… (truncated; full details in results.json)"
            lines += ["<details><summary>details</summary>", "", "```json", text, "```", "", "</details>", ""]
    lines += ["## Provenance", "", "```json", json.dumps(finite_json(run), indent=1, sort_keys=True), "```", ""]
    return "\n".join(lines)


def write_report(results: list[ClaimResult], out_dir, *, run: dict) -> list[Path]:
    """Write results.json and report.md into ``out_dir`` (created); returns their paths.

    The checks have already written their PNG plots into ``out_dir``.
    """
    out = Path(out_dir)
    try:
        out.mkdir(parents=True, exist_ok=True)
        results_path = out / "results.json"
        document = results_document(results, run)
        results_path.write_text(json.dumps(document, indent=1, allow_nan=False, ensure_ascii=False) + "\n",
                                encoding="utf-8")
        report_path = out / "report.md"
        report_path.write_text(_markdown(results, run, out), encoding="utf-8")
    except OSError as exc:
        raise InputError(f"cannot write the report to {out_dir}: {exc.strerror or exc}") from None
    return [results_path, report_path]


def plot_margins(name: str, margins, out_dir, *, title: str = "") -> Path:
    """PNG of a lemma's margins in the order Hypothesis evaluated them (symlog scale; negative
    margins, i.e. counterexamples, in red), written as ``lemma_<name>.png`` in ``out_dir``."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import numpy as np

    values = np.array([m if m is not None else np.nan for m in margins], dtype=float)
    index = np.arange(1, len(values) + 1)
    finite = np.isfinite(values)
    fig, ax = plt.subplots(figsize=(6.4, 3.6))
    good = finite & (values >= 0)
    ax.plot(index[good], values[good], ".", ms=3, color="tab:blue", label="margin ≥ 0")
    if np.any(finite & (values < 0)):
        bad = finite & (values < 0)
        ax.plot(index[bad], values[bad], "x", ms=5, color="tab:red", label="counterexample (margin < 0)")
    ax.axhline(0.0, color="black", lw=0.8)
    positive = np.abs(values[finite & (values != 0)])
    ax.set_yscale("symlog", linthresh=float(positive.min()) if positive.size else 1.0)
    ax.set_xlabel("evaluation (Hypothesis generate, target, shrink phases)")
    ax.set_ylabel("margin")
    ax.set_title(title or f"lemma {name}", fontsize=9)
    ax.legend(fontsize=8, loc="best")
    fig.tight_layout()
    path = Path(out_dir) / f"lemma_{name}.png"
    fig.savefig(path, dpi=100)
    plt.close(fig)
    return path
