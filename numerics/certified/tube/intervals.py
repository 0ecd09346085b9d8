"""A finished tube as exact rationals, for the claims built on it: its rows and the box containing z(t).

A row (t_lo, t_hi, a_lo, a_hi, b_lo, b_hi) says z(t) ∈ [a_lo, a_hi] × [b_lo, b_hi] for every t ∈ [t_lo, t_hi]
(the outward decimals of tube.csv, read as exact Fractions). Consecutive rows touch or overlap in t (by
the rounding of their common end only: the re-check requires each row's times within the outward rounding
of its proved range) and cover [0, valid_to_t]. The source is a :class:`stumpcheck.numerics.certified.tube.build.Tube`, a
tube directory, its tube.csv, or its flow_certificate.json (format /2; the rows are those the re-check
verifies).

:func:`box_at` answers only inside proved time, :func:`proved_until`: T for a complete tube (its rows reach
T and end there), else a lower bound of where its last row ends; for a bare list of rows or a tube.csv
without its tube.json, that lower bound for the last row. A t beyond it (or below 0) is an InputError.
"""

from __future__ import annotations

import csv
import json
from fractions import Fraction
from pathlib import Path

from stumpcheck.numerics.certified.tube.records import exact_fraction
from stumpcheck.numerics.precision import InputError

__all__ = ["tube_rationals", "box_at", "proved_until"]


def _rows_of(source) -> list:
    from stumpcheck.numerics.certified.tube.build import Tube

    if isinstance(source, Tube):
        return [row for interval in source.intervals for row in interval.rows]
    path = Path(source)
    if path.is_dir():
        path = path / "tube.csv"
    try:
        if path.suffix == ".json":
            document = json.loads(path.read_text(encoding="utf-8"))
            return [row for item in document["intervals"] for row in item["rows"]]
        with path.open(newline="", encoding="utf-8") as handle:
            reader = csv.reader(handle)
            header = next(reader)
            if header != ["t_lo", "t_hi", "a_lo", "a_hi", "b_lo", "b_hi"]:
                raise InputError(f"{path}: not a tube.csv (header {header[:6]})")
            return [row for row in reader if row]
    except (OSError, ValueError, KeyError, TypeError, StopIteration) as exc:
        raise InputError(f"{path}: cannot read the tube: {str(exc)[:80]}") from None


def tube_rationals(source) -> list[tuple[Fraction, Fraction, Fraction, Fraction, Fraction, Fraction]]:
    """The rows of the tube as exact rationals (see the module doc); InputError if malformed."""
    rows = []
    for row in _rows_of(source):
        if len(row) != 6:
            raise InputError(f"a tube row must have 6 entries, got {len(row)}")
        values = tuple(exact_fraction(x, "tube row") for x in row)
        if not (values[0] <= values[1] and values[2] <= values[3] and values[4] <= values[5]):
            raise InputError(f"an empty tube row: {row}")
        rows.append(values)
    return rows


def _summary_of(source):
    """(t_max, complete) of a source that records them, else None."""
    from stumpcheck.numerics.certified.tube.build import Tube

    if isinstance(source, Tube):
        return Fraction(source.t_max), bool(source.complete)
    if isinstance(source, list):
        return None
    path = Path(source)
    if path.is_dir():
        path = path / "tube.json"
    elif path.suffix != ".json":
        path = path.with_name("tube.json")
    try:
        document = json.loads(path.read_text(encoding="utf-8"))
        return Fraction(float(document["t_max"])), document["complete"] is True  # the float T the tube reached
    except (OSError, ValueError, KeyError, TypeError, OverflowError):
        return None


def proved_until(source, rows=None) -> Fraction:
    """The end of the proved time of ``source`` (see the module doc): T if it is a complete tube, else the
    last row's t_hi lowered by its rounding (t_hi ≤ e^{s} − 1 + 10⁻¹⁴·t_hi, as the re-check requires)."""
    from stumpcheck.numerics.certified.tube.statement import ROW_ROUNDING

    rows = rows if rows is not None else (source if isinstance(source, list) else tube_rationals(source))
    if not rows:
        raise InputError("the tube has no rows: no time is proved")
    last = rows[-1][1] * (1 - ROW_ROUNDING)
    summary = _summary_of(source)
    if summary is not None and summary[1]:
        return min(summary[0], rows[-1][1])
    return last


def box_at(source, t) -> tuple[Fraction, Fraction, Fraction, Fraction] | None:
    """(a_lo, a_hi, b_lo, b_hi) containing z(t): the intersection of the boxes of every row whose [t_lo, t_hi]
    contains t (exact); InputError for a t outside [0, :func:`proved_until`]; None if no row holds t (a gap)."""
    t = Fraction(t)
    rows = source if isinstance(source, list) else tube_rationals(source)
    end = proved_until(source, rows)
    if not 0 <= t <= end:
        raise InputError(f"t = {float(t):g} is outside the tube's proved time [0, {float(end):.15g}]: it has no "
                         "box there")
    box = None
    for t_lo, t_hi, a_lo, a_hi, b_lo, b_hi in rows:
        if t_lo <= t <= t_hi:
            box = ((a_lo, a_hi, b_lo, b_hi) if box is None else
                   (max(box[0], a_lo), min(box[1], a_hi), max(box[2], b_lo), min(box[3], b_hi)))
    return box
