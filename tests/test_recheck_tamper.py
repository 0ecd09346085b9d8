"""Tampering with a lemma certificate is caught by :func:`stumpcheck.numerics.certified.certificates.lemma_recheck.recheck`.

These tests exercise the certificate and re-check logic on a tiny test-only margin (m(x, y) = x² + y − c,
enclosed with Arb) proved by a tiny bisection, so that each kind of tampering is tried on many leaves in
well under a second. The end-to-end tests with the real engine are in tests/test_recheck.py.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass, field
from fractions import Fraction

import pytest
from flint import arb, ctx, fmpq

from stumpcheck.numerics.certified.certificates import lemma_recheck as recheck_module
from stumpcheck.numerics.certified.proofs.boxes import _ball_bounds
from stumpcheck.numerics.certified.certificates.lemma_certificate import certificate, digest, exact_text
from stumpcheck.numerics.certified.certificates.lemma_recheck import recheck
from stumpcheck.numerics.precision import InputError


def _ball(lo: Fraction, hi: Fraction) -> arb:
    return arb(fmpq(lo.numerator, lo.denominator)).union(arb(fmpq(hi.numerator, hi.denominator)))


class SquarePlus:
    """m(x, y) = x² + y − c, enclosed by Arb on a box (direct form); ``c`` is the source recorded."""

    def __init__(self, c: str):
        self.c = c

    def enclose(self, box, prec_bits):
        with ctx.workprec(prec_bits):
            x, y = _ball(*box["x"]), _ball(*box["y"])
            c = Fraction(self.c)
            return x * x + y - arb(fmpq(c.numerator, c.denominator)), "direct"

    def to_json(self):
        return {"source": {"test_c": self.c}, "coordinates": "abtheta"}

    @classmethod
    def from_json(cls, data):
        return cls(data["source"]["test_c"])


class Box2:
    def __init__(self, variables):
        self.variables = variables
        self.coordinates = "abtheta"

    def to_json(self):
        return {"variables": {v: [exact_text(lo), exact_text(hi)] for v, (lo, hi) in self.variables.items()},
                "coordinates": self.coordinates}

    @classmethod
    def from_json(cls, data):
        return cls({v: (Fraction(lo), Fraction(hi)) for v, (lo, hi) in data["variables"].items()})


@dataclass
class Leaf:
    box: dict
    lower: str
    upper: str
    depth: int
    form: str = "direct"


@dataclass
class Proof:
    status: str
    leaves: list
    failure: object = None
    undecided: list = field(default_factory=list)
    undecided_fraction: float = 0.0
    boxes: int = 0
    max_depth_reached: int = 0
    seconds: float = 0.0
    prec_bits: int = 64
    dps: int = 15
    notes: list = field(default_factory=list)


def _prove(margin, domain, depth_limit=12, bits=64) -> Proof:
    leaves, pending, boxes = [], [(domain.variables, 0)], 0
    while pending:
        box, depth = pending.pop()
        boxes += 1
        ball, form = margin.enclose(box, bits)
        if ball >= 0:
            lower, upper = _ball_bounds(ball, 15)
            leaves.append(Leaf(box, lower, upper, depth, form))
            continue
        assert depth < depth_limit, "the test margin should be provable"
        name = max(box, key=lambda v: box[v][1] - box[v][0])
        lo, hi = box[name]
        mid = (lo + hi) / 2
        pending += [({**box, name: (lo, mid)}, depth + 1), ({**box, name: (mid, hi)}, depth + 1)]
    return Proof("proved", leaves, boxes=boxes, max_depth_reached=max(leaf.depth for leaf in leaves), prec_bits=bits)


@pytest.fixture
def proved(monkeypatch):
    """A proved certificate of x² + y − 6/25 ≥ 0 on x ∈ [−1, 1], y ∈ [1/4, 1] (smallest, 1/100, at x = 0, y = 1/4)."""
    monkeypatch.setattr(recheck_module, "_rebuild_margin", lambda document, allow_python: SquarePlus.from_json(
        document["margin"]))
    monkeypatch.setattr(recheck_module, "_domain_variables", lambda data: Box2.from_json(data).variables)
    margin = SquarePlus("0.24")
    domain = Box2({"x": (Fraction(-1), Fraction(1)), "y": (Fraction(1, 4), Fraction(1))})
    return certificate("x² + y ≥ 6/25 on the box", margin, domain, _prove(margin, domain), strict=False)


def _resealed(document: dict) -> dict:
    """A forger's copy: the digest recomputed after the edit, so only the mathematics can catch it."""
    document["digest"] = digest(document)
    return document


def _interior_leaf(document: dict) -> int:
    """A leaf with no side on the domain's boundary (so a moved edge meets a neighbour)."""
    for index, leaf in enumerate(document["leaves"]):
        (x0, x1), (y0, y1) = (map(Fraction, leaf["box"][v]) for v in ("x", "y"))
        if -1 < x0 and x1 < 1 and Fraction(1, 4) < y0 and y1 < 1:
            return index
    raise AssertionError("no interior leaf")


def test_the_certificate_passes_recheck_at_another_precision(proved):
    assert len(proved["leaves"]) > 10
    result = recheck(proved, prec_bits=100)
    assert result.passed, result.message
    assert result.leaves_checked == len(proved["leaves"])
    with pytest.raises(InputError, match="other than the certificate's"):
        recheck(proved, prec_bits=proved["prec_bits"])


def test_any_edit_without_resealing_is_caught_by_the_digest(proved):
    edited = copy.deepcopy(proved)
    edited["statement"] = "x² + y ≥ 1/4 on the box"
    result = recheck(edited, prec_bits=100)
    assert not result.passed and "digest" in result.message


@pytest.mark.parametrize("side", [0, 1])
def test_a_moved_leaf_edge_is_rejected(proved, side):
    forged = copy.deepcopy(proved)
    index = _interior_leaf(forged)
    lo, hi = map(Fraction, forged["leaves"][index]["box"]["x"])
    ends = [lo, hi]
    ends[side] += (hi - lo) / 4 * (1 if side == 0 else -1)
    forged["leaves"][index]["box"]["x"] = [exact_text(e) for e in ends]
    result = recheck(_resealed(forged), prec_bits=100)
    assert not result.passed and "do not tile" in result.message and "gap" in result.message


def test_an_edge_moved_over_a_neighbour_is_an_overlap(proved):
    forged = copy.deepcopy(proved)
    index = _interior_leaf(forged)
    lo, hi = map(Fraction, forged["leaves"][index]["box"]["x"])
    forged["leaves"][index]["box"]["x"] = [exact_text(lo), exact_text(hi + (hi - lo) / 4)]
    result = recheck(_resealed(forged), prec_bits=100)
    assert not result.passed and "overlaps" in result.message


def test_a_gap_between_leaves_is_rejected(proved):
    forged = copy.deepcopy(proved)
    del forged["leaves"][len(forged["leaves"]) // 2]
    result = recheck(_resealed(forged), prec_bits=100)
    assert not result.passed and "gap" in result.message


def test_a_narrowed_ball_is_rejected(proved):
    forged = copy.deepcopy(proved)
    # the leaf with the corner (x, y) = (0, 1/4), where the margin is 1/100: raise its recorded lower end above it
    index = next(i for i, leaf in enumerate(forged["leaves"])
                 if Fraction(leaf["box"]["x"][0]) == 0 and Fraction(leaf["box"]["y"][0]) == Fraction(1, 4))
    leaf = forged["leaves"][index]
    leaf["lower"] = exact_text((Fraction(1, 100) + Fraction(leaf["upper"])) / 2)
    result = recheck(_resealed(forged), prec_bits=100)
    assert not result.passed and result.leaf_index == index
    assert "is not one" in result.message or "is not confirmed" in result.message


def test_a_changed_margin_source_is_rejected(proved):
    forged = copy.deepcopy(proved)
    forged["margin"]["source"]["test_c"] = "0.2"  # a weaker statement, still true, but not what was proved
    result = recheck(_resealed(forged), prec_bits=100)
    assert not result.passed and ("is not one" in result.message or "is not confirmed" in result.message)
    forged["margin"]["source"]["test_c"] = "0.3"  # a false statement
    result = recheck(_resealed(forged), prec_bits=100)
    assert not result.passed and "leaf" in result.message


def test_a_leaf_recorded_below_zero_and_a_strict_claim_on_a_zero_lower_end_fail(proved):
    forged = copy.deepcopy(proved)
    forged["leaves"][0]["lower"] = "-1e-30"
    result = recheck(_resealed(forged), prec_bits=100)
    assert not result.passed and result.leaf_index == 0 and "recorded lower end" in result.message
    strict = copy.deepcopy(proved)
    strict["strict"] = True
    strict["statement"] = strict["statement"].replace(">= 0", "> 0")  # the statement is derived: > 0 now
    assert recheck(_resealed(copy.deepcopy(strict)), prec_bits=100).passed  # the margin is >= 1/100 > 0
    strict["leaves"][2]["lower"] = "0"
    result = recheck(_resealed(strict), prec_bits=100)
    assert not result.passed and result.leaf_index == 2 and "> 0" in result.message


def test_status_format_and_malformed_leaves(proved):
    undecided = _resealed({**copy.deepcopy(proved), "status": "undecided"})
    assert "not a proof" in recheck(undecided, prec_bits=100).message
    with pytest.raises(InputError, match="format"):
        recheck({**proved, "format": "something-else/1"}, prec_bits=100)
    broken = copy.deepcopy(proved)
    broken["leaves"][3]["box"]["x"] = ["zero", "1"]
    with pytest.raises(InputError, match="leaf 3"):
        recheck(_resealed(broken), prec_bits=100)
    with pytest.raises(InputError, match="missing"):
        recheck(_resealed({k: v for k, v in proved.items() if k != "leaves"}), prec_bits=100)


@pytest.mark.parametrize("text, ok", [
    ("Add(Mul(Integer(-1), Symbol('b')), Pow(Symbol('a'), Integer(2)))", True),
    ("Function('e_one_head')(Symbol('a'), Symbol('b'))", True),
    ("__import__('os').system('true')", False),
    ("Symbol('a').__class__", False),
    ("sympify('1+1')", False),
    ("S('x')", False),
    ("Add(*[Integer(1)])", False),
    ("Poly('x**2 + 1')", False),
    ("Add(Symbol('x'), 'y')", False),
    ("Float('0.1', precision=53)", True),
    ("Symbol('b', positive=True)", True),
    ("Symbol('b', positive='yes')", False),
    ("calibration_a(Symbol('b'))", False),
])
def test_a_margin_srepr_must_be_sympy_constructors_only(text, ok):
    if ok:
        recheck_module._check_srepr(text)
    else:
        with pytest.raises(InputError):
            recheck_module._check_srepr(text)
