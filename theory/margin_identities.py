"""Cancellation-free forms of the ``bulk_error`` and ``right_layer`` margins, derived and proved by SymPy.

Both lemmas compare a quantity that cancels (b·e − 1, e − e_R) with a bound; their ratio margins
1 − |·|/bound cancel catastrophically in ball arithmetic (b·e ≈ 1, and the bulk margin is as small as
1e-21 on its domain). Here the exact closed form of e (:func:`stumpcheck.theory.model.closed_form_error`, integrated
by SymPy from the definition) is written in **positive atoms**

    Z = e^v − 1 ≥ 0,   P = 1 − e^{−u} ∈ (0, 1),   r = e^{−λ} > 0,   u = bθ > 0,   v = b(1 − θ) ≥ 0,

(b = u + v, e^{−bθ} = 1 − P; :func:`stumpcheck.theory.asymptotics.exact_error_in_layer_variables` with
Y = 1 + Z and Ω·Y = 1 − P), where every quantity of the lemmas is a rational function. SymPy then

1. factors the quantity inside |·| and reads its sign off the factors, each a polynomial whose
   coefficients all have one sign in the atoms (or in 1 − P = e^{−u}, or R = 2P − 1): this removes |·|;
2. factors 1 − |·|/bound: the **rewritten margin**, a quotient of polynomials with positive coefficients
   in the atoms (``right_layer``: in Z, R = 1 − 2e^{−u}, r, u, v; R > 0 needs u > log 2, and the lemma's
   domain has u = bθ ≥ 1);
3. proves ``cancel(stated − rewritten) == 0`` for the stated margin in the same atoms (an identity of
   rational functions, exact).

Results (b·e − 1 and e − e_R are identities of the model; the margins hold on the lemmas' domains):

* ``bulk_error``: 1 − b·e = (v + u·r)/(Z + r·P) > 0, so |b·e − 1|/bound = Z/(Z + r·P) (the softmax mass
  right of θ) and the margin is r·P/(Z + r·P);
* ``right_layer``: e − e_R = −r·e^{−u}(v + r·u)/(b(Z + r)(Z + r·P)) < 0, and the margin is
  N/(2(Z + r·P)(v + r·b)) with N a polynomial with positive coefficients in (Z, R, r, u, v).

:meth:`MarginIdentity.margin` is the rewritten margin printed back in the margin symbols (r, u, v and
exp; :mod:`stumpcheck.theory.margin_quantities`), which :class:`stumpcheck.numerics.certified.proofs.margins.Margin` compiles to Arb;
:meth:`MarginIdentity.record` is what a certificate records (both sreprs and how they were proved).
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from functools import cache

import sympy as sp

from stumpcheck.theory import asymptotics as asy
from stumpcheck.theory.symbols import b, eps, r, u, v

__all__ = ["MarginIdentity", "ATOMS", "IDENTITIES", "bulk_error_identity", "right_layer_identity", "identity_for", "recheck_identity",
           "stated_bulk_margin", "stated_right_layer_margin"]

#: the lemmas with an identity (their certified margin is the identity's atom margin)
IDENTITIES = ("bulk_error", "right_layer")

Z = sp.Symbol("Z", positive=True)  # e^v − 1
P = sp.Symbol("P", positive=True)  # 1 − e^{−u}
Q = sp.Symbol("Q", positive=True)  # e^{−u} = 1 − P
R = sp.Symbol("R", positive=True)  # 2P − 1 = 1 − 2e^{−u}
e_sym = sp.Symbol("e", real=True)  # the margin symbol e of stumpcheck.theory.margin_quantities
#: atom → its definition in the margin symbols
ATOMS = {Z: sp.exp(v) - 1, P: 1 - sp.exp(-u), Q: sp.exp(-u), R: 1 - 2 * sp.exp(-u)}
_ATOM_TEXT = {"Z": "e^v − 1", "P": "1 − e^{−u}", "Q": "e^{−u}", "R": "1 − 2e^{−u}", "r": "e^{−λ}",
              "u": "bθ", "v": "b(1 − θ)"}


@dataclass(frozen=True)
class MarginIdentity:
    """A stated margin, its rewritten form, and the record of the proof that they are equal."""

    name: str
    stated: sp.Expr      # the lemma's margin in the margin symbols (e, b, u, v, r, exp)
    rewritten: sp.Expr   # the same margin in the positive atoms
    signs: tuple         # (quantity, its factored form in the atoms, its sign)
    positivity: str      # why the rewritten margin is > 0
    strict: tuple        # the atoms (P, R) the positivity and the signs assume > 0
    seconds: float

    def margin(self) -> sp.Expr:
        """The rewritten margin in the margin symbols (r, u, v, b, exp), for :class:`Margin.from_sympy`."""
        return self.rewritten.xreplace(ATOMS)

    def strict_atoms(self) -> tuple:
        """The atoms that must be > 0 (besides r = e^{−λ} > 0, and Z, u, v ≥ 0, which hold for θ ∈ [0, 1]):
        P, and R where a sign or the positivity used P = (1 + R)/2. Given them, every factor of the numerator
        and the denominator has a monomial in them, r and u alone (u > 0 follows from P > 0), so the rewritten
        margin is > 0, and the signs that removed |·| hold."""
        return self.strict

    def atom_margin(self) -> sp.Expr:
        """min of the strict atoms' definitions (1 − e^{−u}, 1 − 2e^{−u}): the quantity Arb proves > 0 on the
        domain, which with the symbolic part proves the lemma. Each is 1 − c·e^{−u}, whose lower end a ball
        encloses tightly however wide the box (the upper end of e^{−u} is exact up to rounding)."""
        return sp.Min(*[ATOMS[s] for s in self.strict_atoms()])

    def record(self) -> dict:
        """What a certificate records: both margins' srepr, the atoms, the signs, how it was proved."""
        return {"name": self.name,
                "stated_margin": {"text": sp.sstr(self.stated), "srepr": sp.srepr(self.stated)},
                "rewritten_margin": {"text": sp.sstr(self.margin()), "srepr": sp.srepr(self.margin()),
                                     "in_atoms": sp.sstr(self.rewritten)},
                "atoms": {str(s): _ATOM_TEXT[str(s)] for s in sorted(self.rewritten.free_symbols, key=str)},
                "signs": [{"quantity": q, "factored": f, "sign": s} for q, f, s in self.signs],
                "positivity": self.positivity,
                "proved_by": "SymPy: e from stumpcheck.theory.model.closed_form_error (integrated from the definition) in "
                             "the atoms Z = e^v − 1, P = 1 − e^{−u}, r = e^{−λ}, b = u + v; |·| removed by the sign "
                             "of its factored argument; cancel(stated − rewritten) == 0 (exact rational functions)",
                "symbolic_part": ("the identity stated margin = rewritten margin (for u, v > 0; at v = 0 by "
                                  "continuity), and rewritten margin > 0 wherever " +
                                  ", ".join(f"{s} > 0" for s in self.strict_atoms()) + " (" + self.positivity + ")"),
                "interval_part": (sp.sstr(self.atom_margin()) + " > 0 (= min of " +
                                  ", ".join(sp.sstr(ATOMS[s]) for s in self.strict_atoms()) +
                                  ") on every leaf box of the domain (Arb ball arithmetic, this certificate's margin)"),
                "seconds": round(self.seconds, 3)}


def _in_atoms(expr: sp.Expr) -> sp.Expr:
    """An expression in b, u, v, r, exp(±u), exp(±v) as a rational function of the atoms (b = u + v)."""
    expr = expr.subs(b, u + v)
    expr = expr.replace(lambda n: isinstance(n, sp.exp), lambda n: _exp_in_atoms(sp.expand(n.args[0])))
    return expr


def _exp_in_atoms(arg: sp.Expr) -> sp.Expr:
    cu, cv = arg.coeff(u), arg.coeff(v)
    if sp.expand(arg - cu * u - cv * v) != 0 or not (cu.is_Integer and cv.is_Integer):
        raise ValueError(f"exp({arg}) is not e^(k·u + l·v)")
    return (1 - P) ** (-cu) * (1 + Z) ** cv  # e^{−u} = 1 − P, e^v = 1 + Z


@cache
def _exact_error() -> sp.Expr:
    """e exactly, in the atoms: the layer-variable form with Y = 1 + Z, Ω = (1 − P)/(1 + Z), b = u + v."""
    exact = asy.exact_error_in_layer_variables()
    return sp.cancel(exact.subs({asy.OMEGA: (1 - P) / (1 + Z), asy.Y: 1 + Z}).subs(b, u + v))


def _factor_sign(factor: sp.Expr) -> tuple[int, tuple]:
    """(+1 or −1, atoms it assumes > 0 beyond the always-positive ones) if ``factor`` (a polynomial in positive
    atoms) has coefficients of one sign: in the atoms, with P = 1 − Q (Q = e^{−u} > 0), or with P = (1 + R)/2
    (which assumes R > 0); (0, ()) if none of these shows its sign."""
    for form, needs in ((factor, ()), (factor.subs(P, 1 - Q), ()), (factor.subs(P, (1 + R) / 2), (R,))):
        form = sp.expand(form)
        coefficients = sp.Poly(form, *sorted(form.free_symbols, key=str)).coeffs()
        if all(c > 0 for c in coefficients):
            return 1, needs
        if all(c < 0 for c in coefficients):
            return -1, needs
    return 0, ()


def _sign(expr: sp.Expr) -> tuple[int, str, set]:
    """The sign of a rational function of positive atoms from its factors, its factored form, and the atoms
    the sign assumes > 0; sign 0 if not determined."""
    factored = sp.factor(expr)
    sign, needs = 1, set()
    for term in sp.Mul.make_args(factored):
        base, power = term.as_base_exp()
        s, assumed = (1 if base > 0 else -1, ()) if base.is_number else _factor_sign(base)
        if s == 0:
            return 0, sp.sstr(factored), set()
        needs.update(assumed)
        sign *= 1 if (power.is_Integer and power % 2 == 0) else s
    return sign, sp.sstr(factored), needs


def _positive_form(part: sp.Expr) -> tuple[sp.Expr, tuple] | None:
    """``part`` as a polynomial with positive coefficients in the atoms (itself), or in (Z, R, r, u, v) after
    P = (1 + R)/2 (expanded; assumes R > 0), with the atoms assumed; None if neither."""
    for form, needs in ((part, ()), (sp.expand(part.subs(P, (1 + R) / 2)), (R,))):
        expanded = sp.expand(form)
        if expanded.is_number:
            if expanded > 0:
                return form, needs
            continue
        if all(c > 0 for c in sp.Poly(expanded, *sorted(expanded.free_symbols, key=str)).coeffs()):
            return form, needs
    return None


def _remove_abs(stated: sp.Expr, e_atoms: sp.Expr, signs: list, needs: set) -> sp.Expr:
    """``stated`` in the atoms with e substituted and every |x| replaced by sign(x)·x (sign proved)."""
    quantities = iter(sp.sstr(node.args[0]) for node in sp.preorder_traversal(stated) if isinstance(node, sp.Abs))
    expr = _in_atoms(stated.xreplace({e_sym: e_atoms}))

    def unsign(node):
        sign, factored, assumed = _sign(node.args[0])
        if sign == 0:
            raise ValueError(f"the sign of {node.args[0]} is not determined by its factors")
        signs.append((next(quantities, "?"), factored, "+" if sign > 0 else "−"))
        needs.update(assumed)
        return sign * node.args[0]

    return expr.replace(lambda n: isinstance(n, sp.Abs), unsign)


def _prove(name: str, stated: sp.Expr) -> MarginIdentity:
    """Rewrite ``stated`` (see the module doc); ArithmeticError if it is not a quotient of positive polynomials."""
    started = time.perf_counter()
    signs: list = []
    needs: set = {P}  # P > 0 (u > 0) is assumed by every positivity argument below
    expr = _remove_abs(stated, _exact_error(), signs, needs)
    numerator, denominator = sp.fraction(sp.together(sp.factor(sp.cancel(expr))))
    forms = [_positive_form(part) for part in (numerator, denominator)]
    if None in forms:
        raise ArithmeticError(f"{name}: the rewritten margin is not a quotient of positive polynomials")
    (numerator, num_needs), (denominator, den_needs) = forms
    needs.update(num_needs + den_needs)
    rewritten = numerator / denominator
    if sp.cancel((rewritten - expr).subs(R, 2 * P - 1)) != 0:
        raise ArithmeticError(f"{name}: the rewritten margin differs from the stated one")
    positive = needs | {r, u}  # r = e^{−λ} > 0; u > 0 follows from P > 0
    for part in (numerator, denominator):
        for factor in sp.Mul.make_args(sp.factor(part)):
            base = factor.as_base_exp()[0]
            monomials = sp.Add.make_args(sp.expand(base))
            if not base.is_number and not any(set(m.free_symbols) <= positive for m in monomials):
                raise ArithmeticError(f"{name}: the factor {base} may vanish where only Z, v >= 0 are known")
    atoms = ", ".join(sorted(map(str, rewritten.free_symbols)))
    positivity = (f"numerator and denominator are polynomials with positive coefficients in ({atoms}); every factor "
                  f"has a monomial in {', '.join(sorted(map(str, positive)))} alone, so it is > 0 where they are")
    return MarginIdentity(name=name, stated=stated, rewritten=rewritten, signs=tuple(signs), positivity=positivity,
                          strict=tuple(s for s in (P, R) if s in needs), seconds=time.perf_counter() - started)


def stated_bulk_margin() -> sp.Expr:
    """1 − |b·e − 1|·(1 − e^{−v})/((v + u·r)e^{−v}): the ratio form of the bound of ``bulk_error``."""
    return 1 - sp.Abs(b * e_sym - 1) * (1 - sp.exp(-v)) / ((v + u * r) * sp.exp(-v))


def stated_right_layer_margin() -> sp.Expr:
    """1 − |e − e_R|/(2e^{−bθ}·r(v + rb)/(b(Y − 1 + r)²)), Y = e^v, e_R = the derived right-layer form."""
    e_right = asy.right_layer_error().subs({eps: 1 / b, asy.Y: sp.exp(v)})
    bound = 2 * sp.exp(-u) * r * (v + r * b) / (b * (sp.exp(v) - 1 + r) ** 2)
    return 1 - sp.Abs(e_sym - e_right) / bound


@cache
def bulk_error_identity() -> MarginIdentity:
    """The rewritten ``bulk_error`` margin, r·P/(Z + r·P) (derived; see the module doc)."""
    return _prove("bulk_error", stated_bulk_margin())


@cache
def right_layer_identity() -> MarginIdentity:
    """The rewritten ``right_layer`` margin (derived; see the module doc)."""
    return _prove("right_layer", stated_right_layer_margin())


def identity_for(name: str) -> MarginIdentity:
    """The identity of lemma ``name`` (``bulk_error`` or ``right_layer``)."""
    return {"bulk_error": bulk_error_identity, "right_layer": right_layer_identity}[name]()


def recheck_identity(record, margin_srepr: str, parse) -> str | None:
    """Re-derive a certificate's identity record; None if it matches, else why not.

    ``parse(text)`` rebuilds an expression from an ``srepr`` (the caller's safe parser). The record must name a
    registered identity (:data:`IDENTITIES`) and state its margin; that identity is derived afresh in this
    process (:func:`_prove`: signs, positivity and ``cancel(stated − rewritten) == 0``), and every field of the
    record but ``seconds`` (the texts included) must be the one the derivation gives, and the certificate's own
    margin (``margin_srepr``) its atom margin.
    """
    if not isinstance(record, dict):
        return "the identity is not an object"
    try:
        name = str(record["name"])
        stated = parse(record["stated_margin"]["srepr"])
    except (KeyError, TypeError):
        return "the identity record needs name, stated_margin.srepr and rewritten_margin.srepr"
    if name not in IDENTITIES:
        return f"the identity {name[:40]!r} is not one of {', '.join(IDENTITIES)}"
    try:
        identity = identity_for(name)
    except (ArithmeticError, ValueError, TypeError) as exc:
        return f"the stated margin does not rewrite: {exc}"
    if sp.srepr(stated) != sp.srepr(identity.stated):
        return f"the identity's stated margin is not the {name} margin"
    expected = identity.record()
    for key in sorted(set(expected) | set(record)):
        if key != "seconds" and record.get(key) != expected.get(key):
            return f"the identity record's {key!r} is not the one the derivation gives"
    if sp.srepr(identity.atom_margin()) != margin_srepr:
        return "the certificate's margin is not the atom margin of the identity"
    return None
