"""What a user would write for the float64 population flow without this toolkit: the baselines of bench_flow.

Typed from docs/model.md alone, importing nothing of the project (numerics/, theory/, stumpcheck/):

* §2.1–2.2: for x ~ U[0, 1] at threshold θ the head's weight on the right segment [θ, 1] is
  w = σ(z), z = a − bθ + log((1 − θ)/θ) + Λ(b(1 − θ)) − Λ(bθ), Λ(β) = log((1 − e^{−β})/β), and
  e(θ) = w·(1 − θ)κ₁(b(1 − θ)) − (1 − w)·θ(1 − κ₁(bθ)), κ₁(β) = 1/β − 1/(e^β − 1).
* ∇e from the exponential-family identities (the scores are linear in (a, b), ∂s/∂a = y,
  ∂s/∂b = −x, so ∂θ̂/∂a = Cov(x, y) and ∂θ̂/∂b = −Var x under the tilted law): with
  Δ = (1 − θ)κ₁(b(1 − θ)) + θ(1 − κ₁(bθ)) and the segment variances (1 − θ)²κ₂(b(1 − θ)), θ²κ₂(bθ),
  κ₂(β) = 1/β² − e^β/(e^β − 1)²: ∂e/∂a = w(1 − w)Δ, ∂e/∂b = −[wV_R + (1 − w)V_L + w(1 − w)Δ²].
* §3: ∇L = ∫₀¹ e∇e dθ. §4.1: dz/ds = −(1 + t)∇L(z), s = log(1 + t).

κ₁, κ₂ below β = 0.5 from their Taylor series (Bernoulli numbers, to β⁹ and β⁸). The switch
point θ* (where z = 0) by scipy's brentq in the logit; breakpoints are the baselines' own.
LSODA without a Jacobian (scipy estimates it by differences), as a user would call it.
"""

from __future__ import annotations

import math
import warnings

import numpy as np
from scipy.integrate import LSODA, IntegrationWarning, quad
from scipy.optimize import brentq

__all__ = ["gradient_quad", "gradient_gauss_legendre", "solve_lsoda", "QUAD_WARNINGS"]

#: How many of quad's calls warned (roundoff, slow convergence) since import: the baseline's own
#: accuracy report, kept out of the benchmark's output.
QUAD_WARNINGS = {"calls": 0, "warned": 0}


def _kappas_scalar(beta: float) -> tuple[float, float]:
    if beta < 0.5:
        b2 = beta * beta
        k1 = 0.5 - beta / 12 + beta * b2 / 720 - beta * b2 * b2 / 30240 + beta * b2 ** 3 / 1209600 \
            - beta * b2 ** 4 / 47900160
        k2 = 1 / 12 - b2 / 240 + b2 * b2 / 6048 - b2 ** 3 / 172800 + b2 ** 4 / 5322240
        return k1, k2
    if beta > 700:  # e^{−β} below double precision
        return 1 / beta, 1 / beta ** 2
    p = 1 / math.expm1(beta)
    return 1 / beta - p, 1 / beta ** 2 - p * (1 + p)


def _log_mass_scalar(beta: float) -> float:
    return math.log(-math.expm1(-beta) / beta)


def _integrand_scalar(a: float, b: float, theta: float) -> tuple[float, float]:
    """(e ∂e/∂a, e ∂e/∂b) at one θ ∈ (0, 1)."""
    u = 1 - theta
    z = a - b * theta + math.log(u / theta) + _log_mass_scalar(b * u) - _log_mass_scalar(b * theta)
    w = 1 / (1 + math.exp(-z)) if z > -700 else 0.0
    v = 1 / (1 + math.exp(z)) if z < 700 else 0.0
    r1, r2 = _kappas_scalar(b * u)
    l1, l2 = _kappas_scalar(b * theta)
    right, left = u * r1, theta * (1 - l1)
    delta = right + left
    e = w * right - v * left
    ea = w * v * delta
    eb = -(w * u * u * r2 + v * theta * theta * l2 + w * v * delta * delta)
    return e * ea, e * eb


def _kappas(beta: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    small = beta < 0.5
    b2 = beta * beta
    with np.errstate(over="ignore", divide="ignore", invalid="ignore"):
        em1 = np.expm1(np.where(small, 1.0, beta))
        k1 = np.where(small, 0.5 - beta / 12 + beta * b2 / 720 - beta * b2 * b2 / 30240 + beta * b2 ** 3 / 1209600
                      - beta * b2 ** 4 / 47900160, 1 / beta - 1 / em1)
        big = 1 / b2 - (1 + 1 / em1) / em1
        k2 = np.where(small, 1 / 12 - b2 / 240 + b2 * b2 / 6048 - b2 ** 3 / 172800 + b2 ** 4 / 5322240, big)
    return k1, k2


def _integrand(a: float, b: float, theta: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(e ∂e/∂a, e ∂e/∂b) at the nodes θ ∈ (0, 1), vectorised."""
    u = 1 - theta
    z = (a - b * theta + np.log(u / theta) + np.log(-np.expm1(-b * u) / (b * u))
         - np.log(-np.expm1(-b * theta) / (b * theta)))
    w = 0.5 * (1 + np.tanh(z / 2))
    v = 0.5 * (1 - np.tanh(z / 2))
    r1, r2 = _kappas(b * u)
    l1, l2 = _kappas(b * theta)
    right, left = u * r1, theta * (1 - l1)
    delta = right + left
    e = w * right - v * left
    ea = w * v * delta
    eb = -(w * u * u * r2 + v * theta * theta * l2 + w * v * delta * delta)
    return e * ea, e * eb


def switch_point(a: float, b: float) -> float:
    """θ* where z(θ*) = 0, by brentq on z in the logit s = log(θ/(1 − θ)) ∈ [−60, 60]."""
    def z_of(s):
        theta = 1 / (1 + math.exp(-s))
        u = 1 / (1 + math.exp(s))
        return a - b * theta - s + _log_mass_scalar(b * u) - _log_mass_scalar(b * theta)

    if z_of(60.0) >= 0:
        return 1 / (1 + math.exp(-60.0))
    if z_of(-60.0) <= 0:
        return 1 / (1 + math.exp(60.0))
    s = brentq(z_of, -60.0, 60.0, xtol=1e-14, rtol=1e-15)
    return 1 / (1 + math.exp(-s))


def gradient_quad(a: float, b: float) -> np.ndarray:
    """∇L by scipy's quad (QAGP) on [0, 1], with θ* and the end layers 1/b as break points."""
    theta_star = switch_point(a, b)
    points = sorted({p for p in (1 / b, theta_star, 1 - 1 / b) if 0 < p < 1})
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", IntegrationWarning)
        ga = quad(lambda th: _integrand_scalar(a, b, th)[0], 0.0, 1.0, points=points, epsabs=0.0, epsrel=1e-11,
                  limit=500)[0]
        gb = quad(lambda th: _integrand_scalar(a, b, th)[1], 0.0, 1.0, points=points, epsabs=0.0, epsrel=1e-11,
                  limit=500)[0]
    QUAD_WARNINGS["calls"] += 2
    QUAD_WARNINGS["warned"] += sum(issubclass(w.category, IntegrationWarning) for w in caught)
    return np.array([ga, gb])


_X32, _W32 = np.polynomial.legendre.leggauss(32)


def _geometric(centre: float, first: float, lo: float, hi: float) -> list[float]:
    out, step = [], first
    while step < hi - lo:
        out += [p for p in (centre - step, centre + step) if lo < p < hi]
        step *= 4
    return out


def gradient_gauss_legendre(a: float, b: float) -> np.ndarray:
    """∇L by a 32-point Gauss–Legendre rule on pieces growing geometrically (ratio 4) from θ = 0, θ = 1
    (first piece 1/(8b)) and θ* (first piece a quarter of its distance to the nearer end, at most 1/(8b)),
    all nodes in one vectorised evaluation."""
    theta_star = switch_point(a, b)
    near = min(theta_star, 1 - theta_star)
    points = {0.0, 1.0, theta_star, *_geometric(0.0, 1 / (8 * b), 0.0, 1.0), *_geometric(1.0, 1 / (8 * b), 0.0, 1.0),
              *_geometric(theta_star, min(near / 4, 1 / (8 * b)), 0.0, 1.0)}
    p = np.array(sorted(points))
    mid, half = (p[1:] + p[:-1]) / 2, (p[1:] - p[:-1]) / 2
    nodes = (mid[:, None] + half[:, None] * _X32[None, :]).ravel()
    weights = (half[:, None] * _W32[None, :]).ravel()
    ia, ib = _integrand(a, b, nodes)
    return np.array([weights @ ia, weights @ ib])


def solve_lsoda(gradient, t_max: float, *, rtol: float, atol: float, z0=(10.0, 10.0)) -> dict:
    """dz/ds = −(1 + t)∇L(z) in s = log(1 + t) by scipy's LSODA (no Jacobian given): final state and counts."""
    evaluations = 0

    def rhs(s, z):
        nonlocal evaluations
        evaluations += 1
        return -math.exp(s) * gradient(z[0], z[1])

    solver = LSODA(rhs, 0.0, np.array(z0, dtype=float), math.log1p(t_max), rtol=rtol, atol=atol)
    steps = 0
    while solver.status == "running":
        solver.step()
        steps += 1
    return {"a": float(solver.y[0]), "b": float(solver.y[1]), "ok": solver.status == "finished", "steps": steps,
            "evaluations": evaluations}
