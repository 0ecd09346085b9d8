"""The closed forms of the truncated-exponential functions Λ and κ_k, derived by SymPy.

* the exponential forms (:func:`log_mass_exp_form`, :func:`cumulant_exp_form`), from the
  defining integral Λ(β) = log ∫₀¹ e^{−βτ} dτ and κ_k = (−1)^k Λ^{(k)};
* their exact Taylor coefficients about β = 0 (:func:`taylor_coefficients`);
* the large-rate forms in p = 1/(e^{|β|} − 1) (:func:`large_rate_form`).

The functions themselves are :class:`stumpcheck.theory.special.TruncExpLogMass` and
:class:`stumpcheck.theory.special.TruncExpCumulant`; every printer and evaluator builds on the
forms here.
"""

from __future__ import annotations

from functools import cache

import sympy as sp

from stumpcheck.theory.symbols import beta

__all__ = ["log_mass_exp_form", "cumulant_exp_form", "taylor_coefficients", "large_rate_form", "value_at_zero",
           "Q", "P"]

#: Symbols for q = e^{−|β|} and p = q/(1 − q) = 1/(e^{|β|} − 1) in the large-rate forms.
Q = sp.Symbol("q", positive=True)
P = sp.Symbol("p", positive=True)


def log_mass_exp_form(arg: sp.Expr) -> sp.Expr:
    """Λ(β) in exponential form: log((1 − e^{−β})/β), from the defining integral."""
    tau = sp.Dummy("tau", real=True)
    mass = sp.integrate(sp.exp(-beta * tau), (tau, 0, 1), conds="none")
    mass = sp.piecewise_fold(mass)
    if isinstance(mass, sp.Piecewise):  # the β = 0 branch is the limit, kept in eval
        mass = next(expr for expr, cond in mass.args if cond != sp.true and cond is not True)
    return sp.log(sp.simplify(mass)).subs(beta, arg)


@cache
def _cumulant_exp_form_in_beta(order: int) -> sp.Expr:
    return sp.simplify((-1) ** order * sp.diff(log_mass_exp_form(beta), beta, order))


def cumulant_exp_form(order: int, arg: sp.Expr) -> sp.Expr:
    """κ_k(β) in exponential form, (−1)^k d^kΛ/dβ^k differentiated by SymPy."""
    return _cumulant_exp_form_in_beta(int(order)).subs(beta, arg)


@cache
def value_at_zero(order: int) -> sp.Rational:
    """κ_k(0) = (−1)^k k! [β^k]Λ, read off the Taylor series of Λ."""
    return (-1) ** order * sp.factorial(order) * taylor_coefficients(0, order)[order]


@cache
def _log_mass_series(degree: int) -> tuple[sp.Rational, ...]:
    """Taylor coefficients of Λ to β^degree.

    The mass ∫₀¹ e^{−βτ} dτ is expanded under the integral (each coefficient
    ∫₀¹ (−τ)^n/n! dτ integrated by SymPy) and its logarithm taken with SymPy's
    ring-series ``rs_log``, which is exact and fast to high degree.
    """
    from sympy import QQ
    from sympy.polys.ring_series import rs_log
    from sympy.polys.rings import ring

    tau = sp.Dummy("tau", positive=True)
    ring_, z = ring("z", QQ)
    mass = ring_(0)
    for n in range(degree + 2):
        coefficient = sp.integrate((-tau) ** n / sp.factorial(n), (tau, 0, 1))
        mass += QQ(int(coefficient.p), int(coefficient.q)) * z**n
    series = rs_log(mass, z, degree + 1)
    return tuple(sp.Rational(int(c.numerator), int(c.denominator)) for c in
                 (series.coeff(z**n) if n else series.coeff(1) for n in range(degree + 1)))


@cache
def taylor_coefficients(order: int, degree: int) -> tuple[sp.Rational, ...]:
    """Exact Taylor coefficients c_0..c_degree of κ_k about β = 0 (order 0 means Λ).

    κ_k = (−1)^k Λ^{(k)}, so its coefficients are those of Λ shifted and scaled.
    The series converges for |β| < 2π (the nearest poles of κ_k are at ±2πi).
    """
    base = _log_mass_series(degree + order)
    return tuple(
        (-1) ** order * sp.ff(n + order, order) * base[n + order] for n in range(degree + 1)
    )


@cache
def large_rate_form(order: int) -> sp.Expr:
    """κ_k(β) (order 0: Λ(β)) for β > 0, written in β and p = 1/(e^β − 1) = q/(1 − q).

    Obtained from the exponential form by the substitution e^{cβ} → q^{−c} with
    q = e^{−β} and then q = p/(1 + p). The result is 1/β^k plus a polynomial in p
    (e.g. κ₁ = 1/β − p, κ₂ = 1/β² − p − p²); for β ≥ 2, p < 0.16 and nothing
    overflows or cancels beyond a few bits. Order 0 is log(1 − q) − log β.
    """
    if order == 0:
        return sp.log(1 - Q) - sp.log(beta)
    expr = _cumulant_exp_form_in_beta(order)
    replaced = expr.replace(
        lambda node: isinstance(node, sp.exp),
        lambda node: Q ** sp.simplify(-node.args[0] / beta),
    )
    in_p = sp.cancel(sp.together(replaced.subs(Q, P / (1 + P))))
    return sp.expand(in_p)
