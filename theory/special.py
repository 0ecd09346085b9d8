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
checked. The forms themselves are derived in :mod:`stumpcheck.theory.special_forms`
(re-exported here).

:class:`SoftmaxWeight` is a softmax weight kept unevaluated for the same
reason: it is evaluated with the maximum shifted out, and its derivative never
forms the cancelling complement 1 − w.

The three functions evaluate like SymPy's own: ``expr.evalf(n)`` gives n correct
digits (``_eval_evalf`` runs the mpmath forms of :mod:`stumpcheck.theory.special_mpmath`
with guard bits, raised until two evaluations agree), and
``sp.lambdify(args, expr, "numpy")``, ``"mpmath"`` or ``"jax"`` prints them as calls of stable
helpers (``_numpycode``, ``_mpmathcode``, ``_jaxcode``): the float64 helpers that
:mod:`stumpcheck.theory.codegen_numpy` prints and the JAX ones of :mod:`stumpcheck.theory.codegen_jax`
(both served by :mod:`stumpcheck.theory.evaluate`)
and the mpmath functions of :mod:`stumpcheck.theory.special_mpmath`, with rates such as
b − bθ printed as b(1 − θ) and a softmax weight as 1/Σ_i e^{ℓ_i − ℓ_j}, the differences
expanded so that what the log-masses share cancels symbolically. A printer with its own
method for one of them (the project's code printers, the paper's LaTeX printer) prints it
itself. LaTeX: Λ(β), κ_k(β) and softmax_j(ℓ₁, …, ℓ_n) as in docs/model.md.
"""

from __future__ import annotations

import mpmath
import sympy as sp

from stumpcheck.theory.special_forms import (P, Q, cumulant_exp_form, large_rate_form, log_mass_exp_form,
                                             taylor_coefficients, value_at_zero)
from stumpcheck.theory.special_mpmath import (absolute_mpf, evalf_checked, softmax_weight_differences_mpmath,
                                              special_mpmath)

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

#: The module whose float64 helpers lambdify's numpy code imports (a printed name: nothing is imported here).
_FLOAT64_HELPERS = "stumpcheck.theory.evaluate"
#: The module of the mpmath functions lambdify's mpmath code imports.
_MPMATH_HELPERS = "stumpcheck.theory.special_mpmath"


def _own_printing(expr: sp.Basic, printer, **kwargs) -> str | None:
    """The printer's own method for this class (``_print_<Class>``), if it has one: the project's code
    printers and the paper's LaTeX printer print the model's functions themselves."""
    method = getattr(printer, f"_print_{type(expr).__name__}", None)
    return None if method is None else method(expr, **kwargs)


def _power(tex: str, exp: str | None) -> str:
    """``tex`` raised to ``exp`` (SymPy's LaTeX printer passes the exponent of f(x)^n to f's printing)."""
    return tex if exp is None else r"%s^{%s}" % (tex, exp)


def _helper_call(printer, module: str, name: str, args: list[str]) -> str:
    """A call of ``module.name`` as the printer writes it; lambdify imports the names printers register."""
    return "%s(%s)" % (printer._module_format(f"{module}.{name}"), ", ".join(args))


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

    def _eval_evalf(self, prec):
        (arg,) = self.args
        if not arg.is_number:
            return self.func(arg._evalf(prec))

        def compute(bits):
            with mpmath.workprec(bits):
                return special_mpmath(0, arg._to_mpmath(bits))

        return evalf_checked(compute, prec)

    def _numpycode(self, printer):
        own = _own_printing(self, printer)
        if own is not None:
            return own
        # b − bθ as b(1 − θ): in float64 1 − θ is exact, b − bθ has an error of b times an ulp
        return _helper_call(printer, _FLOAT64_HELPERS, "trunc_exp_log_mass_numpy",
                            [printer._print(sp.factor_terms(self.args[0]))])

    def _mpmathcode(self, printer):
        own = _own_printing(self, printer)
        if own is not None:
            return own
        return _helper_call(printer, _MPMATH_HELPERS, "trunc_exp_log_mass_mpmath",
                            [printer._print(sp.factor_terms(self.args[0]))])

    def _jaxcode(self, printer):
        own = _own_printing(self, printer)
        if own is not None:
            return own
        return _helper_call(printer, _FLOAT64_HELPERS, "trunc_exp_log_mass_jax",
                            [printer._print(sp.factor_terms(self.args[0]))])

    def _latex(self, printer, exp=None):
        own = _own_printing(self, printer, exp=exp)
        if own is not None:
            return own
        return _power(r"\Lambda\left(%s\right)" % printer._print(self.args[0]), exp)


class TruncExpCumulant(sp.Function):
    """κ_k(β), the k-th cumulant of the density ∝ e^{−βτ} on [0, 1]; dκ_k/dβ = −κ_{k+1}."""

    nargs = 2

    @classmethod
    def eval(cls, order, arg):
        if not (order.is_Integer and order >= 1):
            raise ValueError(f"cumulant order must be a positive integer, got {order}")
        if arg.is_zero:
            return value_at_zero(int(order))
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

    def _eval_evalf(self, prec):
        order, arg = self.args
        if not arg.is_number:
            return self.func(order, arg._evalf(prec))

        def compute(bits):
            with mpmath.workprec(bits):
                return special_mpmath(int(order), arg._to_mpmath(bits))

        return evalf_checked(compute, prec)

    def _numpycode(self, printer):
        own = _own_printing(self, printer)
        if own is not None:
            return own
        order, arg = self.args
        return _helper_call(printer, _FLOAT64_HELPERS, "trunc_exp_cumulant_numpy",
                            [str(int(order)), printer._print(sp.factor_terms(arg))])

    def _mpmathcode(self, printer):
        own = _own_printing(self, printer)
        if own is not None:
            return own
        order, arg = self.args
        return _helper_call(printer, _MPMATH_HELPERS, "trunc_exp_cumulant_mpmath",
                            [str(int(order)), printer._print(sp.factor_terms(arg))])

    def _jaxcode(self, printer):
        own = _own_printing(self, printer)
        if own is not None:
            return own
        order, arg = self.args
        return _helper_call(printer, _FLOAT64_HELPERS, "trunc_exp_cumulant_jax",
                            [str(int(order)), printer._print(sp.factor_terms(arg))])

    def _latex(self, printer, exp=None):
        own = _own_printing(self, printer, exp=exp)
        if own is not None:
            return own
        order, arg = self.args
        return _power(r"\kappa_{%s}\left(%s\right)" % (printer._print(order), printer._print(arg)), exp)


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

    def differences(self) -> list[sp.Expr]:
        """ℓ_i − ℓ_j for every entry i (j this weight's index), expanded so that shared terms cancel."""
        ells = self.log_masses
        return [sp.expand(ell - ells[self.index]) for ell in ells]

    def _eval_evalf(self, prec):
        ells = self.log_masses
        if not all(ell.is_number for ell in ells):
            return self.func(self.args[0], *[ell._evalf(prec) for ell in ells])
        differences = [ell - ells[self.index] for ell in ells]  # numbers: SymPy's evalf handles cancellation

        def compute(bits):
            ds = [absolute_mpf(d, bits) for d in differences]
            with mpmath.workprec(bits):
                return softmax_weight_differences_mpmath(*ds)

        return evalf_checked(compute, prec)

    def _numpycode(self, printer):
        own = _own_printing(self, printer)
        if own is not None:
            return own
        return _helper_call(printer, _FLOAT64_HELPERS, "softmax_weight_differences_numpy",
                            [printer._print(d) for d in self.differences()])

    def _mpmathcode(self, printer):
        own = _own_printing(self, printer)
        if own is not None:
            return own
        return _helper_call(printer, _MPMATH_HELPERS, "softmax_weight_differences_mpmath",
                            [printer._print(d) for d in self.differences()])

    def _jaxcode(self, printer):
        own = _own_printing(self, printer)
        if own is not None:
            return own
        return _helper_call(printer, _FLOAT64_HELPERS, "softmax_weight_differences_jax",
                            [printer._print(d) for d in self.differences()])

    def _latex(self, printer, exp=None):
        own = _own_printing(self, printer, exp=exp)
        if own is not None:
            return own
        masses = ", ".join(printer._print(ell) for ell in self.log_masses)
        return _power(r"\operatorname{softmax}_{%d}\left(%s\right)" % (self.index + 1, masses), exp)
