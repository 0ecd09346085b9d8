"""Population gradient flow dz/dt = −∇L(z), z = (a, b), to very long times.

Fixed steps in t cannot reach t ≈ 10¹² (MODEL.md §8): the flow is integrated
in the time variable s = log(1 + t), in which b ∝ t^{1/4} grows linearly in s:
dz/ds = −(1 + t)·∇L(z). The solver is the embedded Bogacki–Shampine 3(2) pair
with a standard error-per-step controller on the mixed tolerance
atol + rtol·|z|. ∇L is the float64 breakpoint quadrature of
:func:`numerics.population.loss_and_gradient_float64`.

This is the simple integrator the symbolic-core issue needs to check the
calibration relation and C; the verified-numerics issue replaces it with a
solver/controller/saveat design and a high-precision path.
"""

from __future__ import annotations

import enum
import math
from dataclasses import dataclass, field

import numpy as np

from numerics.population import loss_and_gradient_float64

__all__ = ["FlowStatus", "FlowSolution", "integrate_flow"]


class FlowStatus(enum.Enum):
    SUCCESS = "reached t_max"
    MAX_STEPS = "stopped: the step budget ran out before t_max"
    STEP_TOO_SMALL = "stopped: the tolerance could not be met (step size underflow)"
    NONFINITE = "stopped: the gradient was not finite"

    @property
    def message(self) -> str:
        return self.value


@dataclass
class FlowSolution:
    """Saved times t, parameters a, b, loss L and gradient ∇L, and the status."""

    t: np.ndarray
    a: np.ndarray
    b: np.ndarray
    loss: np.ndarray
    grad: np.ndarray
    status: FlowStatus
    steps: int
    rejected: int
    gradient_evaluations: int
    settings: dict = field(default_factory=dict)


def integrate_flow(a0: float, b0: float, t_max: float, *, rtol: float = 1e-8, atol: float = 1e-10,
                   save_every: int = 1, max_steps: int = 200_000, estimator: str = "one-head",
                   progress=None) -> FlowSolution:
    """Integrate dz/dt = −∇L(z) from z(0) = (a0, b0) to t_max (> 0).

    Saves every ``save_every``-th accepted step and the final point. ``progress``,
    if given, is called with the current t after each accepted step.
    """
    if not (math.isfinite(t_max) and t_max > 0):
        raise ValueError(f"t_max must be a finite positive time, got {t_max}")
    evaluations = 0

    def rhs(s, z):
        nonlocal evaluations
        evaluations += 1
        value, grad = loss_and_gradient_float64(float(z[0]), float(z[1]), estimator=estimator)
        return -math.exp(s) * grad, value, grad

    s, s_end = 0.0, math.log1p(t_max)
    z = np.array([a0, b0], dtype=float)
    k1, value, grad = rhs(s, z)
    saved = [(0.0, z.copy(), value, grad.copy())]
    h = 1e-3
    steps = rejected = 0
    status = FlowStatus.SUCCESS
    while s < s_end:
        if steps + rejected >= max_steps:
            status = FlowStatus.MAX_STEPS
            break
        h = min(h, s_end - s)
        if h < 1e-14 * max(1.0, s):
            status = FlowStatus.STEP_TOO_SMALL
            break
        try:
            k2, _, _ = rhs(s + h / 2, z + h / 2 * k1)
            k3, _, _ = rhs(s + 3 * h / 4, z + 3 * h / 4 * k2)
            z_new = z + h * (2 * k1 + 3 * k2 + 4 * k3) / 9
            k4, value_new, grad_new = rhs(s + h, z_new)
        except ArithmeticError:
            status = FlowStatus.NONFINITE
            break
        error = h * (-5 * k1 / 72 + k2 / 12 + k3 / 9 - k4 / 8)
        scale = atol + rtol * np.maximum(np.abs(z), np.abs(z_new))
        norm = float(np.sqrt(np.mean((error / scale) ** 2)))
        if norm <= 1.0:
            s += h
            z, k1, value, grad = z_new, k4, value_new, grad_new
            steps += 1
            if steps % save_every == 0 or s >= s_end:
                saved.append((math.expm1(s), z.copy(), value, grad.copy()))
            if progress is not None:
                progress(math.expm1(s))
        else:
            rejected += 1
        h *= min(5.0, max(0.2, 0.9 * (norm if norm > 0 else 1e-10) ** (-1 / 3)))
    if saved[-1][0] != math.expm1(s):
        saved.append((math.expm1(s), z.copy(), value, grad.copy()))
    t, zs, losses, grads = zip(*saved)
    zs = np.array(zs)
    return FlowSolution(t=np.array(t), a=zs[:, 0], b=zs[:, 1], loss=np.array(losses), grad=np.array(grads),
                        status=status, steps=steps, rejected=rejected, gradient_evaluations=evaluations,
                        settings={"a0": a0, "b0": b0, "t_max": t_max, "rtol": rtol, "atol": atol,
                                  "time_variable": "s = log(1 + t)", "solver": "Bogacki-Shampine 3(2)",
                                  "gradient": "float64 Gauss-Legendre (24 points) on model breakpoints"})
