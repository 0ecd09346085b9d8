"""``stumpcheck train``: constant-step GD on a corpus loss L̂ (see :mod:`stumpcheck.numerics.corpus.gd`).

Registered in :mod:`stumpcheck.cli.commands`. The corpus is a file (``--corpus``) or
sampled (``--m --n --seed``). Defaults (docs/model.md §4): a₀ = b₀ = 10, η from the
corpus curvature at the start (η = 1/‖∇²L̂(a₀, b₀)‖₂, printed with its rule), and
``--steps 1000`` when neither --steps nor --t-max is given (--b-target only
adds an earlier stop). ``--init large-resolution`` is the start of the
finite-corpus theorem (C6): b₀ = (m ∧ n)/4, a₀ = calibration_a(b₀), η from the
population Hessian (``--eta-rule population``), stop once b ≥ (m ∧ n)/2 or
after ``--steps`` (default 20000); it needs m ∧ n ≥ 8 (b₀ ≥ 2). A run that
would leave the model (b ≤ 0 or non-finite) stops at its last good iterate,
writes its outputs and exits 1 with one line naming the step and the rule.
Writes trajectory.csv, trajectory.json, frozen.json, training.png and
checkpoints/checkpoint.npz into --out. Bad input raises
:class:`stumpcheck.numerics.precision.InputError` (exit 2): the ranges |a₀| ≤ 10¹⁵⁰,
0 < b₀ ≤ 10¹⁵⁰, the corpus, the checkpoint, the step rule at the start and
the step cap (``stumpcheck.numerics.corpus.gd.MAX_STEPS``, also for ``--t-max``) are
checked before --out is created, and a failure after that removes what this
run created (the folder, or the checkpoints folder in an existing one). ``--certify`` (one-head) also
encloses the exact-arithmetic GD of the same run and writes training_certificate.json
(:mod:`stumpcheck.cli.train_certify`).
"""

from __future__ import annotations

import shutil
import time
from pathlib import Path

import click

from stumpcheck.numerics.precision import InputError
from stumpcheck.cli.options import first_missing_folder, parse_float, parse_int, parse_scale, parse_score, parse_seed
from stumpcheck.cli.train_certify import certify_run, check_certify_options, remove_stale_certificate
from stumpcheck.progress import progress_bar

__all__ = ["train", "DEFAULT_STEPS"]

DEFAULT_STEPS = 1000
#: --steps default with --init large-resolution (the C6 protocol's cap)
LARGE_RESOLUTION_STEPS = 20000
#: peak bytes per token of GD: x (8) and the chunked work arrays of ∇L̂ (measured 2.2 dense, 10.2 pruned), rounded up
GD_BYTES_PER_TOKEN = 24


def _number(text, name: str, *, positive: bool = False) -> float | None:
    if text is None:
        return None
    value = parse_float(text, name)
    if positive and not value > 0:
        raise InputError(f"--{name} must be > 0, got {text!r}")
    return value


def _integer(text, name: str, *, minimum: int = 1) -> int | None:
    return None if text is None else parse_int(text, name, minimum=minimum)


def _load_corpus(corpus_file, m_text, n_text, seed_text, init):
    from stumpcheck.numerics.corpus.corpora import load_corpus, make_corpus

    sampled = [t is not None for t in (m_text, n_text, seed_text)]
    if corpus_file is not None:
        if any(sampled):
            raise InputError("give either --corpus FILE or --m M --n N --seed S, not both")
        corpus = load_corpus(corpus_file)
        _check_size(corpus.m, corpus.n, init)
        return corpus, {"source": str(corpus_file)}
    if not all(sampled):
        missing = [f"--{k}" for k, s in zip(("m", "n", "seed"), sampled) if not s]
        raise InputError(f"give --corpus FILE, or all of --m, --n, --seed (missing {', '.join(missing)})")
    m, n, seed = _integer(m_text, "m"), _integer(n_text, "n"), parse_seed(seed_text)
    _check_size(m, n, init)
    corpus = make_corpus(m, n, seed=seed)
    return corpus, {"source": "sampled"}


def _check_size(m: int, n: int, init) -> None:
    """Refuse a corpus GD cannot hold: m·n ≤ MAX_TOKENS and its working arrays within the memory available;
    with --init large-resolution also m ∧ n < 8 (b₀ = (m ∧ n)/4 < 2)."""
    from stumpcheck.numerics.corpus.corpora import MAX_TOKENS
    from stumpcheck.numerics.corpus.steps import check_large_resolution_size
    from stumpcheck.numerics.resources import require_memory

    if init == "large-resolution":
        check_large_resolution_size(m, n)

    if m * n > MAX_TOKENS:
        raise InputError(f"m·n = {m * n} tokens is above the supported {MAX_TOKENS:.0e}")
    require_memory(GD_BYTES_PER_TOKEN * m * n, f"gradient descent on m·n = {m * n} tokens")


def _interval_rule(path, corpus):
    """(stop rule, start (a, b), eta) of an interval certificate of this corpus."""
    from fractions import Fraction

    from stumpcheck.numerics.certified.certificates.lemma_certificate import read_certificate
    from stumpcheck.numerics.corpus.checkpoint import corpus_fingerprint
    from stumpcheck.numerics.corpus.interval.certificate import membership

    document = read_certificate(path)
    try:
        stop = membership(document)
        start = tuple(float(Fraction(v)) for v in document["statement"]["start"])
        eta = float(Fraction(document["statement"]["eta"]))
    except (ValueError, KeyError, TypeError, ZeroDivisionError) as exc:
        raise InputError(f"--within-interval {path}: {exc}") from None
    if document.get("corpus", {}).get("sha256") != corpus_fingerprint(corpus.x, corpus.theta):
        raise InputError(f"--within-interval {path}: the certificate is of another corpus (sha256 differs)")
    return stop, start, eta


def _remove_created(folder: Path | None) -> None:
    """Remove ``folder`` (created by this run: everything in it is this run's), if given."""
    if folder is not None:
        shutil.rmtree(folder, ignore_errors=True)


@click.command("train")
@click.option("--corpus", "corpus_file", default=None, type=click.Path(dir_okay=False),
              help="Corpus .npz file (from `stumpcheck corpus`); or use --m --n --seed.")
@click.option("--m", "m_text", default=None,
              help="Number of tasks of a sampled corpus (m·n at most 2e9 and within memory, 24 bytes a token).")
@click.option("--n", "n_text", default=None, help="Points per task of a sampled corpus.")
@click.option("--seed", "seed_text", default=None, help="Seed of a sampled corpus, an integer in [0, 2^63 - 1].")
@click.option("--steps", "steps_text", default=None,
              help=f"Number of GD steps, at most 1e7 (default {DEFAULT_STEPS} unless --t-max is given).")
@click.option("--t-max", "t_max_text", default=None, help="Stop at flow time t = k·eta >= T (instead of --steps); T/eta at most 1e7 steps.")
@click.option("--b-target", "b_target_text", default=None, help="Also stop once b >= B.")
@click.option("--eta", "eta_text", default=None,
              help="Step size (default: from --eta-rule at the start).")
@click.option("--eta-rule", "eta_rule", default=None, type=click.Choice(["population", "corpus", "lookahead"]),
              help="Step rule when --eta is not given. corpus: 1/||Hess L̂(a0, b0)||_2 with a look at where the "
                   "first step lands (default for the usual start a0 = b0 = 10). population: 1/lambda_max of the "
                   "population Hessian at the start, about b0^3 on the calibration relation (default with --init "
                   "large-resolution: there the corpus Hessian is tiny and indefinite; at m = n = 512 its 1/||Hess|| "
                   "is 50x the population step and leaves the model, and the look-ahead cuts it to 1/1000 of it, "
                   "too small to reach (m∧n)/2). "
                   "lookahead: the largest 2^j x the population step (j = 6..-10) whose first two steps stay in "
                   "b > 0 and each lower L̂.")
@click.option("--init", "init", default=None, type=click.Choice(["large-resolution"]),
              help="large-resolution: b0 = (m∧n)/4, a0 = calibration_a(b0), --eta-rule population, stop once "
                   f"b >= (m∧n)/2 (or at --steps, default {LARGE_RESOLUTION_STEPS}); needs m∧n >= 8 (b0 >= 2); "
                   "not with --a0/--b0.")
@click.option("--a0", "a0_text", default=None, help="Initial label score a0, |a0| <= 1e150 (default 10).")
@click.option("--b0", "b0_text", default=None, help="Initial attention scale b0, 0 < b0 <= 1e150 (default 10).")
@click.option("--out", "out_dir", required=True, type=click.Path(file_okay=False), help="Output folder.")
@click.option("--resume", is_flag=True, help="Continue from the checkpoint in --out (same corpus and settings).")
@click.option("--estimator", default="one-head", show_default=True,
              type=click.Choice(["one-head", "reflected", "averaged", "pooled"]))
@click.option("--checkpoint-every", "checkpoint_every_text", default="1000", show_default=True,
              help="Write a checkpoint every K steps.")
@click.option("--record-every", "record_every_text", default="1", show_default=True,
              help="Record (step, t, a, b, L̂) every K steps (and at the last step).")
@click.option("--method", default="dense", show_default=True, type=click.Choice(["dense", "pruned"]),
              help="How L̂ and its gradient are summed (stumpcheck.numerics.corpus.empirical).")
@click.option("--quiet", is_flag=True, help="No progress bar.")
@click.option("--within-interval", "interval_file", default=None, type=click.Path(dir_okay=False),
              help="An interval certificate of this corpus (stumpcheck interval): start at its start point with "
                   "its eta unless --a0/--b0/--eta are given, and stop with a note when an iterate leaves its S "
                   "or passes its b_end (the certificate is taken as written; re-check it with stumpcheck recheck).")
@click.option("--certify", is_flag=True,
              help="Also enclose the exact-arithmetic GD of this run (its a0, b0, eta and stopping rule; one-head) "
                   "step by step in float64 intervals and write training_certificate.json (re-check it with "
                   "stumpcheck recheck FILE --corpus C); exit 1 when the enclosure ends before the rule holds.")
def train(corpus_file, m_text, n_text, seed_text, steps_text, t_max_text, b_target_text, eta_text, eta_rule, init,
          a0_text, b0_text, out_dir, resume, estimator, checkpoint_every_text, record_every_text, method,
          quiet, interval_file, certify) -> None:
    """Constant-step gradient descent z ← z − η ∇L̂(z) on a corpus, z = (a, b).

    Prints η and its rule and a table of the trajectory, and writes
    trajectory.csv/.json, frozen.json (the frozen a, b), training.png and a
    checkpoint into --out; --resume continues an interrupted run and ends with
    the same numbers as an uninterrupted one.
    """
    from stumpcheck.numerics.provenance import provenance
    from stumpcheck.numerics.corpus.gd import train_gd
    from stumpcheck.numerics.corpus.steps import HORIZON_FRACTION, choose_eta, large_resolution_start
    from stumpcheck.numerics.corpus.checkpoint import CHECKPOINT_NAME, read_checkpoint
    from stumpcheck.numerics.corpus.training_report import training_table, write_training_outputs

    from stumpcheck.numerics.corpus.gd import MAX_STEPS, step_budget
    from stumpcheck.numerics.resources import check_writable_dir

    steps = None if steps_text is None else parse_int(steps_text, "steps", minimum=1, maximum=MAX_STEPS)
    t_max = _number(t_max_text, "t-max", positive=True)
    b_target = _number(b_target_text, "b-target", positive=True)
    if steps is not None and t_max is not None:
        raise InputError("give --steps or --t-max, not both")
    if steps is None and t_max is None:
        steps = LARGE_RESOLUTION_STEPS if init == "large-resolution" else DEFAULT_STEPS
    eta = _number(eta_text, "eta", positive=True)
    if eta is not None and eta_rule is not None:
        raise InputError("give --eta or --eta-rule, not both")
    if init is not None and (a0_text is not None or b0_text is not None):
        raise InputError("--init large-resolution sets a0 and b0: do not also give --a0/--b0")
    a0 = parse_score(a0_text if a0_text is not None else "10", "a0")
    b0 = parse_scale(b0_text if b0_text is not None else "10", "b0")
    checkpoint_every = _integer(checkpoint_every_text, "checkpoint-every")
    record_every = _integer(record_every_text, "record-every")
    out = Path(out_dir)
    checkpoint_dir = out / "checkpoints"
    check_writable_dir(out, "--out")
    from stumpcheck.numerics.resources import check_output_files

    check_output_files(out, ["trajectory.csv", "trajectory.json", "frozen.json", "training.png"], "--out")
    if not resume and (checkpoint_dir / CHECKPOINT_NAME).exists():
        raise InputError(f"{out} already holds a checkpoint: pass --resume to continue it, or choose another --out")
    if resume and not (checkpoint_dir / CHECKPOINT_NAME).is_file():
        raise InputError(f"no checkpoint to resume from: {checkpoint_dir / CHECKPOINT_NAME} does not exist")
    corpus, source = _load_corpus(corpus_file, m_text, n_text, seed_text, init)
    stop_rule = None
    if interval_file is not None:
        if estimator != "one-head":  # the interval certificate's obligations are the one-head corpus loss's
            raise InputError(f"--within-interval certifies GD on the one-head corpus loss; --estimator {estimator} "
                             "would train another loss outside what the certificate proves")
        stop_rule, start, certified_eta = _interval_rule(interval_file, corpus)
        if init is None and a0_text is None and b0_text is None:
            a0, b0 = start
        if eta is None and eta_rule is None:
            eta = certified_eta
    if init == "large-resolution":
        a0, b0 = large_resolution_start(corpus.m, corpus.n)
        if b_target is None:
            b_target = HORIZON_FRACTION * min(corpus.m, corpus.n)
    step_rule = eta_rule or ("population" if init == "large-resolution" else "corpus")
    # the step rule at the start and the step cap are checked before --out is created
    chosen_eta = None if eta is not None else choose_eta(corpus.x, corpus.theta, a0, b0, step_rule,
                                                         estimator=estimator)
    shown_eta = eta if eta is not None else chosen_eta[0]
    if t_max is not None and t_max / shown_eta > MAX_STEPS:
        rule = "--eta" if eta is not None else f"the {step_rule} step rule"
        raise InputError(f"--t-max {t_max_text} at eta = {shown_eta:.6g} ({rule}) needs about "
                         f"{t_max / shown_eta:.3g} GD steps, above the cap of {MAX_STEPS:.0e} steps a run; "
                         "lower --t-max or give a larger --eta")
    try:
        total = step_budget(steps, t_max, shown_eta, record_every)
    except InputError as exc:
        raise InputError(f"{exc}".replace("(record_every)", "(--record-every)")) from None
    if certify:
        check_certify_options(estimator, interval_file, record_every, steps, t_max, shown_eta)

    new_folder = first_missing_folder(out)
    new_checkpoints = not checkpoint_dir.exists()
    try:
        out.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise InputError(f"cannot create {out}: {exc.strerror or exc}") from None
    remove_stale_certificate(out)
    bar = progress_bar(total=total, desc="GD steps", quiet=quiet, mininterval=0.5, unit="step")
    shown = {"time": 0.0}

    def progress(step, a, b, loss):
        bar.update(step - bar.n)
        now = time.monotonic()
        if now - shown["time"] > 0.5:
            shown["time"] = now
            bar.set_postfix_str(f"b={b:.4g} L={loss:.4e}", refresh=False)

    try:
        result = train_gd(corpus.x, corpus.theta, a0=a0, b0=b0, eta=eta, steps=steps, b_target=b_target,
                          t_max=t_max, estimator=estimator, checkpoint_dir=checkpoint_dir,
                          checkpoint_every=checkpoint_every, resume=resume, progress=progress,
                          record_every=record_every, method=method, step_rule=step_rule, chosen_eta=chosen_eta,
                          stop_rule=stop_rule)
    except KeyboardInterrupt:
        bar.close()
        try:
            kept = f"the checkpoint at step {read_checkpoint(checkpoint_dir).step} in {checkpoint_dir} is kept"
        except InputError:
            kept = "no checkpoint was written"
        click.echo(f"stumpcheck train: interrupted; {kept}; rerun with --resume to continue", err=True)
        raise click.exceptions.Exit(130) from None  # this line is the one line of an interrupted command
    except InputError:
        # exit 2 leaves nothing behind: remove what this run created, and only that
        _remove_created(new_folder if new_folder is not None else (checkpoint_dir if new_checkpoints else None))
        raise
    finally:
        bar.close()
    click.echo(f"corpus: m={corpus.m}, n={corpus.n}, seed={corpus.seed}, prior={corpus.prior}, "
               f"sampler={corpus.sampler_name} ({source['source']}); estimator {estimator}; float64")
    click.echo(f"step size: {result.eta_rule}")
    if result.resumed_from_step is not None:
        click.echo(f"resumed from the checkpoint at step {result.resumed_from_step}")
    click.echo(training_table(result))
    click.echo(f"stopped because: {result.stopped_because}; {result.steps} steps, final a = {result.a!r}, "
               f"b = {result.b!r}, L̂ = {result.loss:.6e}")
    corpus_info = {"m": corpus.m, "n": corpus.n, "seed": corpus.seed, "prior": corpus.prior,
                   "sampler": corpus.sampler_name, **source}
    try:
        paths = write_training_outputs(result, out, corpus=corpus_info,
                                       provenance=provenance(seed=corpus.seed, precision="float64"))
    except OSError as exc:
        raise InputError(f"cannot write into {out}: {exc.strerror or exc}") from None
    click.echo(f"wrote {', '.join(p.name for p in paths)} and checkpoints/{CHECKPOINT_NAME} to {out}")
    status = 0
    if certify:
        status = certify_run(corpus, corpus_file, result, out, b_target=b_target, steps=steps, t_max=t_max,
                             quiet=quiet, resume=resume)
    if result.stopped_because.startswith("diverged"):
        click.echo(f"stumpcheck train: {result.stopped_because}", err=True)
        status = 1
    if status:
        click.get_current_context().exit(status)
