"""C2–C4 from the certified tube, part 3: the tube's own enclosures z̃(s) ± r at the sub-interval ends and at T.

A row's box holds the piece's motion over its whole sub-interval plus the radius. The tube says more: on
interval k (log time s ∈ [s₀, s₁], h = s₁ − s₀, x = (2s − s₀ − s₁)/h) with the Chebyshev piece z̃_k (exact
binary coefficients) and sub-intervals S_i = [s_i, s_{i+1}], s_i = s₀ + h·i/n (i = 0..n, n the settings'
``subdivisions``), the Gronwall chain bounds w = z − z̃_k in the Euclidean norm:

* ‖w(s_{i+1})‖₂ ≤ r_end_i at the end of S_i (and ‖w(s₀)‖₂ ≤ r_start);
* ‖w(s)‖₂ ≤ r_sup_i for every s ∈ S_i (the radius is monotone on S_i; r_sup_i ≥ both ends).

These are the records that ``stumpcheck recheck`` verifies (each r_end_i ≥ the Gronwall radius from the
recorded δ and μ_i, r_sup_i ≥ both ends); this module trusts them as it trusts the rows. From them:

* :func:`piece_nodes` — at each s_{i+1} (an exact rational: s₀, s₁ are floats and x_{i+1} = −1 + 2(i + 1)/n):
  t = e^{s_{i+1}} − 1 as an Arb ball (expm1 of the exact s, outward), and z(t) in the disk
  z̃_k(x_{i+1}) ± r_end_i, kept as its box [ã ± r] × [b̃ ± r] (z̃ at the exact x by the Taylor shift of
  :func:`stumpcheck.numerics.certified.tube.chebyshev.value_at`, outward);
* :func:`pieces_state_at` — at an exact t: s = log(1 + t) as a ball, and the union over the intervals and
  sub-intervals S_i that meet it of z̃_k(x) ± r_sup_i, x ∈ x(s) ∩ S_i (also used for the region's entry box,
  :func:`stumpcheck.numerics.certified.region.flow_certificate.tube_box_at_t_max`).

Both are about the node ± the tube's radius (±2e-9 at T = 10⁶) instead of ± the piece's motion over a
sub-interval (±1e-6 there).
"""

from __future__ import annotations

from fractions import Fraction
from typing import NamedTuple

from flint import arb, fmpq

from stumpcheck.numerics.precision import InputError

__all__ = ["PieceRecord", "piece_record", "piece_nodes", "pieces_state_at"]


class PieceRecord(NamedTuple):
    """One interval of the tube: its piece, and r_end_i, r_sup_i per sub-interval (exact rationals)."""

    piece: object  # stumpcheck.numerics.certified.tube.chebyshev.ChebyshevPiece
    r_end: tuple
    r_sup: tuple


def piece_record(item: dict) -> PieceRecord:
    """The :class:`PieceRecord` of one interval's record (a certificate's ``intervals`` item, or a
    TubeInterval's ``record``); InputError if malformed."""
    from stumpcheck.numerics.certified.tube.workers import piece_from_json
    from stumpcheck.numerics.certified.tube.records import exact_fraction

    try:
        piece = piece_from_json(item["piece"])
        r_end = tuple(exact_fraction(x, "r_end") for x in item["r_end"])
        r_sup = tuple(exact_fraction(x, "r_sup") for x in item["r_sup"])
    except (KeyError, TypeError, ValueError, OverflowError):
        raise InputError("a tube interval's record has no readable piece or radii") from None
    if not (r_end and len(r_end) == len(r_sup) and piece.s1 > piece.s0
            and all(r >= 0 for r in (*r_end, *r_sup))):
        raise InputError("a tube interval's radii do not match its sub-intervals")
    return PieceRecord(piece, r_end, r_sup)


def _q(x: Fraction) -> arb:
    return arb(fmpq(x.numerator, x.denominator))


def _fraction(x: arb) -> Fraction:
    from stumpcheck.numerics.certified.tube.records import arb_fraction

    return arb_fraction(x)


def _s_end(record: PieceRecord, i: int) -> Fraction:
    """s_i = s₀ + h·i/n, exact."""
    s0, s1 = Fraction(record.piece.s0), Fraction(record.piece.s1)
    return s0 + (s1 - s0) * Fraction(i, len(record.r_end))


def _disk_box(a: arb, b: arb, radius: Fraction) -> tuple:
    """(a_lo, a_hi, b_lo, b_hi), exact rationals, containing the balls a, b widened by radius (outward)."""
    r = _q(radius)
    return (_fraction((a - r).lower()), _fraction((a + r).upper()), _fraction((b - r).lower()),
            _fraction((b + r).upper()))


def piece_nodes(record: PieceRecord) -> list[tuple]:
    """[(t_lo, t_hi, a_lo, a_hi, b_lo, b_hi)] at the ends s_1 … s_n of the interval's sub-intervals
    (module doc): z(t) in the box for the t of the ball [t_lo, t_hi] = e^{s_i} − 1. Exact rationals."""
    from stumpcheck.numerics.certified.tube.chebyshev import value_at

    count = len(record.r_end)
    out = []
    for i in range(count):
        t = _q(_s_end(record, i + 1)).expm1()
        a, b = value_at(record.piece, _q(Fraction(-1) + Fraction(2 * (i + 1), count)))
        out.append((_fraction(t.lower()), _fraction(t.upper()), *_disk_box(a, b, record.r_end[i])))
    return out


def pieces_state_at(records, t) -> tuple | None:
    """(a_lo, a_hi, b_lo, b_hi) ⊇ z(t) for an exact t ≥ 0 (module doc): with s = log(1 + t) as a ball, over
    every interval whose s-range meets it and every sub-interval S_i meeting it, z̃(x) ± r_sup_i for x in
    x(s) ∩ [x_i, x_{i+1}] (the true s lies in one of them); the hull of those boxes, exact rationals.
    None if no interval meets s."""
    from stumpcheck.numerics.certified.tube.chebyshev import value_at

    s = (1 + _q(Fraction(t))).log()
    box = None
    for record in records:
        s0, s1 = Fraction(record.piece.s0), Fraction(record.piece.s1)
        if s.upper() < _q(s0) or s.lower() > _q(s1):
            continue
        count = len(record.r_sup)
        x = (2 * s - _q(s0) - _q(s1)) / _q(s1 - s0)
        for i in range(count):
            x_lo, x_hi = _q(Fraction(-1) + Fraction(2 * i, count)), _q(Fraction(-1) + Fraction(2 * (i + 1), count))
            lo, hi = max(arb(x.lower()), x_lo), min(arb(x.upper()), x_hi)
            if not lo <= hi:
                continue  # s is certainly not in this sub-interval
            a, b = value_at(record.piece, lo.union(hi))
            part = _disk_box(a, b, record.r_sup[i])
            box = part if box is None else (min(box[0], part[0]), max(box[1], part[1]), min(box[2], part[2]),
                                            max(box[3], part[3]))
    return box
