"""The population gradient flow to t ≈ 10¹² with its a-posteriori check (claims C2–C4).

dz/dt = −∇L(z), z = (a, b), integrated in s = log(1 + t) (so that log b ≈ s/4
grows linearly in s and t = 10¹⁵ is s ≈ 34.5) by :func:`stumpcheck.numerics.flow.ode.adaptive`
with the field of :mod:`stumpcheck.numerics.flow.field`.

The flow is stiff: the calibration direction (about a − b − 2 log b) relaxes
on a time scale that becomes tiny relative to t as b grows, so explicit pairs
are stability-limited. The default float64 solver is scipy's LSODA with the
exact Jacobian (∇²L by the same quadrature as ∇L), at rtol/100
(:mod:`stumpcheck.numerics.flow.stiff_float64`; measured: the same final accuracy as
Rodas4 at rtol for a fifth of the field evaluations); "bdf" and "radau" are
scipy's other stiff solvers. The default at D digits is "extrapolation"
(linearly implicit Euler extrapolated to order 7, exact coefficients:
:mod:`stumpcheck.numerics.flow.ode.extrapolation`), whose D-digit solves run in the
coordinates (a − b, log b) (:class:`stumpcheck.numerics.flow.field_mp.LogScaleField`): at
rtol 1e-9 to t = 10¹² it takes about 120 steps of 22 field evaluations where
Rodas4 in (a, b) takes about 1150 of 6, and ends closer to the converged b.
"rodas4" (the L-stable Rosenbrock pair with the exact Jacobian), "rodas3",
"dopri5" and "bosh3" (:mod:`stumpcheck.numerics.flow.ode`) run in float64 and at D digits.

Precision: float64 by default (∇L, ∇²L by Gauss–Legendre on the model's
breakpoints, nodes near θ = 1 placed by their distance from 1; for the
one-head and reflected estimators one compiled call,
:mod:`stumpcheck.numerics.population.one_head_float64`, see
:class:`stumpcheck.numerics.flow.field.PopulationFlowField`); with ``dps=D``
the solver runs in mpmath at D digits plus guard bits
(:class:`stumpcheck.numerics.flow.ode.MPArithmetic`) and ∇L, ∇²L come from the generated Arb
(default) or mpmath code by breakpoint Gauss–Legendre, at
:data:`~stumpcheck.numerics.flow.field.FIELD_GUARD_BITS` more bits, with the order that two-order checks
(agreement better than 10^−(D+2) relative,
:func:`stumpcheck.numerics.flow.quadrature_order.quadrature_order_for`) need at the float64 flow's
states at t = 0, 1, √t_max and t_max. With the Arb integrand that order is only the first
guess: each breakpoint piece gets its own order, accepted by a two-order check on the piece
(:mod:`stumpcheck.numerics.flow.piece_orders`; to t = 10¹² at 30 digits 0.80 of the nodes, trial orders
included), and the
agreement of the rule used at the final state is reported (the probe order's as well). Half of
each Arb evaluation (by node count) can run in a second process (``workers=2``).

At every saved time the run records L, ∇L, the sup of |e(θ)| over the interior
θ ∈ [δ, 1 − δ] and the residual of the derived calibration relation
(:mod:`stumpcheck.numerics.flow.diagnostics`; float64, also for a dps run). The
trajectory is computed at two tolerances (rtol and rtol/10; the second in a
second process for t_max ≥ :data:`PARALLEL_CHECK_FROM`) and the largest
relative difference in b is reported as the a-posteriori error estimate.
"""

from __future__ import annotations

import math
import multiprocessing
from concurrent.futures.process import BrokenProcessPool
from dataclasses import dataclass, field

import mpmath
import numpy as np

from stumpcheck.numerics.display import Display, figure_text, last, shape_text
from stumpcheck.numerics.flow.diagnostics import DEFAULT_DELTA, flow_fits, sup_interior_error
from stumpcheck.numerics.flow.field import RHS_BACKENDS, PopulationFlowField, PopulationFlowFieldMP
from stumpcheck.numerics.flow.field_mp import FIELD_GUARD_BITS, LogScaleField
from stumpcheck.numerics.flow.piece_orders import rule_agreement
from stumpcheck.numerics.flow.ode import (Bosh3, Dopri5, Extrapolation7, MPArithmetic, PIController, Rodas3, Rodas4, SaveAt,
                               Status, diffeqsolve)
from stumpcheck.numerics.flow.quadrature_order import quadrature_agreement, quadrature_order_for
from stumpcheck.numerics.flow.stiff_float64 import SCIPY_METHODS, ScipyMethod, solve_scipy
from stumpcheck.numerics.flow.stiffness import warn_if_explicit
from stumpcheck.numerics.generated import asymptotics_numpy as derived
from stumpcheck.numerics.json_output import finite_json
from stumpcheck.numerics.population.quadrature import breakpoints as quadrature_breakpoints
from stumpcheck.numerics.population.quantities import check_parameters, loss_and_gradient_float64
from stumpcheck.numerics.precision import InputError, validate_dps
from stumpcheck.numerics.processes import parent_watching_pool

__all__ = ["SOLVERS", "FLOAT64_ONLY_SOLVERS", "DEFAULT_SOLVER_FLOAT64", "DEFAULT_SOLVER_DPS", "default_solver", "FlowRun", "FLOW_COLUMNS", "run_population_flow", "PARALLEL_CHECK_FROM", "MIN_RTOL_FLOAT64", "MIN_T_MAX", "MAX_T_MAX",
           "MAX_START_A", "MAX_START_B", "check_flow_arguments"]

#: Solver names accepted by :func:`run_population_flow` (an interface: CLI, claims, benchmarks). The
#: scipy ones (:data:`FLOAT64_ONLY_SOLVERS`) step in float64 only.
SOLVERS = {"rodas4": Rodas4, "rodas3": Rodas3, "dopri5": Dopri5, "bosh3": Bosh3, "extrapolation": Extrapolation7,
           **SCIPY_METHODS}
FLOAT64_ONLY_SOLVERS = tuple(SCIPY_METHODS)
#: Solvers whose D-digit solves run in the log-scale coordinates (a − b, log b) (:class:`LogScaleField`):
#: the high-order method, whose steps these coordinates lengthen; the Rosenbrock pairs keep (a, b), so
#: that a D-digit Rodas4 solve takes the same steps as the float64 one.
LOG_SCALE_SOLVERS = (Extrapolation7,)
#: The solver when none is given: chosen by measurement (benchmarks/bench_flow.py, bench_flow30.py), per
#: precision. In float64 below LSODA's smallest rtol
#: (:attr:`~stumpcheck.numerics.flow.stiff_float64.ScipyMethod.min_rtol`, 2.2e-11) it is Rodas4.
DEFAULT_SOLVER_FLOAT64 = "lsoda"
DEFAULT_SOLVER_DPS = "extrapolation"


def default_solver(rtol: float, dps: int | None) -> str:
    """The solver of a flow at ``rtol`` (float64 if ``dps`` is None) when none is named."""
    if dps is not None:
        return DEFAULT_SOLVER_DPS
    if rtol >= SOLVERS[DEFAULT_SOLVER_FLOAT64].min_rtol:
        return DEFAULT_SOLVER_FLOAT64
    return "rodas4"
#: From this t_max on the a-posteriori solve runs in a second process: a solve to t = 100 takes
#: about 1.5 s in float64, starting a process about 0.5 s.
PARALLEL_CHECK_FROM = 100.0
#: Smallest rtol of a float64 solve: its check runs at rtol/10 = 1e-14, about 45 ulps (below, steps stall).
MIN_RTOL_FLOAT64 = 1e-13
#: Largest t_max: b(t) ≈ (C t)^{1/4} reaches about 3·10⁵ near t = 4·10²¹, where the switch layer at
#: 1 − θ ≈ b⁻³ falls below float64's resolution of θ and the quadrature's field is no longer resolved.
MAX_T_MAX = 1e21
#: Smallest t_max: the flow then moves z by about t_max·|∇L(z₀)|, far
#: below any precision a flow runs at, and below about 1e-140 scipy's LSODA, stepping from s = 0 to
#: s = log(1 + t_max), does not reach the end in minutes (measured at 1e-150 and 1e-308).
MIN_T_MAX = 1e-100
#: Largest start ``|a0|`` and b0, for the same reason (b ≈ 3·10⁵ is where the float64 field stops being resolved).
MAX_START_A = 1e6
MAX_START_B = 1e5


def _order_along_float64_flow(a0, b0, t_max, dps: int, solver: str, estimator: str, rhs: str) -> dict:
    """The Gauss–Legendre order of a high-precision flow, chosen where that flow will go.

    A float64 flow (rtol 1e-6, seconds) gives the states at t = 0, 1, √t_max
    and t_max (those ≤ t_max); the order is the largest that
    :func:`quadrature_order_for` needs at any of them. (Chosen at the start
    alone it is too small: at (10, 10) order 15 reaches 32 digits, but on the
    calibration relation, from b = 20 to b = 1200, order 15 reaches only 23.)
    """
    times = sorted({0.0, *(t for t in (1.0, math.sqrt(t_max), t_max) if t <= t_max)})
    states = [(0.0, float(a0), float(b0))]
    if len(times) > 1:
        probe = _float64_states(a0, b0, times[1:], solver, estimator)
        states += probe
    probes, order = [], 0
    for t, a, b in states:
        n, digits = quadrature_order_for(a, b, dps, estimator=estimator, rhs=rhs, start=max(order, 10))
        probes.append({"t": t, "a": a, "b": b, "order": n, "digits": digits})
        order = max(order, n)
    return {"quadrature_order": order, "quadrature_check_digits_start": probes[0]["digits"],
            "quadrature_order_probes": probes}


def _float64_states(a0, b0, times, solver: str, estimator: str) -> list[tuple[float, float, float]]:
    """(t, a, b) of the float64 flow (rtol 1e-6) at the given increasing times > 0."""
    sol = _solve([float(a0), float(b0)], times[-1], 1e-6, SOLVERS[solver], np.asarray(times), estimator, None)
    return [(float(math.expm1(s)), float(y[0]), float(y[1])) for s, y in zip(sol.ts, sol.ys)
            if any(abs(math.expm1(s) - t) <= 1e-9 * max(t, 1.0) for t in times)]


@dataclass(repr=False)
class FlowRun(Display):
    """A computed population flow with its diagnostics, fits and evidence.

    Shown (:class:`~stumpcheck.numerics.display.Display`) by its status, final state, estimate and fitted
    exponents; :meth:`to_dict` is flow.json's content, :meth:`to_csv` (flow.csv) and :meth:`to_dataframe`
    have the columns :data:`FLOW_COLUMNS`, one row a saved time.
    """

    t: np.ndarray
    a: np.ndarray
    b: np.ndarray
    loss: np.ndarray
    grad_a: np.ndarray
    grad_b: np.ndarray
    sup_error_interior: np.ndarray
    calibration_residual: np.ndarray
    status: Status
    a_posteriori_rel_error_b: float
    fits: dict
    settings: dict = field(default_factory=dict)
    stats: dict = field(default_factory=dict)

    def _display_rows(self) -> list:
        fits = {k: f"{figure_text(f['value'], 4)}{'' if f.get('valid', True) else ' (not valid)'}"
                for k, f in self.fits.items() if f and k in ("scale_exponent", "error_exponent")}
        return [("status", self.status.name), ("t", f"[0, {figure_text(last(self.t), 4)}], {len(self.t)} saved"),
                ("final a", figure_text(last(self.a), 12)), ("final b", figure_text(last(self.b), 12)),
                ("final L", figure_text(last(self.loss), 6)),
                ("final sup|e| interior", figure_text(last(self.sup_error_interior), 4)),
                ("a_posteriori_rel_error_b", figure_text(self.a_posteriori_rel_error_b, 3)),
                ("fitted exponents", ", ".join(f"{k} {v}" for k, v in fits.items()) or "none"),
                ("solve", f"{str(self.settings.get('solver', '?')).split(' (')[0]}, rtol "
                          f"{figure_text(self.settings.get('rtol'), 3)}, {self.settings.get('precision', '?')}"),
                ("arrays", shape_text(self._display_columns()))]

    def _display_columns(self) -> dict:
        return {name: getattr(self, name) for name in FLOW_COLUMNS}

    def to_dict(self) -> dict:
        """The columns, fits, status, estimate, settings, stats and evidence, JSON-ready (flow.json's content)."""
        evidence = ("sampled (float64 trajectory; sup over θ by grid + refinement)" if self.settings.get("dps") is None
                    else f"sampled ({self.settings['dps']}-digit mpmath trajectory, float64 diagnostics; "
                         "sup over θ by grid + refinement)")
        return finite_json({**self._display_columns(), "fits": self.fits, "status": self.status.name,
                            "status_message": self.status.message,
                            "a_posteriori_rel_error_b": self.a_posteriori_rel_error_b, "settings": self.settings,
                            "stats": self.stats, "evidence": evidence})


#: The columns of a :class:`FlowRun`'s rows (flow.csv).
FLOW_COLUMNS = ("t", "a", "b", "loss", "grad_a", "grad_b", "sup_error_interior", "calibration_residual")


def _save_times(t_max: float, per_decade: int) -> np.ndarray:
    decades = max(1, math.ceil(math.log10(t_max)) + 2)
    ts = np.logspace(-2, math.log10(t_max), decades * per_decade)
    return ts[(ts > 0) & (ts < t_max)]


def _solve(z0, t_max, rtol, solver, save_ts, estimator, progress, dps=None, quadrature_order=None, rhs="arb",
           workers=1, piece_digits=None, *, steps=False, atol=None, max_steps=2_000_000):
    """One solve from z0 to t_max at rtol (atol = rtol/100 unless given), saving at ``save_ts`` (and every
    step with ``steps``)."""
    atol = rtol * 1e-2 if atol is None else atol
    controller = PIController(rtol=rtol, atol=atol)
    # math.log1p for the save times as for the end, clamped to it: numpy's log1p may differ from math's in the last
    # place, which put the save time at t_max an ulp past the end (measured: 0.18232155679395465 > ...462 at t = 0.2)
    s_end = math.log1p(t_max)
    saveat = SaveAt(ts=tuple(min(math.log1p(float(t)), s_end) for t in save_ts), steps=steps)
    if dps is None:
        flow_field = PopulationFlowField(estimator)
        if isinstance(solver, ScipyMethod):
            return solve_scipy(flow_field, solver, 0.0, math.log1p(t_max), z0, saveat=saveat, rtol=rtol,
                               atol=atol, max_steps=max_steps, progress=progress)
        return diffeqsolve(flow_field, solver, 0.0, math.log1p(t_max), z0, saveat=saveat, controller=controller,
                           max_steps=max_steps, progress=progress, linearization=flow_field.linearization)
    arithmetic = MPArithmetic(dps)
    population_field = PopulationFlowFieldMP(estimator, order=quadrature_order, rhs=rhs, workers=workers,
                                             piece_digits=piece_digits)
    log_scale = solver in LOG_SCALE_SOLVERS
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


def _piece_rule_end(final_a, final_b, dps, piece_digits, info) -> dict:
    """Stats of a per-piece-order run: the frozen rule's two-order agreement at the final state, node counts."""
    rule = info["piece_rule"]
    stats = rule.stats
    return {"quadrature_rule": f"per piece (two-order check on each piece at {piece_digits} digits of the totals)",
            "quadrature_check_digits_end": rule_agreement(final_a, final_b, rule,
                                                          MPArithmetic(dps).prec + FIELD_GUARD_BITS),
            "piece_orders_end": rule.orders_for(quadrature_breakpoints(final_a, final_b, estimator=rule.estimator)),
            "piece_order_selections": stats["selections"], "piece_orders_unresolved": stats["unresolved_pieces"],
            # every node the field summed (the choices' trial orders included) over one order on every piece
            "nodes_fraction_of_uniform": ((stats["nodes"] + stats["selection_nodes"]) / stats["uniform_nodes"]
                                          if stats["uniform_nodes"] else math.nan),
            "piece_order_stats": dict(stats)}


def check_flow_arguments(a0, b0, t_max, *, rtol, delta=DEFAULT_DELTA, solver=None, rhs="arb", dps=None):
    """Validate the arguments of :func:`run_population_flow` (InputError naming the first problem); returns dps.

    ``|a0|`` ≤ :data:`MAX_START_A`, 0 < b0 ≤ :data:`MAX_START_B`, :data:`MIN_T_MAX` ≤ t_max ≤ :data:`MAX_T_MAX`,
    rtol in [:data:`MIN_RTOL_FLOAT64`, 10⁻³) in float64 or [10^(2 − dps), 10⁻³) at ``dps`` digits,
    δ ∈ (0, ½), a known solver (None: the default of the precision) and right-hand side.
    """
    check_parameters(a0, b0)
    if not (abs(a0) <= MAX_START_A and b0 <= MAX_START_B):
        raise InputError(f"the start must satisfy |a0| <= {MAX_START_A:g} and b0 <= {MAX_START_B:g} (the scales the "
                         f"field's quadrature resolves), got a0={a0:g}, b0={b0:g}")
    if isinstance(t_max, bool) or not (isinstance(t_max, (int, float)) and math.isfinite(t_max)):
        raise InputError(f"t-max must be a finite number, got {t_max!r}")
    if t_max <= 0:
        raise InputError(f"t-max must be > 0 (the flow starts at t = 0), got {t_max}")
    if t_max < MIN_T_MAX:
        raise InputError(f"t-max must be >= {MIN_T_MAX:g} (a shorter flow moves z by about t-max*|grad L|, below "
                         f"any working precision, and the solvers do not step across it), got {t_max:g}")
    if t_max > MAX_T_MAX:
        raise InputError(f"t-max must be <= {MAX_T_MAX:g} (beyond, b exceeds the scales the field's quadrature "
                         f"resolves), got {t_max:g}")
    if not (isinstance(rtol, (int, float)) and 0 < rtol < 1e-3):
        raise InputError(f"rtol must be in (0, 1e-3), got {rtol}")
    if dps is None and rtol < MIN_RTOL_FLOAT64:
        raise InputError(f"rtol {rtol:g} is below what float64 resolves (need rtol >= {MIN_RTOL_FLOAT64:g}, "
                         "the check runs at rtol/10; use --dps for tighter tolerances)")
    if not 0 < delta < 0.5:
        raise InputError(f"delta must be in (0, 0.5), got {delta}")
    if solver is not None and solver not in SOLVERS:
        raise InputError(f"unknown solver {solver!r}; expected one of {', '.join(SOLVERS)}")
    if dps is not None and solver in FLOAT64_ONLY_SOLVERS:
        raise InputError(f"solver {solver!r} steps in float64 only; with --dps use one of "
                         f"{', '.join(s for s in SOLVERS if s not in FLOAT64_ONLY_SOLVERS)}")
    if dps is None and solver in FLOAT64_ONLY_SOLVERS and rtol < SOLVERS[solver].min_rtol:
        raise InputError(f"rtol {rtol:g} is below what solver {solver!r} resolves (need rtol >= "
                         f"{SOLVERS[solver].min_rtol:.2g}; its check runs at rtol/10); use rodas4 for tighter tolerances")
    if rhs not in RHS_BACKENDS:
        raise InputError(f"unknown right-hand side {rhs!r}; expected one of {', '.join(RHS_BACKENDS)}")
    if dps is not None:
        dps = validate_dps(dps)
        if rtol < 10.0 ** (2 - dps):
            raise InputError(f"rtol {rtol:g} is below what {dps} digits can resolve (need rtol >= 1e{2 - dps})")
    return dps


def run_population_flow(a0: float = 10.0, b0: float = 10.0, t_max: float = 1e12, *, rtol: float = 1e-9,
                        delta: float = DEFAULT_DELTA, per_decade: int = 8, solver: str | None = None,
                        estimator: str = "one-head", fit_from: float | None = None, check: bool = True,
                        dps: int | None = None, rhs: str = "arb", parallel_check: bool = False,
                        workers: int = 1, piece_orders: bool = True, progress=None) -> FlowRun:
    """Integrate the population flow from (a0, b0) to t_max and compute diagnostics and fits.

    ``solver``: one of :data:`SOLVERS`; None (the default) is
    :data:`DEFAULT_SOLVER_FLOAT64` ("lsoda") in float64 (Rodas4 below LSODA's smallest rtol) and
    :data:`DEFAULT_SOLVER_DPS` ("extrapolation", in the log-scale coordinates) at ``dps`` digits
    (:func:`default_solver`). ``dps``: None for float64, else the number of
    digits of an mpmath solve (the stats then hold the final a, b to dps
    digits, the Gauss–Legendre order and its two-order check); its integrand is
    ``rhs`` ("arb", the default, or "mpmath", see :class:`PopulationFlowFieldMP`);
    ``workers=2`` sums half of each Arb evaluation's pieces in a second process. ``piece_orders``
    (Arb, the default): each breakpoint piece gets its own Gauss–Legendre order, accepted by a
    two-order check on the piece at D + 3 digits of the totals, chosen at a step's start every
    :data:`~stumpcheck.numerics.flow.piece_orders.SELECT_EVERY` steps and frozen in between
    (:mod:`stumpcheck.numerics.flow.piece_orders`); the order found at the probe states is the first guess, and
    the rule's own two-order agreement at the final state is reported
    (``quadrature_check_digits_end``; the probe order's as ``quadrature_check_digits_end_uniform``). ``rtol`` is the
    local error tolerance per step (mixed, atol = rtol/100); the global error
    is estimated a posteriori by the rtol/10 solve (``check``); with
    ``parallel_check`` (for t_max ≥ :data:`PARALLEL_CHECK_FROM`; ``stumpcheck
    flow`` sets it) that solve runs in a second process at the same time as the
    rtol solve, except with the scipy solvers (:data:`FLOAT64_ONLY_SOLVERS`), whose
    solve is shorter than starting a process. The second process is started by multiprocessing's "spawn",
    which imports the caller's main module again: a script that sets it needs
    the usual ``if __name__ == "__main__":`` guard; if the process cannot run,
    the check is solved here after all. Likewise ``workers=2``. ``fit_from``
    is the start of the fit range (default: 10⁶ when t_max ≥ 10⁸, else three
    decades below t_max). ``progress(fraction)`` is called as s advances.
    """
    dps = check_flow_arguments(a0, b0, t_max, rtol=rtol, delta=delta, solver=solver, rhs=rhs, dps=dps)
    if solver is None:
        solver = default_solver(rtol, dps)
    warn_if_explicit(SOLVERS[solver], solver)
    save_ts = _save_times(t_max, per_decade)
    s_end = math.log1p(t_max)

    def report(s):
        if progress is not None:
            progress(min(1.0, s / s_end))

    quadrature = {}
    if dps is not None:
        quadrature = _order_along_float64_flow(a0, b0, t_max, dps, solver, estimator, rhs)
    common = (save_ts, estimator)
    if not (isinstance(workers, int) and workers in (1, 2)):
        raise InputError(f"workers must be 1 or 2, got {workers!r}")
    piece_digits = dps + 3 if dps is not None and rhs == "arb" and piece_orders else None
    tail = (dps, quadrature.get("quadrature_order"), rhs, workers if dps is not None else 1, piece_digits)
    check_solve = None
    # a scipy solve takes a fraction of a second, less than starting a second process
    serial_solver = isinstance(SOLVERS[solver], ScipyMethod)
    if check and parallel_check and t_max >= PARALLEL_CHECK_FROM and (dps is None or workers == 1) and not serial_solver:
        # the rtol/10 solve on the second core while this process does the rtol solve
        pool = parent_watching_pool(1, mp_context=multiprocessing.get_context("spawn"))
        check_solve = pool.submit(_solve, [a0, b0], t_max, rtol / 10, SOLVERS[solver], *common, None, *tail)
        pool.shutdown(wait=False)
    try:
        sol = _solve([a0, b0], t_max, rtol, SOLVERS[solver], *common, report, *tail)
    except BaseException:
        if check_solve is not None:
            check_solve.cancel()
        raise
    rel_error = math.nan
    if check:
        ref = None
        if check_solve is not None:
            try:
                ref = check_solve.result()
            except (BrokenProcessPool, OSError, RuntimeError):
                ref = None  # the second process could not run (e.g. no importable __main__): solve here
        if ref is None:
            ref = _solve([a0, b0], t_max, rtol / 10, SOLVERS[solver], *common, None, *tail)
        n = min(len(ref.ts), len(sol.ts))
        rel_error = max(float(abs(r - x) / abs(r)) for r, x in zip(ref.ys[:n, 1], sol.ys[:n, 1]))
    if dps is not None:
        final_a, final_b = sol.ys[-1]
        with MPArithmetic(dps).working():
            t = np.array([float(mpmath.expm1(x)) for x in sol.ts])
        # a check, not a search: a shortfall is reported (and the computed run kept), not raised
        uniform_end = quadrature_agreement(final_a, final_b, dps, quadrature["quadrature_order"],
                                           estimator=estimator, rhs=rhs)
        if piece_digits is not None:
            quadrature.update(_piece_rule_end(final_a, final_b, dps, piece_digits, sol.info))
            quadrature["quadrature_check_digits_end_uniform"] = uniform_end
        else:
            quadrature["quadrature_rule"] = "uniform"
            quadrature["quadrature_check_digits_end"] = uniform_end
        quadrature["rounding_bound"] = sol.info.get("rounding_bound", math.nan)
        quadrature["final_a"] = mpmath.nstr(final_a, dps)
        quadrature["final_b"] = mpmath.nstr(final_b, dps)
        ys = np.array([[float(x) for x in row] for row in sol.ys])
    else:
        t = np.expm1(sol.ts)
        ys = sol.ys
    a, b = ys[:, 0], ys[:, 1]
    losses, grads, sups = [], [], []
    for ai, bi in zip(a, b):
        value, grad = loss_and_gradient_float64(float(ai), float(bi), estimator=estimator)
        losses.append(value)
        grads.append(grad)
        sups.append(sup_interior_error(float(ai), float(bi), delta=delta, estimator=estimator))
    grads = np.array(grads)
    residual = derived.calibration_residual(a, b)
    if fit_from is None:
        fit_from = 1e6 if t_max >= 1e8 else t_max / 1e3
    fits = flow_fits(t, a, b, np.array(sups), fit_from)
    settings = {"a0": a0, "b0": b0, "t_max": t_max, "rtol": rtol, "atol": rtol * 1e-2,
                "delta": delta, "solver": sol.info["solver"], "estimator": estimator,
                "time_variable": "s = log(1 + t)", "precision": "float64",
                "gradient": PopulationFlowField(estimator).description,
                "a_posteriori_check": "same solve at rtol/10; max relative difference in b"}
    if dps is not None:
        settings.update(precision=f"mpmath, {dps} digits (+ guard bits); diagnostics (L, grad, sup|e|) in float64",
                        gradient=(f"Gauss-Legendre ({quadrature['quadrature_order']} points) on model breakpoints, "
                                  f"generated {'Arb (python-flint)' if rhs == 'arb' else 'mpmath'} code"),
                        dps=dps, rhs=rhs, state_coordinates=sol.info.get("coordinates", "a, b"))
    return FlowRun(t=t, a=a, b=b, loss=np.array(losses), grad_a=grads[:, 0], grad_b=grads[:, 1],
                   sup_error_interior=np.array(sups), calibration_residual=residual, status=sol.status,
                   a_posteriori_rel_error_b=rel_error, fits=fits, settings=settings,
                   stats={"accepted_steps": sol.accepted, "rejected_steps": sol.rejected,
                          "gradient_evaluations": sol.evaluations, "status_message": sol.status.message,
                          **quadrature})
