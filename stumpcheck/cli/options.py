"""Parsing of command-line option text shared by the subcommands.

Every parser raises :class:`stumpcheck.numerics.precision.InputError` with the option's
name, which the CLI turns into exit status 2 and one line. Echoed values are
shortened (:func:`shown`) so that a huge argument cannot flood the error line.
"""

from __future__ import annotations

import math
from contextlib import contextmanager
from pathlib import Path

from stumpcheck.numerics.precision import InputError, parse_decimal

__all__ = ["SEED_MAX", "MAX_MAGNITUDE", "shown", "parse_int", "parse_int_list", "parse_float", "parse_seed",
           "parse_score", "parse_scale", "parse_scheduler", "first_missing_folder", "make_out_dir",
           "SCHEDULER_HELP", "scheduler_option", "scheduled"]

#: seeds are non-negative integers below 2⁶³ (stored as int64 in corpora and checkpoints)
SEED_MAX = 2 ** 63 - 1
#: |a| and b of the float64 engines (corpus gradient, GD, fresh contexts): scores a·y − b·x and their
#: squares and products in the gradient stay finite in float64 up to here
MAX_MAGNITUDE = 1e150


def shown(text, limit: int = 60) -> str:
    """``repr(text)``, cut to about ``limit`` characters with the number left out."""
    text = repr(text)
    if len(text) <= limit:
        return text
    return f"{text[:limit - 20]}...({len(text) - limit + 20} more characters)"


def parse_int(text, name: str, *, minimum: int | None = None, maximum: int | None = None) -> int:
    """An integer option (``--name``), within [``minimum``, ``maximum``] when given."""
    raw = str(text).strip()
    if not raw.isascii():  # int() also reads other scripts' digits ("３０")
        raise InputError(f"--{name} must be an integer written in ASCII digits, got {shown(text)}")
    if len(raw) > 30 and raw.lstrip("+-").isdigit():
        # longer than any bound below; also keeps int() away from huge digit strings
        if maximum is not None and not raw.startswith("-"):
            raise InputError(f"--{name} must be <= {maximum}, got a {len(raw)}-digit number")
    try:
        value = int(raw)
    except ValueError:
        raise InputError(f"--{name} must be an integer, got {shown(text)}") from None
    if minimum is not None and value < minimum:
        raise InputError(f"--{name} must be >= {minimum}, got {shown(value)}")
    if maximum is not None and value > maximum:
        raise InputError(f"--{name} must be <= {maximum}, got {shown(value)}")
    return value


def parse_int_list(text, name: str, *, minimum: int | None = None, maximum: int | None = None) -> list[int]:
    """A comma-separated list of integers, each within [``minimum``, ``maximum``]."""
    parts = [p.strip() for p in str(text).split(",")]
    if not parts or not all(parts):
        raise InputError(f"--{name} must be a comma-separated list of integers, got {shown(text)}")
    return [parse_int(p, name, minimum=minimum, maximum=maximum) for p in parts]


def parse_seed(text, name: str = "seed") -> int:
    """A seed: an integer in [0, 2⁶³ − 1]."""
    return parse_int(text, name, minimum=0, maximum=SEED_MAX)


def parse_float(text, name: str) -> float:
    """A decimal option read exactly and rounded once to float64; it must be finite in float64."""
    value = float(parse_decimal(text, f"--{name}"))
    if not math.isfinite(value):
        raise InputError(f"--{name} is out of the float64 range: {shown(text)}")
    return value


def parse_score(text, name: str = "a") -> float:
    """A label score a of the float64 engines: |a| <= MAX_MAGNITUDE."""
    value = parse_float(text, name)
    if not abs(value) <= MAX_MAGNITUDE:
        raise InputError(f"--{name} must satisfy |{name}| <= {MAX_MAGNITUDE:g} (float64 engines), got {shown(text)}")
    return value


def parse_scale(text, name: str = "b") -> float:
    """An attention scale b of the float64 engines: 0 < b <= MAX_MAGNITUDE (−0 and 0 are rejected)."""
    value = parse_float(text, name)
    if not 0 < value <= MAX_MAGNITUDE:
        raise InputError(f"--{name} must be in (0, {MAX_MAGNITUDE:g}] (the attention scale, float64 engines), "
                         f"got {shown(text)}")
    return value


def parse_scheduler(text, name: str = "scheduler") -> str | None:
    """A Dask scheduler address (``--scheduler``): absent (None) or a non-blank string, returned as given."""
    if text is not None and not text.strip():
        raise InputError(f"--{name} must be a non-empty address such as tcp://127.0.0.1:8786")
    return text


#: the help of ``--scheduler`` on the commands that prove or re-check (see docs/cluster.md)
SCHEDULER_HELP = ("Run the boxes or tube intervals as Dask tasks: a scheduler address tcp://host:port, or 'local' for "
                  "a Dask cluster of --workers processes started here (needs the 'dask' extra); the certificate is "
                  "byte for byte the one a local run writes.")


def scheduler_option(function):
    """The ``--scheduler ADDR`` option (:data:`SCHEDULER_HELP`), as a click decorator."""
    import click

    return click.option("--scheduler", default=None, metavar="ADDR", help=SCHEDULER_HELP)(function)


@contextmanager
def scheduled(scheduler_text, workers: int | None, *, workers_given: bool, echo=None):
    """Where a command's certified work runs, chosen for the block
    (:func:`stumpcheck.numerics.scheduling.using`); yields the scheduler, or None when nothing is chosen.

    * no ``--scheduler``: ``--workers`` local processes (1: this process), as before; ``workers`` None (a
      command whose parts keep their own defaults) chooses nothing;
    * ``--scheduler local``: a Dask LocalCluster of ``--workers`` processes (2 when not given);
    * ``--scheduler ADDR``: the Dask scheduler there, with its own workers; ``--workers`` given too is
      bad input (it would not be used).

    Connecting is checked here, before any work (:func:`stumpcheck.numerics.scheduling.connect`: an
    unreachable address, or no dask installed, is one-line InputError). ``echo(text)`` reports where the
    work runs when it is a Dask cluster."""
    from stumpcheck.numerics import scheduling

    address = parse_scheduler(scheduler_text)
    if address is None:
        chosen = None if workers is None else scheduling.local(workers)
    else:
        address = address.strip()
        if workers_given and address != scheduling.LOCAL_CLUSTER:
            raise InputError(f"--workers is the size of a local pool or of --scheduler {scheduling.LOCAL_CLUSTER}'s "
                             f"cluster; the workers of {shown(address)} are that scheduler's own (drop --workers)")
        chosen = scheduling.connect(address, workers if workers_given else None)
        if echo is not None:
            echo(f"certified work on {chosen.describe()}")
    if chosen is None:
        yield None
        return
    with chosen, scheduling.using(chosen):
        yield chosen


def make_out_dir(text, name: str = "out") -> tuple[Path, bool]:
    """The output directory of ``--name``: checked writable, then created with its parents.

    Returns ``(path, created)``; ``created`` is true when the directory did not
    exist before, so that a run stopped by bad input can leave nothing behind.
    """
    from stumpcheck.numerics.resources import check_writable_dir

    out = Path(text)
    check_writable_dir(out, f"--{name}")
    created = not out.exists()
    try:
        out.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise InputError(f"--{name}: cannot create {text}: {exc.strerror or exc}") from None
    return out, created


def first_missing_folder(path) -> Path | None:
    """The outermost folder on the way to ``path`` (``path`` itself or an ancestor) that does not exist yet.

    Creating ``path`` with its parents creates that folder and what lies below it, so removing it (and only
    it) undoes the creation; None when ``path`` already exists.
    """
    missing = Path(path).absolute()
    if missing.exists():
        return None
    while not missing.parent.exists() and missing.parent != missing:
        missing = missing.parent
    return missing
