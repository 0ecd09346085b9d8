"""The result of a solve: saved times and states, statistics and a status."""

from __future__ import annotations

import enum
from dataclasses import dataclass, field

import numpy as np

__all__ = ["Status", "Solution"]


class Status(enum.Enum):
    """Why the solve ended; ``message`` is what a user sees."""

    SUCCESS = "reached the final time"
    MAX_STEPS = "stopped: the step budget ran out before the final time"
    DT_MIN = "stopped: the tolerance could not be met (step size fell below dtmin)"
    NONFINITE = "stopped: the vector field was not finite"
    INTERRUPTED = "stopped: interrupted by the user"
    #: set by :func:`stumpcheck.numerics.flow.integrate.integrate_flow`, never by a solver: the solve reached the final
    #: time, but its a-posteriori error estimate is above the tolerance, or could not be computed
    ERROR_ESTIMATE_EXCEEDED = "reached the final time, but the a-posteriori error estimate exceeds the tolerance"
    CHECK_INCOMPLETE = "reached the final time, but the a-posteriori solve at rtol/10 did not (no error estimate)"

    @property
    def message(self) -> str:
        return self.value

    @property
    def ok(self) -> bool:
        return self is Status.SUCCESS


@dataclass
class Solution:
    """Saved ``ts`` (integration variable) and ``ys`` (one row per time), the
    status, and counts of accepted/rejected steps and field evaluations. What
    was computed before a failure is kept."""

    ts: np.ndarray
    ys: np.ndarray
    status: Status
    accepted: int
    rejected: int
    evaluations: int
    info: dict = field(default_factory=dict)
