"""``stumpcheck verify --quick``: this checkout against revision 1b42087, measured in the same run.

``run(quick)``: wall seconds of ``python -m stumpcheck verify --quick --out DIR`` from this checkout
and from a ``git archive`` export of the reference revision (:mod:`benchmarks.revision`), run one
after the other (baseline first), target baseline/ours ≥ 2. The details carry both runs' exit
status, PASS count and per-row seconds (from results.json). With ``quick=True`` only ``--only C1``
runs (about a minute for both), the row that the certified C1 changed; the whole ``verify --quick``
takes minutes. A second row times the first run in a new environment: the same command with numba's cache in an
empty folder (``NUMBA_CACHE_DIR``: every compiled kernel it needs is compiled in the run) against the run right
after it with that cache now filled (target cold/warm ≤ 1.3). Another row does what README's install line does
in a new empty cache: the install step's ``python -m stumpcheck.numerics.kernel_warmup`` (its seconds in the
note), then the first ``verify --quick``, against the run right after it (target ≤ 1.3); it also lists the
compiled kernels' files (numba's index and data files) that the first run adds to the cache the step filled:
none, or the row is not met (the step left kernels to compile). Both rows start from a new empty cache of the
translated fast kernels too (``STUMPCHECK_CACHE``), as a new machine does. A fourth row times ``verify --quick``
(quick=True: ``--only C2,C3,C4,C5``) against the revision before C2–C5 were decided by proofs (:data:`BEFORE_PROOFS`): the
budget is that run's time + 30 s (its re-check of the committed certificate and C5's certified verdict may add at
most that). ``--full`` adds ``verify --full`` against its budget of 10 min (wall). Usage: ``python
benchmarks/bench_verify.py [--quick] [--full]``, or ``--rows proofs,full`` for only those two rows.
"""

from __future__ import annotations

import json
import os
import resource
import shutil
import sys
import tempfile
from pathlib import Path

if __package__ in (None, ""):  # run as a script
    sys.path[:0] = [str(Path(__file__).resolve().parent.parent)]
from benchmarks.revision import export_revision, timed_run  # noqa: E402
from benchmarks.rows import format_rows, row  # noqa: E402

REFERENCE = "1b42087"
#: the revision before C2–C5 were decided by proofs: verify --quick may take at most QUICK_ALLOWANCE s more
BEFORE_PROOFS = os.environ.get("STUMPCHECK_BENCH_BEFORE_PROOFS", "13a1763")
QUICK_ALLOWANCE = 30.0
#: verify --full's budget (wall seconds)
FULL_BUDGET = 600.0


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


def _runs(prefix: str, variants, extra: list[str], after_each=None) -> dict:
    """{name: (wall seconds, summary)} of ``verify --quick`` (``verify --full`` if ``extra`` has it) for each (name, source, environment) in turn, in a
    new temporary folder (removed after); ``after_each(name)`` is called after each run."""
    work = Path(tempfile.mkdtemp(prefix=prefix))
    try:
        runs = {}
        for name, source, environment in variants(work):
            out_dir = work / f"out-{name}"
            mode = [] if "--full" in extra else ["--quick"]
            before = resource.getrusage(resource.RUSAGE_CHILDREN)
            seconds, done = timed_run(["-m", "stumpcheck", "verify", *mode, *extra, "--out", str(out_dir)],
                                      source=source, cwd=work, env=environment)
            after = resource.getrusage(resource.RUSAGE_CHILDREN)
            summary = _summary(out_dir, done)
            # CPU of the run and its workers: steadier than wall seconds on a shared machine
            summary["cpu_seconds"] = round(after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime, 1)
            runs[name] = (seconds, summary)
            if after_each is not None:
                after_each(name)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return runs


def run(quick: bool = False) -> list[dict]:
    """Two rows: verify --quick (quick=True: --only C1) against the reference revision, and cold against warm."""
    extra = ["--only", "C1"] if quick else []
    runs = _runs("bench-verify-", lambda work: (("baseline", export_revision(REFERENCE, into=work), None),
                                                ("ours", None, None)), extra)
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
    return [result, _cold_start(extra), installed_row(extra), proofs_row(quick)]


def proofs_row(quick: bool = False) -> dict:
    """verify --quick (quick: --only C2,C3,C4,C5) against the same at :data:`BEFORE_PROOFS` plus 30 s."""
    extra = ["--only", "C2,C3,C4,C5"] if quick else []
    runs = _runs("bench-verify-proofs-", lambda work: (("before", export_revision(BEFORE_PROOFS, into=work), None),
                                                       ("ours", None, None)), extra)
    label = "verify --quick" + (" --only C2,C3,C4,C5" if quick else "") + " (C2–C5 decided by proofs)"
    result = row(label, runs["ours"][0], f"the same at {BEFORE_PROOFS} + {QUICK_ALLOWANCE:g} s",
                 runs["before"][0] + QUICK_ALLOWANCE, kind="ours/bound", target=("<=", 1),
                 note=(f"wall seconds, one run each; before: {runs['before'][0]:.1f} s; CPU "
                       f"{runs['ours'][1].get('cpu_seconds')} s against {runs['before'][1].get('cpu_seconds')} s"),
                 details={"ours": runs["ours"][1], "before": runs["before"][1], "revision": BEFORE_PROOFS})
    if runs["ours"][1]["exit_status"] != 0:
        result["met"] = False
        result["note"] = f"ours exited {runs['ours'][1]['exit_status']}: not comparable"
    return result


def full_row() -> dict:
    """verify --full (wall) against its budget of :data:`FULL_BUDGET` seconds."""
    runs = _runs("bench-verify-full-", lambda work: (("ours", None, None),), ["--full"])
    result = row("verify --full", runs["ours"][0], "budget", FULL_BUDGET, kind="ours/bound", target=("<=", 1),
                 note="wall seconds, one run", details={"ours": runs["ours"][1]})
    if runs["ours"][1]["exit_status"] != 0:
        result["met"] = False
        result["note"] = f"exited {runs['ours'][1]['exit_status']}"
    return result


def _cold_start(extra: list[str]) -> dict:
    """verify --quick with an empty numba cache (compiling) against the same command right after (cache warm)."""
    def variants(work):
        environment = _new_caches(work)
        return (("cold", None, environment), ("warm", None, environment))

    runs = _runs("bench-verify-cold-", variants, extra)
    label = "verify --quick" + (" --only C1" if extra else "") + ", empty numba cache (first run)"
    result = row(label, runs["cold"][0], "the same, cache warm", runs["warm"][0], kind="ours/bound",
                 target=("<=", 1.3),
                 note="wall seconds, one run each; NUMBA_CACHE_DIR (and STUMPCHECK_CACHE) a new empty folder",
                 details={"cold": runs["cold"][1], "warm": runs["warm"][1]})
    if any(r[1]["exit_status"] != 0 for r in runs.values()):
        result["met"] = False
        result["note"] = "a run exited non-zero: not comparable"
    return result


def _new_caches(work: Path) -> dict:
    """The environment of a new machine: numba's cache (``NUMBA_CACHE_DIR``) and the translated fast kernels'
    folder (``STUMPCHECK_CACHE``, certified/fast/generated_integrands.py) new empty folders under ``work``."""
    return dict(os.environ, NUMBA_CACHE_DIR=str(work / "numba-cache"), STUMPCHECK_CACHE=str(work / "stumpcheck-cache"))


def kernel_files(cache: Path) -> set[str]:
    """The compiled kernels' files under numba's cache folder ``cache``: index (.nbi) and data (.nbc) files,
    as paths relative to it."""
    if not cache.exists():
        return set()
    return {p.relative_to(cache).as_posix() for p in cache.rglob("*") if p.is_file() and p.suffix in (".nbi", ".nbc")}


def installed_row(extra: list[str]) -> dict:
    """README's install line in a new empty numba cache: the warm-up step (timed, in the note), then the first
    ``verify --quick`` against the run right after it (both with the cache the step filled). The kernel files
    the first run adds to the cache (``details["compiled_by_first_run"]``) must be none."""
    files = {}

    def variants(work):
        environment = _new_caches(work)
        cache[0] = work / "numba-cache"
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        step[0], done = timed_run(["-m", "stumpcheck.numerics.kernel_warmup"], cwd=work, env=environment)
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        step[1] = round(after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime, 1)
        step[2] = done.returncode
        files["warm_up"] = kernel_files(cache[0])
        return (("first", None, environment), ("again", None, environment))

    step, cache = [0.0, 0.0, None], [None]
    runs = _runs("bench-verify-installed-", variants, extra,
                 after_each=lambda name: files.__setitem__(name, kernel_files(cache[0])))
    added = sorted(files["first"] - files["warm_up"])
    label = "verify --quick" + (" --only C1" if extra else "") + ", first run after the install step's warm-up"
    result = row(label, runs["first"][0], "the run right after it", runs["again"][0], kind="ours/bound",
                 target=("<=", 1.3),
                 note=(f"wall seconds, one run each; NUMBA_CACHE_DIR (and STUMPCHECK_CACHE) a new empty folder; the "
                       f"warm-up step took {step[0]:.1f} s wall, {step[1]} s CPU (it cached {len(files['warm_up'])} "
                       f"kernel files); the first run added {len(added)}"),
                 details={"first": runs["first"][1], "again": runs["again"][1],
                          "warm_up": {"seconds": round(step[0], 1), "cpu_seconds": step[1], "exit_status": step[2],
                                      "kernel_files": len(files["warm_up"])},
                          "compiled_by_first_run": added})
    if step[2] != 0 or any(r[1]["exit_status"] != 0 for r in runs.values()):
        result["met"] = False
        result["note"] = "the warm-up step or a run exited non-zero: not comparable"
    elif added:
        result["met"] = False  # the warm-up left kernels for the first run to compile
    return result


def _chosen_rows(argv: list[str]) -> list[dict]:
    """``--rows proofs,full``: only those rows (proofs_row, full_row); otherwise run() and, with --full, full_row."""
    quick = "--quick" in argv
    if "--rows" in argv:
        names = argv[argv.index("--rows") + 1].split(",")
        chosen = {"proofs": lambda: proofs_row(quick), "full": full_row}
        unknown = [n for n in names if n not in chosen]
        if unknown:
            raise SystemExit(f"bench_verify: unknown rows {', '.join(unknown)}; expected some of {', '.join(chosen)}")
        return [chosen[n]() for n in names]
    return run(quick=quick) + ([full_row()] if "--full" in argv else [])


if __name__ == "__main__":
    rows = _chosen_rows(sys.argv)
    print(format_rows(rows))
    print(json.dumps([r["details"] for r in rows], indent=1))
