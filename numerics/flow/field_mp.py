"""The population flow field at D digits, and the log-scale coordinates of the D-digit flow.

With s = log(1 + t) the flow dz/dt = −∇L(z), z = (a, b), reads dz/ds = f(s, z) = −(1 + t)·∇L(z),
∂f/∂z = −(1 + t)·∇²L(z), ∂f/∂s = f (docs/model.md §4; :mod:`stumpcheck.numerics.flow.field` has the float64 field).

* :class:`PopulationFlowFieldMP` — f and ∂f/∂z at the solver's mpmath precision plus
  :data:`FIELD_GUARD_BITS`, ∇L and ∇²L by breakpoint Gauss–Legendre with the integrand in Arb
  balls (default; the one head's real-ball closed forms) or from the generated mpmath code, one order on every piece or (Arb, ``piece_digits``)
  an order per piece chosen by its own two-order check (:mod:`stumpcheck.numerics.flow.piece_orders`); half
  of each Arb evaluation (by node count) can run in a second process.
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

from stumpcheck.numerics.certified.enclosures.arb_quadrature import loss_gradient_hessian_arb
from stumpcheck.numerics.flow.field import FIELD_GUARD_BITS, RHS_BACKENDS
from stumpcheck.numerics.flow.piece_orders import PieceOrderRule
from stumpcheck.numerics.population.quantities import loss_gradient_hessian_gauss_legendre
from stumpcheck.numerics.precision import InputError
from stumpcheck.numerics.processes import parent_watching_pool

__all__ = ["RHS_BACKENDS", "FIELD_GUARD_BITS", "PopulationFlowFieldMP", "LogScaleField"]


def _outside_domain(z) -> bool:
    return not (z[1] > 0 and mpmath.isfinite(z[0]) and mpmath.isfinite(z[1]))


class PopulationFlowFieldMP:
    """The same field at the current mpmath precision plus ``guard`` bits.

    ∇L and ∇²L by ``order``-point Gauss–Legendre on each breakpoint piece,
    with the integrand in Arb balls (``rhs="arb"``, the default:
    :func:`stumpcheck.numerics.certified.enclosures.arb_quadrature.loss_gradient_hessian_arb`; for the one head the
    real-ball closed forms of :mod:`stumpcheck.numerics.certified.enclosures.one_head_arb`, about 4× faster per node
    than the generated Arb jet at 30 digits, itself about 9× faster than the mpmath code; the
    largest relative rounding bound seen is kept in ``rounding_bound``) or the generated mpmath
    code (``rhs="mpmath"``:
    :func:`stumpcheck.numerics.population.quantities.loss_gradient_hessian_gauss_legendre`). Values
    are rounded back to the caller's precision.

    ``piece_digits`` (Arb only): instead of ``order`` on every piece, each piece's own order, accepted
    when its contributions at that order and at 1.5× it differ by at most 10^−piece_digits of the
    totals over the number of pieces, chosen at a step's start (each :meth:`linearization`) and frozen
    for the following evaluations (:class:`stumpcheck.numerics.flow.piece_orders.PieceOrderRule`, kept in
    ``rule``); ``order`` is then the first guess and the fallback.
    """

    def __init__(self, estimator: str = "one-head", order: int = 20, guard: int = FIELD_GUARD_BITS, rhs: str = "arb",
                 workers: int = 1, piece_digits: int | None = None):
        if rhs not in RHS_BACKENDS:
            raise InputError(f"unknown right-hand side {rhs!r}; expected one of {', '.join(RHS_BACKENDS)}")
        if piece_digits is not None and rhs != "arb":
            raise InputError("per-piece quadrature orders need the arb right-hand side")
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
        self.rule = None if piece_digits is None else PieceOrderRule(order, piece_digits, estimator)

    def _rule_moments(self, z, hessian: bool, step_start: bool):
        try:
            values, bound = self.rule.moments(z[0], z[1], hessian=hessian, step_start=step_start, pool=self._pool)
        except (BrokenProcessPool, OSError, RuntimeError):
            if self._pool is None:
                raise
            self.close()  # the second process could not run: carry on in this one
            values, bound = self.rule.moments(z[0], z[1], hessian=hessian, step_start=step_start)
        self.rounding_bound = max(self.rounding_bound, bound)
        grad = (values[0], values[1])
        return grad, (((values[2], values[3]), (values[3], values[4])) if hessian else None)

    def _moments(self, z, hessian: bool, step_start: bool = False):
        if _outside_domain(z):
            raise ArithmeticError(f"state outside the domain b > 0: {z}")
        with mpmath.workprec(mpmath.mp.prec + self.guard):
            if self.rule is not None:
                return self._rule_moments(z, hessian, step_start)
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
        grad, hess = self._moments(z, True, step_start=True)
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
