"""The catalogue of derived results: name → (description in docs/model.md's words, expression, left-hand side).

This is the single list that ``stumpcheck derive`` prints and ``stumpcheck
export`` writes; every expression is computed by SymPy from the definitions in
:mod:`stumpcheck.theory.model` (nothing here is typed in). The left-hand side is
the paper's name of the result, in LaTeX written with the macros of
:data:`stumpcheck.theory.paper_latex.MACROS` (an approximation is named by its own
symbol, e.g. e_bulk, so that every export reads ``lhs = rhs``).
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache

import sympy as sp

from stumpcheck.theory import asymptotics, loss, model
from stumpcheck.theory.special import TruncExpCumulant, TruncExpLogMass
from stumpcheck.theory.symbols import a, b, beta, eps, theta

__all__ = ["Result", "NAMES", "results", "summary"]

#: the names of :func:`results`, in its order, known without deriving anything (an export checks a requested
#: name against them before the minute of derivations; :func:`results` checks that they are its names)
NAMES = ("log_mass", "cumulant_1", "cumulant_2", "estimate_closed_form",
         *(f"error_{estimator.replace('-', '_')}" for estimator in model.ESTIMATORS),
         "error_grad_a", "error_grad_b", "loss", "loss_gradient_integrand", "exact_error_layer_variables",
         "right_layer_error", "bulk_error", "left_layer_error", "interior_layer_error", "loss_layer_integral",
         "loss_expansion", "calibration", "calibration_r", "leading_loss", "progress_direction", "db_dt",
         "flow_constant_C")


@dataclass(frozen=True)
class Result:
    """One derived result: file-safe ``name``, ``description``, SymPy ``expr`` and LaTeX ``lhs`` (macros)."""

    name: str
    description: str
    expr: sp.Basic
    lhs: str


#: e(θ) of each estimator: e for the one head, e′ for the reflected one (θ̂′ of docs/model.md §5).
_ERROR_LHS = {"one-head": r"\poperror(\threshold)", "reflected": r"\poperror'(\threshold)",
              "averaged": r"\poperror_{\mathrm{avg}}(\threshold)", "pooled": r"\poperror_{\mathrm{pool}}(\threshold)"}


def _file_safe(estimator: str) -> str:
    return estimator.replace("-", "_")


@cache
def results() -> tuple[Result, ...]:
    """Every exported result, in a fixed order."""
    out = [
        Result("log_mass", "Λ(β) = log ∫₀¹ e^{−βτ} dτ, exponential form",
               sp.Eq(TruncExpLogMass(beta), TruncExpLogMass(beta).rewrite(sp.exp)), r"\logmass(\rate)"),
        Result("cumulant_1", "κ₁(β), mean of the density ∝ e^{−βτ} on [0, 1], exponential form",
               sp.Eq(TruncExpCumulant(1, beta), TruncExpCumulant(1, beta).rewrite(sp.exp)), r"\cumulant{1}(\rate)"),
        Result("cumulant_2", "κ₂(β), its variance, exponential form",
               sp.Eq(TruncExpCumulant(2, beta), TruncExpCumulant(2, beta).rewrite(sp.exp)), r"\cumulant{2}(\rate)"),
        Result("estimate_closed_form", "θ̂∞(a, b; θ) for the one-head model, closed form integrated by SymPy",
               model.closed_form_estimate("one-head"), r"\popestimate(\labelscore, \featurescore; \threshold)"),
    ]
    for estimator in model.ESTIMATORS:
        out.append(Result(f"error_{_file_safe(estimator)}",
                          f"e(θ) = θ̂∞ − θ for the {estimator} estimator, stable softmax-mixture form",
                          model.stable_error(estimator), _ERROR_LHS[estimator]))
    grad = loss.error_gradient("one-head")
    out += [
        Result("error_grad_a", "∂e/∂a (one-head), stable form", grad[0],
               r"\frac{\partial \poperror}{\partial \labelscore}"),
        Result("error_grad_b", "∂e/∂b (one-head), stable form", grad[1],
               r"\frac{\partial \poperror}{\partial \featurescore}"),
        Result("loss", "L(a, b) = ∫₀¹ ½ e(θ)² dθ (θ ~ Uniform[0, 1])",
               sp.Eq(sp.Function("L")(a, b), sp.Integral(loss.loss_integrand("one-head"), (theta, 0, 1))),
               r"\poploss(\labelscore, \featurescore)"),
        Result("loss_gradient_integrand", "e·(∂e/∂a, ∂e/∂b), the θ-integrand of ∇L (one-head)",
               sp.Matrix(loss.gradient_integrand("one-head")), r"\poperror \nabla \poperror"),
        Result("exact_error_layer_variables",
               "e(θ) exactly in v = b(1−θ), Y = e^v, r = e^{b−a}, Ω = e^{−b}",
               asymptotics.exact_error_in_layer_variables(), r"\poperror(\threshold)"),
        Result("right_layer_error", "e in the right boundary layer v = b(1−θ) = O(1), e^{−bθ} dropped; ε = 1/b",
               asymptotics.right_layer_error(), r"\poperror_{\mathrm{right}}"),
        Result("bulk_error", "e for fixed θ ∈ (0, 1), to first order in 1/Y = e^{−b(1−θ)}",
               asymptotics.bulk_error(), r"\poperror_{\mathrm{bulk}}"),
        Result("left_layer_error", "e in the left layer u = bθ = O(1): U = e^u, A = e^{−a}, e^{−b} dropped",
               asymptotics.left_layer_error(), r"\poperror_{\mathrm{left}}"),
        Result("interior_layer_error",
               "leading e in the interior layer θ = ρ + ζ/b when a = ρb + c, 0 < ρ < 1",
               asymptotics.interior_layer_error(), r"\poperror_{\mathrm{interior}}"),
        Result("loss_layer_integral",
               "I(ε, r) with 2bL = ε + I + O(b e^{−b}): exact, in polylogarithms",
               asymptotics.loss_layer_integral(), r"\layerintegral(\smallparam, \layerweight)"),
        Result("loss_expansion", "2bL expanded to O(r²) (log r kept)", asymptotics.loss_expansion(2),
               r"\bigl[2 \featurescore \poploss\bigr]_{\layerweight^{2}}"),
    ]
    flow = asymptotics.flow_asymptotics()
    out += [
        Result("calibration", "the calibration relation tracked by the flow (slow manifold)", flow.calibration,
               r"\labelscore^{*}"),
        Result("calibration_r", "r* = e^{b−a} on the slow manifold", flow.calibration_r, r"\layerweight^{*}"),
        Result("leading_loss", "L along the calibration relation", flow.leading_loss, r"\poploss^{*}"),
        Result("progress_direction", "−∇L = (−∂L/∂a, −∂L/∂b) along the calibration relation, leading order",
               sp.Matrix(flow.progress_direction), r"\bigl(-\nabla \poploss\bigr)^{*}"),
        Result("db_dt", "db/dt along the calibration relation, two orders", flow.db_dt,
               r"\Bigl(\frac{d \featurescore}{d \flowtime}\Bigr)^{*}"),
        Result("flow_constant_C", "C in b(t) ≈ (C·t)^{1/4}", flow.flow_constant_C, r"\flowconstant"),
    ]
    if tuple(r.name for r in out) != NAMES:
        raise RuntimeError("theory.catalogue.NAMES is not the names of results(): update it")
    return tuple(out)


@cache
def summary() -> dict[str, str]:
    """The keys of ``stumpcheck derive --json``: SymPy strings of the main results."""
    flow = asymptotics.flow_asymptotics()
    return {
        "calibration": sp.sstr(flow.calibration),
        "calibration_r": sp.sstr(flow.calibration_r),
        "rho1": sp.sstr(flow.rho1),
        "rho1_decimal": sp.sstr(sp.N(flow.rho1, 30)),
        "flow_constant_C": sp.sstr(flow.flow_constant_C),
        "leading_loss": sp.sstr(flow.leading_loss),
        "progress_direction": sp.sstr(sp.Matrix(flow.progress_direction).T),
        "db_dt": sp.sstr(flow.db_dt),
        "scale_law": sp.sstr(sp.Eq(sp.Symbol("b"), (flow.flow_constant_C * sp.Symbol("t", positive=True)) ** sp.Rational(1, 4))),
        "bulk_error": sp.sstr(sp.limit(asymptotics.bulk_error(), asymptotics.Y, sp.oo).subs(eps, 1 / b)),
        "bulk_error_remainder": "O(exp(-b*(1 - theta))) + O(exp(-b*theta)), both exponentially small for fixed theta",
        "right_layer_error": sp.sstr(asymptotics.right_layer_error()),
        "loss_layer_integral": sp.sstr(asymptotics.loss_layer_integral()),
        "loss_expansion": sp.sstr(asymptotics.loss_expansion(2)),
    }
