"""stumpcheck.numerics.certified.proofs.margin_proof: margins proved over whole domains by bisection; the leaves tile the domain."""

from fractions import Fraction

import mpmath
import pytest

from stumpcheck.numerics.certified.proofs.domains import Domain, geometric_cuts
from stumpcheck.numerics.certified.proofs.margins import Margin
from stumpcheck.numerics.certified.proofs.margin_proof import prove
from stumpcheck.numerics.population.quantities import error
from stumpcheck.numerics.precision import InputError

DOMAIN = Domain({"b": ("20", "24"), "lam": ("-1", "1"), "theta": ("0.05", "0.95")}, "calibration")


def _tiles(proof, domain):
    """Exact check: leaves inside the domain, volumes adding up, interiors pairwise disjoint."""
    assert all(domain.contains(leaf.box) for leaf in proof.leaves)
    total = Fraction(0)
    for leaf in proof.leaves:
        volume = Fraction(1)
        for lo, hi in leaf.box.values():
            volume *= (hi - lo) if hi > lo else 1
        total += volume
    assert total == domain.volume()
    boxes = [leaf.box for leaf in proof.leaves]
    for i, p in enumerate(boxes):
        for q in boxes[i + 1:]:
            assert any(p[n][1] <= q[n][0] or q[n][1] <= p[n][0] for n in p if p[n][1] > p[n][0])


def test_the_interior_bound_is_proved_and_the_leaves_tile_the_domain():
    proof = prove(Margin.from_sympy("2 - b*Abs(e)", coordinates="calibration"), DOMAIN)
    assert proof.status == "proved" and proof.failure is None and proof.undecided == []
    assert all(Fraction(leaf.lower) >= 0 for leaf in proof.leaves)
    assert proof.undecided_fraction == 0 and proof.boxes == 2 * len(proof.leaves) - 1
    _tiles(proof, DOMAIN)


def test_a_false_bound_returns_a_box_where_the_margin_is_certainly_negative():
    """|e| ≤ 1/(2b) is false in the bulk (b·e ≈ 1): the failure box is confirmed with mpmath at 40 digits."""
    proof = prove(Margin.from_sympy("1/2 - b*Abs(e)", coordinates="calibration"), DOMAIN)
    assert proof.status == "failed"
    failure = proof.failure
    assert Fraction(failure.upper) < 0
    _tiles(proof, DOMAIN)
    with mpmath.workdps(40):
        for corner in (0, 1):
            b, lam, theta = (mpmath.mpf(failure.box[n][corner].numerator) / failure.box[n][corner].denominator
                             for n in ("b", "lam", "theta"))
            a = b + 2 * mpmath.log(b) + (3 * mpmath.zeta(3) - mpmath.mpf(3) / 2 - mpmath.pi**2 / 3) / b + lam
            assert mpmath.mpf(1) / 2 - b * abs(error(a, b, theta)) < 0


def test_a_budget_leaves_undecided_boxes_and_never_proved():
    proof = prove(Margin.from_sympy("2 - b*Abs(e)", coordinates="calibration"), DOMAIN, max_boxes=3)
    assert proof.status == "undecided" and proof.undecided and 0 < proof.undecided_fraction <= 1
    _tiles(proof, DOMAIN)


def test_strict_needs_a_positive_lower_end():
    """The margin ≡ 0 is ≥ 0 everywhere and > 0 nowhere."""
    zero = Margin.from_sympy("b - b", coordinates="calibration")
    assert prove(zero, DOMAIN).status == "proved"
    assert prove(zero, DOMAIN, strict=True).status == "failed"


def test_a_long_b_range_starts_from_geometric_pieces():
    domain = Domain({"b": ("20", "200"), "lam": ("-1", "1"), "theta": ("0.25", "0.75")}, "calibration")
    proof = prove(Margin.from_sympy("3 - b*Abs(e)", coordinates="calibration"), domain, b_ratio=2.0)
    assert proof.status == "proved"
    cuts = geometric_cuts(Fraction(20), Fraction(200), 2.0)
    assert cuts == [40, 80, 160]
    assert not any(leaf.box["b"][0] < c < leaf.box["b"][1] for leaf in proof.leaves for c in cuts)
    _tiles(proof, domain)


def test_pieces_that_do_not_tile_are_refused():
    margin = Margin.from_sympy("1", coordinates="calibration")
    left, _ = DOMAIN.split("b", ["22"])
    with pytest.raises(InputError):
        prove(margin, DOMAIN, pieces=[left])


def test_two_processes_prove_the_same_leaves_as_one():
    """workers=2 bisects the same boxes the same way: the same leaves (as exact boxes), tiling the domain."""
    domain = Domain({"b": ("20", "200"), "lam": ("-1", "1"), "theta": ("0.25", "0.75")}, "calibration")
    margin = Margin.from_sympy("3 - b*Abs(e)", coordinates="calibration")
    one = prove(margin, domain, b_ratio=1.5)
    two = prove(margin, domain, b_ratio=1.5, workers=2)
    assert one.status == two.status == "proved"
    assert sorted(sorted(leaf.box.items()) for leaf in one.leaves) == sorted(
        sorted(leaf.box.items()) for leaf in two.leaves)
    assert two.boxes == one.boxes and two.prec_bits == one.prec_bits
    _tiles(two, domain)


def test_a_failure_in_one_process_fails_the_whole_proof():
    domain = Domain({"b": ("20", "80"), "lam": ("-1", "1"), "theta": ("0.25", "0.75")}, "calibration")
    proof = prove(Margin.from_sympy("1/2 - b*Abs(e)", coordinates="calibration"), domain, b_ratio=1.5, workers=2)
    assert proof.status == "failed" and Fraction(proof.failure.upper) < 0
