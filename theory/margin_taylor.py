"""Taylor forms of θ-integral margins along one variable: smooth kernels, their derivatives, the integrands.

A θ-integral margin M(x, L, ∇L, …) along one free variable x (e.g. b on the calibration relation)
is split into an **outer** expression, evaluated in ball arithmetic, and its smooth **kernels**:
the arguments of its non-smooth functions (|·|, min, max) that contain θ-integrals, or M itself
when it has none. Each kernel K(x) = K(x, Q(x)) is enclosed by its Taylor form of order n,

    K(X) ⊆ Σ_{j<n} K^{(j)}(c)·(X − c)^j/j! + K^{(n)}(X)·(X − c)^n/n!,

whose remainder shrinks like width^n/n! instead of suffering the dependency effects of a direct
evaluation. SymPy differentiates K by the chain rule with each Q a function of x, and its
derivatives Q^{(m)}(x) = ∫₀¹ ∂_x^m q(x, θ) dθ are θ-integrals of integrands that SymPy
differentiates too (q = ½e², e·e_a, … of :data:`stumpcheck.theory.margin_quantities.INTEGRANDS`, with the
coordinates substituted: on the calibration relation ∂_x is the total derivative along it).
Each ∂_x of e raises the cumulant order by one, so the order is limited by the generated
κ_k (k ≤ :data:`stumpcheck.theory.codegen_rewrites.MAX_CUMULANT_ORDER`).
"""

from __future__ import annotations

import sympy as sp

from stumpcheck.theory import margin_quantities as mq
from stumpcheck.theory.codegen_rewrites import MAX_CUMULANT_ORDER
from stumpcheck.theory.special import TruncExpCumulant
from stumpcheck.theory.symbols import theta

__all__ = ["TaylorForm", "taylor_form", "derivative_symbol"]

_NONSMOOTH = (mq.RealAbs, mq.RealMin)


def derivative_symbol(q: sp.Symbol, m: int) -> sp.Symbol:
    """The symbol of Q^{(m)}, the m-th derivative of the integral Q along the free variable."""
    return sp.Symbol(f"{q.name}__d{m}", real=True)


class TaylorForm:
    """``outer`` (in the variables and kernel symbols ``kernel_symbols``), ``kernel_derivatives[j]``
    (the j-th derivatives of the kernels, in the variables and the Q^{(m)} symbols, m ≤ j) and
    ``integrands[m]`` ({Q^{(m)} symbol: ∂_x^m q} in the variables and θ)."""

    def __init__(self, outer, kernel_symbols, kernel_derivatives, integrands, order):
        self.outer, self.kernel_symbols = outer, kernel_symbols
        self.kernel_derivatives, self.integrands, self.order = kernel_derivatives, integrands, order


def _kernels(body: sp.Expr, integrals) -> list:
    found: list = []

    def walk(node):
        if isinstance(node, _NONSMOOTH):
            for arg in node.args:
                if not arg.free_symbols & integrals:
                    continue
                if arg.has(*_NONSMOOTH):
                    walk(arg)
                elif arg not in found:
                    found.append(arg)
            return
        for arg in node.args:
            walk(arg)

    if not body.has(*_NONSMOOTH):
        return [body]
    walk(body)
    return found


def absorb_positive_factors(expr: sp.Expr) -> sp.Expr:
    """The same expression with positive smooth factors moved into the non-smooth functions they multiply:
    p·|x| = |p·x| and p·min(x, y) = min(p·x, p·y) for p > 0 (SymPy must prove p positive).

    So that a kernel is the whole smooth quantity the margin bounds (b²·(L/ℓ − 1) rather than
    L/ℓ − 1, which is ~1/b²): its Taylor form then follows a slowly varying quantity, and the outer
    ball arithmetic no longer multiplies two independently enclosed factors (b² and the kernel),
    each of which moves across the box.
    """
    if not expr.args:
        return expr
    expr = expr.func(*(absorb_positive_factors(arg) for arg in expr.args))
    if not isinstance(expr, sp.Mul):
        return expr
    positive = [f for f in expr.args if not f.has(*_NONSMOOTH) and f.is_positive]
    rest = [f for f in expr.args if f not in positive]
    nonsmooth = [f for f in rest if isinstance(f, _NONSMOOTH)]
    signs = [f for f in rest if f not in nonsmooth]
    if not positive or len(nonsmooth) != 1 or not all(f.is_number and f.is_negative for f in signs):
        return expr
    factor, node = sp.Mul(*positive), nonsmooth[0]
    if isinstance(node, mq.RealAbs):
        inner = mq.RealAbs(factor * node.args[0])
    else:
        inner = mq.RealMin(*(absorb_positive_factors(factor * arg) for arg in node.args))
    return sp.Mul(*signs, inner)


def taylor_form(expr: sp.Expr, coordinates: str, variables, free: str, order: int, estimator: str) -> TaylorForm:
    """The Taylor form of order ``order`` of the θ-integral margin ``expr`` along the variable ``free``
    (positive factors first absorbed into the non-smooth functions, :func:`absorb_positive_factors`)."""
    body, _, used = mq.integral_margin(expr, coordinates, variables)
    body = absorb_positive_factors(body)
    x = mq.symbol_namespace()[free]
    kernels = _kernels(body, set(used))
    symbols = [sp.Symbol(f"_kernel{i}", real=True) for i in range(len(kernels))]
    outer = body.xreplace(dict(zip(kernels, symbols)))
    if outer.free_symbols & set(used):
        raise ValueError("a θ-integral appears outside the smooth kernels of the margin")
    functions = {q: sp.Function(f"_{q.name}")(x) for q in used}
    derivatives = []
    current = [k.xreplace(functions) for k in kernels]
    for j in range(order + 1):
        derivatives.append([_named_derivatives(k, functions, x) for k in current])
        current = [sp.diff(k, x) for k in current]
    mapping = mq.coordinate_map(coordinates, variables)
    definitions = mq._pointwise_definitions(estimator)
    current = {q: mq.INTEGRANDS[q].xreplace(definitions).xreplace({k: w for k, w in mapping.items() if w is not None})
               for q in used}
    integrands = []
    for m in range(order + 1):  # one derivative at a time: SymPy's n-th derivative of a product is far slower
        if m:
            current = {q: sp.diff(integrand, x) for q, integrand in current.items()}
        integrands.append({derivative_symbol(q, m): integrand for q, integrand in current.items()})
    highest = max((int(n.args[0]) for level in integrands for e in level.values()
                   for n in e.atoms(TruncExpCumulant)), default=0)
    if highest > MAX_CUMULANT_ORDER:
        raise ValueError(f"a Taylor form of order {order} needs κ_{highest}; the generated code has κ_k for "
                         f"k ≤ {MAX_CUMULANT_ORDER}")
    if any(s not in set(mq.symbol_namespace()[n] for n in variables) | {theta}
           for level in integrands for e in level.values() for s in e.free_symbols):
        raise ValueError("an integrand has symbols beyond the domain's variables and θ")
    return TaylorForm(outer, symbols, derivatives, integrands, order)


def _named_derivatives(expr: sp.Expr, functions: dict, x: sp.Symbol) -> sp.Expr:
    """Replace Derivative(Q(x), (x, m)) by Q^{(m)} and Q(x) by Q^{(0)}."""
    replacements = {}
    for node in expr.atoms(sp.Derivative):
        for q, f in functions.items():
            if node.expr == f:
                replacements[node] = derivative_symbol(q, node.derivative_count)
    expr = expr.xreplace(replacements)
    return expr.xreplace({f: derivative_symbol(q, 0) for q, f in functions.items()})
