"""C2–C4 from the certified tube, part 1: the tube as exact rational rows and the states it encloses.

A row (t_lo, t_hi, a_lo, a_hi, b_lo, b_hi) of exact rationals states z(t) = (a(t), b(t)) ∈ [a_lo, a_hi] ×
[b_lo, b_hi] for every t of the row's own time interval [τ_lo, τ_hi] ⊆ [t_lo, t_hi] (the recorded times
are rounded outward from e^{s} − 1, the boxes outward from Arb balls). The rows' own intervals follow each
other without gap from t = 0 (the tube's chain, which ``stumpcheck recheck`` verifies from the
certificate); this module trusts the rows as the tube's statement and reads nothing else from it.

:func:`tube_rows` is the one adapter between a tube (a :class:`~stumpcheck.numerics.certified.tube.build.Tube`, its output
folder, its ``tube.csv`` or ``flow_certificate.json``) and the readings of C2–C4: a change of the Tube
class costs that function only. Two enclosures are read from the rows:

* :func:`state_at` — at an exact time t: the hull of the boxes of every row whose recorded interval
  contains t (the row whose own interval contains t is among them; the hull, not the intersection,
  because a recorded interval may stick out of the row's own one by the outward rounding);
* :func:`node_states` — at the ends shared by consecutive rows k, k + 1: there is a time τ ∈
  [t_lo_{k+1}, t_hi_k] in both rows' own intervals (they follow each other without gap), so
  z(τ) ∈ box_k ∩ box_{k+1}. A box is the hull of a piece of the flow plus its radius, and at a shared
  end the two pieces leave the node on opposite sides, so the intersection is about the node ± the
  radius: much narrower than either box. τ is known as the ball [t_lo_{k+1}, t_hi_k].

When the tube's pieces and radii are at hand (a Tube, or a flow_certificate.json of format /2, also beside
a tube.csv), both use the tube's own enclosures instead (:mod:`stumpcheck.numerics.certified.tube.reading_nodes`):
z(t) ∈ z̃(s_i) ± r_end at the sub-interval ends s_i, and z̃(s) ± r_sup at any t; about ±2e-9 at T = 10⁶
instead of ±1e-6. :attr:`TubeRows.pieces` holds them (empty: the rows only).

Coverage: :attr:`TubeRows.certified_to` is T for a complete tube, else a lower bound of where the rows
stop (the certificate's ``valid_to_t``, or the last row's t_lo: its own interval starts at or after it).
A tube that stopped early is never read as covering [0, T].
"""

from __future__ import annotations

import csv
import json
import math
from dataclasses import dataclass
from fractions import Fraction
from pathlib import Path
from typing import NamedTuple

from stumpcheck.numerics.precision import InputError

__all__ = ["Row", "TubeRows", "NodeState", "tube_rows", "rows_from_list", "state_at", "node_states", "fixed_time_states"]


class Row(NamedTuple):
    """z(t) ∈ [a_lo, a_hi] × [b_lo, b_hi] for t in the row's own interval ⊆ [t_lo, t_hi]; exact rationals."""

    t_lo: Fraction
    t_hi: Fraction
    a_lo: Fraction
    a_hi: Fraction
    b_lo: Fraction
    b_hi: Fraction


@dataclass(frozen=True)
class TubeRows:
    """The rows of a tube, T, whether it is complete, and the t up to which it certifies the flow."""

    rows: tuple
    t_max: Fraction
    complete: bool
    certified_to: Fraction
    pieces: tuple = ()  # PieceRecords of stumpcheck.numerics.certified.tube.reading_nodes, in order; () if not at hand

    @property
    def node_source(self) -> str:
        """How the node states are enclosed (words for the report)."""
        return ("the tube's own enclosure z~(s) +- r_sup at fixed log-spaced times (z~(s_i) +- r_i at the "
                "sub-interval ends without a window)" if self.pieces else
                "intersections of consecutive row boxes (tube.csv only)")


class NodeState(NamedTuple):
    """z(τ) ∈ [a_lo, a_hi] × [b_lo, b_hi] at some τ ∈ [t_lo, t_hi] (exact rationals)."""

    t_lo: Fraction
    t_hi: Fraction
    a_lo: Fraction
    a_hi: Fraction
    b_lo: Fraction
    b_hi: Fraction


def _fraction(text, where: str) -> Fraction:
    try:
        value = Fraction(str(text).strip())
    except (ValueError, ZeroDivisionError, TypeError):
        raise InputError(f"{where}: not a decimal number: {str(text)[:40]!r}") from None
    return value


def _checked(rows: list, where: str) -> tuple:
    """The rows, checked: boxes and time intervals the right way round, b > 0, ordered from t = 0 without gap."""
    if not rows:
        raise InputError(f"{where}: the tube has no intervals")
    for k, row in enumerate(rows):
        if not (row.t_lo <= row.t_hi and row.a_lo <= row.a_hi and 0 < row.b_lo <= row.b_hi):
            raise InputError(f"{where}: row {k} is not a box (lo > hi, or b <= 0): {tuple(map(float, row))}")
    if rows[0].t_lo != 0:
        raise InputError(f"{where}: the first interval starts at t = {float(rows[0].t_lo):g}, not 0")
    for k in range(len(rows) - 1):
        if rows[k + 1].t_lo > rows[k].t_hi or rows[k + 1].t_lo < rows[k].t_lo:
            raise InputError(f"{where}: intervals {k} and {k + 1} leave a gap or are out of order")
    return tuple(rows)


def rows_from_list(rows, *, t_max, complete: bool, valid_to=None, pieces=()) -> TubeRows:
    """:class:`TubeRows` from rows of six numbers (exact: ints, Fractions, decimal strings or floats), and
    optionally the tube's :class:`~stumpcheck.numerics.certified.tube.reading_nodes.PieceRecord` s."""
    parsed = _checked([Row(*(Fraction(x) if not isinstance(x, str) else _fraction(x, "row") for x in row))
                       for row in rows], "tube")
    t_max = Fraction(t_max)
    if complete and parsed[-1].t_hi < t_max:
        raise InputError(f"the tube says it is complete but its last interval ends before T = {float(t_max):g}")
    if complete:
        certified_to = t_max
    else:
        certified_to = parsed[-1].t_lo if valid_to is None else min(Fraction(valid_to), parsed[-1].t_hi)
    return TubeRows(parsed, t_max, bool(complete), certified_to, tuple(pieces))


def _time_bounds(s0: float, s1: float) -> tuple[Fraction, Fraction]:
    """Exact t_lo ≤ e^{s0} − 1 and t_hi ≥ e^{s1} − 1 (outward decimals, as tube.csv records them)."""
    from flint import arb

    from stumpcheck.numerics.certified.tube.records import lower_decimal, upper_decimal

    t_lo = Fraction(0) if s0 == 0 else _fraction(lower_decimal(arb(s0).expm1(), 15), "t_lo")
    return t_lo, _fraction(upper_decimal(arb(s1).expm1(), 15), "t_hi")


def _from_tube(tube) -> TubeRows:
    """The rows of a Tube object: the tube package's own exact rows where it provides them
    (``stumpcheck.numerics.certified.tube.intervals.tube_rationals``), else one row per interval from its log-time
    ends and its box."""
    from flint import ctx

    from stumpcheck.numerics.certified.tube.records import arb_fraction

    if not tube.intervals:
        raise InputError(f"the tube has no intervals ({tube.stop_reason or 'none validated'})")
    try:
        from stumpcheck.numerics.certified.tube.intervals import tube_rationals
    except ImportError:
        tube_rationals = None
    with ctx.workprec(128):
        if tube_rationals is not None:
            rows = [tuple(Fraction(x) for x in row) for row in tube_rationals(tube)]
        else:
            rows = []
            for interval in tube.intervals:
                s0, s1 = (interval.s0, interval.s1) if hasattr(interval, "s0") else (interval.n0.s, interval.n1.s)
                rows.append((*_time_bounds(s0, s1), *(arb_fraction(x) for x in interval.box)))
        valid_to = _time_bounds(0.0, tube.s_reached)[0] if not tube.complete else None
    pieces = ()
    if all(isinstance(getattr(iv, "record", None), dict) and "r_sup" in iv.record for iv in tube.intervals):
        from stumpcheck.numerics.certified.tube.reading_nodes import piece_record

        pieces = tuple(piece_record(iv.record) for iv in tube.intervals)
    # an incomplete tube: certified up to a lower bound of e^{s_reached} − 1, and no further than its rows
    return rows_from_list(rows, t_max=Fraction(tube.t_max), complete=tube.complete, valid_to=valid_to,
                          pieces=pieces)


def _from_csv(path: Path, summary: dict | None) -> TubeRows:
    try:
        with path.open(newline="", encoding="utf-8") as handle:
            table = list(csv.reader(handle))
    except OSError as exc:
        raise InputError(f"cannot read {path.name}: {exc.strerror}") from None
    header = ["t_lo", "t_hi", "a_lo", "a_hi", "b_lo", "b_hi"]
    if not table or [c.strip() for c in table[0]] != header:
        raise InputError(f"{path.name}: expected the header {','.join(header)}")
    rows = []
    for n, line in enumerate(table[1:], start=2):
        if len(line) != 6:
            raise InputError(f"{path.name}, line {n}: expected 6 columns, got {len(line)}")
        rows.append(tuple(_fraction(x, f"{path.name}, line {n}") for x in line))
    pieces = _pieces_beside(path, rows)
    if summary is None:  # no tube.json: completeness unknown, so read as stopping where its rows stop
        return rows_from_list(rows, t_max=rows[-1][1] if rows else 0, complete=False, pieces=pieces)
    t_max = _fraction(repr(float(summary["t_max"])), "tube.json t_max")
    valid_to = None
    if not summary.get("complete"):
        # tube.json's valid_to_t is a float near e^{s_reached} − 1: keep below it by the last row's t_lo
        valid_to = rows[-1][0] if rows else 0
    return rows_from_list(rows, t_max=t_max, complete=bool(summary.get("complete")), valid_to=valid_to,
                          pieces=pieces)


def _certificate_parts(path: Path) -> tuple:
    """(rows, t_max, complete, valid_to, pieces) of a flow certificate: format /2 (a row per sub-interval,
    with the pieces and radii) or /1 (one row per interval, no pieces); InputError if unreadable."""
    from stumpcheck.numerics.certified.tube.reading_nodes import piece_record

    try:
        document = json.loads(path.read_text(encoding="utf-8"))
        intervals = document["intervals"]
        if intervals and "rows" in intervals[0]:
            rows = [tuple(row) for item in intervals for row in item["rows"]]
            pieces = tuple(piece_record(item) for item in intervals)
        else:
            rows, pieces = [(*item["t"], *item["box"]) for item in intervals], ()
        t_max, complete, valid_to = document["t_max"], bool(document["complete"]), document.get("valid_to_t")
    except (OSError, ValueError, KeyError, TypeError, InputError):
        raise InputError(f"{path.name}: not a readable flow certificate") from None
    rows = [tuple(_fraction(x, path.name) for x in row) for row in rows]
    return rows, _fraction(t_max, "t_max"), complete, None if valid_to is None else _fraction(valid_to, "valid_to_t"), pieces


def _from_certificate(path: Path) -> TubeRows:
    rows, t_max, complete, valid_to, pieces = _certificate_parts(path)
    return rows_from_list(rows, t_max=t_max, complete=complete, valid_to=valid_to, pieces=pieces)


def _pieces_beside(path: Path, rows: list) -> tuple:
    """The pieces of the flow_certificate.json beside a tube.csv, if there is one and its rows are the csv's
    (InputError if they differ: two files of different tubes); () without one."""
    certificate = path.with_name("flow_certificate.json")
    if not certificate.is_file():
        return ()
    their_rows, _, _, _, pieces = _certificate_parts(certificate)
    if pieces and their_rows != [tuple(row) for row in rows]:
        raise InputError(f"{path.name} and flow_certificate.json beside it hold different tubes")
    return pieces


def tube_rows(source) -> TubeRows:
    """The rows of ``source``: a Tube, a :class:`TubeRows`, or a path to a tube's folder (its tube.csv with
    tube.json, else its flow_certificate.json), to a tube.csv (completeness from the tube.json beside it;
    without one the tube is read as stopping where its rows stop) or to a flow_certificate.json."""
    if isinstance(source, TubeRows):
        return source
    if hasattr(source, "intervals") and hasattr(source, "complete"):
        return _from_tube(source)
    path = Path(source)
    if path.is_dir():  # tube.csv (with tube.json) is the tube's stable interface; the certificate otherwise
        path = path / "tube.csv" if (path / "tube.csv").is_file() else path / "flow_certificate.json"
    if path.suffix == ".json":
        return _from_certificate(path)
    if not path.is_file():
        raise InputError(f"no tube at {path.name}: expected a tube folder, tube.csv or flow_certificate.json")
    summary_path = path.with_name("tube.json")
    summary = None
    if summary_path.is_file():
        try:
            summary = json.loads(summary_path.read_text(encoding="utf-8"))
        except ValueError:
            raise InputError("tube.json is not valid JSON") from None
    return _from_csv(path, summary)


def state_at(tube: TubeRows, t) -> tuple | None:
    """(a_lo, a_hi, b_lo, b_hi) ⊇ z(t) for an exact t ∈ [0, certified_to]; None beyond ``certified_to``.
    With the pieces: z̃(s) ± r_sup of the interval whose s-range holds log(1 + t) (module doc); else (or if
    the ball of log(1 + t) straddles two intervals) the hull of the boxes of the rows whose recorded
    interval contains t."""
    t = Fraction(t)
    if not 0 <= t <= tube.certified_to:
        return None
    if tube.pieces:
        from stumpcheck.numerics.certified.tube.reading_nodes import pieces_state_at

        box = pieces_state_at(tube.pieces, t)
        if box is not None:
            return box
    boxes = [row for row in tube.rows if row.t_lo <= t <= row.t_hi]
    return (min(r.a_lo for r in boxes), max(r.a_hi for r in boxes), min(r.b_lo for r in boxes),
            max(r.b_hi for r in boxes))


def _row_nodes(tube: TubeRows) -> list[NodeState]:
    """The intersections of consecutive row boxes at their shared ends (module doc)."""
    nodes = []
    for left, right in zip(tube.rows, tube.rows[1:]):
        box = (max(left.a_lo, right.a_lo), min(left.a_hi, right.a_hi), max(left.b_lo, right.b_lo),
               min(left.b_hi, right.b_hi))
        if box[0] > box[1] or box[2] > box[3]:
            raise InputError(f"the boxes at t = {float(right.t_lo):.6g} do not meet: not a tube")
        nodes.append(NodeState(right.t_lo, left.t_hi, *box))
    return nodes


def node_states(tube: TubeRows, *, t_from=0, per_decade: int | None = None) -> list[NodeState]:
    """The states at the sub-interval ends (the tube's own enclosure z̃(s_i) ± r_i with the pieces, else the
    intersections of consecutive rows; module doc), for the ends in [t_from, certified_to]; with
    ``per_decade``, only the end nearest (in log t) to each of ``per_decade`` log-spaced times per decade
    (each end once). With the pieces and ``per_decade`` (and t_from > 0): the states at those log-spaced
    times themselves (:func:`fixed_time_states`), so that a fit over them does not depend on where the
    tube's sub-intervals happen to end."""
    t_from = Fraction(t_from)
    if tube.pieces and per_decade is not None and t_from > 0:
        return fixed_time_states(tube, t_from, per_decade)
    if tube.pieces:
        from stumpcheck.numerics.certified.tube.reading_nodes import piece_nodes

        every = [NodeState(*node) for record in tube.pieces for node in piece_nodes(record)]
    else:
        every = _row_nodes(tube)
    nodes = [n for n in every if n.t_lo >= t_from and n.t_hi <= tube.certified_to]
    if per_decade is None or not nodes:
        return nodes
    positive = [n for n in nodes if n.t_lo > 0]
    if not positive:
        return []
    lo, hi = math.log10(float(positive[0].t_lo)), math.log10(float(positive[-1].t_hi))
    count = max(2, math.ceil((hi - lo) * per_decade) + 1)
    chosen = {}
    for i in range(count):
        target = lo + (hi - lo) * i / (count - 1)
        best = min(positive, key=lambda n: abs(math.log10(float(n.t_lo)) - target))
        chosen[best.t_lo] = best
    return [chosen[key] for key in sorted(chosen)]


def _decimal_time(log10_t: float) -> Fraction:
    """10^log10_t rounded to 10 significant digits, as an exact rational (the node's time is then exact)."""
    return Fraction(f"{10.0 ** log10_t:.10g}")


def fixed_time_states(tube: TubeRows, t_from: Fraction, per_decade: int) -> list[NodeState]:
    """The states at t_k = t_from·10^{k/per_decade} (rounded to 10 digits, exact) for t_k < certified_to,
    and at certified_to itself: each z̃(s) ± r_sup (:func:`state_at`), exact time balls of radius 0."""
    end = tube.certified_to
    lo, hi = math.log10(float(t_from)), math.log10(float(end))
    count = math.ceil((hi - lo) * per_decade - 1e-9)
    times = sorted({t for t in (_decimal_time(lo + k / per_decade) for k in range(count)) if t_from <= t < end}
                   | {end})
    states = []
    for t in times:
        box = state_at(tube, t)
        if box is None:
            raise InputError(f"no tube state at t = {float(t):.6g}")
        states.append(NodeState(t, t, *box))
    return states
