"""The closed form of the one-head e(θ), shifted and rewritten for Arb, and its printed source.

:func:`stumpcheck.theory.model.closed_form_error` is E[x e^s]/E[e^s] − θ with the moments integrated by
SymPy from the score definition; as it stands it overflows (e^a) and cancels (1 − e^{−bθ}).
:func:`shifted_closed_form_error` rewrites it, by SymPy operations only, as

    e = P/Q,   P = b²·e^{bθ}·(E[x e^s] − θ·E[e^s]),   Q = b²·e^{bθ}·E[e^s],

i.e. E[(x − θ)e^s]/E[e^s] with numerator and denominator multiplied by e^{−s(θ⁻)} = e^{bθ} (the
score just left of the threshold), every exponent written in θ and u = 1 − θ (one variable,
:data:`stumpcheck.theory.codegen_rewrites.ONE_MINUS_THETA`), each side collected in e^a and e^z − 1 rewritten
as expm1(z). The result is a quotient of entire functions of θ: for
θ ∈ [0, 1] and b > 0 every exponential in it other than e^a is e^{bθ} ≤ e^b or e^{−bu} ≤ 1.
:func:`shifted_form_residual` is the difference to the closed form with expm1 and u expanded
back, which SymPy simplifies to 0 (checked before printing and in the tests).

:func:`closed_form_source` prints it for the Arb target, exp and expm1 as the balls' own
``.exp()`` and ``.expm1()`` methods, as ``closed_form_error_one_head(a, b, theta,
analytic=False, one_minus_theta=None)`` (acb balls in, an acb ball out; 1 − θ may be passed as
a ball of its own) and as ``closed_form_error_one_head_at(a, b)``, the same function of θ with
e^a computed once (what the certified L integrates). Being meromorphic in θ it needs no
``analytic`` check: a ball division by a ball that may contain 0 is not finite.
"""

from __future__ import annotations

from functools import cache

import sympy as sp
from sympy.codegen.cfunctions import expm1

from stumpcheck.theory.codegen_arb import ArbModelPrinter
from stumpcheck.theory.codegen_rewrites import ONE_MINUS_THETA, complement_theta
from stumpcheck.theory.model import closed_form_estimate, closed_form_error
from stumpcheck.theory.symbols import a, b, theta

__all__ = ["shifted_closed_form_error", "shifted_form_residual", "closed_form_source", "ArbMethodPrinter"]


def _in_layer_variables(expr: sp.Expr) -> sp.Expr:
    """Every exponent and polynomial coefficient with c·k + d·k·θ written through u = 1 − θ."""
    expr = expr.replace(lambda node: isinstance(node, sp.exp),
                        lambda node: sp.exp(complement_theta(sp.expand(node.args[0]))))
    return sp.expand(expr, power_exp=True)


def _expm1_pairs(expr: sp.Expr) -> sp.Expr:
    """In a sum, every pair of terms c·e^z and −c (c free of exponentials) as c·expm1(z).

    SymPy's own ``expm1_opt`` also rewrites 1 − e^{−z} as e^{−z}·expm1(z), a product of a large
    and a small exponential whose ball is twice as wide; this rewrite keeps the exponent as it is.
    """
    terms = list(sp.Add.make_args(expr))
    out = []
    for term in list(terms):
        if term not in terms:
            continue  # the partner of an earlier term
        exps = [f for f in sp.Mul.make_args(term) if isinstance(f, sp.exp)]
        coeff = term / exps[0] if len(exps) == 1 else None
        if coeff is not None and not coeff.has(sp.exp) and -coeff in terms:
            terms.remove(term)
            terms.remove(-coeff)
            out.append(coeff * expm1(exps[0].args[0]))
    return sp.Add(*out, *terms)


def _collected(expr: sp.Expr) -> sp.Expr:
    """expr = Σ_k e^{k·a}·c_k, each c_k with u = 1 − θ factored out of its θ-sums and e^z − 1 → expm1(z)."""
    parts = sp.collect(_in_layer_variables(expr), sp.exp(a), evaluate=False)
    return sp.Add(*[key * _expm1_pairs(complement_theta(sp.expand(value)))
                    for key, value in sorted(parts.items(), key=lambda kv: sp.default_sort_key(kv[0]))])


@cache
def shifted_closed_form_error() -> tuple[sp.Expr, sp.Expr]:
    """(P, Q) with e(θ) = P/Q for the one-head estimator (see the module docstring)."""
    first, zeroth = sp.fraction(closed_form_estimate("one-head"))
    shift = b**2 * sp.exp(b * theta)
    numerator = sp.powsimp(sp.expand((first - theta * zeroth) * shift))
    denominator = sp.powsimp(sp.expand(zeroth * shift))
    return _collected(numerator), _collected(denominator)


def shifted_form_residual() -> sp.Expr:
    """P/Q − closed_form_error("one-head") with expm1(z) → e^z − 1 and u → 1 − θ: simplifies to 0."""
    numerator, denominator = shifted_closed_form_error()
    back = {ONE_MINUS_THETA: 1 - theta}

    def expanded(expr):
        return expr.replace(lambda node: isinstance(node, expm1),
                            lambda node: sp.exp(node.args[0]) - 1).xreplace(back)

    return expanded(numerator) / expanded(denominator) - closed_form_error("one-head")


class ArbMethodPrinter(ArbModelPrinter):
    """The Arb printer with exp and expm1 as ``acb`` methods (their arguments are balls already)."""

    def _print_exp(self, expr):
        return "(%s).exp()" % self._print(expr.args[0])

    def _print_expm1(self, expr):
        return "(%s).expm1()" % self._print(expr.args[0])


def closed_form_source() -> str:
    """Source of ``closed_form_error_one_head_at(a, b)`` and ``closed_form_error_one_head(a, b, theta)``.

    The first returns the function ``error(theta, analytic=False, one_minus_theta=None)`` with
    the subexpressions free of θ (e^a) computed once, for an integrator's many calls at fixed
    a, b; the second is the one-call form. Raises ``AssertionError`` if SymPy does not simplify
    :func:`shifted_form_residual` to 0.
    """
    if sp.simplify(shifted_form_residual()) != 0:
        raise AssertionError("the shifted closed form of e differs from stumpcheck.theory.model.closed_form_error")
    numerator, denominator = shifted_closed_form_error()
    printer = ArbMethodPrinter({"fully_qualified_modules": True})
    replacements, (top, bottom) = sp.cse([numerator, denominator], symbols=sp.numbered_symbols("_x"))
    pointwise = {theta, ONE_MINUS_THETA}
    fixed, varying = [], []
    for sym, sub in replacements:
        (varying if sub.free_symbols & pointwise else fixed).append((sym, sub))
        if sub.free_symbols & pointwise:
            pointwise.add(sym)
    doc = ("e(θ) of the one-head estimator from the closed form of its definition: P/Q with\n"
           "    P = b²e^{bθ}·E[(x − θ)e^s], Q = b²e^{bθ}·E[e^s] (theory/closed_form_codegen.py), i.e.\n"
           f"    P = {sp.sstr(numerator)},\n"
           f"    Q = {sp.sstr(denominator)}.\n"
           "    Meromorphic in θ (``analytic`` needs no check): a ball Q that may contain 0 gives a\n"
           "    non-finite ball. The cancellations near bθ = 0 and b(1 − θ) = 0 widen the ball only.\n"
           "    A ball of 1 − θ may be passed as ``one_minus_theta`` (the reflected head's e(1 − θ) passes\n"
           "    θ itself, which 1 − (1 − θ) would swamp near θ = 0).\n    ")
    lines = ["def closed_form_error_one_head_at(a, b):",
             '    """The function θ ↦ closed_form_error_one_head(a, b, θ), with e^a computed once."""',
             "    a, b = acb(a), acb(b)"]
    lines += [f"    {sym} = {printer.doprint(sub)}" for sym, sub in fixed]
    lines += ["", f"    def error(theta, analytic=False, {ONE_MINUS_THETA}=None):",
              '        """e(θ) at the fixed a, b: see closed_form_error_one_head."""',
              "        theta = acb(theta)",
              f"        {ONE_MINUS_THETA} = 1 - {theta} if {ONE_MINUS_THETA} is None else acb({ONE_MINUS_THETA})"]
    lines += [f"        {sym} = {printer.doprint(sub)}" for sym, sub in varying]
    lines += [f"        return ({printer.doprint(top)})/({printer.doprint(bottom)})", "    return error", "", ""]
    lines += [f"def closed_form_error_one_head(a, b, theta, analytic=False, {ONE_MINUS_THETA}=None):",
              f'    """{doc}"""',
              f"    return closed_form_error_one_head_at(a, b)(theta, analytic, {ONE_MINUS_THETA})"]
    return "\n".join(lines) + "\n"
