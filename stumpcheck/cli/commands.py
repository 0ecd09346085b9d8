"""The ``stumpcheck`` command line.

Subcommands (later issues add more): ``derive``, ``export``, ``eval`` (in :mod:`stumpcheck.cli.evaluate`).
Every input error exits with status 2 and a single line on stderr.
"""

from __future__ import annotations

import math
import json
import os
import sys
from pathlib import Path

import click

from stumpcheck.numerics.precision import InputError
from stumpcheck.cli.options import scheduler_option

__all__ = ["main", "cli"]

REPO_ROOT = Path(__file__).resolve().parents[2]


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(package_name="stumpcheck")
def cli() -> None:
    """Verified numerics and claim checks for softmax attention learning
    decision-stump thresholds in context (arXiv:2610.07074)."""


@cli.command()
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object instead of text.")
def derive(as_json: bool) -> None:
    """Derive the large-scale results with SymPy and print them.

    The calibration relation a(b) tracked by the gradient flow, the constant C
    in b(t) ≈ (C t)^{1/4}, the leading loss and the progress direction along the
    relation, and the boundary-layer forms they come from (about 10 s).
    """
    from stumpcheck.theory.catalogue import summary

    data = summary()
    if as_json:
        click.echo(json.dumps(data, indent=1, sort_keys=True))
        return
    width = max(len(k) for k in data)
    for key, value in data.items():
        click.echo(f"{key:<{width}}  {value}")


@cli.command()
@click.option("--out", "out_dir", default="derivations", show_default=True, type=click.Path(file_okay=False),
              help="Folder to write into.")
@click.option("--format", "fmt", default="all", show_default=True,
              type=click.Choice(["tex", "json", "py", "all"]), help="Which exports to write.")
@click.option("--update-package", is_flag=True,
              help="Also rewrite numerics/generated/ (the code `stumpcheck eval` runs); for developers.")
@click.option("--names", "names_text", default=None,
              help="Comma-separated result names to write only those (with --format tex or json); "
                   "`stumpcheck derive` lists the names.")
def export(out_dir: str, fmt: str, update_package: bool, names_text: str | None) -> None:
    """Write the derived expressions as LaTeX, JSON (srepr) and Python (about 30 s)."""
    from stumpcheck.theory.export import export as do_export

    from stumpcheck.numerics.resources import check_writable_dir

    package_dir = REPO_ROOT / "numerics" / "generated" if update_package else None
    names = None if names_text is None else [name.strip() for name in names_text.split(",") if name.strip()]
    if names is not None and (fmt not in ("tex", "json") or update_package):
        raise InputError("--names writes a subset of the tex or json exports: use it with --format tex or json, "
                         "without --update-package")
    check_writable_dir(out_dir, "--out")
    if package_dir is not None:
        check_writable_dir(package_dir, "--update-package")
    paths = do_export(out_dir, fmt, package_dir=package_dir, names=names)
    click.echo(f"wrote {len(paths)} files under {out_dir}" + (" and numerics/generated" if update_package else ""))


def _decimal_float(text: str, name: str) -> float:
    from stumpcheck.numerics.precision import parse_decimal

    value = float(parse_decimal(text, name))
    return value


@cli.command()
@click.option("--a0", "a0_text", default="10", show_default=True, help="Initial label score a₀, |a₀| <= 1e6.")
@click.option("--b0", "b0_text", default="10", show_default=True, help="Initial attention scale b₀, 0 < b₀ <= 1e5.")
@click.option("--t-max", "t_max_text", default="1e12", show_default=True, help="Final flow time, 0 < t-max <= 1e21.")
@click.option("--dps", default=None,
              help="Working digits of a high-precision solve (e.g. 30); omit for float64. "
                   "About 0.15 s per field evaluation at 30 digits and b = 1000 (Arb integrand).")
@click.option("--rhs", default="arb", show_default=True, type=click.Choice(["arb", "mpmath"]),
              help="Integrand code of a --dps solve: generated Arb (python-flint) or mpmath.")
@click.option("--workers", default=None, type=click.Choice(["1", "2"]),
              help="Processes for a --dps solve with the Arb integrand, or for --certified (default: 2 if this "
                   "machine has 2 cores).")
@click.option("--solver", default=None,
              help="float64: lsoda (default; scipy LSODA with the exact Jacobian, at rtol/100), radau (the default "
                   "below LSODA's smallest rtol, 2.2e-11) or bdf; either precision: extrapolation (the default with "
                   "--dps; linearly implicit Euler extrapolated to an order chosen from rtol, exact Jacobian), "
                   "rodas4 (L-stable Rosenbrock, exact Jacobian; the float64 default below 2.2e-13), rodas3, dopri5 "
                   "or bosh3.")
@click.option("--rtol", "rtol_text", default="1e-8", show_default=True,
              help="Relative tolerance of the integrator: [1e-13, 1e-3) in float64, [10^(2-dps), 1e-3) with --dps.")
@click.option("--delta", "delta_text", default="0.05", show_default=True,
              help="The interior is θ ∈ [δ, 1 − δ] for the sup error.")
@click.option("--out", "out_dir", default=None, type=click.Path(file_okay=False),
              help="Write flow.csv, flow.json and PNG plots here.")
@click.option("--no-plots", is_flag=True, help="With --out: write flow.csv and flow.json only (no PNG plots).")
@click.option("--no-check", is_flag=True, help="Skip the second solve at rtol/10 (the a-posteriori check).")
@click.option("--quiet", is_flag=True, help="No progress bar.")
@click.option("--certified", is_flag=True,
              help="Compute a certified tube around the flow to --t-max instead (tube.csv, tube.json, "
                   "flow_certificate.json; --dps: digits of its θ-integrals, default 15).")
@click.option("--rel-goal", "rel_goal_text", default="1e-4", show_default=True,
              help="With --certified: the goal of the tube's relative width in b at T (checked and reported).")
@click.option("--time-limit", "time_limit_text", default=None,
              help="With --certified: stop after this many seconds (the tube is then incomplete and says so).")
@click.option("--region", "region", is_flag=True,
              help="With --certified: after a complete tube, prove the forward-invariant region beyond T (b in "
                   "[30, --region-b-max], about 10 min of CPU) with the tube's box at T as entry, and embed it in "
                   "flow_certificate.json.")
@click.option("--region-certificate", "region_file", default=None, type=click.Path(dir_okay=False),
              help="With --certified: embed this region certificate (stumpcheck region) instead of proving one.")
@click.option("--region-b-max", "region_b_max_text", default=None,
              help="With --region: the region's upper end B (default 1000), or inf: the region b in [30, 1000] "
                   "and the tail b >= 1000 joined, so for_all_t holds for every t >= T (docs/tail.md); with --region-certificate: checked (inf: a tail certificate joined to its "
                   "finite region, from stumpcheck region --b-max inf).")
@click.option("--arb", "arb_only", is_flag=True,
              help="With --certified: the tube's θ-integrals in Arb only (default: the float64 interval layer "
                   "first, Arb where it does not suffice; about ten times faster).")
@scheduler_option
def flow(a0_text, b0_text, t_max_text, dps, rhs, workers, solver, rtol_text, delta_text, out_dir, no_plots, no_check,
         quiet, certified, rel_goal_text, time_limit_text, region, region_file, region_b_max_text, arb_only,
         scheduler) -> None:
    """Integrate the population gradient flow dz/dt = −∇L(z) to --t-max.

    Prints a table at logarithmically spaced times and the fits: the exponent
    of b(t) (claim: 1/4), the constant C of b ≈ (C t)^{1/4} against the
    derived C, and the exponent of the sup interior error (claim: −1/4).
    """
    from stumpcheck.numerics.flow.run import check_flow_arguments
    from stumpcheck.numerics.precision import validate_dps

    _check_flow_option_pairs(click.get_current_context(), certified, dps)
    if no_plots and (certified or out_dir is None):
        raise InputError("--no-plots needs --out and a flow without --certified (it leaves out the PNG plots of "
                         "flow --out)")
    if dps is not None:
        dps = validate_dps(dps)
    a0 = _decimal_float(a0_text, "a0")
    b0 = _decimal_float(b0_text, "b0")
    t_max = _decimal_float(t_max_text, "t-max")
    if certified:
        from stumpcheck.cli.flow_certified import certified_flow

        return certified_flow(a0, b0, t_max, out_dir=out_dir, dps=dps, quiet=quiet,
                              rel_goal=_decimal_float(rel_goal_text, "rel-goal"),
                              time_limit=None if time_limit_text is None
                              else _decimal_float(time_limit_text, "time-limit"), texts=(a0_text, b0_text),
                              workers=workers, region=region, region_file=region_file,
                              region_b_max=region_b_max_text, scheduler=scheduler,
                              arithmetic="arb" if arb_only else "fast")
    if region or region_file is not None or region_b_max_text is not None:
        raise InputError("--region, --region-certificate and --region-b-max go with --certified")
    rtol = _decimal_float(rtol_text, "rtol")
    delta = _decimal_float(delta_text, "delta")
    # checked again by run_population_flow; here so that no progress bar precedes the error
    check_flow_arguments(a0, b0, t_max, rtol=rtol, delta=delta, solver=solver, rhs=rhs, dps=dps)
    if out_dir is not None:
        from stumpcheck.numerics.flow.report import FLOW_PANELS
        from stumpcheck.numerics.resources import check_output_files, check_writable_dir

        check_writable_dir(out_dir, "--out")
        check_output_files(out_dir, ["flow.csv", "flow.json"] + ([] if no_plots else [f"{p}.png" for p in FLOW_PANELS]),
                           "--out")
    with _plot_worker(out_dir is not None and not no_plots) as worker:
        _plain_flow(a0, b0, t_max, rtol=rtol, delta=delta, no_check=no_check, quiet=quiet, solver=solver, dps=dps,
                    rhs=rhs, workers=workers, out_dir=out_dir, no_plots=no_plots, worker=worker)


def _plot_worker(wanted: bool):
    """A :class:`~stumpcheck.numerics.flow.plot_worker.PlotWorker` started now (matplotlib's import then overlaps
    the flow), or a null context."""
    import contextlib

    if not wanted:
        return contextlib.nullcontext()
    from stumpcheck.numerics.flow.plot_worker import PlotWorker

    return PlotWorker()


def _final_state_line(stats: dict, dps) -> str:
    """The final a, b as the flow earned them: the digits its two solves agree on with their estimated errors, or
    (--no-check) the working digits, said to be unverified."""
    if "final_a_error" in stats:
        def shown(name):
            return f"{stats['final_' + name] or '(no digit)'} (estimated error {stats['final_' + name + '_error']:.1e})"
        return f"final state, to the digits the rtol and rtol/10 solves agree on: a = {shown('a')}, b = {shown('b')}"
    if "final_a" in stats:
        return (f"final state at the {dps} working digits, unverified (--no-check: no rtol/10 solve): "
                f"a = {stats['final_a']}, b = {stats['final_b']}")
    return "final state: not checked (--no-check); the table's a, b are the float64 solve's"


def _plain_flow(a0, b0, t_max, *, rtol, delta, no_check, quiet, solver, dps, rhs, workers, out_dir, no_plots,
                worker) -> None:
    """The float64 (or --dps) flow of ``stumpcheck flow``: integrate, print, write; ``worker`` draws the plots."""
    from stumpcheck.numerics.flow.run import run_population_flow
    from stumpcheck.numerics.flow.report import flow_table, write_flow_outputs
    from stumpcheck.numerics.provenance import provenance
    from stumpcheck.progress import fraction_bar

    with fraction_bar("flow (fraction of log t_max)", quiet=quiet) as progress:
        run = run_population_flow(a0, b0, t_max, rtol=rtol, delta=delta, check=not no_check, progress=progress,
                                  solver=solver, dps=dps, rhs=rhs, parallel_check=True,
                                  workers=int(workers) if workers else min(2, os.cpu_count() or 1))
    if run.status.name == "INTERRUPTED":  # Ctrl-C stopped the solve (which returns what it had): exit 130
        raise KeyboardInterrupt
    click.echo(flow_table(run))
    check_text = ("skipped (--no-check)" if no_check
                  else f"{run.a_posteriori_rel_error_b:.2e}")
    click.echo(f"status: {run.status.name} ({run.status.message}); {run.stats['accepted_steps']} steps, "
               f"{run.stats['gradient_evaluations']} gradient evaluations; a-posteriori max rel. difference in b "
               f"(rtol vs rtol/10): {check_text}")
    click.echo(_final_state_line(run.stats, dps))
    if dps is not None:
        pieces = run.stats.get("nodes_fraction_of_uniform")
        rule = "" if pieces is None else f" as the first guess of per-piece orders ({pieces:.2f} of its nodes)"
        click.echo(f"{dps}-digit solve: Gauss-Legendre order {run.stats['quadrature_order']}{rule} (two orders agree to "
                   f"{run.stats['quadrature_check_digits_start']:.1f} digits at the start, "
                   f"{run.stats['quadrature_check_digits_end']:.1f} at the end); {rhs} integrand, largest "
                   f"relative rounding bound of a field evaluation {run.stats.get('rounding_bound', math.nan):.1e}")
    fits = {name: fit for name, fit in run.fits.items() if isinstance(fit, dict)}
    for name, fit in fits.items():
        click.echo(f"{name}: {fit['value']:.6g}  95% CI [{fit['ci95'][0]:.6g}, {fit['ci95'][1]:.6g}]  "
                   f"t in [{fit['t_range'][0]:.2e}, {fit['t_range'][1]:.2e}]  ({fit['model']})")
    caveats = {fit.get("validity") for fit in fits.values() if not fit.get("valid", True)}
    for caveat in sorted(caveats):
        click.echo(f"caveat on the fits above: {caveat}")
    if out_dir is not None:
        paths = write_flow_outputs(run, out_dir, provenance=provenance(seed=None, precision="float64" if dps is None else f"{dps} digits"),
                                   plots=not no_plots, worker=worker)
        click.echo(f"wrote {', '.join(p.name for p in paths)} to {out_dir}")
    if not run.status.ok:  # the flow did not reach t-max: what was asked for was not computed
        click.echo(f"stumpcheck flow: the solve {run.status.message}", err=True)
        click.get_current_context().exit(1)


#: Options of ``flow`` that only one of its paths reads: (option, parameter, what it needs).
_FLOW_DPS_ONLY = (("--rhs", "rhs", "--dps (the integrand of a high-precision solve)"),)
_FLOW_CERTIFIED_ONLY = (("--rel-goal", "rel_goal_text"), ("--time-limit", "time_limit_text"),
                        ("--scheduler", "scheduler"), ("--arb", "arb_only"))
_FLOW_PLAIN_ONLY = (("--rtol", "rtol_text"), ("--solver", "solver"), ("--rhs", "rhs"), ("--delta", "delta_text"),
                    ("--no-check", "no_check"))


def _given(ctx, parameter: str) -> bool:
    """True when the user gave the option (not its default)."""
    source = ctx.get_parameter_source(parameter)
    return source is not None and source is not click.core.ParameterSource.DEFAULT


def _check_flow_option_pairs(ctx, certified: bool, dps) -> None:
    """Refuse a ``flow`` option the chosen path would ignore (exit 2, naming it and what it needs)."""
    if certified:
        for option, parameter in _FLOW_PLAIN_ONLY:
            if _given(ctx, parameter):
                raise InputError(f"{option} is not used by flow --certified (it sets the float64/--dps solve; the "
                                 "certified tube has its own method and --rel-goal, --time-limit, --dps)")
        return
    for option, parameter in _FLOW_CERTIFIED_ONLY:
        if _given(ctx, parameter):
            raise InputError(f"{option} needs --certified (it sets the certified tube)")
    if dps is None:
        for option, parameter, needs in _FLOW_DPS_ONLY:
            if _given(ctx, parameter):
                raise InputError(f"{option} needs {needs}; the float64 solve has a compiled integrand")
        if _given(ctx, "workers"):
            raise InputError("--workers needs --dps or --certified (a float64 solve runs in one process, its "
                             "a-posteriori check in a second)")


# Commands that live in their own modules, as "module:click_object". Each
# issue's commands get a module of their own; add a line here to register one.
COMMAND_MODULES = (
    "stumpcheck.cli.evaluate:eval_command",
    "stumpcheck.cli.fresh:fresh",
    "stumpcheck.cli.fresh:sweep",
    "stumpcheck.cli.certify:certify",
    "stumpcheck.cli.verify:verify",
    "stumpcheck.cli.recheck:recheck",
    "stumpcheck.cli.region:region",
    "stumpcheck.cli.interval:interval",
    "stumpcheck.cli.corpus:corpus",
    "stumpcheck.cli.corpus:grad",
    "stumpcheck.cli.train:train",
)


def _register_commands() -> None:
    import importlib

    for spec in COMMAND_MODULES:
        module_name, attribute = spec.split(":")
        cli.add_command(getattr(importlib.import_module(module_name), attribute))


_register_commands()


#: longest error line printed (a huge argument echoed back is cut, with the count of what was left out)
MAX_ERROR_LINE = 400


def _error_line(message: str) -> str:
    """``stumpcheck: error: message`` on one line, at most MAX_ERROR_LINE characters."""
    line = f"stumpcheck: error: {message}".replace("\r", " ").replace("\n", " ")
    if len(line) > MAX_ERROR_LINE:
        left_out = len(line) - MAX_ERROR_LINE + 40
        line = f"{line[:MAX_ERROR_LINE - 40]}... ({left_out} characters left out)"
    return line


def main(argv=None) -> int:
    """Entry point: run the CLI and return its exit status.

    0: everything asked for was computed (and passed); 1: a claim, lemma or
    certificate failed, or a computed value could not be verified (the output
    says which); 2: bad input or an impossible request, one line on stderr;
    130: interrupted (Ctrl-C). ``stumpcheck`` or a group with no arguments
    prints its help on stdout (exit status 2, as click does).
    """
    stdout = sys.stdout
    try:
        # without standalone mode click returns what a command's ctx.exit(code) asked for
        status = cli.main(args=argv, prog_name="stumpcheck", standalone_mode=False)
    except click.exceptions.NoArgsIsHelpError as exc:
        click.echo(exc.ctx.get_help() if exc.ctx is not None else exc.format_message())
        return exc.exit_code
    except click.exceptions.Exit as exc:
        return exc.exit_code
    except click.exceptions.Abort as exc:  # click turns Ctrl-C (KeyboardInterrupt) into Abort
        interrupted = isinstance(exc.__cause__ or exc.__context__, KeyboardInterrupt)
        click.echo("stumpcheck: interrupted" if interrupted else "stumpcheck: aborted", err=True)
        return 130
    except click.UsageError as exc:
        hint = f" (try '{exc.ctx.command_path} --help')" if exc.ctx is not None else ""
        click.echo(_error_line(exc.format_message() + hint), err=True)
        return 2
    except InputError as exc:
        click.echo(_error_line(str(exc)), err=True)
        return 2
    except click.ClickException as exc:
        click.echo(_error_line(exc.format_message()), err=True)
        return exc.exit_code if exc.exit_code in (1, 2) else 1
    except KeyboardInterrupt:
        click.echo("stumpcheck: interrupted", err=True)
        return 130
    except SystemExit as exc:
        if sys.stdout is not stdout:
            return 1  # click swaps stdout and exits when its reader went away (``| head``): no message, as click
        # otherwise user code (a lemma file) called sys.exit: bad input, not our status
        click.echo(_error_line(f"user code called sys.exit({exc.code!r})"), err=True)
        return 2
    except Exception as exc:  # a bug, not bad input: one line, traceback on request
        if os.environ.get("STUMPCHECK_DEBUG"):
            raise
        click.echo(_error_line(f"internal error ({type(exc).__name__}): {exc}; "
                               "rerun with STUMPCHECK_DEBUG=1 for the traceback"), err=True)
        return 1
    return status if isinstance(status, int) else 0


if __name__ == "__main__":
    sys.exit(main())
