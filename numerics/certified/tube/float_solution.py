"""The tube's float64 approximate solution: Chebyshev collocation pieces along the flow (not part of any proof).

In s = log(1 + t), dz/ds = F(s, z) = −e^s ∇L(z). On S = [s₀, s₀ + h] the piece z̃ of degree m solves the
collocation equations z̃'(s_j) = F(s_j, z̃(s_j)) at the Chebyshev points x_j = cos(jπ/m), j < m, with
z̃(s₀) = z₀ (x_m = −1), by Newton's method on the 2m unknowns (Trefethen's Chebyshev differentiation
matrix; the exact Jacobian −e^s∇²L of the compiled float64 quadrature, so stiffness does not matter). The
first guess is a Radau solve. Trailing coefficients at the float field's noise level are then dropped
(``CHOP``): the degree falls where the series has converged. The float field is :func:`stumpcheck.numerics.population.one_head_float64.loss_gradient_hessian`.

The step: on the Bernstein ellipse E_ρ of S the imaginary part of s reaches h·B/2 (B = (ρ − ρ⁻¹)/2), and
z̃ moves off the real plane by about |F|·h·B/2; the analytic continuation of ∇L has singularities at
imaginary offsets of order 1, so h = 2β/(B·max|F|) keeps that offset near a budget β (``imag_budget``),
and h ≤ ``max_step``. Nothing here needs to be right for the tube to be valid: the rigorous part bounds the
defect of whatever pieces it is given (and the jumps between them).
"""

from __future__ import annotations

import math

import numpy as np

from stumpcheck.numerics.certified.tube.chebyshev import ChebyshevPiece, chebyshev_points, fit_coefficients, s_of_x

__all__ = ["float_field", "collocation_piece", "plan_pieces", "next_step", "contraction_estimate"]


def float_field(s: float, z, jacobian: bool = False):
    """F(s, z) = −e^s ∇L(z) (or ∂F/∂z = −e^s ∇²L), float64, by the compiled one-head quadrature."""
    from stumpcheck.numerics.population.one_head_float64 import loss_gradient_hessian

    a, b = float(z[0]), float(z[1])
    if not (b >= 1e-3 and math.isfinite(a) and math.isfinite(b)):
        raise ArithmeticError(f"state outside the domain b > 0: {z}")
    _, gradient, hessian = loss_gradient_hessian(a, b, hessian=jacobian)
    return -math.exp(s) * (hessian if jacobian else gradient)


def _differentiation_matrix(m: int) -> np.ndarray:
    """Trefethen's D (Spectral Methods in MATLAB, cheb.m) for x_j = cos(jπ/m): (Dv)_i ≈ v'(x_i)."""
    x = chebyshev_points(m)
    c = np.ones(m + 1)
    c[0] = c[-1] = 2
    c *= (-1.0) ** np.arange(m + 1)
    dx = x[:, None] - x[None, :]
    d = np.outer(c, 1 / c) / (dx + np.eye(m + 1))
    return d - np.diag(d.sum(axis=1))


def _guess(s0: float, z0, s_points: np.ndarray) -> np.ndarray:
    from scipy.integrate import solve_ivp

    order = np.argsort(s_points)
    solution = solve_ivp(float_field, (s0, float(s_points.max())), np.asarray(z0, float), method="Radau",
                         rtol=1e-10, atol=1e-12, jac=lambda s, z: float_field(s, z, jacobian=True),
                         t_eval=np.sort(s_points))
    if not solution.success:
        raise ArithmeticError(f"the float64 solve failed: {solution.message}")
    values = np.empty((len(s_points), 2))
    values[order] = solution.y.T
    return values


def collocation_piece(s0: float, z0, h: float, m: int, iterations: int = 12) -> ChebyshevPiece:
    """The degree-m collocation piece on [s0, s0 + h] from z̃(s0) = z0 (float64 Newton; see the module doc)."""
    s1 = s0 + h
    x = chebyshev_points(m)
    s = s_of_x(s0, s1, x)
    s[-1] = s0
    z = _guess(s0, z0, s)
    z[-1] = z0
    d = _differentiation_matrix(m) * (2 / h)
    unknown = m  # rows 0..m-1 are unknowns, row m is the start
    for _ in range(iterations):
        residual = d @ z - np.array([float_field(sj, zj) for sj, zj in zip(s, z)])
        jac = np.zeros((2 * unknown, 2 * unknown))
        for i in range(unknown):
            block = float_field(s[i], z[i], jacobian=True)
            for k in range(unknown):
                jac[2 * i:2 * i + 2, 2 * k:2 * k + 2] = d[i, k] * np.eye(2)
            jac[2 * i:2 * i + 2, 2 * i:2 * i + 2] -= block
        step = np.linalg.solve(jac, residual[:unknown].ravel())
        z[:unknown] -= step.reshape(unknown, 2)
        if np.max(np.abs(step)) <= 1e-15 * max(1.0, np.max(np.abs(z))):
            break
    if not np.all(np.isfinite(z)):
        raise ArithmeticError("the collocation did not converge")
    ca, cb = fit_coefficients(z[:, 0]), fit_coefficients(z[:, 1])
    keep = max(_kept(ca), _kept(cb))
    return ChebyshevPiece(float(s0), float(s1), ca[:keep], cb[:keep])


#: trailing Chebyshev coefficients below this fraction of the largest non-constant one (or 64 ulp of the
#: constant one) are dropped: they are the float64 field's noise (~1e-13 of F), and on the Bernstein
#: ellipse T_k grows like ρ^k
CHOP = 1e-12


def _kept(coefficients) -> int:
    """How many leading coefficients to keep (at least 3)."""
    floor = max(CHOP * max(abs(c) for c in coefficients[1:]), 64 * 2.0 ** -52 * abs(coefficients[0]))
    keep = len(coefficients)
    while keep > 3 and abs(coefficients[keep - 1]) <= floor:
        keep -= 1
    return keep


def next_step(s0: float, z0, *, rho: float, imag_budget: float, max_step: float, s_end: float) -> float:
    """h = 2β/(B·|F|) from the float |F| at s0 and at a trial end (the larger), within (0, max_step], to s_end."""
    small = 0.5 * (rho - 1 / rho)
    speed = float(np.hypot(*float_field(s0, z0)))
    h = min(max_step, 2 * imag_budget / (small * max(speed, 1e-300)))
    if s0 + h < s_end:
        trial = _guess(s0, z0, np.array([s0 + h]))[0]
        speed = max(speed, float(np.hypot(*float_field(s0 + h, trial))))
        h = min(max_step, 2 * imag_budget / (small * max(speed, 1e-300)))
    if s_end - (s0 + h) < 0.25 * h:  # do not leave a sliver at the end
        h = s_end - s0
    return h


def contraction_estimate(s: float, z) -> float:
    """The float64 Euclidean logarithmic norm −e^s λ_min(∇²L(z)) of ∂F/∂z at (s, z) (steering only)."""
    return float(np.linalg.eigvalsh(float_field(s, z, jacobian=True)).max())


def plan_pieces(a0: float, b0: float, s_end: float, *, degree: int, rho: float, imag_budget,
                max_step: float, s_start: float = 0.0, max_pieces: int = 100_000) -> list:
    """Consecutive collocation pieces from (s_start, (a0, b0)) to s_end (each starts at the float end of the last);
    ``imag_budget`` a number or a function of the piece's start (s, z)."""
    pieces = []
    s, z = float(s_start), np.array([a0, b0], dtype=float)
    while s < s_end and len(pieces) < max_pieces:
        budget = imag_budget(s, z) if callable(imag_budget) else imag_budget
        h = next_step(s, z, rho=rho, imag_budget=budget, max_step=max_step, s_end=s_end)
        piece = collocation_piece(s, z, h, degree)
        pieces.append(piece)
        s = piece.s1
        z = np.array([_end(piece.ca), _end(piece.cb)])
    return pieces


def _end(coefficients) -> float:
    """Σ c_k (= the value at x = 1), in float64."""
    return float(math.fsum(coefficients))
