"""The region proof on Dask: two local workers against one, and one worker against this process.

``run(quick)`` proves the region's four obligations (``region_certificate``, the default region cut at B)
on b ∈ [30, 100] (quick: [30, 40]) three ways, interleaved in the same run (best of 2, quick 1): in this
process, and on Dask LocalClusters of one and of two single-threaded worker processes started here
(``stumpcheck.numerics.scheduling.connect``; the boxes' enclosures are the tasks). Before timing, each
cluster proves a short range once, so that its workers have imported stumpcheck and compiled the margins.
Rows:

* **two Dask workers vs one** (target ≥ 1.5: the enclosures are independent and the parent only decides
  in order; on 2 cores shared with other jobs the ratio is bounded by the free cores);
* **one Dask worker vs this process** (informative: what sending the boxes costs).

The certificates of the three runs are compared with their ``seconds`` and ``digest`` masked (the only
fields that measure the run); the note says whether they agree.

Usage: python -m benchmarks.bench_dask [--quick]
"""

from __future__ import annotations

import argparse
import re
import sys
from pathlib import Path

if __package__ in (None, ""):  # run as a script: benchmarks/ and the repository on the path
    sys.path[:0] = [str(Path(__file__).resolve().parent.parent)]
from benchmarks.rows import format_rows, row  # noqa: E402
from benchmarks.timing import interleaved  # noqa: E402


def _masked(document: dict) -> str:
    import json

    text = json.dumps(document, sort_keys=True)
    return re.sub(r'"digest": "[0-9a-f]+"', '"digest": ""', re.sub(r'"seconds": [0-9.e+-]+', '"seconds": 0', text))


def run(quick: bool = False) -> list[dict]:
    from fractions import Fraction

    from stumpcheck.numerics.certified.region.certificate import region_certificate
    from stumpcheck.numerics.certified.region.invariant_region import DEFAULT_REGION
    from stumpcheck.numerics.scheduling import connect, local, using

    b_max = Fraction(40 if quick else 100)
    repeats = 1 if quick else 2
    region = DEFAULT_REGION.with_b_max(b_max)
    warm = DEFAULT_REGION.with_b_max(31)
    with connect("local", 1) as one, connect("local", 2) as two:
        for scheduler in (one, two):
            with using(scheduler):
                region_certificate(warm)
        here = local(1)

        def proof(scheduler):
            def prove():
                with using(scheduler):
                    return region_certificate(region)
            return prove

        region_certificate(warm)  # this process's margins compiled too
        (t_here, t_one, t_two), documents = interleaved([proof(here), proof(one), proof(two)], repeats)
    same = len({_masked(d) for d in documents}) == 1
    leaves = sum(r["leaves"] for r in documents[0]["summary"].values())
    note = (f"b in [30, {float(b_max):g}], {leaves} leaves, status {documents[0]['status']}; the three certificates "
            f"{'agree' if same else 'DIFFER'} byte for byte but seconds and digest")
    details = {"b_max": float(b_max), "repeats": repeats, "leaves": leaves, "certificates_agree": same,
               "seconds": {"this process": t_here, "dask 1 worker": t_one, "dask 2 workers": t_two}}
    return [
        row(f"region proof b in [30, {float(b_max):g}]: Dask, 2 local workers vs 1", t_two, "Dask, 1 local worker",
            t_one, target=(">=", 1.5), note=note, details=details),
        row(f"region proof b in [30, {float(b_max):g}]: Dask, 1 local worker vs this process", t_one,
            "this process, no Dask", t_here, kind="ours/bound",
            note="informative: the cost of sending the boxes as tasks", details=details),
    ]


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true")
    args = parser.parse_args(argv)
    print(format_rows(run(quick=args.quick)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
