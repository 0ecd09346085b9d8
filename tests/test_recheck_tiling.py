"""The exact tiling check of certificates (:mod:`stumpcheck.numerics.certified.proofs.tiling`) and the exact number format
(:func:`stumpcheck.numerics.certified.certificates.lemma_certificate.exact_text`): random bisections tile, and every kind of
tampering (a moved edge, a removed or duplicated leaf, a leaf outside) is caught."""

from __future__ import annotations

from fractions import Fraction

from hypothesis import given, settings
from hypothesis import strategies as st

from stumpcheck.numerics.certified.certificates.lemma_certificate import exact_text, parse_exact
from stumpcheck.numerics.certified.proofs.tiling import tiling_failure

NAMES = ("b", "lam", "theta")


@st.composite
def bisections(draw, max_leaves=40):
    """A random domain and the leaves of a random bisection of it (midpoint cuts, as the prover makes)."""
    dims = draw(st.integers(1, 3))
    domain = {}
    for name in NAMES[:dims]:
        lo = Fraction(draw(st.integers(-50, 50)), draw(st.sampled_from([1, 2, 10, 3])))
        width = Fraction(draw(st.integers(1, 40)), draw(st.sampled_from([1, 4, 100, 7])))
        domain[name] = (lo, lo + width)
    leaves, pending = [], [domain]
    while pending:
        box = pending.pop()
        if len(leaves) + len(pending) + 2 > max_leaves or not draw(st.booleans()):
            leaves.append(box)
            continue
        name = draw(st.sampled_from(sorted(box)))
        lo, hi = box[name]
        cut = lo + (hi - lo) * draw(st.sampled_from([Fraction(1, 2), Fraction(1, 3), Fraction(3, 4)]))
        pending += [{**box, name: (lo, cut)}, {**box, name: (cut, hi)}]
    order = draw(st.permutations(range(len(leaves))))
    return domain, [leaves[i] for i in order]


@settings(max_examples=150, deadline=None)
@given(bisections())
def test_the_leaves_of_a_bisection_tile_its_domain(case):
    domain, leaves = case
    assert tiling_failure(domain, leaves) is None


@settings(max_examples=150, deadline=None)
@given(bisections(), st.data())
def test_a_moved_leaf_edge_is_a_gap_or_an_overlap(case, data):
    domain, leaves = case
    index = data.draw(st.integers(0, len(leaves) - 1))
    name = data.draw(st.sampled_from(sorted(domain)))
    side = data.draw(st.integers(0, 1))
    lo, hi = leaves[index][name]
    step = (hi - lo) / data.draw(st.sampled_from([2, 5, 1000]))
    ends = [lo, hi]
    ends[side] += step if side == 0 else -step  # inward: a gap (the neighbour no longer meets it)
    outward = data.draw(st.booleans())
    if outward:
        ends = [lo, hi]
        ends[side] += -step if side == 0 else step  # outward: over a neighbour, or out of the domain
    moved = [dict(box) for box in leaves]
    moved[index][name] = tuple(ends)
    failure = tiling_failure(domain, moved)
    assert failure is not None
    words = ("gap", "overlaps", "leaves the domain")
    assert any(word in failure.reason for word in words), failure.reason


@settings(max_examples=100, deadline=None)
@given(bisections(), st.data())
def test_a_removed_or_duplicated_leaf_is_caught(case, data):
    domain, leaves = case
    index = data.draw(st.integers(0, len(leaves) - 1))
    duplicated = leaves + [leaves[index]]
    assert "overlaps" in tiling_failure(domain, duplicated).reason
    if len(leaves) > 1:
        removed = leaves[:index] + leaves[index + 1:]
        assert "gap" in tiling_failure(domain, removed).reason


def test_a_tiling_that_admits_no_guillotine_cut_is_accepted_and_checked_by_volume():
    square = {"x": (Fraction(0), Fraction(3)), "y": (Fraction(0), Fraction(3))}

    def box(x0, x1, y0, y1):
        return {"x": (Fraction(x0), Fraction(x1)), "y": (Fraction(y0), Fraction(y1))}

    pinwheel = [box(0, 2, 0, 1), box(2, 3, 0, 2), box(1, 3, 2, 3), box(0, 1, 1, 3), box(1, 2, 1, 2)]
    assert tiling_failure(square, pinwheel) is None
    assert "gap" in tiling_failure(square, pinwheel[:4]).reason
    overlapping = pinwheel[:4] + [box(Fraction(1, 2), 2, 1, 2)]
    assert "overlaps" in tiling_failure(square, overlapping).reason


def test_leaves_with_other_variables_empty_or_flat_leaves_and_no_leaves_are_faults():
    domain = {"b": (Fraction(1), Fraction(2)), "theta": (Fraction(1, 2), Fraction(1, 2))}
    assert tiling_failure(domain, [{"b": (Fraction(1), Fraction(2)), "theta": (Fraction(1, 2),) * 2}]) is None
    assert "variables" in tiling_failure(domain, [{"b": (Fraction(1), Fraction(2))}]).reason
    assert "empty" in tiling_failure(domain, [{"b": (Fraction(2), Fraction(1)),
                                               "theta": (Fraction(1, 2),) * 2}]).reason
    assert "zero width" in tiling_failure(domain, [{"b": (Fraction(1), Fraction(1)),
                                                    "theta": (Fraction(1, 2),) * 2}]).reason
    assert tiling_failure(domain, []).index == -1


@given(st.fractions(max_denominator=10 ** 6) | st.decimals(allow_nan=False, allow_infinity=False, places=8).map(
    Fraction))
def test_exact_text_reads_back_exactly(value):
    text = exact_text(value)
    assert parse_exact(text, "x") == value
    if value.denominator in (1, 2, 4, 5, 8, 10, 20, 25, 100):
        assert "/" not in text


def test_exact_text_examples():
    assert exact_text(Fraction(1, 20)) == "0.05"
    assert exact_text(Fraction(-3, 8)) == "-0.375"
    assert exact_text(Fraction(20)) == "20"
    assert exact_text(Fraction(1, 3)) == "1/3"
    assert parse_exact("1e-3", "x") == Fraction(1, 1000)
