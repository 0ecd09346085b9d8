"""Series with remainders for the tail b ≥ B of the population flow (docs/tail.md §2–§3).

The right-layer loss of :func:`stumpcheck.theory.asymptotics.loss_layer_integral` holds Li₂(1 − r) and
Li₃(1 − r), singular at r = 0 (the deep layer 1 − θ ~ b⁻³ is where r = e^{b−a} ~ b⁻² matters). Two exact
identities move the singularity into powers of log r, with functions analytic at r = 0 beside them:

    Li₂(1 − r) = π²/6 − log r·log(1 − r) − Li₂(r)                                   (Euler's reflection)
    Li₃(1 − r) = ζ(3) + (π²/6)·log(1 − r) − ½·log r·log²(1 − r) − log(1 − r)·Li₂(r) − ½·K(r),
    K(r) = ∫₀^r log²(1 − s)/s ds.

:func:`reflection_identities` returns them and checks each: both sides have the same derivative in r
(SymPy, with d/dr Li_n(1 − r) = −Li_{n−1}(1 − r)/(1 − r)) and the same limit at r → 0⁺.

Each analytic function φ used (−log(1 − t), Li₂(t), K(t), (1 − t)^{−k}, e^t) has a power series with
**non-negative coefficients** c_n at t = 0 (SymPy derives them; :func:`taylor_form` checks the signs). So the
remainder form

    φ(t) = Σ_{n<N} c_n tⁿ + t^N·R_N(t),     R_N(t) = Σ_{n≥N} c_n t^{n−N},

has R_N non-decreasing on t ≥ 0: for t ∈ [0, t₁], R_N(t) ∈ [c_N, R_N(t₁)], and R_N(t₁) = (φ(t₁) − T_N(t₁))/t₁^N
is one rigorous Arb evaluation (done by :mod:`stumpcheck.numerics.certified.region.tail`). This is every
algebraic remainder of the tail: nothing is dropped but terms bounded this way (and Lemma E's exponentially
small terms, docs/tail.md §4).
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache

import sympy as sp

__all__ = ["K", "SERIES", "TaylorForm", "taylor_form", "reflection_identities", "analytic_value"]


class K(sp.Function):  # noqa: N801 - the name of docs/tail.md
    """K(t) = ∫₀^t log²(1 − s)/s ds (a Nielsen polylogarithm, 2·S₁,₂(t)); K′(t) = log²(1 − t)/t."""
    nargs = 1

    def fdiff(self, argindex=1):
        t = self.args[0]
        return sp.log(1 - t) ** 2 / t


_t = sp.Symbol("t", positive=True)


def _k_series(order: int) -> sp.Expr:
    """K(t) through t^{order−1}: ∫₀^t of the series of log²(1 − s)/s."""
    s = sp.Symbol("s", positive=True)
    integrand = sp.series(sp.log(1 - s) ** 2 / s, s, 0, order).removeO()
    return sp.expand(sp.integrate(integrand, (s, 0, _t)))


#: name → (φ(t) as SymPy, or None for K; what it is)
SERIES = {
    "neglog1m": (-sp.log(1 - _t), "−log(1 − t)"),
    "li2": (sp.polylog(2, _t), "Li₂(t)"),
    "K": (K(_t), "K(t) = ∫₀^t log²(1 − s)/s ds"),
    "inv1m1": (1 / (1 - _t), "(1 − t)^{−1}"),
    "inv1m2": (1 / (1 - _t) ** 2, "(1 − t)^{−2}"),
    "inv1m3": (1 / (1 - _t) ** 3, "(1 − t)^{−3}"),
    "inv1m4": (1 / (1 - _t) ** 4, "(1 − t)^{−4}"),
    "exp": (sp.exp(_t), "e^t"),
}


@dataclass(frozen=True)
class TaylorForm:
    """φ(t) = Σ_{n<N} coefficients[n]·tⁿ + t^N·R, R ∈ [coefficients[N], R_N(t₁)] for t ∈ [0, t₁]."""

    name: str
    order: int
    coefficients: tuple  # c_0 … c_N (exact SymPy rationals), c_N the lower end of R

    def polynomial(self, t: sp.Expr) -> sp.Expr:
        return sum((c * t**n for n, c in enumerate(self.coefficients[: self.order])), sp.S.Zero)

    def form(self, t: sp.Expr, remainder: sp.Symbol) -> sp.Expr:
        return self.polynomial(t) + t**self.order * remainder


@cache
def taylor_form(name: str, order: int) -> TaylorForm:
    """The remainder form of SERIES[name] of order N = ``order`` (coefficients derived by SymPy, checked ≥ 0)."""
    if name not in SERIES:
        raise ValueError(f"unknown series {name!r}")
    function, _ = SERIES[name]
    if name == "K":
        poly = _k_series(order + 1)
    else:
        poly = sp.series(function, _t, 0, order + 1).removeO()
    coefficients = tuple(sp.nsimplify(sp.expand(poly).coeff(_t, n)) for n in range(order + 1))
    if any(not (c.is_rational and c >= 0) for c in coefficients):
        raise ArithmeticError(f"the series of {name} has a coefficient that is not a non-negative rational")
    return TaylorForm(name, order, coefficients)


def analytic_value(name: str):
    """SymPy φ(t) in the symbol ``t`` (for K: through the Li₃(1 − t) identity), to evaluate at t₁ > 0."""
    function, _ = SERIES[name]
    if name != "K":
        return function, _t
    li3 = reflection_identities()[sp.polylog(3, 1 - _r)]
    # solve the Li₃ identity for K: Li₃(1 − r) = … − ½K(r)  ⇒  K(r) = 2(… − Li₃(1 − r))
    k_value = sp.solve(sp.Eq(sp.polylog(3, 1 - _r), li3), K(_r))[0]
    return k_value.subs(_r, _t), _t


_r = sp.Symbol("r", positive=True)


@cache
def reflection_identities() -> dict:
    """{Li₂(1 − r): …, Li₃(1 − r): …} in log r, log(1 − r), Li₂(r), K(r); each checked by SymPy (module doc)."""
    li2 = sp.pi**2 / 6 - sp.log(_r) * sp.log(1 - _r) - sp.polylog(2, _r)
    li3 = (sp.zeta(3) + sp.pi**2 / 6 * sp.log(1 - _r) - sp.log(_r) * sp.log(1 - _r) ** 2 / 2
           - sp.log(1 - _r) * sp.polylog(2, _r) - K(_r) / 2)
    # derivatives: d/dr Li₂(1 − r) = log(r)/(1 − r); d/dr Li₃(1 − r) = −Li₂(1 − r)/(1 − r)
    checks = ((li2, sp.log(_r) / (1 - _r)), (li3, -li2 / (1 - _r)))
    for side, derivative in checks:
        difference = sp.simplify(sp.expand_func(sp.diff(side, _r) - derivative))
        if difference != 0:
            raise ArithmeticError(f"a reflection identity fails its derivative check: {difference}")
    if sp.limit(li2, _r, 0, "+") != sp.pi**2 / 6 or sp.limit(li3.subs(K(_r), 0), _r, 0, "+") != sp.zeta(3):
        raise ArithmeticError("a reflection identity fails at r → 0")
    return {sp.polylog(2, 1 - _r): li2, sp.polylog(3, 1 - _r): li3}
