"""An independent prototype of ``stumpcheck flow``, run as its own process: the bound of bench_flow's whole-command row.

What a user would write with scipy and numpy alone to print what ``stumpcheck flow`` prints (its defaults:
(a₀, b₀) = (10, 10), t_max = 10¹², rtol 10⁻⁸): the flow dz/ds = −(1 + t)∇L(z), s = log(1 + t), by
scipy's LSODA (no Jacobian given: scipy differences it) with ∇L by the vectorised 32-point
Gauss–Legendre rule of :mod:`benchmarks.flow_baselines` (typed from docs/model.md alone, importing
nothing of the project), at LSODA rtol 10⁻¹⁰, atol 10⁻¹² (the tolerances ``stumpcheck flow`` runs LSODA
at); the same solve at rtol/10 and the largest relative difference in b; at 8 log-spaced times a decade
the state, ½∫e² and the sup over θ ∈ [0.05, 0.95] of |e(θ)| on a 2001-point grid; the exponents of b
and of that sup in t fitted by least squares from t = 10⁶ on. ``--solve-only``: the first solve alone.

Usage: ``python benchmarks/flow_prototype.py [--solve-only] [--t-max 1e12]`` (prints a short table).
"""

from __future__ import annotations

import argparse
import math
import sys
from pathlib import Path

import numpy as np
from scipy.integrate import LSODA

if __package__ in (None, ""):  # run as a script: the baselines module sits beside this file
    sys.path[:0] = [str(Path(__file__).resolve().parent)]
    import flow_baselines as baselines  # noqa: E402
else:
    from benchmarks import flow_baselines as baselines  # noqa: E402

RTOL, ATOL = 1e-10, 1e-12
PER_DECADE = 8
DELTA = 0.05


def _error(a: float, b: float, theta: np.ndarray) -> np.ndarray:
    """e(θ) at the points θ ∈ (0, 1) (docs/model.md §2.1, as benchmarks/flow_baselines.py writes it)."""
    u = 1 - theta
    z = (a - b * theta + np.log(u / theta) + np.log(-np.expm1(-b * u) / (b * u))
         - np.log(-np.expm1(-b * theta) / (b * theta)))
    w = 0.5 * (1 + np.tanh(z / 2))
    r1, _ = baselines._kappas(b * u)
    l1, _ = baselines._kappas(b * theta)
    return w * u * r1 - (1 - w) * theta * (1 - l1)


def _rule(a: float, b: float) -> tuple[np.ndarray, np.ndarray]:
    """The nodes and weights of :func:`benchmarks.flow_baselines.gradient_gauss_legendre`'s rule at (a, b)."""
    theta_star = baselines.switch_point(a, b)
    near = min(theta_star, 1 - theta_star)
    points = {0.0, 1.0, theta_star, *baselines._geometric(0.0, 1 / (8 * b), 0.0, 1.0),
              *baselines._geometric(1.0, 1 / (8 * b), 0.0, 1.0),
              *baselines._geometric(theta_star, min(near / 4, 1 / (8 * b)), 0.0, 1.0)}
    p = np.array(sorted(points))
    mid, half = (p[1:] + p[:-1]) / 2, (p[1:] - p[:-1]) / 2
    return ((mid[:, None] + half[:, None] * baselines._X32[None, :]).ravel(),
            (half[:, None] * baselines._W32[None, :]).ravel())


def solve(t_max: float, rtol: float, atol: float, save_s: np.ndarray):
    """The states at ``save_s`` (s = log(1 + t)) and at the end, by LSODA with its dense output."""
    def rhs(s, z):
        return -math.exp(s) * baselines.gradient_gauss_legendre(z[0], z[1])

    solver = LSODA(rhs, 0.0, np.array([10.0, 10.0]), math.log1p(t_max), rtol=rtol, atol=atol)
    states, k = [], 0
    while solver.status == "running":
        solver.step()
        dense = None
        while k < len(save_s) and save_s[k] <= solver.t:
            dense = dense or solver.dense_output()
            states.append(dense(save_s[k]))
            k += 1
    states.append(solver.y.copy())
    return np.array(states)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--solve-only", action="store_true")
    parser.add_argument("--t-max", type=float, default=1e12)
    args = parser.parse_args()
    t_max = args.t_max
    decades = math.ceil(math.log10(t_max)) + 2
    t = np.logspace(-2, math.log10(t_max), decades * PER_DECADE)
    t = t[t < t_max]
    save_s = np.log1p(t)
    states = solve(t_max, RTOL, ATOL, save_s)
    if args.solve_only:
        print(f"b({t_max:g}) = {states[-1, 1]:.12g}")
        return
    check = solve(t_max, RTOL / 10, ATOL / 10, save_s)
    difference = float(np.max(np.abs(check[:, 1] - states[:, 1]) / np.abs(check[:, 1])))
    times = np.append(t, t_max)
    grid = np.linspace(DELTA, 1 - DELTA, 2001)
    loss, sup = [], []
    for a, b in states:
        theta, weights = _rule(a, b)
        loss.append(0.5 * float(weights @ _error(a, b, theta) ** 2))
        sup.append(float(np.max(np.abs(_error(a, b, grid)))))
    window = times >= 1e6
    fits = {}
    if window.sum() >= 3:
        fits["scale_exponent"] = np.polyfit(np.log(times[window]), np.log(states[window, 1]), 1)[0]
        fits["error_exponent"] = np.polyfit(np.log(times[window]), np.log(np.array(sup)[window]), 1)[0]
    for i in range(0, len(times), max(1, len(times) // 12)):
        print(f"{times[i]:.3e} {states[i, 0]:14.6f} {states[i, 1]:14.6f} {loss[i]:.5e} {sup[i] * states[i, 1]:.6f}")
    print(f"final b {states[-1, 1]:.12g}; max rel. difference in b (rtol vs rtol/10) {difference:.2e}")
    print(", ".join(f"{k}: {v:.6g}" for k, v in fits.items()))


if __name__ == "__main__":
    main()
