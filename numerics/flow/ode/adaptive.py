"""Adaptive integration of dy/ds = f(s, y) from s0 to s1."""

from __future__ import annotations

import math

import numpy as np

from stumpcheck.numerics.flow.ode.arithmetic import FLOAT64
from stumpcheck.numerics.flow.ode.controllers import PIController
from stumpcheck.numerics.flow.ode.saveat import SaveAt
from stumpcheck.numerics.flow.ode.solution import Solution, Status

__all__ = ["diffeqsolve"]


def diffeqsolve(field, solver, s0, s1, y0, *, saveat: SaveAt = SaveAt(),
                controller: PIController = PIController(), max_steps: int = 100_000,
                progress=None, linearization=None, arithmetic=FLOAT64) -> Solution:
    """Integrate ``field(s, y)`` with ``solver`` under ``controller``, in ``arithmetic``.

    ``arithmetic`` (:mod:`stumpcheck.numerics.flow.ode.arithmetic`) is the number system of
    the states, times and linear algebra (float64, or mpmath at a given
    precision, raised only for the duration of the solve). The saved ``ts``
    and ``ys`` are in that arithmetic.

    A linearly implicit solver (``solver.needs_jacobian``, e.g. Rodas4) needs
    ``linearization(s, y)`` returning (f(s, y), ∂f/∂y, ∂f/∂s); it is called
    once per accepted point (rejected steps reuse it).

    ``field`` raises ArithmeticError (or returns non-finite values) where it
    cannot be evaluated. At an accepted point that stops the solve with
    Status.NONFINITE, keeping what was computed; at a trial stage it rejects
    the step, which is retried smaller. ``progress(s)`` is called (with a
    float) after every accepted step.
    """
    if not (math.isfinite(float(s0)) and math.isfinite(float(s1)) and s1 > s0):
        raise ValueError(f"need finite s0 < s1, got s0={s0}, s1={s1}")
    if solver.needs_jacobian and linearization is None:
        raise ValueError(f"{solver.name} needs linearization(s, y) -> (f, df/dy, df/ds)")
    with arithmetic.working():
        return _solve(field, solver, s0, s1, y0, saveat, controller, max_steps, progress, linearization,
                      arithmetic)


def _solve(field, solver, s0, s1, y0, saveat, controller, max_steps, progress, linearization, arithmetic):
    sc = arithmetic.scalar
    s0, s1 = sc(s0), sc(s1)
    y = arithmetic.array(y0)
    targets = [sc(x) for x in saveat.sorted_times(float(s0), float(s1))]
    ts, ys = [s0], [y.copy()]
    evaluations = 0

    def evaluate(s, state):
        nonlocal evaluations
        evaluations += 1
        value = field(s, state)
        value = np.asarray(value, dtype=float) if arithmetic is FLOAT64 else arithmetic.array(value)
        if not arithmetic.is_finite(value):
            raise ArithmeticError(f"non-finite vector field at s={s}")
        return value

    def linearize(s, state):
        nonlocal evaluations
        evaluations += 1
        value, jac, f_s = linearization(s, state)
        if arithmetic is FLOAT64:
            value, jac, f_s = (np.asarray(x, dtype=float) for x in (value, jac, f_s))
        else:
            value, f_s = arithmetic.array(value), arithmetic.array(f_s)
            jac = np.array([[sc(x) for x in row] for row in jac], dtype=object)
        if not (arithmetic.is_finite(value) and arithmetic.is_finite(jac) and arithmetic.is_finite(f_s)):
            raise ArithmeticError(f"non-finite vector field or Jacobian at s={s}")
        return value, (jac, f_s)

    def at_point(s, state):
        """(f, linearization or None) at an accepted point."""
        if solver.needs_jacobian:
            return linearize(s, state)
        return evaluate(s, state), None

    s, h = s0, controller.h0
    accepted = rejected = 0
    previous_norm = 1.0
    status = Status.SUCCESS
    stage_failed = False
    try:
        f0, lin = at_point(s, y)
        f_new = None
        while s < s1:
            if accepted + rejected >= max_steps:
                status = Status.MAX_STEPS
                break
            if h < controller.dtmin:
                status = Status.NONFINITE if stage_failed else Status.DT_MIN
                break
            next_stop = targets[0] if targets and targets[0] > s else s1
            remaining = next_stop - s
            h_try = sc(h) if h < remaining else remaining
            try:
                y_new, error, f_new = solver.step(evaluate, s, y, h_try, f0, lin, arithmetic)
                finite = arithmetic.is_finite(y_new) and arithmetic.is_finite(error)
                stage_failed = False
            except ArithmeticError:
                finite, stage_failed = False, True
            if finite:
                norm = controller.error_norm(arithmetic.to_float(y), arithmetic.to_float(y_new),
                                             arithmetic.to_float(error))
            else:
                norm = math.inf
            h_float = float(h_try)
            if norm <= 1.0:
                s = next_stop if h_try == remaining else s + h_try
                y = y_new
                if f_new is not None and not solver.needs_jacobian:
                    f0 = f_new
                else:
                    f0, lin = at_point(s, y)
                accepted += 1
                previous_norm = max(norm, 1e-4)
                landed = bool(targets) and s >= targets[0]
                if landed:
                    targets.pop(0)
                if saveat.steps or landed or s >= s1:
                    ts.append(s)
                    ys.append(y.copy())
                if progress is not None:
                    progress(float(s))
                proposal = controller.next_step(h_float, norm, previous_norm, solver.order)
                # a step cut short to land on a save time does not shrink the next one
                h = proposal if h_float == h else max(h, proposal)
            else:
                rejected += 1
                h = controller.next_step(h_float, min(norm, 1e6), previous_norm, solver.order)
    except ArithmeticError:
        status = Status.NONFINITE
    except KeyboardInterrupt:
        status = Status.INTERRUPTED
    if ts[-1] != s:
        ts.append(s)
        ys.append(y.copy())
    dtype = float if arithmetic is FLOAT64 else object
    return Solution(ts=np.array(ts, dtype=dtype), ys=np.array(ys, dtype=dtype), status=status, accepted=accepted,
                    rejected=rejected, evaluations=evaluations,
                    info={"solver": solver.name, "rtol": controller.rtol, "atol": controller.atol,
                          "arithmetic": arithmetic.name,
                          "dps": getattr(arithmetic, "dps", None)})
