"""The exact forms behind the certified C7 and C8 (docs/model.md §5, §7; docs/claims.md C7, C8), checked by SymPy.

With u = bθ, v = b(1 − θ), r = e^{b−a}, λ = a − b and g(β) = β·κ₁(β) = 1 − β/(e^β − 1) ∈ [0, 1) (β ≥ 0):

* **one head at θ = 1** (every label 0): e(1) = κ₁(b) − 1 = 1/b − 1/(e^b − 1) − 1, for every real a;
* **one head near θ = 1**: b·e(θ) = 1 − (v + r·u)/(e^v − 1 + r(1 − e^{−u})) (docs/tail.md §1). At the
  witness θ = 1 − ε⁴ (ε = 1/b, so v = ε³, u = 1/ε − ε³) with r = ε²·q, and writing
  e^{ε³} − 1 = ε³(1 + ε³R_A), e^{−u} = E_u, B_u = 1 − E_u:

      (1 + e(θ))/ε = [1 + q·B_u + ε³R_A(1 + ε) + q·ε³ − q·E_u/ε] / [q·B_u + ε + ε⁴R_A]      (:func:`witness_form`);

* **averaged at the ends**: e(0) = ½ and e(1) = −½ for every real a and b > 0 (one head of the average sees a
  single label: θ̂ = κ₁(b) and θ̂′ = 1 − κ₁(b) at both ends);
* **pooled**: a softmax over four segments (theory/model.py): [θ, 1] and [0, θ] of the one head (masses
  e^{a−u}(1 − e^{−v})/b and (1 − e^{−u})/b, offsets mean − θ = g(v)/b and (g(u) − u)/b) and of the reflected
  head (masses e^{a−v}(1 − e^{−u})/b and (1 − e^{−v})/b, offsets −g(u)/b and (v − g(v))/b). Divided by
  e^{a−u} (X = e^{u−v}, G_u = 1 − e^{−u}, G_v = 1 − e^{−v}, Λ = e^{−λ}):

      b·e(θ) = [G_v g(v) − X G_u g(u) + Λe^{−v}(G_u(g(u) − u) + G_v(v − g(v)))] / [G_v + X G_u + Λe^{−v}(G_u + G_v)]

  (:func:`pooled_form`), and e(1 − θ) = −e(θ) (the pooled score set is invariant under the reflection).

:func:`boundary_identities` decides each by SymPy against the closed form integrated from the definition
(:func:`stumpcheck.theory.model.closed_form_error`); the Arb proofs of
:mod:`stumpcheck.numerics.certified.boundary` evaluate these forms.
"""

from __future__ import annotations

import sympy as sp

from stumpcheck.theory.symbols import a, b, eps, theta, u, v

__all__ = ["g_function", "witness_form", "pooled_form", "boundary_identities", "WITNESS_ATOMS", "POOLED_ATOMS"]

#: atoms of the witness form: q = r/ε², B_u = 1 − E_u, R_A = (e^{ε³} − 1 − ε³)/ε⁶, E_u = e^{−u}
WITNESS_ATOMS = tuple(sp.Symbol(n, positive=True) for n in ("q", "B_u", "R_A", "E_u"))
#: atoms of the pooled form: G_u, G_v, g(u), g(v), X = e^{u−v}, Λ = e^{−λ}, e^{−v}
POOLED_ATOMS = tuple(sp.Symbol(n, nonnegative=True) for n in ("G_u", "G_v", "g_u", "g_v", "X", "Lam", "E_v"))


def g_function(beta: sp.Expr) -> sp.Expr:
    """g(β) = β·κ₁(β) = 1 − β/(e^β − 1): b times the mean offset of a segment of length 1/b·β."""
    return 1 - beta / (sp.exp(beta) - 1)


def witness_form() -> sp.Expr:
    """(1 + e(1 − ε⁴))/ε in the atoms q, B_u, R_A, E_u (module doc)."""
    q, b_u, r_a, e_u = WITNESS_ATOMS
    return (1 + q * b_u + eps**3 * r_a * (1 + eps) + q * eps**3 - q * e_u / eps) / (q * b_u + eps + eps**4 * r_a)


def pooled_form() -> tuple:
    """(numerator, denominator) of b·e_pooled(θ) in the atoms of :data:`POOLED_ATOMS` (module doc)."""
    g_u_, g_v_, gu, gv, big_x, lam_, e_v = POOLED_ATOMS
    numerator = g_v_ * gv - big_x * g_u_ * gu + lam_ * e_v * (g_u_ * (gu - u) + g_v_ * (v - gv))
    denominator = g_v_ + big_x * g_u_ + lam_ * e_v * (g_u_ + g_v_)
    return numerator, denominator


def _zero(expr) -> bool:
    """True when SymPy shows ``expr`` ≡ 0: the numerator of ``together(expand(expr))`` expands to 0 (a polynomial
    identity in the atoms, exponentials split by expand), else ``simplify`` gives 0. A 50-digit evaluation at a
    generic point first: a clearly non-zero value is False at once (simplify is slow on what does not cancel)."""
    point = {symbol: sp.Rational(3 + 2 * i, 17 + 3 * i) for i, symbol in enumerate(sorted(expr.free_symbols, key=str))}
    value = expr.subs(point).evalf(50)
    if value.is_number and value.is_finite and abs(value) > sp.Float("1e-30", 50):
        return False
    expanded = sp.expand(expr)
    if sp.expand(sp.numer(sp.together(expanded))) == 0:
        return True
    return sp.simplify(expanded) == 0


def _kappa1(beta):
    return 1 / beta - 1 / (sp.exp(beta) - 1)


def boundary_identities(claim: str | None = None) -> dict:
    """{name: True/False}: each identity of the module doc, decided by SymPy (a few seconds of CPU); ``claim``
    "C7" (the one head's three) or "C8" (the averaged and pooled four) selects a part, None both."""
    if claim not in (None, "C7", "C8"):
        raise ValueError(f"claim must be None, 'C7' or 'C8', got {claim!r}")
    checks = {}
    if claim in (None, "C7"):
        checks.update(_one_head_identities())
    if claim in (None, "C8"):
        checks.update(_symmetrized_identities())
    return checks


def _one_head_identities() -> dict:
    from stumpcheck.theory.model import closed_form_error

    checks = {}
    one_head = closed_form_error("one-head")
    checks["one head: e(1) = κ₁(b) − 1"] = _zero(one_head.subs(theta, 1) - (_kappa1(b) - 1))
    # the witness: substitute the atoms' definitions into the form and compare with the exact P-form
    q, b_u, r_a, e_u = WITNESS_ATOMS
    big_u = 1 / eps - eps**3
    atoms = {q: sp.Symbol("r", positive=True) / eps**2, b_u: 1 - sp.exp(-big_u), e_u: sp.exp(-big_u),
             r_a: (sp.exp(eps**3) - 1 - eps**3) / eps**6}
    r_sym = sp.Symbol("r", positive=True)
    p_form = (eps**3 + r_sym * big_u) / (sp.exp(eps**3) - 1 + r_sym * (1 - sp.exp(-big_u)))
    exact = (1 + eps * (1 - p_form)) / eps            # (1 + e)/ε with b·e = 1 − P at v = ε³, u = 1/ε − ε³
    checks["one head: (1 + e(1 − ε⁴))/ε = witness form"] = _zero(sp.together(witness_form().subs(atoms) - exact))
    # … and the P-form is the model's e at θ = 1 − ε⁴, r = e^{b−a}
    at_witness = {theta: 1 - eps**4, b: 1 / eps, a: 1 / eps - sp.log(r_sym)}
    checks["one head: b·e = 1 − P at θ = 1 − ε⁴"] = _zero(
        sp.exp(-1 / eps) * ((one_head * b).subs(at_witness) - (1 - p_form)))
    return checks


def _symmetrized_identities() -> dict:
    from stumpcheck.theory.model import closed_form_error

    checks = {}
    averaged = closed_form_error("averaged")
    checks["averaged: e(0) = 1/2"] = _zero(averaged.subs(theta, 0) - sp.Rational(1, 2))
    checks["averaged: e(1) = −1/2"] = _zero(averaged.subs(theta, 1) + sp.Rational(1, 2))
    pooled = closed_form_error("pooled")
    numerator, denominator = pooled_form()
    g_u_, g_v_, gu, gv, big_x, lam_, e_v = POOLED_ATOMS
    lam_value = sp.exp(b - a)
    pooled_atoms = {g_u_: 1 - sp.exp(-u), g_v_: 1 - sp.exp(-v), gu: g_function(u), gv: g_function(v),
                    big_x: sp.exp(u - v), lam_: lam_value, e_v: sp.exp(-v)}
    form = (numerator / denominator).subs(pooled_atoms).subs({u: b * theta, v: b * (1 - theta)})
    checks["pooled: b·e = N/D"] = _zero(sp.together(sp.expand(b * pooled - form).rewrite(sp.exp)))
    checks["pooled: e(1 − θ) = −e(θ)"] = _zero(sp.together(pooled.subs(theta, 1 - theta) + pooled))
    return checks
