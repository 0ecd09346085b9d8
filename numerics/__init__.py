"""Numerical evaluation of what theory/ derives (docs/model.md): any precision, float64, rigorous balls.

One subpackage per concept, each re-exporting its public names:

* :mod:`numerics.population`: e, L, ∇L, ∇²L on the model's breakpoints, at any precision and in float64;
* :mod:`numerics.certified`: Arb enclosures, the box prover and its certificates;
* :mod:`numerics.flow`: the ODE parts, the population gradient flow to very long times, its files;
* :mod:`numerics.corpus`: corpora, L̂ and ∇L̂, gradient descent, the corpus flow, fresh contexts, sweeps.

Small shared helpers sit at the top: :mod:`numerics.precision` (working precision, decimal parsing,
``InputError``), :mod:`numerics.fits` (rate fits), :mod:`numerics.json_output`, :mod:`numerics.provenance`.
:mod:`numerics.generated` holds the code printed by theory/ (never edited by hand).

The names below are re-exported lazily, so that ``import numerics.precision`` stays light.
"""

from importlib import import_module

from numerics.precision import InputError

_LAZY = {
    "FlowSolution": "numerics.flow", "FlowStatus": "numerics.flow", "integrate_flow": "numerics.flow",
    "error": "numerics.population", "error_gradient": "numerics.population",
    "error_hessian": "numerics.population", "loss": "numerics.population",
    "loss_gradient": "numerics.population", "loss_hessian": "numerics.population",
    "loss_and_gradient_float64": "numerics.population",
}

__all__ = ["InputError", *_LAZY]


def __getattr__(name):
    if name in _LAZY:
        return getattr(import_module(_LAZY[name]), name)
    raise AttributeError(f"module 'numerics' has no attribute {name!r}")
