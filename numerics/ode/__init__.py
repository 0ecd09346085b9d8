"""A small adaptive ODE integrator in diffrax's shape.

One concept per module: the explicit :mod:`~numerics.ode.solvers` (embedded
Runge–Kutta pairs) and the linearly implicit :mod:`~numerics.ode.rosenbrock`
pairs for stiff problems, the step-size :mod:`~numerics.ode.controllers`, what
to save (:mod:`~numerics.ode.saveat`), the :mod:`~numerics.ode.solution` with
its :class:`Status`, and the :mod:`~numerics.ode.arithmetic` a solve runs in
(float64 or mpmath at a given precision). :func:`diffeqsolve` puts them
together.
"""

from numerics.ode.arithmetic import FLOAT64, Float64Arithmetic, MPArithmetic
from numerics.ode.controllers import PIController
from numerics.ode.diffeqsolve import diffeqsolve
from numerics.ode.rosenbrock import Rodas3, Rodas4, Rosenbrock
from numerics.ode.saveat import SaveAt
from numerics.ode.solution import Solution, Status
from numerics.ode.solvers import Bosh3, Dopri5, Solver

__all__ = ["diffeqsolve", "PIController", "SaveAt", "Solution", "Status", "Bosh3", "Dopri5", "Solver",
           "Rosenbrock", "Rodas3", "Rodas4", "FLOAT64", "Float64Arithmetic", "MPArithmetic"]
