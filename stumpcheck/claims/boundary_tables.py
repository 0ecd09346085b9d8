"""The sup-over-θ tables behind C7 and C8 (docs/model.md §7): population level and fresh contexts.

* :func:`population_sup_table`: along the calibration relation a = calibration_a(b)
  (t ≈ b⁴/2), sup over θ ∈ [0, 1] of the population error |e(θ)|, the same sup
  without the exact ends θ ∈ {0, 1}, and the interior sup over [δ, 1 − δ];
  float64 generated e(θ) on :func:`population_theta_grid` (evidence *sampled*).
* :func:`fresh_sup_table`: a frozen (a, b) on the relation with b = 4N, the max
  over a θ grid of the fresh-context mean |θ̂_N − θ| and the max over the
  interior θ (Monte Carlo means with 95% normal CIs, evidence *sampled*).
"""

from __future__ import annotations

import numpy as np

from stumpcheck.claims.c6 import INTERIOR_THETAS
from stumpcheck.numerics.corpus.fresh import DEFAULT_THETAS, sup_error_over_theta
from stumpcheck.numerics.generated import asymptotics_numpy as derived
from stumpcheck.numerics.generated import population_numpy as gen_np

__all__ = ["FRESH_SCALE_PER_N", "INTERIOR_DELTA", "fresh_sup_table", "population_sup_table",
           "population_theta_grid"]

#: interior of C7: θ ∈ [δ, 1 − δ]
INTERIOR_DELTA = 0.05
#: frozen scale for fresh contexts of size N in C7/C8: b = FRESH_SCALE_PER_N · N, a on the calibration relation
FRESH_SCALE_PER_N = 4.0


# ---------------------------------------------------------------- population level

def population_theta_grid(b: float) -> np.ndarray:
    """θ grid on [0, 1] for a population sup at scale b.

    An even grid of 2001 points, both ends, 1 − 10⁻ᵏ and 10⁻ᵏ (k = 1..15), and
    c·b⁻ʲ from both ends (c ∈ {0.1, 1, 10}, j = 1, 2, 3): the one-head
    model's layer at θ = 1 has width ~ b⁻³ (there r = e^{b−a} ≈ b⁻² competes
    with b(1 − θ)), the bulk layers width ~ 1/b.
    """
    points = [np.linspace(0.0, 1.0, 2001)]
    tiny = np.array([10.0 ** -k for k in range(1, 16)] + [c * b ** -j for c in (0.1, 1.0, 10.0) for j in (1, 2, 3)])
    tiny = tiny[(tiny > 0) & (tiny < 1)]
    points += [tiny, 1.0 - tiny]
    grid = np.unique(np.clip(np.concatenate(points), 0.0, 1.0))
    return grid


def _population_errors(a: float, b: float, estimator: str, theta: np.ndarray) -> np.ndarray:
    return getattr(gen_np, f"error_{estimator.replace('-', '_')}")(a, b, theta)


def population_sup_table(bs, estimators=("one-head", "reflected", "averaged", "pooled"), *,
                         delta: float = INTERIOR_DELTA) -> dict:
    """sup_{θ∈[0,1]} |e(θ)|, the same without the exact ends θ ∈ {0, 1}, and sup_{θ∈[δ,1−δ]} |e(θ)|,
    at (a, b) = (calibration_a(b), b) for each b.

    Evidence: sampled (float64 generated e(θ) on :func:`population_theta_grid`).
    The calibration relation a = b + 2 log b − ρ₁/b is the one the population
    flow tracks (C2), with t ≈ b⁴/2 (C3).
    """
    rows = {est: {"b": [], "a": [], "t_equivalent": [], "sup_error": [], "theta_at_sup": [],
                  "sup_error_open": [], "sup_interior_error": []} for est in estimators}
    for b in bs:
        a = float(derived.calibration_a(b))
        grid = population_theta_grid(b)
        interior = (grid >= delta) & (grid <= 1 - delta)
        open_interval = (grid > 0) & (grid < 1)
        for est in estimators:
            e = np.abs(_population_errors(a, b, est, grid))
            if not np.all(np.isfinite(e)):
                raise ArithmeticError(f"non-finite population error at b={b} ({est})")
            i = int(np.argmax(e))
            row = rows[est]
            row["b"].append(float(b))
            row["a"].append(a)
            row["t_equivalent"].append(float(b) ** 4 / derived.FLOW_CONSTANT_C)
            row["sup_error"].append(float(e[i]))
            row["theta_at_sup"].append(float(grid[i]))
            row["sup_error_open"].append(float(e[open_interval].max()))
            row["sup_interior_error"].append(float(e[interior].max()))
    return rows


# ---------------------------------------------------------------- fresh contexts

def fresh_sup_table(Ns, estimators, *, reps: int, seed: int, scale_per_N: float = FRESH_SCALE_PER_N,
                    thetas=DEFAULT_THETAS, interior=INTERIOR_THETAS) -> dict:
    """For each N: frozen (a, b) = (calibration_a(b), b) with b = scale_per_N·N; the max over ``thetas``
    of the fresh-context mean |θ̂_N − θ| (with its CI and θ) and the max over the ``interior`` ones.
    """
    rows = {est: {"N": [], "b": [], "sup_error": [], "sup_ci": [], "theta_at_sup": [], "interior_error": [],
                  "interior_ci": [], "per_theta": []} for est in estimators}
    for N in Ns:
        b = scale_per_N * N
        a = float(derived.calibration_a(b))
        for est in estimators:
            sup = sup_error_over_theta(a, b, int(N), thetas=tuple(thetas) + tuple(interior), estimator=est,
                                       reps=reps, seed=seed)
            inner = [r for r in sup.per_theta if r["theta"] in interior]
            worst_inner = max(inner, key=lambda r: r["mean_abs_error"])
            row = rows[est]
            row["N"].append(int(N))
            row["b"].append(float(b))
            row["sup_error"].append(sup.sup_mean_abs_error)
            row["sup_ci"].append([sup.ci_low, sup.ci_high])
            row["theta_at_sup"].append(sup.theta_at_sup)
            row["interior_error"].append(worst_inner["mean_abs_error"])
            row["interior_ci"].append([worst_inner["ci_low"], worst_inner["ci_high"]])
            row["per_theta"].append([{k: r[k] for k in ("theta", "mean_abs_error", "ci_low", "ci_high")}
                                     for r in sup.per_theta])
    return rows
