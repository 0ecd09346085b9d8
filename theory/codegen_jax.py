"""The JAX target (an optional extra): its printer and the source of its differentiable Λ, κ_k and softmax helpers.

The helpers evaluate Λ(β) and κ_k(β) as the numpy target does (:mod:`stumpcheck.theory.codegen_numpy`):
the Taylor polynomial SymPy derives for |β| < TAYLOR_SWITCH (degree TAYLOR_DEGREE) and SymPy's form in
p = 1/(e^{|β|} − 1) beyond, with the reflections Λ(−β) = β + Λ(β), κ₁(−β) = 1 − κ₁(β),
κ_k(−β) = (−1)^k κ_k(β). JAX traces both branches, so each is evaluated at a safe point where the other is
taken (the Taylor polynomial at 0 for |β| ≥ TAYLOR_SWITCH, the large-rate form at 2·TAYLOR_SWITCH for
|β| < TAYLOR_SWITCH): neither produces an inf or a NaN, nor does its derivative, and ``jax.grad`` of a
printed expression is the derivative of the value's own formula. Softmax weights are
exp(−logsumexp(d)) with d_i = ℓ_i − ℓ_j (``jax.scipy.special.logsumexp`` shifts the largest out).

Precision: JAX's dtype, float32 unless ``jax_enable_x64`` is on (then as accurate as the numpy target).
"""

from __future__ import annotations

from sympy.printing.numpy import JaxPrinter

from stumpcheck.theory.codegen_numpy import TAYLOR_DEGREE, TAYLOR_SWITCH, _ConstantFunctions, _SpecialPrinting
from stumpcheck.theory.codegen_rewrites import MAX_CUMULANT_ORDER, stabilize
from stumpcheck.theory.special import large_rate_form, taylor_coefficients

__all__ = ["JaxModelPrinter", "jax_special_functions_source"]


class JaxModelPrinter(_SpecialPrinting, _ConstantFunctions, JaxPrinter):
    """SymPy's JAX printer that knows Λ, κ_k, softmax weights and the constants ζ(n), Li_s(z)."""


def jax_special_functions_source(printer: JaxModelPrinter) -> str:
    """Source of the JAX Λ, κ_k and softmax helpers (the Taylor coefficients and large-rate forms printed)."""
    orders = range(0, MAX_CUMULANT_ORDER + 1)
    taylor = "\n".join(
        f"    {k}: ({', '.join(repr(float(c)) for c in reversed(taylor_coefficients(k, TAYLOR_DEGREE)))},),"
        for k in orders)
    large = "\n".join(
        f"    if order == {k}:\n        return {printer.doprint(stabilize(large_rate_form(k), expm1=True))}"
        for k in orders)
    return _JAX_SPECIALS.format(taylor=taylor, large=large, switch=float(TAYLOR_SWITCH), degree=TAYLOR_DEGREE)


_JAX_SPECIALS = '''
# Taylor coefficients about 0, highest degree first, for order 0 (Λ) and κ_1..; degree {degree}, |β| < {switch}.
_TAYLOR = {{
{taylor}
}}
_SWITCH = {switch}


def _large_rate(order, beta, q, p):
    """κ_order(β) (order 0: Λ(β)) for β ≥ {switch}; q = exp(-β), p = q/(1 - q)."""
{large}
    raise ValueError(f"cumulant order {{order}} is not generated")


def _special(order, beta):
    """κ_order(β) (order 0: Λ(β)), each branch evaluated at a safe point where the other is taken."""
    beta = jax.numpy.asarray(beta)
    if not jax.numpy.issubdtype(beta.dtype, jax.numpy.inexact):
        beta = beta.astype(jax.numpy.result_type(float))
    size = jax.numpy.abs(beta)
    small = size < _SWITCH
    near = jax.numpy.where(small, beta, 0.0)
    far = jax.numpy.where(small, 2 * _SWITCH, size)
    taylor = jax.numpy.zeros_like(near)
    for c in _TAYLOR[order]:
        taylor = taylor * near + c
    q = jax.numpy.exp(-far)
    value = _large_rate(order, far, q, -q / jax.numpy.expm1(-far))
    positive = beta > 0
    if order == 0:
        value = jax.numpy.where(positive, value, far + value)
    elif order == 1:
        value = jax.numpy.where(positive, value, 1.0 - value)
    elif order % 2 == 1:
        value = jax.numpy.where(positive, value, -value)
    return jax.numpy.where(small, taylor, value)


def trunc_exp_log_mass(beta):
    """Λ(β) = log((1 - exp(-β))/β), stable for all real β and differentiable by JAX."""
    return _special(0, beta)


def trunc_exp_cumulant(order, beta):
    """κ_order(β), the cumulants of the density ∝ exp(-βτ) on [0, 1], differentiable by JAX."""
    if order not in _TAYLOR or order == 0:
        raise ValueError(f"cumulant order {{order}} is not generated")
    return _special(order, beta)


def softmax_weight(index, *log_masses):
    """exp(ℓ_index) / Σ exp(ℓ_i) = exp(ℓ_index − logsumexp(ℓ))."""
    ells = jax.numpy.stack(jax.numpy.broadcast_arrays(*log_masses))
    return jax.numpy.exp(ells[index] - jax.scipy.special.logsumexp(ells, axis=0))


def softmax_weight_differences(*differences):
    """1 / Σ exp(d_i) = exp(−logsumexp(d)) for d_i = ℓ_i − ℓ_j (one d_i is 0): the softmax weight of j."""
    ds = jax.numpy.stack(jax.numpy.broadcast_arrays(*differences))
    return jax.numpy.exp(-jax.scipy.special.logsumexp(ds, axis=0))
'''
