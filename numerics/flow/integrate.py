"""Population gradient flow dz/dt = −∇L(z), z = (a, b): the simple entry point.

Fixed steps in t cannot reach t ≈ 10¹² (docs/model.md §8): the flow is integrated
in s = log(1 + t), in which b ∝ t^{1/4} grows linearly in s, as
dz/ds = −(1 + t)·∇L(z) (:class:`numerics.flow.field.PopulationFlowField`),
by :func:`numerics.flow.ode.diffeqsolve` with the Bogacki–Shampine 3(2) pair,
saving every accepted step. :func:`numerics.flow.run.run_population_flow`
adds the diagnostics, fits and the a-posteriori check.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from numerics.flow.ode import Bosh3, PIController, SaveAt, Status, diffeqsolve
from numerics.population.quantities import loss_and_gradient_float64
from numerics.flow.field import PopulationFlowField
from numerics.flow.run import MAX_T_MAX, MIN_RTOL_FLOAT64
from numerics.precision import InputError

__all__ = ["FlowStatus", "FlowSolution", "integrate_flow"]

#: The solve status (an alias of :class:`numerics.flow.ode.Status`).
FlowStatus = Status


@dataclass
class FlowSolution:
    """Saved times t, parameters a, b, loss L and gradient ∇L, and the status."""

    t: np.ndarray
    a: np.ndarray
    b: np.ndarray
    loss: np.ndarray
    grad: np.ndarray
    status: Status
    steps: int
    rejected: int
    gradient_evaluations: int
    settings: dict = field(default_factory=dict)


def integrate_flow(a0: float, b0: float, t_max: float, *, rtol: float = 1e-8, atol: float = 1e-10,
                   save_every: int = 1, max_steps: int = 200_000, estimator: str = "one-head",
                   progress=None) -> FlowSolution:
    """Integrate dz/dt = −∇L(z) from z(0) = (a0, b0) to t_max (> 0), saving every step.

    ``save_every`` thins the saved steps (the start and the end are always kept).
    ``progress``, if given, is called with the current t after each accepted step.
    t_max ≤ :data:`~numerics.flow.run.MAX_T_MAX` and rtol ≥
    :data:`~numerics.flow.run.MIN_RTOL_FLOAT64`, else InputError.
    """
    if not (math.isfinite(t_max) and 0 < t_max <= MAX_T_MAX):
        raise InputError(f"t_max must be a time in (0, {MAX_T_MAX:g}], got {t_max}")
    if not (MIN_RTOL_FLOAT64 <= rtol < 1e-3 and atol > 0):
        raise InputError(f"rtol must be in [{MIN_RTOL_FLOAT64:g}, 1e-3) and atol > 0 (float64), got rtol={rtol}, "
                         f"atol={atol}")
    report = None if progress is None else (lambda s: progress(math.expm1(s)))
    flow_field = PopulationFlowField(estimator)
    sol = diffeqsolve(flow_field, Bosh3, 0.0, math.log1p(t_max), [a0, b0],
                      saveat=SaveAt(steps=True), controller=PIController(rtol=rtol, atol=atol),
                      max_steps=max_steps, progress=report)
    keep = np.zeros(len(sol.ts), dtype=bool)
    keep[::max(1, save_every)] = True
    keep[-1] = True
    ts, ys = sol.ts[keep], sol.ys[keep]
    evaluated = [loss_and_gradient_float64(float(a), float(b), estimator=estimator) for a, b in ys]
    return FlowSolution(t=np.expm1(ts), a=ys[:, 0], b=ys[:, 1], loss=np.array([v for v, _ in evaluated]),
                        grad=np.array([g for _, g in evaluated]), status=sol.status, steps=sol.accepted,
                        rejected=sol.rejected, gradient_evaluations=sol.evaluations,
                        settings={"a0": a0, "b0": b0, "t_max": t_max, "rtol": rtol, "atol": atol,
                                  "time_variable": "s = log(1 + t)", "solver": sol.info["solver"],
                                  "gradient": f"float64 {flow_field.description}"})
