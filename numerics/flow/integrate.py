"""Population gradient flow dz/dt = −∇L(z), z = (a, b): the simple entry point.

Fixed steps in t cannot reach t ≈ 10¹² (docs/model.md §8): the flow is integrated
in s = log(1 + t), in which b ∝ t^{1/4} grows linearly in s, as
dz/ds = −(1 + t)·∇L(z) (:class:`stumpcheck.numerics.flow.field.PopulationFlowField`), with the documented
defaults of docs/model.md §4.1, shared with :func:`stumpcheck.numerics.flow.run.run_population_flow` (one engine,
:mod:`stumpcheck.numerics.flow.engine`): a stiff solver with the exact Jacobian
(:func:`stumpcheck.numerics.flow.engine.default_solver`: scipy's LSODA at rtol/100 in float64, scipy's Radau
below LSODA's smallest rtol, Rodas4 only below Radau's; extrapolated linearly implicit Euler at ``dps`` digits,
its order chosen from rtol), rtol 10⁻⁹, saving every accepted step and the log-spaced times of
:func:`stumpcheck.numerics.flow.run.run_population_flow`.

The flow is always solved a second time at rtol/10 (and atol/10); the largest relative
difference in b between the two solves, over the times both saved (the log-spaced times, the
start and the end), is returned as ``a_posteriori_rel_error_b``. It is an estimate of the global
error of b, not a bound. When it exceeds ``error_goal`` (default: rtol), the status is
:attr:`~stumpcheck.numerics.flow.ode.Status.ERROR_ESTIMATE_EXCEEDED`; when the second solve does not reach
t_max, :attr:`~stumpcheck.numerics.flow.ode.Status.CHECK_INCOMPLETE`. An explicit solver warns
(:class:`~stumpcheck.numerics.flow.stiffness.StiffnessWarning`).

The final a and b are returned (``settings["final_a"]``, ``settings["final_b"]``) as decimals to the digits the
two solves earn (:mod:`stumpcheck.numerics.flow.digits`), with their estimated absolute errors
(``final_a_error``, ``final_b_error``): at ``dps`` digits the digits follow rtol, not ``dps``
(from (10, 10) at dps=30: b(10⁶) to 8 digits at rtol 10⁻⁹; b(100) to 24 at rtol 10⁻²⁵).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from stumpcheck.numerics.display import Display, figure_text, last, shape_text
from stumpcheck.numerics.flow.engine import SOLVERS, checked_solve, default_solver, relative_difference_b, save_times
from stumpcheck.numerics.flow.field import PopulationFlowField
from stumpcheck.numerics.flow.ode import Status
from stumpcheck.numerics.flow.run import (MAX_T_MAX, MIN_RTOL_FLOAT64, _order_along_float64_flow, check_flow_arguments,
                                          final_stats, final_text)
from stumpcheck.numerics.flow.stiffness import StiffnessWarning, warn_if_explicit
from stumpcheck.numerics.json_output import finite_json
from stumpcheck.numerics.precision import InputError

__all__ = ["FlowStatus", "FlowSolution", "integrate_flow", "StiffnessWarning", "DEFAULT_RTOL"]

#: The solve status (an alias of :class:`stumpcheck.numerics.flow.ode.Status`).
FlowStatus = Status
#: The library's default rtol (docs/model.md §4.1; the CLI's is 1e-8).
DEFAULT_RTOL = 1e-9
#: Save times a decade for the a-posteriori comparison (as :func:`stumpcheck.numerics.flow.run.run_population_flow`).
CHECK_TIMES_PER_DECADE = 8


@dataclass(repr=False)
class FlowSolution(Display):
    """Saved times t, parameters a, b, loss L and gradient ∇L, the status, and the a-posteriori estimate.

    ``a_posteriori_rel_error_b``: the largest relative difference in b between the solve at rtol
    and the one at rtol/10 (NaN if the second did not reach t_max); ``b_error`` = that times ``|b|``,
    the estimated absolute error of each saved b. Shown (:class:`~stumpcheck.numerics.display.Display`) by
    its status, time span, final state and estimate; :meth:`to_dict` (every field), :meth:`to_csv` and
    :meth:`to_dataframe` (columns t, a, b, loss, grad_a, grad_b: one row a saved time);
    :func:`~stumpcheck.numerics.flow.report.plot_flow` draws it.
    """

    t: np.ndarray
    a: np.ndarray
    b: np.ndarray
    loss: np.ndarray
    grad: np.ndarray
    status: Status
    steps: int
    rejected: int | None
    gradient_evaluations: int
    settings: dict = field(default_factory=dict)
    a_posteriori_rel_error_b: float = math.nan
    error_goal: float = math.nan

    @property
    def b_error(self) -> np.ndarray:
        """Estimated absolute error of each saved b: ``a_posteriori_rel_error_b·|b|``."""
        return self.a_posteriori_rel_error_b * np.abs(self.b)

    def _display_rows(self) -> list:
        digits = self.settings.get("dps")
        return [("status", self.status.name), ("t", f"[0, {figure_text(last(self.t), 4)}], {len(self.t)} saved"),
                ("final a", final_text(self.settings, "a", last(self.a))),
                ("final b", final_text(self.settings, "b", last(self.b))),
                ("final L", figure_text(last(self.loss), 6)),
                ("a_posteriori_rel_error_b", f"{figure_text(self.a_posteriori_rel_error_b, 3)} "
                                             f"(goal {figure_text(self.error_goal, 3)})"),
                ("solve", f"{str(self.settings.get('solver', '?')).split(' (')[0]}, rtol "
                          f"{figure_text(self.settings.get('rtol'), 3)}, "
                          f"{'float64' if digits is None else f'{digits} digits'}, {self.steps} steps"),
                ("arrays", shape_text({"t": self.t, "a": self.a, "b": self.b, "loss": self.loss, "grad": self.grad}))]

    def _display_columns(self) -> dict:
        grad = np.asarray(self.grad, dtype=float).reshape(len(self.t), 2)
        return {"t": self.t, "a": self.a, "b": self.b, "loss": self.loss, "grad_a": grad[:, 0], "grad_b": grad[:, 1]}

    def to_dict(self) -> dict:
        """Every field, JSON-ready (arrays as lists, the status by name, NaN/±inf as None)."""
        return finite_json({"t": self.t, "a": self.a, "b": self.b, "loss": self.loss, "grad": self.grad,
                            "status": self.status.name, "status_message": self.status.message, "steps": self.steps,
                            "rejected": self.rejected, "gradient_evaluations": self.gradient_evaluations,
                            "settings": self.settings, "a_posteriori_rel_error_b": self.a_posteriori_rel_error_b,
                            "error_goal": self.error_goal})


_relative_difference_b = relative_difference_b  # the earlier private name


def integrate_flow(a0: float, b0: float, t_max: float, *, rtol: float = DEFAULT_RTOL, atol: float | None = None,
                   save_every: int = 1, max_steps: int = 200_000, estimator: str = "one-head", progress=None,
                   solver: str | None = None, error_goal: float | None = None, dps: int | None = None,
                   rhs: str = "arb") -> FlowSolution:
    """Integrate dz/dt = −∇L(z) from z(0) = (a0, b0) to t_max (> 0), with an a-posteriori error estimate.

    ``solver``: a name of :data:`stumpcheck.numerics.flow.run.SOLVERS`, None for the default of the precision
    (:func:`stumpcheck.numerics.flow.run.default_solver`); an explicit one (dopri5, bosh3) warns with
    :class:`StiffnessWarning`. ``atol``: None for rtol/100. ``error_goal``: the largest accepted
    ``a_posteriori_rel_error_b`` (default rtol); above it the status is ERROR_ESTIMATE_EXCEEDED.
    ``dps``: None for float64, else the working digits of an mpmath solve (its Gauss–Legendre orders
    chosen as in :func:`~stumpcheck.numerics.flow.run.run_population_flow`, per piece with the Arb integrand; a, b
    returned as floats, the final ones in ``settings`` to the digits the rtol and rtol/10 solves earn). ``save_every`` thins the
    saved steps (the start and the end are always kept). ``progress``, if given, is called with the
    current t after each accepted step of the first solve. ``max_steps`` caps each solve. The
    arguments are checked by :func:`~stumpcheck.numerics.flow.run.check_flow_arguments` (t_max ≤
    :data:`~stumpcheck.numerics.flow.run.MAX_T_MAX`, rtol ≥ :data:`~stumpcheck.numerics.flow.run.MIN_RTOL_FLOAT64` in
    float64, …): InputError (a ValueError) otherwise.
    """
    if not (isinstance(t_max, (int, float)) and math.isfinite(t_max) and 0 < t_max <= MAX_T_MAX):
        raise InputError(f"t_max must be a time in (0, {MAX_T_MAX:g}], got {t_max}")
    dps = check_flow_arguments(a0, b0, t_max, rtol=rtol, solver=solver, rhs=rhs, dps=dps)
    atol = rtol * 1e-2 if atol is None else atol
    if not (isinstance(atol, (int, float)) and 0 < atol < 1e-3):
        raise InputError(f"atol must be in (0, 1e-3), got {atol}")
    if dps is None and atol < MIN_RTOL_FLOAT64 * 1e-2:
        raise InputError(f"atol {atol:g} is below what float64 resolves (need atol >= {MIN_RTOL_FLOAT64 * 1e-2:g})")
    error_goal = rtol if error_goal is None else error_goal
    if not (isinstance(error_goal, (int, float)) and error_goal > 0):
        raise InputError(f"error_goal must be > 0, got {error_goal}")
    if not (isinstance(max_steps, int) and max_steps >= 1):
        raise InputError(f"max_steps must be a positive integer, got {max_steps!r}")
    name = default_solver(rtol, dps) if solver is None else solver
    warn_if_explicit(SOLVERS[name], name)
    report = None if progress is None else (lambda s: progress(math.expm1(float(s))))
    tail, quadrature = (), {}
    if dps is not None:
        quadrature = _order_along_float64_flow(a0, b0, t_max, dps, name, estimator, rhs)
        tail = (dps, quadrature["quadrature_order"], rhs, 1, dps + 3 if rhs == "arb" else None)
    solved = checked_solve([a0, b0], t_max, rtol, SOLVERS[name], save_times(t_max, CHECK_TIMES_PER_DECADE), estimator,
                           report, *tail, steps=True, atol=atol, max_steps=max_steps)
    sol, ref = solved.sol, solved.ref
    status = sol.status
    rel_error = solved.rel_error_b
    if ref is not None:
        if status.ok and not rel_error <= error_goal:
            status = Status.ERROR_ESTIMATE_EXCEEDED
    elif status.ok:
        status = Status.CHECK_INCOMPLETE
    keep = np.zeros(len(sol.ts), dtype=bool)
    keep[::max(1, save_every)] = True
    keep[-1] = True
    ts, ys = sol.ts[keep], sol.ys[keep]
    settings = {"a0": a0, "b0": b0, "t_max": t_max, "rtol": rtol, "atol": atol, "error_goal": error_goal,
                "time_variable": "s = log(1 + t)", "solver": sol.info["solver"],
                "gradient": f"float64 {PopulationFlowField(estimator).description}",
                "a_posteriori_check": "same solve at rtol/10; max relative difference in b",
                **final_stats(solved, dps)}
    if dps is not None:
        import mpmath

        from stumpcheck.numerics.flow.ode import MPArithmetic

        with MPArithmetic(dps).working():
            t = np.array([float(mpmath.expm1(s)) for s in ts])
        rule = f"{tail[1]} points to start, per-piece orders" if tail[4] else f"{tail[1]} points"
        settings.update(dps=dps, rhs=rhs, gradient=f"Gauss-Legendre ({rule}), generated {rhs} code",
                        state_coordinates=sol.info.get("coordinates", "a, b"))
        ys = np.array([[float(x) for x in row] for row in ys])
    else:
        t = np.expm1(ts)
    t[0] = 0.0
    evaluated = [_loss_and_gradient(float(a), float(b), estimator) for a, b in ys]
    return FlowSolution(t=t, a=ys[:, 0], b=ys[:, 1], loss=np.array([v for v, _ in evaluated]),
                        grad=np.array([g for _, g in evaluated]), status=status, steps=sol.accepted,
                        rejected=sol.rejected, gradient_evaluations=sol.evaluations + (ref.evaluations if ref else 0),
                        settings=settings, a_posteriori_rel_error_b=rel_error, error_goal=error_goal)


def _loss_and_gradient(a: float, b: float, estimator: str):
    from stumpcheck.numerics.population.quantities import loss_and_gradient_float64

    return loss_and_gradient_float64(a, b, estimator=estimator)
