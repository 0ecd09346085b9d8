"""Per-piece Gauss–Legendre orders of the D-digit flow field (stumpcheck.numerics.flow.piece_orders)."""

from __future__ import annotations

import math

import mpmath
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from stumpcheck.numerics.flow.field_mp import FIELD_GUARD_BITS, PopulationFlowFieldMP
from stumpcheck.numerics.flow.ode import MPArithmetic
from stumpcheck.numerics.flow.piece_orders import (MIN_ORDER, PieceOrderRule, finer_order, labelled_breakpoints, piece_values,
                                        rule_agreement, select_orders, switch_point)
from stumpcheck.numerics.flow.run import run_population_flow
from stumpcheck.numerics.population.quadrature import breakpoints, one_head_log_odds, transition_point
from stumpcheck.numerics.precision import InputError

DPS = 20
#: The 30-digit final b at t = 1e12 recorded with one order on every piece (benchmarks/bench_flow30.py).
RECORDED_FINAL_B_1E12 = "1187.83397129676224326345186483"


def _field_bits() -> int:
    return MPArithmetic(DPS).prec + FIELD_GUARD_BITS


def _relative(x, y) -> float:
    return float(abs(x - y) / abs(y))


@pytest.mark.parametrize("a, b", [(10.0, 10.0), (109.21, 100.0)])
def test_rule_field_agrees_with_a_finer_uniform_rule(a, b):
    """At 20 digits, the per-piece rule (chosen at a step's start, then frozen) gives ∇L, ∇²L within
    10^-(D+2) of the uniform order 40, at the state it was chosen at and at a nearby state (a stage of
    the step), with fewer nodes than the uniform order 20 on every piece; the rule's own two-order
    agreement there is at least D + 2 digits."""
    with MPArithmetic(DPS).working():
        z = [mpmath.mpf(a), mpmath.mpf(b)]
        near = [z[0] * (1 + mpmath.mpf(1) / 1000), z[1] * (1 - mpmath.mpf(1) / 2000)]
        rule_field = PopulationFlowFieldMP(order=20, piece_digits=DPS + 3)
        reference = PopulationFlowFieldMP(order=40)
        value, jac, _ = rule_field.linearization(mpmath.mpf(0), z)
        ref_value, ref_jac, _ = reference.linearization(mpmath.mpf(0), z)
        for x, y in zip(list(value) + list(jac.ravel()), list(ref_value) + list(ref_jac.ravel())):
            assert _relative(x, y) <= 10.0 ** -(DPS + 2)
        for x, y in zip(rule_field(mpmath.mpf(0), near), reference(mpmath.mpf(0), near)):
            assert _relative(x, y) <= 10.0 ** -(DPS + 2)
        rule = rule_field.rule
        assert rule.stats["selections"] == 1 and rule.stats["unresolved_pieces"] == 0
        assert all(MIN_ORDER <= n for n in rule.orders) and sum(rule.orders) < 20 * len(rule.orders)
        assert rule_agreement(near[0], near[1], rule, _field_bits()) >= DPS + 2


def test_each_chosen_order_passes_its_own_check():
    """Every accepted order n of select_orders agrees with order 1.5·n on its piece to the tolerances,
    recomputed independently; an unreachable tolerance leaves the piece unresolved at the largest order."""
    bits = _field_bits()
    with mpmath.workprec(bits):
        a, b = mpmath.mpf(10), mpmath.mpf(10)
        points = breakpoints(a, b)
        pieces = list(zip(points[:-1], points[1:]))[:6]
        guesses = [6] * len(pieces)
        known = piece_values(a, b, pieces, guesses, bits, "one-head")
        totals = [sum(v[0][c] for v in known) for c in range(5)]
        tau = [abs(t) * mpmath.mpf(10) ** -(DPS + 3) / len(pieces) for t in totals]
        chosen = select_orders(a, b, pieces, guesses, known, tau, bits, "one-head")
        for piece, (n, accepted, _, spent) in zip(pieces, chosen):
            assert accepted and spent >= 6 + n
            coarse, fine = piece_values(a, b, [piece, piece], [n, finer_order(n)], bits, "one-head")
            assert all(abs(x - y) <= t for x, y, t in zip(coarse[0], fine[0], tau))
        impossible = [t * mpmath.mpf(10) ** -(2 * bits) for t in tau]
        stuck = select_orders(a, b, pieces[:1], [6], known[:1], impossible, bits, "one-head", largest=12)
        assert stuck[0][1] is False and stuck[0][0] <= 12


@settings(max_examples=60, deadline=None)
@given(st.lists(st.floats(0.01, 0.99), min_size=1, max_size=8, unique=True),
       st.lists(st.integers(MIN_ORDER, 40), min_size=9, max_size=9),
       st.lists(st.floats(0.01, 0.99), min_size=1, max_size=8, unique=True))
def test_frozen_rule_on_moved_pieces_is_conservative(frozen_inner, orders, new_inner):
    """A piece of another grid gets at least the largest frozen order it overlaps, and at least the
    frozen rule's node count over it (a piece covering two frozen ones gets their sum); the same grid
    gets the frozen orders back."""
    frozen = [0.0] + sorted(frozen_inner) + [1.0]
    rule = PieceOrderRule(uniform=20, digits=DPS + 3, points=frozen, orders=orders[:len(frozen) - 1])
    assert rule.orders_for(frozen) == rule.orders
    new = [0.0] + sorted(new_inner) + [1.0]
    for (left, right), n in zip(zip(new[:-1], new[1:]), rule.orders_for(new)):
        overlapped = [m for (p, q), m in zip(zip(frozen[:-1], frozen[1:]), rule.orders) if p < right and q > left]
        nodes = sum(m * (min(right, q) - max(left, p)) / (q - p)
                    for (p, q), m in zip(zip(frozen[:-1], frozen[1:]), rule.orders) if p < right and q > left)
        assert n >= max(overlapped) and n >= math.floor(nodes)


@pytest.mark.parametrize("estimator", ["one-head", "reflected", "averaged", "pooled"])
@pytest.mark.parametrize("a, b", [(10.0, 10.0), (109.21, 100.0), (1201.99, 1187.83), (-3.0, 40.0)])
def test_labelled_breakpoints_are_the_breakpoints_and_their_labels_follow_the_state(estimator, a, b):
    """The labelled points are breakpoints(a, b) (the same points, up to the ladder of the switch, whose
    scale comes from the closed-form root rather than Newton's to 2⁻⁴⁰), every one labelled once; on the
    flow's side of the calibration (a ≥ b), at a state moved by a step of the flow (b by 4 %, a − b by
    0.08), at least half of the pieces lie between the same two labels."""
    with mpmath.workprec(_field_bits()):
        points, labels = labelled_breakpoints(a, b, estimator=estimator)
        reference = breakpoints(a, b, estimator=estimator)
        assert len(points) == len(reference)
        assert all(abs(p - q) <= 1e-9 * min(q, 1 - q) or p == q for p, q in zip(points, reference))
        assert len(set(labels)) == len(labels) and not any(label[0] == "unlabelled" for label in labels)
        moved_b = mpmath.mpf(b) * mpmath.mpf("1.04")
        _, moved = labelled_breakpoints(moved_b + (a - b) + mpmath.mpf("0.08"), moved_b, estimator=estimator)
        pairs = set(zip(labels[:-1], labels[1:]))
        kept = sum(1 for pair in zip(moved[:-1], moved[1:]) if pair in pairs)
        assert a < b or kept >= 0.5 * (len(moved) - 1)


@settings(max_examples=60, deadline=None)
@given(st.floats(0.05, 5e3), st.floats(-30.0, 60.0))
def test_switch_point_closed_form_is_the_root_of_the_log_odds(b, gap):
    """switch_point's θ* zeroes the log-odds z (to 80 bits, relative to the terms of z) and matches the
    Newton root of transition_point, θ* and 1 − θ* to 1e-9 relative and the width too."""
    a = b + gap
    theta, rest, width = switch_point(a, b)
    newton = transition_point(a, b)
    with mpmath.workprec(200):
        z = one_head_log_odds(mpmath.mpf(a), mpmath.mpf(b), theta, rest)
    assert abs(z) <= 1e-20 * (abs(a) + b + 1)
    assert abs(theta + rest - 1) <= 1e-20
    for x, y in zip((theta, rest, width), newton):
        assert _relative(x, y) <= 1e-9


def test_per_piece_orders_need_the_arb_integrand():
    with pytest.raises(InputError):
        PopulationFlowFieldMP(order=20, rhs="mpmath", piece_digits=DPS + 3)


def test_short_flow_with_per_piece_orders_matches_the_uniform_order():
    """(10, 10) → t = 0.01 at 20 digits with the extrapolation solver: per-piece orders (the default) and
    the uniform probe order give the same final a, b to 10^-(D-2) relative (the field differs by at most
    ~10^-(D+2)); the stats report the rule, its agreement at the end and its node fraction."""
    common = dict(rtol=1e-10, dps=DPS, solver="extrapolation", check=False, per_decade=1)
    rule_run = run_population_flow(10.0, 10.0, 0.01, **common)
    uniform_run = run_population_flow(10.0, 10.0, 0.01, piece_orders=False, **common)
    assert rule_run.status.ok and uniform_run.status.ok
    for key in ("final_a", "final_b"):
        assert _relative(mpmath.mpf(rule_run.stats[key]), mpmath.mpf(uniform_run.stats[key])) <= 10.0 ** -(DPS - 2)
    stats = rule_run.stats
    assert stats["quadrature_rule"].startswith("per piece") and uniform_run.stats["quadrature_rule"] == "uniform"
    assert stats["quadrature_check_digits_end"] >= DPS + 2
    assert stats["quadrature_check_digits_end_uniform"] >= DPS + 2
    assert 0 < stats["nodes_fraction_of_uniform"] < 1
    assert stats["piece_order_selections"] >= 1 and stats["piece_orders_unresolved"] == 0


@pytest.mark.slow
def test_30_digit_flow_to_1e12_with_per_piece_orders_matches_the_recorded_value():
    """(10, 10) → t = 1e12 at 30 digits, rtol 1e-9, extrapolation, per-piece orders: the final b is the
    30-digit value recorded with one order on every piece (Rodas4) to 1e-10 relative (both carry the
    ~1e-11 discretisation error of rtol 1e-9), and the rule's two-order agreement at the end is at least
    30 digits, no piece unresolved (about 4 minutes on two idle cores)."""
    run = run_population_flow(10.0, 10.0, 1e12, rtol=1e-9, dps=30, solver="extrapolation", per_decade=1,
                              check=False, workers=2)
    assert run.status.ok
    assert _relative(mpmath.mpf(run.stats["final_b"]), mpmath.mpf(RECORDED_FINAL_B_1E12)) <= 1e-10
    assert run.stats["quadrature_check_digits_end"] >= 30
    assert run.stats["piece_orders_unresolved"] == 0
