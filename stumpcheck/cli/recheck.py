"""``stumpcheck recheck CERT.json``: re-check a lemma certificate in this process, at another precision.

Registered in :mod:`stumpcheck.cli.commands`. Reads a certificate written by ``stumpcheck verify --certified``
(``<lemma>.certificate.json``, format ``stumpcheck-lemma-certificate/1``) and runs
:func:`stumpcheck.numerics.certified.certificates.lemma_recheck.recheck`: the leaves tile the stated domain (exact rational arithmetic),
every leaf's margin is enclosed again at ``--dps`` digits (default: the certificate's digits + 10, so a
working precision other than the certificate's) with lower end ≥ 0 (> 0 for a strict statement), and the
recorded enclosures contain the margin's value at each leaf's midpoint and corners.

A flow certificate of ``stumpcheck flow --certified`` (format ``stumpcheck-flow-certificate/1``) is re-checked
by :func:`stumpcheck.numerics.certified.tube.certificate.recheck_flow_certificate`: the intervals cover [0, T] without gaps,
every interval's defect and log-norm bounds again at ``--dps`` digits (θ-integrals by the float64 interval layer
first, Arb where it does not confirm a bound; ``--arb``: Arb only, whatever built the certificate), every box
contains its recomputed radius.
If it embeds a region (``stumpcheck flow --certified --region``), the region is re-checked after the tube
(:func:`stumpcheck.numerics.certified.region.flow_certificate.recheck_flow_region`: its obligations restated and every
leaf re-enclosed, its entry time = T and its entry box containing the tube's own box at T): one verdict.

A training certificate of ``stumpcheck train --certify`` (format ``stumpcheck-training-certificate/1``) is
re-checked against its corpus (``--corpus``) by :func:`stumpcheck.numerics.corpus.certified_run.recheck.recheck_training`:
the chain re-derived from the start, every step re-proved, the stopping rule, Arb at the last step's centre
(``--arb``: every step's).

A certificate of ``stumpcheck certify`` (a predicate on a box of (a, b, θ)) is re-checked too
(:mod:`stumpcheck.numerics.certified.certificates.box_recheck`: its leaves cover the box, each is certainly true again).

The population proofs of C7 and C8 (format ``stumpcheck-boundary-certificate/1``) and C9's descent on its corpus
(``stumpcheck-descent-certificate/1``), written by ``stumpcheck verify`` into ``--out``, are re-checked by
:func:`stumpcheck.numerics.certified.boundary.certificate.recheck_boundary` and
:func:`stumpcheck.numerics.corpus.descent_certificate.recheck_descent` (the corpus regenerated from its seed, or
``--corpus``).

Prints ``PASS`` with the statement the re-check derived from what it re-proved (for a lemma or ``certify``
certificate, never the file's own words; for a tube, with the time range [0, T] it covers) and what was checked
(exit 0); ``INCOMPLETE`` for a tube that re-checks but stopped before its T, with the range it does prove
(exit 1: its T is not proved); or ``FAIL`` and the first fault with
the reason (exit 1: also for a certificate whose status is not "proved", whose statement is not the derived
one, or of the first lemma format, which states its lemma in its author's words). An unreadable or corrupt
file, a field beyond the limits of :mod:`stumpcheck.numerics.certified.certificates.limits` (checked before any work), a
margin source that is not plain SymPy (Python source runs only with ``--allow-python``), or a ``--dps`` equal
to the certificate's own digits: one line, exit 2.
"""

from __future__ import annotations

import dataclasses

import click

from stumpcheck.numerics.precision import InputError
from stumpcheck.cli.options import scheduled, scheduler_option

__all__ = ["recheck"]


def _with_region(document: dict, tube_result, arithmetic: str = "fast"):
    """The tube's passed result joined with the re-check of the embedded region (one verdict)."""
    import dataclasses
    import time

    from stumpcheck.numerics.certified.region.flow_certificate import recheck_flow_region

    started = time.perf_counter()

    ok, message = recheck_flow_region(document, progress=lambda name: click.echo(f"  re-checking the region's "
                                                                                  f"{name} ...", err=True),
                                      arithmetic=arithmetic)
    seconds = tube_result.seconds + time.perf_counter() - started
    if not ok:
        return dataclasses.replace(tube_result, passed=False, message=message, leaf=None, leaf_index=None,
                                   seconds=seconds)
    return dataclasses.replace(tube_result, message=f"{tube_result.message}; {message}", seconds=seconds)


def _recheck_region(path, document: dict, points: str, arithmetic: str) -> None:
    """PASS or FAIL of a region certificate (exit 0 or 1), as ``stumpcheck region --recheck``."""
    from stumpcheck.numerics.certified.region.any_certificate import check_limits as check_region_limits
    from stumpcheck.numerics.certified.region.any_certificate import recheck_any as recheck_region

    try:
        check_region_limits(document)
        ok, message = recheck_region(document, points=points, arithmetic=arithmetic,
                                     progress=lambda name: click.echo(f"  re-checking {name} ...", err=True))
    except InputError as exc:
        raise InputError(f"{path}: {exc}") from None
    click.echo(f"{'PASS' if ok else 'FAIL'} {path}: {message}")
    click.get_current_context().exit(0 if ok else 1)


def _schedule(scheduler, workers) -> None:
    """Where the re-check runs (``--scheduler``/``--workers``), until the command ends."""
    context = click.get_current_context()
    context.with_resource(scheduled(scheduler, workers, echo=lambda text: click.echo(text, err=True),
                                    workers_given=context.get_parameter_source("workers").name != "DEFAULT"))


def _recheck_claim_certificate(path, document: dict, corpus_file) -> bool:
    """Re-check a C7/C8 boundary or a C9 descent certificate and exit (0 PASS, 1 FAIL); False for another kind."""
    from stumpcheck.numerics.certified.boundary.certificate import is_boundary_certificate, recheck_boundary
    from stumpcheck.numerics.corpus.descent_certificate import is_descent_certificate, recheck_descent

    if not (is_boundary_certificate(document) or is_descent_certificate(document)):
        return False
    context = click.get_current_context()
    unused = [flag for name, flag in (("dps_text", "--dps"), ("points", "--points"), ("allow_python", "--allow-python"),
                                      ("workers", "--workers"), ("scheduler", "--scheduler"), ("arb_all", "--arb"))
              if context.get_parameter_source(name).name not in ("DEFAULT", "DEFAULT_MAP")]
    if unused:  # given, they would be silently ignored
        raise InputError(f"{path}: {', '.join(unused)} {'does' if len(unused) == 1 else 'do'} nothing for a claim "
                         "certificate (C7, C8, C9): drop it")
    notes = []
    try:
        if is_boundary_certificate(document):
            if corpus_file is not None:
                raise InputError("--corpus goes with an interval or a descent certificate")
            passed, message, statement = recheck_boundary(document)
        elif is_descent_certificate(document):
            x = theta = None
            if corpus_file is not None:
                from stumpcheck.numerics.corpus.corpora import load_corpus

                corpus = load_corpus(corpus_file)
                x, theta = corpus.x, corpus.theta
            passed, message, statement, notes = recheck_descent(document, x, theta)
    except InputError as exc:
        raise InputError(f"{path}: {exc}") from None
    click.echo(f"PASS {path}: {statement}" if passed else f"FAIL {path}: {message}")
    if passed:
        click.echo(f"  {message}")
    for note in notes:
        click.echo(f"  note: {note}")
    click.get_current_context().exit(0 if passed else 1)
    return True

#: the options each kind of certificate's re-check does not use (given, they would be silently ignored)
_UNUSED = {"interval": ("dps_text", "points", "allow_python", "workers", "scheduler"),
           "region": ("dps_text", "allow_python"), "flow": ("points", "allow_python"),
           "box": ("points", "allow_python", "workers", "scheduler"), "lemma": (),
           "training": ("dps_text", "points", "allow_python", "workers", "scheduler")}
_OPTION_NAMES = {"dps_text": "--dps", "points": "--points", "allow_python": "--allow-python", "workers": "--workers",
                 "scheduler": "--scheduler"}


def _kind(path, document: dict) -> str:
    """Which re-check reads ``document``; InputError naming the known formats for any other."""
    from stumpcheck.numerics.certified.certificates.box_recheck import is_box_certificate
    from stumpcheck.numerics.certified.certificates.lemma_certificate import FORMAT, FORMAT_V1
    from stumpcheck.numerics.certified.region.certificate import FORMAT as REGION, is_region_certificate
    from stumpcheck.numerics.certified.region.tail_certificate import TAIL_FORMAT, is_tail_certificate
    from stumpcheck.numerics.certified.tube.certificate import FORMAT as FLOW, FORMAT_V2, is_flow_certificate
    from stumpcheck.numerics.certified.tube.certificate_v1 import FORMAT as FLOW_V1
    from stumpcheck.numerics.corpus.interval.certificate import FORMAT as INTERVAL, is_interval_certificate
    from stumpcheck.numerics.corpus.certified_run.certificate import FORMAT as TRAINING, is_training_certificate
    from stumpcheck.numerics.certified.boundary.certificate import BOUNDARY_FORMAT as BOUNDARY
    from stumpcheck.numerics.corpus.descent_certificate import DESCENT_FORMAT as DESCENT

    if is_interval_certificate(document):
        return "interval"
    if is_region_certificate(document) or is_tail_certificate(document):
        return "region"
    if is_flow_certificate(document):
        return "flow"
    if is_box_certificate(document):
        return "box"
    if document.get("format") in (FORMAT, FORMAT_V1):
        return "lemma"
    if is_training_certificate(document):
        return "training"

    def short(*formats):  # "stumpcheck-flow-certificate/1", "/2" -> "flow/1,2"
        kind = formats[0].removeprefix("stumpcheck-").rsplit("-certificate/", 1)[0]
        return kind + "/" + ",".join(f.rsplit("/", 1)[1] for f in formats)

    known = " ".join((short(FORMAT_V1, FORMAT), short(FLOW_V1, FORMAT_V2, FLOW), short(REGION), short(TAIL_FORMAT),
                      short(INTERVAL), short(TRAINING), short(BOUNDARY), short(DESCENT)))
    raise InputError(f"{path}: unknown certificate format {str(document.get('format'))[:60]!r}; known: "
                     f"stumpcheck-KIND-certificate/N for {known}, and stumpcheck certify's (no format field)")


def _refuse_unused(path, kind: str) -> None:
    """InputError for an option given on the command line that this kind of certificate's re-check ignores."""
    context = click.get_current_context()
    given = [_OPTION_NAMES[name] for name in _UNUSED[kind]
             if context.get_parameter_source(name).name not in ("DEFAULT", "DEFAULT_MAP")]
    if given:
        raise InputError(f"{path}: {', '.join(given)} {'does' if len(given) == 1 else 'do'} nothing for "
                         f"{'an' if kind in ('interval',) else 'a'} {kind} certificate: drop "
                         f"{'it' if len(given) == 1 else 'them'}")


def _interval_text(item) -> str:
    """Where a failed flow-certificate interval is: its t and box (format /1), or the t range of its rows (/2)."""
    rows = item.get("rows") if isinstance(item, dict) else None
    if isinstance(rows, list) and rows and all(isinstance(r, list) and len(r) == 6 for r in (rows[0], rows[-1])):
        return f"t in [{rows[0][0]}, {rows[-1][1]}], {len(rows)} rows"
    if isinstance(item, dict) and "t" in item:
        return f"t in {item.get('t')}, box {item.get('box', '?')}"
    return "(no location recorded)"


@click.command("recheck")
@click.argument("certificate_file", metavar="CERT.json", type=click.Path(dir_okay=False))
@click.option("--dps", "dps_text", default=None,
              help="Working digits of the re-check (default: the certificate's + 10; must give another "
                   "precision than the certificate's).")
@click.option("--points", default="corners", show_default=True, type=click.Choice(["corners", "midpoint"]),
              help="Where each recorded enclosure is tested against the margin's value: the leaf's midpoint "
                   "and corners, or its midpoint only.")
@click.option("--allow-python", is_flag=True,
              help="Run a margin recorded as Python source (it is code: read it first).")
@click.option("--workers", default=1, show_default=True, type=click.IntRange(1, 64),
              help="Processes for a flow certificate's interval integrals (a tube to 10^6 re-checks in about "
                   "as much CPU as it took to compute), or a lemma or region certificate's leaves; with "
                   "--scheduler local, the Dask cluster's processes.")
@scheduler_option
@click.option("--corpus", "corpus_file", default=None, type=click.Path(dir_okay=False),
              help="The corpus (.npz) of an interval certificate (stumpcheck interval) or a training certificate "
                   "(stumpcheck train --certify); required for either.")
@click.option("--arb", "arb_all", is_flag=True,
              help="Arb at every leaf, whatever produced it: a lemma, region or flow certificate's leaves are all "
                   "re-enclosed in Arb (default: a Taylor-form θ-integral leaf, and a tube's θ-integrals, first with "
                   "the float64 θ-integrals, in Arb where they do not decide it); an interval certificate's fast layer is "
                   "checked against Arb at every leaf's centre (default: at the leaves with the smallest margins); a "
                   "training certificate's at every step's centre (default: the last step's).")
def recheck(certificate_file, dps_text, points, allow_python, workers, scheduler, corpus_file, arb_all) -> None:
    """Re-check a lemma certificate: the leaves tile the domain, every leaf re-encloses the margin.

    A region certificate (``stumpcheck region``) is re-checked as ``stumpcheck region --recheck`` does.

    Exit status 0 (PASS: the statement printed is derived from what was re-proved), 1 (FAIL: the first fault
    is printed), 2 (unreadable or corrupt file, a field beyond the re-check's limits, --dps equal to the
    certificate's).
    """
    from stumpcheck.numerics.certified.certificates.lemma_certificate import read_certificate
    from stumpcheck.numerics.certified.certificates.lemma_recheck import recheck as run_recheck
    from stumpcheck.numerics.precision import validate_dps

    from stumpcheck.numerics.certified.certificates.box_recheck import (is_box_certificate, recheck_bits,
                                                                         recheck_box_certificate)
    from stumpcheck.numerics.certified.certificates.limits import check_dps
    from stumpcheck.numerics.certified.tube.certificate import is_flow_certificate, recheck_flow_certificate

    document = read_certificate(certificate_file)
    if _recheck_claim_certificate(certificate_file, document, corpus_file):
        return
    from stumpcheck.numerics.corpus.interval.certificate import is_interval_certificate

    _refuse_unused(certificate_file, _kind(certificate_file, document))
    if is_interval_certificate(document):
        from stumpcheck.cli.interval import recheck_interval_file

        recheck_interval_file(certificate_file, document, corpus_file, arb_all)
        return
    from stumpcheck.numerics.corpus.certified_run.certificate import is_training_certificate

    if is_training_certificate(document):
        from stumpcheck.cli.train_certify import recheck_training_file

        recheck_training_file(certificate_file, document, corpus_file, arb_all)
        return
    if corpus_file is not None:
        raise InputError(f"{certificate_file}: --corpus goes with an interval certificate (stumpcheck interval) "
                         "or a training certificate (stumpcheck train --certify)")
    arithmetic = "arb" if arb_all else "fast"
    from stumpcheck.numerics.certified.region.certificate import is_region_certificate
    from stumpcheck.numerics.certified.region.tail_certificate import is_tail_certificate  # the tail b >= B

    if is_region_certificate(document) or is_tail_certificate(document):
        _schedule(scheduler, workers)
        _recheck_region(certificate_file, document, points, arithmetic)
        return
    recorded = document.get("dps")
    if dps_text is None:
        if isinstance(recorded, bool) or not isinstance(recorded, int):
            raise InputError(f"{certificate_file}: the certificate's 'dps' is missing or not an int")
        dps = recorded + 10
    else:
        dps = validate_dps(dps_text)
    if not is_flow_certificate(document):  # a lemma or certify certificate: its precision within the limits
        try:
            check_dps(recorded)
        except InputError as exc:
            raise InputError(f"{certificate_file}: {exc}") from None
        if dps == recorded:
            raise InputError(f"{certificate_file}: --dps {dps} is the certificate's own precision; the re-check "
                             "must run at another (default: the certificate's + 10)")

    _schedule(scheduler, workers)
    try:
        if is_flow_certificate(document):  # a `stumpcheck flow --certified` certificate: the tube
            from stumpcheck.numerics.certified.region.flow_certificate import check_region_structure

            check_region_structure(document)
            from stumpcheck.progress import fraction_bar

            with fraction_bar("re-checking the tube's intervals", leave=False) as progress:
                result = recheck_flow_certificate(document, dps, lambda done, total: progress(done / total),
                                                  workers=workers, arithmetic=arithmetic)
            if result.passed and ("region" in document or "for_all_t" in document):
                result = _with_region(document, result, arithmetic)
        elif is_box_certificate(document):
            result = recheck_box_certificate(document, prec_bits=recheck_bits(document, dps))
        else:
            result = run_recheck(document, prec_bits=recheck_bits(document, dps), points=points,
                                 allow_python=allow_python, arithmetic=arithmetic)
    except InputError as exc:
        raise InputError(f"{certificate_file}: {exc}") from None
    if result.passed and not is_flow_certificate(document) and not is_box_certificate(document):
        from stumpcheck.lemmas.certificate_words import author_statement_check

        fault, note = author_statement_check(document)  # the author's words: a built-in lemma's, or unchecked
        result = dataclasses.replace(result, passed=False, message=fault) if fault else result
        if note:
            result.notes.append(note)
    if is_flow_certificate(document):
        statement = getattr(result, "statement", "") or str(document.get("statement") or "")
    else:  # what the re-check derived from what it re-proved, never the file's own words
        statement = result.statement
    # an incomplete tube proves its rows up to valid_to_t only, not its T: not a PASS (exit 1)
    partial = result.passed and is_flow_certificate(document) and document.get("complete") is not True
    if result.passed:
        click.echo(f"{'INCOMPLETE' if partial else 'PASS'} {certificate_file}: {statement}")
        click.echo(f"  {result.message}; {result.seconds:.1f} s")
    else:
        click.echo(f"FAIL {certificate_file}: {result.message}")
        item = result.leaf
        if item is not None and is_flow_certificate(document):
            click.echo(f"  interval {result.leaf_index}: {_interval_text(item)}")
        elif item is not None and is_box_certificate(document):
            box = ", ".join(f"{d} ∈ [{', '.join(map(str, item.get(d) or ['?', '?']))}]" for d in ("a", "b", "theta"))
            click.echo(f"  leaf {result.leaf_index}: box {box}, recorded bounds {item.get('bounds')}")
        elif item is not None:
            click.echo(f"  leaf {result.leaf_index}: box {item.get('box')}, recorded enclosure "
                       f"[{item.get('lower')}, {item.get('upper')}]")
    for note in result.notes:
        click.echo(f"  note: {note}")
    click.get_current_context().exit(0 if result.passed and not partial else 1)
