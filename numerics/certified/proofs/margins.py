"""Certified margins: a user's inequality m ≥ 0 compiled to Arb, enclosed over whole boxes.

A :class:`Margin` is written once, either

* as a SymPy expression (:meth:`Margin.from_sympy`) in the symbols of
  :mod:`stumpcheck.theory.margin_quantities` (a, b, theta, lam, excess, v, u, r; e and its derivatives;
  L, ∇L, ∇²L; calibration_a(b), leading_loss(b), progress_a(b), progress_b(b)), compiled with
  the printers of :mod:`stumpcheck.theory.codegen_margins` into one ball function of the domain's
  variables, together with its gradient (SymPy's derivative): nothing derived is typed by hand;
* or as a Python function over balls (:meth:`Margin.from_python`): ``func(**balls) -> arb``,
  the balls the domain's variables (``arb``), using whatever ball quantities of the toolkit it
  imports. It must return a ball containing m at every point of its argument balls.

:meth:`Margin.enclose` returns a ball containing m(p) for every p of a box. For a SymPy margin it
takes the tighter of the **direct** interval evaluation and the **mean-value** form
m(X) ⊆ m(c) + Σᵢ ∂ᵢm(X)·(Xᵢ − cᵢ) (c the box's centre; its dependency error shrinks like the
box width squared). θ-integral margins (``theta_integral=True``, in L, L_a, …) integrate over
θ ∈ [0, 1] rigorously: [0, 1] is cut into pieces Θ_k of exact width w_k and the integrand balls
q_k ⊇ {q(a, b, θ) : (a, b) ∈ box, θ ∈ Θ_k} summed, Q ∈ Σ w_k·q_k (the pieces refined where
w_k·rad(q_k) is largest, up to ``theta_pieces``); the mean-value form's centre values are
rigorous ``acb.integral`` enclosures (:mod:`stumpcheck.numerics.certified.enclosures.theta_integrals`) and its
gradient is the chain rule through ∇L and ∇²L. A θ-integral margin of ``taylor_order`` > 1 is enclosed
by its Taylor form along its one free variable (:mod:`stumpcheck.numerics.certified.proofs.margin_taylor`); when b is
free together with others (e.g. w in the ``"scaled"`` coordinates), along b, with the other free
variables as parameter balls Y in every term: for each y ∈ Y the expansion in b holds with the
coefficients K^{(j)}(c, y) and the remainder K^{(n)}(ξ, y), and each of these lies in the ball computed
with Y (the generated integrands and ``acb.integral`` enclose their values for every point of their
argument balls).
"""

from __future__ import annotations

import inspect
import textwrap
from fractions import Fraction
from functools import cache

import sympy as sp
from flint import acb, arb, ctx, fmpq

from stumpcheck.numerics.certified.enclosures.balls import ESTIMATORS
from stumpcheck.numerics.certified.proofs.margin_integrals import center_integrals, integrals_over_box
from stumpcheck.numerics.certified.proofs.margin_taylor import compile_taylor, taylor_enclosure
from stumpcheck.numerics.generated import population_arb as gen_arb
from stumpcheck.numerics.precision import InputError
from stumpcheck.theory import margin_quantities as mq
from stumpcheck.theory.codegen_margins import MARGIN_HELPERS_SOURCE, margin_function_source

__all__ = ["Margin", "fraction_ball", "interval_ball"]

#: θ-pieces per box for θ-integral margins (the default)
DEFAULT_THETA_PIECES = 96


def fraction_ball(value: Fraction) -> arb:
    """A ball containing the rational ``value`` (exact when it is dyadic)."""
    return arb(fmpq(value.numerator, value.denominator))


def interval_ball(lo: Fraction, hi: Fraction) -> arb:
    """A ball containing [lo, hi]."""
    return fraction_ball(lo) if lo == hi else fraction_ball(lo).union(fraction_ball(hi))


def _namespace() -> dict:
    namespace = dict(vars(gen_arb))
    exec(MARGIN_HELPERS_SOURCE, namespace)  # noqa: S102 - printed by stumpcheck.theory.codegen_margins
    return namespace


@cache
def _compiled(kind: str, srepr: str, coordinates: str, variables: tuple, estimator: str):
    """The ball functions of a SymPy margin over ``variables`` (cached per process)."""
    expr = parse_srepr(srepr)
    names = [mq.symbol_namespace()[n] for n in variables]
    namespace = _namespace()
    try:
        if kind == "pointwise":
            body, gradient = mq.pointwise_margin(expr, coordinates, variables, estimator)
            source = (margin_function_source("margin_value", names, (body,), "m") +
                      margin_function_source("margin_jet", names, (body, *gradient), "(m, ∇m)"))
            exec(source, namespace)  # noqa: S102 - printed from SymPy by stumpcheck.theory.codegen_margins
            return {"value": namespace["margin_value"], "jet": namespace["margin_jet"], "source": source}
        body, gradient, used = mq.integral_margin(expr, coordinates, variables)
        mapping = mq.coordinate_map(coordinates, variables)
        derivs = sorted({d for q in used for d in (mq.INTEGRAL_DERIVATIVES[q] or ())} | set(used),
                        key=lambda s: mq.INTEGRALS.index(s))
        source = margin_function_source("margin_coords", names, (mapping[mq.a], mapping[mq.b]), "(a, b)")
        source += margin_function_source("margin_value", (*names, *derivs), (body,), "M(X, Q)")
        if gradient is not None:
            source += margin_function_source("margin_gradient", (*names, *derivs), gradient, "∇M")
    except (ValueError, NotImplementedError) as exc:
        raise InputError(f"cannot compile the margin: {exc}") from None
    exec(source, namespace)  # noqa: S102
    return {"coords": namespace["margin_coords"], "value": namespace["margin_value"],
            "gradient": namespace.get("margin_gradient") if gradient is not None else None,
            "integrals": tuple(str(q) for q in derivs), "used": tuple(str(q) for q in used), "source": source}


def parse_srepr(text: str) -> sp.Expr:
    """Rebuild a margin from its ``srepr`` (SymPy's constructors and the margin symbols only; trusted text)."""
    namespace: dict = {}
    exec("from sympy import *", namespace)  # noqa: S102
    namespace.update({f.__name__: f for f in mq.RELATIONS})
    try:
        return eval(text, namespace)  # noqa: S307 - srepr of a margin: trusted certificates only
    except Exception as exc:  # noqa: BLE001 - any failure is bad input
        raise InputError(f"cannot rebuild the margin from its srepr: {exc}") from None


def _real(ball) -> arb:
    ball = acb(ball)
    return ball.real if ball.imag.is_zero() else arb.nan()


class Margin:
    """A certified margin m over a domain's variables; build with :meth:`from_sympy` or :meth:`from_python`."""

    def __init__(self, *, source: dict, coordinates: str, estimator: str = "one-head", theta_integral: bool = False,
                 name: str | None = None, function=None, theta_pieces: int = DEFAULT_THETA_PIECES,
                 taylor_order: int = 1):
        if estimator not in ESTIMATORS:
            raise InputError(f"unknown estimator {estimator!r}; expected one of {', '.join(ESTIMATORS)}")
        self.source, self.coordinates, self.estimator = source, coordinates, estimator
        self.theta_integral, self.name, self._function = bool(theta_integral), name, function
        self.theta_pieces = int(theta_pieces)
        if isinstance(taylor_order, bool) or not isinstance(taylor_order, int) or not 1 <= taylor_order <= 4:
            raise InputError(f"taylor_order must be an int in [1, 4], got {taylor_order!r}")
        if taylor_order > 1 and not theta_integral:
            raise InputError("taylor_order > 1 is for θ-integral margins (pointwise ones use the mean-value form)")
        self.taylor_order = taylor_order

    # -- construction -------------------------------------------------------------------------

    @classmethod
    def from_sympy(cls, expr, *, coordinates: str, estimator: str = "one-head", theta_integral: bool = False,
                   name: str | None = None, theta_pieces: int = DEFAULT_THETA_PIECES,
                   taylor_order: int = 1) -> "Margin":
        if isinstance(expr, str):
            try:
                expr = sp.sympify(expr, locals=mq.symbol_namespace())
            except (sp.SympifyError, SyntaxError, TypeError) as exc:
                raise InputError(f"cannot parse the margin {expr!r}: {exc}") from None
        if not isinstance(expr, sp.Expr):
            raise InputError(f"a margin must be a SymPy expression, got {expr!r}")
        return cls(source={"sympy_srepr": sp.srepr(expr)}, coordinates=coordinates, estimator=estimator,
                   theta_integral=theta_integral, name=name, theta_pieces=theta_pieces, taylor_order=taylor_order)

    @classmethod
    def from_python(cls, func, *, coordinates: str, estimator: str = "one-head", name: str | None = None,
                    source_text: str | None = None) -> "Margin":
        """``func(**balls) -> arb``; its source (module-level function) is stored for the certificate."""
        if not callable(func):
            raise InputError(f"a Python margin must be a function, got {func!r}")
        if source_text is None:
            try:
                source_text = textwrap.dedent(inspect.getsource(func))
            except (OSError, TypeError):
                raise InputError("the Python margin's source is not available (define it in a file)") from None
        return cls(source={"python_source": source_text, "function": func.__name__}, coordinates=coordinates,
                   estimator=estimator, name=name or func.__name__, function=func)

    @property
    def expr(self) -> sp.Expr | None:
        text = self.source.get("sympy_srepr")
        return None if text is None else parse_srepr(text)

    def to_json(self) -> dict:
        out = {"source": dict(self.source), "coordinates": self.coordinates, "estimator": self.estimator,
               "theta_integral": self.theta_integral, "name": self.name}
        if self.theta_integral:
            out["theta_pieces"] = self.theta_pieces
            out["taylor_order"] = self.taylor_order
        return out

    @classmethod
    def from_json(cls, data: dict) -> "Margin":
        try:
            source = dict(data["source"])
            common = {"coordinates": data["coordinates"], "estimator": data.get("estimator", "one-head"),
                      "name": data.get("name")}
        except (KeyError, TypeError):
            raise InputError("a margin's JSON needs 'source' and 'coordinates'") from None
        if "sympy_srepr" in source:
            return cls(source=source, theta_integral=bool(data.get("theta_integral", False)),
                       theta_pieces=int(data.get("theta_pieces", DEFAULT_THETA_PIECES)),
                       taylor_order=int(data.get("taylor_order", 1)), **common)
        if "python_source" in source and "function" in source:
            namespace: dict = {"__name__": "stumpcheck_margin"}
            try:
                exec(source["python_source"], namespace)  # noqa: S102 - trusted certificates only
                func = namespace[source["function"]]
            except Exception as exc:  # noqa: BLE001
                raise InputError(f"cannot rebuild the Python margin: {exc}") from None
            return cls(source=source, function=func, **common)
        raise InputError("a margin's source needs 'sympy_srepr' or 'python_source' and 'function'")

    # -- evaluation ---------------------------------------------------------------------------

    def compile(self, variables) -> dict | None:
        """The compiled ball functions for these domain variables (None for a Python margin)."""
        if "sympy_srepr" not in self.source:
            return None
        kind = "integral" if self.theta_integral else "pointwise"
        return _compiled(kind, self.source["sympy_srepr"], self.coordinates, tuple(sorted(variables)),
                         self.estimator)

    def enclose(self, box: dict, prec_bits: int) -> tuple[arb, str]:
        """A ball containing m(p) for every p of ``box`` ({name: (lo, hi)} Fractions), and its form."""
        ball, form, _ = self.enclose_with_gradient(box, prec_bits)
        return ball, form

    def enclose_with_gradient(self, box: dict, prec_bits: int):
        """(ball, form, {name: ball of ∂m/∂name over the box} or None): the gradient steers bisection."""
        names = tuple(sorted(box))
        with ctx.workprec(prec_bits):
            balls = {n: interval_ball(*box[n]) for n in names}
            if self._function is not None:
                return _real(self._function(**balls)), "direct", None
            compiled = self.compile(names)
            centre = {n: fraction_ball((box[n][0] + box[n][1]) / 2) for n in names}
            if self.theta_integral:
                return self._enclose_integral(compiled, names, balls, centre)
            jet = compiled["jet"](*(balls[n] for n in names))
            direct = _real(jet[0])
            gradient = {n: _real(g) for n, g in zip(names, jet[1:])}
            if not all(g.is_finite() for g in gradient.values()):
                return direct, "direct", None
            mid = _real(compiled["value"](*(centre[n] for n in names))[0])
            return _tighter(direct, _mean_value(mid, gradient, balls, centre)) + (gradient,)

    def enclose_fast(self, box: dict, prec_bits: int):
        """(ball, form) containing m(p) for every p of ``box`` from the Taylor form with float64 θ-integrals
        (:mod:`stumpcheck.numerics.certified.proofs.margin_taylor_fast`), or None where that does not apply or
        gives no finite ball (then :meth:`enclose_with_gradient` encloses the box in Arb)."""
        from stumpcheck.numerics.certified.proofs.margin_taylor_fast import point_enclosure_fast, taylor_enclosure_fast

        if self._function is not None or not self.theta_integral or self.taylor_order < 2:
            return None
        names = tuple(sorted(box))
        with ctx.workprec(prec_bits):
            balls = {n: interval_ball(*box[n]) for n in names}
            centre = {n: fraction_ball((box[n][0] + box[n][1]) / 2) for n in names}
            free = [n for n in names if balls[n].rad() > centre[n].rad()]
            if free and not (len(free) == 1 or "b" in free):
                return None
            along = free[0] if len(free) == 1 else ("b" if "b" in names else names[0])
            compiled = self.compile(names)
            if not free:
                remembered = getattr(self, "_midpoint", None)
                if remembered is not None and remembered[0] == {n: tuple(box[n]) for n in names}:
                    return remembered[1], f"taylor-{self.taylor_order}"
                taylor = compile_taylor(self.source["sympy_srepr"], self.coordinates, names, along,
                                        self.taylor_order, self.estimator, _namespace)
                ball = point_enclosure_fast(taylor, names, balls, self.estimator, compiled["coords"])
                return None if ball is None else (ball, f"taylor-{self.taylor_order}")
            expansion_centre = {n: centre[n] if n == along or n not in free else balls[n] for n in names}
            taylor = compile_taylor(self.source["sympy_srepr"], self.coordinates, names, along, self.taylor_order,
                                    self.estimator, _namespace)
            a_c, b_c = (_real(x) for x in compiled["coords"](*(centre[n] for n in names)))
            at_centre: list = []
            ball = taylor_enclosure_fast(taylor, names, balls, expansion_centre, along,
                                         (float(a_c.mid()), float(b_c.mid())), self.estimator, compiled["coords"],
                                         at_centre)
        if at_centre:  # the box's midpoint value, from the same integrals: a re-check asks for it next
            self._midpoint = ({n: ((box[n][0] + box[n][1]) / 2,) * 2 for n in names}, at_centre[0])
        return None if ball is None else (ball, f"taylor-{self.taylor_order}")

    def _enclose_integral(self, compiled, names, balls, centre):
        free = [n for n in names if balls[n].rad() > centre[n].rad()]
        if self.taylor_order > 1 and (len(free) <= 1 or "b" in free):
            along = free[0] if len(free) == 1 else ("b" if "b" in names else names[0])
            # other free variables enter as parameter balls: the expansion in b holds for each of their values
            expansion_centre = {n: centre[n] if n == along or n not in free else balls[n] for n in names}
            taylor = compile_taylor(self.source["sympy_srepr"], self.coordinates, names, along, self.taylor_order,
                                    self.estimator, _namespace)
            a_c, b_c = (_real(x) for x in compiled["coords"](*(centre[n] for n in names)))
            ball = taylor_enclosure(taylor, names, balls, expansion_centre, along,
                                    (float(a_c.mid()), float(b_c.mid())), self.estimator, ctx.prec, point=not free)
            if ball.is_finite():
                return ball, f"taylor-{self.taylor_order}", None
        a_ball, b_ball = (_real(x) for x in compiled["coords"](*(balls[n] for n in names)))
        integrals = integrals_over_box(a_ball, b_ball, self.estimator, compiled["integrals"], self.theta_pieces)
        args = [balls[n] for n in names] + [integrals[q] for q in compiled["integrals"]]
        direct = _real(compiled["value"](*args)[0])
        if compiled["gradient"] is None or not all(x.is_finite() for x in integrals.values()):
            return direct, "direct", None
        gradient = {n: _real(g) for n, g in zip(names, compiled["gradient"](*args))}
        if not all(g.is_finite() for g in gradient.values()):
            return direct, "direct", None
        a_c, b_c = (_real(x) for x in compiled["coords"](*(centre[n] for n in names)))
        at_centre = center_integrals(a_c, b_c, self.estimator, compiled["used"], ctx.prec)
        if at_centre is None:
            return direct, "direct", gradient
        # M depends on the used integrals only; the others are arguments of the gradient
        mid = _real(compiled["value"](*([centre[n] for n in names] +
                                        [at_centre.get(q, arb(0)) for q in compiled["integrals"]]))[0])
        return _tighter(direct, _mean_value(mid, gradient, balls, centre)) + (gradient,)


def _mean_value(mid: arb, gradient: dict, balls: dict, centre: dict) -> arb:
    total = mid
    for n, g in gradient.items():
        total += g * (balls[n] - centre[n])
    return total


def _tighter(direct: arb, mean_value: arb) -> tuple[arb, str]:
    if not mean_value.is_finite():
        return direct, "direct"
    if not direct.is_finite() or mean_value.rad() < direct.rad():
        return mean_value, "mean-value"
    return direct, "direct"
