"""Symbolic rewrites of the derived expressions before they are printed, and the identities behind them.

Every rewrite is an identity of the model's functions, applied by SymPy so that
cancellations happen symbolically instead of in floating point or ball arithmetic:

* log(1 − z) → log1p(−z) and e^z − 1 → expm1(z) (:func:`stabilize`, SymPy's
  ``codegen.rewriting`` optimizer);
* c·k + d·k·θ → k·(c·(1 − θ) + (c + d)·θ) with 1 − θ one variable
  (:func:`complement_theta`), which keeps the relative accuracy of 1 − θ near θ = 1;
* a softmax weight w_j = 1/Σ_i e^{ℓ_i − ℓ_j} with the differences ℓ_i − ℓ_j
  simplified (:func:`softmax_as_differences`, the float targets), or, with
  ℓ_i = log F_i + m_i, w_j = F_j e^{m_j}/Σ_i F_i e^{m_i} (:func:`factor_softmax_weights`,
  the Arb target: no logarithm of θ or 1 − θ is left);
* rates free of a leading minus sign through the reflections Λ(−x) = x + Λ(x),
  κ₁(−x) = 1 − κ₁(x), κ_k(−x) = (−1)^k κ_k(x) (:func:`canonical_rates`), which
  :func:`reflection_identities` states for SymPy to prove; and b − bθ as b(1 − θ)
  (:func:`factored_rates`).
"""

from __future__ import annotations

import sympy as sp
from sympy.codegen.rewriting import expm1_opt, log1p_opt, optimize

from stumpcheck.theory.special import (SoftmaxWeight, TruncExpCumulant, TruncExpLogMass, cumulant_exp_form,
                            log_mass_exp_form)
from stumpcheck.theory.symbols import beta, theta

__all__ = ["ONE_MINUS_THETA", "MAX_CUMULANT_ORDER", "stabilize", "complement_theta", "SoftmaxFromDifferences",
           "softmax_as_differences", "factored_rates", "canonical_rates", "FactoredSoftmaxWeight",
           "factor_softmax_weights", "reflection_identities"]

#: The name of 1 − θ in the printed code (see :func:`stumpcheck.theory.codegen.function_source`).
ONE_MINUS_THETA = sp.Symbol("one_minus_theta", positive=True)

#: Highest κ_k the generated modules provide (the Hessian of e needs κ₃).
MAX_CUMULANT_ORDER = 4


def complement_theta(expr: sp.Expr) -> sp.Expr:
    """Rewrite c·k + d·k·θ (k free of θ, c, d ≠ 0 numbers) in every sum as k·(c·(1 − θ) + (c + d)·θ).

    1 − θ is the symbol ``one_minus_theta``. The pooled estimator's log-weights hold a − b + bθ and
    b − 2bθ; printed as such they cost an absolute error of about b·2⁻⁵³ wherever the sum is small
    (θ near 1 at large b), while −b·(1 − θ) and b·((1 − θ) − θ) keep the relative accuracy of
    1 − θ (a caller passes it exactly). Terms with other powers of θ are left alone.
    """
    def rewrite(node):
        constants, slopes, rest = {}, {}, []
        for term in node.args:
            coeff, factor = term.as_coeff_Mul()
            free, bound = factor.as_independent(theta, as_Add=False)
            if bound == 1 and coeff.is_Rational:
                constants[free] = constants.get(free, 0) + coeff
            elif bound == theta and coeff.is_Rational:
                slopes[free] = slopes.get(free, 0) + coeff
            else:
                rest.append(term)
        if not set(constants) & set(slopes):
            return node
        for free in set(constants) | set(slopes):
            c, d = constants.get(free, 0), slopes.get(free, 0)
            if c and d:
                rest.append(free * (c * ONE_MINUS_THETA + (c + d) * theta))
            else:
                rest.append(free * (c + d * theta))
        return sp.Add(*rest)

    return expr.replace(lambda node: isinstance(node, sp.Add), rewrite)


def stabilize(expr: sp.Expr, *, expm1: bool = False) -> sp.Expr:
    """Apply SymPy's log1p rewrite (log(1 − z) → log1p(−z)) and, if asked, expm1.

    The expm1 optimizer factors its argument, which is slow on the large
    derivative trees and useless there (they hold no e^z − 1); it is applied to
    the special functions' exponential forms only.
    """
    return optimize(expr, [log1p_opt, expm1_opt] if expm1 else [log1p_opt])


class SoftmaxFromDifferences(sp.Function):
    """1/Σ_i exp(d_i), d_i = ℓ_i − ℓ_j already simplified: a softmax weight as printed.

    :func:`softmax_as_differences` replaces every SoftmaxWeight by it before
    common-subexpression elimination, so that what ℓ_i and ℓ_j share (a, bθ,
    log θ, …) cancels symbolically and never meets in floating point (where
    it would cost |a|·eps, or give ∞ − ∞ at θ ∈ {0, 1}).
    """


def softmax_as_differences(expr: sp.Expr) -> sp.Expr:
    """Rewrite each SoftmaxWeight(j, ℓ) as SoftmaxFromDifferences(ℓ_0 − ℓ_j, …, ℓ_n − ℓ_j)."""
    def rewrite(weight):
        ells = weight.log_masses
        return SoftmaxFromDifferences(*[sp.expand(ell - ells[weight.index]) for ell in ells])

    return expr.replace(lambda node: isinstance(node, SoftmaxWeight), rewrite)


def _split_log_mass(ell: sp.Expr) -> tuple[sp.Expr, sp.Expr]:
    """ℓ = log F + m: (F, m), F the product of the arguments of ℓ's logarithm terms.

    The terms of m free of functions are expanded, so that linear parts that
    cancel (bθ − b + b(1 − θ) after a reflection) cancel symbolically instead
    of in ball arithmetic, where each of them would carry b times θ's radius.
    """
    factor, functions, polynomial = sp.S.One, [], []
    for term in sp.Add.make_args(ell):
        if isinstance(term, sp.log):
            factor *= term.args[0]
        elif term.atoms(sp.Function):
            functions.append(term)
        else:
            polynomial.append(term)
    return factor, sp.expand(sp.Add(*polynomial)) + sp.Add(*functions)


def factored_rates(expr: sp.Expr) -> sp.Expr:
    """Rates such as b − bθ (from the chain rule) as b(1 − θ), the product form."""
    return expr.replace(lambda node: isinstance(node, (TruncExpLogMass, TruncExpCumulant)),
                        lambda node: node.func(*node.args[:-1], sp.factor_terms(node.args[-1])))


def canonical_rates(expr: sp.Expr) -> sp.Expr:
    """Λ, κ_k and softmax weights written with rates free of a leading minus sign.

    Λ(−x) → x + Λ(x), κ₁(−x) → 1 − κ₁(x), κ_k(−x) → (−1)^k κ_k(x) (the reflections
    :func:`reflection_identities` proves), and the function-free part of every
    softmax log-mass expanded. For the reflected head this turns the log-mass
    bθ − b + log(1 − θ) + Λ(−b(1 − θ)) into log(1 − θ) + Λ(b(1 − θ)) exactly: in
    ball arithmetic the unsimplified form carries twice b times θ's radius and,
    differentiated, cancels O(1) terms down to O(1/b). The Arb target differentiates
    this form (export.py), so its ∇e and ∇²e inherit the cancellation-free rates.
    """
    def log_mass(node):
        (arg,) = node.args
        return -arg + TruncExpLogMass(-arg) if arg.could_extract_minus_sign() else node

    def cumulant(node):
        order, arg = node.args
        if not arg.could_extract_minus_sign():
            return node
        if int(order) == 1:
            return 1 - TruncExpCumulant(1, -arg)
        return (-1) ** int(order) * TruncExpCumulant(order, -arg)

    def expanded(ell):
        functions = [t for t in sp.Add.make_args(ell) if t.atoms(sp.Function)]
        polynomial = [t for t in sp.Add.make_args(ell) if not t.atoms(sp.Function)]
        return sp.expand(sp.Add(*polynomial)) + sp.Add(*functions)

    expr = expr.replace(lambda node: isinstance(node, TruncExpLogMass), log_mass)
    expr = expr.replace(lambda node: isinstance(node, TruncExpCumulant), cumulant)
    return expr.replace(lambda node: isinstance(node, SoftmaxWeight),
                        lambda node: SoftmaxWeight(node.index, *[expanded(ell) for ell in node.log_masses]))


class FactoredSoftmaxWeight(sp.Function):
    """w_j = F_j e^{m_j} / Σ_i F_i e^{m_i}: a softmax weight with ℓ_i = log F_i + m_i split.

    Called as ``FactoredSoftmaxWeight(j, F_0, …, F_{n−1}, m_0, …, m_{n−1})``; a
    printing node of the Arb target only (no derivative, never simplified).
    """

    @property
    def index(self) -> int:
        return int(self.args[0])

    @property
    def factors(self) -> tuple:
        return self.args[1:1 + (len(self.args) - 1) // 2]

    @property
    def exponents(self) -> tuple:
        return self.args[1 + (len(self.args) - 1) // 2:]

    def _arbcode(self, printer):
        return "softmax_weight_factored(%d, (%s,), (%s,))" % (
            self.index, ", ".join(printer._print(f) for f in self.factors),
            ", ".join(printer._print(m) for m in self.exponents))


def factor_softmax_weights(expr: sp.Expr) -> sp.Expr:
    """Rewrite every w_j = e^{ℓ_j}/Σ_i e^{ℓ_i} as F_j e^{m_j}/Σ_i F_i e^{m_i}, ℓ_i = log F_i + m_i.

    The identity e^{log F} = F holds on every branch of the logarithm, so the
    rewritten weight is the same function without the logarithms' branch cuts
    (for the model F_i is θ or 1 − θ, and the weights become analytic at θ = 0
    and θ = 1). The Arb helper ``softmax_weight_factored`` evaluates it as
    F_j e^{m_j − m_r} / Σ_i F_i e^{m_i − m_r}, r the index of the largest m_i,
    so that no exponential in it is large (a wide ball of a large exponential
    would contain 0 and make the quotient indeterminate).
    """
    def rewrite(weight):
        parts = [_split_log_mass(ell) for ell in weight.log_masses]
        return FactoredSoftmaxWeight(weight.index, *[f for f, _ in parts], *[m for _, m in parts])

    return expr.replace(lambda node: isinstance(node, SoftmaxWeight), rewrite)


def reflection_identities() -> list[sp.Expr]:
    """Expressions that must simplify to 0: the reflections the helpers rely on.

    Λ(−β) − β − Λ(β), κ₁(−β) − 1 + κ₁(β), κ_k(−β) − (−1)^k κ_k(β) for 2 ≤ k ≤ 4.
    """
    out = [log_mass_exp_form(-beta) - beta - log_mass_exp_form(beta),
           cumulant_exp_form(1, -beta) - 1 + cumulant_exp_form(1, beta)]
    for order in range(2, MAX_CUMULANT_ORDER + 1):
        out.append(cumulant_exp_form(order, -beta) - (-1) ** order * cumulant_exp_form(order, beta))
    return out

