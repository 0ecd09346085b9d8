"""The slope study on Dask: the certified b₂ of 8 corpora at each m = n ∈ {64, 128, 256, 512, 1024}, and its slope.

:func:`stumpcheck.numerics.corpus.interval.study.slope_study` on a Dask LocalCluster of two single-threaded
worker processes (``--scheduler ADDR``: an existing cluster), each corpus one job with the command's defaults
(start chosen per corpus) up to b_max = 4·(m ∧ n) (``--cap``), so that b₂ is where the obligations stop, not
the claims' target. Printed: the table of b₂ by size and seed, the log-log slope with its 95 % interval, and
one row: the study's CPU seconds (the sum of the jobs', each measured in its worker with getrusage) against
30 min on 2 cores (3600 CPU s; target ≤ 1). ``--quick``: sizes 64 and 128, 3 corpora.

Usage: python -m benchmarks.bench_interval_slope [--quick] [--scheduler ADDR] [--json FILE]
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

if __package__ in (None, ""):
    sys.path[:0] = [str(Path(__file__).resolve().parent.parent)]
from benchmarks.rows import format_rows, row  # noqa: E402

SIZES = (64, 128, 256, 512, 1024)


def study(quick: bool = False, *, scheduler: str = "local", workers: int = 2, cap: int = 4) -> dict:
    from stumpcheck.numerics import scheduling
    from stumpcheck.numerics.corpus.interval.study import slope_study

    sizes, corpora = ((64, 128), 3) if quick else (SIZES, 8)
    chosen = scheduling.connect(scheduler, workers if scheduler == scheduling.LOCAL_CLUSTER else None)
    wall = time.perf_counter()
    try:
        with scheduling.using(chosen):
            result = slope_study(sizes, corpora, cap=cap, workers=workers)
    finally:
        chosen.close()
    result["wall_seconds"] = round(time.perf_counter() - wall, 1)
    result["cpu_seconds"] = round(sum(r.get("cpu_seconds", 0.0) for r in result["rows"]), 1)
    result["where"] = chosen.describe()
    return result


def run(quick: bool = False) -> list[dict]:
    from stumpcheck.numerics.corpus.interval.study import study_table

    result = study(quick)
    print(study_table(result))
    s = result["slope"] or {"exponent": float("nan"), "ci95": [float("nan")] * 2}
    return [row(f"slope study ({len(result['rows'])} corpora, cap {result['cap']}·(m∧n)), CPU", result["cpu_seconds"],
                "30 min on 2 cores (3600 CPU s)", 3600.0, kind="ours/bound", target=("<=", 1.0),
                note=f"slope {s['exponent']:.2f} [{s['ci95'][0]:.2f}, {s['ci95'][1]:.2f}]; {result['wall_seconds']} s wall "
                     f"on {result['where']}", details=result)]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--scheduler", default="local")
    parser.add_argument("--cap", type=int, default=4)
    parser.add_argument("--json", default=None, metavar="FILE")
    args = parser.parse_args(argv)
    from stumpcheck.numerics.corpus.interval.study import study_table

    result = study(args.quick, scheduler=args.scheduler, cap=args.cap)
    print(study_table(result))
    s = result["slope"] or {"exponent": float("nan"), "ci95": [float("nan")] * 2}
    print(format_rows([row(f"slope study ({len(result['rows'])} corpora), CPU", result["cpu_seconds"],
                           "30 min on 2 cores (3600 CPU s)", 3600.0, kind="ours/bound", target=("<=", 1.0),
                           note=f"slope {s['exponent']:.2f} [{s['ci95'][0]:.2f}, {s['ci95'][1]:.2f}]; "
                                f"{result['wall_seconds']} s wall")]))
    if args.json:
        Path(args.json).write_text(json.dumps(result, indent=1, default=str), encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
