"""Adaptive integration of dy/ds = f(s, y) from s0 to s1."""

from __future__ import annotations

import math

import numpy as np

from numerics.ode.controllers import PIController
from numerics.ode.saveat import SaveAt
from numerics.ode.solution import Solution, Status
from numerics.ode.solvers import Solver

__all__ = ["diffeqsolve"]


def diffeqsolve(field, solver: Solver, s0: float, s1: float, y0, *, saveat: SaveAt = SaveAt(),
                controller: PIController = PIController(), max_steps: int = 100_000,
                progress=None) -> Solution:
    """Integrate ``field(s, y)`` with ``solver`` under ``controller``.

    ``field`` raises ArithmeticError (or returns non-finite values) where it
    cannot be evaluated; the solve then stops with Status.NONFINITE and keeps
    what it has. ``progress(s)`` is called after every accepted step.
    """
    if not (math.isfinite(s0) and math.isfinite(s1) and s1 > s0):
        raise ValueError(f"need finite s0 < s1, got s0={s0}, s1={s1}")
    y = np.asarray(y0, dtype=float).copy()
    targets = list(saveat.sorted_times(s0, s1))
    ts, ys = [s0], [y.copy()]
    evaluations = 0

    def evaluate(s, state):
        nonlocal evaluations
        evaluations += 1
        value = np.asarray(field(s, state), dtype=float)
        if not np.all(np.isfinite(value)):
            raise ArithmeticError(f"non-finite vector field at s={s}")
        return value

    s, h = s0, controller.h0
    accepted = rejected = 0
    previous_norm = 1.0
    status = Status.SUCCESS
    try:
        f0 = evaluate(s, y)
        while s < s1:
            if accepted + rejected >= max_steps:
                status = Status.MAX_STEPS
                break
            if h < controller.dtmin:
                status = Status.DT_MIN
                break
            next_stop = targets[0] if targets and targets[0] > s else s1
            h_try = min(h, next_stop - s)
            y_new, error, f_new = solver.step(evaluate, s, y, h_try, f0)
            if not np.all(np.isfinite(y_new)):
                norm = math.inf
            else:
                norm = controller.error_norm(y, y_new, error)
            if norm <= 1.0:
                s = next_stop if h_try == next_stop - s else s + h_try
                y = y_new
                f0 = f_new if f_new is not None else evaluate(s, y)
                accepted += 1
                previous_norm = max(norm, 1e-4)
                landed = bool(targets) and s >= targets[0]
                if landed:
                    targets.pop(0)
                if saveat.steps or landed or s >= s1:
                    ts.append(s)
                    ys.append(y.copy())
                if progress is not None:
                    progress(s)
                h = controller.next_step(h_try, norm, previous_norm, solver.order) if h_try == h else max(
                    h, controller.next_step(h_try, norm, previous_norm, solver.order))
            else:
                rejected += 1
                h = controller.next_step(h_try, min(norm, 1e6), previous_norm, solver.order)
    except ArithmeticError:
        status = Status.NONFINITE
    except KeyboardInterrupt:
        status = Status.INTERRUPTED
    if ts[-1] != s:
        ts.append(s)
        ys.append(y.copy())
    return Solution(ts=np.array(ts), ys=np.array(ys), status=status, accepted=accepted, rejected=rejected,
                    evaluations=evaluations, info={"solver": solver.name, "rtol": controller.rtol,
                                                   "atol": controller.atol})
