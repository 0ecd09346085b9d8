"""C5 along a corpus's own GD trajectory: the corpus's rate of resolution growth, and its margin.

Constant-step GD on L̂ (:func:`stumpcheck.numerics.corpus.gd.train_gd`, pruned path) from the large-resolution
start b₀ = (m ∧ n)/4, a₀ = a_cal(b₀), with the population-curvature step

    η = 1/λ_max(∇²L(a₀, b₀))     (∇²L: :func:`stumpcheck.numerics.population.quantities.loss_gradient_hessian_float64`),

λ_max ≈ b₀⁻³ along the calibration direction. (The corpus Hessian there is indefinite and tiny, and
1/λ_max of it leaves the model.) At each recorded step z_k = (a_k, b_k):

    rate_k   = −∂L̂/∂b(z_k) ÷ −∂L/∂b(a_cal(b_k), b_k)     (the corpus's speed in b over the population's
                                                          speed at the same scale on the relation),
    margin_k = a_k − θ_max·b_k                            (θ_max: the corpus's largest threshold; the
                                                          positives of that task outscore its negatives
                                                          only while the margin is positive),

and a_k − a_cal(b_k), the distance from the calibration relation. ∇L at z_k itself is not a
reference: off the relation it is dominated by the population's restoring force towards it.
Evidence: sampled (one seeded corpus, float64).
"""

from __future__ import annotations

import numpy as np

from stumpcheck.numerics.corpus.corpora import make_corpus
from stumpcheck.numerics.corpus.empirical import loss_and_gradient, sort_corpus
from stumpcheck.numerics.generated import asymptotics_numpy as derived
from stumpcheck.numerics.corpus.steps import population_hessian_eigenvalues
from stumpcheck.numerics.population.quantities import loss_and_gradient_float64

__all__ = ["population_eta", "trajectory_figures"]


def population_eta(a0: float, b0: float) -> tuple[float, list]:
    """(η, eigenvalues) with η = 1/λ_max of the population Hessian ∇²L(a₀, b₀) (float64): the step rule of
    :func:`stumpcheck.numerics.corpus.steps.population_eta`, with the eigenvalues for the report."""
    eigenvalues = population_hessian_eigenvalues(a0, b0)
    return 1.0 / float(eigenvalues[-1]), eigenvalues.tolist()


def trajectory_figures(m: int, n: int, *, seed: int, steps: int, records: int = 10) -> dict:
    """Train GD ``steps`` steps on make_corpus(m, n, seed) from the large-resolution start (module doc);
    return the rule, η, and per recorded step (about ``records`` of them): step, a, b, a − a_cal(b),
    L̂, rate and margin, plus the largest relative change of L̂ between recorded steps
    (``largest_relative_loss_increase``; negative when L̂ decreased at every recorded step)."""
    from stumpcheck.numerics.corpus.gd import train_gd

    corpus = make_corpus(m, n, seed=seed)
    b0 = min(m, n) / 4.0
    a0 = float(derived.calibration_a(b0))
    eta, eigenvalues = population_eta(a0, b0)
    run = train_gd(corpus.x, corpus.theta, a0=a0, b0=b0, eta=eta, steps=steps, method="pruned",
                   record_every=max(1, steps // records))
    sorted_corpus = sort_corpus(corpus.x, corpus.theta)
    theta_max = float(corpus.theta.max())
    points = []
    trajectory = run.trajectory
    for k, a, b, loss in zip(trajectory["step"], trajectory["a"], trajectory["b"], trajectory["loss"]):
        a, b = float(a), float(b)
        _, grad = loss_and_gradient(sorted_corpus, None, a, b, method="pruned")
        a_cal = float(derived.calibration_a(b))
        _, reference = loss_and_gradient_float64(a_cal, b)
        points.append({"step": int(k), "a": a, "b": b, "a_minus_a_cal": a - a_cal, "loss": float(loss),
                       "rate": float(grad[1] / reference[1]), "margin": a - theta_max * b})
    losses = np.asarray(trajectory["loss"], dtype=float)
    increase = float(np.max(np.diff(losses) / losses[:-1])) if losses.size > 1 else 0.0
    return {"m": int(m), "n": int(n), "seed": int(seed), "a0": a0, "b0": b0, "eta": eta,
            "eta_rule": "eta = 1/lambda_max of the population Hessian at (a0, b0) = (a_cal(b0), (m∧n)/4)",
            "population_hessian_eigenvalues": eigenvalues, "steps": int(run.steps),
            "stopped_because": run.stopped_because, "theta_max": theta_max, "points": points,
            "largest_relative_loss_increase": increase, "method": "GD (train_gd, pruned), float64",
            "evidence": "sampled"}
