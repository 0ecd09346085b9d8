"""Step-size control on the mixed tolerance atol + rtol·|y| (RMS norm)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

__all__ = ["PIController"]


@dataclass(frozen=True)
class PIController:
    """Accept a step when ``‖error / (atol + rtol·max(|y|, |y_new|))‖_rms ≤ 1``.

    The next step is h·clip(safety·norm^{−β₁}·prev_norm^{β₂}, min_factor,
    max_factor) with β₁ = 0.7/p, β₂ = 0.4/p (a PI controller; p is the
    solver's order). ``dtmin`` is the smallest step before giving up.
    """

    rtol: float = 1e-8
    atol: float = 1e-10
    safety: float = 0.9
    min_factor: float = 0.2
    max_factor: float = 5.0
    dtmin: float = 1e-14
    h0: float = 1e-3

    def __post_init__(self):
        if not (0 < self.rtol < 1 and self.atol >= 0):
            raise ValueError(f"need 0 < rtol < 1 and atol >= 0, got rtol={self.rtol}, atol={self.atol}")

    def error_norm(self, y, y_new, error) -> float:
        scale = self.atol + self.rtol * np.maximum(np.abs(y), np.abs(y_new))
        return float(np.sqrt(np.mean((np.asarray(error) / scale) ** 2)))

    def next_step(self, h: float, norm: float, previous_norm: float, order: int) -> float:
        if norm == 0.0:
            return h * self.max_factor
        factor = self.safety * norm ** (-0.7 / order) * previous_norm ** (0.4 / order)
        return h * min(self.max_factor, max(self.min_factor, factor))
