"""Population loss, gradient and Hessian as θ-integrands (docs/model.md §3).

L(a, b) = ∫₀¹ ½ e(θ)² π(θ) dθ with the reference prior π = Uniform[0, 1]
(for Uniform[l, u] divide by u − l and integrate over [l, u]).

* ∇L = ∫ e·∇e dθ, ∇ = (∂/∂a, ∂/∂b);
* ∇²L = ∫ (∇e ∇eᵀ + e ∇²e) dθ.

The θ-integrals are not done symbolically: their integrands have layers whose
width shrinks with b, and :mod:`stumpcheck.numerics` integrates them with breakpoints
placed from the model's own scales. Everything here is differentiated by SymPy
from the stable form of e (:func:`stumpcheck.theory.model.stable_error`).
"""

from __future__ import annotations

from functools import cache

import sympy as sp

from stumpcheck.theory.model import stable_error
from stumpcheck.theory.symbols import a, b

__all__ = ["PARAMETERS", "error", "error_gradient", "error_hessian", "loss_integrand",
           "gradient_integrand", "hessian_integrand"]

#: z = (a, b), in this order everywhere.
PARAMETERS = (a, b)


@cache
def error(estimator: str = "one-head") -> sp.Expr:
    """e(θ; a, b), stable form."""
    return stable_error(estimator)


@cache
def error_gradient(estimator: str = "one-head") -> tuple[sp.Expr, sp.Expr]:
    """(∂e/∂a, ∂e/∂b)."""
    e = error(estimator)
    return tuple(sp.diff(e, p) for p in PARAMETERS)


@cache
def error_hessian(estimator: str = "one-head") -> tuple[tuple[sp.Expr, sp.Expr], tuple[sp.Expr, sp.Expr]]:
    """((∂²e/∂a², ∂²e/∂a∂b), (∂²e/∂b∂a, ∂²e/∂b²))."""
    grad = error_gradient(estimator)
    daa = sp.diff(grad[0], a)
    dab = sp.diff(grad[0], b)
    dbb = sp.diff(grad[1], b)
    return ((daa, dab), (dab, dbb))


def loss_integrand(estimator: str = "one-head") -> sp.Expr:
    """½ e(θ)²."""
    return error(estimator) ** 2 / 2


def gradient_integrand(estimator: str = "one-head") -> tuple[sp.Expr, sp.Expr]:
    """e·∇e."""
    e = error(estimator)
    return tuple(e * g for g in error_gradient(estimator))


def hessian_integrand(estimator: str = "one-head"):
    """∇e ∇eᵀ + e ∇²e."""
    e = error(estimator)
    g = error_gradient(estimator)
    h = error_hessian(estimator)
    return tuple(tuple(g[i] * g[j] + e * h[i][j] for j in range(2)) for i in range(2))
