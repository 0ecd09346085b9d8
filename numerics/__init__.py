"""Numerical evaluation of what theory/ derives (docs/model.md): any precision, float64, rigorous balls.

One subpackage per concept, each re-exporting its public names:

* :mod:`stumpcheck.numerics.population`: e, L, ∇L, ∇²L on the model's breakpoints, at any precision and in float64;
* :mod:`stumpcheck.numerics.certified`: Arb enclosures, the box prover and its certificates;
* :mod:`stumpcheck.numerics.flow`: the ODE parts, the population gradient flow to very long times, its files;
* :mod:`stumpcheck.numerics.corpus`: corpora, L̂ and ∇L̂, gradient descent, the corpus flow, fresh contexts, sweeps.

Small shared helpers sit at the top: :mod:`stumpcheck.numerics.precision` (working precision, decimal parsing,
``InputError``), :mod:`stumpcheck.numerics.fits` (rate fits), :mod:`stumpcheck.numerics.json_output`, :mod:`stumpcheck.numerics.provenance`.
:mod:`stumpcheck.numerics.generated` holds the code printed by theory/ (never edited by hand).

The names below are re-exported lazily, so that ``import stumpcheck.numerics.precision`` stays light. The
package's compiled kernels are cached under a hash of their sources (:mod:`stumpcheck.numerics.kernel_cache`,
set up here, before any kernel module runs, without importing numba).
"""

from stumpcheck.numerics.kernel_cache import install_when_numba_loads
from stumpcheck.numerics.lazy import lazy_exports
from stumpcheck.numerics.precision import InputError

install_when_numba_loads()

_LAZY = {
    "FlowSolution": "stumpcheck.numerics.flow", "FlowStatus": "stumpcheck.numerics.flow", "integrate_flow": "stumpcheck.numerics.flow",
    "error": "stumpcheck.numerics.population", "error_gradient": "stumpcheck.numerics.population",
    "error_hessian": "stumpcheck.numerics.population", "loss": "stumpcheck.numerics.population",
    "loss_gradient": "stumpcheck.numerics.population", "loss_hessian": "stumpcheck.numerics.population",
    "loss_and_gradient_float64": "stumpcheck.numerics.population",
}

__all__ = ["InputError", *_LAZY]

__getattr__, __dir__ = lazy_exports(__name__, _LAZY)
