"""A finished tube as exact rationals, for the claims built on it: its rows and the box containing z(t).

A row (t_lo, t_hi, a_lo, a_hi, b_lo, b_hi) says z(t) ∈ [a_lo, a_hi] × [b_lo, b_hi] for every t ∈ [t_lo, t_hi]
(the outward decimals of tube.csv, read as exact Fractions). Consecutive rows touch or overlap in t and
cover [0, valid_to_t]. The source is a :class:`numerics.certified.tube.Tube`, a tube directory, its
tube.csv, or its flow_certificate.json (format /2; the rows are those the re-check verifies).
"""

from __future__ import annotations

import csv
import json
from fractions import Fraction
from pathlib import Path

from numerics.certified.tube_numbers import exact_fraction
from numerics.precision import InputError

__all__ = ["tube_rationals", "box_at"]


def _rows_of(source) -> list:
    from numerics.certified.tube import Tube

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


def box_at(source, t) -> tuple[Fraction, Fraction, Fraction, Fraction] | None:
    """(a_lo, a_hi, b_lo, b_hi) containing z(t): the intersection of the boxes of every row whose [t_lo, t_hi]
    contains t (exact); None if no row does."""
    t = Fraction(t)
    rows = source if isinstance(source, list) else tube_rationals(source)
    box = None
    for t_lo, t_hi, a_lo, a_hi, b_lo, b_hi in rows:
        if t_lo <= t <= t_hi:
            box = ((a_lo, a_hi, b_lo, b_hi) if box is None else
                   (max(box[0], a_lo), min(box[1], a_hi), max(box[2], b_lo), min(box[3], b_hi)))
    return box
