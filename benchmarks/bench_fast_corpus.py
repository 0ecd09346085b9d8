"""The fast corpus enclosures (L̂, ∇L̂ in outward-rounded float64 intervals) against the float64 corpus kernel.

``run(quick)`` rows, at m = n = 256 and 1024 (quick: 256), random corpus (x, θ uniform), (a, b) = (3, 10),
each timed in the same run with the variants interleaved (best of 3, quick, or 7):

* **point**: ``stumpcheck.numerics.certified.fast.corpus_enclosure`` at (a, b) against
  ``stumpcheck.numerics.corpus.empirical.loss_and_gradient`` (dense, the float64 value it encloses);
* **box**: the same over the box (a, b) ± 5·10⁻⁷ (width 10⁻⁶) against the float64 kernel at the box's
  midpoint; with ``refine=True`` (the mean-value form of L̂, one point evaluation more); and with
  ``hessian=True, refine=True`` (∇²L̂ over the box too, and the mean-value form of ∇L̂ with it).

Both sides run on one thread (``threads=1``): on a shared machine numba's thread pool made either side's
timing vary by 5× between runs. Ratio ours/float64 with the issue's target ≤ 10; the notes give the
widths of the enclosures.

Usage: python -m benchmarks.bench_fast_corpus [--quick]
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

A, B, HALF_WIDTH = 3.0, 10.0, 5e-7


def _rows(size: int, repeats: int) -> list[dict]:
    from stumpcheck.numerics.certified.fast import corpus_enclosure
    from stumpcheck.numerics.corpus.empirical import loss_and_gradient

    rng = np.random.default_rng(size)
    x = rng.uniform(0, 1, (size, size))
    theta = rng.uniform(0, 1, size)
    box = ((A - HALF_WIDTH, A + HALF_WIDTH), (B - HALF_WIDTH, B + HALF_WIDTH))
    point = lambda: corpus_enclosure(x, theta, A, B, threads=1)  # noqa: E731
    boxed = lambda: corpus_enclosure(x, theta, *box, threads=1)  # noqa: E731
    refined = lambda: corpus_enclosure(x, theta, *box, refine=True, threads=1)  # noqa: E731
    hess = lambda: corpus_enclosure(x, theta, *box, hessian=True, refine=True, threads=1)  # noqa: E731
    plain = lambda: loss_and_gradient(x, theta, A, B, threads=1)  # noqa: E731
    for fn in (point, boxed, refined, hess, plain):  # compile, cache
        fn()
    (t_point, t_box, t_ref, t_hess, t_plain), (r_point, r_box, r_ref, r_hess, r_plain) = interleaved(
        [point, boxed, refined, hess, plain], repeats)
    values = [r_plain[0], r_plain[1][0], r_plain[1][1]]
    w_point = [float((hi - lo) / abs(v)) for (lo, hi), v in zip(r_point, values)]
    w_box = [float(hi - lo) for lo, hi in r_box]
    w_ref = [float(hi - lo) for lo, hi in r_ref]
    w_hess = [float(hi - lo) for lo, hi in r_hess]
    details = {"m": size, "n": size, "a": A, "b": B, "box_width": 2 * HALF_WIDTH, "repeats": repeats,
               "point": r_point.tolist(), "box": r_box.tolist(), "float64": values,
               "point_relative_widths": w_point, "box_widths": w_box, "refined_box_widths": w_ref,
               "hessian_refined_box_widths": w_hess, "hessian_box": r_hess.tolist()}
    name = f"m = n = {size}"
    return [
        row(f"corpus L̂, ∇L̂ enclosure at a point, {name}", t_point, "loss_and_gradient (float64)", t_plain,
            kind="ours/bound", target=("<=", 10.0), details=details,
            note="relative widths L̂, ∂a, ∂b: " + ", ".join(f"{w:.1e}" for w in w_point)),
        row(f"corpus L̂, ∇L̂ enclosure over a box of width 1e-6, {name}", t_box,
            "loss_and_gradient (float64) at the midpoint", t_plain, kind="ours/bound", target=("<=", 10.0),
            details=details, note="widths L̂, ∂a, ∂b: " + ", ".join(f"{w:.1e}" for w in w_box)),
        row(f"corpus enclosure over the same box, refine=True, {name}", t_ref,
            "loss_and_gradient (float64) at the midpoint", t_plain, kind="ours/bound", target=("<=", 10.0),
            details=details, note="widths L̂, ∂a, ∂b: " + ", ".join(f"{w:.1e}" for w in w_ref)),
        row(f"corpus enclosure over the same box with ∇²L̂, refine=True, {name}", t_hess,
            "loss_and_gradient (float64) at the midpoint", t_plain, kind="ours/bound", target=("<=", 10.0),
            details=details, note="widths L̂, ∂a, ∂b, ∂aa, ∂ab, ∂bb: " + ", ".join(f"{w:.1e}" for w in w_hess)),
    ]


def run(quick: bool = False) -> list[dict]:
    repeats = 3 if quick else 7
    rows = []
    for size in ((256,) if quick else (256, 1024)):
        rows += _rows(size, repeats)
    return rows


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true")
    args = parser.parse_args(argv)
    print(format_rows(run(quick=args.quick)))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
