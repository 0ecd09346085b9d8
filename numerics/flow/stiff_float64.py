"""Float64 stepping of the flow by scipy's stiff solvers (LSODA, BDF, Radau) with the exact Jacobian.

The flow in s = log(1 + t) is stiff and, once calibrated, smooth: a variable-order multistep
method (LSODA's BDF side, or BDF) takes long steps with about one field evaluation each and
re-evaluates the Jacobian ∂f/∂z = −(1 + t)∇²L only when its Newton iteration slows, where a
Rosenbrock pair (:mod:`stumpcheck.numerics.flow.ode.rosenbrock`) needs a Jacobian and several stages at
every step. Radau (implicit Runge–Kutta, order 5) is the one-step alternative.

:func:`solve_scipy` drives a :class:`scipy.integrate.OdeSolver` step by step, so that it keeps
the shape of :func:`stumpcheck.numerics.flow.ode.adaptive`: the same :class:`~stumpcheck.numerics.flow.ode.Solution`
(start, the save times, the end), status, step budget and progress callback. Save times inside
a step are read from the solver's dense output (its interpolant has the method's order), not
landed on. A field that raises ArithmeticError or returns non-finite values ends the solve
with Status.NONFINITE, keeping what was computed; scipy's own failure (its step size fell below
its minimum) ends it with Status.DT_MIN. scipy does not report rejected steps: ``rejected`` is
None. Float64 only.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import scipy.integrate

from stumpcheck.numerics.flow.ode import SaveAt, Solution, Status

__all__ = ["ScipyMethod", "SCIPY_METHODS", "SCIPY_MIN_RTOL", "solve_scipy"]

#: scipy's smallest rtol (100 ulps of 1); it silently-with-a-warning raises smaller ones to it.
SCIPY_MIN_RTOL = 100 * float(np.finfo(float).eps)


@dataclass(frozen=True)
class ScipyMethod:
    """One of scipy's stiff ``OdeSolver`` classes, by the name ``solve_ivp`` gives it."""

    name: str
    scipy_name: str
    description: str
    #: scipy runs at tolerance_scale × (rtol, atol): see :data:`SCIPY_METHODS`.
    tolerance_scale: float = 1.0
    needs_jacobian: bool = True

    @property
    def min_rtol(self) -> float:
        """The smallest rtol this method accepts: scipy raises an rtol below 100 ulps (2.2e-14) to that
        (with a warning), so rtol·tolerance_scale must stay above it, for the a-posteriori solve at rtol/10 too."""
        return SCIPY_MIN_RTOL / self.tolerance_scale * 10


#: The multistep methods run at rtol/100: measured along this flow, their global error per unit
#: of local tolerance is 30–150× that of Rodas4 (final relative error in b at rtol 1e-8, against a
#: Radau rtol 1e-12 or the 30-digit reference: LSODA 2.9e-9 to 2.1e-8, Rodas4 0.9e-10 to 1.7e-10, on four
#: (start, horizon) pairs from (10, 10) → 10⁶ to (10, 10) → 10¹²); at rtol/100 LSODA ends within 0.8–4× of
#: Rodas4's error, so that one rtol means about the same accuracy whichever solver is chosen. Radau,
#: more conservative than Rodas4 at the same rtol (1.6e-11 to 4e-11), runs at rtol.
SCIPY_METHODS = {
    "lsoda": ScipyMethod("lsoda", "LSODA", "scipy LSODA (Adams/BDF switching, exact Jacobian), at rtol/100", 1e-2),
    "bdf": ScipyMethod("bdf", "BDF", "scipy BDF (variable order 1-5, exact Jacobian), at rtol/100", 1e-2),
    "radau": ScipyMethod("radau", "Radau", "scipy Radau IIA (order 5, exact Jacobian)"),
}


class _Counted:
    """f and ∂f/∂z of ``field`` for scipy, counting the field evaluations, with finite checks."""

    def __init__(self, field):
        self.field = field
        self.evaluations = 0

    def fun(self, s, z):
        self.evaluations += 1
        value = np.asarray(self.field(s, z), dtype=float)
        if not np.all(np.isfinite(value)):
            raise ArithmeticError(f"non-finite vector field at s={s}")
        return value

    def jac(self, s, z):
        self.evaluations += 1
        _, jac, _ = self.field.linearization(s, z)
        jac = np.asarray(jac, dtype=float)
        if not np.all(np.isfinite(jac)):
            raise ArithmeticError(f"non-finite Jacobian at s={s}")
        return jac


def solve_scipy(field, method: ScipyMethod, s0: float, s1: float, y0, *, saveat: SaveAt = SaveAt(),
                rtol: float, atol: float, max_steps: int = 100_000, progress=None) -> Solution:
    """Integrate ``field(s, y)`` (with ``field.linearization`` for the Jacobian) from s0 to s1 by ``method``.

    Mixed tolerance atol + rtol·|y| per component (scipy's RMS norm), both scaled by
    ``method.tolerance_scale``. Returns the start, every
    save time of ``saveat.ts`` (``saveat.steps`` also saves every step) and the end.
    """
    s0, s1 = float(s0), float(s1)
    if not (math.isfinite(s0) and math.isfinite(s1) and s1 > s0):
        raise ValueError(f"need finite s0 < s1, got s0={s0}, s1={s1}")
    if not rtol * method.tolerance_scale >= SCIPY_MIN_RTOL:
        raise ValueError(f"{method.name} runs at rtol x {method.tolerance_scale:g}, which must be >= {SCIPY_MIN_RTOL:.3g} "
                         f"(scipy would raise it), got rtol={rtol}")
    counted = _Counted(field)
    targets = list(saveat.sorted_times(s0, s1))
    ts, ys = [s0], [np.array(y0, dtype=float)]
    status, steps = Status.SUCCESS, 0
    end_s, end_y = ts[-1], ys[-1]  # the last accepted state
    solver_class = getattr(scipy.integrate, method.scipy_name)
    try:
        scale = method.tolerance_scale
        solver = solver_class(counted.fun, s0, np.array(y0, dtype=float), s1, rtol=rtol * scale, atol=atol * scale,
                              jac=counted.jac)
        while solver.status == "running":
            if steps >= max_steps:
                status = Status.MAX_STEPS
                break
            solver.step()
            if solver.status == "failed":
                status = Status.DT_MIN
                break
            steps += 1
            end_s, end_y = float(solver.t), np.array(solver.y, dtype=float)
            inside = [x for x in targets if x <= solver.t]
            if inside:
                targets = targets[len(inside):]
                dense = solver.dense_output()
                for x in inside:
                    if x > ts[-1]:
                        ts.append(float(x))
                        ys.append(np.asarray(dense(x), dtype=float))
            if saveat.steps and solver.t > ts[-1]:
                ts.append(float(solver.t))
                ys.append(np.array(solver.y, dtype=float))
            if progress is not None:
                progress(end_s)
    except ArithmeticError:
        status = Status.NONFINITE
    except KeyboardInterrupt:
        status = Status.INTERRUPTED
    if status is Status.SUCCESS:
        end_s = s1  # scipy ends exactly on t_bound
    if end_s > ts[-1]:
        ts.append(end_s)
        ys.append(end_y)
    elif status is Status.SUCCESS:
        ys[-1] = end_y  # a save time at s1 itself: the solver's own end state, not the interpolant
    return Solution(ts=np.array(ts), ys=np.array(ys), status=status, accepted=steps, rejected=None,
                    evaluations=counted.evaluations,
                    info={"solver": method.description, "rtol": rtol, "atol": atol, "arithmetic": "float64",
                          "dps": None})
