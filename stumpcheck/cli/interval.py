"""``stumpcheck interval``: prove the largest training interval of gradient descent on one corpus.

Registered in :mod:`stumpcheck.cli.commands`; the mathematics is in docs/corpus_interval.md and
:mod:`stumpcheck.numerics.corpus.interval`. Writes OUT/interval_certificate.json (the proved part
only), OUT/interval.png, OUT/corpus.npz for a sampled corpus, and one summary line. The default target
--b-max is the claims' (m ∧ n)/2; without --b-start and --eta the start and the step are chosen per
corpus so that the first column proves (:mod:`stumpcheck.numerics.corpus.interval.start`). Exit status 0
when S was proved up to --b-max (the target), 1 when the proof stopped below it (an obligation certainly
false, or undecided at the finest box: the line says where; a certificate is written for the part
proved, if any), 2 on bad input (checked before the work, the output folder included). An interrupted
run resumes from OUT/interval_checkpoint.json.
"""

from __future__ import annotations

import time
from fractions import Fraction
from pathlib import Path

import click

from stumpcheck.cli.options import parse_int, parse_seed, scheduled, scheduler_option, shown
from stumpcheck.numerics.precision import InputError, parse_decimal

__all__ = ["interval", "recheck_interval_file"]

MAX_B = Fraction(2 ** 16)
INTERVAL_BYTES_PER_TOKEN = 48


def _fraction(text, name: str) -> Fraction:
    value = Fraction(parse_decimal(text, name))
    return value


def _band(text) -> tuple[Fraction, Fraction]:
    parts = [p.strip() for p in str(text).split(",")]
    if len(parts) not in (1, 2) or not all(parts):
        raise InputError(f"--c must be C or C_MINUS,C_PLUS (decimals), got {shown(text)}")
    values = [_fraction(p, "--c") for p in parts]
    c_minus, c_plus = (values[0], values[0]) if len(values) == 1 else values
    for v in (c_minus, c_plus):
        if not Fraction(1, 1000) <= v <= 10:
            raise InputError(f"--c values must lie in [0.001, 10], got {shown(text)}")
    return c_minus, c_plus


def _corpus(corpus_file, m_text, n_text, seed_text):
    from stumpcheck.numerics.corpus.corpora import MAX_TOKENS, load_corpus, make_corpus
    from stumpcheck.numerics.resources import require_memory

    sampled = [t is not None for t in (m_text, n_text)]
    if corpus_file is not None:
        if any(sampled):
            raise InputError("give either --corpus FILE or --m M --n N [--seed S], not both")
        corpus = load_corpus(corpus_file)
    else:
        if not all(sampled):
            raise InputError("give --corpus FILE, or --m and --n (and --seed, default 0)")
        m, n = parse_int(m_text, "m", minimum=1), parse_int(n_text, "n", minimum=1)
        if m * n > MAX_TOKENS:
            raise InputError(f"m·n = {m * n} tokens is above the supported {MAX_TOKENS:.0e}")
        require_memory(INTERVAL_BYTES_PER_TOKEN * m * n, f"a corpus interval on m·n = {m * n} tokens")
        corpus = make_corpus(m, n, seed=parse_seed("0" if seed_text is None else seed_text))
    require_memory(INTERVAL_BYTES_PER_TOKEN * corpus.m * corpus.n, f"a corpus interval on m·n = {corpus.m * corpus.n} tokens")
    return corpus


def _grid_up(b: Fraction) -> Fraction:
    from stumpcheck.numerics.corpus.interval.centre import column_width
    w = column_width(b)
    return b if b % w == 0 else (b // w + 1) * w


def _grid_down(b: Fraction) -> Fraction:
    from stumpcheck.numerics.corpus.interval.centre import column_width
    return (b // column_width(b)) * column_width(b)


@click.command("interval")
@click.option("--corpus", "corpus_file", default=None, type=click.Path(dir_okay=False),
              help="Corpus .npz file (from `stumpcheck corpus`); or --m --n --seed.")
@click.option("--m", "m_text", default=None, help="Tasks of a sampled corpus.")
@click.option("--n", "n_text", default=None, help="Points per task of a sampled corpus.")
@click.option("--seed", "seed_text", default=None, help="Seed of a sampled corpus (default 0).")
@click.option("--b-start", "b_start_text", default=None,
              help="Lower end b_start of S (raised to the grid: 64 columns per octave), 1 <= b_start. Default: "
                   "chosen per corpus, the first of 8, 16, 32, 64 (those <= b-max/4) whose first column proves.")
@click.option("--b-max", "b_max_text", default=None,
              help="The target: stop extending at this b (lowered to the grid; default (m∧n)/2, the claims' "
                   "target; at most 65536). Exit 0 when it is reached, 1 (with the certificate of what was "
                   "proved) when the proof stops below it.")
@click.option("--c", "c_text", default="0.05,0.5", show_default=True,
              help="The band around the centre A(b): C_MINUS,C_PLUS (or one C for both), in [0.001, 10].")
@click.option("--eta", "eta_text", default=None, help="The constant GD step (a decimal > 0); default from --eta-rule.")
@click.option("--eta-rule", "eta_rule", default="half-curvature", show_default=True,
              type=click.Choice(["half-curvature"]),
              help="half-curvature: 1/2 over the largest eigenvalue of the corpus Hessian sampled on S's first "
                   "octave, two significant digits, rounded down; halved (at most 4 times) until the first "
                   "column proves. The certificate records the choice (start_search).")
@click.option("--max-depth", "max_depth_text", default="8", show_default=True,
              help="Halvings of a box before it counts as undecided (1..20).")
@click.option("--workers", default=1, show_default=True, type=click.IntRange(1, 64),
              help="Local processes that prove the columns (1: this process); with --scheduler local, the Dask "
                   "cluster's processes. The certificate does not depend on it.")
@scheduler_option
@click.option("--out", "out_dir", default="stumpcheck-interval", show_default=True, type=click.Path(file_okay=False),
              help="Folder for interval_certificate.json, interval.png (and corpus.npz for a sampled corpus).")
@click.option("--quiet", is_flag=True, help="No progress bar.")
def interval(corpus_file, m_text, n_text, seed_text, b_start_text, b_max_text, c_text, eta_text, eta_rule,
             max_depth_text, workers, scheduler, out_dir, quiet) -> None:
    """Prove, for one corpus and one constant step eta, that GD started anywhere in
    S = {b_start <= b <= b_end, A(b) - c_minus <= a <= A(b) + c_plus} stays in S and raises b until b >= b_end,
    within a stated number of steps; b_end as large as the obligations can be proved, up to the target
    --b-max (default (m∧n)/2) (docs/corpus_interval.md).

    Without --b-start and --eta, b_start and eta are chosen per corpus so that the first column proves.
    Exit status: 0 when the target --b-max is reached; 1 when the proof stops below it (the certificate
    holds what was proved, if anything); 2 on bad input.
    """
    from stumpcheck.numerics.resources import check_writable_dir

    from stumpcheck.numerics.corpus.interval.run import DEFAULT_B_START

    band = _band(c_text)
    b_start = None if b_start_text is None else _fraction(b_start_text, "--b-start")
    if b_start is not None and not 1 <= b_start < MAX_B:  # before the grid, whose log2 needs b > 0 of a float's size
        raise InputError(f"--b-start must lie in [1, {MAX_B}), got {shown(b_start_text)}")
    b_start = None if b_start is None else _grid_up(b_start)
    eta = None if eta_text is None else _fraction(eta_text, "--eta")
    if eta is not None and not 0 < eta <= 10 ** 30:
        raise InputError(f"--eta must be > 0 and <= 1e30, got {shown(eta_text)}")
    max_depth = parse_int(max_depth_text, "max-depth", minimum=1, maximum=20)
    corpus = _corpus(corpus_file, m_text, n_text, seed_text)
    b_max = Fraction(min(corpus.m, corpus.n), 2) if b_max_text is None else _fraction(b_max_text, "--b-max")
    if not b_max <= MAX_B:
        raise InputError(f"--b-max must be at most {MAX_B}, got {b_max}")
    b_max = _grid_down(b_max) if b_max >= 1 else b_max
    lowest = DEFAULT_B_START if b_start is None else b_start
    if not b_max > lowest:
        if b_max_text is None:
            raise InputError(f"the default target (m∧n)/2 = {b_max} must exceed --b-start ({lowest}) on the grid; "
                             "give --b-max")
        raise InputError(f"--b-max ({b_max}) must exceed --b-start ({lowest}) on the grid")
    check_writable_dir(out_dir, "--out")
    context = click.get_current_context()  # where the columns are proved (exit 2 before work: no scheduler)
    context.with_resource(scheduled(scheduler, workers, echo=lambda text: click.echo(text, err=True),
                                    workers_given=context.get_parameter_source("workers").name != "DEFAULT"))
    _run(corpus, corpus_file, b_start, b_max, band, eta, eta_rule, max_depth, workers, Path(out_dir), quiet)


def _run(corpus, corpus_file, b_start, b_max, band, eta, eta_rule, max_depth, workers, out: Path, quiet) -> None:
    from stumpcheck.numerics.certified.certificates.lemma_certificate import write_certificate
    from stumpcheck.numerics.corpus.corpora import save_corpus
    from stumpcheck.numerics.corpus.interval.checkpoint import CHECKPOINT_NAME, load_checkpoint, save_checkpoint
    from stumpcheck.numerics.corpus.interval.plot import plot_interval
    from stumpcheck.numerics.corpus.interval.run import prove_interval, settings_of
    from stumpcheck.progress import fraction_bar

    out.mkdir(parents=True, exist_ok=True)
    (out / "interval_certificate.json").unlink(missing_ok=True)   # a stale one must not survive a failed run
    x, theta = corpus.x, corpus.theta
    corpus_path = None if corpus_file is not None else save_corpus(corpus, out / "corpus.npz")
    settings = settings_of(x, theta, b_start="auto" if b_start is None else b_start, b_max=b_max, band=band, eta=eta,
                           max_depth=max_depth)
    resume = load_checkpoint(out, settings, x, theta)
    if resume is not None:
        click.echo(f"resuming from {out / CHECKPOINT_NAME}: {len(resume[1])} columns proved, b = {float(resume[2]):g}",
                   err=True)
    last = [time.monotonic()]
    state = {}

    def on_column(run):
        state["run"] = run
        if time.monotonic() - last[0] > 5.0:
            save_checkpoint(run, settings, out)
            last[0] = time.monotonic()

    # the file's name only: a path would leak the writer's folders into a shareable file
    info = {"seed": corpus.seed, "prior": None if corpus.prior is None else [float(v) for v in corpus.prior],
            "file": Path(corpus_file).name if corpus_file is not None else "corpus.npz"}
    from stumpcheck.numerics.corpus.interval.centre import NoPositiveCurvature

    try:
        with fraction_bar(f"proving S up to b = {float(b_max):g}", quiet=quiet) as progress:
            run, document = prove_interval(x, theta, b_start=b_start, b_max=b_max, band=band, eta=eta,
                                           max_depth=max_depth, corpus_info=info, progress=progress,
                                           on_column=on_column, resume=resume, workers=workers,
                                           corpus_path=corpus_file if corpus_file is not None else corpus_path,
                                           start_search=b_start is None or eta is None)
        _report(run, document, out, corpus, corpus_path, plot_interval, write_certificate)
    except NoPositiveCurvature as exc:
        click.echo(f"NOT PROVED: {exc}; no certificate")
        click.get_current_context().exit(1)
        return
    except KeyboardInterrupt:
        if "run" in state:
            save_checkpoint(state["run"], settings, out)
        if not (out / CHECKPOINT_NAME).exists():
            raise  # no column was proved: nothing to resume from ("stumpcheck: interrupted")
        click.echo(f"stumpcheck interval: interrupted; the proved columns are kept in {out / CHECKPOINT_NAME}: "
                   "the same command resumes from them", err=True)
        raise click.exceptions.Exit(130) from None
    (out / CHECKPOINT_NAME).unlink(missing_ok=True)
    click.get_current_context().exit(0 if run.b_end >= b_max else 1)


def _report(run, document, out, corpus, corpus_path, plot_interval, write_certificate) -> None:
    from stumpcheck.claims.c5 import along_for_corpus

    st, end = document["statement"], document["end"]
    ladder = [float(run.b_start) * 2 ** (k / 4) for k in range(64) if float(run.b_start) * 2 ** (k / 4) <= float(run.b_max)]
    along = (ladder, along_for_corpus(corpus.x, corpus.theta, ladder))
    plot_interval(document, out / "interval.png", along=along)
    m_n = min(corpus.m, corpus.n)
    where = _end_text(end)
    if corpus_path is not None:
        click.echo(f"corpus: m = {corpus.m}, n = {corpus.n}, seed = {corpus.seed}, written to {corpus_path}")
    if run.b_end > run.b_start:
        path = write_certificate(document, out / "interval_certificate.json", one_per_line=("leaves",))
        small = document["proof"]["smallest_margins"]
        click.echo(f"PROVED b in [{st['b_start']}, {float(Fraction(st['b_end'])):g}] = [.., "
                   f"{float(Fraction(st['b_end'])) / m_n:.3g}·(m∧n)] for eta = {st['eta']}: GD from S reaches b_end "
                   f"within {st['steps']:.3e} steps; {document['proof']['leaf_count']} leaves, smallest margins "
                   f"drift {small['drift']:.3g}, inward {small['inward']:.3g}, gd {small['gd']:.3g}; "
                   f"{document['seconds']['wall']} s wall, {document['seconds']['cpu']} s CPU{_start_text(document)}; "
                   f"{where}; wrote {path}")
    else:
        click.echo(f"NOT PROVED: no column of S above b = {st['b_start']} could be proved; {where}; no certificate")


def _start_text(document: dict) -> str:
    search = document.get("start_search")
    if not search:
        return ""
    chosen, tried = search["chosen"], search["tried"]
    how = "" if chosen["halvings"] in (None, 0) else f", the half-curvature step halved {chosen['halvings']}x"
    return f"; start chosen: b_start = {chosen['b_start']}{how} ({len(tried)} first-column trial(s))"


def _end_text(end: dict) -> str:
    status = end.get("status")
    if status == "b_max reached":
        return f"reached the target --b-max {end['b_max']}"
    if status == "false":
        return (f"stopped: {end['obligation']} certainly false at b = {float(Fraction(end['point']['b'])):.6g}, "
                f"mu = {float(Fraction(end['point']['mu'])):.4g} (margin <= {end['margin_upper']:.3g}"
                + ("; confirmed in Arb)" if end.get("arb_confirmed") else "; NOT confirmed in Arb)"))
    if status == "undecided":
        m = end["margins"]
        return (f"stopped: undecided at the finest box b in [{float(Fraction(end['b'][0])):.6g}, "
                f"{float(Fraction(end['b'][1])):.6g}], mu in [{float(Fraction(end['mu'][0])):.4g}, "
                f"{float(Fraction(end['mu'][1])):.4g}] (margins drift {m['drift']:.3g}, gd {m['gd']:.3g})")
    return f"stopped: {status}"


def recheck_interval_file(path: str, document: dict, corpus_file, arb_all: bool) -> None:
    """``stumpcheck recheck`` of an interval certificate: PASS with the derived statement, or FAIL (exit 1)."""
    from stumpcheck.numerics.corpus.interval.certificate import recheck_interval
    from stumpcheck.numerics.corpus.corpora import load_corpus
    from stumpcheck.progress import fraction_bar

    if corpus_file is None:
        raise InputError(f"{path}: an interval certificate is re-checked against its corpus: give --corpus FILE.npz")
    corpus = load_corpus(corpus_file)
    started = time.perf_counter()
    with fraction_bar("re-checking the leaves", leave=False) as progress:
        ok, reason, derived = recheck_interval(document, corpus.x, corpus.theta, arb="all" if arb_all else "smallest",
                                               progress=progress,
                                               corpus_meta={"seed": corpus.seed, "prior": corpus.prior})
    if ok:
        click.echo(f"PASS {path}: {derived['text']}")
        click.echo(f"  {reason}; Arb checked the fast layer at {'every leaf' if arb_all else 'the tightest leaves'}; "
                   f"{time.perf_counter() - started:.1f} s")
    else:
        click.echo(f"FAIL {path}: {reason}")
    click.get_current_context().exit(0 if ok else 1)
