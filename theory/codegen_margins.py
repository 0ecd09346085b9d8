"""The Arb target for certified margins: the model's printer plus |x|, sign, max, min, roots and constants.

A margin (:mod:`stumpcheck.theory.margin_quantities`) is an expression in the model's symbols and named
quantities; :func:`margin_function_source` prints it, and its gradient for the mean-value form,
as one Python function over ``acb`` balls with :func:`stumpcheck.theory.codegen.function_source` (common
subexpressions shared, Λ and κ_k from one jet per rate). Beyond the model's printer
(:class:`stumpcheck.theory.codegen_arb.ArbModelPrinter`) it prints

* ``Abs(x)`` as the ball |x|, ``Max``/``Min`` as ball maxima/minima, and the derivative of
  min(f, g) as λ·∂f + (1 − λ)·∂g with λ = 1, 0 or the ball [0, 1] (Clarke's gradient);
* ``sign(x)`` as ±1 where the ball fixes the sign and [−1, 1] where it may be 0: in the
  mean-value form d|f| = sign(f)·df, and [−1, 1]·∇f contains the generalized (Clarke)
  gradient of |f| where f = 0, so Lebourg's mean-value theorem keeps the form rigorous for
  these Lipschitz margins;
* rational powers x^(p/q) as Arb powers (indeterminate where the base ball touches 0 or is
  negative), π and ζ(n) as Arb constants at the working precision.

The helpers these calls need are :data:`MARGIN_HELPERS_SOURCE`, executed by the caller next to
the generated module's helpers (numerics/generated/population_arb.py).
"""

from __future__ import annotations

import sympy as sp

from stumpcheck.theory.codegen import function_source
from stumpcheck.theory.codegen_arb import ArbModelPrinter
from stumpcheck.theory.codegen_rewrites import ONE_MINUS_THETA, FactoredSoftmaxWeight
from stumpcheck.theory.symbols import b, theta

__all__ = ["MarginArbPrinter", "MARGIN_HELPERS_SOURCE", "margin_function_source"]


class MarginArbPrinter(ArbModelPrinter):
    """:class:`ArbModelPrinter` with the piecewise-smooth functions and constants a margin may use."""

    functions = ArbModelPrinter.functions + ("Abs", "RealAbs", "sign", "Max", "Min", "RealMin", "MinWeight", "zeta")

    def _print_Abs(self, expr):
        return "_abs(%s)" % self._print(expr.args[0])

    _print_RealAbs = _print_Abs

    def _print_RealMin(self, expr):
        return "_min(%s)" % ", ".join(self._print(x) for x in expr.args)

    def _print_MinWeight(self, expr):
        return "_min_weight(%s)" % ", ".join(self._print(x) for x in expr.args)

    def _print_sign(self, expr):
        return "_sign(%s)" % self._print(expr.args[0])

    def _print_Max(self, expr):
        return "_max(%s)" % ", ".join(self._print(x) for x in expr.args)

    def _print_Min(self, expr):
        return "_min(%s)" % ", ".join(self._print(x) for x in expr.args)

    def _print_zeta(self, expr):
        (n,) = expr.args
        if not (n.is_Integer and n > 1):
            raise NotImplementedError(f"the margin printer has ζ(n) for integers n > 1 only, not {expr}")
        return "_zeta(%d)" % int(n)

    def _print_Pi(self, expr):
        return "_pi()"

    def _print_Pow(self, expr, rational=False):
        if expr.exp.is_Integer:
            return super()._print_Pow(expr, rational=rational)
        if expr.exp.is_Rational:
            return "_root_power(%s, %d, %d)" % (self._print(expr.base), expr.exp.p, expr.exp.q)
        raise NotImplementedError(f"the margin printer has no rigorous form for {expr}")


MARGIN_HELPERS_SOURCE = '''
def _real(x):
    x = acb(x)
    return x.real if x.imag.is_zero() else None


def _abs(x):
    re = _real(x)
    return _INDETERMINATE if re is None else acb(abs(re))


def _sign(x):
    re = _real(x)
    if re is None or not re.is_finite():
        return _INDETERMINATE
    if re > 0:
        return acb(1)
    if re < 0:
        return acb(-1)
    return acb(arb(0, 1))


def _max(*xs):
    parts = [_real(x) for x in xs]
    if any(p is None for p in parts):
        return _INDETERMINATE
    out = parts[0]
    for p in parts[1:]:
        out = out.max(p)
    return acb(out)


def _min(*xs):
    parts = [_real(x) for x in xs]
    if any(p is None for p in parts):
        return _INDETERMINATE
    out = parts[0]
    for p in parts[1:]:
        out = out.min(p)
    return acb(out)


def _min_weight(f, g):
    f, g = _real(f), _real(g)
    if f is None or g is None or not (f.is_finite() and g.is_finite()):
        return _INDETERMINATE
    if f < g:
        return acb(1)
    if f > g:
        return acb(0)
    return acb(arb("0.5", "0.5"))


def _zeta(n):
    return acb(arb(n).zeta())


def _pi():
    return acb(arb.pi())


def _root_power(x, p, q):
    re = _real(x)
    if re is None or not re > 0:
        return _INDETERMINATE
    return acb(re ** (arb(p) / q))
'''


def collect_scale(expr: sp.Expr) -> sp.Expr:
    """The softmax exponents' polynomial parts collected in b: b − bθ + … → b(1 − θ) + ….

    With a = b + (…) substituted (calibration or excess coordinates) an exponent a − bθ + Λ(b(1 − θ))
    expands to b − bθ + …: in ball arithmetic that carries b's radius (1 + θ) times instead of (1 − θ)
    times, which near θ = 1 (the switching layer) is the difference between a usable weight and none.
    """
    def collect(node):
        exponents = [_collect_b(m) for m in node.exponents]
        return node.func(node.args[0], *node.factors, *exponents)

    return expr.replace(lambda node: isinstance(node, FactoredSoftmaxWeight), collect)


def _collect_b(m: sp.Expr) -> sp.Expr:
    functions = [t for t in sp.Add.make_args(m) if t.atoms(sp.Function)]
    polynomial = sp.expand(sp.Add(*[t for t in sp.Add.make_args(m) if not t.atoms(sp.Function)]))
    coefficient = polynomial.coeff(b, 1)
    rest = sp.expand(polynomial - coefficient * b)
    if coefficient == 0 or coefficient.has(b):
        return m
    coefficient = sp.factor_terms(coefficient).xreplace({1 - theta: ONE_MINUS_THETA, theta - 1: -ONE_MINUS_THETA})
    return b * coefficient + rest + sp.Add(*functions)


def margin_function_source(name: str, args: tuple[sp.Symbol, ...], exprs, doc: str) -> str:
    """Source of ``name(*args, analytic=False)`` returning the tuple ``exprs`` as ``acb`` balls."""
    return function_source(name, tuple(args), tuple(exprs), "arb", doc, jets=True,
                           printer=MarginArbPrinter({"fully_qualified_modules": True}), rewrite=collect_scale)
