"""One call from a corpus to its interval certificate: the centre, the step, the proof, the document.

:func:`prove_interval` is what ``stumpcheck interval`` and claim C5 run; the CLI adds checkpoints
(``on_column``, ``resume``) and the plot.
"""

from __future__ import annotations

import time
from fractions import Fraction

from stumpcheck.numerics.corpus.checkpoint import corpus_fingerprint
from stumpcheck.numerics.corpus.interval.centre import HALF_CURVATURE_RULE, Centre, column_after, eta_half_curvature
from stumpcheck.numerics.corpus.interval.certificate import interval_certificate
from stumpcheck.numerics.corpus.interval.prover import MAX_DEPTH, IntervalRun, leaf_record
from stumpcheck.numerics.provenance import provenance

__all__ = ["DEFAULT_BAND", "DEFAULT_B_START", "HALF_CURVATURE_RULE", "prove_interval", "settings_of"]

DEFAULT_BAND = (Fraction(1, 20), Fraction(1, 2))
DEFAULT_B_START = Fraction(8)


def code_identity() -> str:
    """sha256 of the source of the modules that decide a proof (this package and the fast corpus
    enclosures): a checkpoint written by other code is not resumed."""
    import hashlib
    from pathlib import Path

    from stumpcheck.numerics.certified import fast

    digest = hashlib.sha256()
    folders = [Path(__file__).parent, Path(fast.__file__).parent]
    for path in sorted(p for folder in folders for p in folder.glob("*.py")):
        digest.update(path.name.encode() + b"\0" + path.read_bytes())
    return digest.hexdigest()


def settings_of(x, theta, *, b_start, b_max, band, eta, max_depth) -> dict:
    """The settings a checkpoint must match (the corpus by its sha256, the code by :func:`code_identity`)."""
    return {"corpus_sha256": corpus_fingerprint(x, theta), "b_start": str(b_start), "b_max": str(b_max),
            "c_minus": str(band[0]), "c_plus": str(band[1]), "eta": None if eta is None else str(eta),
            "max_depth": max_depth, "code": code_identity()}


def prove_interval(x, theta, *, b_start=DEFAULT_B_START, b_max, band=DEFAULT_BAND, eta=None, threads=None,
                   max_depth: int = MAX_DEPTH, corpus_info: dict | None = None, progress=None, on_column=None,
                   resume=None, workers: int = 1, corpus_path=None, start_search: bool = False):
    """(run, document): prove S from ``b_start`` up to at most ``b_max`` (grid points, exact rationals) and
    write the certificate of what was proved. ``eta`` None: the half-curvature rule. ``start_search``: choose
    b_start (when ``b_start`` is None) and η (when ``eta`` is None, halvings of the half-curvature step) so
    that the first column proves (:mod:`~stumpcheck.numerics.corpus.interval.start`); the certificate's
    ``start_search`` records the trials. ``resume``: (centre, columns, b_end[, chosen]) from
    :func:`~stumpcheck.numerics.corpus.interval.checkpoint.load_checkpoint`. ``workers`` and the command's
    scheduler decide where the columns are proved (:class:`~stumpcheck.numerics.corpus.interval.prover.
    IntervalRun`); the certificate does not depend on it."""
    wall, cpu = time.perf_counter(), time.process_time()
    b_max = Fraction(b_max)
    band = (Fraction(band[0]), Fraction(band[1]))
    search = None
    chosen = resume[3] if resume is not None and len(resume) > 3 else None
    if resume is not None:
        centre, done, b_end = resume[:3]
        b_start = centre.b_start
        if chosen is not None:
            eta, rule, search = chosen
    elif start_search:
        from stumpcheck.numerics.corpus.interval.start import choose_start, halved_rule
        start = choose_start(x, theta, b_max=b_max, band=band, b_start=b_start, eta=eta, threads=threads,
                             max_depth=max_depth)
        centre, done, b_start, b_end = start.centre, [], start.b_start, start.b_start
        if start.first is not None:       # the first column, proved by the search with these settings
            b_end = min(column_after(b_start), b_max)
            done = [{"b": [str(b_start), str(b_end)], "leaves": [leaf_record(box, r) for box, r in start.first],
                     "cpu_seconds": 0.0}]
        rule = f"given: {start.eta}" if start.halvings is None else halved_rule(HALF_CURVATURE_RULE, start.halvings)
        eta, search, chosen = start.eta, start.record(), True
    else:
        b_start = DEFAULT_B_START if b_start is None else Fraction(b_start)
        centre, done, b_end = Centre(x, theta, b_start, threads=threads), [], b_start
    b_start = Fraction(b_start)
    if chosen is None:
        if eta is None:
            eta, rule = eta_half_curvature(x, theta, centre, band[0], band[1], threads=threads), HALF_CURVATURE_RULE
        else:
            eta = Fraction(eta)
            rule = f"given: {eta}"     # the statement's text of η, which the re-check compares
    run = IntervalRun(x, theta, b_start=b_start, b_max=b_max, band=band, eta=eta, centre=centre, threads=threads,
                      max_depth=max_depth, workers=workers, corpus_path=corpus_path)
    run.eta_rule, run.start_search = rule, search
    run.columns, run.b_end = list(done), b_end
    run.run(progress=progress, on_column=on_column)
    info = {"sha256": corpus_fingerprint(x, theta), "m": int(x.shape[0]), "n": int(x.shape[1]), **(corpus_info or {})}
    seconds = {"wall": round(time.perf_counter() - wall, 2), "cpu": round(time.process_time() - cpu, 2)}
    return run, interval_certificate(run, info, eta_rule=rule, seconds=seconds, versions=provenance(),
                                     start_search=search)
