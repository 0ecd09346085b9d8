"""What to save: given times, every accepted step, and the final point."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

__all__ = ["SaveAt"]


@dataclass(frozen=True)
class SaveAt:
    """``ts``: times to save at (the integrator lands on each exactly);
    ``steps``: also save every accepted step; the start and end are always saved."""

    ts: tuple = ()
    steps: bool = False

    def sorted_times(self, t0: float, t1: float) -> np.ndarray:
        ts = np.unique(np.asarray(self.ts, dtype=float))
        if ts.size and (ts[0] < t0 or ts[-1] > t1):
            raise ValueError(f"save times must lie in [{t0}, {t1}]")
        return ts
