"""The corpus interval at scale: ``stumpcheck interval`` to its target and its re-check, in CPU seconds.

Rows (the machine is shared, so every figure is CPU seconds, user + system, of the command's process and
its children: ``resource.getrusage``; wall seconds are in the details):

* **proof**: ``stumpcheck interval --m 1024 --n 1024 --seed 0`` with the defaults (target (m ∧ n)/2 = 512,
  start chosen per corpus) against the *unit*, one plain numpy L̂ + ∇L̂ at m = n = 1024 on one thread
  (the baseline, imports nothing of ours, timed in this run: best of 5); target ≤ 3000 units.
* **re-check**: ``stumpcheck recheck`` of that certificate against the proof's own CPU seconds; target ≤ 1.
* **4096²** (not with ``--quick``; ``--no-4096`` skips it): the same command at m = n = 4096 against
  10 min on 2 cores (1200 CPU s); the row's seconds are CPU seconds, so on an idle 2-core machine its
  wall time is about half of them.
* ``--before REV``: the same 1024² command from an export of revision REV (before this work) with
  ``--b-max 512 --b-start 8``, for the before/after figure (long: about 10 min of CPU).

``--quick``: m = n = 256 (target (m ∧ n)/2 = 128), the same rows against the unit at 256².

Usage: python -m benchmarks.bench_interval [--quick] [--no-4096] [--before REV]
"""

from __future__ import annotations

import argparse
import json
import re
import resource
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

if __package__ in (None, ""):
    sys.path[:0] = [str(Path(__file__).resolve().parent.parent)]
from benchmarks.rows import format_rows, row  # noqa: E402


def _cpu_children() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def _cpu_self() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def unit_seconds(size: int, repeats: int = 5) -> float:
    """CPU seconds of one plain numpy L̂ + ∇L̂ (one head) at m = n = size (best of ``repeats``)."""
    rng = np.random.default_rng(size)
    x = rng.uniform(0, 1, (size, size))
    theta = rng.uniform(0, 1, size)
    y = (x >= theta[:, None]).astype(float)

    def value_and_gradient(a: float, b: float):
        s = a * y - b * x
        s -= s.max(axis=1, keepdims=True)
        w = np.exp(s)
        alpha = w / w.sum(axis=1, keepdims=True)
        th = (alpha * x).sum(axis=1)
        e = th - theta
        cov = (alpha * x * y).sum(axis=1) - th * (alpha * y).sum(axis=1)
        var = (alpha * x * x).sum(axis=1) - th * th
        return 0.5 * np.mean(e * e), np.mean(e * cov), -np.mean(e * var)

    value_and_gradient(10.0, 8.0)
    best = float("inf")
    for _ in range(repeats):
        start = _cpu_self()
        value_and_gradient(10.0, 8.0)
        best = min(best, _cpu_self() - start)
    return best


def _command(argv: list[str], *, source: Path | None = None, timeout: float = 7200) -> tuple[float, float, object]:
    """(CPU s, wall s, completed process) of ``python -m stumpcheck argv`` (``source``: an exported revision)."""
    import os
    import subprocess

    env = dict(os.environ)
    if source is not None:
        env["PYTHONPATH"] = os.pathsep.join([str(source), env.get("PYTHONPATH", "")]).rstrip(os.pathsep)
    cpu, wall = _cpu_children(), time.perf_counter()
    done = subprocess.run([sys.executable, "-m", "stumpcheck", *argv], capture_output=True, text=True, env=env,
                          timeout=timeout)
    return _cpu_children() - cpu, time.perf_counter() - wall, done


def _proof_rows(size: int, unit: float, folder: Path, *, target_units: float | None, bound_s: float | None):
    out = folder / f"interval{size}"
    cpu, wall, done = _command(["interval", "--m", str(size), "--n", str(size), "--seed", "0", "--out", str(out),
                                "--quiet"])
    last = (done.stdout.strip().splitlines() or [""])[-1]
    match = re.search(r"PROVED b in \[([0-9/]+), ([0-9.e+]+)\]", last)
    details = {"m": size, "n": size, "seed": 0, "exit": done.returncode, "wall_s": round(wall, 1),
               "line": last[:400], "stderr": done.stderr[-400:]}
    b_end = match.group(2) if match else "none"
    note = f"exit {done.returncode}, b_end {b_end} (target {size // 2}); {wall:.0f} s wall"
    rows = []
    if target_units is not None:
        rows.append(row(f"interval m = n = {size} to (m∧n)/2, CPU", cpu, f"numpy L̂ + ∇L̂ at {size}² (one unit)",
                        unit, kind="ours/bound", target=("<=", target_units), note=note, details=details))
    else:
        rows.append(row(f"interval m = n = {size} to (m∧n)/2, CPU", cpu, "10 min on 2 cores (1200 CPU s)",
                        bound_s, kind="ours/bound", target=("<=", 1.0), note=note, details=details))
    cert = out / "interval_certificate.json"
    if cert.exists():
        rcpu, rwall, rdone = _command(["recheck", str(cert), "--corpus", str(out / "corpus.npz")])
        rows.append(row(f"recheck of the m = n = {size} certificate, CPU", rcpu, "the proof's CPU", cpu,
                        kind="ours/bound", target=("<=", 1.0),
                        note=f"exit {rdone.returncode}; {rwall:.0f} s wall",
                        details={"exit": rdone.returncode, "line": rdone.stdout[-400:]}))
    return rows


def run(quick: bool = False, *, big: bool = True, before: str | None = None) -> list[dict]:
    size = 256 if quick else 1024
    unit = unit_seconds(size)
    rows = []
    with tempfile.TemporaryDirectory(prefix="bench-interval-") as tmp:
        folder = Path(tmp)
        rows += _proof_rows(size, unit, folder, target_units=3000.0, bound_s=None)
        if before:
            from benchmarks.revision import export_revision
            source = export_revision(before, into=tmp)
            cpu, wall, done = _command(["interval", "--m", str(size), "--n", str(size), "--seed", "0", "--b-start",
                                        "8", "--b-max", str(size // 2), "--out", str(folder / "before"), "--quiet"],
                                       source=source)
            rows.append(row(f"interval m = n = {size} at {before} (before), CPU", cpu,
                            f"numpy L̂ + ∇L̂ at {size}² (one unit)", unit, kind="ours/bound",
                            note=f"exit {done.returncode}; {wall:.0f} s wall; "
                                 + (done.stdout.strip().splitlines() or [""])[-1][:200]))
        if big and not quick:
            rows += _proof_rows(4096, unit_seconds(4096, repeats=2), folder, target_units=None, bound_s=1200.0)
    return rows


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--no-4096", dest="big", action="store_false")
    parser.add_argument("--before", default=None, metavar="REV")
    parser.add_argument("--json", default=None, metavar="FILE")
    args = parser.parse_args(argv)
    rows = run(quick=args.quick, big=args.big, before=args.before)
    print(format_rows(rows))
    if args.json:
        Path(args.json).write_text(json.dumps(rows, indent=1, default=str), encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
