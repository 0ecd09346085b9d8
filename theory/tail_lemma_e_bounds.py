"""The pointwise inequalities of Lemma E's proof (docs/tail.md §4, steps 1, 2, 3 and 5), each decided by SymPy.

Each inequality X ≤ Y is checked as Y − X ≥ 0 after every quantity is written through non-negative **atoms**
that encode the facts the step rests on:

* e^v = 1 + v + α, α ≥ 0 (e^x ≥ 1 + x), so A = e^v − 1 = v + α; where e^v ≥ 1 is all that is used, e^v = 1 + η;
* B_u = 1 − e^{−u} = ½ + γ, γ ≥ 0, where u ≥ b/2 (e^{−500} ≤ ½); else B_u itself, B_u ≥ 0;
* b = 1000 + s, s ≥ 0; on θ ∈ [0, 1], u = bθ and v = b(1 − θ) are ≥ 0 with u + v = b (one written through
  the other where the sign of b − u or b − v matters); on θ < 0, v = b + κ and u = −κ, κ ≥ 0;
* ε² ≤ r ≤ 2ε² (|w| ≤ 1, b ≥ 1000: :func:`r_range_holds`): r = 1/b² + ρ or r = 2/b² − ρ, ρ ≥ 0, whichever end
  the step uses;
* a case: u = 1 ± μ, u = ½ + μ or b/2 + μ, v = 1 + μ or b/2 + μ, μ ≥ 0.

Y − X is then a ratio of polynomials in the atoms; it is ≥ 0 wherever the atoms are ≥ 0 if both polynomials have
coefficients of one sign (a sufficient test, in exact rationals). Treating B_u and e^{−u} (or r's two ends) as
independent only enlarges the set checked, so a check that passes is sound. **By hand** (not here): the
elementary facts above (e^x ≥ 1 + x, e^{−500} ≤ ½, e^v ≤ e < 3 for v ≤ 1), that each step's bound follows from its
inequalities (the triangle inequality, products of non-negative bounds) and differentiation under the integral
sign. Together with :mod:`stumpcheck.theory.tail_lemma_e` (identities and constants) this is every inequality the
proof uses. The tail no longer rests on the lemma (:mod:`stumpcheck.theory.tail_rest` encloses the rest by machine).
"""

from __future__ import annotations

import sympy as sp

from stumpcheck.theory.symbols import b, r, u, v

__all__ = ["lemma_e_pointwise", "r_range_holds"]

_s, _alpha, _gamma, _mu, _kappa, _rho, _eta = sp.symbols("s alpha gamma mu kappa rho eta", nonnegative=True)
_Bu = sp.Symbol("B_u", nonnegative=True)
_Ev = sp.Symbol("E_v", positive=True)   # e^v
_ATOMS = (_s, _alpha, _gamma, _mu, _kappa, _rho, _eta, _Bu, u, v, r)
_HALF = sp.Rational(1, 2)

_A = _Ev - 1
_N = v + r * u
_D1 = _A + r
_D2 = _A + r * _Bu
_THETA = u / b

_EXP_V = {_Ev: 1 + v + _alpha}
_BU_HALF = {_Bu: _HALF + _gamma}
_R_LOW = {r: 1 / b**2 + _rho}
_R_HIGH = {r: 2 / b**2 - _rho}


def _nonnegative(expression) -> bool:
    """expression ≥ 0 for all non-negative atoms (module doc): a sufficient test on its numerator and denominator."""
    numerator, denominator = sp.fraction(sp.together(sp.expand(expression)))
    if not (numerator.free_symbols | denominator.free_symbols) <= set(_ATOMS):
        return False
    polys = [sp.Poly(sp.expand(x), *_ATOMS) for x in (numerator, denominator)]
    if polys[1].is_zero:
        return False
    signs = [{bool(c >= 0) for c in poly.coeffs()} | ({True} if poly.is_zero else set()) for poly in polys]
    return signs[0] == signs[1] == {True} or (signs[0] <= {False} and signs[1] == {False})


def _at_most(lhs, rhs, *substitutions: dict) -> bool:
    """lhs ≤ rhs: rhs − lhs after each substitution in turn, then b = 1000 + s, is ≥ 0 (:func:`_nonnegative`)."""
    difference = rhs - lhs
    for substitution in substitutions:
        difference = difference.subs(substitution, simultaneous=True)
    return _nonnegative(difference.subs(b, 1000 + _s))


def r_range_holds() -> bool:
    """ε² ≤ r ≤ 2ε² on |w| ≤ 1, b ≥ 1000: r = ε²e^{(ρ₁ − w)ε}, so it needs ρ₁ − 1 ≥ 0 and (ρ₁ + 1)/1000 ≤ log 2
    (ρ₁ = −3ζ(3) + 3/2 + π²/3, the derived calibration constant; compared at 50 digits, margins ≥ 0.18)."""
    rho1 = -3 * sp.zeta(3) + sp.Rational(3, 2) + sp.pi**2 / 3
    return bool(sp.N(rho1 - 1, 50) >= 0) and bool(sp.N(sp.log(2) - (rho1 + 1) / 1000, 50) >= 0)


def lemma_e_pointwise() -> dict:
    """{name: True/False} for each pointwise inequality of the proof (module doc), named by its step."""
    theta_ge_half = {u: b / 2 + _mu}
    theta_le_half_v = {v: b / 2 + _mu}
    negative = {v: b + _kappa, u: -_kappa}
    return {
        # step 1
        "1: D₁ ≥ v + r": _at_most(v + r, _D1, _EXP_V),
        "1: N ≤ v + r for u ≤ 1 (P ≤ 1)": _at_most(_N, v + r, {u: 1 - _mu}),
        "1: N ≤ u(v + r) for u ≥ 1 (P ≤ u ≤ b)": _at_most(_N, u * (v + r), {u: 1 + _mu}),
        "1, θ ≥ ½: D₂ ≥ v + r/2": _at_most(v + r / 2, _D2, _EXP_V, _BU_HALF),
        "1, θ ≥ ½: N ≤ 2u(v + r/2) (N/D₂ ≤ 2u ≤ 2b)": _at_most(_N, 2 * u * (v + r / 2), {u: _HALF + _mu}),
        "1: r ≤ D₁ (r/D₁ ≤ 1)": _at_most(r, _D1, _EXP_V),
        "1, θ ≤ ½: e^v ≤ 2A": _at_most(_Ev, 2 * _A, _EXP_V, theta_le_half_v),
        "1, θ ≤ ½: N ≤ 2b": _at_most(_N, 2 * b, {v: b - u}, _R_HIGH),
        # step 2
        "2: ru ≤ N": _at_most(r * u, _N),
        "2: rB_u ≤ D₂": _at_most(r * _Bu, _D2, _EXP_V),
        "2: θr/N ≤ 1/b": _at_most(_THETA * r / _N, 1 / b),
        "2, θ ≥ ½: r ≤ 2D₂ (rU/D₂ ≤ 2U)": _at_most(r, 2 * _D2, _EXP_V, _BU_HALF),
        "2, θ ≤ ½: r ≤ A (rU/D₂ ≤ r/A ≤ 1)": _at_most(r, _A, _EXP_V, theta_le_half_v, _R_HIGH),
        "2, θ ≥ ½: 1 ≤ 2b·ru (1/N ≤ 1/(ru) ≤ 2b)": _at_most(sp.Integer(1), 2 * b * r * u, theta_ge_half, _R_LOW),
        "2, v ≥ 1: e^v ≤ 2D₁": _at_most(_Ev, 2 * _D1, _EXP_V, {v: 1 + _mu}),
        "2, v ≥ 1: e^v ≤ 2D₂": _at_most(_Ev, 2 * _D2, _EXP_V, {v: 1 + _mu}),
        "2, v ≤ 1, θ ≥ ½: 3/D₁ + 3/D₂ ≤ 12b² (e^v ≤ 3)":
            _at_most(3 / _D1 + 3 / _D2, 12 * b**2, {_Ev: 1 + _eta}, _BU_HALF, _R_LOW),
        "2 (θ ≤ ½), 3: (1 − θ)/N = v/(bN) ≤ 1/b": _at_most(v / (b * _N), 1 / b),
        # step 3
        "3: (1 − θ)e^v/D₁ ≤ (v + 1)/b": _at_most((1 - _THETA) * _Ev / _D1, (v + 1) / b, {u: b - v}, _EXP_V),
        "3: (v + 1)/b ≤ 1 + 1/b": _at_most((v + 1) / b, 1 + 1 / b, {v: b - u}),
        # step 5 (θ < 0)
        "5: N ≥ v/2": _at_most(v / 2, _N, negative, _R_HIGH),
        "5: N ≤ 2v": _at_most(_N, 2 * v, negative, _R_LOW),
        "5: e^v ≤ 2D₁": _at_most(_Ev, 2 * _D1, _EXP_V, negative),
        "5: |u| ≤ 2N (|ru|/N ≤ 2r, |θ|r/N ≤ 2r/b)": _at_most(_kappa, 2 * _N, negative, _R_HIGH),
        "5: 4r ≤ 1 (2r + 2re^{−v} ≤ 1)": _at_most(4 * r, sp.Integer(1), _R_HIGH),
        "5: (1 − θ)/N ≤ 2/b": _at_most((1 - _THETA) / _N, 2 / b, negative, _R_HIGH),
        "5: 2r/b + 2/b + 2r + 2v/b + 1 ≤ 4v/b":
            _at_most(2 * r / b + 2 / b + 2 * r + 2 * v / b + 1, 4 * v / b, negative, _R_HIGH),
        "5: ε ≤ v/b (4ε³P ≤ 4ε²Pv/b)": _at_most(1 / b, v / b, negative),
        "ε² ≤ r ≤ 2ε² for |w| ≤ 1": r_range_holds(),
    }
