"""One flow solve with its a-posteriori check: the engine behind integrate_flow and run_population_flow.

dz/ds = −(1 + t)·∇L(z), s = log(1 + t), from (a₀, b₀) to t_max, solved twice, at rtol and at rtol/10
(:func:`checked_solve`), with one default per precision (:func:`default_solver`, docs/model.md §4.1):

* float64: scipy's stiff solvers with the exact Jacobian (:mod:`stumpcheck.numerics.flow.stiff_float64`):
  LSODA (at rtol/100) down to its smallest rtol (2.2·10⁻¹¹), then Radau down to its own (2.2·10⁻¹³); only
  below that, where scipy's rtol floor (100 ulps) stops it, the hand-written Rodas4. Measured (benchmarks/
  README.md, rtol 10⁻¹², (10, 10)): Radau 0.85 s and 9022 field evaluations to t = 10⁶, Rodas4 1.80 s and
  15631, b(10⁶) 2·10⁻¹⁶ and 1.2·10⁻¹⁴ from the 36-digit value; to t = 10¹² 2.0 s against 7.3 s;
* at ``dps`` digits (mpmath, where scipy cannot go): linearly implicit Euler extrapolated to an order
  chosen from rtol (:func:`extrapolation_for`: 7 at rtol ≥ 10⁻¹⁰, 14 at 10⁻²⁵), in the log-scale
  coordinates (a − b, log b), with the per-piece Gauss–Legendre orders of
  :mod:`stumpcheck.numerics.flow.piece_orders`.

The largest relative difference in b between the two solves over the times both saved is the
a-posteriori estimate of the rtol solve's error (an estimate, not a bound); the final a and b are printed
to the digits the two solves earn (:mod:`stumpcheck.numerics.flow.digits`).
"""

from __future__ import annotations

import math
import multiprocessing
from concurrent.futures.process import BrokenProcessPool
from dataclasses import dataclass, field

import numpy as np

from stumpcheck.numerics.flow.ode import (Bosh3, Dopri5, EulerExtrapolation, Extrapolation7, MPArithmetic,
                                          PIController, Rodas3, Rodas4, SaveAt, Solution, diffeqsolve)
from stumpcheck.numerics.flow.stiff_float64 import SCIPY_METHODS, ScipyMethod, solve_scipy

__all__ = ["SOLVERS", "FLOAT64_ONLY_SOLVERS", "DEFAULT_SOLVER_FLOAT64", "DEFAULT_SOLVER_DPS", "default_solver",
           "extrapolation_for", "CheckedSolve", "checked_solve", "save_times"]

#: Solver names accepted by the flows (an interface: CLI, claims, benchmarks). The scipy ones
#: (:data:`FLOAT64_ONLY_SOLVERS`) step in float64 only; "extrapolation" is linearly implicit Euler
#: extrapolated to the order :func:`extrapolation_for` chooses from rtol (Extrapolation7 at rtol ≥ 10⁻¹⁰).
SOLVERS = {"rodas4": Rodas4, "rodas3": Rodas3, "dopri5": Dopri5, "bosh3": Bosh3, "extrapolation": Extrapolation7,
           **SCIPY_METHODS}
FLOAT64_ONLY_SOLVERS = tuple(SCIPY_METHODS)
#: The solver when none is given, per precision (module docstring).
DEFAULT_SOLVER_FLOAT64 = "lsoda"
DEFAULT_SOLVER_DPS = "extrapolation"
#: Most columns of the extrapolation tableau: beyond, the Aitken–Neville weights of the harmonic sequence
#: (Σ|γ_j| = 5.5·10⁶ at 14 columns, 6.7·10⁷ at 16) amplify the field's D + 3 digits past rtol 10⁻²⁵ at 30 digits.
MAX_EXTRAPOLATION_ORDER = 14
#: Orders of the extrapolation whose D-digit solves run in the log-scale coordinates (a − b, log b)
#: (:class:`~stumpcheck.numerics.flow.field_mp.LogScaleField`). Measured from (10, 10) to t = 10⁶ at 30 digits:
#: at rtol 10⁻⁹, order 7 takes 47 steps (1035 evaluations) in (a − b, log b) and 33 (727) in (a, b), ending 2.5·10⁻¹¹
#: and 7·10⁻¹¹ from the converged b (comparable work for the accuracy; bench_flow30's default); at rtol 10⁻²⁵ the
#: log-scale error control on a − b, which starts at 0 from (10, 10), takes about twice the steps of (a, b)
#: (order 12 in (a − b, log b): 130 steps to s = 7.9; order 13 in (a, b): 70 steps to s = 7.4).
LOG_SCALE_ORDERS = (7,)


def default_solver(rtol: float, dps: int | None) -> str:
    """The solver of a flow at ``rtol`` (float64 if ``dps`` is None) when none is named (module docstring)."""
    if dps is not None:
        return DEFAULT_SOLVER_DPS
    for name in (DEFAULT_SOLVER_FLOAT64, "radau"):
        if rtol >= SOLVERS[name].min_rtol:
            return name
    return "rodas4"


def extrapolation_for(rtol: float) -> EulerExtrapolation:
    """The extrapolation order for a tolerance: ⌈d/2⌉ + 1 columns for d = −log₁₀ rtol digits, at least 7
    (Extrapolation7, the order measured best at rtol 10⁻⁹) and at most :data:`MAX_EXTRAPOLATION_ORDER`.

    A step of order k costs k(k − 1)/2 field evaluations and one linearization; its error falls as h^(k+1),
    so a tighter tolerance is cheapest at a higher order (measured from (10, 10) to t = 10²
    at rtol 10⁻²⁵, 30 digits: benchmarks/README.md).
    """
    digits = -math.log10(rtol)
    order = min(MAX_EXTRAPOLATION_ORDER, max(7, math.ceil(digits / 2) + 1))
    return Extrapolation7 if order == 7 else EulerExtrapolation(order)


def save_times(t_max: float, per_decade: int) -> np.ndarray:
    """``per_decade`` log-spaced times a decade from 10⁻² to t_max (both solves save there)."""
    decades = max(1, math.ceil(math.log10(t_max)) + 2)
    ts = np.logspace(-2, math.log10(t_max), decades * per_decade)
    return ts[(ts > 0) & (ts < t_max)]


def solve_once(z0, t_max, rtol, solver, save_ts, estimator, progress, dps=None, quadrature_order=None, rhs="arb",
               workers=1, piece_digits=None, *, steps=False, atol=None, max_steps=2_000_000) -> Solution:
    """One solve from z0 to t_max at rtol (atol = rtol/100 unless given), saving at ``save_ts`` (and every
    step with ``steps``). ``solver``: a method object; "extrapolation" (:data:`Extrapolation7`) at ``dps``
    digits takes the order :func:`extrapolation_for` gives ``rtol``."""
    import mpmath

    from stumpcheck.numerics.flow.field import PopulationFlowField

    atol = rtol * 1e-2 if atol is None else atol
    controller = PIController(rtol=rtol, atol=atol)
    # math.log1p for the save times as for the end, clamped to it: numpy's log1p may differ from math's in the last
    # place, which put the save time at t_max an ulp past the end (measured: 0.18232155679395465 > ...462 at t = 0.2)
    s_end = math.log1p(t_max)
    saveat = SaveAt(ts=tuple(min(math.log1p(float(t)), s_end) for t in save_ts), steps=steps)
    if dps is None:
        flow_field = PopulationFlowField(estimator)
        if isinstance(solver, ScipyMethod):
            return solve_scipy(flow_field, solver, 0.0, s_end, z0, saveat=saveat, rtol=rtol, atol=atol,
                               max_steps=max_steps, progress=progress)
        return diffeqsolve(flow_field, solver, 0.0, s_end, z0, saveat=saveat, controller=controller,
                           max_steps=max_steps, progress=progress, linearization=flow_field.linearization)
    from stumpcheck.numerics.flow.field_mp import LogScaleField, PopulationFlowFieldMP

    if solver is Extrapolation7:
        solver = extrapolation_for(rtol)
    arithmetic = MPArithmetic(dps)
    population_field = PopulationFlowFieldMP(estimator, order=quadrature_order, rhs=rhs, workers=workers,
                                             piece_digits=piece_digits)
    # Extrapolation7's D-digit solves run in (a − b, log b), whose steps it lengthens at rtol ~1e-9; the higher
    # orders (tighter rtol) and the Rosenbrock pairs keep (a, b) (LOG_SCALE_ORDERS)
    log_scale = isinstance(solver, EulerExtrapolation) and solver.order in LOG_SCALE_ORDERS
    flow_field = LogScaleField(population_field) if log_scale else population_field
    with arithmetic.working():
        s1 = mpmath.log1p(mpmath.mpf(t_max))
        z0 = [mpmath.mpf(z) for z in z0]
        if log_scale:
            z0 = list(flow_field.to_coordinates(z0))
    try:
        sol = diffeqsolve(flow_field, solver, mpmath.mpf(0), s1, z0, saveat=saveat, controller=controller,
                          max_steps=max_steps, progress=progress, linearization=flow_field.linearization,
                          arithmetic=arithmetic)
    finally:
        population_field.close()
    if log_scale:
        with arithmetic.working():
            sol.ys = np.array([list(flow_field.from_coordinates(w)) for w in sol.ys], dtype=object)
    sol.info["rounding_bound"] = population_field.rounding_bound
    if population_field.rule is not None:
        sol.info["piece_rule"] = population_field.rule
    sol.info["coordinates"] = "u = a - b, v = log b" if log_scale else "a, b"
    return sol


def relative_difference(sol: Solution, ref: Solution, component: int, floor: float = 0.0) -> float:
    """max |y_ref − y|/max(|y_ref|, floor) of one component (0: a, 1: b) over the times both solutions saved
    (their s values are the same numbers); inf where the denominator is 0 and the two differ."""
    reference = {float(s): y[component] for s, y in zip(ref.ts, ref.ys)}
    worst = 0.0
    for s, y in zip(sol.ts, sol.ys):
        r = reference.get(float(s))
        if r is not None and r != y[component]:
            scale = max(abs(r), floor)
            worst = max(worst, float(abs(r - y[component]) / scale) if scale else math.inf)
    return worst


def relative_difference_b(sol: Solution, ref: Solution) -> float:
    """max |b_ref − b|/|b_ref| over the times both solutions saved: the a-posteriori estimate."""
    return relative_difference(sol, ref, 1)


@dataclass
class CheckedSolve:
    """The rtol solve ``sol``, the rtol/10 solve ``ref`` (None without a check or if it could not finish), the
    estimate ``rel_error_b`` (NaN without ``ref``) and the final a, b as earned decimals (``final``:
    :class:`~stumpcheck.numerics.flow.digits.EarnedValue` by name; empty without ``ref``)."""

    sol: Solution
    ref: Solution | None
    rel_error_b: float = math.nan
    final: dict = field(default_factory=dict)


def _final_values(sol: Solution, ref: Solution, dps: int | None) -> dict:
    """The final a and b of ``sol`` checked by ``ref``, to the digits they earn (both reached the end).

    At most 14 digits in float64 and D − 2 at D digits (the comment below). The error estimate of each is the
    larger of the two solves' difference at the end and the largest relative difference over the whole trajectory
    times the final value: two solves may agree at the end by chance
    (measured: LSODA from (10, 10) to 10⁶ at rtol 10⁻⁹ and 10⁻¹⁰ end 3.2·10⁻¹¹ apart, 4.0·10⁻¹⁰ and 3.6·10⁻¹⁰
    from the 36-digit b, while their largest relative difference, 1.0·10⁻¹⁰, times b is 3.7·10⁻⁹).
    """
    from stumpcheck.numerics.flow.digits import earned_value

    # the two solves share their field: its own error (float64: ~3e-15 relative; at D digits, each evaluation's
    # quadrature checked to D + 2 digits) is not in the estimate, hence at most 14, or D − 2, digits
    limit = 14 if dps is None else dps - 2
    out = {}
    for i, name in enumerate(("a", "b")):
        # relative to max(|y|, 1), so that a component passing near 0 (a may) does not make the estimate infinite
        trajectory = relative_difference(sol, ref, i, floor=1.0) * max(abs(float(ref.ys[-1][i])), 1.0)
        out[name] = earned_value(sol.ys[-1][i], ref.ys[-1][i], limit, error=trajectory)
    return out


def checked_solve(z0, t_max, rtol, solver, save_ts, estimator, progress, *tail, check: bool = True,
                  parallel: bool = False, steps: bool = False, atol=None, max_steps: int = 2_000_000) -> CheckedSolve:
    """The solve at rtol (``progress(s)`` after each accepted step) and, with ``check``, at rtol/10 and atol/10,
    both saving at ``save_ts``; ``tail``: (dps, quadrature_order, rhs, workers, piece_digits) of a D-digit solve.
    ``parallel``: the rtol/10 solve in a second process ("spawn") during the first, falling back to this
    process if that one cannot run."""
    from stumpcheck.numerics.flow.ode import Status

    atol = rtol * 1e-2 if atol is None else atol
    check_solve = None
    if check and parallel:
        from stumpcheck.numerics.processes import parent_watching_pool

        pool = parent_watching_pool(1, mp_context=multiprocessing.get_context("spawn"))
        check_solve = pool.submit(solve_once, z0, t_max, rtol / 10, solver, save_ts, estimator, None, *tail,
                                  atol=atol / 10, max_steps=max_steps)
        pool.shutdown(wait=False)
    try:
        sol = solve_once(z0, t_max, rtol, solver, save_ts, estimator, progress, *tail, steps=steps, atol=atol,
                         max_steps=max_steps)
    except BaseException:
        if check_solve is not None:
            check_solve.cancel()
        raise
    if not check:
        return CheckedSolve(sol, None)
    ref = None
    if check_solve is not None:
        try:
            ref = check_solve.result()
        except (BrokenProcessPool, OSError, RuntimeError):
            ref = None  # the second process could not run (e.g. no importable __main__): solve here
    if ref is None:
        ref = solve_once(z0, t_max, rtol / 10, solver, save_ts, estimator, None, *tail, atol=atol / 10,
                         max_steps=max_steps)
    if ref.status is not Status.SUCCESS:
        return CheckedSolve(sol, None)
    final = _final_values(sol, ref, tail[0] if tail else None) if sol.status is Status.SUCCESS else {}
    return CheckedSolve(sol, ref, relative_difference_b(sol, ref), final)
