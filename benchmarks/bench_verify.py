"""``stumpcheck verify --quick``: this checkout against revision 1b42087, measured in the same run.

``run(quick)``: wall seconds of ``python -m stumpcheck verify --quick --out DIR`` from this checkout
and from a ``git archive`` export of the reference revision (:mod:`benchmarks.revision`), run one
after the other (baseline first), target baseline/ours ≥ 2. The details carry both runs' exit
status, PASS count and per-row seconds (from results.json). With ``quick=True`` only ``--only C1``
runs (about a minute for both), the row that the certified C1 changed; the whole ``verify --quick``
takes minutes. Usage: ``python benchmarks/bench_verify.py [--quick]``.
"""

from __future__ import annotations

import json
import shutil
import sys
import tempfile
from pathlib import Path

if __package__ in (None, ""):  # run as a script
    sys.path[:0] = [str(Path(__file__).resolve().parent.parent)]
from benchmarks.revision import export_revision, timed_run  # noqa: E402
from benchmarks.rows import format_rows, row  # noqa: E402

REFERENCE = "1b42087"


def _summary(out_dir: Path, done) -> dict:
    """Exit status, PASS count and seconds per row from a verify run's results.json."""
    summary = {"exit_status": done.returncode}
    try:
        data = json.loads((out_dir / "results.json").read_text())
    except (OSError, ValueError):
        summary["stderr_tail"] = done.stderr[-400:]
        return summary
    rows = [r for r in data.get("claims", []) if isinstance(r, dict) and "id" in r]
    summary["passed"] = f"{sum(r.get('status') == 'PASS' for r in rows)}/{len(rows)}"
    summary["seconds_by_row"] = {r["id"]: round(float(r.get("seconds") or 0.0), 2) for r in rows}
    summary["evidence_by_row"] = {r["id"]: r.get("evidence") for r in rows}
    return summary


def run(quick: bool = False) -> list[dict]:
    """One row: verify --quick (quick=True: --only C1), ours against the reference revision."""
    extra = ["--only", "C1"] if quick else []
    work = Path(tempfile.mkdtemp(prefix="bench-verify-"))
    try:
        source = export_revision(REFERENCE, into=work)
        runs = {}
        for name, src in (("baseline", source), ("ours", None)):
            out_dir = work / f"out-{name}"
            seconds, done = timed_run(["-m", "stumpcheck", "verify", "--quick", *extra, "--out", str(out_dir)],
                                      source=src, cwd=work)
            runs[name] = (seconds, _summary(out_dir, done))
    finally:
        shutil.rmtree(work, ignore_errors=True)
    label = "verify --quick" + (" --only C1" if quick else "")
    result = row(label, runs["ours"][0], f"verify --quick at {REFERENCE}", runs["baseline"][0],
                 kind="baseline/ours", target=(">=", 2),
                 note="same sample counts and verdict criteria; wall seconds, one run each",
                 details={"ours": runs["ours"][1], "baseline": runs["baseline"][1], "reference": REFERENCE})
    ours = runs["ours"][1]
    if ours["exit_status"] != 0:
        # a run that failed a check may have skipped work: its time is not comparable
        result["met"] = False
        result["note"] = f"ours exited {ours['exit_status']} ({ours.get('passed', '?')} PASS): not comparable"
    else:
        result["note"] += f"; both {ours.get('passed', '?')} and {runs['baseline'][1].get('passed', '?')} PASS"
    return [result]


if __name__ == "__main__":
    rows = run(quick="--quick" in sys.argv)
    print(format_rows(rows))
    print(json.dumps(rows[0]["details"], indent=1))
