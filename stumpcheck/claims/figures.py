"""The figures of a claim's result: :func:`plot_claim` draws C5–C8 again from a :class:`ClaimResult`'s details.

The same figures that ``stumpcheck verify`` writes as PNG files (the check's ``out_dir``), drawn by the same
functions (:func:`stumpcheck.claims.c5_report.c5_figures`, :func:`stumpcheck.claims.c6_plots.c6_figures`,
:func:`stumpcheck.claims.boundary.c7_figure`, :func:`stumpcheck.claims.boundary.c8_figure`) from what the
result's ``details`` recorded, without computing anything again.
"""

from __future__ import annotations

from stumpcheck.claims.result import ClaimResult
from stumpcheck.numerics.precision import InputError

__all__ = ["plot_claim", "CLAIMS_WITH_FIGURES"]

#: The claims whose results :func:`plot_claim` draws.
CLAIMS_WITH_FIGURES = ("C5", "C6", "C7", "C8")


def plot_claim(result: ClaimResult) -> dict:
    """The figures of a claim's result, as a dict from the PNG file name ``stumpcheck verify`` writes to a
    matplotlib figure.

    C5 (:func:`~stumpcheck.claims.c5.check_c5`): ``c5_gradient_error.png`` (along, across and R against b,
    one panel per corpus size), ``c5_certified_scale.png`` (b* against m ∧ n) and ``c5_trajectory.png``;
    C6: ``c6_rates.png`` and ``c6_controls.png``; C7: ``c7_boundary.png``; C8: ``c8_symmetrized.png``. Any
    other result (C1–C4, C9, a lemma's) is an InputError. matplotlib's backend:
    :func:`stumpcheck.numerics.plotting.pyplot`.
    """
    if not isinstance(result, ClaimResult):
        raise InputError(f"plot_claim needs a ClaimResult, got {type(result).__name__}")
    details = result.details
    if result.id == "C5":
        from stumpcheck.claims.c5 import ALONG_LIMIT
        from stumpcheck.claims.c5_report import c5_figures

        return c5_figures(details["rows"], details, along_limit=ALONG_LIMIT)
    if result.id == "C6":
        from stumpcheck.claims.c6_plots import c6_figures

        rows = ("large-resolution", "mechanism")
        by_row = {row: [cell for cell in details["cells"] if cell["row"] == row] for row in rows}
        fits = {"large-resolution": {"power_mean": details["power_mean_fit"]},
                "mechanism": {"power_mean": details["mechanism_fit"]}}
        return c6_figures(by_row, fits, details["controls"], details["seed"])
    if result.id in ("C7", "C8"):
        from stumpcheck.claims.boundary import c7_figure, c8_figure

        if result.id == "C7":
            return {"c7_boundary.png": c7_figure(details)}
        return {"c8_symmetrized.png": c8_figure(details)}
    raise InputError(f"plot_claim draws the results of {', '.join(CLAIMS_WITH_FIGURES)}; {result.id} has no "
                     "figure of its own (its numbers are in result.to_dict())")
