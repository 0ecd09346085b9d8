"""``stumpcheck train --certify`` and the re-check of its certificate (``stumpcheck recheck FILE --corpus C``).

After the float64 run, :func:`certify_run` encloses the exact-arithmetic GD iterates of the same run (the
trainer's doubles a₀, b₀, η and its stopping rule; :func:`stumpcheck.numerics.corpus.certified_run.certify_training`)
and writes OUT/training_certificate.json (and OUT/corpus.npz for a sampled corpus, so that it can be
re-checked); it prints the proved final box, the chain's widths and how far the float64 iterates lie from
the boxes. Exit status 0 when the stopping rule holds for the whole enclosure, 1 when the chain ended
before (the certificate then holds the steps proved, status "partial"). :func:`check_certify_options`
refuses, before any work (exit 2), what the fast layer cannot enclose: an estimator other than one-head,
--within-interval, --record-every other than 1. docs/training_certificate.md has the mathematics.
"""

from __future__ import annotations

import time
from pathlib import Path

import click

from stumpcheck.numerics.precision import InputError

__all__ = ["check_certify_options", "certify_run", "recheck_training_file", "remove_stale_certificate"]


def check_certify_options(estimator: str, interval_file, record_every: int, steps, t_max, eta) -> None:
    """InputError (exit 2) for what ``--certify`` cannot prove, before any work."""
    from stumpcheck.numerics.corpus.certified_run.chain import MAX_CERTIFIED_STEPS

    if estimator != "one-head":
        raise InputError(f"--certify encloses the one-head corpus loss only (the fast interval layer has no "
                         f"{estimator} estimator); drop --certify or use --estimator one-head")
    if interval_file is not None:
        raise InputError("--certify certifies the trainer's own stopping rule; it does not combine with "
                         "--within-interval")
    if record_every != 1:
        raise InputError("--certify compares every float64 iterate with its enclosure: leave --record-every at 1")
    bound = steps if steps is not None else (None if t_max is None or eta is None else t_max / eta)
    if bound is not None and bound > MAX_CERTIFIED_STEPS:
        raise InputError(f"--certify proves at most {MAX_CERTIFIED_STEPS} steps; this run may take "
                         f"{bound:.6g} (lower --steps or --t-max)")


def remove_stale_certificate(out: Path) -> None:
    """A certificate left by an earlier run in --out must not stand beside this run's outputs."""
    from stumpcheck.numerics.corpus.certified_run.certificate import CERTIFICATE_NAME

    (out / CERTIFICATE_NAME).unlink(missing_ok=True)


def _number(value: float) -> str:
    return f"{value:.17g}"


def certify_run(corpus, corpus_file, result, out: Path, *, b_target, steps, t_max, quiet: bool,
                resume: bool = False) -> int:
    """Certify the exact run of ``result`` (a float64 :class:`~stumpcheck.numerics.corpus.gd.TrainResult`), write
    the certificate, print the summary; the exit status (0 proved, 1 partial). The chain so far is kept in
    OUT/checkpoints/certified_chain.npz every 10 s and on Ctrl-C; ``resume`` continues from it."""
    from stumpcheck.numerics.certified.certificates.lemma_certificate import write_certificate
    from stumpcheck.numerics.corpus.certified_run import certify_training
    from stumpcheck.numerics.corpus.certified_run.certificate import CERTIFICATE_NAME, training_certificate
    from stumpcheck.numerics.corpus.checkpoint import corpus_fingerprint
    from stumpcheck.numerics.corpus.corpora import save_corpus
    from stumpcheck.numerics.provenance import provenance
    from stumpcheck.progress import progress_bar

    from stumpcheck.numerics.corpus.certified_run.checkpoint import CHAIN_CHECKPOINT, read_chain, write_chain

    settings = result.settings
    fingerprint = corpus_fingerprint(corpus.x, corpus.theta)
    folder = out / "checkpoints"
    run = dict(a0=settings["a0"], b0=settings["b0"], eta=result.eta, b_target=b_target, max_steps=steps, t_max=t_max)
    paused = read_chain(folder, fingerprint, **run) if resume else None
    if paused is not None:
        click.echo(f"resuming the certified chain at step {paused.steps} from {folder / CHAIN_CHECKPOINT}", err=True)
    wall, cpu = time.perf_counter(), time.process_time()
    bar = progress_bar(total=result.steps, desc="certified steps", quiet=quiet, mininterval=0.5, unit="step")
    try:
        chain = certify_training(corpus.x, corpus.theta, **run, progress=lambda k, hull: bar.update(k - bar.n),
                                 checkpoint=lambda partial: write_chain(partial, folder, fingerprint),
                                 resume_from=paused)
    except KeyboardInterrupt:
        bar.close()
        click.echo(f"stumpcheck train: interrupted; the certified chain so far is kept in {folder / CHAIN_CHECKPOINT}; "
                   "rerun with --resume to continue", err=True)
        raise
    finally:
        bar.close()
    (folder / CHAIN_CHECKPOINT).unlink(missing_ok=True)
    seconds = {"wall": round(time.perf_counter() - wall, 2), "cpu": round(time.process_time() - cpu, 2)}
    if corpus_file is None:
        corpus_path = save_corpus(corpus, out / "corpus.npz")
        file_name = corpus_path.name
    else:
        file_name = str(corpus_file)
    info = {"sha256": fingerprint, "m": corpus.m, "n": corpus.n, "seed": corpus.seed,
            "file": file_name}
    float_run = {"a": result.trajectory["a"], "b": result.trajectory["b"], "steps": result.steps,
                 "stopped_because": result.stopped_because, "method": settings.get("method", "dense")}
    document = training_certificate(chain, info, float_run=float_run, eta_rule=result.eta_rule, seconds=seconds,
                                    versions=provenance())
    path = write_certificate(document, out / CERTIFICATE_NAME, one_per_line=("chain",))
    box = chain.final_box
    fl = document["float64_run"]
    status = "PROVED" if chain.proved else "NOT PROVED (partial)"
    click.echo(f"certified run: {status}: the exact-arithmetic GD from (a0, b0) = ({_number(chain.a0)}, "
               f"{_number(chain.b0)}) with eta = {_number(chain.eta)} "
               + (f"stops at step {chain.steps} ({chain.stopped_because})" if chain.proved
                  else f"is enclosed for {chain.steps} steps; stopped: {chain.stopped_because}"))
    click.echo(f"  final box: a in [{_number(box['a'][0])}, {_number(box['a'][1])}], "
               f"b in [{_number(box['b'][0])}, {_number(box['b'][1])}] (relative width in b "
               f"{chain.relative_width_b():.2g}); {seconds['wall']} s")
    click.echo(f"  float64 run ({fl['steps']} steps, rounded at every step: not the exact map): "
               f"{fl['inside_hull']} of {fl['steps_compared']} iterates inside their boxes, largest distance "
               f"{float(fl['max_distance']):.3g} (relative {float(fl['max_relative_distance']):.3g}, step "
               f"{fl['max_distance_step']})")
    if fl["steps"] != chain.steps and chain.proved:
        click.echo(f"  note: the float64 run stopped at step {fl['steps']}, the exact run at step {chain.steps}")
    click.echo(f"  wrote {path}" + (f" and {out / 'corpus.npz'}" if corpus_file is None else ""))
    return 0 if chain.proved else 1


def recheck_training_file(path: str, document: dict, corpus_file, arb_all: bool) -> None:
    """``stumpcheck recheck`` of a training certificate: PASS with the derived statement (exit 0), or FAIL (exit 1)."""
    from stumpcheck.numerics.corpus.certified_run.recheck import recheck_training
    from stumpcheck.numerics.corpus.corpora import load_corpus
    from stumpcheck.progress import fraction_bar

    if corpus_file is None:
        raise InputError(f"{path}: a training certificate is re-checked against its corpus: give --corpus FILE.npz")
    corpus = load_corpus(corpus_file)
    started = time.perf_counter()
    with fraction_bar("re-checking the steps", leave=False) as progress:
        ok, reason, derived, notes = recheck_training(document, corpus.x, corpus.theta,
                                                      arb="all" if arb_all else "last", progress=progress)
    seconds = time.perf_counter() - started
    if derived is not None:
        click.echo(f"{'PASS' if ok else 'FAIL'} {path}: {derived['text']}")
        click.echo(f"  {reason}; {seconds:.1f} s")
    else:
        click.echo(f"FAIL {path}: {reason}")
    for note in notes:
        click.echo(f"  note: {note}")
    click.get_current_context().exit(0 if ok else 1)
