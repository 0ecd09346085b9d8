"""Numerical evaluation of what theory/ derives: any precision, float64, long-time flow."""

from numerics.flow import FlowSolution, FlowStatus, integrate_flow
from numerics.population import (error, error_gradient, error_hessian, loss, loss_and_gradient_float64,
                                 loss_gradient, loss_hessian)
from numerics.precision import InputError

__all__ = ["FlowSolution", "FlowStatus", "integrate_flow", "error", "error_gradient", "error_hessian",
           "loss", "loss_gradient", "loss_hessian", "loss_and_gradient_float64", "InputError"]
