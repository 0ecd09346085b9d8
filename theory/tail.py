"""The tail b ≥ B of the population flow in ε = 1/b: the scaled margins as functions of (ε, w) (docs/tail.md).

The region's two scaled field quantities (:func:`stumpcheck.theory.margin_quantities.region_field_terms`,
the same SymPy expressions the finite region proves)

    S(ε, w) = b³·ẇ,      D(ε, w) = b·(1 − 2b³ḃ),       b = 1/ε,  a = calibration_a(b) + w/b,

are written through the layer decomposition of the loss (docs/tail.md §1):

    L(a, b) = F(ε, r) + E(a, b),     F = (ε/2)·(ε + I(ε, r)),     r = e^{b−a},

with I = ∫₀^∞ (e_layer(v)² − ε²) dv the right layer's integral in v = b(1 − θ) (which contains the deep layer
1 − θ ~ b⁻³, where Y − 1 is of the size of r), exact in polylogarithms
(:func:`stumpcheck.theory.asymptotics.loss_layer_integral`), and E the exponentially small rest (the left layer
θ ~ 1/b and the bulk, where e = ε up to e^{−bθ} and e^{−b(1−θ)} terms, and the layer integral's tail beyond
v = b): Lemma E of docs/tail.md §4 bounds it. Then L_a = −r F_r + E_a and L_b = −ε² F_ε + r F_r + E_b.

On the calibration relation shifted by w, r = ε²·e^{xε} with x = ρ₁ − w (derived from the relation), and
log r = 2ℓ + xε with ℓ = log ε. :func:`scaled_margins` substitutes the reflection identities and the
remainder forms of :mod:`stumpcheck.theory.tail_series` (every analytic function of r or of xε as its
Taylor polynomial plus tᴺ·R, R a named symbol with a certified range), expands, and returns S and D as
finite sums

    Σ_{i ≥ 0, j ≥ 0}  ε^i ℓ^j · c_ij(w, R…, Ê_a, Ê_b)

with Ê_a = b⁴E_a, Ê_b = b⁴E_b. It checks that no negative power of ε is left and that every ℓ comes with
a positive power of ε: so S and D are bounded and continuous at ε = 0 (ε^i ℓ^j → 0 for i ≥ 1), and their
limits are the ε⁰ℓ⁰ coefficients with R, Ê set to their values at ε = 0 (:func:`limits`:
S → −w, D → 3ζ(3) + 1/2 − w).
"""

from __future__ import annotations

from functools import cache

import sympy as sp

from stumpcheck.theory.symbols import b, eps, r
from stumpcheck.theory.tail_series import K, reflection_identities, taylor_form

__all__ = ["ell", "E_a_hat", "E_b_hat", "ORDER_R", "ORDER_EXP", "REMAINDERS", "loss_F", "field_in_F",
           "log_r_on_relation", "scaled_margins", "limits", "margins_srepr"]

#: ℓ = log ε
ell = sp.Symbol("ell", real=True)
#: Ê_a = b⁴·E_a, Ê_b = b⁴·E_b (Lemma E bounds them)
E_a_hat, E_b_hat = sp.symbols("E_a_hat E_b_hat", real=True)
#: series orders: in r (r ~ ε², so the remainder r²·R carries ε⁴, against the ε⁻⁴ of the scaled field) and in xε
ORDER_R = 2
ORDER_EXP = 3
#: remainder symbol name → (series name, variable "r" or "z" = xε)
REMAINDERS = {"R_neglog1m": ("neglog1m", "r"), "R_li2": ("li2", "r"), "R_K": ("K", "r"),
              "R_inv1m1": ("inv1m1", "r"), "R_inv1m2": ("inv1m2", "r"), "R_inv1m3": ("inv1m3", "r"),
              "R_inv1m4": ("inv1m4", "r"), "R_exp": ("exp", "z")}
_R = {name: sp.Symbol(name, real=True) for name in REMAINDERS}
_LOG_R = sp.Symbol("log_r", real=True)
_X = sp.Symbol("x", real=True)
#: q = e^{xε} = r/ε², a symbol where no cancellation needs its series
_Q = sp.Symbol("q", positive=True)


@cache
def loss_F() -> sp.Expr:
    """F(ε, r) = (ε/2)(ε + I(ε, r)) with Li₂(1 − r), Li₃(1 − r) rewritten by the reflection identities."""
    from stumpcheck.theory.asymptotics import loss_layer_integral

    layer = loss_layer_integral().xreplace(reflection_identities())
    if layer.has(sp.polylog(3, 1 - r)) or layer.has(sp.polylog(2, 1 - r)):
        raise ArithmeticError("the layer integral kept a polylogarithm at 1 − r")
    return eps / 2 * (eps + layer)


@cache
def field_in_F() -> tuple:
    """(S, D) = (b³ẇ, b(1 − 2b³ḃ)) in ε, w, r and F's functions: L_a = −rF_r + E_a, L_b = −ε²F_ε + rF_r + E_b."""
    from stumpcheck.theory import margin_quantities as mq

    F = loss_F()
    f_eps, rf_r = sp.diff(F, eps), r * sp.diff(F, r)
    l_a = -rf_r + E_a_hat * eps**4
    l_b = -eps**2 * f_eps + rf_r + E_b_hat * eps**4
    relation = mq.relation_expression("calibration_a")
    out = []
    for term in mq.region_field_terms():
        term = term.subs(mq.calibration_a(b), relation)
        term = sp.expand(term.subs({mq.L_a: l_a, mq.L_b: l_b}).subs(b, 1 / eps))
        out.append(term)
    return tuple(out)


@cache
def log_r_on_relation() -> tuple:
    """(x, the exact log r): log r = b − a with a = calibration_a(b) + w/b, b = 1/ε, is 2·log ε + x·ε."""
    from stumpcheck.theory import margin_quantities as mq

    relation = mq.relation_expression("calibration_a")
    log_r = sp.expand(sp.expand_log((b - relation - mq.w / b).subs(b, 1 / eps), force=True))
    x = sp.expand((log_r - 2 * sp.log(eps)) / eps)
    if x.has(eps) or sp.expand(log_r - 2 * sp.log(eps) - x * eps) != 0:
        raise ArithmeticError(f"log r on the relation is not 2 log ε + xε: {log_r}")
    return x, log_r


def _replace_functions(expr: sp.Expr) -> sp.Expr:
    """Analytic functions of r → Taylor polynomial + r^N·R; log r → the symbol log_r."""
    expr = sp.expand_func(expr).replace(lambda n: isinstance(n, sp.polylog) and n.args[0] == 1,
                                        lambda n: -sp.log(1 - n.args[1]))
    forms = {sp.log(1 - r): -taylor_form("neglog1m", ORDER_R).form(r, _R["R_neglog1m"]),
             sp.polylog(2, r): taylor_form("li2", ORDER_R).form(r, _R["R_li2"]),
             K(r): taylor_form("K", ORDER_R).form(r, _R["R_K"]),
             sp.log(r): _LOG_R}
    expr = expr.xreplace(forms)
    leftover = expr.atoms(sp.log, sp.polylog, K)
    if leftover:
        raise ArithmeticError(f"functions of r left unexpanded: {leftover}")
    return expr


def _expand_denominator(expr: sp.Expr) -> sp.Expr:
    """Term by term: a denominator c·εⁱ·rʲ·(r − 1)ᵏ, with (1 − r)^{−k} replaced by its remainder form."""
    out = []
    for term in sp.Add.make_args(sp.expand(expr)):
        numerator, denominator = sp.fraction(sp.together(term))
        constant, factors = sp.factor_list(denominator)
        value = numerator / constant
        for base, power in factors:
            if base in (eps, r):
                value = value / base**power
            elif sp.expand(base - (r - 1)) == 0 or sp.expand(base - (1 - r)) == 0:
                sign = sp.Integer(-1) ** power if sp.expand(base - (r - 1)) == 0 else sp.Integer(1)
                if power > 4:
                    raise ArithmeticError(f"(1 − r)^{power} in a denominator: no series for it")
                value = value * sign * taylor_form(f"inv1m{power}", ORDER_R).form(r, _R[f"R_inv1m{power}"])
            else:
                raise ArithmeticError(f"unexpected factor {base} in a denominator")
        out.append(value)
    return sp.Add(*out)


def _monomials(expr: sp.Expr) -> dict:
    """{(i, j): coefficient} of an expanded Σ ε^i ℓ^j·coefficient."""
    terms: dict = {}
    for term in sp.Add.make_args(sp.expand(expr)):
        powers = term.as_powers_dict()
        i, j = int(powers.get(eps, 0)), int(powers.get(ell, 0))
        rest = term / (eps**i * ell**j)
        if rest.has(eps) or rest.has(ell):
            raise ArithmeticError(f"a term is not a monomial in ε and ℓ: {term}")
        terms[(i, j)] = terms.get((i, j), sp.S.Zero) + rest
    return terms


def _laurent_terms(expr: sp.Expr) -> dict:
    """{(i, j): coefficient} after r = ε²·q, log r = 2ℓ + xε (q = e^{xε} kept as a symbol); the terms with
    i < 0 are then expanded with q = Σ_{n<M} (xε)ⁿ/n! + (xε)^M·R_exp, M = ORDER_EXP ≥ 1 − (their lowest i), so that
    their cancellation is exact (each of them is O(ε^{-k})·(q − 1 − …))."""
    terms = _monomials(expr.xreplace({r: eps**2 * _Q, _LOG_R: 2 * ell + _X * eps}))
    negative = sp.Add(*[c * eps**i * ell**j for (i, j), c in terms.items() if i < 0])
    if negative == 0:
        return terms
    lowest = min(i for (i, _) in terms if i < 0)
    if 1 - lowest > ORDER_EXP:
        raise ArithmeticError(f"a term ε^{lowest} needs the series of e^(xε) beyond order {ORDER_EXP}")
    q = taylor_form("exp", ORDER_EXP).form(_X * eps, _R["R_exp"])
    kept = {k: c for k, c in terms.items() if k[0] >= 0}
    for key, coefficient in _monomials(negative.xreplace({_Q: q})).items():
        kept[key] = kept.get(key, sp.S.Zero) + coefficient
    return kept


@cache
def scaled_margins() -> dict:
    """{"S": terms, "D": terms}: each {(i, j): c_ij} with c_ij polynomial in w, the remainders R_… and Ê_a, Ê_b
    (exact SymPy constants: π, ζ(3), rationals). Checked: i ≥ 0 always and i ≥ 1 where j ≥ 1."""
    from stumpcheck.theory import margin_quantities as mq

    x_value, _ = log_r_on_relation()
    out = {}
    for name, expr in zip(("S", "D"), field_in_F()):
        expr = _expand_denominator(_replace_functions(expr))
        terms = _laurent_terms(expr)
        final = {}
        for (i, j), coefficient in terms.items():
            coefficient = sp.expand(coefficient.subs(_X, x_value))
            if coefficient == 0:
                continue
            if i < 0 or (j > 0 and i < 1):
                raise ArithmeticError(f"{name} has an unbounded term ε^{i}·ℓ^{j}·({coefficient}) at ε → 0")
            final[(i, j)] = coefficient
        if final.keys() and not {s for c in final.values() for s in c.free_symbols} <= (
                {mq.w, E_a_hat, E_b_hat, _Q} | set(_R.values())):
            raise ArithmeticError(f"{name} has symbols beyond w, the remainders and Ê")
        out[name] = dict(sorted(final.items()))
    return out


@cache
def limits() -> dict:
    """{"S": lim_{ε→0} S, "D": lim D} in w: the ε⁰ℓ⁰ coefficients at R = c_N (their values at ε = 0), Ê = 0."""
    values = {_R[name]: taylor_form(series, ORDER_EXP if var == "z" else ORDER_R).coefficients[-1]
              for name, (series, var) in REMAINDERS.items()}
    values.update({E_a_hat: 0, E_b_hat: 0, _Q: 1})
    return {name: sp.simplify(terms.get((0, 0), sp.S.Zero).subs(values)) for name, terms in scaled_margins().items()}


def margins_srepr() -> str:
    """A canonical text of the scaled margins (what a certificate's digest of the derivation hashes)."""
    parts = []
    for name, terms in scaled_margins().items():
        for (i, j), coefficient in terms.items():
            parts.append(f"{name}[{i},{j}]={sp.srepr(coefficient)}")
    return "\n".join(parts)


def remainder_symbol(name: str) -> sp.Symbol:
    """The SymPy symbol of remainder ``name`` (a key of :data:`REMAINDERS`)."""
    return _R[name]
