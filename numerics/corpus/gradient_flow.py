"""The empirical gradient flow dz/dt = −∇L̂(z): a stand-in for very long constant-step GD.

GD with step η follows this flow with a global error O(η) at fixed t = kη
(Euler's method); ``tests/test_training.py`` checks that agreement and its
first order where both run. Reaching scale b costs GD about b⁴/(2η) steps; the
flow, integrated adaptively in s = log(1 + t) (in which b ∝ t^{1/4} grows
linearly), costs a roughly constant number of steps per decade of t:

    dz/ds = −e^s ∇L̂(z),     ∂f/∂z = −e^s ∇²L̂(z),     ∂f/∂s = f.

∇L̂ is :func:`stumpcheck.numerics.corpus.empirical.loss_and_gradient`; the exact Hessian
(:mod:`stumpcheck.numerics.corpus.curvature`) is the Jacobian for the default
linearly implicit solver Rodas4 (the flow is stiff: the curvature across the
calibration relation is much larger than along it); ``solver="dopri5"`` is
the explicit alternative. Results used in place of GD must say so (the
``kind`` field is "empirical gradient flow").

Stop rules: ``t_max``, or ``b_target`` (the first time b reaches it, located
by bisection of the crossing step to a relative 10⁻¹² in b), or both.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass, field, replace

import numpy as np

from stumpcheck.numerics.flow.ode import Dopri5, PIController, Rodas4, SaveAt, diffeqsolve
from stumpcheck.numerics.precision import InputError, finite_float
from stumpcheck.numerics.corpus.gd import DEFAULT_A0, DEFAULT_B0
from stumpcheck.numerics.corpus.steps import corpus_arrays, estimator_name
from stumpcheck.numerics.corpus.curvature import loss_gradient_hessian

__all__ = ["EmpiricalFlowResult", "empirical_flow"]

_SOLVERS = {"rodas4": Rodas4, "dopri5": Dopri5}
_CHUNK_S = 1.0  # integrate in pieces of Δs = 1 (t × e) so that b_target can stop the solve


@dataclass
class EmpiricalFlowResult:
    """Saved t, a, b, L̂ of the flow, the final (a, b), why it stopped, and the solver's counts."""

    t: np.ndarray
    a_path: np.ndarray
    b_path: np.ndarray
    loss: np.ndarray
    a: float
    b: float
    t_final: float
    stopped_because: str
    kind: str = "empirical gradient flow"
    settings: dict = field(default_factory=dict)
    stats: dict = field(default_factory=dict)


class _Field:
    def __init__(self, x, theta, estimator, source, method):
        from stumpcheck.numerics.corpus.empirical import loss_and_gradient

        self._lg = loss_and_gradient
        self.x, self.theta, self.estimator, self.source, self.method = x, theta, estimator, source, method

    def __call__(self, s, z):
        _, grad = self._lg(self.source, self.theta, float(z[0]), float(z[1]), estimator=self.estimator,
                           method=self.method)
        return -math.exp(s) * np.asarray(grad)

    def linearization(self, s, z):
        value = self(s, z)
        _, _, hessian = loss_gradient_hessian(self.x, self.theta, float(z[0]), float(z[1]),
                                              estimator=self.estimator)
        return value, -math.exp(s) * hessian, value


def empirical_flow(x, theta, *, a0: float = DEFAULT_A0, b0: float = DEFAULT_B0, t_max: float | None = None,
                   b_target: float | None = None, rtol: float = 1e-9, solver: str = "rodas4",
                   estimator: str = "one-head", method: str = "dense", max_steps: int = 200_000,
                   progress=None, refine_crossing: bool = True) -> EmpiricalFlowResult:
    """Integrate dz/dt = −∇L̂(z) from (a₀, b₀) until ``t_max`` or until b = ``b_target``.

    ``rtol`` is the integrator's relative tolerance (atol = rtol·10⁻²).
    ``progress(t, a, b)`` is called after each piece of Δs = 1. With only
    ``b_target`` the solve gives up at t = 10·b_target⁴ (the population flow
    reaches b at t ≈ b⁴/2). ``refine_crossing=False`` ends on the first saved
    point with b ≥ ``b_target`` instead of bisecting for b = b_target (each
    bisection step is a re-solve; a check that only needs b ≥ b_target skips
    them). Invalid input raises InputError.
    """
    started = time.perf_counter()
    x, theta = corpus_arrays(x, theta)
    a0 = finite_float(a0, "a0")
    b0 = finite_float(b0, "b0", positive=True)
    estimator = estimator_name(estimator)
    t_max = None if t_max is None else finite_float(t_max, "t_max", positive=True)
    b_target = None if b_target is None else finite_float(b_target, "b_target", positive=True)
    if t_max is None and b_target is None:
        raise InputError("empirical_flow needs t_max or b_target")
    rtol = finite_float(rtol, "rtol", positive=True)
    if not rtol < 1e-3:
        raise InputError(f"rtol must be in (0, 1e-3), got {rtol}")
    if solver not in _SOLVERS:
        raise InputError(f"unknown solver {solver!r}; one of {', '.join(_SOLVERS)}")
    source = x
    if method == "pruned":
        from stumpcheck.numerics.corpus.empirical import sort_corpus

        source = sort_corpus(x, theta)
    vector_field = _Field(x, theta, estimator, source, method)
    controller = PIController(rtol=rtol, atol=rtol * 1e-2)
    t_limit = t_max if t_max is not None else 10.0 * b_target**4
    s_end = math.log1p(t_limit)

    def solve(s0, s1, z0, save_steps=True, h0=None):
        control = controller if h0 is None else replace(controller, h0=min(h0, s1 - s0))
        sol = diffeqsolve(vector_field, _SOLVERS[solver], s0, s1, z0, saveat=SaveAt(steps=save_steps),
                          controller=control, max_steps=max_steps, linearization=vector_field.linearization)
        stats["accepted"] += sol.accepted
        stats["rejected"] += sol.rejected
        stats["evaluations"] += sol.evaluations
        if not sol.status.ok:
            raise _Stopped(sol, sol.status.message)
        return sol

    stats = {"accepted": 0, "rejected": 0, "evaluations": 0}
    ss, zs = [0.0], [np.array([a0, b0])]
    stopped = "t_max" if t_max is not None else f"b_target not reached by t = {t_limit:.3g}"
    if b_target is not None and b0 >= b_target:
        stopped = "b_target"
    else:
        try:
            h0 = None
            while ss[-1] < s_end:
                piece = solve(ss[-1], min(s_end, ss[-1] + _CHUNK_S), zs[-1], h0=h0)
                # the next piece starts with the step size this one ended with (its last step may be cut short)
                h0 = float(max(np.diff(piece.ts[-3:]))) if len(piece.ts) > 2 else None
                ss += [float(s) for s in piece.ts[1:]]
                zs += [np.array(y, dtype=float) for y in piece.ys[1:]]
                if progress is not None:
                    progress(math.expm1(ss[-1]), float(zs[-1][0]), float(zs[-1][1]))
                if b_target is not None and zs[-1][1] >= b_target:
                    crossing = next(i for i, z in enumerate(zs) if z[1] >= b_target)
                    stopped = "b_target"
                    if not refine_crossing:
                        ss, zs = ss[:crossing + 1], zs[:crossing + 1]
                        break
                    try:
                        s_hit, z_hit = _locate(solve, ss[crossing - 1], zs[crossing - 1], ss[crossing],
                                               zs[crossing], b_target)
                    except _Stopped as exc:  # keep the first saved point past the target
                        s_hit, z_hit = ss[crossing], zs[crossing]
                        stopped = f"b_target (crossing not refined: {exc.message})"
                    ss, zs = ss[:crossing] + [s_hit], zs[:crossing] + [z_hit]
                    break
        except _Stopped as exc:
            stopped = f"solver stopped: {exc.message}"
            ss += [float(s) for s in exc.solution.ts[1:]]
            zs += [np.array(y, dtype=float) for y in exc.solution.ys[1:]]
    za = np.array([z[0] for z in zs])
    zb = np.array([z[1] for z in zs])
    loss = np.array([vector_field._lg(source, theta, float(p), float(q), estimator=estimator, method=method)[0]
                     for p, q in zip(za, zb)])
    stats["seconds"] = time.perf_counter() - started
    return EmpiricalFlowResult(
        t=np.expm1(np.array(ss)), a_path=za, b_path=zb, loss=loss, a=float(za[-1]), b=float(zb[-1]),
        t_final=float(math.expm1(ss[-1])), stopped_because=stopped,
        settings={"a0": a0, "b0": b0, "t_max": t_max, "b_target": b_target, "rtol": rtol, "atol": rtol * 1e-2,
                  "solver": solver, "estimator": estimator, "method": method,
                  "time_variable": "s = log(1 + t)", "jacobian": "exact Hessian (stumpcheck.numerics.corpus.curvature)"},
        stats=stats)


class _Stopped(Exception):
    def __init__(self, solution, message):
        super().__init__(message)
        self.solution, self.message = solution, message


def _locate(solve, s_lo, z_lo, s_hi, z_hi, b_target):
    """The s in [s_lo, s_hi] where b(s) = b_target (b_lo < target ≤ b_hi), by bisection on re-solves."""
    for _ in range(60):
        if z_hi[1] - b_target <= 1e-12 * b_target or s_hi - s_lo <= 1e-14 * max(1.0, s_hi):
            break
        s_mid = 0.5 * (s_lo + s_hi)
        z_mid = np.array(solve(s_lo, s_mid, z_lo, save_steps=False).ys[-1], dtype=float)
        if z_mid[1] >= b_target:
            s_hi, z_hi = s_mid, z_mid
        else:
            s_lo, z_lo = s_mid, z_mid
    return s_hi, z_hi
