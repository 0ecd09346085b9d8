"""Population flow: the stiff float64 solver against scipy's LSODA with a quad gradient.

Usage: python benchmarks/bench_flow.py [--compare-t-max 1e6] [--t-max 1e12] [--rtol 1e-8]
                                       [--dps 30] [--hp-t-max 1e12] [--hp-rtol 1e-9] [--hp-workers 2]
                                       [--skip-baseline] [--only-compare]

All runs integrate dz/dt = −∇L(z) from (a₀, b₀) = (10, 10), in this process.

1. Ratio (the result): ``run_population_flow`` (float64, Rodas4 with the exact
   Jacobian, one solve, no a-posteriori check) against the baseline a careful
   user would write with scipy alone: ``solve_ivp(method="LSODA")`` in t with
   ∇L from ``scipy.integrate.quad`` on the same model breakpoints (without them
   quad is silently wrong at large b), both at the same rtol (atol = rtol/100),
   on a horizon where the baseline finishes (--compare-t-max). Also reported:
   the final relative difference in b between the two.
2. The float64 flow to --t-max as ``stumpcheck flow`` runs it (with the rtol/10
   a-posteriori solve), and the Dopri5 path to the same horizon for reference.
3. The --dps-digit flow (Arb integrand, --hp-rtol, --hp-workers processes) to
   --hp-t-max (to 1e12 about 20 minutes in one process), the float64 flow's relative difference from it in the final a and
   b, and one field linearization at its final state with the Arb integrand
   against the mpmath integrand (the baseline for this part).

Prints a readable table and one JSON line (prefixed ``JSON``). Timings are
wall-clock on a shared machine: read the ratios, not the seconds.
"""

from __future__ import annotations

import argparse
import json
import time

import numpy as np


def baseline_gradient(a: float, b: float, quad, points, error_fn, grad_fn):
    """∇L by scipy quad on each breakpoint piece, e and ∇e from the generated float64 code."""
    def piece(f):
        total = 0.0
        for lo, hi in zip(points[:-1], points[1:]):
            total += quad(f, lo, hi, epsabs=0.0, epsrel=1e-12, limit=200)[0]
        return total

    ga = piece(lambda th: float(error_fn(a, b, th)) * float(grad_fn(a, b, th)[0]))
    gb = piece(lambda th: float(error_fn(a, b, th)) * float(grad_fn(a, b, th)[1]))
    return np.array([ga, gb])


def run_baseline(t_max: float, rtol: float):
    from scipy.integrate import quad, solve_ivp

    from numerics.generated import population_numpy as gen_np
    from numerics.population.quadrature import breakpoints_float64

    evaluations = 0

    def rhs(t, z):
        nonlocal evaluations
        evaluations += 1
        points = breakpoints_float64(z[0], z[1])
        return -baseline_gradient(z[0], z[1], quad, points, gen_np.error_one_head, gen_np.error_gradient_one_head)

    start = time.perf_counter()
    sol = solve_ivp(rhs, (0.0, t_max), [10.0, 10.0], method="LSODA", rtol=rtol, atol=rtol * 1e-2)
    return time.perf_counter() - start, sol, evaluations


def timed(function, *args, **kwargs):
    start = time.perf_counter()
    value = function(*args, **kwargs)
    return time.perf_counter() - start, value


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--compare-t-max", type=float, default=1e6)
    parser.add_argument("--t-max", type=float, default=1e12)
    parser.add_argument("--rtol", type=float, default=1e-8)
    parser.add_argument("--dps", type=int, default=30)
    parser.add_argument("--hp-t-max", type=float, default=1e12)
    parser.add_argument("--hp-rtol", type=float, default=1e-9)
    parser.add_argument("--hp-workers", type=int, default=2, choices=(1, 2))
    parser.add_argument("--skip-baseline", action="store_true")
    parser.add_argument("--only-compare", action="store_true", help="run part 1 only")
    args = parser.parse_args()
    import mpmath

    from numerics.flow.ode import MPArithmetic
    from numerics.flow.population_flow import PopulationFlowFieldMP, run_population_flow

    row: dict = {"benchmark": "flow", "rtol": args.rtol, "atol": args.rtol * 1e-2, "start": [10.0, 10.0],
                 "precision": "float64 unless stated", "seed": None}

    # 1. ratio against LSODA + quad on a horizon where the baseline finishes
    ours_s, ours = timed(run_population_flow, 10.0, 10.0, args.compare_t_max, rtol=args.rtol, check=False,
                         per_decade=1)
    row.update(compare_t_max=args.compare_t_max, ours_seconds=ours_s,
               ours_field_evaluations=ours.stats["gradient_evaluations"], ours_steps=ours.stats["accepted_steps"],
               ours_status=ours.status.name, final_b_ours=float(ours.b[-1]))
    if not args.skip_baseline:
        base_s, base, base_evals = run_baseline(args.compare_t_max, args.rtol)
        rel = abs(base.y[1, -1] - ours.b[-1]) / ours.b[-1]
        row.update(baseline="scipy solve_ivp LSODA + quad gradient on the same breakpoints",
                   baseline_seconds=base_s, baseline_gradient_evaluations=base_evals,
                   baseline_success=bool(base.success), final_b_baseline=float(base.y[1, -1]),
                   final_b_rel_diff=float(rel), speedup=base_s / ours_s)

    if args.only_compare:
        print(f"float64 flow to t = {args.compare_t_max:g}: ours {ours_s:.2f} s "
              f"({row['ours_field_evaluations']} evals), LSODA+quad {row.get('baseline_seconds', float('nan')):.2f} s "
              f"({row.get('baseline_gradient_evaluations', 0)} evals), speedup {row.get('speedup', float('nan')):.1f}x, "
              f"final rel. difference in b {row.get('final_b_rel_diff', float('nan')):.2e}")
        print("JSON " + json.dumps(row))
        return

    # 2. float64 to t_max as the CLI runs it (with the a-posteriori solve), and Dopri5 for reference
    full_s, full = timed(run_population_flow, 10.0, 10.0, args.t_max, rtol=args.rtol, parallel_check=True)
    row.update(t_max=args.t_max, float64_to_t_max_seconds=full_s, float64_to_t_max_status=full.status.name,
               float64_to_t_max_steps=full.stats["accepted_steps"],
               float64_to_t_max_field_evaluations=full.stats["gradient_evaluations"],
               float64_a_posteriori_rel_error_b=full.a_posteriori_rel_error_b, final_b_float64=float(full.b[-1]))
    dopri_s, dopri = timed(run_population_flow, 10.0, 10.0, args.t_max, rtol=args.rtol, solver="dopri5",
                           check=False, per_decade=1)
    rodas_s, rodas = timed(run_population_flow, 10.0, 10.0, args.t_max, rtol=args.rtol, check=False,
                           per_decade=1)
    row.update(dopri5_one_solve_seconds=dopri_s, dopri5_field_evaluations=dopri.stats["gradient_evaluations"],
               rodas4_one_solve_seconds=rodas_s, rodas4_field_evaluations=rodas.stats["gradient_evaluations"],
               rodas4_vs_dopri5_final_b_rel_diff=float(abs(rodas.b[-1] - dopri.b[-1]) / dopri.b[-1]),
               speedup_rodas4_over_dopri5=dopri_s / rodas_s)

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

    print(f"{'float64 flow to t = ' + format(args.compare_t_max, 'g'):34}{'ours (Rodas4)':>16}{'LSODA+quad':>14}")
    print(f"{'seconds':34}{row['ours_seconds']:16.2f}{row.get('baseline_seconds', float('nan')):14.2f}")
    print(f"{'gradient evaluations':34}{row['ours_field_evaluations']:16d}"
          f"{row.get('baseline_gradient_evaluations', 0):14d}")
    print(f"{'final b':34}{row['final_b_ours']:16.10f}{row.get('final_b_baseline', float('nan')):14.10f}")
    if "speedup" in row:
        print(f"speedup (baseline/ours): {row['speedup']:.1f}x; final rel. difference in b {row['final_b_rel_diff']:.2e}")
    print(f"float64 to t = {args.t_max:g} with a-posteriori check: {full_s:.1f} s, {full.stats['accepted_steps']} "
          f"steps, a-posteriori {full.a_posteriori_rel_error_b:.2e}; one solve: Rodas4 {rodas_s:.1f} s "
          f"({rodas.stats['gradient_evaluations']} evals) vs Dopri5 {dopri_s:.1f} s "
          f"({dopri.stats['gradient_evaluations']} evals)")
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


if __name__ == "__main__":
    main()
