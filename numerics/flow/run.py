"""The population gradient flow to t ≈ 10¹² with its a-posteriori check (claims C2–C4).

dz/dt = −∇L(z), z = (a, b), integrated in s = log(1 + t) (so that log b ≈ s/4
grows linearly in s and t = 10¹⁵ is s ≈ 34.5) by :func:`stumpcheck.numerics.flow.ode.adaptive`
with the field of :mod:`stumpcheck.numerics.flow.field`.

The flow is stiff: the calibration direction (about a − b − 2 log b) relaxes
on a time scale that becomes tiny relative to t as b grows, so explicit pairs
are stability-limited. The solvers and their defaults are those of :mod:`stumpcheck.numerics.flow.engine`
(one engine for this module and :func:`stumpcheck.numerics.flow.integrate.integrate_flow`): in float64 scipy's
LSODA with the exact Jacobian (∇²L by the same quadrature as ∇L), at rtol/100
(:mod:`stumpcheck.numerics.flow.stiff_float64`; measured: the same final accuracy as Rodas4 at rtol for a fifth
of the field evaluations), scipy's Radau below LSODA's smallest rtol, Rodas4 only below Radau's; at D digits
"extrapolation" (linearly implicit Euler extrapolated, exact coefficients:
:mod:`stumpcheck.numerics.flow.ode.extrapolation`) to an order chosen from rtol, 7 at rtol ≥ 10⁻¹⁰, whose
D-digit solves run in the coordinates (a − b, log b) (:class:`stumpcheck.numerics.flow.field_mp.LogScaleField`):
at rtol 1e-9 to t = 10¹² it takes about 120 steps of 22 field evaluations where Rodas4 in (a, b) takes about
1150 of 6, and ends closer to the converged b. "rodas4" (the L-stable Rosenbrock pair with the exact
Jacobian), "rodas3", "dopri5" and "bosh3" (:mod:`stumpcheck.numerics.flow.ode`) run in float64 and at D digits.

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
relative difference in b is reported as the a-posteriori error estimate; the final a, b are in the stats as
the digits the two solves earn (:mod:`stumpcheck.numerics.flow.digits`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from stumpcheck.numerics.display import Display, figure_text, last, shape_text
from stumpcheck.numerics.flow.diagnostics import DEFAULT_DELTA, flow_fits, sup_interior_error, sup_interior_errors  # noqa: F401
from stumpcheck.numerics.flow.engine import (DEFAULT_SOLVER_DPS, DEFAULT_SOLVER_FLOAT64, FLOAT64_ONLY_SOLVERS, SOLVERS,
                                             checked_solve, default_solver, save_times)
from stumpcheck.numerics.flow.engine import save_times as _save_times  # noqa: F401  (the earlier private names)
from stumpcheck.numerics.flow.engine import solve_once as _solve  # noqa: F401
from stumpcheck.numerics.flow.field import RHS_BACKENDS, PopulationFlowField
from stumpcheck.numerics.flow.stiffness import warn_if_explicit
from stumpcheck.numerics.json_output import finite_json
from stumpcheck.numerics.precision import InputError, validate_dps

__all__ = ["SOLVERS", "FLOAT64_ONLY_SOLVERS", "DEFAULT_SOLVER_FLOAT64", "DEFAULT_SOLVER_DPS", "default_solver", "FlowRun", "FLOW_COLUMNS", "run_population_flow", "PARALLEL_CHECK_FROM", "MIN_RTOL_FLOAT64", "MIN_T_MAX", "MAX_T_MAX",
           "MAX_START_A", "MAX_START_B", "check_flow_arguments"]

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
    from stumpcheck.numerics.flow.quadrature_order import quadrature_order_for

    probes, order = [], 0
    for t, a, b in states:
        n, digits = quadrature_order_for(a, b, dps, estimator=estimator, rhs=rhs, start=max(order, 10))
        probes.append({"t": t, "a": a, "b": b, "order": n, "digits": digits})
        order = max(order, n)
    return {"quadrature_order": order, "quadrature_check_digits_start": probes[0]["digits"],
            "quadrature_order_probes": probes}


def _float64_states(a0, b0, times, solver: str, estimator: str) -> list[tuple[float, float, float]]:
    """(t, a, b) of the float64 flow (rtol 1e-6, the float64 default solver) at the given increasing times > 0."""
    probe = SOLVERS[default_solver(1e-6, None)]
    sol = _solve([float(a0), float(b0)], times[-1], 1e-6, probe, np.asarray(times), estimator, None)
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
                ("final a", final_text(self.stats, "a", last(self.a))),
                ("final b", final_text(self.stats, "b", last(self.b))),
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


def _piece_rule_end(final_a, final_b, dps, piece_digits, info) -> dict:
    """Stats of a per-piece-order run: the frozen rule's two-order agreement at the final state, node counts."""
    from stumpcheck.numerics.flow.field_mp import FIELD_GUARD_BITS
    from stumpcheck.numerics.flow.ode import MPArithmetic
    from stumpcheck.numerics.flow.piece_orders import rule_agreement
    from stumpcheck.numerics.population.quadrature import breakpoints as quadrature_breakpoints

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
    from stumpcheck.numerics.population.quantities import check_parameters

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
                         f"{SOLVERS[solver].min_rtol:.2g}; its check runs at rtol/10); use radau (to 2.2e-13) or rodas4 for tighter tolerances")
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
    :data:`DEFAULT_SOLVER_FLOAT64` ("lsoda") in float64 (Radau below LSODA's smallest rtol, Rodas4 below Radau's) and
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
    if not (isinstance(workers, int) and workers in (1, 2)):
        raise InputError(f"workers must be 1 or 2, got {workers!r}")
    if solver is None:
        solver = default_solver(rtol, dps)
    warn_if_explicit(SOLVERS[solver], solver)
    s_end = math.log1p(t_max)

    def report(s):
        if progress is not None:
            progress(min(1.0, float(s) / s_end))

    quadrature = {}
    if dps is not None:
        quadrature = _order_along_float64_flow(a0, b0, t_max, dps, solver, estimator, rhs)
    piece_digits = dps + 3 if dps is not None and rhs == "arb" and piece_orders else None
    tail = (dps, quadrature.get("quadrature_order"), rhs, workers if dps is not None else 1, piece_digits)
    # a scipy solve takes a fraction of a second, less than starting a second process
    parallel = (parallel_check and t_max >= PARALLEL_CHECK_FROM and (dps is None or workers == 1)
                and solver not in FLOAT64_ONLY_SOLVERS)
    solved = checked_solve([a0, b0], t_max, rtol, SOLVERS[solver], save_times(t_max, per_decade), estimator, report,
                           *tail, check=check, parallel=parallel)
    sol = solved.sol
    if dps is not None:
        quadrature.update(_high_precision_stats(sol, dps, quadrature, estimator, rhs, piece_digits))
    t, a, b = _float64_columns(sol, dps)
    losses, grads, sups = _diagnostics(a, b, delta, estimator)
    if fit_from is None:
        fit_from = 1e6 if t_max >= 1e8 else t_max / 1e3
    fits = flow_fits(t, a, b, sups, fit_from)
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
    return FlowRun(t=t, a=a, b=b, loss=losses, grad_a=grads[:, 0], grad_b=grads[:, 1],
                   sup_error_interior=sups, calibration_residual=_calibration_residual(a, b), status=sol.status,
                   a_posteriori_rel_error_b=solved.rel_error_b, fits=fits, settings=settings,
                   stats={"accepted_steps": sol.accepted, "rejected_steps": sol.rejected,
                          "gradient_evaluations": sol.evaluations, "status_message": sol.status.message,
                          **quadrature, **final_stats(solved, dps)})


#: What ``final_a``, ``final_b`` of a checked flow are (its stats' ``final_check``).
FINAL_CHECKED = "the digits the rtol and rtol/10 solves agree on, to half a unit of the estimate (flow/digits.py)"
#: ... and of a flow without its check.
FINAL_UNCHECKED = "the working digits, not verified (no rtol/10 solve: check=False)"


def final_text(record: dict, name: str, value) -> str:
    """How a result shows its final a or b: the earned decimal with its estimated error (``record``: settings or
    stats holding :func:`final_stats`), else the float with "unchecked"."""
    if f"final_{name}_error" in record:
        return f"{record[f'final_{name}'] or '(no digit earned)'} (estimated error {record[f'final_{name}_error']:.1e})"
    return f"{figure_text(value, 12)} (unchecked)"


def final_stats(solved, dps) -> dict:
    """The final state of a flow as decimals: with the rtol/10 check, ``final_a`` and ``final_b`` to the digits the
    two solves earn ("" when none) with their estimated absolute errors ``final_a_error``, ``final_b_error`` and
    digit counts; without it, at ``dps`` digits, the working digits, labelled unverified (float64: nothing)."""
    if solved.final:
        a, b = solved.final["a"], solved.final["b"]
        return {"final_a": a.text, "final_b": b.text, "final_a_error": a.error, "final_b_error": b.error,
                "final_digits_a": a.digits, "final_digits_b": b.digits, "final_check": FINAL_CHECKED}
    if dps is None or not len(solved.sol.ys):
        return {}
    import mpmath

    final_a, final_b = solved.sol.ys[-1]
    return {"final_a": mpmath.nstr(final_a, dps), "final_b": mpmath.nstr(final_b, dps), "final_check": FINAL_UNCHECKED}


def _high_precision_stats(sol, dps, quadrature, estimator, rhs, piece_digits) -> dict:
    """The quadrature's two-order checks at the final state and the rounding bound of a D-digit solve."""
    from stumpcheck.numerics.flow.quadrature_order import quadrature_agreement

    final_a, final_b = sol.ys[-1]
    stats = {}
    # a check, not a search: a shortfall is reported (and the computed run kept), not raised
    uniform_end = quadrature_agreement(final_a, final_b, dps, quadrature["quadrature_order"], estimator=estimator,
                                       rhs=rhs)
    if piece_digits is not None:
        stats.update(_piece_rule_end(final_a, final_b, dps, piece_digits, sol.info))
        stats["quadrature_check_digits_end_uniform"] = uniform_end
    else:
        stats["quadrature_rule"] = "uniform"
        stats["quadrature_check_digits_end"] = uniform_end
    stats["rounding_bound"] = sol.info.get("rounding_bound", math.nan)
    return stats


def _float64_columns(sol, dps):
    """(t, a, b) of the saved states as float64 arrays (t = e^s − 1 at the solve's precision, then rounded)."""
    if dps is None:
        t = np.expm1(sol.ts)
        ys = sol.ys
    else:
        import mpmath

        from stumpcheck.numerics.flow.ode import MPArithmetic

        with MPArithmetic(dps).working():
            t = np.array([float(mpmath.expm1(x)) for x in sol.ts])
        ys = np.array([[float(x) for x in row] for row in sol.ys])
    return t, np.asarray(ys[:, 0], dtype=float), np.asarray(ys[:, 1], dtype=float)


def _diagnostics(a, b, delta, estimator):
    """(L, ∇L rows, sup interior |e|) at the saved states, float64: L and ∇L by the flow's own field (the compiled
    kernel for the one-head and reflected estimators, the generated numpy code otherwise)."""
    field_ = PopulationFlowField(estimator)
    losses, grads = [], []
    for ai, bi in zip(a, b):
        value, grad, _ = field_._moments((float(ai), float(bi)), False)
        losses.append(value)
        grads.append(grad)
    sups = sup_interior_errors(a, b, delta=delta, estimator=estimator)
    return np.array(losses, dtype=float), np.array(grads, dtype=float).reshape(len(a), 2), sups


def _calibration_residual(a, b):
    from stumpcheck.numerics.generated import asymptotics_numpy as derived

    return derived.calibration_residual(a, b)
