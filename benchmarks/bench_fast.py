"""The fast rigorous layer (float64 intervals, numba) against the Arb route and the plain float64 route.

``run(quick)`` rows, each timed in the same run with the variants interleaved (best of 3, quick, or 7):

* **∇L at a point** on the calibration relation a = calibration_a(b), b = 100 and 1000 (quick: 100):
  ``stumpcheck.numerics.certified.fast.loss_gradient_enclosure`` (default: Gauss–Legendre on the
  breakpoint pieces with the Bernstein-ellipse remainder; and the first-order sum at 64 sub-boxes a
  piece) against ``stumpcheck.numerics.certified.enclosures.certified_loss_gradient`` at dps 15 (the
  Arb route the fast layer is to replace; ratio Arb/fast) and against
  ``stumpcheck.numerics.population.loss_and_gradient_float64`` (the float64 value it certifies; ratio
  fast/float64). The notes give the relative widths of ∇L: Gauss–Legendre about 10⁻¹³, first order
  about 10⁻¹, Arb's about 10⁻¹⁶ or better.
* **e, ∇e over 10⁵ boxes** (quick 10⁴): ``jet_boxes`` against Arb's
  ``one_head_jet`` at 128 bits at the same number of points, per evaluation.

Informative rows (no targets): the issue's targets are for whole workloads (tube, region, lemmas), which
this layer does not drive yet.

Usage: python -m benchmarks.bench_fast [--quick]
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np

if __package__ in (None, ""):  # run as a script: benchmarks/ and the repository on the path
    sys.path[:0] = [str(Path(__file__).resolve().parent.parent)]
from benchmarks.rows import format_rows, row  # noqa: E402
from benchmarks.timing import interleaved  # noqa: E402


def _relative_widths(rows) -> list[float]:
    return [float((hi - lo) / abs((hi + lo) / 2)) for lo, hi in rows]


def _gradient_rows(b: float, repeats: int) -> list[dict]:
    from stumpcheck.numerics.certified.enclosures import certified_loss_gradient
    from stumpcheck.numerics.certified.fast import loss_gradient_enclosure
    from stumpcheck.numerics.generated.asymptotics_numpy import calibration_a
    from stumpcheck.numerics.population import loss_and_gradient_float64

    a = float(calibration_a(b))
    fast = lambda: loss_gradient_enclosure(a, b)  # noqa: E731
    fine = lambda: loss_gradient_enclosure(a, b, method="first-order")  # noqa: E731
    arb = lambda: certified_loss_gradient(a, b, dps=15)  # noqa: E731
    plain = lambda: loss_and_gradient_float64(a, b)  # noqa: E731
    for fn in (fast, fine, arb, plain):  # compile, import, cache
        fn()
    (t_fast, t_fine, t_arb, t_plain), (r_fast, r_fine, r_arb, _) = interleaved([fast, fine, arb, plain], repeats)
    w_fast = _relative_widths(r_fast[1:])
    w_fine = _relative_widths(r_fine[1:])
    w_arb = [float(e.relative_radius) * 2 for e in r_arb]
    details = {"a": a, "b": b, "repeats": repeats, "fast_relative_widths": w_fast,
               "first_order_relative_widths": w_fine,
               "arb_relative_widths": w_arb, "fast": r_fast.tolist(), "first_order": r_fine.tolist(),
               "arb": [str(e) for e in r_arb]}
    note = (f"relative widths of ∇L: Gauss–Legendre {max(w_fast):.1e}, first order {max(w_fine):.1e}, "
            f"Arb {max(w_arb):.1e}")
    return [
        row(f"fast ∇L enclosure at b = {b:g} (Gauss–Legendre) vs Arb dps 15", t_fast,
            "certified_loss_gradient, dps 15", t_arb, note=note, details=details),
        row(f"fast ∇L enclosure at b = {b:g} (first order, 64 sub-boxes a piece) vs Arb dps 15", t_fine,
            "certified_loss_gradient, dps 15", t_arb, note=note, details=details),
        row(f"fast ∇L enclosure at b = {b:g} (Gauss–Legendre) vs float64 ∇L", t_fast,
            "loss_and_gradient_float64", t_plain, kind="ours/bound", note=note, details=details),
    ]


def _jet_row(count: int, repeats: int) -> dict:
    from flint import arb, ctx

    from stumpcheck.numerics.certified.enclosures.one_head_arb import exp_a, one_head_jet
    from stumpcheck.numerics.certified.fast import jet_boxes
    from stumpcheck.numerics.certified.fast.one_head import complement

    rng = np.random.default_rng(0)
    b = 10.0 ** rng.uniform(-1, 4, count)
    a = b + rng.uniform(-10, 30, count)
    theta = rng.uniform(0.01, 0.49, count)
    boxes = np.empty((count, 8))
    for i in range(count):
        boxes[i] = [a[i], a[i], b[i], b[i], theta[i], theta[i], *complement(theta[i], theta[i])]
    jet_boxes(boxes[:2])
    arb_count = max(count // 10, 100)  # Arb is timed on a tenth of the points and scaled

    def with_arb():
        with ctx.workprec(128):
            for i in range(arb_count):
                t = arb(theta[i])
                one_head_jet(arb(b[i]), exp_a(arb(a[i]), arb(b[i])), t, 1 - t, False, False)

    (t_fast, t_arb), _ = interleaved([lambda: jet_boxes(boxes), with_arb], repeats)
    per_fast, per_arb = t_fast / count, t_arb / arb_count
    return row(f"e, ∇e over one box, fast (per box, {count} boxes)", per_fast, "Arb one_head_jet, 128 bits, per point",
               per_arb, note=f"{per_fast * 1e9:.0f} ns per box vs {per_arb * 1e6:.1f} µs per Arb point",
               details={"boxes": count, "arb_points": arb_count, "repeats": repeats})


def run(quick: bool = False) -> list[dict]:
    """Rows: the fast ∇L against Arb and float64 at b = 100 (and 1000), the fast jet against Arb's."""
    repeats = 3 if quick else 7
    rows = []
    for b in ((100.0,) if quick else (100.0, 1000.0)):
        rows += _gradient_rows(b, repeats)
    rows.append(_jet_row(10_000 if quick else 100_000, repeats))
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true")
    args = parser.parse_args()
    print(format_rows(run(args.quick)))


if __name__ == "__main__":
    main()
