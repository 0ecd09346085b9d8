"""Printers that turn the derived expressions into Python for numpy, mpmath and Arb.

Each target is its own printer (SymPy's design): a subclass of SymPy's NumPy or
mpmath printer that knows how to print :mod:`theory.special`'s functions as
calls to helpers defined in the generated module itself. Numerically stable
rewrites (log(1 − θ) → log1p(−θ), e^z − 1 → expm1(z)) are applied by SymPy's
``codegen.rewriting`` optimizer before printing, never by editing strings.

The generated modules are self-contained (they import only numpy or mpmath):

* ``trunc_exp_log_mass(beta)`` Λ(β) and ``trunc_exp_cumulant(k, beta)`` κ_k(β);
  numpy: the Taylor polynomial derived by SymPy for |β| < 2 (degree 40, error
  < 1e-19 relative to the series' radius 2π) and SymPy's form in p = 1/(e^{|β|} − 1)
  beyond, with the reflections Λ(−β) = β + Λ(β), κ₁(−β) = 1 − κ₁(β),
  κ_k(−β) = (−1)^k κ_k(β) (k ≥ 2) that :func:`reflection_identities` proves;
  mpmath: the exponential form at the working precision plus
  (2k + 2)·log₂(1/|β|) + 20 guard bits (the form cancels about 2k·log₂(1/|β|) bits), and the Taylor polynomial once
  |β| < 2^{−prec} (where it is exact to the working precision);
* ``softmax_weight(j, *ell)``, with the maximum shifted out;
* one function per derived quantity and estimator.

The **Arb** target (:class:`ArbModelPrinter`, python-flint ``acb`` balls) is
rigorous rather than merely stable: every helper returns a ball that contains
the exact value. For it

* the moments M_j(β) = ∫₀¹ τ^j e^{−βτ} dτ are summed from their power series
  (coefficients integrated by SymPy, :func:`moment_series_coefficient`) with
  the tail bound |β|^{N+1} e^{|β|}/(N+1)! added to the ball's radius, whenever
  an upper bound of |β| is ≤ ``ARB_SERIES_SWITCH``; then Λ = log M₀ and κ_k
  follows from m_k = M_k/M₀ by the moment → cumulant identities SymPy expands
  from the cumulant generating function (:func:`cumulants_from_moments`);
* beyond, the large-rate forms in p = 1/(e^{β} − 1) (Re β > 0) and the
  reflections (Re β < 0) are evaluated in ball arithmetic;
* the softmax weights are rewritten by SymPy (:func:`factor_softmax_weights`)
  from w_j = e^{ℓ_j}/Σ e^{ℓ_i} with ℓ_i = log F_i + m_i (F_i = θ or 1 − θ, the
  segment lengths) into F_j e^{m_j}/Σ_i F_i e^{m_i}, evaluated with the largest
  m_i shifted out (:class:`FactoredSoftmaxWeight`). The logarithms of
  θ and 1 − θ only ever appeared inside these exponentials, so the printed e,
  ∇e, ∇²e are free of them: meromorphic in θ apart from Λ (whose logarithm
  honours the ``analytic`` flag of ``acb.integral``), finite at θ = 0 and
  θ = 1, and without the endpoint branch points the log form would have;
* e is first written with sign-free rates (:func:`canonical_rates`:
  Λ(−x) = x + Λ(x), κ₁(−x) = 1 − κ₁(x), …, linear parts of the log-masses
  expanded) and ∇e, ∇²e are differentiated from that form (theory/export.py):
  ball arithmetic pays for every algebraic cancellation with b times θ's radius;
* 1 − θ is one variable (``one_minus_theta``), computed once per call.

The rigour of the Arb helpers is tested against mpmath at 50+ digits and by
the certified enclosures of :mod:`numerics.certified.enclosures` (tests/test_certified.py).
"""

from __future__ import annotations

from functools import cache

import sympy as sp
from sympy.codegen.rewriting import expm1_opt, log1p_opt, optimize
from sympy.printing.numpy import NumPyPrinter
from sympy.printing.pycode import MpmathPrinter, PythonCodePrinter

from theory.special import (P, Q, SoftmaxWeight, TruncExpCumulant, TruncExpLogMass,
                            cumulant_exp_form, large_rate_form, log_mass_exp_form,
                            taylor_coefficients)
from theory.symbols import beta, theta

#: The Arb target's name for 1 − θ (see :func:`function_source`).
ONE_MINUS_THETA = sp.Symbol("one_minus_theta", positive=True)

__all__ = ["NumpyModelPrinter", "MpmathModelPrinter", "ArbModelPrinter", "stabilize",
           "factor_softmax_weights", "FactoredSoftmaxWeight", "canonical_rates", "complement_theta", "factored_rates", "function_source",
           "special_functions_source",
           "reflection_identities", "moment_series_coefficient", "cumulants_from_moments",
           "MAX_CUMULANT_ORDER", "TAYLOR_DEGREE", "TAYLOR_SWITCH", "ARB_SERIES_SWITCH",
           "ARB_SERIES_CAP", "TARGETS"]

#: Highest κ_k the generated modules provide (the Hessian of e needs κ₃).
MAX_CUMULANT_ORDER = 4
#: Degree of the Taylor polynomials used by the numpy helpers for |β| < TAYLOR_SWITCH.
TAYLOR_DEGREE = 40
TAYLOR_SWITCH = 2
#: The Arb helpers sum the moment series when an upper bound of |β| is at most this.
ARB_SERIES_SWITCH = 1
#: ... and also up to this bound when the sign of Re β is uncertain (a ball
#: straddling the imaginary axis); beyond it they return an indeterminate ball.
ARB_SERIES_CAP = 16
#: The code targets, each with its own printer.
TARGETS = ("numpy", "mpmath", "arb")


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


class _SpecialPrinting:
    def _print_TruncExpLogMass(self, expr):
        return "trunc_exp_log_mass(%s)" % self._print(expr.args[0])

    def _print_TruncExpCumulant(self, expr):
        return "trunc_exp_cumulant(%d, %s)" % (int(expr.args[0]), self._print(expr.args[1]))

    def _print_SoftmaxWeight(self, expr):
        return "softmax_weight(%d, %s)" % (expr.index, ", ".join(self._print(a) for a in expr.log_masses))

    def _print_SoftmaxFromDifferences(self, expr):
        return "softmax_weight_differences(%s)" % ", ".join(self._print(d) for d in expr.args)


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


class NumpyModelPrinter(_SpecialPrinting, NumPyPrinter):
    """NumPy printer that knows Λ, κ_k and softmax weights."""


class MpmathModelPrinter(_SpecialPrinting, MpmathPrinter):
    """mpmath printer that knows Λ, κ_k and softmax weights."""


class ArbModelPrinter(PythonCodePrinter):
    """python-flint ``acb`` ball-arithmetic printer that knows Λ, κ_k and softmax weights.

    Elementary functions become calls of the generated module's helpers
    (``_exp``, ``_expm1``, ``_log``, ``_log1p``); the logarithms and Λ take the
    ``analytic`` flag of the enclosing generated function, so that a ball
    touching a branch cut gives a non-finite ball when ``analytic`` is true
    (``acb.integral``'s contract). Rationals are printed as exact ball
    quotients, never as Python floats.
    """

    printmethod = "_arbcode"

    def _print_TruncExpLogMass(self, expr):
        return "trunc_exp_log_mass(%s, analytic)" % self._print(expr.args[0])

    def _print_TruncExpCumulant(self, expr):
        return "trunc_exp_cumulant(%d, %s, analytic)" % (int(expr.args[0]), self._print(expr.args[1]))

    def _print_SoftmaxWeight(self, expr):
        return "softmax_weight(%d, %s)" % (expr.index, ", ".join(self._print(a) for a in expr.log_masses))

    def _print_exp(self, expr):
        return "_exp(%s)" % self._print(expr.args[0])

    def _print_expm1(self, expr):
        return "_expm1(%s)" % self._print(expr.args[0])

    def _print_log(self, expr):
        return "_log(%s, analytic)" % self._print(expr.args[0])

    def _print_log1p(self, expr):
        return "_log1p(%s, analytic)" % self._print(expr.args[0])

    def _print_Rational(self, expr):
        return "(acb(%d)/%d)" % (expr.p, expr.q)

    def _print_Half(self, expr):
        return self._print_Rational(expr)

    def _print_Pow(self, expr, rational=False):
        if not expr.exp.is_Integer:
            raise NotImplementedError(f"the Arb printer has no rigorous form for {expr}")
        return super()._print_Pow(expr, rational=rational)

    #: The functions it prints; any other (sin, Abs, …) is refused rather than printed as a math.* call.
    functions = ("exp", "expm1", "log", "log1p", "TruncExpLogMass", "TruncExpCumulant", "SoftmaxWeight",
                 "FactoredSoftmaxWeight")

    def _print(self, expr, **kwargs):
        if isinstance(expr, sp.Function) and type(expr).__name__ not in self.functions:
            raise NotImplementedError(f"the Arb printer does not know the function {expr.func}")
        return super()._print(expr, **kwargs)

    def _print_Float(self, expr):
        raise NotImplementedError(f"the Arb printer prints exact numbers only, not the float {expr}")

    def _print_NumberSymbol(self, expr):
        raise NotImplementedError(f"the Arb printer has no rigorous constant for {expr}")

    _print_Pi = _print_Exp1 = _print_EulerGamma = _print_Catalan = _print_GoldenRatio = _print_NumberSymbol
    _print_Infinity = _print_NegativeInfinity = _print_NaN = _print_ComplexInfinity = _print_NumberSymbol

    def _print_Piecewise(self, expr):
        raise NotImplementedError("the Arb printer cannot branch on ball comparisons")


def _printer(target: str):
    if target == "numpy":
        return NumpyModelPrinter({"fully_qualified_modules": True})
    if target == "mpmath":
        return MpmathModelPrinter({"fully_qualified_modules": True})
    if target == "arb":
        return ArbModelPrinter({"fully_qualified_modules": True})
    raise ValueError(f"unknown code target {target!r}; expected one of {', '.join(TARGETS)}")


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


def moment_series_coefficient() -> tuple[sp.Expr, sp.Expr, sp.Expr]:
    """(j, n, c): the coefficient c of β^n in M_j(β) = ∫₀¹ τ^j e^{−βτ} dτ.

    SymPy integrates ∫₀¹ τ^j (−τ)^n/n! dτ for symbolic integers j, n ≥ 0:
    c = (−1)^n / (n!·(n + j + 1)).
    """
    j, n = sp.symbols("j n", integer=True, nonnegative=True)
    tau = sp.Dummy("tau", positive=True)
    coefficient = sp.simplify(sp.integrate(tau**j * (-tau) ** n / sp.factorial(n), (tau, 0, 1)))
    return j, n, coefficient


@cache
def cumulants_from_moments(max_order: int = MAX_CUMULANT_ORDER) -> tuple[tuple[sp.Symbol, ...], tuple[sp.Expr, ...]]:
    """((m₁, …, m_K), (κ₁, …, κ_K)): cumulants in terms of raw moments m_k = E[U^k].

    From the cumulant generating function: κ_k = k!·[t^k] log(1 + Σ_k m_k t^k/k!),
    expanded by SymPy's ``series``.
    """
    t = sp.Dummy("t")
    moments = sp.symbols(f"m1:{max_order + 1}")
    generating = sp.log(1 + sum(m * t**k / sp.factorial(k) for k, m in enumerate(moments, start=1)))
    series = sp.expand(sp.series(generating, t, 0, max_order + 1).removeO())
    return moments, tuple(sp.expand(sp.factorial(k) * series.coeff(t, k)) for k in range(1, max_order + 1))


def _special_jets(flat: list) -> tuple[list, list]:
    """Replace every Λ(r), κ_k(r) by a symbol, one group per rate r: (expressions, [(names, r, max k)]).

    Each group is printed as one ``trunc_exp_jet(r, max k)`` call (numpy), which
    shares exp(−|r|) and the Taylor pass between the orders.
    """
    highest: dict = {}
    for expr in flat:
        for node in expr.atoms(TruncExpLogMass, TruncExpCumulant):
            order = 0 if isinstance(node, TruncExpLogMass) else int(node.args[0])
            rate = node.args[-1]
            highest[rate] = max(highest.get(rate, 0), order)
    mapping, calls = {}, []
    for i, rate in enumerate(sorted(highest, key=sp.default_sort_key)):
        names = [sp.Symbol(f"_lam{i}")] + [sp.Symbol(f"_kappa{k}_{i}") for k in range(1, highest[rate] + 1)]
        mapping[TruncExpLogMass(rate)] = names[0]
        for k in range(1, highest[rate] + 1):
            mapping[TruncExpCumulant(k, rate)] = names[k]
        calls.append((names, rate, highest[rate]))
    return [expr.xreplace(mapping) for expr in flat], calls


def function_source(name: str, args: tuple[sp.Symbol, ...], exprs, target: str, doc: str,
                    *, split_theta: bool = False, jets: bool = False) -> str:
    """A Python function ``name(*args)`` returning ``exprs`` (one expression or a tuple).

    Common subexpressions are shared through SymPy's ``cse``. With
    ``split_theta`` (numpy target) the function takes 1 − θ as a further
    argument ``one_minus_theta`` (default ``1 - theta``) and uses it wherever
    the expressions hold 1 − θ: near θ = 1 a caller that knows 1 − θ to full
    relative precision (a quadrature node placed by its distance from 1) then
    resolves layers narrower than the spacing of doubles there (1.1e-16); sums
    c·k + d·k·θ are printed through 1 − θ (:func:`complement_theta`, e.g. the
    pooled a − b + bθ as a − b·(1 − θ)); and
    the Λ, κ_k of each rate come from one ``trunc_exp_jet`` call. ``jets``
    does the latter alone, for the Arb target.
    """
    printer = _printer(target)
    single = isinstance(exprs, sp.Basic)
    flat = [exprs] if single else list(exprs)
    if split_theta:
        if target != "numpy":
            raise ValueError("split_theta is for the numpy target (Arb computes 1 − θ as a ball itself)")
        flat = [complement_theta(e.xreplace({1 - theta: ONE_MINUS_THETA, theta - 1: -ONE_MINUS_THETA}))
                for e in flat]
    if target == "arb":
        # 1 − θ becomes one symbol, computed once (exactly rounded) in the prologue, so that
        # sums such as (1 − θ) + θ·e^{…} do not recompute it with an absolute error
        flat = [factor_softmax_weights(factored_rates(e)).xreplace(
            {1 - theta: ONE_MINUS_THETA, theta - 1: -ONE_MINUS_THETA}) for e in flat]
    else:
        flat = [softmax_as_differences(e) for e in flat]
    jet_calls = []
    if split_theta or (target == "arb" and jets):
        flat, jet_calls = _special_jets(flat)
    replacements, reduced = sp.cse([stabilize(e) for e in flat], symbols=sp.numbered_symbols("_x"))
    if target == "arb":
        names = ", ".join(str(s) for s in args)
        lines = [f"def {name}({names}, analytic=False):", f'    """{doc}"""',
                 f"    {names}{',' if len(args) == 1 else ''} = {', '.join(f'acb({s})' for s in args)}"]
        if theta in args:
            lines.append(f"    {ONE_MINUS_THETA} = 1 - {theta}")
    elif split_theta:
        lines = [f"def {name}({', '.join(str(s) for s in args)}, {ONE_MINUS_THETA}=None):", f'    """{doc}"""',
                 f"    if {ONE_MINUS_THETA} is None:", f"        {ONE_MINUS_THETA} = 1 - {theta}"]
    else:
        lines = [f"def {name}({', '.join(str(s) for s in args)}):", f'    """{doc}"""']
    if target == "numpy":
        lines.append("    with numpy.errstate(divide='ignore'):  # log(0) = -inf at θ ∈ {0, 1} is exact")
        indent = "        "
    else:
        indent = "    "
    flag = ", analytic" if target == "arb" else ""
    for names, rate, max_order in jet_calls:
        lines.append(f"{indent}{', '.join(str(n) for n in names)} = "
                     f"trunc_exp_jet({printer.doprint(rate)}, {max_order}{flag})")
    for sym, sub in replacements:
        lines.append(f"{indent}{sym} = {printer.doprint(sub)}")
    body = [printer.doprint(e) for e in reduced]
    lines.append(f"{indent}return {body[0] if single else '(' + ', '.join(body) + ',)'}")
    return "\n".join(lines) + "\n"


def reflection_identities() -> list[sp.Expr]:
    """Expressions that must simplify to 0: the reflections the helpers rely on.

    Λ(−β) − β − Λ(β), κ₁(−β) − 1 + κ₁(β), κ_k(−β) − (−1)^k κ_k(β) for 2 ≤ k ≤ 4.
    """
    out = [log_mass_exp_form(-beta) - beta - log_mass_exp_form(beta),
           cumulant_exp_form(1, -beta) - 1 + cumulant_exp_form(1, beta)]
    for order in range(2, MAX_CUMULANT_ORDER + 1):
        out.append(cumulant_exp_form(order, -beta) - (-1) ** order * cumulant_exp_form(order, beta))
    return out


def _float_tuple(values) -> str:
    return "(" + ", ".join(repr(float(v)) for v in values) + ",)"


def _rational_tuple(values) -> str:
    return "(" + ", ".join(f"({int(v.p)}, {int(v.q)})" for v in values) + ",)"


def special_functions_source(target: str) -> str:
    """Source of the stable Λ, κ_k and softmax helpers for ``target``."""
    printer = _printer(target)
    orders = range(0, MAX_CUMULANT_ORDER + 1)
    if target == "numpy":
        taylor = "\n".join(
            f"    {k}: {_float_tuple(reversed(taylor_coefficients(k, TAYLOR_DEGREE)))},"
            for k in orders)
        large = "\n".join(
            f"    if order == {k}:\n        return {printer.doprint(stabilize(large_rate_form(k), expm1=True))}"
            for k in orders)
        return _NUMPY_SPECIALS.format(taylor=taylor, large=large, switch=float(TAYLOR_SWITCH),
                                      degree=TAYLOR_DEGREE, max_order=MAX_CUMULANT_ORDER)
    if target == "arb":
        return _arb_special_functions_source(printer)
    exact = "\n".join(
        f"    {k}: {_rational_tuple(taylor_coefficients(k, 3))}," for k in orders)
    forms = "\n".join(
        f"    if order == {k}:\n        return {printer.doprint(stabilize(log_mass_exp_form(beta) if k == 0 else cumulant_exp_form(k, beta), expm1=True))}"
        for k in orders)
    return _MPMATH_SPECIALS.format(exact=exact, forms=forms)


def _arb_special_functions_source(printer: ArbModelPrinter) -> str:
    orders = range(0, MAX_CUMULANT_ORDER + 1)
    _, _, coefficient = moment_series_coefficient()
    numerator, denominator = sp.fraction(coefficient)
    plain = PythonCodePrinter({"fully_qualified_modules": True})
    moments, cumulants = cumulants_from_moments(MAX_CUMULANT_ORDER)
    from_moments = "\n".join(
        f"    if order == {k}:\n        return {printer.doprint(expr)}" for k, expr in enumerate(cumulants, start=1))
    large = "\n".join(
        f"    if order == {k}:\n        return {printer.doprint(stabilize(large_rate_form(k), expm1=True))}"
        for k in orders)
    return _ARB_SPECIALS.format(
        coefficient=coefficient, numerator=plain.doprint(numerator), denominator=plain.doprint(denominator),
        moments=", ".join(str(m) for m in moments), from_moments=from_moments, large=large,
        switch=ARB_SERIES_SWITCH, cap=ARB_SERIES_CAP, max_order=MAX_CUMULANT_ORDER)


_NUMPY_SPECIALS = '''
# Taylor coefficients about 0, highest degree first,
# for order 0 (Λ) and κ_1..κ_4; degree {degree}, used for |β| < {switch}.
_TAYLOR = {{
{taylor}
}}
_SWITCH = {switch}


def _large_rate(order, beta, q, p):
    """κ_order(β) (order 0: Λ(β)) for β ≥ {switch}; q = exp(-β), p = q/(1 - q)."""
{large}
    raise ValueError(f"cumulant order {{order}} is not generated")


def _taylor_parts(coefficients):
    """Even and odd parts of a highest-degree-first polynomial, each in β², leading zeros dropped."""
    ascending = coefficients[::-1]
    parts = []
    for part in (ascending[0::2], ascending[1::2]):
        descending = list(part[::-1])
        while len(descending) > 1 and descending[0] == 0.0:
            descending.pop(0)
        parts.append(tuple(descending))
    return tuple(parts)


_TAYLOR_PARTS = {{order: _taylor_parts(coefficients) for order, coefficients in _TAYLOR.items()}}


def _padded(parts):
    """Rows of highest-degree-first coefficients, zero-padded in front to one length (Horner is unchanged)."""
    width = max(len(part) for part in parts)
    return numpy.array([(0.0,) * (width - len(part)) + part for part in parts])


# one row per order 0..{max_order}: the even and odd parts of all Taylor polynomials, for one Horner pass
_TAYLOR_EVEN = _padded([_TAYLOR_PARTS[order][0] for order in sorted(_TAYLOR_PARTS)])
_TAYLOR_ODD = _padded([_TAYLOR_PARTS[order][1] for order in sorted(_TAYLOR_PARTS)])


def _taylor(order, beta):
    """The degree-{degree} Taylor polynomial of κ_order (Λ for order 0) at β: Horner in β²."""
    even, odd = _TAYLOR_PARTS[order]
    square = beta * beta
    even_sum = even[0] + 0.0 * beta
    for c in even[1:]:
        even_sum = even_sum * square + c
    odd_sum = odd[0] + 0.0 * beta
    for c in odd[1:]:
        odd_sum = odd_sum * square + c
    return even_sum + beta * odd_sum


def _signed(order, value, y, positive):
    """κ_order(β) from κ_order(|β|) = value: Λ(−y) = y + Λ(y), κ₁(−y) = 1 − κ₁(y), odd κ change sign."""
    if order == 0:
        return numpy.where(positive, value, y + value)
    if order == 1:
        return numpy.where(positive, value, 1.0 - value)
    if order % 2 == 1:
        return numpy.where(positive, value, -value)
    return value


def _special(order, beta):
    beta = numpy.asarray(beta, dtype=float)
    if beta.ndim == 0:  # one number: no masks, no arrays (the reflections of _signed, as conditionals)
        x = float(beta)
        y = abs(x)
        if y < _SWITCH:
            return numpy.float64(_taylor(order, x))
        q = math.exp(-y)
        value = float(_large_rate(order, y, q, -q / math.expm1(-y)))
        if x > 0 or (order > 1 and order % 2 == 0):
            return numpy.float64(value)
        return numpy.float64(y + value if order == 0 else 1.0 - value if order == 1 else -value)
    size = numpy.abs(beta)
    out = numpy.empty(beta.shape)
    small = size < _SWITCH
    if small.any():
        out[small] = _taylor(order, beta[small])
    large = ~small
    y = size[large]
    q = numpy.exp(-y)
    out[large] = _signed(order, _large_rate(order, y, q, -q / numpy.expm1(-y)), y, beta[large] > 0)
    return out


def _taylor_all(beta, count):
    """Taylor polynomials of Λ, κ_1, …, κ_(count−1) at the 1-d array β (|β| < {switch}), shape (count, n).

    Powers 1, β², β⁴, … (numpy.vander) times the coefficient matrices: two
    matrix products instead of a Horner loop per order. The terms decrease
    like (β/2π)^k, so the power form is as accurate as Horner's (a few ulps).
    """
    powers = numpy.vander(beta * beta, _TAYLOR_EVEN.shape[1], increasing=True)
    even = powers @ _TAYLOR_EVEN[:count, ::-1].T
    odd = powers[:, :_TAYLOR_ODD.shape[1]] @ _TAYLOR_ODD[:count, ::-1].T
    return (even + beta[:, None] * odd).T


def trunc_exp_jet(beta, max_order):
    """(Λ(β), κ_1(β), …, κ_max_order(β)) in one pass: the single functions' values to a few ulps.

    One exp(−|β|) and one Taylor pass serve every order (the one-pass e, ∇e, ∇²e call this).
    """
    beta = numpy.asarray(beta, dtype=float)
    flat = beta.ravel()
    size = numpy.abs(flat)
    out = numpy.empty((max_order + 1, flat.size))
    small = size < _SWITCH
    if small.any():
        out[:, small] = _taylor_all(flat[small], max_order + 1)
    large = ~small
    if large.any():
        y = size[large]
        q = numpy.exp(-y)
        p = -q / numpy.expm1(-y)
        positive = flat[large] > 0
        for order in range(max_order + 1):
            out[order, large] = _signed(order, _large_rate(order, y, q, p), y, positive)
    return tuple(row.reshape(beta.shape) for row in out)


def trunc_exp_log_mass(beta):
    """Λ(β) = log((1 - exp(-β))/β), float64, stable for all real β."""
    return _special(0, beta)


def trunc_exp_cumulant(order, beta):
    """κ_order(β), the cumulants of the density ∝ exp(-βτ) on [0, 1]."""
    if order not in _TAYLOR or order == 0:
        raise ValueError(f"cumulant order {{order}} is not generated")
    return _special(order, beta)


def softmax_weight(index, *log_masses):
    """exp(ℓ_index) / Σ exp(ℓ_i), computed with the maximum shifted out."""
    ells = numpy.broadcast_arrays(*[numpy.asarray(ell, dtype=float) for ell in log_masses])
    top = ells[0]
    for ell in ells[1:]:
        top = numpy.maximum(top, ell)
    total = sum(numpy.exp(ell - top) for ell in ells)
    return numpy.exp(ells[index] - top) / total


def softmax_weight_differences(*differences):
    """1 / Σ exp(d_i) for d_i = ℓ_i − ℓ_j (one d_i is 0): the softmax weight of j.

    The largest d_i (≥ 0) is shifted out; a weight whose entry is e^(−∞) is 0.
    """
    if len(differences) == 2:  # the usual case, without the general path's overhead (same arithmetic)
        first, second = numpy.asarray(differences[0], dtype=float), numpy.asarray(differences[1], dtype=float)
        top = numpy.maximum(first, second)
        with numpy.errstate(invalid="ignore"):
            weight = numpy.exp(-top) / (numpy.exp(first - top) + numpy.exp(second - top))
        return numpy.where(numpy.isposinf(top), 0.0, weight)
    ds = numpy.broadcast_arrays(*[numpy.asarray(d, dtype=float) for d in differences])
    top = ds[0]
    for d in ds[1:]:
        top = numpy.maximum(top, d)
    with numpy.errstate(invalid="ignore"):
        total = sum(numpy.exp(d - top) for d in ds)
        weight = numpy.exp(-top) / total
    return numpy.where(numpy.isposinf(top), 0.0, weight)
'''

_MPMATH_SPECIALS = '''
# Exact Taylor coefficients (numerator, denominator) about 0 to degree 3, for
# order 0 (Λ) and κ_1..κ_4, used when |β| < 2**-prec.
_EXACT_TAYLOR = {{
{exact}
}}


def _exp_form(order, beta):
    """κ_order(β) (order 0: Λ(β)) in the exponential form SymPy derived."""
{forms}
    raise ValueError(f"cumulant order {{order}} is not generated")


def _special(order, beta):
    beta = mpmath.mpf(beta)
    prec = mpmath.mp.prec
    if abs(beta) < mpmath.ldexp(1, -prec):
        return mpmath.fsum(mpmath.mpf(p) / q * beta**n for n, (p, q) in enumerate(_EXACT_TAYLOR[order]))
    guard = 20
    if abs(beta) < 1:
        guard += (2 * order + 2) * int(-mpmath.floor(mpmath.log(abs(beta), 2)))
    with mpmath.workprec(prec + guard):
        value = _exp_form(order, beta)
    return +value


def trunc_exp_log_mass(beta):
    """Λ(β) = log((1 - exp(-β))/β) at the working precision."""
    return _special(0, beta)


def trunc_exp_cumulant(order, beta):
    """κ_order(β), the cumulants of the density ∝ exp(-βτ) on [0, 1]."""
    if order not in _EXACT_TAYLOR or order == 0:
        raise ValueError(f"cumulant order {{order}} is not generated")
    return _special(order, beta)


def softmax_weight(index, *log_masses):
    """exp(ℓ_index) / Σ exp(ℓ_i), computed with the maximum shifted out."""
    ells = [mpmath.mpf(ell) for ell in log_masses]
    top = max(ells)
    return mpmath.exp(ells[index] - top) / mpmath.fsum(mpmath.exp(ell - top) for ell in ells)


def softmax_weight_differences(*differences):
    """1 / Σ exp(d_i) for d_i = ℓ_i − ℓ_j (one d_i is 0): the softmax weight of j."""
    ds = [mpmath.mpf(d) for d in differences]
    top = max(ds)
    if top == mpmath.inf:
        return mpmath.mpf(0)
    return mpmath.exp(-top) / mpmath.fsum(mpmath.exp(d - top) for d in ds)
'''

_ARB_SPECIALS = '''
# Elementary functions on balls. The logarithms honour `analytic`: when it is
# true and the ball may touch the branch cut (−∞, 0], they return a non-finite
# ball, as acb.integral requires of an integrand that is not analytic there.
_INDETERMINATE = acb(arb.nan(), arb.nan())


def _exp(z):
    return acb(z).exp()


def _expm1(z):
    return acb(z).expm1()


def _off_branch_cut(w):
    """True if the ball w certainly avoids (−∞, 0]: Re w > 0, or Im w ≠ 0 throughout."""
    return w.real > 0 or not w.imag.contains(0)


def _log(z, analytic):
    return acb(z).log(analytic=analytic)


def _log1p(z, analytic):
    z = acb(z)
    if analytic and not _off_branch_cut(1 + z):
        return _INDETERMINATE
    return z.log1p()


# Power series of the moments M_j(β) = ∫₀¹ τ^j exp(−βτ) dτ = Σ_n c(j, n) β^n with
# c(j, n) = {coefficient} (integrated by SymPy). Truncated after β^N, the
# tail is bounded by Σ_(n>N) |β|^n/n! ≤ |β|^(N+1) exp(|β|)/(N+1)!, which is
# added to the ball's radius.
def _moment_coefficient(j, n):
    return fmpq({numerator}, {denominator})


_POLYS = {{}}


def _moment_polynomial(j, terms, prec):
    key = (j, terms, prec)
    if key not in _POLYS:
        _POLYS[key] = acb_poly([arb(_moment_coefficient(j, n)) for n in range(terms + 1)])
    return _POLYS[key]


def _series_terms(radius, prec):
    """Smallest N with r^(N+1) exp(r)/(N+1)! ≤ 2^-(prec + 10), r = radius rounded up to a
    power of two (fewer distinct polynomials to cache). A choice only: the bound is computed."""
    r = 2.0 ** math.ceil(math.log2(max(float(radius), 1e-300)))
    target = -(prec + 10) * math.log(2) - r
    terms = 1
    while (terms + 1) * math.log(r) - math.lgamma(terms + 2) > target:
        terms += 1
    return terms


def _moments(beta, count):
    """Balls containing M_0(β), …, M_(count−1)(β): power series plus its tail bound."""
    radius = beta.abs_upper()
    prec = ctx.prec
    terms = _series_terms(radius, prec)
    tail = (radius ** (terms + 1) * radius.exp() / arb.fac_ui(terms + 1)).upper()
    error = acb(arb(0, tail)) if beta.imag.is_zero() else acb(arb(0, tail), arb(0, tail))
    return [_moment_polynomial(j, terms, prec)(beta) + error for j in range(count)]


def _cumulant_from_moments(order, {moments}):
    """κ_order from the raw moments m_k = M_k/M_0 (SymPy: k!·[t^k] log Σ_k m_k t^k/k!)."""
{from_moments}
    raise ValueError(f"cumulant order {{order}} is not generated")


def _series_special(order, beta, analytic):
    moments = _moments(beta, order + 1)
    if order == 0:
        return _log(moments[0], analytic)
    ratios = [m / moments[0] for m in moments[1:]]
    ratios += [None] * ({max_order} - len(ratios))
    return _cumulant_from_moments(order, *ratios)


def _large_rate(order, beta, q, p, analytic):
    """κ_order(β) (order 0: Λ(β)) for Re β > 0; q = exp(−β), p = q/(1 − q)."""
{large}
    raise ValueError(f"cumulant order {{order}} is not generated")


def _exponential_special(order, beta, analytic):
    q = (-beta).exp()
    return _large_rate(order, beta, q, -q / (-beta).expm1(), analytic)


_SERIES_SWITCH = {switch}
_SERIES_CAP = {cap}


def _special(order, beta, analytic):
    """κ_order(β) (order 0: Λ(β)): series for |β| ≤ {switch}, else the large-rate
    form with Λ(β) = Λ(−β) − β, κ₁(β) = 1 − κ₁(−β), κ_k(β) = (−1)^k κ_k(−β) for Re β < 0."""
    beta = acb(beta)
    if not beta.is_finite():
        return _INDETERMINATE
    radius = beta.abs_upper()
    if radius <= _SERIES_SWITCH:
        return _series_special(order, beta, analytic)
    if beta.real > 0:
        return _exponential_special(order, beta, analytic)
    if beta.real < 0:
        value = _exponential_special(order, -beta, analytic)
        if order == 0:
            return value - beta
        if order == 1:
            return 1 - value
        return -value if order % 2 else value
    if radius <= _SERIES_CAP:
        return _series_special(order, beta, analytic)
    return _INDETERMINATE


def _series_jet(beta, max_order, analytic):
    moments = _moments(beta, max_order + 1)
    ratios = [m / moments[0] for m in moments[1:]]
    ratios += [None] * ({max_order} - len(ratios))
    return (_log(moments[0], analytic),) + tuple(_cumulant_from_moments(k, *ratios) for k in range(1, max_order + 1))


def _exponential_jet(beta, max_order, analytic):
    q = (-beta).exp()
    p = -q / (-beta).expm1()
    return tuple(_large_rate(k, beta, q, p, analytic) for k in range(max_order + 1))


def trunc_exp_jet(beta, max_order, analytic=False):
    """Balls containing (Λ(β), κ_1(β), …, κ_max_order(β)): the branches of trunc_exp_log_mass
    and trunc_exp_cumulant, with one moment series or one exp(−β) shared by all orders."""
    beta = acb(beta)
    if not beta.is_finite():
        return (_INDETERMINATE,) * (max_order + 1)
    radius = beta.abs_upper()
    if radius <= _SERIES_SWITCH:
        return _series_jet(beta, max_order, analytic)
    if beta.real > 0:
        return _exponential_jet(beta, max_order, analytic)
    if beta.real < 0:
        values = _exponential_jet(-beta, max_order, analytic)
        return tuple(value - beta if order == 0 else 1 - value if order == 1 else -value if order % 2 else value
                     for order, value in enumerate(values))
    if radius <= _SERIES_CAP:
        return _series_jet(beta, max_order, analytic)
    return (_INDETERMINATE,) * (max_order + 1)


def trunc_exp_log_mass(beta, analytic=False):
    """A ball containing Λ(β) = log((1 - exp(-β))/β), Λ(0) = 0.

    Λ = log M_0 has branch points where M_0(β) = 0 (β = 2πik, k ≠ 0); with
    `analytic` true a ball on which the logarithm may not be analytic gives a
    non-finite ball.
    """
    return _special(0, beta, analytic)


def trunc_exp_cumulant(order, beta, analytic=False):
    """A ball containing κ_order(β), the cumulants of the density ∝ exp(-βτ) on [0, 1].

    κ_order is meromorphic (poles at β = 2πik, k ≠ 0, give non-finite balls),
    so `analytic` needs no check here; it is accepted for uniformity.
    """
    if not 1 <= order <= {max_order}:
        raise ValueError(f"cumulant order {{order}} is not generated")
    return _special(order, beta, analytic)


def softmax_weight(index, *log_masses):
    """A ball containing exp(ℓ_index) / Σ exp(ℓ_i) = 1 / Σ exp(ℓ_i − ℓ_index) (meromorphic in ℓ)."""
    ells = [acb(ell) for ell in log_masses]
    return 1 / sum((ell - ells[index]).exp() for ell in ells)


_NARROW = 2.0 ** -20  # a weight ball narrower than this is returned as the plain quotient


def softmax_weight_factored(index, factors, exponents):
    """A ball containing F_index exp(m_index) / Σ F_i exp(m_i) (the weight with ℓ_i = log F_i + m_i).

    Evaluated with t_i = F_i exp(m_i − m_r), r the index of the largest Re m_i
    (midpoints), so that no exponential in it is large: the same function
    (meromorphic: no logarithm, finite where F_index = 0). The factors are
    segment lengths (θ and 1 − θ), nonnegative on the domain θ ∈ [0, 1]; for
    real balls the parts of the t_i below 0 lie outside the domain and are
    dropped, and the weight t_j/(t_j + Σ_(i≠j) t_i), increasing in t_j and
    decreasing in the others, is enclosed from the ends of their intervals
    (without this a t_j whose ball touches 0, e.g. θ ∈ [0, h], would give an
    indeterminate quotient).
    """
    exponents = [acb(m) for m in exponents]
    top = max(range(len(exponents)), key=lambda i: exponents[i].real.mid())
    terms = [acb(f) if i == top else f * (m - exponents[top]).exp()
             for i, (f, m) in enumerate(zip(factors, exponents))]
    quotient = terms[index] / sum(terms)
    if quotient.is_finite() and quotient.rad() < _NARROW:
        return quotient
    if not all(t.imag.is_zero() and t.real.is_finite() for t in terms):
        return quotient
    lows = [arb(t.real.lower()).max(arb(0)) for t in terms]
    highs = [arb(t.real.upper()) for t in terms]
    if any(h < 0 for h in highs):
        return _INDETERMINATE
    rest_low = sum(low for i, low in enumerate(lows) if i != index)
    rest_high = sum(high for i, high in enumerate(highs) if i != index)
    smallest = lows[index] / (lows[index] + rest_high)
    largest = highs[index] / (highs[index] + rest_low)
    if not (smallest.is_finite() and largest.is_finite()):
        return _INDETERMINATE
    return acb(arb(smallest.lower()).union(arb(largest.upper())))
'''
