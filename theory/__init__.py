"""Symbolic core: the model, its population loss and large-scale asymptotics, derived by SymPy."""

from stumpcheck.theory.asymptotics import flow_asymptotics, loss_layer_integral, right_layer_error
from stumpcheck.theory.model import ESTIMATORS, closed_form_error, closed_form_estimate, stable_error, stable_estimate
from stumpcheck.theory.catalogue import results, summary

__all__ = ["ESTIMATORS", "closed_form_error", "closed_form_estimate", "stable_error", "stable_estimate",
           "flow_asymptotics", "loss_layer_integral", "right_layer_error", "results", "summary"]
