"""A small adaptive ODE integrator in diffrax's shape.

One concept per module: the explicit :mod:`~stumpcheck.numerics.flow.ode.solvers` (embedded
Runge–Kutta pairs), the linearly implicit :mod:`~stumpcheck.numerics.flow.ode.rosenbrock`
pairs and the :mod:`~stumpcheck.numerics.flow.ode.extrapolation` of linearly implicit Euler for stiff problems, the step-size :mod:`~stumpcheck.numerics.flow.ode.controllers`, what
to save (:mod:`~stumpcheck.numerics.flow.ode.saveat`), the :mod:`~stumpcheck.numerics.flow.ode.solution` with
its :class:`Status`, and the :mod:`~stumpcheck.numerics.flow.ode.arithmetic` a solve runs in
(float64 or mpmath at a given precision). :func:`diffeqsolve` puts them
together.
"""

from stumpcheck.numerics.flow.ode.arithmetic import FLOAT64, Float64Arithmetic, MPArithmetic
from stumpcheck.numerics.flow.ode.controllers import PIController
from stumpcheck.numerics.flow.ode.adaptive import diffeqsolve
from stumpcheck.numerics.flow.ode.extrapolation import EulerExtrapolation, Extrapolation7
from stumpcheck.numerics.flow.ode.rosenbrock import Rodas3, Rodas4, Rosenbrock
from stumpcheck.numerics.flow.ode.saveat import SaveAt
from stumpcheck.numerics.flow.ode.solution import Solution, Status
from stumpcheck.numerics.flow.ode.solvers import Bosh3, Dopri5, Solver

__all__ = ["diffeqsolve", "PIController", "SaveAt", "Solution", "Status", "Bosh3", "Dopri5", "Solver",
           "Rosenbrock", "Rodas3", "Rodas4", "EulerExtrapolation", "Extrapolation7", "FLOAT64", "Float64Arithmetic", "MPArithmetic"]
