"""The result of one claim check (docs/model.md §7.2): what it measured, the tolerance it was held to,
PASS or FAIL, its level of evidence (``sampled``, ``high-precision`` or ``certified``), the seconds it
took and the details needed to reproduce it (seed, precision, ranges). A FAIL is a result, shown with
its numbers, not an exception.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field

from stumpcheck.numerics.display import Display, brief_text
from stumpcheck.numerics.json_output import finite_json

__all__ = ["ClaimResult"]

#: Characters of the figure and the tolerance a ClaimResult's repr and HTML table show (to_dict has all).
SHOWN = 200


@dataclass(repr=False)
class ClaimResult(Display):
    """One claim's verdict: ``status`` PASS or FAIL, its ``figure`` held to ``tolerance`` at level ``evidence``.

    Shown (:class:`~stumpcheck.numerics.display.Display`) by its id, status, evidence, seconds, statement, and
    the figure and tolerance cut to :data:`SHOWN` characters; :meth:`to_dict` is every field with the details,
    JSON-ready (:func:`~stumpcheck.claims.figures.plot_claim` draws the figures of C5–C8).
    """

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

    def to_dict(self) -> dict:
        """Every field and the details, JSON-ready (numpy values as Python ones, NaN/±inf as None)."""
        return finite_json(asdict(self))

    def _display_title(self) -> str:
        return f"ClaimResult {self.id}"

    def _display_rows(self) -> list:
        return [("status", self.status), ("evidence", self.evidence), ("seconds", f"{self.seconds:.3g}"),
                ("statement", brief_text(self.statement, SHOWN, clause=False)),
                ("figure", brief_text(self.figure, SHOWN, clause=False)),
                ("tolerance", brief_text(self.tolerance, SHOWN, clause=False))]
