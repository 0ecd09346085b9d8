"""Exact check that boxes tile a box: inside it, interiors pairwise disjoint, no gap (rational arithmetic).

A domain D = Π_v [lo_v, hi_v] and leaf boxes B_1 … B_n (exact :class:`~fractions.Fraction` ends) **tile** D
when every B_i ⊆ D, the interiors are pairwise disjoint and ∪ B_i = D. A variable with lo_v = hi_v (a
fixed value) is left out of the volumes and of the interiors.

The check cuts D recursively (a guillotine decomposition): in a region R holding the leaves I, a value c of
variable v such that every leaf of I lies either in {x_v ≤ c} or in {x_v ≥ c} splits R and I in two, whose
interiors cannot meet. A bisection's leaves always admit such cuts, so the recursion ends with one leaf per
region, which must then *be* its region (else the rest of the region is a gap). A region that admits no cut
(leaves of some other tiling) is checked pairwise for overlaps and by volume: Σ vol(B_i) = vol(R). Since the
regions partition D, the leaves tile D exactly when every region passes. Ends are replaced by their ranks
among the distinct ends of each variable for the comparisons (order-preserving, so still exact); volumes
are computed with the Fractions themselves.
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction

__all__ = ["TilingFailure", "tiling_failure"]


@dataclass(frozen=True)
class TilingFailure:
    """The first leaf found at fault (its index in the list) and why, in one line."""

    index: int
    reason: str


def _text(x: Fraction) -> str:
    from stumpcheck.numerics.certified.proofs.domains import exact_text

    return exact_text(x)


def _region_text(region: dict, values: dict) -> str:
    return ", ".join(f"{v} ∈ [{_text(values[v][lo])}, {_text(values[v][hi])}]" for v, (lo, hi) in region.items())


def _volume(box: dict, values: dict) -> Fraction:
    volume = Fraction(1)
    for v, (lo, hi) in box.items():
        volume *= values[v][hi] - values[v][lo]
    return volume


def tiling_failure(domain: dict, leaves: list) -> TilingFailure | None:
    """None if ``leaves`` (dicts {variable: (lo, hi)} of Fractions) tile ``domain`` exactly; else the first
    fault found: a leaf with other variables, empty or outside the domain, two leaves that overlap, or a
    region of the domain that no leaf covers (reported next to the leaf nearest to it)."""
    if not leaves:
        return TilingFailure(-1, "the certificate has no leaves")
    names = set(domain)
    free = [v for v, (lo, hi) in domain.items() if lo < hi]
    for index, box in enumerate(leaves):
        if set(box) != names:
            return TilingFailure(index, f"its variables {sorted(box)} are not the domain's {sorted(names)}")
        for v, (lo, hi) in box.items():
            d_lo, d_hi = domain[v]
            if not lo <= hi:
                return TilingFailure(index, f"it is empty: {v} ∈ [{_text(lo)}, {_text(hi)}]")
            if lo < d_lo or hi > d_hi:
                return TilingFailure(index, f"it leaves the domain: {v} ∈ [{_text(lo)}, {_text(hi)}] is not "
                                            f"within [{_text(d_lo)}, {_text(d_hi)}]")
            if v in free and lo == hi:
                return TilingFailure(index, f"it has zero width in {v} (= {_text(lo)}), a variable of the domain")
    if not free:  # the domain is a point: any leaf is the whole of it
        return None
    # ranks of the ends, per variable (order-preserving, exact)
    values = {v: sorted({domain[v][0], domain[v][1]} | {box[v][k] for box in leaves for k in (0, 1)}) for v in free}
    rank = {v: {x: i for i, x in enumerate(values[v])} for v in free}
    boxes = [{v: (rank[v][box[v][0]], rank[v][box[v][1]]) for v in free} for box in leaves]
    root = {v: (rank[v][domain[v][0]], rank[v][domain[v][1]]) for v in free}
    stack = [(root, list(range(len(boxes))))]
    while stack:
        region, members = stack.pop()
        cut = _cut(region, members, boxes)
        if cut is not None:
            v, c, left, right = cut
            stack.append(({**region, v: (region[v][0], c)}, left))
            stack.append(({**region, v: (c, region[v][1])}, right))
            continue
        if len(members) == 1:
            index = members[0]
            if boxes[index] != region:
                return TilingFailure(index, "a gap: this leaf covers only part of the region "
                                            f"{_region_text(region, values)}; no leaf covers the rest")
            continue
        failure = _overlap(members, boxes)
        if failure is not None:
            return failure
        if sum(_volume(boxes[i], values) for i in members) != _volume(region, values):
            return TilingFailure(members[0], "a gap: the leaves in the region "
                                             f"{_region_text(region, values)} do not cover it")
    return None


def _cut(region: dict, members: list, boxes: list):
    """A guillotine cut of ``members`` (the one nearest to halving them): (v, c, left, right) or None."""
    if len(members) < 2:
        return None
    best = None
    for v in region:
        order = sorted(members, key=lambda i: boxes[i][v][0])
        reach = boxes[order[0]][v][1]
        for k in range(1, len(order)):
            lo = boxes[order[k]][v][0]
            if reach <= lo:
                balance = abs(2 * k - len(order))
                if best is None or balance < best[0]:
                    best = (balance, v, lo, order[:k], order[k:])
            reach = max(reach, boxes[order[k]][v][1])
    if best is None:
        return None
    return best[1:]


def _overlap(members: list, boxes: list) -> TilingFailure | None:
    for position, i in enumerate(members):
        for j in members[position + 1:]:
            if all(max(boxes[i][v][0], boxes[j][v][0]) < min(boxes[i][v][1], boxes[j][v][1]) for v in boxes[i]):
                first, second = sorted((i, j))
                return TilingFailure(second, f"it overlaps leaf {first} (their interiors meet)")
    return None
