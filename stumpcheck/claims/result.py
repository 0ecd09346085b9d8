"""The result of one claim check (docs/model.md §7.2): what it measured, the tolerance it was held to,
PASS or FAIL, its level of evidence (``sampled``, ``high-precision`` or ``certified``), the seconds it
took and the details needed to reproduce it (seed, precision, ranges). A FAIL is a result, shown with
its numbers, not an exception.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field

__all__ = ["ClaimResult"]


@dataclass
class ClaimResult:
    id: str
    statement: str
    figure: str
    tolerance: str
    status: str
    evidence: str
    seconds: float
    details: dict = field(default_factory=dict)

    @property
    def passed(self) -> bool:
        return self.status == "PASS"

    def as_dict(self) -> dict:
        return asdict(self)
