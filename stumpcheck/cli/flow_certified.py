"""``stumpcheck flow --certified``: a certified tube around the population flow (see :mod:`stumpcheck.numerics.certified.tube.build`).

Called by the ``flow`` command of :mod:`stumpcheck.cli.commands` when ``--certified`` is given. Writes tube.csv,
tube.json, flow_certificate.json and tube_width.png to ``--out`` (default ``stumpcheck-tube/``); prints the
relative width in b at t = 10, 10², … as far as the tube reaches and the enclosure of b(T). The intervals'
integrals run in ``--workers`` processes (default 2 on a machine with 2 cores), or as Dask tasks with
``--scheduler`` (:func:`stumpcheck.cli.options.scheduled`; the same certificate), and are kept in
``tube_checkpoint.jsonl`` in the output directory, so an interrupted run with the same ``--out`` continues
from the finished intervals. The θ-integrals use the float64 interval layer first, Arb where it does not
suffice (the counts are printed and recorded in the certificate); ``--arb`` uses Arb only
(:mod:`stumpcheck.numerics.certified.tube.arithmetic`). Exit 0 when the tube reaches T; 1 (after writing the files, which say
``"complete": false`` and up to which t the tube is valid) when validation stopped, with where and why on
stderr; 2 for bad input.

With ``--region`` (prove the default forward-invariant region, b ∈ [30, ``--region-b-max``], with the
tube's box at T as its entry) or ``--region-certificate FILE`` (embed a region certificate already proved:
cheap checks here, its leaves re-enclosed by ``stumpcheck recheck``), flow_certificate.json holds the region
too (:mod:`stumpcheck.numerics.certified.region.flow_certificate`) and tube.json a ``for_all_t`` summary. A tube that
is incomplete, or whose box at T is not in R, gets no region: both files say "not proved" and why (the exit
status is the tube's). The last lines say which parts are proved.

Every input (the start, T, --rel-goal, --dps, --time-limit, the region options, that ``--out`` can be
written) is checked before the folder is created or any work starts. Ctrl-C stops the workers at once and
prints, on one line, that the same command resumes from ``OUT/tube_checkpoint.jsonl`` (exit 130).
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
    from stumpcheck.numerics.precision import parse_decimal

    if texts is None:
        return Fraction(0)
    (a_text, b_text) = texts
    return (abs(Fraction(parse_decimal(a_text, "a0")) - Fraction(a0))
            + abs(Fraction(parse_decimal(b_text, "b0")) - Fraction(b0)))


def _region_request(region: bool, region_file, b_max_text):
    """(region or None, region certificate document or None), checked before the tube is computed."""
    from stumpcheck.numerics.certified.region.invariant_region import DEFAULT_REGION
    from stumpcheck.numerics.precision import InputError, parse_decimal

    if region and region_file is not None:
        raise InputError("--region and --region-certificate exclude each other (prove the region, or embed one)")
    if not region and region_file is None:
        if b_max_text is not None:
            raise InputError("--region-b-max goes with --region or --region-certificate")
        return None, None
    tail = _is_tail_request(b_max_text)
    b_max = None if b_max_text is None or tail else Fraction(parse_decimal(b_max_text, "--region-b-max"))
    if region_file is None:
        return DEFAULT_REGION if b_max is None else DEFAULT_REGION.with_b_max(b_max), None
    from stumpcheck.numerics.certified.region.flow_certificate import checked_region_certificate
    from stumpcheck.numerics.certified.region.tail_certificate import is_tail_certificate
    from stumpcheck.numerics.certified.certificates.lemma_certificate import read_certificate

    document = read_certificate(region_file)
    if tail and not is_tail_certificate(document):
        raise InputError(f"{region_file}: --region-b-max inf needs a tail certificate joined to its finite region "
                         "(stumpcheck region --b-max inf)")
    try:
        return checked_region_certificate(document, b_max=b_max, tail=tail or is_tail_certificate(document)), document
    except InputError as exc:
        raise InputError(f"{region_file}: {exc}") from None


def _is_tail_request(b_max_text) -> bool:
    return b_max_text is not None and str(b_max_text).strip().lower() in ("inf", "infinity", "+inf", "∞")


def _with_tail(flow: dict, combined: dict, quiet: bool) -> dict:
    """The flow certificate with the tail b >= 1000 proved now and joined to the embedded finite region."""
    from stumpcheck.numerics.certified.region.flow_certificate import embed_region_certificate
    from stumpcheck.numerics.certified.region.tail import DEFAULT_TAIL
    from stumpcheck.numerics.certified.region.tail_certificate import tail_certificate

    if not combined["for_all_t"]["proved"]:
        return combined
    if not quiet:
        click.echo(f"proving the tail b >= {float(DEFAULT_TAIL.b_start):g} (ε = 1/b) ...", err=True)
    joined = tail_certificate(DEFAULT_TAIL, finite=combined["region"])
    if joined.get("status") != "proved":
        return combined
    return embed_region_certificate(flow, joined, tail=True)


def _band_plot(combined: dict, path):
    """bands.png of :func:`~stumpcheck.numerics.certified.region.band_plot.plot_all_time_band` for the joined
    region of ``combined`` (the weaker constants of R and R_∞), with the float64 flow from the tube's start."""
    from stumpcheck.numerics.certified.region.all_time import union_constants
    from stumpcheck.numerics.certified.region.band_plot import plot_all_time_band
    from stumpcheck.numerics.certified.region.invariant_region import Region
    from stumpcheck.numerics.certified.region.tail import TailRegion
    from stumpcheck.numerics.flow.run import run_population_flow

    tail_document = combined["region"]
    finite = tail_document["join"]["finite"]
    union = union_constants(Region.from_json(finite["region"]), TailRegion.from_json(tail_document["region"]))
    entry = finite["entry"]
    start = combined["initial"]
    flow = run_population_flow(float.fromhex(start["a0"]), float.fromhex(start["b0"]), t_max=1e12, check=False)
    return plot_all_time_band(union, entry["t"], *entry["box"]["b"], path, flow=(flow.t, flow.b),
                              rate=combined["for_all_t"]["rate"][-1])


def _say_for_all_t(for_all_t: dict) -> None:
    """The lines of an all-time ``for_all_t`` (the tail joined)."""
    bands = "; ".join(f"t = {key}: [{row['b4_over_t'][0]}, {row['b4_over_t'][1]}]"
                      for key, row in for_all_t["bands_all_time"].items() if key in ("1e+08", "1e+12", "1e+30"))
    click.echo(f"proved: {for_all_t['status']}")
    click.echo(f"proved: b(t)⁴/t in {bands}; " + "; ".join(r["statement"] for r in for_all_t["rate"]))
    interior = for_all_t.get("interior_error_all_time")
    if interior is not None:
        first, last = interior["rows"][0], interior["rows"][-1]
        click.echo(f"proved: b·sup over θ in [{interior['delta']}, 1 − {interior['delta']}] of |e(θ)| in "
                   f"[{first['sup_e_b'][0]}, {first['sup_e_b'][1]}] at t = T (M = {first['M']}); log sup|e|/log t "
                   f"+ 1/4 in [{last['log_sup_e_over_log_t_plus_quarter'][0]}, "
                   f"{last['log_sup_e_over_log_t_plus_quarter'][1]}] at t = {last['t']:g}; {interior['limits']}")
    for assumption in for_all_t.get("assumptions", []):
        click.echo(f"assumed: {assumption}")


def _region_part(out_dir, region, region_document, *, workers: int, quiet: bool, tail: bool = False) -> None:
    """Embed the region in OUT/flow_certificate.json, add for_all_t to OUT/tube.json, and say what is proved."""
    import json
    from pathlib import Path

    from stumpcheck.numerics.certified.region.flow_certificate import embed_region, embed_region_certificate
    from stumpcheck.numerics.certified.certificates.lemma_certificate import read_certificate
    from stumpcheck.numerics.certified.tube.certificate import write_flow_certificate

    certificate_path = Path(out_dir) / "flow_certificate.json"
    flow = read_certificate(certificate_path)
    if region_document is not None:
        from stumpcheck.numerics.certified.region.tail_certificate import is_tail_certificate

        combined = embed_region_certificate(flow, region_document, tail=is_tail_certificate(region_document))
    else:
        if not quiet:
            click.echo(f"proving the region b ∈ [{float(region.b_start):g}, {float(region.b_max):g}] on "
                       f"{workers} process(es) (about 30 s of CPU for B = 1000) ...", err=True)
        combined = embed_region(flow, region, workers=workers, progress=None if quiet else
                                lambda name: click.echo(f"  proving {name} ...", err=True))
        if tail:
            combined = _with_tail(flow, combined, quiet)
    write_flow_certificate(combined, certificate_path)
    summary_path = Path(out_dir) / "tube.json"
    summary = json.loads(summary_path.read_text(encoding="utf-8"))
    summary["for_all_t"] = combined["for_all_t"]
    summary_path.write_text(json.dumps(summary, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    for_all_t = combined["for_all_t"]
    if for_all_t["proved"] and for_all_t.get("horizon") == "inf":
        _say_for_all_t(for_all_t)
        plot = _band_plot(combined, Path(out_dir) / "bands.png")
        click.echo(f"wrote {plot}: the certified band of b(t)⁴/t from T to 1e30 beside the float64 flow")
        click.echo(f"the region and the tail are embedded in {certificate_path}; `stumpcheck recheck "
                   f"{certificate_path}` re-verifies the tube, the region, the tail and their join")
    elif for_all_t["proved"]:
        bands = "; ".join(f"t = {row['t']}: [{row['b4_over_t'][0]}, {row['b4_over_t'][1]}]"
                          for row in for_all_t["bands"].values())
        click.echo(f"proved: {for_all_t['statement']}")
        click.echo(f"proved: the tube's box at T = {for_all_t['entry_t']} lies in R (w ∈ {for_all_t['entry_w']}), so "
                   f"z(t) ∈ R for every t ∈ [T, t_B], t_B = {for_all_t['horizon_t_B']}; b(t)⁴/t in {bands}")
        click.echo(f"not proved: anything for t > t_B (b > {float(region.b_max):g})")
        click.echo(f"the region is embedded in {certificate_path}; `stumpcheck recheck {certificate_path}` "
                   "re-verifies the tube and the region")
    else:
        click.echo(f"{for_all_t['status']}; no region embedded")


def certified_flow(a0: float, b0: float, t_max: float, *, out_dir, dps, rel_goal: float, quiet: bool,
                   time_limit: float | None = None, texts=None, workers=None, region: bool = False,
                   region_file=None, region_b_max=None, scheduler=None, arithmetic: str = "fast") -> None:
    import os

    from stumpcheck.cli.options import scheduled
    from stumpcheck.numerics.certified.tube.build import check_tube_arguments
    from stumpcheck.numerics.resources import check_writable_dir

    from stumpcheck.numerics.certified.tube.statement import MAX_TUBE_DPS, MIN_TUBE_DPS
    from stumpcheck.numerics.precision import InputError

    dps = DEFAULT_TUBE_DPS if dps is None else dps
    if not MIN_TUBE_DPS <= int(dps) <= MAX_TUBE_DPS:
        raise InputError(f"--dps of the certified tube must be in [{MIN_TUBE_DPS}, {MAX_TUBE_DPS}], got {dps}")
    check_tube_arguments(a0, b0, t_max, rel_goal, float(_initial_radius(a0, b0, texts)))
    if time_limit is not None and not (time_limit > 0 and time_limit < float('inf')):
        raise InputError(f"--time-limit must be a positive number of seconds, got {time_limit:g}")
    region_, region_document = _region_request(region, region_file, region_b_max)
    out_dir = out_dir or "stumpcheck-tube"
    check_writable_dir(out_dir, "--out")
    from stumpcheck.numerics.resources import check_output_files

    # the checkpoint is read first (a FIFO there would block the resume), the rest written at the end
    check_output_files(out_dir, [CHECKPOINT, "tube.csv", "tube.json", "flow_certificate.json", "tube_width.png",
                                 "bands.png"], "--out")
    given = workers is not None
    workers = int(workers) if workers is not None else (2 if (os.cpu_count() or 1) >= 2 else 1)
    echo = None if quiet else (lambda text: click.echo(text, err=True))
    with scheduled(scheduler, workers, workers_given=given, echo=echo) as on:  # a Dask scheduler answers, or exit 2
        _tube_and_region(a0, b0, t_max, out_dir=out_dir, dps=dps, rel_goal=rel_goal, quiet=quiet,
                         time_limit=time_limit, texts=texts, workers=on.workers, region_=region_,
                         region_document=region_document, arithmetic=arithmetic, tail=_is_tail_request(region_b_max))


def _arithmetic_text(tube) -> str:
    """How the tube's θ-integrals were enclosed (the counts of the certificate's arithmetic record)."""
    if tube.arithmetic == "arb":
        return f"Arb at {tube.dps} digits, point integrals to the tolerance the bounds need"
    counts = tube.counts.as_json()
    falls = ", ".join(f"{counts[k]['arb']}/{sum(counts[k].values())} {k}" for k in ("gradients", "hessians", "cells"))
    return (f"float64 interval layer; fell back to Arb at {tube.dps} digits for {falls}; "
            f"{counts['cells']['split']} cells split")


def _report_tube(tube, t_max, rel_goal, out_dir, dps, arithmetic) -> None:
    """Print the tube's widths, counts and seconds, and write its files to ``out_dir``."""
    from stumpcheck.numerics.certified.tube.report import tube_summary, write_tube_outputs
    from stumpcheck.numerics.provenance import provenance

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
               f"{tube.rigorous_integrals} rigorous θ-integrals ({_arithmetic_text(tube)}), {tube.seconds:.1f} s wall, "
               f"{tube.cpu_seconds:.1f} s CPU on {tube.workers} process(es) (the intervals' integrals: "
               f"{tube.integral_cpu_seconds:.1f} s CPU, resumed ones included); evidence: {summary['evidence']}")
    precision = f"Arb, {dps} digits" if arithmetic == "arb" else f"float64 intervals, Arb ({dps} digits) fallbacks"
    paths = write_tube_outputs(tube, out_dir, provenance=provenance(seed=None, precision=precision))
    click.echo(f"wrote {', '.join(p.name for p in paths)} to {out_dir}")


def _tube_and_region(a0, b0, t_max, *, out_dir, dps, rel_goal, quiet, time_limit, texts, workers, region_,
                     region_document, arithmetic: str = "fast", tail: bool = False) -> None:
    from pathlib import Path

    from stumpcheck.numerics.certified.tube.build import certified_tube

    Path(out_dir).mkdir(parents=True, exist_ok=True)
    from stumpcheck.progress import fraction_bar

    try:  # the checkpoint holds every finished interval: an interrupt up to the written files resumes from it
        with fraction_bar("certified tube (fraction of log(1 + T))", quiet=quiet) as progress:
            tube = certified_tube(a0, b0, t_max, rel_goal=rel_goal, dps=dps, time_limit=time_limit,
                                  progress=progress, r0=_initial_radius(a0, b0, texts), workers=workers,
                                  checkpoint=Path(out_dir) / CHECKPOINT, arithmetic=arithmetic)
        _report_tube(tube, t_max, rel_goal, out_dir, dps, arithmetic)
    except KeyboardInterrupt:
        click.echo(f"stumpcheck flow --certified: interrupted; the finished intervals are kept in "
                   f"{Path(out_dir) / CHECKPOINT}: the same command resumes from them", err=True)
        raise click.exceptions.Exit(130) from None
    click.echo(f"proved: z(t) ∈ the tube's boxes for t ∈ [0, {tube.t_reached if not tube.complete else t_max:g}]"
               + ("" if tube.complete else f" only (incomplete: T = {t_max:g} not reached)"))
    if region_ is not None:
        _region_part(out_dir, region_, region_document, workers=workers, quiet=quiet, tail=tail)
    elif tube.complete:
        click.echo("for all t >= T: not proved here (--region proves the region beyond T and embeds it)")
    if not tube.complete:
        click.echo(f"stumpcheck flow --certified: validation stopped at t = {tube.t_reached:.6g} < T = {t_max:g}: "
                   f"{tube.stop_reason}", err=True)
        click.get_current_context().exit(1)
