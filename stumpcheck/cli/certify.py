"""``stumpcheck certify``: prove a predicate over a box of (a, b, θ) (see :mod:`stumpcheck.numerics.certified.proofs.box_prover`).

Registered in :mod:`stumpcheck.cli.commands`. Exit status 0 if the predicate is proved,
1 if it failed or is undecided; bad input raises
:class:`stumpcheck.numerics.precision.InputError` (the CLI turns it into exit 2).
"""

from __future__ import annotations

from pathlib import Path

import click

from stumpcheck.numerics.precision import InputError, parse_decimal
from stumpcheck.cli.options import parse_int, scheduled, scheduler_option, shown

__all__ = ["certify", "MAX_BOXES"]

#: most boxes one run may examine: at ~10 ms or more per box, 10^6 boxes are hours of work
MAX_BOXES = 10 ** 6


#: largest |endpoint| of a box: the certifier sizes its working precision from the endpoints as float64
MAX_ENDPOINT = 1e300


def _interval(text, name: str):
    if text is None:
        return None
    parts = [p.strip() for p in str(text).split(",")]
    if len(parts) != 2 or not all(parts):
        raise InputError(f"--{name} must be LO,HI (two decimals separated by a comma), got {shown(text)}")
    for part in parts:
        if not abs(parse_decimal(part, f"--{name}")) <= MAX_ENDPOINT:
            raise InputError(f"--{name}: endpoints must be at most {MAX_ENDPOINT:g} in magnitude, got {shown(part)}")
    return tuple(parts)


def _params(items) -> dict:
    params = {}
    for item in items:
        name, sep, value = item.partition("=")
        if not sep or not name.strip() or not value.strip():
            raise InputError(f"--param must be NAME=VALUE, got {item!r}")
        if name.strip() in params:
            raise InputError(f"--param {name.strip()} given twice")
        params[name.strip()] = value.strip()
    return params


@click.command("certify")
@click.option("--predicate", "predicate", required=True,
              help="error_abs_le_c_over_b (needs --param c=...), error_gradient_b_negative or dLdb_negative.")
@click.option("--a", "a_text", required=True,
              help="Label score interval LO,HI (decimals, parsed exactly; |endpoints| <= 1e300).")
@click.option("--b", "b_text", required=True, help="Attention scale interval LO,HI, 0 < b <= 1e300.")
@click.option("--theta", "theta_text", default=None, help="Threshold interval LO,HI within [0, 1] (default 0,1).")
@click.option("--param", "param_items", multiple=True, help="Predicate parameter NAME=VALUE (repeatable).")
@click.option("--dps", default="30", show_default=True, help="Significant digits, 15 to 10000.")
@click.option("--max-boxes", "max_boxes", default="10000", show_default=True,
              help="Most boxes to examine, 1 to 10^6 (a box takes milliseconds to seconds).")
@click.option("--estimator", default="one-head", show_default=True,
              type=click.Choice(["one-head", "reflected", "averaged", "pooled"]))
@click.option("--out", "out_file", default=None, type=click.Path(dir_okay=False),
              help="Write the certificate (JSON) to this file.")
@click.option("--workers", default=1, show_default=True, type=click.IntRange(1, 64),
              help="Local processes that evaluate the boxes (1: this process); with --scheduler local, the Dask "
                   "cluster's processes.")
@scheduler_option
def certify(predicate, a_text, b_text, theta_text, param_items, dps, max_boxes, estimator, out_file, workers,
            scheduler) -> None:
    """Prove a predicate on a box of (a, b, θ) by Arb interval evaluation and bisection.

    Prints the verdict and the number of boxes; exits 0 if proved, 1 if the
    predicate failed (it is certainly false on some box) or is undecided.
    """
    from stumpcheck.numerics.certified.proofs.box_prover import Box, certify as run_certify

    from stumpcheck.numerics.precision import validate_dps
    from stumpcheck.numerics.resources import check_writable_file

    theta = _interval(theta_text, "theta") or ("0", "1")
    box = Box(a=_interval(a_text, "a"), b=_interval(b_text, "b"), theta=theta)
    digits = validate_dps(dps)
    boxes = parse_int(max_boxes, "max-boxes", minimum=1, maximum=MAX_BOXES)
    if out_file is not None:
        check_writable_file(out_file, "--out")
    params = _params(param_items)
    context = click.get_current_context()  # where the boxes are evaluated, until the command ends
    on = context.with_resource(scheduled(scheduler, workers, echo=lambda text: click.echo(text, err=True),
                                         workers_given=context.get_parameter_source("workers").name != "DEFAULT"))
    certificate = run_certify(predicate, box, params=params, dps=digits, max_boxes=boxes, estimator=estimator,
                              workers=on.workers)
    click.echo(certificate.verdict())
    click.echo(f"boxes {certificate.boxes} (proved leaves {len(certificate.leaves)}), "
               f"evaluations {certificate.evaluations}, {certificate.prec_bits} bits, {certificate.seconds} s")
    bad = certificate.failure_box or certificate.undecided_box
    if bad is not None:
        label = "failure box" if certificate.failure_box else "undecided box"
        click.echo(f"{label}: a {bad['a']}, b {bad['b']}, theta {bad['theta']}, bounds {bad['bounds']}")
    if out_file is not None:
        try:
            Path(out_file).write_text(certificate.to_json() + "\n", encoding="utf-8")
        except OSError as exc:
            raise InputError(f"cannot write {out_file}: {exc.strerror or exc}") from None
        click.echo(f"wrote {out_file}")
    click.get_current_context().exit(0 if certificate.proved else 1)
