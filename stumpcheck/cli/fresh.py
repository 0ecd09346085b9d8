"""``stumpcheck fresh`` and ``stumpcheck sweep``: frozen estimators on fresh contexts.

``fresh`` evaluates a frozen (a, b) on fresh contexts (:mod:`stumpcheck.numerics.corpus.fresh`);
``sweep`` runs the C6 cell (corpus → C5 horizon → GD → fresh contexts,
:func:`stumpcheck.claims.c6.c6_cell`) over a grid with a resumable store
(:mod:`stumpcheck.numerics.corpus.sweep`), on a local process pool or a Dask scheduler.
Registered in :mod:`stumpcheck.cli.commands`; bad input raises
:class:`stumpcheck.numerics.precision.InputError` (exit status 2).
"""

from __future__ import annotations

import itertools
import json
from pathlib import Path

import click

from stumpcheck.numerics.precision import MAX_DPS, MIN_DPS, InputError, parse_decimal
from stumpcheck.cli.options import (SEED_MAX, make_out_dir, parse_float, parse_int, parse_int_list, parse_scheduler,
                                parse_score, parse_seed, shown)
from stumpcheck.progress import progress_bar

#: most fresh draws (contexts × points, summed over N) one `stumpcheck fresh` makes: about 10–15 min on one core
MAX_DRAWS = 10 ** 10

__all__ = ["fresh", "sweep"]

_ESTIMATORS = click.Choice(["one-head", "reflected", "averaged", "pooled"])


@click.command("fresh")
@click.option("--a", "a_text", required=True,
              help="Frozen label score a (decimal, |a| <= 1e150; with --exact |a| <= 1e8, or an interval lo,hi).")
@click.option("--b", "b_text", required=True,
              help="Frozen feature score / attention scale b (decimal, 0 < b <= 1e150; with --exact b <= 1e8, or "
                   "an interval lo,hi).")
@click.option("--theta", "theta_text", required=True, help="Threshold θ ∈ [0, 1] of the fresh contexts.")
@click.option("--N", "n_text", required=True,
              help="Context size N, 1 to 2^20 (with --exact 1 to 10^9), or a comma-separated list, e.g. 100,1000.")
@click.option("--estimator", default="one-head", show_default=True, type=_ESTIMATORS,
              help="With --exact: one-head, reflected or pooled (averaged is refused).")
@click.option("--reps", "reps_text", default=None,
              help="Fresh contexts per N, 2 to 10^8 (default 1000); reps × (sum of N) is at most 10^10 draws. "
                   "Not with --exact.")
@click.option("--seed", "seed_text", default=None,
              help="Seed of the keyed random streams, 0 to 2^63 - 1 (default 0). Not with --exact.")
@click.option("--exact", is_flag=True,
              help="Certified bias, MSE and mean |θ̂_N − θ| bracket from the exact s-integral identity "
                   "(docs/fresh_risk.md): no sampling; --a/--b may be intervals lo,hi.")
@click.option("--dps", "dps_text", default=None,
              help="With --exact: decimal digits aimed at, 15 to 10000 (default 30); the balls must reach "
                   "relative radius 1e-8 (or --rel-width).")
@click.option("--rel-width", "rel_width_text", default=None,
              help="With --exact: the widest relative radius accepted (default: aim at 10^-dps, accept 1e-8).")
@click.option("--json", "as_json", is_flag=True, help="Print JSON (one object with top-level keys for a single N).")
@click.option("--quiet", is_flag=True, help="No progress bar.")
def fresh(a_text, b_text, theta_text, n_text, estimator, reps_text, seed_text, exact, dps_text, rel_width_text,
          as_json, quiet) -> None:
    """Mean |θ̂_N − θ| of a frozen (a, b) over fresh contexts x ~ U[0, 1], with a 95% CI.

    The CI is the normal approximation mean ± 1.96·sd/√reps; the median and
    90% quantile of |θ̂_N − θ| are printed too. Evidence: sampled (float64).

    With --exact: no sampling; the bias E[θ̂_N − θ] and the MSE E[(θ̂_N − θ)²]
    come as certified enclosures [lower, upper] (outward-rounded decimals)
    from the identity 1/V = ∫ e^{-sV} ds (docs/fresh_risk.md), and
    E|θ̂_N − θ| as the certified bracket [|bias|, √MSE]. Evidence: certified.
    --a and --b may then be intervals lo,hi (the balls hold for every point).
    """
    if exact:
        _fresh_exact(a_text, b_text, theta_text, n_text, estimator, reps_text, seed_text, dps_text, rel_width_text,
                     as_json)
        return
    for option, value in (("--dps", dps_text), ("--rel-width", rel_width_text)):
        if value is not None:
            raise InputError(f"{option} goes with --exact (the sampled engine is float64)")
    from stumpcheck.numerics.corpus.fresh import MAX_N, MAX_REPS, fresh_context_errors, validate_frozen

    a = parse_score(a_text, "a")
    b = parse_float(b_text, "b")
    if not b > 0:
        raise InputError(f"--b must be > 0 (the attention scale), got {b_text}")
    a, b = validate_frozen(a, b, estimator=estimator)
    theta = parse_float(theta_text, "theta")
    if not 0 <= theta <= 1:
        raise InputError(f"--theta must lie in [0, 1], got {theta_text}")
    Ns = parse_int_list(n_text, "N", minimum=1)
    if max(Ns) > MAX_N:
        raise InputError(f"--N {max(Ns)} is above the supported maximum {MAX_N}")
    reps = parse_int("1000" if reps_text is None else reps_text, "reps", minimum=2, maximum=MAX_REPS)
    seed = parse_seed("0" if seed_text is None else seed_text)
    if reps * sum(Ns) > MAX_DRAWS:
        raise InputError(f"--reps {reps} × N {sum(Ns)} = {reps * sum(Ns):.3g} draws is more than this command "
                         f"makes ({MAX_DRAWS:.0e}); lower --reps or --N")
    bar = progress_bar(total=reps * len(Ns), desc="fresh contexts", quiet=quiet or reps * sum(Ns) < 2 ** 22,
                       mininterval=1.0)
    try:
        results = [fresh_context_errors(a, b, theta, N, estimator=estimator, reps=reps, seed=seed,
                                        progress=bar.update) for N in Ns]
    finally:
        bar.close()
    if as_json:
        payload = results[0].as_dict() if len(results) == 1 else {"results": [r.as_dict() for r in results]}
        click.echo(json.dumps(payload, indent=1))
        return
    click.echo(f"# fresh contexts, estimator {estimator}, a={a_text}, b={b_text}, theta={theta_text}; reps {reps}, "
               f"seed {seed}; float64, evidence sampled; CI: {results[0].ci_method}")
    click.echo(f"{'N':>8}  {'mean|err|':>11}  {'95% CI':>25}  {'median':>11}  {'q90':>11}")
    for r in results:
        click.echo(f"{r.N:>8}  {r.mean_abs_error:>11.4e}  [{r.ci_low:.4e}, {r.ci_high:.4e}]  "
                   f"{r.median_abs_error:>11.4e}  {r.q90_abs_error:>11.4e}")


#: the largest --grid file read (a grid of a million cells is about 60 MB)
GRID_BYTES = 64 * 2 ** 20


def _exact_parameter(text: str, name: str):
    """--a/--b with --exact: a decimal, or an interval "lo,hi" of decimals (kept exact, as strings)."""
    parts = [p.strip() for p in str(text).split(",")]
    if len(parts) == 1:
        parse_decimal(parts[0], f"--{name}")
        return parts[0]
    if len(parts) != 2:
        raise InputError(f"--{name} must be a decimal or an interval lo,hi, got {shown(text)}")
    lo, hi = (parse_decimal(p, f"--{name}") for p in parts)
    if not lo <= hi:
        raise InputError(f"--{name} interval needs lo <= hi, got {shown(text)}")
    return (parts[0], parts[1])


def _fresh_exact(a_text, b_text, theta_text, n_text, estimator, reps_text, seed_text, dps_text, rel_width_text,
                 as_json) -> None:
    """``fresh --exact``: certified bias, MSE and the mean-absolute-error bracket for each N."""
    for option, value in (("--reps", reps_text), ("--seed", seed_text)):
        if value is not None:
            raise InputError(f"{option} does not go with --exact (the exact risk draws no contexts)")
    a, b = _exact_parameter(a_text, "a"), _exact_parameter(b_text, "b")
    parse_decimal(theta_text, "--theta")
    from stumpcheck.numerics.certified.enclosures.fresh_inputs import MAX_N, validate_inputs

    Ns = parse_int_list(n_text, "N", minimum=1, maximum=MAX_N)
    dps = parse_int("30" if dps_text is None else dps_text, "dps", minimum=MIN_DPS, maximum=MAX_DPS)
    rel_width = None if rel_width_text is None else parse_float(rel_width_text, "rel-width")
    for N in Ns:  # every argument is checked before any work
        validate_inputs(a, b, theta_text.strip(), N, estimator=estimator, dps=dps, rel_width=rel_width)
    from stumpcheck.numerics.certified.enclosures import EnclosureTooWide
    from stumpcheck.numerics.certified.enclosures.fresh_risk import fresh_context_risk

    try:
        results = [fresh_context_risk(a, b, theta_text.strip(), N, estimator=estimator, dps=dps, rel_width=rel_width)
                   for N in Ns]
    except EnclosureTooWide as exc:
        raise click.ClickException(f"certified enclosure too wide: {exc}") from None
    if as_json:
        payload = results[0].to_dict() if len(results) == 1 else {"results": [r.to_dict() for r in results]}
        click.echo(json.dumps(payload, indent=1))
        return
    click.echo(f"# exact fresh-context risk, estimator {estimator}, a={a_text}, b={b_text}, theta={theta_text}; "
               f"aim {dps} digits; evidence certified (Arb enclosures, outward-rounded decimals)")
    for r in results:
        click.echo(f"N = {r.N}  ({r.prec_bits} bits, {r.seconds:.3g} s)")
        click.echo(f"  bias           = [{', '.join(r.bounds('bias'))}]")
        click.echo(f"  mse            = [{', '.join(r.bounds('mse'))}]")
        click.echo(f"  mean_abs_error = [{', '.join(r.bounds('mean_abs_error'))}]"
                   + ("  (exact: N = 1)" if r.N == 1 else "  (bracket |bias| <= E|err| <= sqrt(mse))"))


_CELL_KEYS = {"m", "n", "seed", "N", "thetas", "reps", "k_max", "step_cap", "estimator", "long_steps"}


def _grid_cells(path: str, defaults: dict) -> list[dict]:
    """Cells from a JSON file: a list of cells, or {"m": [...], "n": [...], "seeds": [...], "N": [...], ...}."""
    from stumpcheck.numerics.resources import check_regular_input

    check_regular_input(path, "--grid", GRID_BYTES)  # a FIFO would block the read, /dev/zero never end
    try:
        data = json.loads(Path(path).read_text(encoding="utf-8"))
    except OSError as exc:
        raise InputError(f"cannot read --grid {path}: {exc.strerror or exc}") from None
    except ValueError as exc:
        raise InputError(f"--grid {path} is not valid JSON: {exc}") from None
    if isinstance(data, dict):
        missing = [k for k in ("m", "n", "seeds", "N") if k not in data]
        if missing:
            raise InputError(f"--grid {path}: missing keys {', '.join(missing)} (need m, n, seeds, N lists)")
        extra = {k: v for k, v in data.items() if k not in ("m", "n", "seeds", "N")}
        unknown = set(extra) - _CELL_KEYS
        if unknown:
            raise InputError(f"--grid {path}: unknown keys {', '.join(sorted(unknown))}")
        return _product(data["m"], data["n"], data["seeds"], data["N"], {**defaults, **extra})
    if isinstance(data, list) and data and all(isinstance(c, dict) for c in data):
        cells = []
        for cell in data:
            unknown = set(cell) - _CELL_KEYS
            if unknown or not {"m", "n", "seed", "N"} <= set(cell):
                raise InputError(f"--grid {path}: each cell needs m, n, seed, N (and only known keys), got {cell}")
            cells.append(_validated({**defaults, **cell}))
        return cells
    raise InputError(f"--grid {path} must hold a JSON object of lists or a non-empty list of cells")


def _validated(cell: dict) -> dict:
    from stumpcheck.numerics.corpus.corpora import MAX_TOKENS
    from stumpcheck.numerics.corpus.fresh import MAX_N, MAX_REPS
    from stumpcheck.numerics.corpus.steps import MIN_LARGE_RESOLUTION_SIZE

    def ints(value, name, minimum, maximum=SEED_MAX):
        values = value if isinstance(value, list) else [value]
        if not values or not all(isinstance(v, int) and not isinstance(v, bool) and minimum <= v <= maximum
                                 for v in values):
            raise InputError(f"{name} must be integers in [{minimum}, {maximum}], got {shown(value)}")
        return value

    ints(cell["m"], "m", 1)
    ints(cell["n"], "n", 1)
    ints(cell["seed"], "seed", 0)
    ints(cell["N"], "N", 1)
    if max(cell["N"]) > MAX_N:
        raise InputError(f"N must be <= {MAX_N}, got {max(cell['N'])}")
    ints(cell["reps"], "reps", 2)
    ints(cell["k_max"], "k_max", 0)
    ints(cell["step_cap"], "step_cap", 1)
    if cell.get("long_steps") is not None:
        ints(cell["long_steps"], "long_steps", 1)
    if cell["estimator"] not in ("one-head", "reflected", "averaged", "pooled"):
        raise InputError(f"unknown estimator {cell['estimator']!r}")
    thetas = cell["thetas"]
    if not (isinstance(thetas, list) and thetas and all(isinstance(t, (int, float)) and not isinstance(t, bool)
                                                        and 0 <= t <= 1 for t in thetas)):
        raise InputError(f"thetas must be a non-empty list of numbers in [0, 1], got {thetas!r}")
    if cell["m"] * cell["n"] > MAX_TOKENS:
        raise InputError(f"m·n = {cell['m'] * cell['n']} tokens is above the supported {MAX_TOKENS:.0e}")
    if cell["reps"] > MAX_REPS:
        raise InputError(f"reps must be <= {MAX_REPS}, got {cell['reps']}")
    if min(cell["m"], cell["n"]) < MIN_LARGE_RESOLUTION_SIZE:
        raise InputError(f"m ∧ n must be >= {MIN_LARGE_RESOLUTION_SIZE} (a corpus to run C5 and train on from "
                         f"b0 = (m ∧ n)/4 >= 2), got m={cell['m']}, n={cell['n']}")
    return cell


def _product(ms, ns, seeds, Ns, defaults) -> list[dict]:
    for name, values in (("m", ms), ("n", ns), ("seeds", seeds), ("N", Ns)):
        if not isinstance(values, list) or not values:
            raise InputError(f"{name} must be a non-empty list")
    return [_validated({**defaults, "m": m, "n": n, "seed": s, "N": list(Ns)})
            for m, n, s in itertools.product(ms, ns, seeds)]


@click.command("sweep")
@click.option("--grid", "grid_file", default=None, type=click.Path(dir_okay=False),
              help="JSON grid: {\"m\": [..], \"n\": [..], \"seeds\": [..], \"N\": [..]} or a list of cells.")
@click.option("--m", "m_text", default=None, help="Task counts m, comma-separated (with --n, --N, --seeds).")
@click.option("--n", "n_text", default=None, help="Context sizes n of the training corpora, comma-separated.")
@click.option("--N", "big_n_text", default=None, help="Fresh context sizes N, comma-separated.")
@click.option("--seeds", "seeds_text", default="0", show_default=True, help="Corpus seeds, comma-separated.")
@click.option("--reps", "reps_text", default="200", show_default=True, help="Fresh contexts per (θ, N).")
@click.option("--k-max", "k_max_text", default="4", show_default=True, help="Largest k of the C5 scales b0·2^k.")
@click.option("--step-cap", "step_cap_text", default="2000", show_default=True, help="Most GD steps per cell.")
@click.option("--estimator", default="one-head", show_default=True, type=_ESTIMATORS)
@click.option("--out", "out_dir", required=True, type=click.Path(file_okay=False),
              help="Folder for the store sweep.jsonl (resumable) and summary.json.")
@click.option("--scheduler", default=None, help="Dask scheduler address tcp://host:port (or DASK_SCHEDULER_ADDRESS).")
@click.option("--workers", "workers_text", default="2", show_default=True,
              help="Local processes (1 = in-process); ignored with a Dask scheduler.")
@click.option("--quiet", is_flag=True, help="No progress bar.")
def sweep(grid_file, m_text, n_text, big_n_text, seeds_text, reps_text, k_max_text, step_cap_text, estimator,
          out_dir, scheduler, workers_text, quiet) -> None:
    """Run the C6 cell over a grid of (m, n, seed), storing each cell as it finishes.

    Each cell is C6's large-resolution cell: a corpus, the start b0 = (m∧n)/4
    on the calibration relation, GD with the population-curvature step until
    b >= (m∧n)/2 (the C5 certified interval from b0 is reported beside it),
    the frozen (a, b) on fresh contexts at θ ∈ {0.3, 0.5, 0.7} for every N
    (rule: stumpcheck.claims.c6_protocol.HORIZON_RULE). --k-max is accepted
    and ignored (the certified interval's ladder is sized from m∧n). Rerunning
    with the same --out skips finished cells.
    """
    from stumpcheck.numerics.corpus.sweep import run_sweep
    from stumpcheck.claims.c6_protocol import CELL_PROTOCOL, HORIZON_RULE, INTERIOR_THETAS, c6_cell

    defaults = {"reps": parse_int(reps_text, "reps", minimum=2), "k_max": parse_int(k_max_text, "k-max", minimum=0),
                "step_cap": parse_int(step_cap_text, "step-cap", minimum=1), "estimator": estimator,
                "thetas": list(INTERIOR_THETAS), "long_steps": None, "protocol": CELL_PROTOCOL}
    if grid_file is not None:
        if any(v is not None for v in (m_text, n_text, big_n_text)):
            raise InputError("give either --grid or --m/--n/--N, not both")
        cells = _grid_cells(grid_file, defaults)
    else:
        if m_text is None or n_text is None or big_n_text is None:
            raise InputError("sweep needs --grid FILE or all of --m, --n, --N")
        cells = _product(parse_int_list(m_text, "m", minimum=1), parse_int_list(n_text, "n", minimum=1),
                         parse_int_list(seeds_text, "seeds", minimum=0, maximum=SEED_MAX), parse_int_list(big_n_text, "N", minimum=1), defaults)
    workers = parse_int(workers_text, "workers", minimum=1, maximum=64)
    scheduler = parse_scheduler(scheduler)
    out, created = make_out_dir(out_dir)
    bar = progress_bar(total=len(cells), desc="sweep cells", quiet=quiet)
    done = {"finished": 0}

    def progress(record, finished, total):
        bar.total = total
        bar.update(1)
        done["finished"] = finished

    try:
        records = run_sweep(c6_cell, cells, store=out / "sweep.jsonl", scheduler=scheduler, workers=workers,
                            progress=progress)
    except InputError:
        if created and not any(out.iterdir()):  # e.g. no Dask scheduler there: leave nothing behind
            out.rmdir()
        raise
    except KeyboardInterrupt:
        bar.close()
        click.echo(f"stumpcheck sweep: interrupted; {done['finished']} new cell(s) stored in {out / 'sweep.jsonl'}; "
                   "run the same command again to resume (stored cells are skipped)", err=True)
        raise click.exceptions.Exit(130) from None  # this line is the one line of an interrupted command
    finally:
        bar.close()
    click.echo(f"# horizon rule: {HORIZON_RULE}")
    click.echo(f"# fresh errors: mean |θ̂_N − θ| averaged over θ ∈ {list(INTERIOR_THETAS)}; float64, evidence sampled")
    click.echo(f"{'m':>6} {'n':>6} {'seed':>5} {'k*':>3} {'b0':>8} {'steps':>6} {'a':>10} {'b':>10}  errors by N")
    summary = []
    for record in records:
        r = record["result"]
        by_n: dict = {}
        for row in r["fresh"]:
            by_n.setdefault(row["N"], []).append(row["mean_abs_error"])
        errors = {int(N): sum(v) / len(v) for N, v in by_n.items()}
        click.echo(f"{r['m']:>6} {r['n']:>6} {r['seed']:>5} {r['k_star']:>3} {r['b0']:>8.3g} {r['steps']:>6} "
                   f"{r['a']:>10.4g} {r['b']:>10.4g}  " + ", ".join(f"N={N}: {e:.3e}" for N, e in errors.items()))
        summary.append({"key": record["key"], "m": r["m"], "n": r["n"], "seed": r["seed"], "k_star": r["k_star"],
                        "b0": r["b0"], "a": r["a"], "b": r["b"], "steps": r["steps"],
                        "stopped_because": r["stopped_because"], "interior_error_by_N": errors})
    (out / "summary.json").write_text(json.dumps({"horizon_rule": HORIZON_RULE, "cells": summary}, indent=1) + "\n",
                                      encoding="utf-8")
    click.echo(f"{len(records)} cells; store {out / 'sweep.jsonl'}; wrote {out / 'summary.json'}")
