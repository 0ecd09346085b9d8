"""Float64 population flow to t_max against scipy's LSODA with a quad gradient.

Usage: python benchmarks/bench_flow.py [--t-max 1e12] [--rtol 1e-8]

Both integrate dz/dt = −∇L(z) from (a₀, b₀) = (10, 10). The baseline is what
a careful user would write with scipy alone: ``solve_ivp(method="LSODA")`` in t
with ∇L from ``scipy.integrate.quad`` given the same model breakpoints (without
them quad is silently wrong at large b). Reported: wall time of each, the
ratio, and the final relative difference in b between the two.
"""

from __future__ import annotations

import argparse
import json
import math
import time

import numpy as np


def baseline_gradient(a: float, b: float, quad, points, error_fn, grad_fn):
    def piece(f):
        total = 0.0
        for lo, hi in zip(points[:-1], points[1:]):
            total += quad(f, lo, hi, epsabs=0.0, epsrel=1e-12, limit=200)[0]
        return total

    ga = piece(lambda th: float(error_fn(a, b, th)) * float(grad_fn(a, b, th)[0]))
    gb = piece(lambda th: float(error_fn(a, b, th)) * float(grad_fn(a, b, th)[1]))
    return np.array([ga, gb])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--t-max", type=float, default=1e12)
    parser.add_argument("--rtol", type=float, default=1e-8)
    args = parser.parse_args()
    from scipy.integrate import quad, solve_ivp

    from numerics.flow import integrate_flow
    from numerics.generated import population_numpy as gen_np
    from numerics.quadrature import breakpoints_float64

    start = time.perf_counter()
    ours = integrate_flow(10.0, 10.0, args.t_max, rtol=args.rtol, atol=args.rtol * 1e-2)
    ours_seconds = time.perf_counter() - start

    evaluations = 0

    def rhs(t, z):
        nonlocal evaluations
        evaluations += 1
        points = breakpoints_float64(z[0], z[1])
        return -baseline_gradient(z[0], z[1], quad, points, gen_np.error_one_head, gen_np.error_gradient_one_head)

    start = time.perf_counter()
    base = solve_ivp(rhs, (0.0, args.t_max), [10.0, 10.0], method="LSODA", rtol=args.rtol, atol=args.rtol * 1e-2)
    base_seconds = time.perf_counter() - start
    rel_diff = abs(base.y[1, -1] - ours.b[-1]) / ours.b[-1]
    row = {"benchmark": "flow_float64", "t_max": args.t_max, "rtol": args.rtol,
           "ours_seconds": ours_seconds, "ours_gradient_evaluations": ours.gradient_evaluations,
           "ours_status": ours.status.name, "baseline": "scipy solve_ivp LSODA + quad gradient",
           "baseline_seconds": base_seconds, "baseline_gradient_evaluations": evaluations,
           "baseline_success": bool(base.success), "speedup": base_seconds / ours_seconds,
           "final_b_ours": float(ours.b[-1]), "final_b_baseline": float(base.y[1, -1]),
           "final_b_rel_diff": float(rel_diff)}
    print(f"{'':24}{'ours':>14}{'LSODA+quad':>14}")
    print(f"{'seconds':24}{ours_seconds:14.2f}{base_seconds:14.2f}")
    print(f"{'gradient evaluations':24}{ours.gradient_evaluations:14d}{evaluations:14d}")
    print(f"{'final b':24}{ours.b[-1]:14.8f}{base.y[1, -1]:14.8f}")
    print(f"speedup (baseline/ours): {row['speedup']:.2f}x; final relative difference in b: {rel_diff:.2e}")
    print("JSON " + json.dumps(row))


if __name__ == "__main__":
    main()
