"""The algebra of Lemma E (docs/tail.md §4) checked by SymPy: every identity its proof uses, and every scalar
inequality between its constants on b ≥ 1000 (its pointwise inequalities: :mod:`.tail_lemma_e_bounds`).

Lemma E bounds E_a, E_b (the rest of L beyond the right-layer loss F) by 29b²e^{−b/2} for b ≥ 1000, |w| ≤ 1.
Its proof has three kinds of steps:

1. **identities** — the exact form b·e = 1 − N/D₂, the split Q = b(e − e₀) = −rUN/(D₁D₂), the chain rule
   ∂_a = −r∂_r, ∂_b = θ∂_u + (1 − θ)∂_v + r∂_r on functions of (u, v, r), the logarithmic derivatives of Q and
   P = N/D₁, the form of N and of e₀² − ε² for θ < 0, and the integral ½∫_b^∞ 12ε²·4ve^{−v}(v/b) dv/b;
2. **inequalities between constants** on b ≥ 1000 (7 + 2b + 12b² ≤ 13b², 12 + 27b² ≤ 28b², …) — each is a
   polynomial (or exponential-polynomial) inequality that SymPy decides after b = 1000 + s, s ≥ 0;
3. **pointwise inequalities** (each of r∂_r log Q's terms in [0, 1], N/D₂ ≤ 2b for θ ≥ 1/2, …): decided in
   :mod:`stumpcheck.theory.tail_lemma_e_bounds` from stated elementary facts (e^x ≥ 1 + x, e^{−500} ≤ ½, …).

What stays by hand: those elementary facts, the composition of the steps (triangle inequalities, products of
bounds) and differentiation under the integral sign. The tail no longer rests on this lemma: its certificate encloses
the rest by machine (:mod:`stumpcheck.theory.tail_rest`); these checks are kept as the record of the hand proof.
:func:`lemma_e_checks` returns each check's name and outcome.
"""

from __future__ import annotations

import sympy as sp

from stumpcheck.theory.model import closed_form_error
from stumpcheck.theory.symbols import a, b, r, theta, u, v

__all__ = ["lemma_e_identities", "lemma_e_constants", "lemma_e_checks"]

_s = sp.Symbol("s", nonnegative=True)   # b = 1000 + s
_f = sp.Function("f")


def _pieces():
    big_u = sp.exp(-u)
    big_a = sp.exp(v) - 1
    n = v + r * u
    d1 = big_a + r
    d2 = big_a + r * (1 - big_u)
    return big_u, big_a, n, d1, d2


def _is_zero(expr) -> bool:
    return sp.simplify(sp.expand(expr)) == 0


def lemma_e_identities() -> dict:
    """{name: True/False} for the identities of the proof (kind 1 of the module doc)."""
    big_u, big_a, n, d1, d2 = _pieces()
    on_theta = {u: b * theta, v: b * (1 - theta), r: sp.exp(b - a)}
    q = -r * big_u * n / (d1 * d2)
    p = n / d1
    checks = {}
    # b·e(θ) = 1 − N/D₂: the model's closed form, for every (a, b, θ)
    checks["exact form b·e = 1 − N/D₂"] = _is_zero(b * closed_form_error("one-head") - (1 - n / d2).subs(on_theta))
    checks["Q = b(e − e₀) = −rUN/(D₁D₂)"] = _is_zero((1 - n / d2) - (1 - p) - q)
    # the chain rule on a function of (u, v, r) with u = bθ, v = b(1 − θ), r = e^{b−a}
    g = _f(u, v, r)
    g_theta = g.subs(on_theta)
    rule_a = (-r * sp.diff(g, r)).subs(on_theta)
    rule_b = (theta * sp.diff(g, u) + (1 - theta) * sp.diff(g, v) + r * sp.diff(g, r)).subs(on_theta)
    checks["∂_a = −r∂_r"] = _is_zero(sp.diff(g_theta, a).doit() - rule_a)
    checks["∂_b = θ∂_u + (1 − θ)∂_v + r∂_r"] = _is_zero(sp.diff(g_theta, b).doit() - rule_b)
    log_q = sp.log(r) - u + sp.log(n) - sp.log(d1) - sp.log(d2)
    checks["r∂_r log Q = 1 + ru/N − r/D₁ − rB_u/D₂"] = _is_zero(
        r * sp.diff(log_q, r) - (1 + r * u / n - r / d1 - r * (1 - big_u) / d2))
    checks["∂_u log Q = −1 + r/N − rU/D₂"] = _is_zero(sp.diff(log_q, u) - (-1 + r / n - r * big_u / d2))
    checks["∂_v log Q = 1/N − e^v/D₁ − e^v/D₂"] = _is_zero(
        sp.diff(log_q, v) - (1 / n - sp.exp(v) / d1 - sp.exp(v) / d2))
    checks["r∂_r P = P(ru/N − r/D₁)"] = _is_zero(r * sp.diff(p, r) - p * (r * u / n - r / d1))
    checks["∂_b P = P(θr/N + (1 − θ)/N + ru/N − (1 − θ)e^v/D₁ − r/D₁)"] = _is_zero(
        (theta * sp.diff(p, u) + (1 - theta) * sp.diff(p, v) + r * sp.diff(p, r))
        - p * (theta * r / n + (1 - theta) / n + r * u / n - (1 - theta) * sp.exp(v) / d1 - r / d1))
    # θ < 0: u = b − v
    checks["θ < 0: N = v(1 − r) + rb"] = _is_zero(n.subs(u, b - v) - (v * (1 - r) + r * b))
    checks["e₀² − ε² = ε²(P² − 2P)"] = _is_zero(((1 - p) / b) ** 2 - 1 / b**2 - (p**2 - 2 * p) / b**2)
    integral = sp.integrate(12 / b**2 * 4 * v * sp.exp(-v) * (v / b), (v, b, sp.oo)) / (2 * b)
    checks["½∫_b^∞ 12ε²·4ve^{−v}(v/b) dv/b = 24ε⁴(b² + 2b + 2)e^{−b}"] = _is_zero(
        integral - 24 / b**4 * (b**2 + 2 * b + 2) * sp.exp(-b))
    return checks


def _holds_for_b_at_least_1000(lhs, rhs) -> bool:
    """lhs ≤ rhs for every b ≥ 1000, decided exactly: rhs − lhs at b = 1000 + s is a ratio of polynomials in
    s ≥ 0 whose coefficients are all ≥ 0 (a sufficient test)."""
    numerator, denominator = sp.fraction(sp.together(sp.expand(rhs - lhs).subs(b, 1000 + _s)))
    polys = [sp.Poly(sp.expand(x), _s) for x in (numerator, denominator)]
    return not polys[1].is_zero and all(c >= 0 for poly in polys for c in poly.all_coeffs())


def _decreasing_and_small(k, rate, bound) -> bool:
    """k(b)·e^{−rate·b} ≤ bound for every b ≥ 1000 (k a polynomial): it decreases there (rate·k − k′ ≥ 0, by
    :func:`_holds_for_b_at_least_1000`) and its value at b = 1000 is at most ``bound`` (at 60 digits; the
    margins are hundreds of orders of magnitude)."""
    decreasing = _holds_for_b_at_least_1000(sp.diff(k, b), rate * k)
    return decreasing and bool(sp.N(k.subs(b, 1000) * sp.exp(-rate * 1000) - bound, 60) <= 0)


def lemma_e_constants() -> dict:
    """{name: True/False} for the inequalities between the proof's constants on b ≥ 1000 (kind 2)."""
    half = sp.Rational(1, 2)
    return {
        "7 + 2b + 12b² ≤ 13b²": _holds_for_b_at_least_1000(7 + 2 * b + 12 * b**2, 13 * b**2),
        "26b² + 2/b ≤ 27b²": _holds_for_b_at_least_1000(26 * b**2 + 2 / b, 27 * b**2),
        "12 + 27b² ≤ 28b²": _holds_for_b_at_least_1000(12 + 27 * b**2, 28 * b**2),
        "(1 + 4b)/b ≤ 5": _holds_for_b_at_least_1000((1 + 4 * b) / b, sp.Integer(5)),
        "b(1/b + 1/b + 1 + (1 + 1/b) + 1) ≤ 4b (P ≤ b)": _holds_for_b_at_least_1000(b * (3 / b + 3), 4 * b),
        "24(b² + 2b + 2)/b² ≤ 25": _holds_for_b_at_least_1000(24 * (b**2 + 2 * b + 2) / b**2, sp.Integer(25)),
        "25 ≤ b⁴ (so 25ε²e^{−b} ≤ b²e^{−b/2})": _holds_for_b_at_least_1000(sp.Integer(25), b**4),
        "29b² ≤ b⁴": _holds_for_b_at_least_1000(29 * b**2, b**4),
        "27b²e^{−b/2} ≤ 1 (so |e_x| ≤ 6)": _decreasing_and_small(27 * b**2, half, 1),
        "4ve^{−v} ≤ 1 for v ≥ b": _decreasing_and_small(4 * b, 1, 1),
        "8re^{−b} ≤ 2e^{−b/2} (r ≤ 2ε², 16ε² ≤ 2)": _holds_for_b_at_least_1000(16 / b**2, sp.Integer(2)),
    }


def lemma_e_checks() -> dict:
    """Every check of the proof: the identities, the constants, and the pointwise inequalities
    (:func:`stumpcheck.theory.tail_lemma_e_bounds.lemma_e_pointwise`); {name: True/False}."""
    from stumpcheck.theory.tail_lemma_e_bounds import lemma_e_pointwise

    return {**lemma_e_identities(), **lemma_e_constants(), **lemma_e_pointwise()}
