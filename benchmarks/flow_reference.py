"""The independent high-precision reference of the flow from (10, 10): the values tests/test_flow_digits.py checks.

Another configuration than the library's D-digit default at every point it can differ (the integrand's closed
forms are shared; C1 certifies them): linearly implicit Euler extrapolated to order 13 (the library: order from
rtol, 14 at 10⁻²⁵) in the coordinates (a, b), at 36 digits (the library's tests: 30), rtol 10⁻²⁶ (10⁻²⁵), with
one Gauss–Legendre order on every breakpoint piece, the largest that two-order checks need along the float64
flow at 36 digits (the library: per-piece orders at D + 3 digits). Saves t = 1 and 100 (those below t_max) and
t_max; prints a and b at each to 36 digits, and the steps, field evaluations and CPU seconds.

Usage: ``python benchmarks/flow_reference.py [--t-max 1e6] [--dps 36] [--rtol 1e-26] [--order 13]``.
Measured (a 2-core machine at load ~13): to t = 100, 31 steps, 2450 evaluations, 42 s of CPU; to 10⁶, 594 steps,
46927 evaluations, 984 s.
"""

from __future__ import annotations

import argparse
import math
import time

import mpmath

from stumpcheck.numerics.flow.field_mp import PopulationFlowFieldMP
from stumpcheck.numerics.flow.ode import EulerExtrapolation, MPArithmetic, PIController, SaveAt, diffeqsolve
from stumpcheck.numerics.flow.run import _order_along_float64_flow


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--t-max", type=float, default=1e6)
    parser.add_argument("--dps", type=int, default=36)
    parser.add_argument("--rtol", type=float, default=1e-26)
    parser.add_argument("--order", type=int, default=13)
    args = parser.parse_args()
    start = time.process_time()
    order = _order_along_float64_flow(10, 10, args.t_max, args.dps, "lsoda", "one-head", "arb")["quadrature_order"]
    field = PopulationFlowFieldMP("one-head", order=order, rhs="arb")
    arithmetic = MPArithmetic(args.dps)
    saves = tuple(math.log1p(t) for t in (1.0, 100.0) if t < args.t_max)
    with arithmetic.working():
        sol = diffeqsolve(field, EulerExtrapolation(args.order), mpmath.mpf(0), mpmath.log1p(mpmath.mpf(args.t_max)),
                          [mpmath.mpf(10), mpmath.mpf(10)], saveat=SaveAt(ts=saves),
                          controller=PIController(rtol=args.rtol, atol=args.rtol * 1e-2), max_steps=100_000,
                          linearization=field.linearization, arithmetic=arithmetic)
        for s, y in zip(sol.ts, sol.ys):
            print(f"t {mpmath.nstr(mpmath.expm1(s), 20)} a {mpmath.nstr(y[0], args.dps)} b {mpmath.nstr(y[1], args.dps)}")
    print(f"status {sol.status.name}, Gauss-Legendre order {order}, {sol.accepted} steps, {sol.rejected} rejected, "
          f"{sol.evaluations} field evaluations, {time.process_time() - start:.1f} s of CPU")


if __name__ == "__main__":
    main()
