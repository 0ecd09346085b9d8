"""Extrapolated linearly implicit Euler: a high-order stiff method with exact coefficients.

One step of dy/ds = f(s, y) from (s₀, y₀) with step h (Deuflhard 1985; Hairer & Wanner, *Solving
ODEs II*, §IV.9, the basic step of their SEULEX at a fixed order). With J = ∂f/∂y(s₀, y₀) and
f_s = ∂f/∂s(s₀, y₀), for each n_j of the step-number sequence n₁ < … < n_k take n_j linearly implicit
Euler steps of length h_j = h/n_j (the autonomised system's method, so f_s enters once per step):

    (I − h_j J) Δ_i = h_j f(s₀ + i h_j, y_i) + h_j² f_s,   y_{i+1} = y_i + Δ_i,   T_{j,1} = y_{n_j},

then extrapolate to h → 0 by Aitken–Neville (the error of T_{j,1} has an expansion in powers of h):

    T_{j,m+1} = T_{j,m} + (T_{j,m} − T_{j−1,m}) / (n_j / n_{j−m} − 1).

y₁ = T_{k,k} has order k; the error estimate T_{k,k} − T_{k,k−1} is of order k − 1 in the step (so
the controller exponent is 1/k, as for the embedded pairs). Cost of a step: one linearization and
Σ (n_j − 1) field evaluations (each sequence's first substep uses f(s₀, y₀)), and k 2×2 matrices.

Every coefficient is an exact rational (the ratios n_j/n_{j−m}), so the order conditions hold
exactly at every working precision (unlike :data:`~stumpcheck.numerics.flow.ode.rosenbrock.Rodas4`'s
16-digit coefficients). With the exact Jacobian each T_{j,1} has the stability function
(1 − z/n_j)^{−n_j}, which vanishes as z → −∞, so T_{k,k}'s does too (a fixed combination of
them): stiff components are damped in one step. On the negative real axis |R(z)| ≤ 1 for the
harmonic sequence (checked in the tests; the flow's Jacobian has real eigenvalues).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from fractions import Fraction

from stumpcheck.numerics.flow.ode.arithmetic import FLOAT64

__all__ = ["EulerExtrapolation", "Extrapolation7"]


@dataclass(frozen=True)
class EulerExtrapolation:
    """The extrapolated linearly implicit Euler method of order ``order`` (module docstring).

    ``steps``: the step-number sequence n₁ < … < n_k (k = ``order``); default the harmonic
    sequence 1, 2, …, k (the fewest evaluations per order).
    """

    order: int
    steps: tuple = ()
    needs_jacobian: bool = field(default=True, init=False)
    coefficient_digits: None = field(default=None, init=False)

    def __post_init__(self):
        if not (isinstance(self.order, int) and self.order >= 2):
            raise ValueError(f"order must be an integer >= 2, got {self.order!r}")
        steps = tuple(self.steps) or tuple(range(1, self.order + 1))
        if len(steps) != self.order or any(not (isinstance(n, int) and n >= 1) for n in steps) \
                or any(p >= q for p, q in zip(steps, steps[1:])):
            raise ValueError(f"steps must be {self.order} increasing positive integers, got {steps!r}")
        object.__setattr__(self, "steps", steps)

    @property
    def name(self) -> str:
        return f"Euler extrapolation {self.order}({self.order - 1}) (linearly implicit, {','.join(map(str, self.steps))})"

    @property
    def evaluations_per_step(self) -> int:
        """Field evaluations of one step besides the linearization at its start."""
        return sum(n - 1 for n in self.steps)

    def step(self, field, s, y, h, f0, linearization, arithmetic=FLOAT64):
        """One step: (T_kk, T_kk − T_k,k−1, None). ``linearization`` = (J, f_s) at (s, y)."""
        jac, f_s = linearization
        sc = arithmetic.scalar
        h = sc(h)
        identity = arithmetic.identity(len(y))
        table: list = []  # table[j][m] = T_{j+1, m+1}
        for j, n in enumerate(self.steps):
            h_j = h / n
            matrix = identity - h_j * jac
            forcing = (h_j * h_j) * f_s
            point = y
            for i in range(n):
                value = f0 if i == 0 else field(s + i * h_j, point)
                point = point + arithmetic.matrix_solve(matrix, h_j * value + forcing)
            row = [point]
            for m in range(1, j + 1):
                ratio = Fraction(n, self.steps[j - m]) - 1
                row.append(row[m - 1] + (row[m - 1] - table[j - 1][m - 1]) * sc(1 / ratio))
            table.append(row)
        final = table[-1]
        return final[-1], final[-1] - final[-2], None


#: Order 7 on the harmonic sequence 1, …, 7: 21 field evaluations and one linearization a step.
Extrapolation7 = EulerExtrapolation(7)
