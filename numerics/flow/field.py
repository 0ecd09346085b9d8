"""The population flow field in log time (docs/model.md §4), in float64 and at D digits.

With s = log(1 + t) the flow dz/dt = −∇L(z), z = (a, b), reads

    dz/ds = f(s, z) = −(1 + t)·∇L(z),  ∂f/∂z = −(1 + t)·∇²L(z),  ∂f/∂s = f,  t = e^s − 1,

which :func:`numerics.flow.ode.diffeqsolve` integrates with the exact Jacobian (the Rosenbrock
solvers use it). Two fields, one formula:

* :class:`PopulationFlowField` — float64, ∇L and ∇²L by 24-point Gauss–Legendre on the model's
  breakpoints (nodes near θ = 1 placed by their distance from 1);
* :class:`PopulationFlowFieldMP` — at the solver's mpmath precision plus :data:`FIELD_GUARD_BITS`,
  ∇L and ∇²L by breakpoint Gauss–Legendre with the integrand from the generated Arb (default) or
  mpmath code; half of each Arb evaluation can run in a second process (``workers=2``). It lives in
  :mod:`numerics.flow.field_mp` and is re-exported here.

A state outside the domain b > 0 raises ArithmeticError (the integrator rejects the step).
"""

from __future__ import annotations

import math

import mpmath
import numpy as np

from numerics.flow.field_mp import FIELD_GUARD_BITS, RHS_BACKENDS, PopulationFlowFieldMP
from numerics.population.quantities import _gauss_legendre_float64

__all__ = ["RHS_BACKENDS", "FIELD_GUARD_BITS", "PopulationFlowField", "PopulationFlowFieldMP"]


def _outside_domain(z) -> bool:
    return not (z[1] > 0 and mpmath.isfinite(z[0]) and mpmath.isfinite(z[1]))


class PopulationFlowField:
    """dz/ds = −(1 + t)·∇L(z) with t = e^s − 1 (float64 breakpoint Gauss–Legendre, 24 points).

    Calling it gives f(s, z); :meth:`linearization` gives (f, ∂f/∂z, ∂f/∂s)
    with ∂f/∂z = −(1 + t)∇²L(z) and ∂f/∂s = f. A state outside the domain
    (b ≤ 0 or non-finite, e.g. a trial stage of a too-long step) raises
    ArithmeticError, which the integrator treats as a rejected step.
    """

    def __init__(self, estimator: str = "one-head", order: int = 24):
        self.estimator = estimator
        self.order = order

    def _moments(self, z, hessian: bool):
        if _outside_domain(z):
            raise ArithmeticError(f"state outside the domain b > 0: {z}")
        return _gauss_legendre_float64(float(z[0]), float(z[1]), self.estimator, (0, 1), self.order, hessian)

    def __call__(self, s, z) -> np.ndarray:
        return -math.exp(s) * self._moments(z, False)[1]

    def linearization(self, s, z):
        _, grad, hess = self._moments(z, True)
        scale = -math.exp(s)
        value = scale * grad
        return value, scale * hess, value
