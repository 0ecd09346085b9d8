"""A small adaptive ODE integrator in diffrax's shape.

One concept per module: the :mod:`~numerics.ode.solvers` (embedded
Runge–Kutta pairs), the step-size :mod:`~numerics.ode.controllers`, what to
save (:mod:`~numerics.ode.saveat`) and the :mod:`~numerics.ode.solution` with
its :class:`Status`. :func:`diffeqsolve` puts them together.
"""

from numerics.ode.controllers import PIController
from numerics.ode.diffeqsolve import diffeqsolve
from numerics.ode.saveat import SaveAt
from numerics.ode.solution import Solution, Status
from numerics.ode.solvers import Bosh3, Dopri5, Solver

__all__ = ["diffeqsolve", "PIController", "SaveAt", "Solution", "Status", "Bosh3", "Dopri5", "Solver"]
