"""The exponentially small rest E = L − F of the tail (docs/tail.md §4), its θ-integrands derived by SymPy in atoms.

With u = bθ, v = b(1 − θ), r = e^{b−a}, U = e^{−u}, E_v = e^v, D₁ = E_v − 1 + r, D₂ = E_v − 1 + r(1 − U) and
N = v + ru, the one-head error and its right-layer form are (docs/tail.md §1; identities checked here)

    e₀ = (1 − N/D₁)/b,     Δ = e − e₀ = −rUN/(b·D₁D₂),

and, F being ½∫₀¹ e₀² dθ + ½∫_{−∞}^0 (e₀² − ε²) dθ (the closed form the tail differentiates), for x ∈ {a, b}

    E_x = ∫₀¹ h_x dθ − ∫_{−∞}^0 g_x dθ,     h_x = e·∂_x e − e₀·∂_x e₀ = Δ·∂_x e + e₀·∂_x Δ,
                                             g_x = ½ ∂_x (e₀² − ε²).

Both integrands are **polynomials** in the atoms b^{±1}, θ, r, U, E_v, d₁ = 1/D₁, d₂ = 1/D₂ (:func:`integrands`):
∂_x is the chain rule on independent atoms (∂_a r = −r; ∂_b r = r, ∂_b U = −θU, ∂_b E_v = (1 − θ)E_v, ∂ d_i =
−d_i²·∂D_i, and the explicit b of u, v and 1/b), so nothing is divided and every monomial of h_x keeps the
factor U of Δ. Each θ-range is a **zone** in which every atom has an explicit bound and one atom is exponentially
small (:func:`zone_terms`, with the bounds applied in :mod:`stumpcheck.numerics.certified.region.tail_rest`):

* ``left``, θ ∈ [0, ½] (v ≥ b/2): E_v = 1/η, d_i = η·t_i with η = e^{−v} ≤ e^{−b/2}, t₁ = 1/(1 − η + rη),
  t₂ = 1/(1 − η + rη(1 − U)); every monomial carries η² (the Δ of the left layer);
* ``right_far``, θ ∈ [½, 1], v ≥ 1: the same substitution (η ≤ e^{−1}); U ≤ e^{−b/2} in every monomial;
* ``right_near``, v ∈ [0, 1] (θ = 1 − v/b after differentiation): U = e^{v−b} ≤ e·e^{−b}, E_v ≤ e,
  d₁ ≤ 1/r, d₂ ≤ 1/(r(1 − U)) with r ≥ ε²;
* ``negative``, θ = −κ/b < 0 (after differentiation): E_v = 1/η with η = e^{−b−κ}, d₁ = η·t₁; every monomial
  of g_x carries η.

Each zone's terms are (coefficient, {atom: exponent}) with exact rational coefficients. Differentiating the θ < 0
integral under the integral sign is the Leibniz rule for an improper integral; its hypothesis (a bound of the
differentiated integrand, uniform in (a, b), integrable in θ) is the very bound the negative zone gives.
"""

from __future__ import annotations

from functools import cache

import sympy as sp

__all__ = ["ATOMS", "ZONES", "V_NEAR", "integrands", "zone_terms", "rest_identities", "rest_srepr"]

_b = sp.Symbol("b", positive=True)
_th = sp.Symbol("theta", real=True)
_r, _U, _Ev, _d1, _d2 = sp.symbols("r U E_v d_1 d_2", positive=True)
_eta, _t1, _t2, _v, _kappa = sp.symbols("eta t_1 t_2 v kappa", positive=True)
#: every atom a zone's term may hold, by name
ATOMS = {s.name: s for s in (_b, _th, _r, _U, _Ev, _d1, _d2, _eta, _t1, _t2, _v, _kappa)}
#: v below which the right layer is the zone right_near (and above which right_far)
V_NEAR = 1
ZONES = ("left", "right_far", "right_near", "negative")

_N = _b * (1 - _th) + _r * _b * _th
_D1 = _Ev - 1 + _r
_D2 = _Ev - 1 + _r * (1 - _U)


def _derivative(f, x: str):
    """The total derivative ∂f/∂x (x = "a" or "b") of a polynomial f in the atoms (module doc)."""
    atoms = {_r: -_r if x == "a" else _r,
             _U: sp.Integer(0) if x == "a" else -_th * _U,
             _Ev: sp.Integer(0) if x == "a" else (1 - _th) * _Ev}
    d_d1 = sum(sp.diff(_D1, s) * ds for s, ds in atoms.items())
    d_d2 = sum(sp.diff(_D2, s) * ds for s, ds in atoms.items())
    atoms[_d1] = -_d1**2 * d_d1
    atoms[_d2] = -_d2**2 * d_d2
    out = sp.diff(f, _b) if x == "b" else sp.Integer(0)
    for s, ds in atoms.items():
        out += sp.diff(f, s) * ds
    return sp.expand(out)


@cache
def integrands() -> dict:
    """{("h", x): h_x, ("g", x): g_x} for x ∈ {a, b}: polynomials in the atoms (module doc)."""
    e0 = (1 - _N * _d1) / _b
    delta = -_r * _U * _N * _d1 * _d2 / _b
    out = {}
    for x in ("a", "b"):
        d_e0, d_delta = _derivative(sp.expand(e0), x), _derivative(sp.expand(delta), x)
        out[("h", x)] = sp.expand(delta * (d_e0 + d_delta) + e0 * d_delta)
        out[("g", x)] = _derivative(sp.expand((e0**2 - 1 / _b**2) / 2), x)
    return out


def _substitute(expr, zone: str):
    if zone in ("left", "right_far"):
        return sp.expand(expr.xreplace({_Ev: 1 / _eta, _d1: _eta * _t1, _d2: _eta * _t2}))
    if zone == "right_near":
        return sp.expand(expr.xreplace({_th: 1 - _v / _b}))
    if zone == "negative":
        return sp.expand(expr.xreplace({_th: -_kappa / _b, _Ev: 1 / _eta, _d1: _eta * _t1}))
    raise ValueError(f"unknown zone {zone!r}")


def _terms(expr) -> list:
    """[(coefficient, {atom name: exponent})] of an expanded sum of monomials in the atoms."""
    out = []
    for term in sp.Add.make_args(expr):
        coefficient, powers = sp.Integer(1), {}
        for factor, exponent in term.as_powers_dict().items():
            if factor.is_Symbol:
                if factor.name not in ATOMS or not exponent.is_Integer:
                    raise ArithmeticError(f"a term of the rest has the factor {factor}**{exponent}")
                powers[factor.name] = powers.get(factor.name, 0) + int(exponent)
            elif factor.is_Rational and exponent.is_Integer:
                coefficient *= factor**exponent
            else:
                raise ArithmeticError(f"a term of the rest has the factor {factor}**{exponent}")
        out.append((sp.Rational(coefficient), {k: v for k, v in powers.items() if v != 0}))
    return out


@cache
def zone_terms(zone: str, x: str) -> tuple:
    """The terms of zone ``zone``'s integrand for ∂_x (h_x on [0, 1], g_x for θ < 0), after the zone's
    substitution: a tuple of (exact coefficient, ((atom name, exponent), …))."""
    kind = "g" if zone == "negative" else "h"
    expr = _substitute(integrands()[(kind, x)], zone)
    return tuple((c, tuple(sorted(p.items()))) for c, p in _terms(expr))


def rest_identities() -> dict:
    """{name: True/False}: the identities the integrands rest on, decided by SymPy."""
    from stumpcheck.theory.model import closed_form_error
    from stumpcheck.theory.symbols import a, b, theta

    back = {_d1: 1 / _D1, _d2: 1 / _D2}
    e0 = (1 - _N * _d1) / _b
    delta = -_r * _U * _N * _d1 * _d2 / _b
    error = (1 - _N / _D2) / _b
    on_model = {_b: b, _th: theta, _r: sp.exp(b - a), _U: sp.exp(-b * theta), _Ev: sp.exp(b * (1 - theta))}
    checks = {"e₀ + Δ = (1 − N/D₂)/b": sp.simplify(sp.together((e0 + delta).xreplace(back) - error)) == 0,
              "b·e = 1 − N/D₂ (the model's closed form)":
                  sp.simplify(sp.expand(closed_form_error("one-head") - error.xreplace(on_model))) == 0}
    # the chain rule on the atoms against SymPy's derivative of their definitions in (a, b, θ)
    definitions = {_r: sp.exp(b - a), _U: sp.exp(-b * theta), _Ev: sp.exp(b * (1 - theta)), _b: b}
    ok = True
    for x_name, x_symbol in (("a", a), ("b", b)):
        for atom in (_r, _U, _Ev, _b):
            mine = _derivative(atom, x_name).xreplace(definitions).xreplace({_th: theta})
            ok = ok and sp.simplify(mine - sp.diff(definitions[atom], x_symbol)) == 0
        for d, denominator in ((_d1, _D1), (_d2, _D2)):
            mine = _derivative(d, x_name).xreplace(back).xreplace(definitions).xreplace({_th: theta})
            direct = sp.diff(1 / denominator.xreplace(definitions), x_symbol)
            ok = ok and sp.simplify(mine - direct) == 0
    checks["the chain rule on r, U, E_v, b, 1/D₁, 1/D₂"] = ok
    return checks


@cache
def rest_srepr() -> str:
    """The zones' terms as one text (its sha256 is what a certificate records of this derivation)."""
    return "\n".join(f"{zone} {x}: {sp.srepr(zone_terms(zone, x))}" for zone in ZONES for x in ("a", "b"))
