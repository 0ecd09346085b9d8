"""e, ∇e, L, ∇L and ∇²L in float64 over numpy arrays of (a, b, θ), broadcast against each other.

Pointwise, e(θ) and ∇e come from the generated float64 code
(:mod:`stumpcheck.numerics.generated.population_numpy`: Λ, κ_k and softmax weights in their stable forms),
one vectorised call for the whole array. The θ-integrals L, ∇L and ∇²L come from
:func:`stumpcheck.numerics.population.quantities.loss_gradient_hessian_float64` (24-point Gauss–Legendre
on each breakpoint piece) at each broadcast (a, b). Evidence level *sampled* (float64, not a bound):
the accuracy is that of the generated code and of the quadrature (docs/model.md §8).

Inputs are validated elementwise before any work: a finite, 0 < b finite, θ ∈ [0, 1] (θ-integrals:
b ≥ 10⁻³), else :class:`~stumpcheck.numerics.precision.InputError` naming the first bad entry. A 0-d result
comes back as a ``numpy.float64``, an array result with the broadcast shape.
"""

from __future__ import annotations

import numpy as np

from stumpcheck.numerics.generated import population_numpy as gen_np
from stumpcheck.numerics.population.quantities import (MIN_FLOAT64_SCALE, _tag, check_parameters,
                                                       loss_gradient_hessian_float64)
from stumpcheck.numerics.precision import InputError

__all__ = ["error_float64", "error_gradient_float64", "loss_float64", "loss_gradient_float64",
           "loss_hessian_float64"]


def _as_float_arrays(**values) -> list[np.ndarray]:
    """The values as float64 arrays broadcast to one shape (InputError for anything that is not real)."""
    arrays = []
    for name, value in values.items():
        try:
            array = np.asarray(value, dtype=float)
        except (TypeError, ValueError):
            raise InputError(f"{name} must be a real number or an array of them, got {value!r:.60}") from None
        arrays.append(array)
    try:
        return list(np.broadcast_arrays(*arrays))
    except ValueError:
        shapes = ", ".join(f"{name} {np.shape(a)}" for name, a in zip(values, arrays))
        raise InputError(f"the arguments do not broadcast to one shape: {shapes}") from None


def _first_bad(name: str, array: np.ndarray, good: np.ndarray, rule: str) -> None:
    if not np.all(good):
        index = np.argwhere(~good)[0]
        where = f"[{', '.join(str(int(i)) for i in index)}]" if array.ndim else ""
        raise InputError(f"{name}{where} must be {rule}, got {array[tuple(index)]!r}")


def _checked(a, b, theta=None, *, min_b: float = 0.0) -> list[np.ndarray]:
    named = {"a": a, "b": b} | ({} if theta is None else {"theta": theta})
    arrays = _as_float_arrays(**named)
    _first_bad("a", arrays[0], np.isfinite(arrays[0]), "finite")
    _first_bad("b", arrays[1], np.isfinite(arrays[1]) & (arrays[1] > min_b),
               f"finite and > {min_b:g}" + (" (the float64 θ-integrals)" if min_b else " (the attention scale)"))
    if theta is not None:
        _first_bad("theta", arrays[2], (arrays[2] >= 0) & (arrays[2] <= 1), "in [0, 1]")
    return arrays


def _scalar_or_array(value):
    value = np.asarray(value, dtype=float)
    return value[()] if value.ndim == 0 else value


def error_float64(a, b, theta, *, estimator: str = "one-head"):
    """e(θ) = θ̂∞(a, b; θ) − θ in float64, broadcast over arrays of a, b, θ."""
    function = getattr(gen_np, f"error_{_tag(estimator)}")
    a, b, theta = _checked(a, b, theta)
    with np.errstate(over="ignore", under="ignore"):
        return _scalar_or_array(function(a, b, theta))


def error_gradient_float64(a, b, theta, *, estimator: str = "one-head"):
    """(∂e/∂a, ∂e/∂b) in float64, broadcast over arrays of a, b, θ: a tuple of two."""
    function = getattr(gen_np, f"error_gradient_{_tag(estimator)}")
    a, b, theta = _checked(a, b, theta)
    with np.errstate(over="ignore", under="ignore"):
        values = function(a, b, theta)
    return tuple(_scalar_or_array(np.broadcast_to(v, a.shape)) for v in values)


def _integrals(a, b, estimator: str, prior, count: int, pick):
    """``count`` arrays: ``pick(L, ∇L, ∇²L)`` at each broadcast (a, b) (one value when ``count`` is 1)."""
    _tag(estimator)
    check_parameters(1, 1, prior=prior)
    a, b = _checked(a, b, min_b=MIN_FLOAT64_SCALE)
    parts = [np.empty(a.shape) for _ in range(count)]
    for index in np.ndindex(a.shape):
        value, gradient, hessian = loss_gradient_hessian_float64(float(a[index]), float(b[index]),
                                                                 estimator=estimator, prior=prior)
        for part, x in zip(parts, pick(value, gradient, hessian)):
            part[index] = x
    out = tuple(_scalar_or_array(p) for p in parts)
    return out[0] if count == 1 else out


def loss_float64(a, b, *, estimator: str = "one-head", prior=(0, 1)):
    """L(a, b) in float64 at each broadcast (a, b) (b ≥ 10⁻³)."""
    return _integrals(a, b, estimator, prior, 1, lambda value, gradient, hessian: (value,))


def loss_gradient_float64(a, b, *, estimator: str = "one-head", prior=(0, 1)):
    """(∂L/∂a, ∂L/∂b) in float64 at each broadcast (a, b): a tuple of two."""
    return _integrals(a, b, estimator, prior, 2, lambda value, gradient, hessian: tuple(gradient))


def loss_hessian_float64(a, b, *, estimator: str = "one-head", prior=(0, 1)):
    """(∂²L/∂a², ∂²L/∂a∂b, ∂²L/∂b²) in float64 at each broadcast (a, b): a tuple of three."""
    return _integrals(a, b, estimator, prior, 3,
                      lambda value, gradient, hessian: (hessian[0, 0], hessian[0, 1], hessian[1, 1]))
