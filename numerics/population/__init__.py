"""Population quantities of the one-head model and its reflected, averaged and pooled variants
(docs/model.md §2, §3, §5): the estimator error e(θ) = θ̂∞(a, b; θ) − θ, the population loss
L(a, b) = E_θ[½ e(θ)²], its gradient ∇L and Hessian ∇²L, at any working precision (mpmath,
with two-precision evidence) and in float64. The θ-integrals run over breakpoints placed from
the model's own scales (the switch layers of width ~1/b in the bulk and ~b⁻³ at θ = 1,
docs/model.md §8), with Gauss–Legendre rules on each piece.
"""

from stumpcheck.numerics.lazy import lazy_exports

# lazily: the float64 kernel (one_head_float64) is imported by the flow without the mpmath quantities
_LAZY = {
    **dict.fromkeys(["ESTIMATORS", "check_parameters", "error", "error_gradient", "error_hessian", "loss",
                     "loss_gradient", "loss_hessian", "loss_and_gradient_float64", "Evaluation", "with_evidence",
                     "error_extrema", "loss_gradient_hessian_float64", "loss_gradient_hessian_gauss_legendre"],
                    "stumpcheck.numerics.population.quantities"),
    **dict.fromkeys(["error_float64", "error_gradient_float64", "loss_float64", "loss_gradient_float64",
                     "loss_hessian_float64"], "stumpcheck.numerics.population.broadcast"),
    **dict.fromkeys(["one_head_log_odds", "transition_point", "transition_point_float64", "breakpoints",
                     "breakpoints_split", "breakpoints_float64", "breakpoints_float64_split", "gauss_legendre_nodes",
                     "gauss_legendre_nodes_split", "legendre_rule_float64", "legendre_rule_mp",
                     "gauss_legendre_nodes_mp"], "stumpcheck.numerics.population.quadrature"),
}

__all__ = [
    "ESTIMATORS", "check_parameters", "error", "error_gradient", "error_hessian", "loss", "loss_gradient",
    "loss_hessian", "loss_and_gradient_float64", "Evaluation", "with_evidence", "error_extrema",
    "loss_gradient_hessian_float64", "loss_gradient_hessian_gauss_legendre", "one_head_log_odds",
    "transition_point", "transition_point_float64", "breakpoints", "breakpoints_split", "breakpoints_float64",
    "breakpoints_float64_split", "gauss_legendre_nodes", "gauss_legendre_nodes_split",
    "legendre_rule_float64", "legendre_rule_mp", "gauss_legendre_nodes_mp",
    "error_float64", "error_gradient_float64", "loss_float64", "loss_gradient_float64", "loss_hessian_float64",
]
__getattr__, __dir__ = lazy_exports(__name__, _LAZY)
