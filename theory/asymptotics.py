"""Large-scale (b → ∞) analysis of the one-head model (docs/model.md §6.2–6.3).

SymPy's ``series`` at infinity silently drops exponentially small terms, so
every expansion here goes through an explicit change of variables in which the
exponentially small quantities are named symbols:

* ``v = b(1 − θ)`` (right boundary layer), ``Y = e^v``;
* ``λ = a − b`` and ``r = e^{−λ}`` (weight of the right layer);
* ``Ω = e^{−b}`` so that ``Ω·Y = e^{−bθ}`` is the only term dropped, and it is
  exponentially small everywhere except in the left layer θ = O(1/b).

Results (each a function returning SymPy expressions; the tests check each at
real points against the exact model):

1. :func:`exact_error_in_layer_variables` e(θ) exactly, in (v, Y, r, Ω, b).
2. :func:`right_layer_error` e in the right layer, Ω·Y → 0:
   e = [ε(Y − 1 − v) − r(1 − ε(1 + v))] / (Y − 1 + r), ε = 1/b.
3. :func:`bulk_error` θ fixed in (0, 1): e = ε − (r + ε v(1 − r) ... )/Y + …,
   i.e. e = 1/b up to terms O(e^{−b(1−θ)}) and O(e^{−bθ}).
4. :func:`left_layer_error` u = bθ fixed: e = 1/b up to O(e^{−a+u}).
5. :func:`interior_layer_error` a = ρb + c with 0 < ρ < 1: a layer of width
   1/b at θ = ρ where e jumps from ≈ 1/b to ≈ −ρ.
6. :func:`loss_layer_integral` 2bL = ε + I(ε, r) with I exact in polylogarithms
   (up to O(b e^{−b}) and the Ω terms); :func:`loss_expansion` its expansion in
   small r, and :func:`flow_asymptotics` the calibration relation, the leading
   loss, the progress direction and the constant C in b(t) ≈ (C t)^{1/4}.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache

import sympy as sp

from stumpcheck.theory.model import closed_form_error
from stumpcheck.theory.symbols import a, b, eps, lam, r, t, theta, u, v

__all__ = [
    "Y", "OMEGA", "RHO", "C_SHIFT", "ZETA",
    "exact_error_in_layer_variables", "right_layer_error", "bulk_error", "left_layer_error",
    "interior_layer_error", "loss_layer_integral", "polylog_one_minus_series", "loss_expansion",
    "FlowAsymptotics", "flow_asymptotics",
]

Y = sp.Symbol("Y", positive=True)        # e^v
OMEGA = sp.Symbol("Omega", positive=True)  # e^{-b}
RHO = sp.Symbol("rho", positive=True)    # interior layer position a/b
C_SHIFT = sp.Symbol("c", real=True)      # interior offset a - rho*b
ZETA = sp.Symbol("zeta", real=True)      # interior layer variable b(θ − ρ)
_U_EXP = sp.Symbol("U", positive=True)   # e^u in the left layer
_A_EXP = sp.Symbol("A", positive=True)   # e^{-a} in the left layer


def _name_exponentials(expr: sp.Expr, names: dict[sp.Symbol, sp.Expr]) -> sp.Expr:
    """Replace every e^{Σ c_s·s} by Π names[s]^{c_s}; fails loudly on anything else."""
    expr = sp.expand(sp.powsimp(sp.expand(expr)))

    def rename(node):
        arg = sp.expand(node.args[0])
        out = sp.S.One
        for sym, base in names.items():
            coefficient = arg.coeff(sym)
            arg = sp.expand(arg - coefficient * sym)
            out *= base ** coefficient
        if arg != 0:
            raise ValueError(f"exponent {node.args[0]} not linear in {list(names)}")
        return out

    return sp.cancel(sp.together(expr.replace(lambda n: isinstance(n, sp.exp), rename)))


@cache
def exact_error_in_layer_variables() -> sp.Expr:
    """e(θ) exactly, after a = b + λ, θ = 1 − v/b, e^v = Y, e^{−λ} = r, e^{−b} = Ω."""
    expr = closed_form_error("one-head").subs(a, b + lam).subs(theta, 1 - v / b)
    return _name_exponentials(expr, {b: 1 / OMEGA, v: Y, lam: 1 / r})


@cache
def right_layer_error() -> sp.Expr:
    """e in the right layer: the exact form with Ω·Y = e^{−bθ} → 0, b = 1/ε."""
    lead = sp.limit(exact_error_in_layer_variables(), OMEGA, 0)
    return sp.factor(sp.cancel(lead.subs(b, 1 / eps)))


@cache
def bulk_error(order: int = 2) -> sp.Expr:
    """e for fixed θ ∈ (0, 1): the right-layer form expanded in 1/Y = e^{−b(1−θ)}.

    The term of order 0 is exactly ε = 1/b: in the bulk the estimator is biased
    upward by the mean 1/b of an exponential of rate b, to all polynomial orders.
    """
    z = sp.Symbol("z", positive=True)  # 1/Y
    expr = right_layer_error().subs(Y, 1 / z)
    return sp.series(expr, z, 0, order).removeO().subs(z, 1 / Y)


@cache
def left_layer_error() -> sp.Expr:
    """e for u = bθ fixed, a = b + λ: exact in (U = e^u, A = e^{−a}, Ω), then Ω → 0."""
    expr = closed_form_error("one-head").subs(theta, u / b)
    expr = _name_exponentials(expr, {a: 1 / _A_EXP, b: 1 / OMEGA, u: _U_EXP})
    lead = sp.limit(expr, OMEGA, 0)
    return sp.factor(sp.cancel(lead.subs(b, 1 / eps)))


@cache
def interior_layer_error() -> sp.Expr:
    """Leading e(θ) for a = ρb + c, θ = ρ + ζ/b (0 < ρ < 1), as b → ∞.

    Exponentially small e^{−bρ}, e^{−b(1−ρ)} are dropped; then ε → 0.
    """
    w = sp.Symbol("W", positive=True)   # e^{-b rho}
    w2 = sp.Symbol("V", positive=True)  # e^{-b}
    expr = closed_form_error("one-head").subs(a, RHO * b + C_SHIFT).subs(theta, RHO + ZETA / b)
    expr = sp.expand(sp.powsimp(sp.expand(expr)))

    def rename(node):
        arg = sp.expand(node.args[0])
        cb = sp.expand(arg.coeff(b))
        rest = sp.expand(arg - cb * b)
        out = sp.exp(rest)
        cr = sp.expand(cb.coeff(RHO))
        c0 = sp.expand(cb - cr * RHO)
        return out * w ** (-cr) * w2 ** (-c0)

    expr = sp.cancel(sp.together(expr.replace(lambda n: isinstance(n, sp.exp), rename)))
    expr = sp.limit(sp.limit(expr, w2, 0), w, 0) if expr.has(w2) else sp.limit(expr, w, 0)
    return sp.simplify(sp.limit(expr, b, sp.oo))


@cache
def _kernel_integral(power_v: int, power_den: int, c: sp.Symbol) -> sp.Expr:
    """∫₀^∞ v^j /(e^v − c)^m dv for 0 < c < 1.

    m = 1: expand 1/(e^v − c) = Σ_{n≥0} cⁿ e^{−(n+1)v}; SymPy integrates each
    term and sums the series (a polylogarithm). m > 1: (e^v − c)^{−m} is
    (1/(m−1)!)·∂^{m−1}/∂c^{m−1} of (e^v − c)^{−1}, so differentiate the m = 1 result.
    """
    if power_den > 1:
        return sp.diff(_kernel_integral(power_v, 1, c), c, power_den - 1) / sp.factorial(power_den - 1)
    n = sp.Symbol("n", integer=True, nonnegative=True)
    moment = sp.integrate(v**power_v * sp.exp(-(n + 1) * v), (v, 0, sp.oo), conds="none")
    total = sp.summation(c**n * moment, (n, 0, sp.oo))
    total = sp.piecewise_fold(total)
    if isinstance(total, sp.Piecewise):
        total = next(expr for expr, cond in total.args if not expr.has(sp.Sum))
    return total


@cache
def loss_layer_integral() -> sp.Expr:
    """I(ε, r) = ∫₀^∞ (e_layer(v)² − ε²) dv, exactly, so that 2bL = ε + I + O(b e^{−b}).

    The integrand is decomposed by partial fractions in Y = e^v into terms
    p(v)/(Y − c)^m with c = 1 − r; :func:`_kernel_integral` does each.
    """
    c = sp.Symbol("c", positive=True)
    e_layer = right_layer_error()
    integrand = sp.apart(sp.cancel(sp.together(e_layer**2 - eps**2).subs(r, 1 - c)), Y)
    total = sp.S.Zero
    for term in sp.Add.make_args(sp.expand(integrand)):
        power_den = sp.degree(sp.fraction(sp.together(term))[1], Y)
        if power_den == 0:
            raise ValueError(f"non-decaying term {term} in the layer integrand")
        numerator = sp.Poly(sp.cancel(term * (Y - c) ** power_den), v)
        for (power_v,), coefficient in zip(numerator.monoms(), numerator.coeffs()):
            total += coefficient * _kernel_integral(power_v, power_den, c)
    total = total.replace(lambda n: isinstance(n, sp.polylog) and n.args[0] == 1, sp.expand_func)
    total = sp.expand(total.subs(c, 1 - r))
    return sp.collect(total, eps, sp.factor)


def polylog_one_minus_series(order: int, var: sp.Symbol, terms: int) -> sp.Expr:
    """Li_n(1 − r) for small r, through r^terms (with log r factors).

    SymPy cannot expand polylog at 1, so the series is integrated from its
    derivative d/dr Li_n(1 − r) = −Li_{n−1}(1 − r)/(1 − r), starting from
    Li₁(1 − r) = −log r and Li_n(1) = ζ(n).
    """
    s = sp.Symbol("s", positive=True)
    current = -sp.log(s)
    for n in range(2, order + 1):
        # d/ds Li_n(1 − s) = −Li_{n−1}(1 − s)/(1 − s)
        integrand = sp.expand(-current * sp.series(1 / (1 - s), s, 0, terms + 1).removeO())
        antiderivative = sp.integrate(integrand, (s, 0, var)).subs(var, s)
        current = sp.zeta(n) + sp.expand(antiderivative)
        current = sp.Add(*[term for term in sp.Add.make_args(current)
                           if sp.degree(term.subs(sp.log(s), 1), s) <= terms])
    return current.subs(s, var)


@cache
def loss_expansion(r_terms: int = 2) -> sp.Expr:
    """2bL = ε + I(ε, r) with I's polylogs expanded to r^{r_terms} (log r kept)."""
    exact = loss_layer_integral()
    expanded = exact.replace(
        lambda n: isinstance(n, sp.polylog),
        lambda n: polylog_one_minus_series(int(n.args[0]), r, r_terms + 1),
    )
    series = sp.series(expanded, r, 0, r_terms + 1).removeO()
    return eps + sp.expand(series)


@dataclass(frozen=True)
class FlowAsymptotics:
    """The large-scale gradient-flow results (docs/model.md §6.2).

    Attributes are SymPy expressions in a, b, t (and r = e^{b−a} where noted).
    """

    calibration: sp.Eq          # a as a function of b along the slow manifold
    calibration_r: sp.Expr      # r* = e^{b−a} on the manifold, series in 1/b
    rho1: sp.Expr               # r* = b^{-2}(1 + rho1/b + …)
    leading_loss: sp.Expr       # L along the manifold, to O(b^{-3})
    progress_direction: tuple   # (−∂L/∂a, −∂L/∂b) along it, leading order
    db_dt: sp.Expr              # ḃ along the manifold, two orders
    flow_constant_C: sp.Expr    # b(t) ≈ (C t)^{1/4}


@cache
def flow_asymptotics() -> FlowAsymptotics:
    """Slow manifold, leading loss, progress direction and C from 2bL = ε + I(ε, r).

    With F(ε, r) = L, r = e^{b−a}, ε = 1/b: ∂L/∂a = −r F_r and
    ∂L/∂b = −ε² F_ε + r F_r, so the flow is ȧ = r F_r, ḃ = ε² F_ε − r F_r and
    λ̇ = 2 r F_r − ε² F_ε. The manifold r*(ε) = ε²(1 + ρ₁ε) is fixed by
    λ̇ = (dλ*/db)·ḃ, solved order by order in ε.
    """
    rho1 = sp.Symbol("rho_1")
    loss = loss_expansion(2) / (2 / eps)  # L = (2bL)/(2b), b = 1/eps
    loss = sp.expand(loss)
    f_r = sp.diff(loss, r)
    f_eps = sp.diff(loss, eps)
    a_dot = r * f_r
    b_dot = eps**2 * f_eps - r * f_r
    lam_dot = a_dot - b_dot
    manifold = eps**2 * (1 + rho1 * eps)
    # λ* = −log r*(ε); dλ*/db = (d log r*/dε)·ε²
    dlam_db = sp.diff(sp.log(manifold), eps) * eps**2
    condition = (lam_dot - dlam_db * b_dot).subs(r, manifold)
    condition = sp.series(condition, eps, 0, 5).removeO()
    leading_power = 4
    coefficient = sp.expand(condition).coeff(eps, leading_power)
    lower = [sp.expand(condition).coeff(eps, p) for p in range(leading_power)]
    if any(sp.simplify(x) != 0 for x in lower):
        raise ArithmeticError(f"slow-manifold condition has lower-order terms {lower}")
    rho1_value = sp.simplify(sp.solve(coefficient, rho1)[0])
    manifold_value = manifold.subs(rho1, rho1_value)
    b_dot_manifold = sp.series(b_dot.subs(r, manifold_value), eps, 0, 5).removeO()
    b_dot_leading = sp.expand(b_dot_manifold).coeff(eps, 3)
    # ḃ = K b^{-3}  ⇒  b⁴ = 4K t + const  ⇒  C = 4K
    flow_constant = sp.simplify(4 * b_dot_leading)
    loss_manifold = sp.series(loss.subs(r, manifold_value), eps, 0, 4).removeO()
    a_dot_manifold = sp.series(a_dot.subs(r, manifold_value), eps, 0, 4).removeO()
    to_b = {eps: 1 / b}
    calibration = sp.Eq(a, b + 2 * sp.log(b) - rho1_value / b)
    return FlowAsymptotics(
        calibration=calibration,
        calibration_r=sp.expand(manifold_value.subs(to_b)),
        rho1=rho1_value,
        leading_loss=sp.expand(loss_manifold.subs(to_b)),
        progress_direction=(sp.expand(a_dot_manifold.subs(to_b)),
                            sp.expand(b_dot_manifold.coeff(eps, 3) * eps**3).subs(to_b)),
        db_dt=sp.expand(b_dot_manifold.subs(to_b)),
        flow_constant_C=flow_constant,
    )
