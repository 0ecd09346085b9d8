"""The population flow field at D digits, and the log-scale coordinates of the D-digit flow.

With s = log(1 + t) the flow dz/dt = −∇L(z), z = (a, b), reads dz/ds = f(s, z) = −(1 + t)·∇L(z),
∂f/∂z = −(1 + t)·∇²L(z), ∂f/∂s = f (docs/model.md §4; :mod:`numerics.flow.field` has the float64 field).

* :class:`PopulationFlowFieldMP` — f and ∂f/∂z at the solver's mpmath precision plus
  :data:`FIELD_GUARD_BITS`, ∇L and ∇²L by breakpoint Gauss–Legendre with the integrand from the
  generated Arb (default) or mpmath code; half of each Arb evaluation can run in a second process.
* :class:`LogScaleField` — the same flow in the coordinates w = (u, v) = (a − b, log b). Along the
  flow b ≈ (C t)^{1/4} grows like e^{s/4} while u ≈ 2 log b + O(1) and v ≈ s/4 + O(1) are nearly
  linear in s, and a step's error is measured on u (the calibration gap a − b, the flow's stiff
  direction) relative to |u| ≈ 2 log b rather than to |a| ≈ b: a high-order method takes steps
  set by the slow corrections, with the stiff direction controlled 10²–10³ times tighter.

A state outside the domain b > 0 raises ArithmeticError (the integrator rejects the step).
"""

from __future__ import annotations

import multiprocessing
from concurrent.futures.process import BrokenProcessPool

import mpmath
import numpy as np

from numerics.certified.arb_quadrature import loss_gradient_hessian_arb
from numerics.population.quantities import loss_gradient_hessian_gauss_legendre
from numerics.precision import InputError
from numerics.processes import parent_watching_pool

__all__ = ["RHS_BACKENDS", "FIELD_GUARD_BITS", "PopulationFlowFieldMP", "LogScaleField"]

#: Integrands of a high-precision (``dps``) flow: generated Arb (default) or generated mpmath code.
RHS_BACKENDS = ("arb", "mpmath")
#: Bits the high-precision flow field adds to the solver's precision (dps digits plus guard bits).
FIELD_GUARD_BITS = 20


def _outside_domain(z) -> bool:
    return not (z[1] > 0 and mpmath.isfinite(z[0]) and mpmath.isfinite(z[1]))


class PopulationFlowFieldMP:
    """The same field at the current mpmath precision plus ``guard`` bits.

    ∇L and ∇²L by ``order``-point Gauss–Legendre on each breakpoint piece,
    with the integrand from the generated Arb code (``rhs="arb"``, the
    default: :func:`numerics.certified.arb_quadrature.loss_gradient_hessian_arb`, about
    9× faster at 30 digits; the largest relative rounding bound seen is kept in
    ``rounding_bound``) or the generated mpmath code (``rhs="mpmath"``:
    :func:`numerics.population.quantities.loss_gradient_hessian_gauss_legendre`). Values
    are rounded back to the caller's precision.
    """

    def __init__(self, estimator: str = "one-head", order: int = 20, guard: int = FIELD_GUARD_BITS, rhs: str = "arb",
                 workers: int = 1):
        if rhs not in RHS_BACKENDS:
            raise InputError(f"unknown right-hand side {rhs!r}; expected one of {', '.join(RHS_BACKENDS)}")
        if not (isinstance(workers, int) and workers in (1, 2)):
            raise InputError(f"workers must be 1 or 2, got {workers!r}")
        # with the Arb integrand and two workers, half of the pieces are summed in a second process
        self._pool = None
        if workers == 2 and rhs == "arb":
            self._pool = parent_watching_pool(1, mp_context=multiprocessing.get_context("spawn"))
        self.estimator = estimator
        self.order = order
        self.guard = guard
        self.rhs = rhs
        self.rounding_bound = 0.0

    def _moments(self, z, hessian: bool):
        if _outside_domain(z):
            raise ArithmeticError(f"state outside the domain b > 0: {z}")
        with mpmath.workprec(mpmath.mp.prec + self.guard):
            if self.rhs == "arb":
                try:
                    moments = loss_gradient_hessian_arb(z[0], z[1], order=self.order, estimator=self.estimator,
                                                        hessian=hessian, pool=self._pool)
                except (BrokenProcessPool, OSError, RuntimeError):
                    if self._pool is None:
                        raise
                    self.close()  # the second process could not run: carry on in this one
                    moments = loss_gradient_hessian_arb(z[0], z[1], order=self.order, estimator=self.estimator,
                                                        hessian=hessian)
                self.rounding_bound = max(self.rounding_bound, moments.rounding_bound)
                return moments.gradient, moments.hessian
            _, grad, hess = loss_gradient_hessian_gauss_legendre(z[0], z[1], order=self.order,
                                                                 estimator=self.estimator, hessian=hessian)
        return grad, hess

    def close(self) -> None:
        """Stop the second process (if any)."""
        if self._pool is not None:
            self._pool.shutdown(wait=True, cancel_futures=True)
            self._pool = None

    def __call__(self, s, z) -> np.ndarray:
        grad, _ = self._moments(z, False)
        scale = -mpmath.exp(s)
        return np.array([+(scale * grad[0]), +(scale * grad[1])], dtype=object)

    def linearization(self, s, z):
        grad, hess = self._moments(z, True)
        scale = -mpmath.exp(s)
        value = np.array([+(scale * grad[0]), +(scale * grad[1])], dtype=object)
        jac = np.array([[+(scale * hess[i][j]) for j in range(2)] for i in range(2)], dtype=object)
        return value, jac, value



class LogScaleField:
    """A flow field f(s, z), z = (a, b), in the coordinates w = (u, v) = (a − b, log b), at mpmath precision.

    With b = e^v, a = u + e^v:

        g(s, w) = (f_a − f_b, f_b / b),
        ∂g/∂w = T·(∂f/∂z)·Z + [[0, 0], [0, −f_b / b]],   T = [[1, −1], [0, 1/b]],   Z = [[1, b], [0, b]],
        ∂g/∂s = T·∂f/∂s,

    exact (no approximation beyond f's own). ``field`` provides ``__call__`` and ``linearization``
    (as :class:`PopulationFlowFieldMP`); :meth:`to_coordinates` and :meth:`from_coordinates` map
    states at the current mpmath precision (relative rounding of a few units in the last place).
    """

    def __init__(self, field):
        self.field = field

    @staticmethod
    def to_coordinates(z) -> np.ndarray:
        a, b = mpmath.mpf(z[0]), mpmath.mpf(z[1])
        if not b > 0:
            raise ArithmeticError(f"state outside the domain b > 0: {z}")
        return np.array([a - b, mpmath.log(b)], dtype=object)

    @staticmethod
    def from_coordinates(w) -> np.ndarray:
        b = mpmath.exp(w[1])
        return np.array([w[0] + b, b], dtype=object)

    def __call__(self, s, w) -> np.ndarray:
        z = self.from_coordinates(w)
        f = self.field(s, z)
        return np.array([f[0] - f[1], f[1] / z[1]], dtype=object)

    def linearization(self, s, w):
        z = self.from_coordinates(w)
        f, jac, f_s = self.field.linearization(s, z)
        b = z[1]
        # (∂f/∂z)·Z: columns ∂f/∂u = ∂f/∂a and ∂f/∂v = b (∂f/∂a + ∂f/∂b)
        jz = [[jac[i][0], b * (jac[i][0] + jac[i][1])] for i in range(2)]
        value = np.array([f[0] - f[1], f[1] / b], dtype=object)
        jw = np.array([[jz[0][0] - jz[1][0], jz[0][1] - jz[1][1]],
                       [jz[1][0] / b, jz[1][1] / b - value[1]]], dtype=object)
        g_s = np.array([f_s[0] - f_s[1], f_s[1] / b], dtype=object)
        return value, jw, g_s
