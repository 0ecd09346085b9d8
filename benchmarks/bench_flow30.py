"""The 30-digit population flow against the same command at the reference revision, in one run.

Usage: python benchmarks/bench_flow30.py [--quick] [--t-max 1e12] [--workers 2] [--revision 1b42087]

Both sides run ``python -m stumpcheck flow --t-max T --dps 30 --rtol 1e-9 --no-check --quiet
--workers W --out DIR`` from (a₀, b₀) = (10, 10), one after the other, in fresh processes: the
baseline from a clean export of the reference revision (``benchmarks.revision``), ours from this
checkout with ``--solver extrapolation`` (the linearly implicit Euler extrapolation of order 7 in
the coordinates (a − b, log b); the CLI's default solver is still rodas4, which at the reference
revision is the only stiff D-digit choice) and its default quadrature, a Gauss–Legendre order per breakpoint
piece (``stumpcheck.numerics.flow.piece_orders``; the baseline has one order on every piece). Ratio: baseline seconds / ours
(wall-clock). Details:
steps, field evaluations, seconds per evaluation, the final b of both and their relative
difference, the two-order quadrature agreement at the end (of the rule used: per piece for ours, and of the probe
order on every piece as ``quadrature_check_digits_end_uniform``), the fraction of the uniform order's nodes that
the per-piece rule used and its nodes per field evaluation, the CPU seconds of both (with the second
worker), per evaluation, and their ratio, and at t = 10¹² the difference from the recorded 30-digit result. ``quick``: to t = 10³ (about a minute each on an idle machine; the
full run to 10¹² takes about 9 minutes for the baseline alone).
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import tempfile
from pathlib import Path

try:
    from benchmarks.revision import export_revision, timed_run
    from benchmarks.rows import format_rows, row
except ImportError:  # run as a script: python benchmarks/bench_flow30.py
    import sys

    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
    from benchmarks.revision import export_revision, timed_run
    from benchmarks.rows import format_rows, row

REFERENCE_REVISION = "1b42087"
#: The 30-digit final b at t = 10¹² recorded at the reference revision (benchmarks/README.md, bench_flow;
#: Rodas4, rtol 1e-9), with its ~1e-11 discretisation error.
RECORDED_FINAL_B_1E12 = "1187.83397129676224326345186483"
TARGET = (">=", 4.0)


def _flow_command(t_max: float, workers: int, out: Path, solver: str | None) -> list[str]:
    argv = ["-m", "stumpcheck", "flow", "--t-max", f"{t_max:g}", "--dps", "30", "--rtol", "1e-9", "--no-check",
            "--quiet", "--workers", str(workers), "--out", str(out)]
    return argv + (["--solver", solver] if solver else [])


def _timed_flow(t_max, workers, scratch: Path, name: str, source=None, solver=None, timeout=None) -> dict:
    out = scratch / name
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    seconds, done = timed_run(_flow_command(t_max, workers, out, solver), source=source, cwd=scratch, timeout=timeout)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    # CPU of the flow process and of its second worker (reaped by it): less sensitive to a shared machine's load
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    if done.returncode != 0:
        raise RuntimeError(f"{name} flow failed ({done.returncode}): {done.stderr.strip()[-400:]}")
    stats = json.loads((out / "flow.json").read_text(encoding="utf-8"))["stats"]
    evaluations = stats["gradient_evaluations"]
    # per-piece rules (absent at the reference revision): every node summed, the choices' trial orders included
    piece_stats = stats.get("piece_order_stats") or {}
    nodes = piece_stats.get("nodes", 0) + piece_stats.get("selection_nodes", 0)
    return {"seconds": seconds, "cpu_seconds": cpu, "steps": stats["accepted_steps"], "rejected": stats["rejected_steps"],
            "field_evaluations": evaluations, "seconds_per_evaluation": seconds / evaluations,
            "cpu_seconds_per_evaluation": cpu / evaluations,
            "nodes_per_evaluation": nodes / evaluations if nodes else None,
            "final_a": stats["final_a"], "final_b": stats["final_b"], "quadrature_order": stats["quadrature_order"],
            "quadrature_check_digits_end": stats["quadrature_check_digits_end"],
            # per-piece orders (absent at the reference revision): the rule, its node count against one order on
            # every piece, and the probe order's own agreement at the end
            "quadrature_rule": stats.get("quadrature_rule", "uniform"),
            "nodes_fraction_of_uniform": stats.get("nodes_fraction_of_uniform"),
            "piece_order_selections": stats.get("piece_order_selections"),
            "piece_orders_unresolved": stats.get("piece_orders_unresolved"),
            "quadrature_check_digits_end_uniform": stats.get("quadrature_check_digits_end_uniform")}


def _relative_difference(x: str, y: str) -> float:
    import mpmath

    with mpmath.workdps(40):
        return float(abs(mpmath.mpf(x) - mpmath.mpf(y)) / abs(mpmath.mpf(y)))


def run(quick: bool = False, *, t_max: float | None = None, workers: int | None = None,
        revision: str = REFERENCE_REVISION) -> list[dict]:
    """One row: the 30-digit flow to ``t_max`` (default 10¹², quick 10³), baseline/ours wall seconds."""
    t_max = t_max if t_max is not None else (1e3 if quick else 1e12)
    workers = workers if workers is not None else min(2, os.cpu_count() or 1)
    scratch = Path(tempfile.mkdtemp(prefix="bench-flow30-"))
    try:
        source = export_revision(revision, into=scratch)
        baseline = _timed_flow(t_max, workers, scratch, "baseline", source=source)
        ours = _timed_flow(t_max, workers, scratch, "ours", solver="extrapolation")
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    details = {"t_max": t_max, "workers": workers, "dps": 30, "rtol": 1e-9, "revision": revision,
               "command": " ".join(_flow_command(t_max, workers, Path("DIR"), "extrapolation")),
               "ours": ours, "baseline": baseline,
               "final_b_rel_difference": _relative_difference(ours["final_b"], baseline["final_b"]),
               "cpu_ratio": baseline["cpu_seconds"] / ours["cpu_seconds"],
               "load_average": os.getloadavg() if hasattr(os, "getloadavg") else None}
    if t_max == 1e12:
        details["recorded_final_b"] = RECORDED_FINAL_B_1E12
        details["ours_rel_difference_from_recorded"] = _relative_difference(ours["final_b"], RECORDED_FINAL_B_1E12)
    nodes = ours["nodes_fraction_of_uniform"]
    per_node = ours["nodes_per_evaluation"]
    note = (f"steps {ours['steps']} vs {baseline['steps']}, evaluations {ours['field_evaluations']} vs "
            f"{baseline['field_evaluations']}" + (f", {nodes:.2f} of the uniform order's nodes" if nodes else "")
            + (f" ({per_node:.0f} a field evaluation)" if per_node else "")
            + f"; CPU per evaluation {1e3 * ours['cpu_seconds_per_evaluation']:.1f} ms vs "
            f"{1e3 * baseline['cpu_seconds_per_evaluation']:.1f} ms"
            + f"; final b differs by {details['final_b_rel_difference']:.1e} rel.; quadrature agreement at the end "
            f"{ours['quadrature_check_digits_end']:.1f} digits ({ours['quadrature_rule'].split(' (')[0]} rule)"
            + (f"; CPU ratio {details['cpu_ratio']:.2f}, load {details['load_average'][0]:.1f}"
               if details["load_average"] else ""))
    return [row(f"30-digit flow to t = {t_max:g}, rtol 1e-9 (extrapolation vs Rodas4 at {revision})",
                ours["seconds"], f"same command at {revision} (Rodas4)", baseline["seconds"], target=TARGET,
                note=note, details=details)]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--t-max", type=float, default=None)
    parser.add_argument("--workers", type=int, default=None)
    parser.add_argument("--revision", default=REFERENCE_REVISION)
    args = parser.parse_args()
    rows = run(args.quick, t_max=args.t_max, workers=args.workers, revision=args.revision)
    print(format_rows(rows))
    print("JSON " + json.dumps(rows))


if __name__ == "__main__":
    main()
