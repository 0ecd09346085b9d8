"""The population gradient flow with its diagnostics (claims C2–C4): the names of the flow's modules.

dz/dt = −∇L(z), z = (a, b), integrated in s = log(1 + t) as dz/ds = −(1 + t)·∇L(z). The parts live
in one module each and are re-exported here under their earlier path:

* :mod:`stumpcheck.numerics.flow.field` — the field f(s, z) and its Jacobian −(1 + t)·∇²L(z), in float64 and
  at D digits (:class:`PopulationFlowField`, :class:`PopulationFlowFieldMP`);
* :mod:`stumpcheck.numerics.flow.quadrature_order` — the Gauss–Legendre order of the D-digit field by a
  two-order check (:func:`quadrature_order_for`, :func:`quadrature_agreement`);
* :mod:`stumpcheck.numerics.flow.diagnostics` — the sup interior error and the fits of b and sup|e| in t;
* :mod:`stumpcheck.numerics.flow.run` — :func:`run_population_flow` with its a-posteriori rtol/10 check
  (in a second process for long runs), its argument checks and :class:`FlowRun`.
"""

from stumpcheck.numerics.flow.diagnostics import DEFAULT_DELTA, flow_fits, sup_interior_error
from stumpcheck.numerics.flow.diagnostics import flow_fits as _fits  # noqa: F401  (the earlier private name)
from stumpcheck.numerics.flow.field import FIELD_GUARD_BITS, RHS_BACKENDS, PopulationFlowField
from stumpcheck.numerics.flow.field_mp import PopulationFlowFieldMP
from stumpcheck.numerics.flow.quadrature_order import quadrature_agreement, quadrature_order_for
from stumpcheck.numerics.flow.run import (MAX_START_A, MAX_START_B, MAX_T_MAX, MIN_RTOL_FLOAT64, PARALLEL_CHECK_FROM, SOLVERS,
                               FlowRun, check_flow_arguments, run_population_flow)

__all__ = ["DEFAULT_DELTA", "SOLVERS", "RHS_BACKENDS", "PopulationFlowField", "PopulationFlowFieldMP", "FlowRun",
           "run_population_flow", "sup_interior_error", "quadrature_order_for",
           "quadrature_agreement", "FIELD_GUARD_BITS", "PARALLEL_CHECK_FROM", "MIN_RTOL_FLOAT64", "MAX_T_MAX",
           "MAX_START_A", "MAX_START_B", "check_flow_arguments", "flow_fits"]
