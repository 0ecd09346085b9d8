"""Explicit embedded Runge–Kutta pairs (Butcher tableaux).

A solver takes one step y(s) → y(s + h) of dy/ds = f(s, y) and returns the
new state, an estimate of its local error (difference of the embedded pair),
and the field at the new point when the method is FSAL (first same as last).
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction as F

import numpy as np

from stumpcheck.numerics.flow.ode.arithmetic import FLOAT64

__all__ = ["Solver", "Bosh3", "Dopri5"]


@dataclass(frozen=True)
class Solver:
    """An explicit embedded pair given by its Butcher tableau.

    ``order`` is the order of the propagated solution; the error estimate is
    of order ``order − 1`` (controller exponent 1/order).
    """

    name: str
    order: int
    c: tuple
    a: tuple       # lower-triangular rows
    b: tuple       # propagated weights
    b_err: tuple   # b − b̂ (difference with the embedded method)
    fsal: bool

    needs_jacobian = False

    def step(self, field, s, y: np.ndarray, h, f0: np.ndarray, linearization=None, arithmetic=FLOAT64):
        """One step: (y_new, error_estimate, f(s + h, y_new) or None), in ``arithmetic``."""
        sc = arithmetic.scalar
        stages = [f0]
        for i in range(1, len(self.c)):
            increment = sum(sc(coef) * k for coef, k in zip(self.a[i], stages) if coef)
            stages.append(field(s + sc(self.c[i]) * h, y + h * increment))
        y_new = y + h * sum(sc(w) * k for w, k in zip(self.b, stages) if w)
        error = h * sum(sc(w) * k for w, k in zip(self.b_err, stages) if w)
        f_new = stages[-1] if self.fsal else None
        return y_new, error, f_new


def _err(b, b_hat):
    return tuple(x - y for x, y in zip(b, b_hat))


# Bogacki–Shampine 3(2), FSAL.
_BS_B = (F(2, 9), F(1, 3), F(4, 9), F(0))
Bosh3 = Solver(
    name="Bogacki-Shampine 3(2)", order=3,
    c=(F(0), F(1, 2), F(3, 4), F(1)),
    a=((), (F(1, 2),), (F(0), F(3, 4)), _BS_B[:3]),
    b=_BS_B, b_err=_err(_BS_B, (F(7, 24), F(1, 4), F(1, 3), F(1, 8))), fsal=True)

# Dormand–Prince 5(4), FSAL.
_DP_B = (F(35, 384), F(0), F(500, 1113), F(125, 192), F(-2187, 6784), F(11, 84), F(0))
Dopri5 = Solver(
    name="Dormand-Prince 5(4)", order=5,
    c=(F(0), F(1, 5), F(3, 10), F(4, 5), F(8, 9), F(1), F(1)),
    a=((), (F(1, 5),), (F(3, 40), F(9, 40)), (F(44, 45), F(-56, 15), F(32, 9)),
       (F(19372, 6561), F(-25360, 2187), F(64448, 6561), F(-212, 729)),
       (F(9017, 3168), F(-355, 33), F(46732, 5247), F(49, 176), F(-5103, 18656)),
       _DP_B[:6]),
    b=_DP_B,
    b_err=_err(_DP_B, (F(5179, 57600), F(0), F(7571, 16695), F(393, 640), F(-92097, 339200),
                       F(187, 2100), F(1, 40))),
    fsal=True)
