"""Files of a certified tube: tube.csv, tube.json, flow_certificate.json and the plot of its relative width.

tube.csv has one row per sub-interval of each interval, columns ``t_lo,t_hi,a_lo,a_hi,b_lo,b_hi`` (outward-rounded decimals
from the certificate: z(t) ∈ [a_lo, a_hi] × [b_lo, b_hi] for t ∈ [t_lo, t_hi]). tube.json summarises
the run: complete or not and up to which t it is valid, the relative width in b at chosen times, the
enclosure of b(T), the counts (also of the θ-integrals by arithmetic) and the seconds.
"""

from __future__ import annotations

import csv
import json
import math
from fractions import Fraction
from pathlib import Path

from flint import arb, ctx

from stumpcheck.numerics.certified.tube.build import Tube
from stumpcheck.numerics.certified.tube.certificate import flow_certificate, write_flow_certificate
from stumpcheck.numerics.certified.tube.records import lower_decimal, parse_upper, upper_decimal
from stumpcheck.numerics.json_output import finite_json

__all__ = ["write_tube_outputs", "tube_summary", "enclosure_at", "REPORT_TIMES"]

CSV_COLUMNS = ("t_lo", "t_hi", "a_lo", "a_hi", "b_lo", "b_hi")
#: the times at which tube.json reports the relative width in b (those the tube reaches)
REPORT_TIMES = (1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e8, 1e10, 1e12)


def enclosure_at(tube: Tube, t: float):
    """(a_lo, a_hi, b_lo, b_hi) decimals enclosing z(t): z̃(s) ± r_sup of the sub-interval with
    s = log(1 + t) (s as a ball), or None if the tube does not reach t."""
    from stumpcheck.numerics.certified.tube.chebyshev import value_at
    from stumpcheck.numerics.certified.tube.piece import sub_interval_s

    with ctx.workprec(128):
        s = (arb(t) if isinstance(t, arb) else arb(Fraction(t).numerator) / Fraction(t).denominator).log1p()
        for interval in tube.intervals:
            count = len(interval.rows)
            for i in range(count):
                s_lo, s_hi = sub_interval_s(interval.piece, i, count)
                if s_lo.lower() <= s.upper() and s.lower() <= s_hi.upper():
                    s0, s1 = arb(interval.piece.s0), arb(interval.piece.s1)
                    x = (2 * s - s0 - s1) / (s1 - s0)
                    a, b = value_at(interval.piece, x)
                    r = parse_upper(interval.record["r_sup"][i])
                    return (lower_decimal(a - r, 17), upper_decimal(a + r, 17), lower_decimal(b - r, 17),
                            upper_decimal(b + r, 17))
    return None


def _relative_width(lo: str, hi: str) -> float:
    lo, hi = float(lo), float(hi)
    return (hi - lo) / abs(0.5 * (hi + lo))


def tube_summary(tube: Tube) -> dict:
    """The figures tube.json reports."""
    widths = {}
    for t in REPORT_TIMES:
        if t <= tube.t_reached:
            box = enclosure_at(tube, t)
            if box is not None:
                widths[f"{t:g}"] = {"b_lo": box[2], "b_hi": box[3], "relative_width_b": _relative_width(box[2], box[3])}
    final = enclosure_at(tube, tube.t_max) if tube.complete else None
    return {
        "complete": bool(tube.complete),
        "t_max": tube.t_max,
        "valid_to_t": tube.t_reached,
        "stop_reason": tube.stop_reason or None,
        "initial": {"a0": tube.a0, "b0": tube.b0, "radius": tube.r0},
        "intervals": len(tube.intervals),
        "rejected_steps": tube.rejected,
        "rows": sum(len(iv.rows) for iv in tube.intervals),
        "rigorous_integrals": tube.rigorous_integrals,
        "dps": tube.dps,
        "seconds": round(tube.seconds, 2),
        "cpu_seconds": round(tube.cpu_seconds, 2),
        "integral_cpu_seconds": round(tube.integral_cpu_seconds, 2),
        "workers": tube.workers,
        "arithmetic": {"integrals": tube.arithmetic, "counts": tube.counts.as_json()},
        "method": "Chebyshev pieces, Bernstein-ellipse defect bounds (format stumpcheck-flow-certificate/3)",
        "relative_width_b_at": widths,
        "enclosure_at_t_max": None if final is None else {"a": [final[0], final[1]], "b": [final[2], final[3]],
                                                           "relative_width_b": _relative_width(final[2], final[3])},
        "evidence": "certified" if tube.complete else "certified up to valid_to_t (incomplete)",
    }


def _plot(document: dict, path: Path) -> Path:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    t, width = [], []
    for item in document["intervals"]:
        for row, radius in zip(item["rows"], item["r_sup"]):
            t_lo, t_hi = float(row[0]), float(row[1])
            b_lo, b_hi = float(row[4]), float(row[5])
            t.append(math.sqrt(max(t_lo, 1e-3) * t_hi))
            width.append(2 * float(radius) / (0.5 * (b_lo + b_hi)))
    figure, axis = plt.subplots(figsize=(6, 4))
    axis.loglog(t, width, marker=".", linewidth=1)
    axis.set_xlabel("t")
    axis.set_ylabel("relative width in b of the tube (2 r / b)")
    axis.set_title("certified tube around the population flow from (a0, b0)")
    axis.grid(True, which="both", alpha=0.3)
    figure.tight_layout()
    figure.savefig(path, dpi=120)
    plt.close(figure)
    return path


def write_tube_outputs(tube: Tube, out_dir, *, provenance: dict) -> list[Path]:
    """Write tube.csv, tube.json, flow_certificate.json and tube_width.png into ``out_dir``; the paths."""
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    document = flow_certificate(tube)
    csv_path = out / "tube.csv"
    with csv_path.open("w", newline="", encoding="utf-8") as handle:
        writer = csv.writer(handle)
        writer.writerow(CSV_COLUMNS)
        for item in document["intervals"]:
            for row in item["rows"]:
                writer.writerow(row)
    summary = tube_summary(tube)
    summary["provenance"] = provenance
    json_path = out / "tube.json"
    json_path.write_text(json.dumps(finite_json(summary), indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    certificate_path = write_flow_certificate(document, out / "flow_certificate.json")
    paths = [csv_path, json_path, certificate_path]
    if document["intervals"]:
        paths.append(_plot(document, out / "tube_width.png"))
    return paths
