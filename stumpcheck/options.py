"""Parsing of command-line option text shared by the subcommands.

Every parser raises :class:`numerics.precision.InputError` with the option's
name, which the CLI turns into exit status 2 and one line.
"""

from __future__ import annotations

import math

from numerics.precision import InputError, parse_decimal

__all__ = ["parse_int", "parse_int_list", "parse_float"]


def parse_int(text, name: str, *, minimum: int | None = None) -> int:
    """An integer option (``--name``), at least ``minimum`` when given."""
    try:
        value = int(str(text).strip())
    except ValueError:
        raise InputError(f"--{name} must be an integer, got {text!r}") from None
    if minimum is not None and value < minimum:
        raise InputError(f"--{name} must be >= {minimum}, got {value}")
    return value


def parse_int_list(text, name: str, *, minimum: int | None = None) -> list[int]:
    """A comma-separated list of integers, each at least ``minimum``."""
    parts = [p.strip() for p in str(text).split(",")]
    if not parts or not all(parts):
        raise InputError(f"--{name} must be a comma-separated list of integers, got {text!r}")
    return [parse_int(p, name, minimum=minimum) for p in parts]


def parse_float(text, name: str) -> float:
    """A decimal option read exactly and rounded once to float64; it must be finite in float64."""
    value = float(parse_decimal(text, f"--{name}"))
    if not math.isfinite(value):
        raise InputError(f"--{name} is out of the float64 range: {text!r}")
    return value
