"""The symbols a certified margin is written in, their definitions, and the coordinates of its domain.

A margin is a SymPy expression in the model's symbols and named quantities:

* coordinates: ``a``, ``b``, ``theta`` (:mod:`stumpcheck.theory.symbols`), ``lam`` (the offset from the
  calibration relation, a = calibration_a(b) + lam), ``excess`` (a − b, the λ of
  :mod:`stumpcheck.theory.symbols`, which is also accepted), ``w`` (the offset scaled by b, a = calibration_a(b) + w/b,
  so w = b·lam), ``v`` = b(1 − θ), ``u`` = bθ, ``r`` = e^{b−a};
* pointwise quantities of the chosen estimator: ``e`` = θ̂∞ − θ, ``theta_hat``, ``e_a``, ``e_b``,
  ``e_theta``, ``e_aa``, ``e_ab``, ``e_bb`` (derivatives of e);
* θ-integrals (prior Uniform[0, 1]): ``L``, ``L_a``, ``L_b``, ``L_aa``, ``L_ab``, ``L_bb``;
* derived relations as functions of b: ``calibration_a(b)``, ``leading_loss(b)``,
  ``progress_a(b)``, ``progress_b(b)`` (the two components of the progress direction), each
  expanded into the expression :func:`stumpcheck.theory.asymptotics.flow_asymptotics` derives (read from
  the exported ``derivations/json`` when present, which tests/test_export.py keeps identical to
  the derivation; derived afresh otherwise).

:func:`pointwise_margin` substitutes e and its derivatives by the stable form of
:mod:`stumpcheck.theory.loss` (sign-free rates) and the coordinates by the domain's variables, and
differentiates the result by those variables (the mean-value form's gradient). For θ-integral
margins :func:`integral_margin` keeps L, ∇L, ∇²L as symbols and returns the chain rule for the
gradient (dQ/dX = Q_a ∂a/∂X + Q_b ∂b/∂X, with Q_a, Q_b again named integrals where they exist).
"""

from __future__ import annotations

import json
from functools import cache
from pathlib import Path

import sympy as sp

from stumpcheck.theory import loss
from stumpcheck.theory.codegen_rewrites import canonical_rates
from stumpcheck.theory.symbols import a, b, lam as excess_lambda, theta, u, v, r

__all__ = ["COORDINATES", "POINTWISE", "INTEGRALS", "RELATIONS", "lam", "excess", "symbol_namespace",
           "coordinate_map", "pointwise_margin", "integral_margin", "relation_expression"]

lam = sp.Symbol("lam", real=True)
#: the scaled offset w = b·lam of the "scaled" coordinates (a = calibration_a(b) + w/b)
w = sp.Symbol("w", real=True)
excess = sp.Symbol("excess", real=True)
e, theta_hat, e_a, e_b, e_theta, e_aa, e_ab, e_bb = sp.symbols(
    "e theta_hat e_a e_b e_theta e_aa e_ab e_bb", real=True)
L = sp.Symbol("L", positive=True)
L_a, L_b, L_aa, L_ab, L_bb = sp.symbols("L_a L_b L_aa L_ab L_bb", real=True)

POINTWISE = (e, theta_hat, e_a, e_b, e_theta, e_aa, e_ab, e_bb)
INTEGRALS = (L, L_a, L_b, L_aa, L_ab, L_bb)
#: Q → (∂Q/∂a, ∂Q/∂b) among the named integrals (None: not available, no mean-value form)
INTEGRAL_DERIVATIVES = {L: (L_a, L_b), L_a: (L_aa, L_ab), L_b: (L_ab, L_bb), L_aa: None, L_ab: None, L_bb: None}
#: the integrands: Q = ∫₀¹ q dθ with q in terms of the pointwise quantities
INTEGRANDS = {L: e**2 / 2, L_a: e * e_a, L_b: e * e_b, L_aa: e_a**2 + e * e_aa, L_ab: e_a * e_b + e * e_ab,
              L_bb: e_b**2 + e * e_bb}


class calibration_a(sp.Function):  # noqa: N801 - the name users write
    """a on the calibration relation (derived: stumpcheck.theory.asymptotics.flow_asymptotics().calibration)."""
    nargs = 1


class leading_loss(sp.Function):  # noqa: N801
    """L along the calibration relation, leading terms (derived)."""
    nargs = 1


class progress_a(sp.Function):  # noqa: N801
    """−∂L/∂a along the calibration relation, leading order (derived)."""
    nargs = 1


class progress_b(sp.Function):  # noqa: N801
    """−∂L/∂b along the calibration relation, leading order (derived)."""
    nargs = 1


RELATIONS = (calibration_a, leading_loss, progress_a, progress_b)


class RealAbs(sp.Function):
    """|x| for a real x, with d|x| = sign(x)·dx (SymPy's Abs differentiates through re and im)."""
    nargs = 1

    def fdiff(self, argindex=1):
        return sp.sign(self.args[0])


class MinWeight(sp.Function):
    """λ ∈ [0, 1] with ∂min(f, g) ⊆ λ·∂f + (1 − λ)·∂g: 1 where f < g, 0 where f > g, [0, 1] where they may
    be equal (Clarke's generalized gradient of the minimum; printed as a ball)."""
    nargs = 2

    def fdiff(self, argindex=1):
        return sp.S.Zero  # piecewise constant; only used as a factor of a gradient, never differentiated twice


class RealMin(sp.Function):
    """min(f, g) of two real quantities, differentiated through :class:`MinWeight`."""
    nargs = 2

    def fdiff(self, argindex=1):
        weight = MinWeight(*self.args)
        return weight if argindex == 1 else 1 - weight


def _real_abs(expr: sp.Expr) -> sp.Expr:
    """Abs → RealAbs and Min/Max of reals → nested RealMin, whose derivatives the margin printer knows."""
    def real_min(args):
        out = args[0]
        for x in args[1:]:
            out = RealMin(out, x)
        return out

    expr = expr.replace(lambda node: isinstance(node, sp.Abs), lambda node: RealAbs(node.args[0]))
    expr = expr.replace(lambda node: isinstance(node, sp.Min), lambda node: real_min(node.args))
    return expr.replace(lambda node: isinstance(node, sp.Max), lambda node: -real_min([-x for x in node.args]))

#: coordinate system → (the variables it takes, the pointwise-only variable)
COORDINATES = {
    "abtheta": ("a", "b", "theta"),
    "calibration": ("b", "lam", "theta"),
    "scaled": ("b", "w", "theta"),
    "excess": ("b", "excess", "theta"),
    "layer": ("b", "v"),  # plus one of a, lam, excess
}


def symbol_namespace() -> dict:
    """Names → SymPy objects for parsing and for rebuilding an ``srepr`` (trusted text only)."""
    names = {"a": a, "b": b, "theta": theta, "lam": lam, "w": w, "excess": excess, "v": v, "u": u, "r": r}
    names.update({str(s): s for s in POINTWISE + INTEGRALS})
    names.update({f.__name__: f for f in RELATIONS})
    return names


def _exported(name: str):
    path = Path(__file__).resolve().parent.parent / "derivations" / "json" / f"{name}.json"
    if not path.is_file():
        return None
    namespace: dict = {}
    exec("from sympy import *", namespace)  # noqa: S102 - SymPy's constructors for our own export
    return eval(json.loads(path.read_text(encoding="utf-8"))["srepr"], namespace)  # noqa: S307


@cache
def relation_expression(name: str) -> sp.Expr:
    """The derived expression in b of ``calibration_a``, ``leading_loss``, ``progress_a`` or ``progress_b``."""
    source = {"calibration_a": "calibration", "leading_loss": "leading_loss", "progress_a": "progress_direction",
              "progress_b": "progress_direction"}[name]
    value = _exported(source)
    if value is None:
        from stumpcheck.theory.asymptotics import flow_asymptotics

        flow = flow_asymptotics()
        value = {"calibration": flow.calibration, "leading_loss": flow.leading_loss,
                 "progress_direction": sp.Tuple(*flow.progress_direction)}[source]
    if isinstance(value, sp.Eq):
        value = value.rhs
    if name == "progress_a":
        value = value[0]
    elif name == "progress_b":
        value = value[1]
    return value


def _expand_relations(expr: sp.Expr) -> sp.Expr:
    return expr.replace(lambda node: isinstance(node, RELATIONS),
                        lambda node: relation_expression(type(node).__name__).subs(b, node.args[0]))


def coordinate_map(coordinates: str, variables) -> dict:
    """(a, b, θ) and the derived coordinates as expressions in the domain's variables."""
    names = set(variables)
    X = {name: symbol_namespace()[name] for name in names}
    cal = relation_expression("calibration_a")
    B = X["b"]
    if coordinates == "abtheta":
        A, T = X.get("a"), X.get("theta")
    elif coordinates == "calibration":
        A, T = cal.subs(b, B) + X["lam"], X.get("theta")
    elif coordinates == "scaled":
        A, T = cal.subs(b, B) + X["w"] / B, X.get("theta")
    elif coordinates == "excess":
        A, T = B + X["excess"], X.get("theta")
    elif coordinates == "layer":
        T = 1 - X["v"] / B
        A = X.get("a")
        if "lam" in X:
            A = cal.subs(b, B) + X["lam"]
        elif "excess" in X:
            A = B + X["excess"]
    else:
        raise ValueError(f"unknown coordinates {coordinates!r}; expected one of {', '.join(COORDINATES)}")
    out = {a: A, b: B, theta: T}
    if A is not None:
        out[lam] = X["lam"] if "lam" in X else A - cal.subs(b, B)
        out[excess] = X["excess"] if "excess" in X else A - B
        out[excess_lambda] = out[excess]
        out[r] = sp.exp(-out[excess])
    if T is not None:
        out[v] = X["v"] if "v" in X else B * (1 - T)
        out[u] = B * T
    return out


def _substitute_coordinates(expr: sp.Expr, mapping: dict) -> sp.Expr:
    missing = [s for s in expr.free_symbols if s in mapping and mapping[s] is None]
    if missing:
        raise ValueError(f"the margin uses {', '.join(sorted(map(str, missing)))}, which the domain does not fix")
    return expr.xreplace({k: w for k, w in mapping.items() if w is not None and k in expr.free_symbols})


@cache
def _pointwise_definitions(estimator: str) -> dict:
    err = canonical_rates(loss.error(estimator))
    ea, eb, et = (sp.diff(err, p) for p in (a, b, theta))
    return {e: err, theta_hat: err + theta, e_a: ea, e_b: eb, e_theta: et, e_aa: sp.diff(ea, a),
            e_ab: sp.diff(ea, b), e_bb: sp.diff(eb, b)}


def pointwise_margin(expr: sp.Expr, coordinates: str, variables, estimator: str):
    """(m, ∇m): the margin in the domain's variables, e and its derivatives substituted, and its gradient."""
    names = [symbol_namespace()[n] for n in variables]
    definitions = _pointwise_definitions(estimator)
    body = _real_abs(_expand_relations(expr)).xreplace(
        {q: definitions[q] for q in POINTWISE if q in expr.free_symbols})
    body = _substitute_coordinates(body, coordinate_map(coordinates, variables))
    stray = body.free_symbols - set(names)
    if stray:
        raise ValueError(f"the margin has symbols {', '.join(sorted(map(str, stray)))} that are not the domain's "
                         f"variables ({', '.join(variables)}) nor model quantities")
    return body, tuple(sp.diff(body, x) for x in names)


def integral_margin(expr: sp.Expr, coordinates: str, variables):
    """(M, ∇M or None, integrals used): M in the variables and the named integrals; the gradient by the
    chain rule through a(X), b(X), or None where an integral's derivative is not a named integral."""
    names = [symbol_namespace()[n] for n in variables]
    if any(q in expr.free_symbols for q in POINTWISE):
        raise ValueError("a θ-integral margin is written in L, L_a, L_b, L_aa, L_ab, L_bb, not in pointwise e")
    mapping = coordinate_map(coordinates, variables)
    if mapping[a] is None:
        raise ValueError("a θ-integral margin needs a (or lam or excess) among the domain's variables")
    body = _substitute_coordinates(_real_abs(_expand_relations(expr)), {k: w for k, w in mapping.items() if k != theta})
    used = tuple(q for q in INTEGRALS if q in body.free_symbols)
    stray = body.free_symbols - set(names) - set(used)
    if stray:
        raise ValueError(f"the margin has symbols {', '.join(sorted(map(str, stray)))} that are not the domain's "
                         f"variables ({', '.join(variables)}) nor model quantities")
    gradient = []
    for x in names:
        total = sp.diff(body, x)
        for q in used:
            partial = sp.diff(body, q)
            if partial == 0:
                continue
            derivatives = INTEGRAL_DERIVATIVES[q]
            if derivatives is None:
                return body, None, used
            total += partial * (derivatives[0] * sp.diff(mapping[a], x) + derivatives[1] * sp.diff(mapping[b], x))
        gradient.append(total)
    return body, tuple(gradient), used


@cache
def region_field_terms() -> tuple:
    """(b³·ẇ, b(1 − 2b³ḃ)) of the population flow ż = −∇L in the region's coordinates w = b·(a − calibration_a(b)),
    as SymPy expressions in b, w and the named θ-integrals L_a, L_b:

        ẇ = b(−L_a + calibration_a′(b)·L_b) − (w/b)·L_b,  ḃ = −L_b,  calibration_a′(b) = 1 + 2/b + ρ₁/b².

    calibration_a′ is written through the relation itself (ρ₁/b = b + 2 log b − calibration_a(b)), so that a
    margin's srepr names the derived relation and no constant; SymPy checks that identity against the
    derivative of the derived relation (InputError if it fails)."""
    from stumpcheck.theory.errors import InputError

    relation = relation_expression("calibration_a")
    calibration_slope = 1 + 2 / b + (b + 2 * sp.log(b) - calibration_a(b)) / b
    if sp.simplify(calibration_slope.subs(calibration_a(b), relation) - sp.diff(relation, b)) != 0:
        raise InputError("the derived calibration relation is not b + 2 log b − ρ₁/b")
    w_dot = b * (-L_a + calibration_slope * L_b) - (w / b) * L_b
    b_dot = -L_b
    return sp.expand(b**3 * w_dot), b * (1 - 2 * b**3 * b_dot)
