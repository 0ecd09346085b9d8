"""``stumpcheck region``: certify the forward-invariant region |λ| ≤ c/b beyond the tube, or re-check its certificate.

Registered in :mod:`stumpcheck.cli.commands`. The region, its obligations and what they prove are in
:mod:`stumpcheck.numerics.certified.region.invariant_region`; the certificate and its re-check in
:mod:`stumpcheck.numerics.certified.region.certificate`. Exit status 0 if proved (and the entry box, if
given, lies in the region) or if the re-check passes, 1 if not; bad input raises :class:`stumpcheck.numerics.precision.InputError` (the CLI turns it into exit 2).

Every input is checked before any work: B, the entry (its decimals, lo <= hi, b > 0, and the entry check
itself, which is cheap), that ``--out`` can be written; with ``--recheck``, the certificate's limits and
entry's shape. ``--recheck`` checks what was asked: ``--b-max`` given on the command line must be the B the
certificate proves, and ``--entry-t``/``--entry-box`` given must be its recorded entry (else FAIL, exit 1).
"""

from __future__ import annotations

import time
from fractions import Fraction
from pathlib import Path

import click

from stumpcheck.numerics.precision import InputError, parse_decimal
from stumpcheck.cli.options import scheduled, scheduler_option, shown

__all__ = ["region"]


def _entry(t_text, box_text):
    if t_text is None and box_text is None:
        return None
    if t_text is None or box_text is None:
        raise InputError("--entry-t and --entry-box go together")
    parts = [p.strip() for p in str(box_text).split(",")]
    if len(parts) != 4 or not all(parts):
        raise InputError(f"--entry-box must be A_LO,A_HI,B_LO,B_HI (four decimals), got {shown(box_text)}")
    for part in parts:
        parse_decimal(part, "--entry-box")
    t = parse_decimal(t_text, "--entry-t")
    if not t >= 0:
        raise InputError(f"--entry-t must be >= 0, got {shown(t_text)}")
    return {"t": str(t_text).strip(), "box": {"a": (parts[0], parts[1]), "b": (parts[2], parts[3])}}


def _asked_fault(document: dict, b_max, entry, b_min=None) -> str | None:
    """Why the certificate is not of what was asked (b_start, B, the entry), or None."""
    from stumpcheck.numerics.certified.region.invariant_region import Region

    if b_min is not None:
        try:
            start = Region.from_json(document.get("region")).b_start
        except InputError:
            start = None
        if start != b_min:
            shown_b = "no readable b_start" if start is None else f"b_start = {float(start):g}"
            return f"the certificate proves {shown_b}, not the asked --b-min {float(b_min):g}"

    if b_max is not None:
        try:
            proved = Region.from_json(document.get("region")).b_max
        except InputError:
            proved = None
        if proved != b_max:
            shown_b = "no readable B" if proved is None else f"B = {float(proved):g}"
            return f"the certificate proves {shown_b}, not the asked --b-max {float(b_max):g}"
    if entry is not None:
        recorded = document.get("entry")
        same = isinstance(recorded, dict) and Fraction(recorded["t"]) == Fraction(entry["t"]) and all(
            [Fraction(x) for x in recorded["box"][k]] == [Fraction(x) for x in entry["box"][k]] for k in ("a", "b"))
        if not same:
            return "the certificate's entry is not the asked --entry-t/--entry-box"
    return None


def _is_infinite(text) -> bool:
    return str(text).strip().lower() in ("inf", "infinity", "+inf", "∞")


def _tail_fault(document: dict, b_max, b_min) -> str | None:
    """Why a tail certificate is not of what was asked (--b-max must be inf, --b-min its B), or None."""
    from stumpcheck.numerics.certified.region.tail import TailRegion

    if b_max is not None and b_max != "inf":
        return f"the certificate proves the tail b >= B (b_max = inf), not the asked --b-max {float(b_max):g}"
    if b_min is not None:
        try:
            proved = TailRegion.from_json(document.get("region")).b_start
        except InputError:
            proved = None
        if proved != b_min:
            return f"the certificate's tail starts at {'no readable B' if proved is None else float(proved)}, " \
                   f"not the asked --b-min {float(b_min):g}"
    return None


def _recheck(path: str, points: str, b_max=None, entry=None, arithmetic: str = "fast", b_min=None) -> None:
    from stumpcheck.numerics.certified.region.any_certificate import check_limits as check_region_limits
    from stumpcheck.numerics.certified.region.any_certificate import recheck_any as recheck_region
    from stumpcheck.numerics.certified.region.certificate import is_region_certificate
    from stumpcheck.numerics.certified.region.tail_certificate import is_tail_certificate
    from stumpcheck.numerics.certified.certificates.lemma_certificate import read_certificate

    document = read_certificate(path)
    try:
        tail = is_tail_certificate(document)
        if not (is_region_certificate(document) or tail):
            raise InputError("not a region certificate (format stumpcheck-region-certificate/1 or "
                             "stumpcheck-region-tail-certificate/1)")
        check_region_limits(document)
        if tail:
            fault = _tail_fault(document, b_max, b_min)
        elif b_max == "inf":
            fault = "the certificate proves a finite region, not the asked --b-max inf"
        else:
            fault = _asked_fault(document, b_max, entry, b_min)
        if fault is None:
            ok, message = recheck_region(document, points=points, arithmetic=arithmetic,
                                         progress=lambda name: click.echo(f"  re-checking {name} ...", err=True))
        else:
            ok, message = False, fault
    except InputError as exc:
        raise InputError(f"{path}: {exc}") from None
    click.echo(f"{'PASS' if ok else 'FAIL'} {path}: {message}")
    click.get_current_context().exit(0 if ok else 1)


@click.command("region")
@click.option("--b-max", "b_max_text", default="1000", show_default=True,
              help="Upper end B of the certified b range, b_start < B <= 10000 (time grows about like B); or "
                   "inf: the tail b >= B through ε = 1/b (docs/tail.md), from B = --b-min if that is >= 1000, "
                   "else the finite part [--b-min, 1000] and the tail from 1000, joined in one certificate.")
@click.option("--b-min", "b_min_text", default=None,
              help="Lower end of the b range (default: the region's b_start, 30); with --b-max inf and a value "
                   ">= 1000, the tail's B.")
@click.option("--join", "join_file", default=None, type=click.Path(dir_okay=False),
              help="With --b-max inf and --b-min B >= 1000: a finite region certificate ending at b = B, joined "
                   "to the tail (its top edge must lie in the tail region; re-checked by `stumpcheck recheck`).")
@click.option("--workers", default=1, show_default=True, type=click.IntRange(1, 64),
              help="Local processes that enclose the boxes (1: this process); with --scheduler local, the Dask "
                   "cluster's processes.")
@scheduler_option
@click.option("--entry-t", "entry_t", default=None, help="Time T of an entry box (e.g. the tube's end).")
@click.option("--entry-box", "entry_box", default=None,
              help="The state's box at T: A_LO,A_HI,B_LO,B_HI; checked to lie in the region, with bands of b(t)⁴/t.")
@click.option("--out", "out_dir", default="stumpcheck-region", show_default=True, type=click.Path(file_okay=False),
              help="Folder for region_certificate.json.")
@click.option("--recheck", "recheck_file", default=None, type=click.Path(dir_okay=False),
              help="Re-check this region certificate instead (fresh enclosures of every leaf).")
@click.option("--points", default="midpoint", show_default=True, type=click.Choice(["midpoint", "corners"]),
              help="With --recheck: where each recorded enclosure is tested against the margin's value.")
@click.option("--arb", "arb_only", is_flag=True,
              help="Arb for every box: to prove (no float64 θ-integrals), or with --recheck to re-enclose every "
                   "leaf whatever produced it.")
def region(b_max_text, b_min_text, join_file, workers, scheduler, entry_t, entry_box, out_dir, recheck_file, points,
           arb_only) -> None:
    """Certify R = {b_start <= b <= B, |a − calibration_a(b)| <= c/b}: forward invariant, with drift bounds.

    The region's constants are the defaults of stumpcheck.numerics.certified.region.invariant_region (b_start = 30, c = 1/2,
    d_minus = 5/2, d_plus = 11/2); only b_start and B are chosen here. With --b-max inf, the tail b >= B is proved
    too, in ε = 1/b (same c, d_minus, d_plus; the exponentially small rest of the loss enclosed for every b >= B,
    docs/tail.md §4: the certificate's assumptions list is empty). Writes OUT/region_certificate.json.
    """
    from click.core import ParameterSource

    from stumpcheck.numerics.certified.region.invariant_region import DEFAULT_REGION
    from stumpcheck.numerics.certified.region.certificate import check_entry_shape, entry_record, region_certificate

    infinite = _is_infinite(b_max_text)
    b_max = "inf" if infinite else Fraction(parse_decimal(b_max_text, "--b-max"))
    b_min = None if b_min_text is None else Fraction(parse_decimal(b_min_text, "--b-min"))
    if join_file is not None and not infinite:
        raise InputError("--join goes with --b-max inf (it joins a finite region certificate to the tail)")
    entry = _entry(entry_t, entry_box)
    if entry is not None:
        check_entry_shape(entry)
    context = click.get_current_context()  # where the boxes run, until the command ends (or exit 2: no scheduler)
    if recheck_file is not None:
        unused = [name for name, key in (("--join", "join_file"), ("--out", "out_dir"))
                  if context.get_parameter_source(key) is not ParameterSource.DEFAULT]
        if unused:  # a re-check writes nothing and joins nothing
            raise InputError(f"{', '.join(unused)} {'does' if len(unused) == 1 else 'do'} nothing with --recheck")
    given = context.get_parameter_source("workers") is not ParameterSource.DEFAULT
    context.with_resource(scheduled(scheduler, workers, workers_given=given,
                                    echo=lambda text: click.echo(f"  {text}", err=True)))
    if recheck_file is not None:
        asked = click.get_current_context().get_parameter_source("b_max_text") is not ParameterSource.DEFAULT
        _recheck(recheck_file, points, b_max if asked else None, entry, "arb" if arb_only else "fast", b_min)
        return
    if infinite:
        _prove_tail(b_min, join_file, entry, out_dir, int(workers), "arb" if arb_only else "fast")
        return
    from stumpcheck.numerics.certified.certificates.lemma_certificate import write_certificate
    from stumpcheck.numerics.resources import check_writable_dir

    region_ = DEFAULT_REGION.with_b_max(b_max)
    if b_min is not None:
        from stumpcheck.numerics.certified.region.invariant_region import Region

        region_ = Region(b_min, b_max, region_.c, region_.d_minus, region_.d_plus)
    if entry is not None:
        entry_record(region_, entry)  # its check by Arb, cheap: a malformed box is refused before the proof
    check_writable_dir(out_dir, "--out")
    started = time.perf_counter()
    document = region_certificate(region_, entry=entry, workers=int(workers), arithmetic="arb" if arb_only else "fast",
                                  progress=lambda name: click.echo(f"  proving {name} ...", err=True))
    path = write_certificate(document, Path(out_dir) / "region_certificate.json", one_per_line=())
    click.echo(f"{document['status'].upper()}: {document['statement']}")
    for name, row in document["summary"].items():
        arithmetic = (f", {row['fast_leaves']} by float64 θ-integrals, {row['fallbacks']} Arb fallbacks"
                      if "fast_leaves" in row else "")
        click.echo(f"  {name}: {row['status']}, {row['leaves']} leaves ({row['boxes']} boxes, depth "
                   f"{row['max_depth']}){arithmetic}, {row['prec_bits']} bits, {row['seconds']} s")
    record = document.get("entry")
    if record is not None:
        check = record["check"]
        click.echo(f"  entry at t = {record['t']}: {'inside R' if check['inside'] else 'NOT inside R'}; "
                   f"w ∈ {check['w']}" + (f"; horizon t_B >= {record['horizon_t_B']}" if check["inside"] else ""))
    click.echo(f"wrote {path} ({time.perf_counter() - started:.1f} s)")
    entry_ok = record is None or record["check"]["inside"]
    click.get_current_context().exit(0 if document["status"] == "proved" and entry_ok else 1)


def _prove_tail(b_min, join_file, entry, out_dir, workers: int, arithmetic: str) -> None:
    """``--b-max inf``: the tail from B = b_min (>= 1000), joined to ``--join``'s finite certificate if given;
    or, for b_min < 1000, the finite region [b_min, 1000] proved first and joined to the tail from 1000."""
    from stumpcheck.numerics.certified.certificates.lemma_certificate import read_certificate, write_certificate
    from stumpcheck.numerics.certified.region.certificate import is_region_certificate, region_certificate
    from stumpcheck.numerics.certified.region.invariant_region import DEFAULT_REGION, Region
    from stumpcheck.numerics.certified.region.tail import DEFAULT_TAIL, LEMMA_E_B_MIN, TailRegion
    from stumpcheck.numerics.certified.region.tail_certificate import _join_record, tail_certificate
    from stumpcheck.numerics.resources import check_writable_dir

    b_min = DEFAULT_REGION.b_start if b_min is None else b_min
    if entry is not None and b_min >= LEMMA_E_B_MIN:
        raise InputError("--entry-t/--entry-box go with a finite region (a --b-min below 1000): the entry lies in it")
    finite = None
    if b_min >= LEMMA_E_B_MIN:
        tail = TailRegion(b_min, DEFAULT_TAIL.c, DEFAULT_TAIL.d_minus, DEFAULT_TAIL.d_plus)
        if join_file is not None:
            finite = read_certificate(join_file)
            if not is_region_certificate(finite):
                raise InputError(f"{join_file}: not a finite region certificate (format stumpcheck-region-certificate/1)")
            _join_record(tail, finite)  # B and c must fit: refused before proving
    else:
        if join_file is not None:
            raise InputError("--join needs --b-min B >= 1000 (the tail's start, where the finite region ends)")
        tail = DEFAULT_TAIL
        finite_region = Region(b_min, tail.b_start, DEFAULT_REGION.c, DEFAULT_REGION.d_minus, DEFAULT_REGION.d_plus)
    check_writable_dir(out_dir, "--out")
    started = time.perf_counter()
    if finite is None and b_min < LEMMA_E_B_MIN:
        if entry is not None:
            from stumpcheck.numerics.certified.region.certificate import entry_record

            entry_record(finite_region, entry)  # its check by Arb, cheap: a malformed box is refused first
        finite = region_certificate(finite_region, entry=entry, workers=workers, arithmetic=arithmetic,
                                    progress=lambda name: click.echo(f"  proving the finite region's {name} ...",
                                                                     err=True))
        if finite["status"] != "proved":
            click.echo(f"NOT PROVED: the finite region [{float(b_min):g}, 1000] ({finite['summary']})")
    document = tail_certificate(tail, finite=finite,
                                progress=lambda name: click.echo(f"  proving the tail's {name} ...", err=True))
    path = write_certificate(document, Path(out_dir) / "region_certificate.json", one_per_line=())
    click.echo(f"{document['status'].upper()}: {document['statement']}")
    for name, row in document["summary"].items():
        click.echo(f"  {name}: {row['status']}, {row['leaves']} leaves (depth {row['max_depth']}), smallest lower "
                   f"end {row['smallest_lower']}, {row['seconds']} s CPU")
    click.echo(f"  rest: |b⁴·∂E/∂a|, |b⁴·∂E/∂b| <= {document['rest']['bound']} for every b >= "
               f"{document['region']['b_min']} (enclosed, docs/tail.md §4); assumptions: "
               + ("none" if not document["assumptions"] else "; ".join(document["assumptions"])))
    if document["join"] is not None:
        joined = document["join"]["finite"]
        click.echo(f"  joined: the finite region b ∈ [{joined['region']['b_start']}, {joined['region']['b_max']}] "
                   f"({joined['status']}); `stumpcheck recheck` re-checks both")
    click.echo(f"wrote {path} ({time.perf_counter() - started:.1f} s)")
    record = None if document["join"] is None else document["join"]["finite"].get("entry")
    if record is not None:
        click.echo(f"  entry at t = {record['t']}: {'inside R' if record['check']['inside'] else 'NOT inside R'}; "
                   f"w ∈ {record['check']['w']}")
    ok = document["status"] == "proved" and (document["join"] is None or document["join"]["finite"]["status"] == "proved")
    ok = ok and (record is None or record["check"]["inside"])
    click.get_current_context().exit(0 if ok else 1)
