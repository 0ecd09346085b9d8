"""A lemma's one margin at a point: its SymPy expression printed to mpmath, the expression the proof encloses.

A lemma's margin is one SymPy expression (a :class:`stumpcheck.numerics.certified.proofs.margins.Margin` made by
:meth:`~stumpcheck.numerics.certified.proofs.margins.Margin.from_sympy`, in the symbols of :mod:`stumpcheck.theory.margin_quantities`).
The proof compiles it to Arb balls (:mod:`stumpcheck.theory.codegen_margins`); :class:`PointMargin` compiles the same
expression, with the same substitutions (e and its derivatives by their stable form, the coordinates by the
domain's variables: :func:`stumpcheck.theory.margin_quantities.pointwise_margin`), to one mpmath function with the
model's mpmath printer (:class:`stumpcheck.theory.codegen_mpmath.MpmathModelPrinter`, through
:func:`stumpcheck.theory.codegen.function_source`), executed next to the generated mpmath module's Λ, κ_k and softmax
helpers. The sampled search and the high-precision check call it; nothing is typed twice.

* **Pointwise margins** are evaluated at the working precision p and again at 2p, 4p, … digits until two
  successive values agree to 2⁻⁶⁰ relatively (finer than float64's 2⁻⁵³), so a margin that cancels (b·e ≈ 1
  next to a bound of size e^{−v}) is resolved without a per-lemma precision rule; at most
  :data:`MAX_DIGITS` digits, beyond which the point is reported as not evaluable (a counterexample with the
  reason, never a silent value).
* **θ-integral margins** (in L, L_a, …) take the integrals at the point: in float64 by Gauss–Legendre on the
  model's breakpoints (:func:`stumpcheck.numerics.population.quantities.loss_gradient_hessian_float64`) at the
  sampled level, by mpmath quadrature at the working precision (:mod:`stumpcheck.numerics.population.quantities`) at
  the high-precision level; the expression around them is evaluated in mpmath.

:func:`supported_taylor_orders` is the rule the Taylor form obeys (each derivative along b raises the
order of the cumulants κ_k the integrands need by one, and κ_k is generated for k ≤
:data:`stumpcheck.theory.codegen_rewrites.MAX_CUMULANT_ORDER`), checked when a lemma's margin is resolved.
"""

from __future__ import annotations

import math
from dataclasses import replace
from functools import cache

__all__ = ["PointMargin", "SympyMarginCall", "point_margin_of", "resolve_margin", "MAX_DIGITS", "AGREEMENT",
           "COMPARISON_RTOL", "supported_taylor_orders", "check_taylor_order", "python_margin_tolerance"]

#: the most digits a pointwise margin is evaluated at before the point is reported as not evaluable
MAX_DIGITS = 4000
#: relative agreement of two successive precisions at which a pointwise value is accepted (finer than float64)
AGREEMENT = 2.0 ** -60


def _printer():
    from stumpcheck.theory.codegen_mpmath import MpmathModelPrinter

    class MarginMpmathPrinter(MpmathModelPrinter):
        """The model's mpmath printer plus the functions a margin may use: |x|, sign, max, min, ζ(n)."""

        def _print_zeta(self, expr):
            return "mpmath.zeta(%s)" % self._print(expr.args[0])

        def _print_Abs(self, expr):
            return "mpmath.fabs(%s)" % self._print(expr.args[0])

        def _print_sign(self, expr):
            return "mpmath.sign(%s)" % self._print(expr.args[0])

        def _print_Max(self, expr):
            return "max(%s)" % ", ".join(self._print(x) for x in expr.args)

        def _print_Min(self, expr):
            return "min(%s)" % ", ".join(self._print(x) for x in expr.args)

    return MarginMpmathPrinter({"fully_qualified_modules": True, "strict": True})


def _unreal(expr):
    """RealAbs/RealMin (the derivative-friendly forms the compilers use) back to Abs and Min for printing."""
    import sympy as sp

    from stumpcheck.theory import margin_quantities as mq

    expr = expr.replace(lambda n: isinstance(n, mq.RealAbs), lambda n: sp.Abs(n.args[0]))
    return expr.replace(lambda n: isinstance(n, mq.RealMin), lambda n: sp.Min(*n.args))


@cache
def _compile(srepr: str, coordinates: str, variables: tuple, estimator: str, theta_integral: bool):
    """(function, integrals used): ``function(*variables[, *integrals])`` in mpmath, printed from SymPy."""
    import stumpcheck.numerics.generated.population_mpmath as generated
    from stumpcheck.numerics.certified.proofs.margins import parse_srepr
    from stumpcheck.theory import margin_quantities as mq
    from stumpcheck.theory.codegen import function_source

    expr = parse_srepr(srepr)
    names = [mq.symbol_namespace()[n] for n in variables]
    if theta_integral:
        body, _, used = mq.integral_margin(expr, coordinates, variables)
        mapping = mq.coordinate_map(coordinates, variables)
        coords = function_source("margin_coords", tuple(names), (mapping[mq.a], mapping[mq.b]), "mpmath", "(a, b)",
                                 printer=_printer())
    else:
        body, _ = mq.pointwise_margin(expr, coordinates, variables, estimator)
        used, coords = (), ""
    source = coords + function_source("margin_point", (*names, *used), _unreal(body), "mpmath", "m", printer=_printer())
    namespace = dict(vars(generated))
    exec(source, namespace)  # noqa: S102 - printed from SymPy by theory's printers
    return namespace["margin_point"], namespace.get("margin_coords"), tuple(str(q) for q in used)


class PointMargin:
    """The mpmath evaluation of a SymPy :class:`~stumpcheck.numerics.certified.proofs.margins.Margin` at points of ``variables``.

    ``PointMargin(margin, variables)`` compiles (InputError, one line, if the expression cannot be compiled);
    ``pm(**point)`` returns the margin as a float (see the module doc for the precision), ``pm.value(point,
    high_precision=True)`` the θ-integral margins with mpmath integrals.
    """

    def __init__(self, margin, variables, *, name: str = "?"):
        from stumpcheck.numerics.precision import InputError

        self.margin, self.variables, self.name = margin, tuple(sorted(variables)), name
        text = margin.source.get("sympy_srepr")
        if text is None:
            raise InputError(f"lemma {name}: its margin is Python code; a lemma's margin must be one SymPy expression "
                             "(Margin.from_sympy) for the sampled search and the proof to evaluate the same margin")
        try:
            self._function, self._coords, self.integrals = _compile(
                text, margin.coordinates, self.variables, margin.estimator, margin.theta_integral)
        except InputError:
            raise
        except Exception as exc:  # noqa: BLE001 - any expression the printers cannot take is bad input
            message = " ".join(str(exc).split())[:160]
            raise InputError(f"lemma {name}: its SymPy margin cannot be evaluated over {', '.join(self.variables)}: "
                             f"{type(exc).__name__}: {message}") from None
        self.theta_integral = margin.theta_integral

    @property
    def precision(self) -> str:
        if self.theta_integral:
            return ("SymPy margin in mpmath; θ-integrals in float64 (Gauss–Legendre), mpmath quadrature at "
                    "the high-precision level")
        return "SymPy margin in mpmath, working dps raised until two precisions agree to 2^-60"

    def __call__(self, **point) -> float:
        return float(self.value(point))

    def value(self, point, *, high_precision: bool = False):
        """The margin at ``point`` (a dict of the variables) at the current mpmath precision (see module doc)."""
        import mpmath

        missing = set(self.variables) - set(point)
        extra = set(point) - set(self.variables)
        if missing or extra:
            raise ValueError(f"the point has {', '.join(sorted(point))}; the margin takes {', '.join(self.variables)}")
        args = [mpmath.mpf(point[n]) for n in self.variables]
        if self.theta_integral:
            return self._function(*args, *self._integrals(args, high_precision))
        digits = mpmath.mp.dps
        with mpmath.workdps(digits):
            previous = self._function(*args)
        while True:
            digits *= 2
            if digits > MAX_DIGITS:
                raise ArithmeticError(f"the margin did not settle to float64 accuracy by {MAX_DIGITS} digits")
            with mpmath.workdps(digits):
                current = self._function(*args)
            if _agree(previous, current):
                return current
            previous = current

    def _integrals(self, args, high_precision: bool) -> list:
        import mpmath

        from stumpcheck.numerics.population import quantities as population

        a, b = self._coords(*args)
        estimator = self.margin.estimator
        second = any(q in ("L_aa", "L_ab", "L_bb") for q in self.integrals)
        if high_precision:
            value, gradient = population.loss(a, b, estimator=estimator), population.loss_gradient(a, b, estimator=estimator)
            hessian = population.loss_hessian(a, b, estimator=estimator) if second else None
            hessian = None if hessian is None else {"L_aa": hessian[0], "L_ab": hessian[1], "L_bb": hessian[2]}
        elif second:
            value, gradient, h = population.loss_gradient_hessian_float64(float(a), float(b), estimator=estimator)
            hessian = {"L_aa": h[0][0], "L_ab": h[0][1], "L_bb": h[1][1]}
        else:
            value, gradient = population.loss_and_gradient_float64(float(a), float(b), estimator=estimator)
            hessian = None
        named = {"L": value, "L_a": gradient[0], "L_b": gradient[1], **(hessian or {})}
        return [mpmath.mpf(named[q]) if high_precision else mpmath.mpf(float(named[q])) for q in self.integrals]


def _agree(x, y) -> bool:
    import mpmath

    if x == y:
        return True
    if not (mpmath.isfinite(x) and mpmath.isfinite(y)):
        return False
    return abs(x - y) <= AGREEMENT * max(abs(x), abs(y))


#: the cumulant order of each θ-integral's integrand (½e²: κ₁, e·e_b: κ₂, …), before any derivative
@cache
def _integrand_orders(estimator: str) -> dict:
    from stumpcheck.theory import margin_quantities as mq
    from stumpcheck.theory.special import TruncExpCumulant

    definitions = mq._pointwise_definitions(estimator)
    return {str(q): max((int(n.args[0]) for n in f.xreplace(definitions).atoms(TruncExpCumulant)), default=0)
            for q, f in mq.INTEGRANDS.items()}


def supported_taylor_orders(margin) -> range:
    """The Taylor orders n a θ-integral margin can be enclosed with: base + n ≤ MAX_CUMULANT_ORDER, base the
    highest cumulant order of the integrands it uses (L: 1, so n ≤ 3; L_b: 2, so n ≤ 2)."""
    import sympy as sp

    from stumpcheck.numerics.certified.proofs.margins import parse_srepr
    from stumpcheck.theory import margin_quantities as mq
    from stumpcheck.theory.codegen_rewrites import MAX_CUMULANT_ORDER

    expr = parse_srepr(margin.source["sympy_srepr"])
    used = [str(q) for q in mq.INTEGRALS if q in sp.sympify(expr).free_symbols]
    base = max((_integrand_orders(margin.estimator)[q] for q in used), default=1)
    return range(1, max(1, MAX_CUMULANT_ORDER - base) + 1)


def check_taylor_order(margin, name: str = "?") -> None:
    """InputError (one line) if a θ-integral margin asks for a Taylor order the generated κ_k cannot give."""
    from stumpcheck.numerics.precision import InputError

    if not margin.theta_integral or margin.taylor_order == 1 or "sympy_srepr" not in margin.source:
        return
    orders = supported_taylor_orders(margin)
    if margin.taylor_order not in orders:
        raise InputError(f"lemma {name}: taylor_order {margin.taylor_order} is not supported for this margin "
                         f"(its θ-integrals allow orders {orders.start}..{orders.stop - 1}: each order needs one "
                         f"more cumulant κ_k, generated up to k = {_max_order()})")


def _max_order() -> int:
    from stumpcheck.theory.codegen_rewrites import MAX_CUMULANT_ORDER

    return MAX_CUMULANT_ORDER


def python_margin_tolerance(symbolic_value: float) -> float:
    """How far a file's Python margin may lie from its SymPy margin at a point: :data:`COMPARISON_RTOL` of
    max(1, |m|) (margins are scale-free, of size 1; see :data:`COMPARISON_RTOL`)."""
    return COMPARISON_RTOL * max(1.0, abs(symbolic_value)) if math.isfinite(symbolic_value) else math.inf


#: Python (float64) and SymPy (mpmath, float64-exact) margins must agree to this relative tolerance on the scale
#: max(1, |m|): 2⁻²⁶, half of float64's 53 bits (a float64 margin that has lost more than half its digits is no
#: second opinion). Measured over 2000 random points of each example's domain: at most 6.1·10⁻¹⁶
#: (docs/examples/bulk_slope.py) and 5.0·10⁻¹⁶ (docs/examples/false_overshoot.py), far inside 1.5·10⁻⁸, while two
#: different formulas differ by far more (the two-margin reproducer: by 15).
COMPARISON_RTOL = 2.0 ** -26


class SympyMarginCall:
    """``Lemma.margin`` of a lemma given by its SymPy margin alone: the margin's value at a point (a float)."""

    def __init__(self, entry):
        self.entry = entry

    def __call__(self, **point) -> float:
        return self.entry.point_margin(point)(**point)


def one_margin(entry) -> None:
    """A lemma's one SymPy margin: ``sympy_margin=`` or the margin of its ``certified(margin, …)`` (given once);
    the certified spec proves that margin. A lemma with neither is Python-only: sampled-only
    (:func:`stumpcheck.lemmas.python_only_refusal`)."""
    from stumpcheck.lemmas import CertifiedSpec, SymbolicSpec

    spec = entry.certify
    proves_margin = isinstance(spec, CertifiedSpec) and not isinstance(spec, SymbolicSpec)
    if entry.sympy_margin is not None:
        # with an identity, the spec proves a rewritten margin and the identity ties it to this one
        if proves_margin and spec.margin is not None and spec.margin is not entry.sympy_margin and spec.identity is None:
            raise ValueError(f"lemma {entry.name}: give its margin once, as sympy_margin= or in certified(margin, …)")
        if proves_margin and spec.margin is None:
            object.__setattr__(entry, "certify", replace(spec, margin=entry.sympy_margin))
    elif proves_margin:
        if spec.margin is None:
            raise ValueError(f"lemma {entry.name}: certified(None, …) needs the lemma's sympy_margin=")
        object.__setattr__(entry, "sympy_margin", spec.margin)
    if entry.margin is None and entry.sympy_margin is not None:
        object.__setattr__(entry, "margin", SympyMarginCall(entry))


def resolve_margin(entry):
    """The lemma's SymPy :class:`~stumpcheck.numerics.certified.proofs.margins.Margin` (a callable ``sympy_margin`` is called),
    its Taylor order checked; None for a Python-only lemma. InputError (one line) on anything else."""
    from stumpcheck.numerics.certified.proofs.margins import Margin
    from stumpcheck.numerics.precision import InputError

    margin = entry.sympy_margin
    if margin is None:
        return None
    if not isinstance(margin, Margin) and callable(margin):
        try:
            margin = margin()
        except InputError as exc:
            raise InputError(f"lemma {entry.name}: {exc}") from None
        except Exception as exc:  # noqa: BLE001 - the user's callable: bad input, one line
            raise InputError(f"lemma {entry.name}: building its margin failed: {type(exc).__name__}: "
                             f"{' '.join(str(exc).split())[:160]}") from None
    if not isinstance(margin, Margin):
        raise InputError(f"lemma {entry.name}: its margin must be a Margin (Margin.from_sympy), got "
                         f"{type(margin).__name__}")
    if "sympy_srepr" not in margin.source:
        raise InputError(f"lemma {entry.name}: its certified margin is Python code (Margin.from_python); give it as "
                         "one SymPy expression (Margin.from_sympy), which the sampled search and the proof both "
                         "evaluate")
    _check_scalar(margin, entry.name)
    check_taylor_order(margin, entry.name)
    return margin


def _check_scalar(margin, name: str) -> None:
    """A margin is one scalar expression: no Lambda, tuple or other non-expression node (InputError, one line)."""
    import sympy as sp

    from stumpcheck.numerics.certified.proofs.margins import parse_srepr
    from stumpcheck.numerics.precision import InputError

    expr = parse_srepr(margin.source["sympy_srepr"])
    for node in sp.preorder_traversal(expr):
        if isinstance(node, sp.Lambda) or not isinstance(node, sp.Expr):
            raise InputError(f"lemma {name}: its margin must be one scalar SymPy expression in the margin symbols, "
                             f"not {type(node).__name__}(...)")


def point_margin_of(entry, variables: tuple):
    """The lemma's :class:`PointMargin` over ``variables`` (built once per lemma and variables), or None."""
    cache_ = entry.__dict__.setdefault("_point_margins", {})
    if variables not in cache_:
        margin = resolve_margin(entry)
        cache_[variables] = None if margin is None else PointMargin(margin, variables, name=entry.name)
    return cache_[variables]
