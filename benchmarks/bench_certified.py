"""Certified workloads: CPU seconds against the float64 computation each certifies and against the previous method.

Usage: python -m benchmarks.bench_certified [--quick] [--revision REV]

Workloads (each a fresh ``python -m stumpcheck …`` process; CPU = user + system of it and of the workers it
reaps, from ``getrusage(RUSAGE_CHILDREN)``; wall seconds in the details):

* **tube**: ``flow --certified`` from (a₀, b₀) = (10, 10) to T (full: T = 10⁶ with ``--rel-goal 1e-6``);
* **region**: ``region --b-max B`` (full: B = 1000);
* **lemmas**: ``verify --certified --only …`` (full: the six built-in lemmas under ``--full``, their whole
  domains; quick: ``leading_loss`` on its quick sub-domain b ∈ [20, 20.25], one θ-integral lemma);
* **recheck**: ``recheck`` of the tube's certificate just written;
* **verify --full** (full mode only): the whole command, with the tube and the region.

Each runs from this checkout and from a ``git archive`` export of the reference revision
(:data:`REFERENCE_REVISION`, "the commit before the fast layer was wired into the certified workloads"; default
30bf87c, overridden by ``--revision`` or the environment variable STUMPCHECK_BENCH_CERTIFIED_REFERENCE), one
after the other in the same run. The export is kept under the temporary folder
(``stumpcheck-bench-revisions/<commit>``) so that its numba cache stays warm; a new export first runs an
untimed tube to T = 1, which compiles its kernels (the details say whether the export was made in this run).

Rows per workload: ours against the reference (baseline/ours: the speed-up); ours against the float64
computation it certifies, timed in this process (ours/bound): the float64 flow to T, one solve (as
``benchmarks.bench_flow`` times it), for the tube; the float64 θ-integrals L, ∇L
(:func:`stumpcheck.numerics.population.one_head_float64.loss_gradient_hessian`, or e(θ) in float64 for a
pointwise margin) at the midpoint of every leaf box of the certificates written, for the region and the lemmas;
and, for the recheck, its CPU against the tube proof's (target ≤ 1, "no longer than its proof"). In full mode
the issue's targets: tube ≤ 60 s CPU, region ≤ 60 s CPU, the six lemmas ≤ 2 min wall, ``verify --full``
≤ 10 min wall (rows against the budget: ours/bound ≤ 1), tube / float64 ≤ 10³. Quick mode (small
sub-ranges: T = 10, B = 35, one lemma's quick sub-domain; about a minute of CPU for both revisions) keeps the
scale-free target only (recheck ≤ proof); its other rows are informative, since start-up costs (imports, the
numba cache) weigh more there than on the full workloads. A command that fails is a row that says so
(not comparable), not an error of the module.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

if __package__ in (None, ""):  # run as a script
    sys.path[:0] = [str(Path(__file__).resolve().parent.parent)]
from benchmarks.revision import REPO, export_revision  # noqa: E402
from benchmarks.rows import format_rows, row  # noqa: E402

#: The commit before the fast layer was wired into the certified workloads (the previous method: Arb).
REFERENCE_REVISION = os.environ.get("STUMPCHECK_BENCH_CERTIFIED_REFERENCE", "30bf87c")
#: Whether full mode also runs the reference's ``verify --full`` (about 40 min at 30bf87c): "0" leaves it out,
#: so that verify --full is measured against its budget only (``--no-reference-verify``)
REFERENCE_VERIFY = os.environ.get("STUMPCHECK_BENCH_REFERENCE_VERIFY", "1") != "0"

SIX_LEMMAS = ("interior_error_bound", "leading_loss", "progress_direction", "bulk_error", "right_layer",
              "label_encoding")
#: sizes of the workloads: quick sub-ranges, and the issue's workloads
SIZES = {
    True: {"tube_t": "10", "rel_goal": "1e-4", "region_b": "35", "lemmas": ("leading_loss",), "verify": "--quick"},
    False: {"tube_t": "1e6", "rel_goal": "1e-6", "region_b": "1000", "lemmas": SIX_LEMMAS, "verify": "--full"},
}
#: the issue's targets (full mode): CPU seconds (tube, region), wall seconds (lemmas, verify --full)
BUDGETS = {"tube": ("cpu", 60.0), "region": ("cpu", 60.0), "lemmas": ("wall", 120.0), "verify_full": ("wall", 600.0)}
TUBE_OVER_FLOAT64 = 1e3


def _commit(revision: str) -> str:
    done = subprocess.run(["git", "-C", str(REPO), "rev-parse", "--verify", f"{revision}^{{commit}}"],
                          capture_output=True, text=True)
    if done.returncode != 0:
        raise RuntimeError(f"unknown revision {revision}: {done.stderr.strip()}")
    return done.stdout.strip()


def reference_source(revision: str) -> tuple[Path, bool]:
    """(the exported source of ``revision``, True if it was exported now): kept between runs so that its numba
    cache stays warm."""
    commit = _commit(revision)
    home = Path(tempfile.gettempdir()) / "stumpcheck-bench-revisions"
    target = home / commit
    if (target / "src" / "stumpcheck").is_dir():
        return target / "src", False
    home.mkdir(parents=True, exist_ok=True)
    source = export_revision(commit, into=home)
    for name in ("theory", "numerics"):  # pyproject maps these folders into the package: so does the export
        if (source / name).is_dir() and not (source / "stumpcheck" / name).exists():
            (source / "stumpcheck" / name).symlink_to(Path("..") / name)
    shutil.rmtree(target, ignore_errors=True)
    source.parent.rename(target)
    return target / "src", True


def _command(argv: list[str], source: Path | None, cwd: Path) -> dict:
    """Run ``python -m stumpcheck argv`` (``source`` first on PYTHONPATH when given): wall and CPU seconds,
    exit status and the tail of its output."""
    environment = dict(os.environ)
    if source is not None:
        environment["PYTHONPATH"] = os.pathsep.join([str(source), environment.get("PYTHONPATH", "")]).rstrip(
            os.pathsep)
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    done = subprocess.run([sys.executable, "-m", "stumpcheck", *argv], cwd=cwd, env=environment,
                          capture_output=True, text=True)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return {"argv": argv, "wall_seconds": round(wall, 3), "cpu_seconds": round(cpu, 3),
            "exit_status": done.returncode, "output_tail": (done.stdout + done.stderr)[-600:]}


def _best_cpu(fn, repeats: int = 3) -> float:
    """Least process CPU seconds of ``repeats`` calls of ``fn`` (after one untimed call)."""
    fn()
    best = math.inf
    for _ in range(repeats):
        start = time.process_time()
        fn()
        best = min(best, time.process_time() - start)
    return best


def _float64_tube(t_max: float) -> float:
    from benchmarks.bench_flow import _ours_one_solve
    from stumpcheck.numerics.flow.run import DEFAULT_SOLVER_FLOAT64

    return _best_cpu(lambda: _ours_one_solve(t_max, DEFAULT_SOLVER_FLOAT64))


def _leaf_points(document: dict) -> list[tuple]:
    """(a, b, θ or None) at the midpoint of every leaf box of a lemma certificate (or of each obligation of a
    region certificate); leaves in coordinates without a closed-form a (``layer``) are left out."""
    from stumpcheck.numerics.generated import asymptotics_numpy as derived

    if "obligations" in document:
        return [p for item in document["obligations"].values() for p in _leaf_points(item)]
    coordinates = (document.get("domain") or {}).get("coordinates")
    points = []
    for leaf in document.get("leaves") or []:
        mid = {name: (float(lo) + float(hi)) / 2 for name, (lo, hi) in leaf["box"].items()}
        b = mid["b"]
        if coordinates == "calibration":
            a = float(derived.calibration_a(b)) + mid["lam"]
        elif coordinates == "scaled":
            a = float(derived.calibration_a(b)) + mid["w"] / b
        elif coordinates == "excess":
            a = b + mid["excess"]
        else:
            continue
        points.append((a, b, mid.get("theta")))
    return points


def _float64_at_leaves(documents: list[dict]) -> tuple[float, int]:
    """(least CPU seconds, points) of the float64 values the certificates enclose, at their leaves' midpoints:
    L and ∇L for a θ-integral margin, e(θ) for a pointwise one."""
    import numpy as np

    from stumpcheck.numerics.generated import population_numpy
    from stumpcheck.numerics.population.one_head_float64 import loss_gradient_hessian

    points = [p for document in documents for p in _leaf_points(document)]

    def evaluate():
        for a, b, theta in points:
            if theta is None:
                loss_gradient_hessian(a, b, hessian=False)
            else:
                with np.errstate(all="ignore"):
                    population_numpy.error_one_head(a, b, np.array([theta]))

    return (_best_cpu(evaluate) if points else math.nan), len(points)


def _read_json(path: Path) -> dict:
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}


def _tube_summary(out: Path) -> dict:
    summary = _read_json(out / "tube.json")
    keep = ("complete", "valid_to_t", "intervals", "workers")
    result = {k: summary[k] for k in keep if k in summary}
    result["relative_width_b_at_T"] = (summary.get("enclosure_at_t_max") or {}).get("relative_width_b")
    return result


def _tube_note(ours: dict, reference: dict) -> str:
    def text(run):
        tube = run.get("tube", {})
        width = tube.get("relative_width_b_at_T")
        return (f"{'complete' if tube.get('complete') else 'INCOMPLETE'}, {tube.get('intervals', '?')} intervals, "
                f"relative width in b at T {width:.1e}" if isinstance(width, float) else "no tube.json")

    return f"ours: {text(ours)}; reference: {text(reference)}"


def _speedup_row(name: str, ours: dict, reference: dict, revision: str, measure: str = "cpu") -> dict:
    key = f"{measure}_seconds"
    result = row(f"{name} vs the same command at {revision[:7]}", ours[key], f"{name} at {revision[:7]}",
                 reference[key], kind="baseline/ours", note=f"{measure.upper()} seconds, one run each",
                 details={"ours": ours, "reference": reference})
    return _comparable(result, ours, reference)


def _comparable(result: dict, *runs: dict) -> dict:
    failed = [r for r in runs if r.get("exit_status") not in (0, None)]
    if failed:
        result["met"] = None if result["met"] is None else False
        result["note"] = "not comparable: " + "; ".join(
            f"{' '.join(r['argv'][:2])} exited {r['exit_status']}" for r in failed)
    return result


def _budget_row(name: str, workload: str, ours: dict) -> dict:
    measure, seconds = BUDGETS[workload]
    result = row(f"{name}: {measure.upper()} seconds against the issue's target", ours[f"{measure}_seconds"],
                 f"target {seconds:g} s {measure.upper()}", seconds, kind="ours/bound", target=("<=", 1.0),
                 note=f"wall {ours['wall_seconds']:.1f} s, CPU {ours['cpu_seconds']:.1f} s", details={"ours": ours})
    return _comparable(result, ours)


def run(quick: bool = False, revision: str | None = None, reference_verify: bool | None = None) -> list[dict]:
    """The rows of the certified workloads (module docstring), ours and the reference in one run;
    ``reference_verify`` False (default: :data:`REFERENCE_VERIFY`) leaves out the reference's verify --full."""
    revision = revision or REFERENCE_REVISION
    reference_verify = REFERENCE_VERIFY if reference_verify is None else reference_verify
    size = SIZES[bool(quick)]
    source, exported_now = reference_source(revision)
    work = Path(tempfile.mkdtemp(prefix="bench-certified-"))
    rows = []
    try:
        if exported_now:  # untimed: a fresh export compiles its numba kernels on first use
            _command(["flow", "--certified", "--t-max", "1", "--quiet", "--out", str(work / "warm-up")], source, work)
        runs = {}
        for side, src in (("reference", source), ("ours", None)):
            out = work / side
            tube_out, region_out, lemma_out = out / "tube", out / "region", out / "lemmas"
            runs[side] = {
                "tube": _command(["flow", "--certified", "--t-max", size["tube_t"], "--rel-goal", size["rel_goal"],
                                  "--quiet", "--out", str(tube_out)], src, work),
                "region": _command(["region", "--b-max", size["region_b"], "--out", str(region_out)], src, work),
                "lemmas": _command(["verify", size["verify"], "--certified", "--only", ",".join(size["lemmas"]),
                                    "--out", str(lemma_out)], src, work),
            }
            runs[side]["recheck"] = _command(["recheck", str(tube_out / "flow_certificate.json")], src, work)
            runs[side]["tube"]["tube"] = _tube_summary(tube_out)
            if not quick and (side == "ours" or reference_verify):
                runs[side]["verify_full"] = _command(["verify", "--full", "--out", str(out / "verify")], src, work)
        ours, reference = runs["ours"], runs["reference"]
        revision_note = {"revision": revision, "exported_in_this_run": exported_now}
        ours_out = work / "ours"

        t_max = float(size["tube_t"])
        tube_name = f"tube (10, 10) -> {size['tube_t']}"
        rows.append(_speedup_row(tube_name, ours["tube"], reference["tube"], revision))
        float64_tube = _float64_tube(t_max)
        target = None if quick else ("<=", TUBE_OVER_FLOAT64)
        rows.append(_comparable(row(f"{tube_name} vs the float64 flow it certifies", ours["tube"]["cpu_seconds"],
                                    f"float64 flow to {size['tube_t']}, one solve (in process)", float64_tube,
                                    kind="ours/bound", target=target,
                                    note=_tube_note(ours["tube"], reference["tube"]), details=revision_note),
                                ours["tube"]))

        region_name = f"region b in [30, {size['region_b']}]"
        rows.append(_speedup_row(region_name, ours["region"], reference["region"], revision))
        region_doc = _read_json(ours_out / "region" / "region_certificate.json")
        f64, count = _float64_at_leaves([region_doc])
        rows.append(_comparable(row(f"{region_name} vs float64 L, grad L at its leaves", ours["region"]["cpu_seconds"],
                                    f"float64 L, grad L at {count} leaf midpoints", f64, kind="ours/bound",
                                    note=f"{count} leaves"), ours["region"]))

        lemma_name = ("lemma leading_loss certified, b in [20, 20.25]" if quick
                      else "the six built-in lemmas certified, whole domains")
        rows.append(_speedup_row(lemma_name, ours["lemmas"], reference["lemmas"], revision,
                                 measure="cpu" if quick else "wall"))
        lemma_docs = [_read_json(p) for p in sorted((ours_out / "lemmas").glob("*.certificate.json"))]
        f64, count = _float64_at_leaves(lemma_docs)
        rows.append(_comparable(row(f"{lemma_name} vs float64 at its leaves", ours["lemmas"]["cpu_seconds"],
                                    f"float64 values at {count} leaf midpoints", f64, kind="ours/bound",
                                    note=f"{len(lemma_docs)} certificates, {count} leaves"), ours["lemmas"]))

        recheck_name = f"recheck of the tube to {size['tube_t']}"
        rows.append(_speedup_row(recheck_name, ours["recheck"], reference["recheck"], revision))
        rows.append(_comparable(row(f"{recheck_name} vs its proof", ours["recheck"]["cpu_seconds"],
                                    "the tube's proof (CPU, this run)", ours["tube"]["cpu_seconds"],
                                    kind="ours/bound", target=("<=", 1.0),
                                    note=f"reference: recheck {reference['recheck']['cpu_seconds']:.1f} s, "
                                         f"proof {reference['tube']['cpu_seconds']:.1f} s CPU"),
                                ours["recheck"], ours["tube"]))

        if not quick and "verify_full" in reference:
            rows.append(_speedup_row("verify --full", ours["verify_full"], reference["verify_full"], revision,
                                     measure="wall"))
        if not quick:
            for workload, name in (("tube", tube_name), ("region", region_name), ("lemmas", lemma_name),
                                   ("verify_full", "verify --full")):
                rows.append(_budget_row(name, workload, ours[workload]))
            if "verify_full" not in reference:
                rows[-1]["note"] += "; the reference's verify --full was not run (--no-reference-verify)"
        for r in rows:
            r["details"].setdefault("revision", revision_note)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return rows


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="small sub-ranges (about a minute of CPU)")
    parser.add_argument("--revision", default=None,
                        help=f"the previous method's revision (default {REFERENCE_REVISION})")
    parser.add_argument("--no-reference-verify", action="store_true",
                        help="leave out the reference's verify --full (about 40 min): verify --full against its "
                             "budget only")
    args = parser.parse_args(argv)
    print(format_rows(run(args.quick, args.revision, reference_verify=False if args.no_reference_verify else None)))


if __name__ == "__main__":
    main()
