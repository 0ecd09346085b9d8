"""``stumpcheck flow --certified``: a certified tube around the population flow (see :mod:`numerics.certified.tube`).

Called by the ``flow`` command of :mod:`stumpcheck.cli` when ``--certified`` is given. Writes tube.csv,
tube.json, flow_certificate.json and tube_width.png to ``--out`` (default ``stumpcheck-tube/``); prints the
relative width in b at t = 10, 10², … as far as the tube reaches and the enclosure of b(T). The intervals'
integrals run in ``--workers`` processes (default 2 on a machine with 2 cores) and are kept in
``tube_checkpoint.jsonl`` in the output directory, so an interrupted run with the same ``--out`` continues
from the finished intervals. Exit 0 when the tube reaches T; 1 (after writing the files, which say
``"complete": false`` and up to which t the tube is valid) when validation stopped, with where and why on
stderr; 2 for bad input.
"""

from __future__ import annotations

from fractions import Fraction

import click

__all__ = ["certified_flow"]

#: Working digits of the tube's rigorous θ-integrals when --dps is not given
DEFAULT_TUBE_DPS = 15
CHECKPOINT = "tube_checkpoint.jsonl"


def _initial_radius(a0: float, b0: float, texts) -> Fraction:
    """A radius of a disk about the float64 start (a0, b0) containing the decimal start the user wrote
    (0 when both decimals are exact floats, as 10 is): |Δa| + |Δb| ≥ the Euclidean distance."""
    from numerics.precision import parse_decimal

    if texts is None:
        return Fraction(0)
    (a_text, b_text) = texts
    return (abs(Fraction(parse_decimal(a_text, "a0")) - Fraction(a0))
            + abs(Fraction(parse_decimal(b_text, "b0")) - Fraction(b0)))


def certified_flow(a0: float, b0: float, t_max: float, *, out_dir, dps, rel_goal: float, quiet: bool,
                   time_limit: float | None = None, texts=None, workers=None) -> None:
    import os
    from pathlib import Path

    from numerics.certified.tube import certified_tube, check_tube_arguments
    from numerics.certified.tube_report import tube_summary, write_tube_outputs
    from numerics.provenance import provenance
    from numerics.resources import check_writable_dir

    dps = DEFAULT_TUBE_DPS if dps is None else dps
    check_tube_arguments(a0, b0, t_max, rel_goal, float(_initial_radius(a0, b0, texts)))
    if time_limit is not None and not (time_limit > 0 and time_limit < float('inf')):
        from numerics.precision import InputError

        raise InputError(f"--time-limit must be a positive number of seconds, got {time_limit:g}")
    out_dir = out_dir or "stumpcheck-tube"
    check_writable_dir(out_dir, "--out")
    Path(out_dir).mkdir(parents=True, exist_ok=True)
    from stumpcheck.progress import fraction_bar

    with fraction_bar("certified tube (fraction of log(1 + T))", quiet=quiet) as progress:
        workers = int(workers) if workers is not None else (2 if (os.cpu_count() or 1) >= 2 else 1)
        tube = certified_tube(a0, b0, t_max, rel_goal=rel_goal, dps=dps, time_limit=time_limit, progress=progress,
                              r0=_initial_radius(a0, b0, texts), workers=workers,
                              checkpoint=Path(out_dir) / CHECKPOINT)
    summary = tube_summary(tube)
    for t, row in summary["relative_width_b_at"].items():
        click.echo(f"t = {t:>6}: b in [{row['b_lo']}, {row['b_hi']}], relative width {row['relative_width_b']:.2e}")
    final = summary["enclosure_at_t_max"]
    if final is not None:
        click.echo(f"b(T = {t_max:g}) in [{final['b'][0]}, {final['b'][1]}] (relative width "
                   f"{final['relative_width_b']:.2e}); a(T) in [{final['a'][0]}, {final['a'][1]}]")
        if final["relative_width_b"] > rel_goal:
            click.echo(f"note: the relative width in b at T, {final['relative_width_b']:.2e}, is above --rel-goal "
                       f"{rel_goal:g} (the tube is valid; it is not that narrow)")
    click.echo(f"{len(tube.intervals)} intervals ({summary['rows']} rows, {tube.rejected} split), "
               f"{tube.rigorous_integrals} rigorous θ-integrals at {tube.dps} digits, {tube.seconds:.1f} s wall, "
               f"{tube.cpu_seconds:.1f} s CPU on {tube.workers} process(es) (the intervals' integrals: "
               f"{tube.integral_cpu_seconds:.1f} s CPU, resumed ones included); evidence: {summary['evidence']}")
    paths = write_tube_outputs(tube, out_dir, provenance=provenance(seed=None, precision=f"Arb, {dps} digits"))
    click.echo(f"wrote {', '.join(p.name for p in paths)} to {out_dir}")
    if not tube.complete:
        click.echo(f"stumpcheck flow --certified: validation stopped at t = {tube.t_reached:.6g} < T = {t_max:g}: "
                   f"{tube.stop_reason}", err=True)
        click.get_current_context().exit(1)
