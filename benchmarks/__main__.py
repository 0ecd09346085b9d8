"""``python -m benchmarks``: run every benchmark module, print one table, write the rows as JSON.

Each module in :data:`MODULES` exposes ``run(quick: bool = False) -> list[dict]`` (rows made by
:func:`benchmarks.rows.row`: a ratio against a baseline timed in the same run, and its target). The
JSON file holds the rows and the provenance of the run: package versions, commit, machine, CPU
count and the load average before and after, since a ratio measured on a busy machine is not the
ratio of an idle one. A module that raises is reported as an error row and makes the exit status 1;
a missed target is a result (the table says by how much), not an error.
"""

from __future__ import annotations

import argparse
import importlib
import json
import math
import os
import sys
import time
import traceback
from pathlib import Path

from benchmarks.rows import format_rows

MODULES = ("bench_certified", "bench_dask", "bench_empirical", "bench_fast", "bench_fast_corpus", "bench_flow",
           "bench_flow30", "bench_fresh_exact", "bench_interval", "bench_interval_slope", "bench_population",
           "bench_startup", "bench_train_certify", "bench_verified_loss", "bench_verify")


def _load() -> tuple[float, float, float]:
    try:
        return os.getloadavg()
    except OSError:
        return (math.nan,) * 3


def _provenance(**extra) -> dict:
    try:
        from stumpcheck.numerics.provenance import provenance
    except ImportError:  # the harness still runs from a broken tree, and says so
        return {"provenance": "unavailable", **extra}
    return provenance(**extra)


def _error_row(module: str, message: str) -> dict:
    return {"name": f"{module}: error", "ours_s": None, "baseline": "", "baseline_s": None, "kind": "",
            "ratio": math.nan, "target": None, "met": None, "note": message, "details": {}}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks", description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="short horizons and small sizes (a minute per module)")
    parser.add_argument("--only", default=",".join(MODULES),
                        help=f"comma-separated modules to run (default: all of {', '.join(MODULES)})")
    parser.add_argument("--out", default="benchmarks/results.json", help="JSON file to write (default: %(default)s)")
    parser.add_argument("--reference", default=None,
                        help="revision for the 'today's commit' rows (default: benchmarks.revision.REFERENCE_REVISION)")
    args = parser.parse_args(argv)
    modules = [m.strip() for m in args.only.split(",") if m.strip()]
    unknown = [m for m in modules if m not in MODULES]
    if unknown:
        print(f"error: unknown benchmark module {', '.join(unknown)}; expected some of {', '.join(MODULES)}",
              file=sys.stderr)
        return 2
    out = Path(args.out)
    try:
        out.parent.mkdir(parents=True, exist_ok=True)
        with open(out, "a"):
            pass
    except OSError as exc:
        print(f"error: cannot write {out}: {exc.strerror}", file=sys.stderr)
        return 2
    if args.reference:
        os.environ["STUMPCHECK_BENCH_REFERENCE"] = args.reference

    load_before = _load()
    if load_before[0] > 0.5:
        print(f"warning: load average {load_before[0]:.2f} at start; ratios of a busy machine are not "
              "those of an idle one", file=sys.stderr)
    rows, failed, seconds = [], [], {}
    for module in modules:
        start = time.perf_counter()
        try:
            bench = importlib.import_module(f"benchmarks.{module}")
            got = bench.run(quick=args.quick)
        except Exception as exc:  # noqa: BLE001  (reported as an error row, exit 1)
            failed.append(module)
            rows.append(_error_row(module, f"{type(exc).__name__}: {exc}"))
            traceback.print_exc(file=sys.stderr)
            got = []
        for r in got:
            r["module"] = module
        rows.extend(got)
        seconds[module] = round(time.perf_counter() - start, 1)
        print(f"{module}: {len(got)} rows in {seconds[module]} s", file=sys.stderr)
    load_after = _load()

    print(format_rows(rows))
    targets = [r for r in rows if r["met"] is not None]
    met = sum(r["met"] for r in targets)
    print(f"\n{met} of {len(targets)} targets met; load average {load_before[0]:.2f} before, "
          f"{load_after[0]:.2f} after; {os.cpu_count()} CPUs; quick={args.quick}")
    from benchmarks.revision import REFERENCE_REVISION
    payload = {"rows": rows, "targets_met": met, "targets": len(targets), "quick": args.quick,
               "module_seconds": seconds, "errors": failed,
               "provenance": _provenance(cpus=os.cpu_count(), load_before=load_before, load_after=load_after,
                                         reference_revision=os.environ.get("STUMPCHECK_BENCH_REFERENCE",
                                                                           REFERENCE_REVISION))}
    out.write_text(json.dumps(payload, indent=1, sort_keys=True, default=str, allow_nan=True) + "\n")
    print(f"wrote {out}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
