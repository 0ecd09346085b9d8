"""L, ∇L, ∇²L at dps digits through the certified θ-integrals, against the certified enclosure alone.

``run(quick)`` (what ``python -m benchmarks`` collects): at (a, b) = (10, 10), ``stumpcheck.loss``,
``loss_gradient`` and ``loss_hessian`` at ``dps`` digits, each call with the cache of exact inputs cleared
(so that it computes), against ``certified_loss``, ``certified_loss_gradient`` and
``certified_loss_hessian`` at the same ``dps`` (the bound: the verified value is such an enclosure at
dps + 5 digits, rounded; target ours/bound ≤ 10). Also the cached call, informative. The variants are
interleaved, best of 3 (quick: L at 50 digits and ∇L at 30 only, best of 2).

The bound is ours, not an independent baseline: what is measured is the cost of verifying and rounding
the digits on top of the enclosure (issue 37, item 3: "stay within 10× of certified_*").

Usage: python -m benchmarks.bench_verified_loss [--quick]
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

if __package__ in (None, ""):  # run as a script: benchmarks/ and the repository on the path
    sys.path[:0] = [str(Path(__file__).resolve().parent.parent)]
from benchmarks.rows import format_rows, row  # noqa: E402
from benchmarks.timing import interleaved  # noqa: E402

A, B = 10, 10


def run(quick: bool = False) -> list[dict]:
    """Rows: verified L, ∇L, ∇²L at dps digits against the certified enclosures at dps."""
    import stumpcheck
    from stumpcheck.numerics.certified.enclosures import verified_integrals

    cases = [("loss", "certified_loss", 50), ("loss_gradient", "certified_loss_gradient", 30)]
    if not quick:
        cases += [("loss_gradient", "certified_loss_gradient", 50), ("loss_hessian", "certified_loss_hessian", 30)]
    repeats = 2 if quick else 3
    rows = []
    for name, bound_name, dps in cases:
        ours_fn, bound_fn = getattr(stumpcheck, name), getattr(stumpcheck, bound_name)

        def ours(fn=ours_fn, dps=dps):
            verified_integrals._verified.cache_clear()
            return fn(A, B, dps=dps)

        bound_fn(A, B, dps=dps)  # first calls: imports, caches of the generated code
        ours()
        (ours_s, bound_s), _ = interleaved([ours, lambda fn=bound_fn, dps=dps: fn(A, B, dps=dps)], repeats)
        start = time.perf_counter()
        ours_fn(A, B, dps=dps)  # the value ours() left in the cache
        cached_s = time.perf_counter() - start
        rows.append(row(f"{name}({A}, {B}, dps={dps}) vs {bound_name}", ours_s, f"{bound_name}, dps={dps}",
                        bound_s, kind="ours/bound", target=("<=", 10),
                        note=f"cached call {cached_s * 1e6:.0f} µs",
                        details={"a": A, "b": B, "dps": dps, "cached_seconds": cached_s, "repeats": repeats}))
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true")
    print(format_rows(run(parser.parse_args().quick)))


if __name__ == "__main__":
    main()
