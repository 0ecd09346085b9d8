"""Certified L against flint's own acb.integral; L and ∇L at 30 digits against plain mpmath.quad.

``run(quick)`` (what ``python -m benchmarks`` collects): the certified L
(``stumpcheck.numerics.certified.enclosures.theta_integrals.certified_loss``, relative radius target ≤ 1e-20) at
b = 100 and 1000 on the calibration relation a = b + 2 log b, 30 digits, against
:func:`flint_closed_form_loss`, python-flint's ``acb.integral`` on the bare closed form with its
own breakpoints, typed here from docs/model.md §2 and importing nothing of ours (the bound:
target ours/bound ≤ 2). The variants are interleaved, best of 3 (quick) or 7.

Usage: python benchmarks/bench_population.py [--b 1e2 1e4] [--dps 30]   (the older table below)

At (a, b) on the calibration relation a = b + 2 log b, one evaluation of
L and ∇L = (∂L/∂a, ∂L/∂b) by

  mpmath      stumpcheck.numerics.population.quantities.loss / loss_gradient under mpmath.workdps(dps)
              (tanh-sinh on the model breakpoints; the two gradient quadratures
              share their integrand evaluations);
  arb         stumpcheck.numerics.certified.enclosures.certified_loss / certified_loss_gradient(dps=dps)
              (rigorous enclosures; their relative radii are reported);
  baseline    plain mpmath.quad on the same breakpoints, once per integrand
              ½e², e·∂e/∂a, e·∂e/∂b, from the generated mpmath functions, no sharing.

Reported: seconds (best of 3, or 1 run when a single run exceeds 20 s), the
speed ratio baseline/ours, the digits of agreement between the three
(−log10 of the relative difference, compared at dps + 10 digits), and whether
each Arb enclosure contains the mpmath values. Also: the certified L alone at
b = 100 (issue target ~10 ms, relative radius ≤ 1e-20).
"""

from __future__ import annotations

import argparse
import json
import math
import sys
from pathlib import Path

import mpmath

if __package__ in (None, ""):  # run as a script: benchmarks/ and the repository on the path
    sys.path[:0] = [str(Path(__file__).resolve().parent.parent)]
from benchmarks.rows import row  # noqa: E402
from benchmarks.timing import best_of, interleaved  # noqa: E402

SLOW_SECONDS = 20.0
REPEATS = 3
RADIUS_TARGET = 1e-20


def timed(fn):
    """(best seconds, result, runs): up to REPEATS runs, just one if the first exceeds SLOW_SECONDS."""
    return best_of(fn, repeats=REPEATS, slow_seconds=SLOW_SECONDS)


def digits(x, y, compare_dps: int):
    """−log10 |x − y| / |y| at compare_dps digits (None when identical)."""
    with mpmath.workdps(compare_dps):
        x, y = mpmath.mpf(x), mpmath.mpf(y)
        if x == y:
            return None
        return float(-mpmath.log10(abs(x - y) / abs(y)))


def in_ball(enclosure, value) -> bool:
    """|value − mid| ≤ rad, evaluated exactly (Enclosure.contains uses lower/upper,
    which may be rounded outward to a much coarser precision than the ball)."""
    with mpmath.workprec(2000):
        return bool(abs(mpmath.mpf(value) - enclosure.mid) <= enclosure.rad)


def fmt_digits(d) -> str:
    return "identical" if d is None else f"{d:.1f}"


def flint_closed_form_loss(a: float, b: float, dps: int = 30):
    """L(a, b) = ∫₀¹ ½e(θ)² dθ by ``acb.integral`` on the closed form, as a user would write it.

    e(θ) = E[(x − θ)e^s]/E[e^s] with s = a·1{x ≥ θ} − bx, x ~ U[0, 1]; the segment integrals,
    shifted by e^{bθ} (u = 1 − θ):  e = [e^a(1 − e^{−bu}(1 + bu)) − (e^{bθ}(bθ − 1) + 1)] /
    [b(expm1(bθ) − e^a·expm1(−bu))]. Breakpoints: the switch θ* where the two segment masses are
    equal, θ* = (log1p(e^a) − log1p(e^{a−b}))/b, and ladders 2^k/(4b) from 0, from 1 and about θ*.
    Precision dps digits + 30 bits, rel_tol 2^-(dps·log₂10 + 10), abs_tol 2^-20 of that. Returns
    (the real ball, number of pieces).
    """
    from flint import acb, arb, ctx

    bits = math.ceil(dps * math.log2(10)) + 30
    with ctx.workprec(bits):
        a_ball, b_ball = arb(a), arb(b)
        exp_a = a_ball.exp()

        def half_error_squared(t, analytic):
            u = 1 - t
            bt, bu = b_ball * t, b_ball * u
            e = (exp_a * (1 - (-bu).exp() * (1 + bu)) - (bt.exp() * (bt - 1) + 1)) / (
                b_ball * (bt.expm1() - exp_a * (-bu).expm1()))
            return e * e / 2

        switch = float(((1 + exp_a).log() - (1 + (a_ball - b_ball).exp()).log()).mid()) / b
        points = {0.0, 1.0, min(max(switch, 0.0), 1.0)}
        step = 1 / (4 * b)
        while step < 1:
            points.update((step, 1 - step, switch - step, switch + step))
            step *= 2
        ends = [arb(p) for p in sorted(p for p in points if 0 <= p <= 1)]
        rel_tol = arb(2) ** -(bits - 20)
        abs_tol = arb(2) ** -bits
        total = acb(0)
        for lo, hi in zip(ends, ends[1:]):
            total += acb.integral(half_error_squared, lo, hi, rel_tol=rel_tol, abs_tol=abs_tol)
        return total.real, len(ends) - 1


def run(quick: bool = False) -> list[dict]:
    """Rows: certified L at b = 100 and 1000 (30 digits) against flint's acb.integral on the closed form."""
    from stumpcheck.numerics.certified.enclosures.theta_integrals import certified_loss

    dps, rows = 30, []
    for b in (100.0, 1000.0):
        a = b + 2 * math.log(b)
        certified_loss(a, b, dps=dps, rel_width=RADIUS_TARGET)  # first call: imports, caches
        flint_closed_form_loss(a, b, dps)
        (ours_s, base_s), (ours, (base, pieces)) = interleaved(
            [lambda: certified_loss(a, b, dps=dps, rel_width=RADIUS_TARGET),
             lambda: flint_closed_form_loss(a, b, dps)], 3 if quick else 7)
        with mpmath.workprec(4000):
            base_mid, base_rad = mpmath.mpf(base.mid().str(60, radius=False)), mpmath.mpf(float(base.rad()))
            overlap = bool(abs(ours.mid - base_mid) <= ours.rad + base_rad + abs(base_mid) * mpmath.mpf(10) ** -55)
        rows.append(row(f"certified L, b = {b:g}, {dps} digits", ours_s, "flint acb.integral, closed form",
                        base_s, kind="ours/bound", target=("<=", 2),
                        note=f"rel. radius {float(ours.relative_radius):.1e} (target <= {RADIUS_TARGET:g})",
                        details={"a": a, "b": b, "dps": dps, "relative_radius": float(ours.relative_radius),
                                 "radius_target": RADIUS_TARGET,
                                 "radius_target_met": float(ours.relative_radius) <= RADIUS_TARGET,
                                 "baseline_relative_radius": float(base.rad()) / abs(float(base.mid())),
                                 "baseline_pieces": pieces, "enclosures_overlap": overlap,
                                 "ours": str(ours), "baseline": base.str(dps, radius=True),
                                 "repeats": 3 if quick else 7}))
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--b", type=float, nargs="+", default=[1e2, 1e4])
    parser.add_argument("--dps", type=int, default=30)
    args = parser.parse_args()

    from stumpcheck.numerics.certified import enclosures as certified
    from stumpcheck.numerics.population import quantities as population
    from stumpcheck.numerics.generated import population_mpmath as gen_mp
    from stumpcheck.numerics.population.quadrature import breakpoints

    dps, compare_dps = args.dps, args.dps + 10
    names = ("L", "dL/da", "dL/db")
    rows = []

    for b_value in args.b:
        with mpmath.workdps(dps):
            b = mpmath.mpf(b_value)
            a = b + 2 * mpmath.log(b)

        def ours_mpmath():
            with mpmath.workdps(dps):
                return (population.loss(a, b),) + tuple(population.loss_gradient(a, b))

        def ours_arb():
            return (certified.certified_loss(a, b, dps=dps),) + tuple(
                certified.certified_loss_gradient(a, b, dps=dps))

        def baseline():
            with mpmath.workdps(dps):
                points = breakpoints(a, b)
                f, g = gen_mp.error_one_head, gen_mp.error_gradient_one_head
                value = mpmath.quad(lambda th: f(a, b, th) ** 2 / 2, points)
                ga = mpmath.quad(lambda th: f(a, b, th) * g(a, b, th)[0], points)
                gb = mpmath.quad(lambda th: f(a, b, th) * g(a, b, th)[1], points)
                return value, ga, gb

        mp_s, mp_vals, mp_runs = timed(ours_mpmath)
        arb_s, arb_encl, arb_runs = timed(ours_arb)
        base_s, base_vals, base_runs = timed(baseline)

        arb_mids = [e.mid for e in arb_encl]
        rel_radii = [float(e.relative_radius) for e in arb_encl]
        row = {
            "b": b_value, "a": float(a), "dps": dps,
            "mpmath_seconds": mp_s, "mpmath_runs": mp_runs,
            "arb_seconds": arb_s, "arb_runs": arb_runs,
            "baseline_seconds": base_s, "baseline_runs": base_runs,
            "speedup_mpmath": base_s / mp_s, "speedup_arb": base_s / arb_s,
            "values": {n: mpmath.nstr(v, dps) for n, v in zip(names, base_vals)},
            "arb_enclosures": {n: str(e) for n, e in zip(names, arb_encl)},
            "arb_relative_radius": dict(zip(names, rel_radii)),
            "arb_radius_target_met": all(r <= RADIUS_TARGET for r in rel_radii),
            "digits_mpmath_vs_baseline": {n: digits(x, y, compare_dps)
                                          for n, x, y in zip(names, mp_vals, base_vals)},
            "digits_arb_vs_baseline": {n: digits(x, y, compare_dps)
                                       for n, x, y in zip(names, arb_mids, base_vals)},
            "digits_arb_vs_mpmath": {n: digits(x, y, compare_dps)
                                     for n, x, y in zip(names, arb_mids, mp_vals)},
            "arb_ball_contains_mpmath": {n: in_ball(e, v) for n, e, v in zip(names, arb_encl, mp_vals)},
            "arb_ball_contains_baseline": {n: in_ball(e, v) for n, e, v in zip(names, arb_encl, base_vals)},
            "arb_contains_method_mpmath": {n: e.contains(v) for n, e, v in zip(names, arb_encl, mp_vals)},
            "arb_bounds_relative_width": {n: float((e.upper - e.lower) / abs(e.mid)) for n, e in
                                          zip(names, arb_encl)},
        }
        rows.append(row)

    # the certified L alone at b = 100
    with mpmath.workdps(dps):
        b100 = mpmath.mpf(100)
        a100 = b100 + 2 * mpmath.log(b100)
    loss_s, loss_encl, loss_runs = timed(lambda: certified.certified_loss(a100, b100, dps=dps))
    loss_row = {"b": 100.0, "seconds": loss_s, "runs": loss_runs,
                "relative_radius": float(loss_encl.relative_radius), "target_seconds": 0.01,
                "radius_target_met": float(loss_encl.relative_radius) <= RADIUS_TARGET}

    print(f"L and grad L at {dps} digits, a = b + 2 log b; seconds are best of "
          f"{REPEATS} (1 run when a run exceeds {SLOW_SECONDS:.0f} s)")
    for row in rows:
        print()
        print(f"b = {row['b']:g}, a = {row['a']:.6f}")
        print(f"  {'':28}{'mpmath (ours)':>16}{'arb (ours)':>16}{'baseline quad':>16}")
        print(f"  {'seconds':28}{row['mpmath_seconds']:16.3f}{row['arb_seconds']:16.3f}"
              f"{row['baseline_seconds']:16.3f}")
        print(f"  {'runs':28}{row['mpmath_runs']:16d}{row['arb_runs']:16d}{row['baseline_runs']:16d}")
        print(f"  {'speedup (baseline/ours)':28}{row['speedup_mpmath']:15.2f}x{row['speedup_arb']:15.2f}x"
              f"{'1.00':>15}x")
        print(f"  {'':8}{'value (baseline)':>36}{'arb rel.rad':>12}{'mp~base':>10}{'arb~base':>10}"
              f"{'arb~mp':>10}{'ball∋mp':>8}{'ball∋base':>10}{'contains()':>11}")
        for n in names:
            print(f"  {n:8}{row['values'][n]:>36}{row['arb_relative_radius'][n]:12.2e}"
                  f"{fmt_digits(row['digits_mpmath_vs_baseline'][n]):>10}"
                  f"{fmt_digits(row['digits_arb_vs_baseline'][n]):>10}"
                  f"{fmt_digits(row['digits_arb_vs_mpmath'][n]):>10}"
                  f"{'yes' if row['arb_ball_contains_mpmath'][n] else 'NO':>8}"
                  f"{'yes' if row['arb_ball_contains_baseline'][n] else 'NO':>10}"
                  f"{'yes' if row['arb_contains_method_mpmath'][n] else 'NO':>11}")
        print(f"  relative radius <= {RADIUS_TARGET:g}: {'yes' if row['arb_radius_target_met'] else 'NO'}")
    print()
    print(f"certified L alone at b = 100: {loss_row['seconds'] * 1e3:.1f} ms (target ~10 ms), "
          f"relative radius {loss_row['relative_radius']:.2e} "
          f"(<= {RADIUS_TARGET:g}: {'yes' if loss_row['radius_target_met'] else 'NO'})")
    print("digits: -log10 of the relative difference at "
          f"{compare_dps}-digit comparison; arb compared by its midpoint")
    print("ball∋x: |x - mid| <= rad exactly; contains(): Enclosure.contains(mpmath value), "
          "which tests the stored lower/upper bounds")
    print("JSON " + json.dumps({"benchmark": "population_30_digits",
                                "baseline": "mpmath.quad per integrand on the same breakpoints, no sharing",
                                "rows": rows, "certified_loss_b100": loss_row}))


if __name__ == "__main__":
    main()
