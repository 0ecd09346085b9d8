"""The Arb target (python-flint ``acb`` balls): its printer and the source of its rigorous helpers.

It is rigorous rather than merely stable: every helper returns a ball that
contains the exact value. For it

* the moments M_j(β) = ∫₀¹ τ^j e^{−βτ} dτ are summed from their power series
  (coefficients integrated by SymPy, :func:`moment_series_coefficient`) with
  the tail bound |β|^{N+1} e^{|β|}/(N+1)! added to the ball's radius, whenever
  an upper bound of |β| is ≤ ``ARB_SERIES_SWITCH``; then Λ = log M₀ and κ_k
  follows from m_k = M_k/M₀ by the moment → cumulant identities SymPy expands
  from the cumulant generating function (:func:`cumulants_from_moments`);
* beyond, the large-rate forms in p = 1/(e^{β} − 1) (Re β > 0) and the
  reflections (Re β < 0) are evaluated in ball arithmetic;
* the softmax weights are rewritten by SymPy (:func:`stumpcheck.theory.codegen_rewrites.factor_softmax_weights`)
  from w_j = e^{ℓ_j}/Σ e^{ℓ_i} with ℓ_i = log F_i + m_i (F_i = θ or 1 − θ, the
  segment lengths) into F_j e^{m_j}/Σ_i F_i e^{m_i}, evaluated with the largest
  m_i shifted out (:class:`stumpcheck.theory.codegen_rewrites.FactoredSoftmaxWeight`). The logarithms of
  θ and 1 − θ only ever appeared inside these exponentials, so the printed e,
  ∇e, ∇²e are free of them: meromorphic in θ apart from Λ (whose logarithm
  honours the ``analytic`` flag of ``acb.integral``), finite at θ = 0 and
  θ = 1, and without the endpoint branch points the log form would have;
* e is first written with sign-free rates (:func:`stumpcheck.theory.codegen_rewrites.canonical_rates`:
  Λ(−x) = x + Λ(x), κ₁(−x) = 1 − κ₁(x), …, linear parts of the log-masses
  expanded) and ∇e, ∇²e are differentiated from that form (theory/export.py):
  ball arithmetic pays for every algebraic cancellation with b times θ's radius;
* 1 − θ is one variable (``one_minus_theta``), computed once per call;
* constants are Arb's own balls at the working precision (π as ``arb.pi()``, e, γ and Catalan's constant
  as ``arb.const_e()``, ``arb.const_euler()``, ``arb.const_catalan()``), ζ(s), ζ(s, q) and Li_s(z) are
  ``acb.zeta`` and ``acb.polylog``, rational powers ``acb.sqrt``, ``acb.rsqrt`` and ``acb.pow`` (honouring
  ``analytic``); a float, ∞ or any other function is refused, never printed as a Python float.

The rigour of the Arb helpers is tested against mpmath at 50+ digits and by
the certified enclosures of :mod:`stumpcheck.numerics.certified.enclosures` (tests/test_certified.py).
"""

from __future__ import annotations

from functools import cache

import sympy as sp
from sympy.printing.pycode import PythonCodePrinter

from stumpcheck.theory.codegen_rewrites import MAX_CUMULANT_ORDER, stabilize
from stumpcheck.theory.special import large_rate_form

__all__ = ["ArbModelPrinter", "arb_special_functions_source", "moment_series_coefficient",
           "cumulants_from_moments", "ARB_SERIES_SWITCH", "ARB_SERIES_CAP"]

#: The Arb helpers sum the moment series when an upper bound of |β| is at most this.
ARB_SERIES_SWITCH = 1
#: ... and also up to this bound when the sign of Re β is uncertain (a ball
#: straddling the imaginary axis); beyond it they return an indeterminate ball.
ARB_SERIES_CAP = 16


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
        """Integer powers as Python powers of balls; x^(1/2), x^(−1/2) and other rational powers as Arb's
        ``sqrt``, ``rsqrt`` and ``pow`` (principal branch, honouring ``analytic``)."""
        if expr.exp.is_Integer:
            return super()._print_Pow(expr, rational=rational)
        if not expr.exp.is_Rational:
            raise NotImplementedError(f"the Arb printer has no rigorous form for {expr}")
        base = self._print(expr.base)
        if expr.exp == sp.S.Half:
            return "acb(%s).sqrt(analytic=analytic)" % base
        if expr.exp == -sp.S.Half:
            return "acb(%s).rsqrt(analytic=analytic)" % base
        return "acb(%s).pow(acb(fmpq(%d, %d)), analytic=analytic)" % (base, expr.exp.p, expr.exp.q)

    #: The functions it prints; any other (sin, Abs, …) is refused rather than printed as a math.* call.
    functions = ("exp", "expm1", "log", "log1p", "TruncExpLogMass", "TruncExpCumulant", "SoftmaxWeight",
                 "FactoredSoftmaxWeight", "zeta", "polylog")

    # Constants as Arb computes them at the working precision (balls, never float literals).
    def _print_Pi(self, expr):
        return "acb(arb.pi())"

    def _print_Exp1(self, expr):
        return "acb(arb.const_e())"

    def _print_EulerGamma(self, expr):
        return "acb(arb.const_euler())"

    def _print_Catalan(self, expr):
        return "acb(arb.const_catalan())"

    def _print_GoldenRatio(self, expr):
        return "((1 + acb(5).sqrt())/2)"

    def _print_zeta(self, expr):
        """ζ(s) (Riemann) and ζ(s, q) (Hurwitz): Arb's ``zeta``, meromorphic (a pole gives a non-finite ball)."""
        if len(expr.args) == 1:
            return "acb(%s).zeta()" % self._print(expr.args[0])
        return "acb(%s).zeta(acb(%s))" % (self._print(expr.args[0]), self._print(expr.args[1]))

    def _print_polylog(self, expr):
        """Li_s(z): Arb's ``polylog``; under ``analytic`` a ball z that may touch the branch cut [1, ∞) gives
        a non-finite ball (flint's polylog has no analytic flag of its own)."""
        order, argument = (self._print(x) for x in expr.args)
        return ("(acb(%s).polylog(acb(%s)) if not analytic or acb(%s).real < 1 or not acb(%s).imag.contains(0) "
                "else acb(arb.nan(), arb.nan()))" % (argument, order, argument, argument))

    def _print(self, expr, **kwargs):
        if isinstance(expr, sp.Function) and type(expr).__name__ not in self.functions:
            raise NotImplementedError(f"the Arb printer does not know the function {expr.func}")
        return super()._print(expr, **kwargs)

    def _print_Float(self, expr):
        raise NotImplementedError(f"the Arb printer prints exact numbers only, not the float {expr}")

    def _print_NumberSymbol(self, expr):
        raise NotImplementedError(f"the Arb printer has no rigorous constant for {expr}")

    _print_Infinity = _print_NegativeInfinity = _print_NaN = _print_ComplexInfinity = _print_NumberSymbol

    def _print_Piecewise(self, expr):
        raise NotImplementedError("the Arb printer cannot branch on ball comparisons")


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


def arb_special_functions_source(printer: ArbModelPrinter) -> str:
    """Source of the ball-arithmetic Λ, κ_k and softmax helpers (moment series, moment → cumulant identities
    and large-rate forms printed)."""
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
