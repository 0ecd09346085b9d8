"""The population gradient flow dz/dt = −∇L(z), z = (a, b) (docs/model.md §4), integrated in log
time s = log(1 + t) to t ≈ 10¹² and beyond: the ODE parts in diffrax's shape (``ode``: solvers,
step-size controllers, save times, solutions), the population field with its exact Jacobian
in float64 and at D digits (``field``), the Gauss–Legendre order of the D-digit field
(``quadrature_order``), the diagnostics and fits (``diagnostics``), the run with its a-posteriori
check (``run``; ``population_flow`` re-exports these under their earlier path), and the flow's files
and plots.
"""

from stumpcheck.numerics.lazy import lazy_exports

# lazily: the float64 flow (``stumpcheck flow``) does not import the D-digit field's Arb and mpmath modules
_LAZY = {
    **dict.fromkeys(["FlowStatus", "FlowSolution", "integrate_flow"], "stumpcheck.numerics.flow.integrate"),
    "StiffnessWarning": "stumpcheck.numerics.flow.stiffness",
    **dict.fromkeys(["RHS_BACKENDS", "FIELD_GUARD_BITS", "PopulationFlowField"], "stumpcheck.numerics.flow.field"),
    "PopulationFlowFieldMP": "stumpcheck.numerics.flow.field_mp",
    **dict.fromkeys(["quadrature_order_for", "quadrature_agreement"], "stumpcheck.numerics.flow.quadrature_order"),
    **dict.fromkeys(["DEFAULT_DELTA", "sup_interior_error", "flow_fits"], "stumpcheck.numerics.flow.diagnostics"),
    **dict.fromkeys(["SOLVERS", "FlowRun", "run_population_flow", "PARALLEL_CHECK_FROM", "MIN_RTOL_FLOAT64",
                     "MAX_T_MAX", "MAX_START_A", "MAX_START_B", "check_flow_arguments"],
                    "stumpcheck.numerics.flow.run"),
    **dict.fromkeys(["write_flow_outputs", "flow_table"], "stumpcheck.numerics.flow.report"),
}

__all__ = [
    "FlowStatus", "FlowSolution", "integrate_flow", "StiffnessWarning", "DEFAULT_DELTA", "SOLVERS", "RHS_BACKENDS",
    "PopulationFlowField", "PopulationFlowFieldMP", "FlowRun", "run_population_flow", "sup_interior_error",
    "quadrature_order_for", "quadrature_agreement", "FIELD_GUARD_BITS", "PARALLEL_CHECK_FROM",
    "MIN_RTOL_FLOAT64", "MAX_T_MAX", "MAX_START_A", "MAX_START_B", "check_flow_arguments", "flow_fits",
    "write_flow_outputs", "flow_table",
]
__getattr__, __dir__ = lazy_exports(__name__, _LAZY)
