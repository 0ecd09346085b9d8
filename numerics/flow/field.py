"""The population flow field in log time (docs/model.md §4), in float64 and at D digits.

With s = log(1 + t) the flow dz/dt = −∇L(z), z = (a, b), reads

    dz/ds = f(s, z) = −(1 + t)·∇L(z),  ∂f/∂z = −(1 + t)·∇²L(z),  ∂f/∂s = f,  t = e^s − 1,

which :func:`stumpcheck.numerics.flow.ode.adaptive` integrates with the exact Jacobian (the Rosenbrock
solvers use it). Two fields, one formula:

* :class:`PopulationFlowField` — float64, ∇L and ∇²L by Gauss–Legendre on the model's breakpoints
  (nodes near θ = 1 placed by their distance from 1): for the one-head and reflected estimators one
  compiled call (:mod:`stumpcheck.numerics.population.one_head_float64`: closed-form switch point, 16 points
  a piece), for the averaged and pooled ones the generated numpy code (24 points a piece);
* :class:`PopulationFlowFieldMP` — at the solver's mpmath precision plus :data:`FIELD_GUARD_BITS`,
  ∇L and ∇²L by breakpoint Gauss–Legendre with the integrand from the generated Arb (default) or
  mpmath code; half of each Arb evaluation can run in a second process (``workers=2``). It lives in
  :mod:`stumpcheck.numerics.flow.field_mp` and is re-exported here.

A state outside the domain b > 0 raises ArithmeticError (the integrator rejects the step).
"""

from __future__ import annotations

import math

import mpmath
import numpy as np

from stumpcheck.numerics.lazy import lazy_exports

__all__ = ["RHS_BACKENDS", "FIELD_GUARD_BITS", "COMPILED_ESTIMATORS", "PopulationFlowField", "PopulationFlowFieldMP"]

#: Integrands of a high-precision (``dps``) flow: generated Arb (default) or generated mpmath code.
RHS_BACKENDS = ("arb", "mpmath")
#: Bits the high-precision flow field adds to the solver's precision (dps digits plus guard bits).
FIELD_GUARD_BITS = 20


# PopulationFlowFieldMP from stumpcheck.numerics.flow.field_mp (which imports the constants above), imported when
# first read (a float64 flow does not load its Arb modules), as the packages' lazy re-exports do
__getattr__, _ = lazy_exports(__name__, {"PopulationFlowFieldMP": "stumpcheck.numerics.flow.field_mp"})


def _kernel():
    """The compiled one-head field (imports numba: only when a float64 field is made)."""
    from stumpcheck.numerics.population import one_head_float64

    return one_head_float64


def _outside_domain(z) -> bool:
    return not (z[1] > 0 and mpmath.isfinite(z[0]) and mpmath.isfinite(z[1]))


#: Estimators whose float64 field is the compiled one-head kernel (the reflected one has e′(θ) = −e(1 − θ),
#: so under the prior Uniform[0, 1] the same L, ∇L, ∇²L).
COMPILED_ESTIMATORS = ("one-head", "reflected")


class PopulationFlowField:
    """dz/ds = −(1 + t)·∇L(z) with t = e^s − 1 (float64 breakpoint Gauss–Legendre).

    Calling it gives f(s, z); :meth:`linearization` gives (f, ∂f/∂z, ∂f/∂s)
    with ∂f/∂z = −(1 + t)∇²L(z) and ∂f/∂s = f. A state outside the domain
    (b ≤ 0 or non-finite, e.g. a trial stage of a too-long step) raises
    ArithmeticError, which the integrator treats as a rejected step.

    ``order`` is the number of Gauss–Legendre points a piece: by default
    :data:`stumpcheck.numerics.population.one_head_float64.DEFAULT_ORDER` (16, on ladders of ratio 4) for the
    compiled estimators (:data:`COMPILED_ESTIMATORS`), where it agrees with 40 points to ~3e-15
    relative along the flow, and 24 for the others.
    """

    def __init__(self, estimator: str = "one-head", order: int | None = None):
        self.estimator = estimator
        self.compiled = estimator in COMPILED_ESTIMATORS
        self.order = order if order is not None else (_kernel().DEFAULT_ORDER if self.compiled else 24)

    @property
    def description(self) -> str:
        if self.compiled:
            return (f"Gauss-Legendre ({self.order} points) on model breakpoints (closed-form switch point), "
                    "nodes near 1 by their distance from 1, compiled")
        return f"Gauss-Legendre ({self.order} points) on model breakpoints, nodes near 1 by their distance from 1"

    def _moments(self, z, hessian: bool):
        a, b = float(z[0]), float(z[1])
        if not (b > 0 and math.isfinite(a) and math.isfinite(b)):
            raise ArithmeticError(f"state outside the domain b > 0: {z}")
        if self.compiled:
            return _kernel().loss_gradient_hessian(a, b, order=self.order, hessian=hessian)
        from stumpcheck.numerics.population.quantities import _gauss_legendre_float64

        return _gauss_legendre_float64(a, b, self.estimator, (0, 1), self.order, hessian)

    def __call__(self, s, z) -> np.ndarray:
        return -math.exp(s) * self._moments(z, False)[1]

    def linearization(self, s, z):
        _, grad, hess = self._moments(z, True)
        scale = -math.exp(s)
        value = scale * grad
        return value, scale * hess, value
