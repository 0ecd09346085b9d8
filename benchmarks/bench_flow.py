"""Population flow: the float64 flow against what a user writes with scipy alone, and the 30-digit flow.

Usage: python benchmarks/bench_flow.py [--quick]            (the float64 rows, as ``python -m benchmarks``)
       python benchmarks/bench_flow.py --hp [--dps 30] [--hp-t-max 1e12] [--hp-rtol 1e-9] [--hp-workers 2]
                                       [--rtol 1e-8]       (the 30-digit flow, printed with one JSON line)

:func:`run` returns the float64 rows (benchmarks/rows.py), all from (a₀, b₀) = (10, 10) in this
process, the variants timed in turn (best of 3, one run if a run exceeds 20 s):

1. ours, one solve at rtol 1e-8 (the CLI's), the way ``run_population_flow`` solves it: the default
   float64 solver (LSODA with the exact Jacobian, at rtol/100) on the compiled field, against
   LSODA + ``scipy.integrate.quad`` on an independently typed closed form of ∇L
   (benchmarks/flow_baselines.py, no import of this project; its own breakpoints) at the same
   LSODA tolerances, both to t = 10¹⁰ (:data:`QUAD_T_MAX`: the baseline does not finish to 10¹²);
   quick: to t = 10⁴.
2. the same against LSODA + a vectorised 32-point Gauss–Legendre rule on the same independent closed
   form (geometric pieces of its own).
3. ``run_population_flow`` with the rtol/10 a-posteriori check against the same without (both with
   the diagnostics at 8 save times a decade).
4. (informative) ours with Rodas4 against ours with LSODA, one solve each: the evidence for the default.
5. ``stumpcheck flow --out D`` (to 10¹², four PNG plots) against ``--no-plots``, fresh processes, interleaved,
   best of 3 (quick: one each): the whole command's wall time with plots over without, target ≤ 4/3, i.e. the
   plots take at most a quarter of it.
6. ``stumpcheck flow`` (its defaults: to 10¹², rtol 1e-8, with the rtol/10 check, the table, the fits) against
   benchmarks/flow_prototype.py, an independent script (scipy LSODA + numpy Gauss–Legendre, importing nothing of
   this project) that prints the same (two solves, L and sup|e| at the save times, the fitted exponents): fresh
   processes, interleaved, best of 5 (quick: 2), whole-process wall time, target ≤ 1.5; the CPU seconds of each
   and the prototype's first solve alone (``--solve-only``) in the details.

Details of each row: final b, its relative difference from the 30-digit reference
(b = 1187.83397129676224326345186483 at t = 10¹², rtol 1e-9; benchmarks/README.md), field
evaluations and steps.
"""

from __future__ import annotations

import argparse
import json
import math
import time

import numpy as np

from benchmarks.rows import format_rows, row
from benchmarks.timing import best_of

#: Final b at t = 10¹² of the 30-digit flow (rtol 1e-9, Arb integrand; discretisation error ~1e-11).
REFERENCE_B_1E12 = 1187.83397129676224326345186483
RTOL = 1e-8
#: Horizon of the LSODA + quad row. To t = 10¹² that baseline did not finish in 17 minutes: from b ≈ 1000
#: on quad warns (roundoff) and its results are no longer smooth in (a, b), so LSODA's difference Jacobian
#: stalls the steps; to 10⁸ it took 9.6 s, to 10¹⁰ 17.6 s, to 10¹¹ it did not finish in 5 minutes (2-core
#: machine under load).
QUAD_T_MAX = 1e10


def _ours_one_solve(t_max: float, solver: str, rtol: float = RTOL):
    from stumpcheck.numerics.flow.field import PopulationFlowField
    from stumpcheck.numerics.flow.run import SOLVERS
    from stumpcheck.numerics.flow.stiff_float64 import ScipyMethod, solve_scipy
    from stumpcheck.numerics.flow.ode import PIController, diffeqsolve

    field = PopulationFlowField()
    method = SOLVERS[solver]
    if isinstance(method, ScipyMethod):
        sol = solve_scipy(field, method, 0.0, math.log1p(t_max), [10.0, 10.0], rtol=rtol, atol=rtol * 1e-2)
    else:
        sol = diffeqsolve(field, method, 0.0, math.log1p(t_max), [10.0, 10.0],
                          controller=PIController(rtol=rtol, atol=rtol * 1e-2), max_steps=2_000_000,
                          linearization=field.linearization)
    return {"a": float(sol.ys[-1, 0]), "b": float(sol.ys[-1, 1]), "ok": sol.status.ok, "steps": sol.accepted,
            "evaluations": sol.evaluations}


def _details(result: dict, t_max: float) -> dict:
    out = {"t_max": t_max, "final_b": result["b"], "final_a": result["a"], "steps": result["steps"],
           "field_evaluations": result["evaluations"], "reached_t_max": result["ok"]}
    if t_max == 1e12:
        out["final_b_rel_diff_30_digit_reference"] = abs(result["b"] - REFERENCE_B_1E12) / REFERENCE_B_1E12
    return out


def _field_row(calls: int = 200) -> dict:
    """One linearization (∇L, ∇²L) at b = 1200 on the calibration relation: the compiled field against
    today's generated-numpy quadrature (``loss_gradient_hessian_float64``, 24 points a piece)."""
    from stumpcheck.numerics.generated import asymptotics_numpy as derived
    from stumpcheck.numerics.population import one_head_float64
    from stumpcheck.numerics.population.quadrature import breakpoints_float64_split
    from stumpcheck.numerics.population.quantities import loss_gradient_hessian_float64

    a, b = float(derived.calibration_a(1200.0)), 1200.0

    def many(function):
        def go():
            for _ in range(calls):
                value = function(a, b)
            return value
        return go

    ours_s, ours, _ = best_of(many(one_head_float64.loss_gradient_hessian))
    old_s, old, _ = best_of(many(loss_gradient_hessian_float64))
    difference = max(float(np.max(np.abs(ours[1] - old[1])) / np.max(np.abs(old[1]))),
                     float(np.max(np.abs(ours[2] - old[2])) / np.max(np.abs(old[2]))))
    return row("float64 field (grad L, Hessian) at b = 1200, one evaluation", ours_s / calls,
               "generated numpy quadrature (today's field)", old_s / calls,
               note=f"informative; nodes {one_head_float64.quadrature_size(a, b)} vs "
               f"{24 * (len(breakpoints_float64_split(a, b)[0]) - 1)}; largest relative difference {difference:.1e}",
               details={"a": a, "b": b, "calls": calls, "max_rel_difference": difference})


def run(quick: bool = False) -> list[dict]:
    from benchmarks import flow_baselines as baselines
    from stumpcheck.numerics.flow.run import DEFAULT_SOLVER_FLOAT64, SOLVERS, run_population_flow

    scale = SOLVERS[DEFAULT_SOLVER_FLOAT64].tolerance_scale  # the baselines get the same LSODA tolerances
    lsoda_rtol, lsoda_atol = RTOL * scale, RTOL * 1e-2 * scale
    _ours_one_solve(1.0, DEFAULT_SOLVER_FLOAT64)  # load the compiled field outside the timings
    rows = []

    quad_t_max = 1e4 if quick else QUAD_T_MAX
    ours_s, ours, _ = best_of(lambda: _ours_one_solve(quad_t_max, DEFAULT_SOLVER_FLOAT64))
    warned_before = dict(baselines.QUAD_WARNINGS)
    quad_s, quad, runs = best_of(lambda: baselines.solve_lsoda(baselines.gradient_quad, quad_t_max, rtol=lsoda_rtol,
                                                               atol=lsoda_atol), repeats=1 if not quick else 3)
    quad_calls = baselines.QUAD_WARNINGS["calls"] - warned_before["calls"]
    quad_warned = baselines.QUAD_WARNINGS["warned"] - warned_before["warned"]
    rows.append(row(f"float64 flow (10,10) -> {quad_t_max:g}, one solve", ours_s, "LSODA + scipy quad (independent)",
                    quad_s, target=(">=", 25),
                    note=f"horizon {quad_t_max:g} for both ({'quick' if quick else 'LSODA + quad does not finish to 1e12'}); " +
                    f"LSODA rtol {lsoda_rtol:g} for both (ours: --rtol {RTOL:g}, run at rtol/100); "
                    f"baseline final b rel. diff. from ours {abs(quad['b'] - ours['b']) / ours['b']:.1e}; "
                    f"quad warned on {quad_warned} of {quad_calls} integrals",
                    details={"ours": _details(ours, quad_t_max),
                             "baseline": {**_details(quad, quad_t_max), "runs": runs, "quad_integrals": quad_calls,
                                          "quad_integrals_with_warnings": quad_warned}}))

    ours_s, ours, _ = best_of(lambda: _ours_one_solve(1e12, DEFAULT_SOLVER_FLOAT64))
    gl_s, gl, _ = best_of(lambda: baselines.solve_lsoda(baselines.gradient_gauss_legendre, 1e12, rtol=lsoda_rtol,
                                                        atol=lsoda_atol))
    rows.append(row("float64 flow (10,10) -> 1e12, one solve", ours_s, "LSODA + vectorised 32-point GL (independent)",
                    gl_s, target=(">=", 1),
                    note=f"LSODA rtol {lsoda_rtol:g} for both; final b rel. diff. from the 30-digit flow: ours "
                    f"{abs(ours['b'] - REFERENCE_B_1E12) / REFERENCE_B_1E12:.1e}, baseline "
                    f"{abs(gl['b'] - REFERENCE_B_1E12) / REFERENCE_B_1E12:.1e}",
                    details={"ours": _details(ours, 1e12), "baseline": _details(gl, 1e12)}))

    one_s, one, _ = best_of(lambda: run_population_flow(10.0, 10.0, 1e12, rtol=RTOL, check=False))
    checked_s, checked, _ = best_of(lambda: run_population_flow(10.0, 10.0, 1e12, rtol=RTOL, check=True,
                                                                parallel_check=True))
    # the solves alone (without the diagnostics at the save times): rtol, and rtol then rtol/10
    solve_s, _, _ = best_of(lambda: _ours_one_solve(1e12, DEFAULT_SOLVER_FLOAT64))
    both_s, _, _ = best_of(lambda: (_ours_one_solve(1e12, DEFAULT_SOLVER_FLOAT64),
                                    _ours_one_solve(1e12, DEFAULT_SOLVER_FLOAT64, rtol=RTOL / 10)))
    rows.append(row("float64 flow to 1e12 with the rtol/10 check", checked_s, "the same, one solve", one_s,
                    kind="ours/bound", target=("<=", 2.5),
                    note=f"a-posteriori max rel. difference in b {checked.a_posteriori_rel_error_b:.1e}; both with "
                    "the diagnostics (L, grad L, sup|e|) at 8 save times a decade, which dominate; the solves alone: "
                    f"{both_s / solve_s:.2f}x",
                    details={"a_posteriori_rel_error_b": checked.a_posteriori_rel_error_b,
                             "solves_only_seconds": {"rtol": solve_s, "rtol_and_rtol_over_10": both_s},
                             "final_b": float(checked.b[-1]), "solver": checked.settings["solver"],
                             "steps": checked.stats["accepted_steps"],
                             "field_evaluations": checked.stats["gradient_evaluations"],
                             "final_b_rel_diff_30_digit_reference":
                                 abs(float(checked.b[-1]) - REFERENCE_B_1E12) / REFERENCE_B_1E12}))

    rows.append(_field_row())
    rodas_s, rodas, _ = best_of(lambda: _ours_one_solve(1e12, "rodas4"))
    rows.append(row("float64 flow to 1e12, one solve: default solver (LSODA)", ours_s, "ours with Rodas4 (rtol 1e-8)",
                    rodas_s, note="informative: the evidence for the float64 default; same compiled field",
                    details={"lsoda": _details(ours, 1e12), "rodas4": _details(rodas, 1e12)}))
    rows.append(_plots_row(repeats=1 if quick else 3))
    rows.append(_command_row(repeats=2 if quick else 5))
    return rows


def _process_seconds(argv: list) -> tuple[float, float]:
    """(wall, CPU) seconds of one fresh process (CPU: user + system of the child, from its rusage)."""
    import resource
    import subprocess

    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    subprocess.run(argv, check=True, capture_output=True)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return wall, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def _command_row(repeats: int) -> dict:
    """``stumpcheck flow`` against the independent prototype that prints the same (module doc, item 6)."""
    import sys
    from pathlib import Path

    prototype = str(Path(__file__).resolve().parent / "flow_prototype.py")
    commands = {"ours": [sys.executable, "-m", "stumpcheck", "flow", "--quiet"],
                "prototype": [sys.executable, prototype], "prototype, one solve": [sys.executable, prototype,
                                                                                  "--solve-only"]}
    for argv in commands.values():
        _process_seconds(argv)  # warm the file cache (and numba's)
    wall = {name: [] for name in commands}
    cpu = {name: [] for name in commands}
    for _ in range(repeats):
        for name, argv in commands.items():
            w, c = _process_seconds(argv)
            wall[name].append(w)
            cpu[name].append(c)
    best = {name: min(values) for name, values in wall.items()}
    best_cpu = {name: min(values) for name, values in cpu.items()}
    return row("stumpcheck flow (defaults), whole process", best["ours"],
               "independent LSODA + numpy GL prototype printing the same (benchmarks/flow_prototype.py)",
               best["prototype"], kind="ours/bound", target=("<=", 1.5),
               note=f"fresh processes, interleaved, best of {repeats}; CPU {best_cpu['ours']:.2f} s vs "
                    f"{best_cpu['prototype']:.2f} s ({best_cpu['ours'] / best_cpu['prototype']:.2f}x); against the "
                    f"prototype's first solve alone ({best['prototype, one solve']:.2f} s wall, "
                    f"{best_cpu['prototype, one solve']:.2f} s CPU): {best['ours'] / best['prototype, one solve']:.2f}x",
               details={"wall_seconds": {k: [round(x, 3) for x in v] for k, v in wall.items()},
                        "cpu_seconds": {k: [round(x, 3) for x in v] for k, v in cpu.items()}})


def _plots_row(repeats: int) -> dict:
    """``stumpcheck flow --out D`` against ``--no-plots`` (module doc, item 5)."""
    import shutil
    import subprocess
    import sys
    import tempfile
    from pathlib import Path

    work = Path(tempfile.mkdtemp(prefix="bench-flow-plots-"))
    seconds = {"plots": [], "no plots": []}
    try:
        for i in range(repeats):
            for name, extra in (("plots", []), ("no plots", ["--no-plots"])):
                start = time.perf_counter()
                subprocess.run([sys.executable, "-m", "stumpcheck", "flow", "--quiet", "--out", str(work / f"{i}{extra}"),
                                *extra], check=True, capture_output=True)
                seconds[name].append(time.perf_counter() - start)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    with_plots, without = min(seconds["plots"]), min(seconds["no plots"])
    share = (with_plots - without) / with_plots
    return row("stumpcheck flow --out D (four plots) vs --no-plots", with_plots, "the same with --no-plots", without,
               kind="ours/bound", target=("<=", 4 / 3),
               note=f"fresh processes, best of {repeats}; plots {share:.0%} of the whole command",
               details={k: [round(x, 3) for x in v] for k, v in seconds.items()})


def timed(function, *args, **kwargs):
    start = time.perf_counter()
    value = function(*args, **kwargs)
    return time.perf_counter() - start, value


def high_precision(args) -> None:
    """The 30-digit flow (Arb integrand) to --hp-t-max, float64's difference from it, and one field
    linearization with the Arb integrand against the mpmath one (the baseline for this part)."""
    import mpmath

    from stumpcheck.numerics.flow.ode import MPArithmetic
    from stumpcheck.numerics.flow.population_flow import PopulationFlowFieldMP, run_population_flow

    row: dict = {"benchmark": "flow", "rtol": args.rtol, "start": [10.0, 10.0], "seed": None}
    # 3. the high-precision flow (Arb integrand) to --hp-t-max, and one field evaluation against the
    #    mpmath integrand (the baseline) at the final state
    hp_s, hp = timed(run_population_flow, 10.0, 10.0, args.hp_t_max, rtol=args.hp_rtol, dps=args.dps, check=False,
                     per_decade=1, workers=args.hp_workers)
    lo = run_population_flow(10.0, 10.0, args.hp_t_max, rtol=args.rtol, check=False, per_decade=1)
    final_b_hp, final_a_hp = mpmath.mpf(hp.stats["final_b"]), mpmath.mpf(hp.stats["final_a"])
    field_arb = PopulationFlowFieldMP(order=hp.stats["quadrature_order"], rhs="arb")
    field_mp = PopulationFlowFieldMP(order=hp.stats["quadrature_order"], rhs="mpmath")
    with MPArithmetic(args.dps).working():
        z = np.array([final_a_hp, final_b_hp], dtype=object)
        arb_s, _ = timed(field_arb.linearization, mpmath.mpf(1), z)
        mp_s, _ = timed(field_mp.linearization, mpmath.mpf(1), z)
    row.update(dps=args.dps, hp_t_max=args.hp_t_max, hp_rtol=args.hp_rtol, hp_workers=args.hp_workers,
               hp_seconds=hp_s,
               hp_status=hp.status.name, hp_steps=hp.stats["accepted_steps"],
               hp_field_evaluations=hp.stats["gradient_evaluations"],
               hp_seconds_per_evaluation=hp_s / max(hp.stats["gradient_evaluations"], 1),
               hp_quadrature_order=hp.stats["quadrature_order"], hp_final_b=hp.stats["final_b"],
               hp_final_a=hp.stats["final_a"],
               hp_quadrature_check_digits_end=hp.stats["quadrature_check_digits_end"],
               hp_rounding_bound=hp.stats.get("rounding_bound"),
               float64_vs_hp_final_b_rel_diff=float(abs(lo.b[-1] - final_b_hp) / final_b_hp),
               float64_vs_hp_final_a_rel_diff=float(abs(lo.a[-1] - final_a_hp) / abs(final_a_hp)),
               hp_linearization_seconds_arb=arb_s, hp_linearization_seconds_mpmath=mp_s,
               speedup_arb_over_mpmath_integrand=mp_s / arb_s)

    print(f"{args.dps}-digit flow (Arb integrand, rtol {args.hp_rtol:g}, {args.hp_workers} process(es)) to "
          f"t = {args.hp_t_max:g}: {hp_s:.1f} s, "
          f"{hp.stats['accepted_steps']} steps, {hp.stats['gradient_evaluations']} evals "
          f"({row['hp_seconds_per_evaluation']:.2f} s each), order {hp.stats['quadrature_order']} "
          f"(two orders agree to {hp.stats['quadrature_check_digits_end']:.1f} digits at the end); final b "
          f"{hp.stats['final_b']}")
    print(f"float64 (rtol {args.rtol:g}) vs {args.dps}-digit final b: {row['float64_vs_hp_final_b_rel_diff']:.2e}, "
          f"final a: {row['float64_vs_hp_final_a_rel_diff']:.2e}")
    print(f"one field linearization at the final state: Arb integrand {arb_s:.2f} s, mpmath integrand {mp_s:.2f} s "
          f"(baseline): {row['speedup_arb_over_mpmath_integrand']:.1f}x")
    print("JSON " + json.dumps(row))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--hp", action="store_true", help="the 30-digit flow instead of the float64 rows")
    parser.add_argument("--rtol", type=float, default=1e-8)
    parser.add_argument("--dps", type=int, default=30)
    parser.add_argument("--hp-t-max", type=float, default=1e12)
    parser.add_argument("--hp-rtol", type=float, default=1e-9)
    parser.add_argument("--hp-workers", type=int, default=2, choices=(1, 2))
    args = parser.parse_args()
    if args.hp:
        high_precision(args)
        return
    rows = run(quick=args.quick)
    print(format_rows(rows))
    print("JSON " + json.dumps(rows, default=float))


if __name__ == "__main__":
    main()
