"""e(θ) over θ ∈ [0, 1] at a fixed (a, b) in float64: a θ grid that resolves the model's layers, and its plot.

The error e(θ) = θ̂∞(a, b; θ) − θ of docs/model.md §2 (and of the reflected, averaged and pooled
estimators of §5) is evaluated by the generated float64 code
(:mod:`stumpcheck.numerics.generated.population_numpy`, vectorised over θ) on :func:`profile_grid`: an
even grid, the model's breakpoints (:func:`~stumpcheck.numerics.population.quadrature.breakpoints_float64`:
the switch layers of width ~1/b in the bulk and ~b⁻³ at θ = 1) and points at distances 10^(−k/16)
(k ≤ 240) and c·b⁻ʲ from both ends, so that a layer narrower than the even grid's step is still drawn.
Evidence: sampled (float64 values on a grid; certified values are
:func:`~stumpcheck.numerics.certified.enclosures.pointwise.certified_error`'s)."""

from __future__ import annotations

import math

import numpy as np

from stumpcheck.numerics.plotting import pyplot
from stumpcheck.numerics.population.quadrature import breakpoints_float64
from stumpcheck.numerics.population.quantities import ESTIMATORS, check_parameters
from stumpcheck.numerics.precision import InputError

__all__ = ["profile_grid", "error_profile", "plot_error_profile"]

#: Most points of the even part of :func:`profile_grid` (a profile of 10⁶ points takes about a second).
MAX_POINTS = 10 ** 6


def _estimators(estimator) -> tuple:
    names = (estimator,) if isinstance(estimator, str) else tuple(estimator)
    bad = [e for e in names if not isinstance(e, str) or e not in ESTIMATORS]
    if bad or not names:
        raise InputError(f"estimator must be one of {', '.join(ESTIMATORS)} (or a list of them), got {estimator!r}")
    return names


def _float_parameters(a, b) -> tuple[float, float]:
    check_parameters(a, b)
    a, b = float(a), float(b)
    if not (math.isfinite(a) and math.isfinite(b) and b > 0):
        raise InputError(f"a and b must be finite in float64 with b > 0, got a={a}, b={b}")
    return a, b


def profile_grid(a, b, *, estimator: str = "one-head", points: int = 2001) -> np.ndarray:
    """The sorted θ grid of :func:`error_profile` on [0, 1], both ends included (see the module doc)."""
    a, b = _float_parameters(a, b)
    if isinstance(points, bool) or not isinstance(points, int) or not 2 <= points <= MAX_POINTS:
        raise InputError(f"points must be an int in [2, {MAX_POINTS}], got {points!r}")
    near = np.concatenate([np.geomspace(1e-15, 1.0, 241), [c * b ** -j for c in (0.1, 1.0, 10.0) for j in (1, 2, 3)]])
    near = near[(near > 0) & (near < 1)]
    breaks = [float(p) for e in _estimators(estimator) for p in breakpoints_float64(a, b, estimator=e)]
    grid = np.concatenate([np.linspace(0.0, 1.0, points), near, 1.0 - near, np.asarray(breaks, dtype=float)])
    return np.unique(np.clip(grid[np.isfinite(grid)], 0.0, 1.0))


def error_profile(a, b, *, estimator: str = "one-head", points: int = 2001) -> tuple[np.ndarray, np.ndarray]:
    """(θ, e(θ)): the float64 error of ``estimator`` at (a, b) on :func:`profile_grid`; a finite, b > 0."""
    from stumpcheck.numerics.generated import population_numpy

    (name,) = _estimators(estimator)
    theta = profile_grid(a, b, estimator=name, points=points)
    function = getattr(population_numpy, f"error_{name.replace('-', '_')}")
    with np.errstate(all="ignore"):
        return theta, np.asarray(function(float(a), float(b), theta), dtype=float)


def plot_error_profile(a, b, *, estimator="one-head", points: int = 2001, near_one: bool = True):
    """A matplotlib figure of e(θ) = θ̂∞(a, b; θ) − θ over θ ∈ [0, 1] at the given (a, b), float64.

    ``estimator``: a name of ``one-head``, ``reflected``, ``averaged``, ``pooled``, or a list of them (one line
    each). Left axes: e against θ on :func:`profile_grid` (``points`` even points plus the layers); with
    ``near_one`` a right axes: e against 1 − θ on a log scale, where the one-head layer of width ~b⁻³ at θ = 1
    shows. a finite, b > 0 (InputError otherwise). matplotlib's backend:
    :func:`stumpcheck.numerics.plotting.pyplot`.

        >>> from stumpcheck.api import plot_error_profile
        >>> figure = plot_error_profile(25.0, 20.0, estimator=["one-head", "pooled"])
        >>> len(figure.axes), figure.axes[0].get_legend_handles_labels()[1]
        (2, ['one-head', 'pooled'])
    """
    names = _estimators(estimator)
    a, b = _float_parameters(a, b)
    plt = pyplot()
    fig, axes = plt.subplots(1, 2 if near_one else 1, figsize=(11 if near_one else 6, 4.2), squeeze=False)
    left = axes[0, 0]
    for name in names:
        theta, error = error_profile(a, b, estimator=name, points=points)
        left.plot(theta, error, lw=1.1, label=name)
        if near_one:
            distance = 1.0 - theta
            inside = distance > 0
            axes[0, 1].semilogx(distance[inside], error[inside], lw=1.1, label=name)
    left.axhline(0.0, color="k", lw=0.6)
    left.set_xlabel("θ")
    left.set_ylabel("e(θ) = θ̂∞(a, b; θ) − θ")
    left.set_title(f"population error at a = {a:.6g}, b = {b:.6g} (float64)", fontsize=9)
    left.legend(fontsize=8)
    if near_one:
        right = axes[0, 1]
        right.axhline(0.0, color="k", lw=0.6)
        right.axvline(b ** -3, color="tab:gray", ls=":", lw=0.8, label="1 − θ = b⁻³")
        right.set_xlabel("1 − θ")
        right.set_ylabel("e(θ)")
        right.set_title("near θ = 1 (log scale in 1 − θ)", fontsize=9)
        right.legend(fontsize=8)
    for ax in axes.ravel():
        ax.grid(alpha=0.3)
    fig.tight_layout()
    return fig
