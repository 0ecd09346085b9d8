"""The truncated-exponential functions in which the model's closed forms are stable.

For a rate β ∈ ℝ let U have the density ∝ e^{−βτ} on τ ∈ [0, 1]. Every segment of
the one-head model's score is linear in x, so every population quantity is built
from two entire functions of β:

* the **log-mass** Λ(β) = log ∫₀¹ e^{−βτ} dτ = log((1 − e^{−β})/β), Λ(0) = 0;
* the **cumulants** κ_k(β) = (−1)^k Λ^{(k)}(β) of U; κ₁ is the mean,
  κ₂ the variance, and dκ_k/dβ = −κ_{k+1}.

In their exponential form both cancel catastrophically for small |β| (this is
the hazard "1 − (1 + z)e^{−z}" of docs/model.md §8) and overflow for large −β.
Keeping them as named functions lets the exported and evaluated code choose a
stable evaluation (Taylor polynomial near 0, a form in q = e^{−|β|} far from
it, with κ₁(−β) = 1 − κ₁(β), κ_k(−β) = (−1)^k κ_k(β) for k ≥ 2 and
Λ(−β) = β + Λ(β)); :meth:`rewrite(sp.exp) <sympy.core.basic.Basic.rewrite>`
gives the defining closed form back, which is how every identity here is
checked.

:class:`SoftmaxWeight` is a softmax weight kept unevaluated for the same
reason: it is evaluated with the maximum shifted out, and its derivative never
forms the cancelling complement 1 − w.
"""

from __future__ import annotations

from functools import cache

import sympy as sp

from stumpcheck.theory.symbols import beta

__all__ = [
    "TruncExpLogMass",
    "TruncExpCumulant",
    "SoftmaxWeight",
    "log_mass_exp_form",
    "cumulant_exp_form",
    "taylor_coefficients",
    "large_rate_form",
    "Q",
    "P",
]

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
def _value_at_zero(order: int) -> sp.Rational:
    """κ_k(0) = (−1)^k k! [β^k]Λ, read off the Taylor series of Λ."""
    return (-1) ** order * sp.factorial(order) * taylor_coefficients(0, order)[order]


class TruncExpLogMass(sp.Function):
    """Λ(β) = log ∫₀¹ e^{−βτ} dτ, entire in β; dΛ/dβ = −κ₁(β)."""

    nargs = 1

    @classmethod
    def eval(cls, arg):
        if arg.is_zero:
            return sp.S.Zero
        return None

    def fdiff(self, argindex=1):
        return -TruncExpCumulant(1, self.args[0])

    def _eval_rewrite_as_exp(self, arg, **kwargs):
        return log_mass_exp_form(arg)

    def _eval_is_real(self):
        return self.args[0].is_real

    def _latex(self, printer):
        return r"\Lambda\left(%s\right)" % printer._print(self.args[0])


class TruncExpCumulant(sp.Function):
    """κ_k(β), the k-th cumulant of the density ∝ e^{−βτ} on [0, 1]; dκ_k/dβ = −κ_{k+1}."""

    nargs = 2

    @classmethod
    def eval(cls, order, arg):
        if not (order.is_Integer and order >= 1):
            raise ValueError(f"cumulant order must be a positive integer, got {order}")
        if arg.is_zero:
            return _value_at_zero(int(order))
        return None

    def fdiff(self, argindex=2):
        if argindex != 2:
            raise sp.ArgumentIndexError(self, argindex)
        order, arg = self.args
        return -TruncExpCumulant(order + 1, arg)

    def _eval_rewrite_as_exp(self, order, arg, **kwargs):
        return cumulant_exp_form(int(order), arg)

    def _eval_is_real(self):
        return self.args[1].is_real

    def _latex(self, printer):
        order, arg = self.args
        return r"\kappa_{%s}\left(%s\right)" % (printer._print(order), printer._print(arg))


class SoftmaxWeight(sp.Function):
    """w_j(ℓ₁, …, ℓ_n) = e^{ℓ_j} / Σ_i e^{ℓ_i}, the softmax weight of entry j (0-based).

    Called as ``SoftmaxWeight(j, ℓ₁, …, ℓ_n)``. Its derivative with respect to
    any symbol p is taken in the form

        ∂w_j/∂p = w_j · Σ_{i≠j} w_i · ∂(ℓ_j − ℓ_i)/∂p,

    with each difference ℓ_j − ℓ_i differentiated after SymPy has cancelled
    what the two log-masses share. This never forms the complement 1 − w_j, and
    when several ℓ_i carry the same term (two pooled segments both contain a)
    their contributions cancel symbolically instead of in floating point.
    Numerically w_j = 1 / Σ_i exp(ℓ_i − ℓ_j), the differences again simplified
    by SymPy before printing (see :mod:`stumpcheck.theory.codegen`).
    """

    @classmethod
    def eval(cls, index, *log_masses):
        if not (index.is_Integer and 0 <= index < len(log_masses)):
            raise ValueError(f"softmax index {index} out of range for {len(log_masses)} entries")
        if len(log_masses) == 1:
            return sp.S.One
        return None

    @property
    def index(self) -> int:
        return int(self.args[0])

    @property
    def log_masses(self) -> tuple:
        return self.args[1:]

    def fdiff(self, argindex=1):
        if argindex == 1:
            raise sp.ArgumentIndexError(self, argindex)
        i = argindex - 2
        j = self.index
        weights = [SoftmaxWeight(n, *self.log_masses) for n in range(len(self.log_masses))]
        if i == j:
            return self * sp.Add(*[w for n, w in enumerate(weights) if n != j])
        return -self * weights[i]

    def _eval_derivative(self, symbol):
        j = self.index
        ells = self.log_masses
        weights = [SoftmaxWeight(n, *ells) for n in range(len(ells))]
        terms = []
        for i, weight in enumerate(weights):
            if i == j:
                continue
            slope = sp.diff(sp.expand(ells[j] - ells[i]), symbol)
            if slope != 0:
                terms.append(weight * slope)
        return self * sp.Add(*terms)

    def _eval_rewrite_as_exp(self, index, *log_masses, **kwargs):
        return sp.exp(log_masses[int(index)]) / sp.Add(*[sp.exp(ell) for ell in log_masses])

    def _eval_is_positive(self):
        return all(ell.is_real for ell in self.log_masses) or None

    def _latex(self, printer):
        masses = ", ".join(printer._print(ell) for ell in self.log_masses)
        return r"\operatorname{softmax}_{%d}\left(%s\right)" % (self.index + 1, masses)


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
