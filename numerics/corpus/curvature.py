"""Exact Hessian of the corpus loss L̂ (docs/model.md §3), for the step size of GD.

For one head the estimate is a softmax average θ̂ = Σᵢ αᵢ vᵢ with scores
sᵢ = a·φᵃᵢ + b·φᵇᵢ that are linear in z = (a, b) (one-head: φᵃ = y, φᵇ = −x,
v = x; reflected: φᵃ = 1 − y, φᵇ = x − 1, v = x; pooled: both sets of n atoms
in one softmax). The weights αᵢ ∝ e^{sᵢ} form an exponential family in z, so the
derivatives of θ̂ are joint cumulants under α, computed here as central
moments (two-pass, scores shifted by their maximum, so stable in float64 for
a, b up to ~10⁶ and beyond):

    ∂θ̂/∂zⱼ       = E_α[(v − v̄)(φʲ − φ̄ʲ)]
    ∂²θ̂/∂zⱼ∂zₖ  = E_α[(v − v̄)(φʲ − φ̄ʲ)(φᵏ − φ̄ᵏ)]      (third joint cumulant)

and, with eⱼ = θ̂ⱼ − θⱼ and L̂ = (1/m) Σⱼ ½ eⱼ²,

    ∇L̂  = (1/m) Σⱼ eⱼ ∇θ̂ⱼ,     ∇²L̂ = (1/m) Σⱼ (∇θ̂ⱼ ∇θ̂ⱼᵀ + eⱼ ∇²θ̂ⱼ).

The averaged estimator averages the one-head and reflected derivatives. This
is exact (no finite differences); its gradient is an independent check of
:mod:`stumpcheck.numerics.corpus.empirical`.
"""

from __future__ import annotations

import numpy as np

__all__ = ["ESTIMATORS", "estimate_derivatives", "loss_gradient_hessian", "spectral_curvature"]

ESTIMATORS = ("one-head", "reflected", "averaged", "pooled")
_CHUNK_ENTRIES = 2**21


def _head_atoms(x, y, kind: str):
    """(φᵃ, φᵇ) of the atoms of one head; the values are always x."""
    if kind == "one-head":
        return y, -x
    return 1.0 - y, x - 1.0


def _moments(phi_a, phi_b, values, a: float, b: float):
    """θ̂, ∇θ̂ (2, rows), ∇²θ̂ (3, rows: aa, ab, bb) of a softmax average over the last axis."""
    scores = a * phi_a + b * phi_b
    scores = scores - scores.max(axis=1, keepdims=True)
    weights = np.exp(scores)
    weights /= weights.sum(axis=1, keepdims=True)

    def centred(u):
        return u - np.sum(weights * u, axis=1, keepdims=True)

    dv, da, db = centred(values), centred(phi_a), centred(phi_b)
    estimate = np.sum(weights * values, axis=1)
    wv = weights * dv
    gradient = np.stack([np.sum(wv * da, axis=1), np.sum(wv * db, axis=1)])
    hessian = np.stack([np.sum(wv * da * da, axis=1), np.sum(wv * da * db, axis=1), np.sum(wv * db * db, axis=1)])
    return estimate, gradient, hessian


def _check(x, theta, a, b, estimator):
    if estimator not in ESTIMATORS:
        raise ValueError(f"unknown estimator {estimator!r}; one of {', '.join(ESTIMATORS)}")
    x = np.asarray(x, dtype=np.float64)
    theta = np.asarray(theta, dtype=np.float64)
    if x.ndim != 2 or theta.shape != (x.shape[0],):
        raise ValueError(f"need x of shape (m, n) and theta of shape (m,), got {x.shape} and {theta.shape}")
    if not (np.isfinite(a) and np.isfinite(b)):
        raise ValueError(f"a and b must be finite, got a={a}, b={b}")
    return x, theta


def estimate_derivatives(x, theta, a: float, b: float, *, estimator: str = "one-head"):
    """(θ̂ (m,), ∇θ̂ (2, m), ∇²θ̂ (3, m) as rows ∂²/∂a², ∂²/∂a∂b, ∂²/∂b²) for each task, float64.

    Labels y = 1{x ≥ θ} per task; the tasks are processed in chunks of about
    2²¹ scores so memory stays bounded.
    """
    x, theta = _check(x, theta, a, b, estimator)
    m, n = x.shape
    rows = max(1, _CHUNK_ENTRIES // (2 * n))
    out_e, out_g, out_h = np.empty(m), np.empty((2, m)), np.empty((3, m))
    for start in range(0, m, rows):
        xs = x[start:start + rows]
        ys = (xs >= theta[start:start + rows, None]).astype(np.float64)
        if estimator == "pooled":
            pa1, pb1 = _head_atoms(xs, ys, "one-head")
            pa2, pb2 = _head_atoms(xs, ys, "reflected")
            e, g, h = _moments(np.concatenate([pa1, pa2], axis=1), np.concatenate([pb1, pb2], axis=1),
                               np.concatenate([xs, xs], axis=1), a, b)
        elif estimator == "averaged":
            parts = [_moments(*_head_atoms(xs, ys, kind), xs, a, b) for kind in ("one-head", "reflected")]
            e, g, h = ((p + q) / 2 for p, q in zip(*parts))
        else:
            e, g, h = _moments(*_head_atoms(xs, ys, estimator), xs, a, b)
        out_e[start:start + rows], out_g[:, start:start + rows], out_h[:, start:start + rows] = e, g, h
    return out_e, out_g, out_h


def loss_gradient_hessian(x, theta, a: float, b: float, *, estimator: str = "one-head"):
    """(L̂, ∇L̂ (2,), ∇²L̂ (2, 2)) of the corpus loss at (a, b), exact formulas above, float64."""
    estimate, gradient, hessian = estimate_derivatives(x, theta, a, b, estimator=estimator)
    error = estimate - np.asarray(theta, dtype=np.float64)
    m = error.size
    loss = float(np.sum(error * error) / (2 * m))
    grad = gradient @ error / m
    h_aa = (gradient[0] @ gradient[0] + hessian[0] @ error) / m
    h_ab = (gradient[0] @ gradient[1] + hessian[1] @ error) / m
    h_bb = (gradient[1] @ gradient[1] + hessian[2] @ error) / m
    return loss, grad, np.array([[h_aa, h_ab], [h_ab, h_bb]])


def spectral_curvature(hessian) -> float:
    """‖∇²L̂‖₂ = ``max |λ|`` of a symmetric 2×2 matrix (the local L-smoothness constant)."""
    return float(np.max(np.abs(np.linalg.eigvalsh(np.asarray(hessian, dtype=np.float64)))))
