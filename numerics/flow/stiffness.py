"""The flow is stiff: an explicit solver chosen for it warns (:class:`StiffnessWarning`).

Across the calibration relation a ≈ b + 2 log b the flow relaxes at the rate of the larger
eigenvalue of (1 + t)·∇²L in s = log(1 + t), about t·b⁻³ ≈ t^{1/4}, while b grows at rate 1/4:
the ratio grows without bound. An explicit Runge–Kutta pair (Dopri5, Bosh3) is then held to
steps of order b³/t by its stability region, not by the tolerance, and its local error
control no longer bounds the global error (measured: Bosh3 at rtol 1e-8 from (10, 10) ends
3.3e-8 relative below b(10⁶), outside the certified enclosure). The stiff solvers with the exact
Jacobian (LSODA, BDF, Radau, Rodas4, Rodas3, extrapolated linearly implicit Euler) are not limited so.
"""

from __future__ import annotations

import warnings

__all__ = ["StiffnessWarning", "is_explicit", "warn_if_explicit"]


class StiffnessWarning(RuntimeWarning):
    """An explicit solver was chosen for the stiff population flow."""


def is_explicit(solver) -> bool:
    """True for an explicit Runge–Kutta pair of :mod:`stumpcheck.numerics.flow.ode.solvers` (no Jacobian, not scipy's)."""
    from stumpcheck.numerics.flow.ode.solvers import Solver

    return isinstance(solver, Solver)


def warn_if_explicit(solver, name: str, *, stacklevel: int = 3) -> None:
    """Warn (:class:`StiffnessWarning`) when ``solver`` (called ``name``) is explicit."""
    if is_explicit(solver):
        warnings.warn(f"solver {name!r} is explicit and the population flow is stiff: its steps are limited by "
                      "stability, not accuracy, and its error control does not bound the global error; use the "
                      "default (lsoda in float64) or another stiff solver (rodas4, bdf, radau, extrapolation)",
                      StiffnessWarning, stacklevel=stacklevel)
