"""A user's own SymPy expression as a function: float64 (numpy), any precision (mpmath), rigorous balls
(python-flint Arb), JAX (differentiable), and as LaTeX.

The expression may hold the model's functions Λ, κ_k and softmax weights
(:mod:`stumpcheck.theory.special`, e.g. anything built from
:func:`stumpcheck.theory.model.stable_error`) besides elementary functions and the constants π, e, γ
(EulerGamma), Catalan's constant, square roots and logarithms of rationals, ζ(n) and Li_s(z) (in numpy and
JAX at number arguments only, as the nearest float). It may also be a derived result as
:func:`stumpcheck.theory.catalogue.results` gives it: an equation ``lhs = rhs`` is the function of its
right-hand side, a matrix that of its entries (row by row, a tuple). Each target prints it with
the project's own printer (:func:`stumpcheck.theory.codegen.function_source`: common subexpressions
shared, log(1 − z) as log1p(−z), softmax weights from simplified differences, rates such as b − bθ as
b(1 − θ)) and runs the code next to that target's helpers, with the imports the helpers state
(:data:`stumpcheck.theory.codegen.TARGET_IMPORTS`) and nothing else:

* :func:`to_numpy`: float64, arrays broadcast, stable for all real rates (the helpers of
  :mod:`stumpcheck.theory.codegen_numpy`);
* :func:`to_mpmath`: ``dps`` correct digits, evaluated twice with guard digits raised until the two agree
  (the mpmath functions of :mod:`stumpcheck.theory.special_mpmath`);
* :func:`to_arb`: a ball containing the exact value (the rigorous helpers of
  :mod:`stumpcheck.theory.codegen_arb`; constants are Arb's own balls: ``arb.pi()``, ``arb.const_euler()``,
  ``arb(n).zeta()``, ``arb(2).sqrt()``, ``arb(2).log()``, never a float);
* :func:`to_jax`: a JAX function (``jax.grad``, ``jax.jit``, ``jax.vmap`` work through it; the helpers of
  :mod:`stumpcheck.theory.codegen_jax`; JAX is the optional extra ``stumpcheck[jax]``);
* :func:`to_latex`: ``name = rhs`` in the paper's notation (:mod:`stumpcheck.theory.paper_latex`);
* :func:`split_latex`: the same broken into lines (amsmath's ``split``), common subexpressions named.

SymPy's own tools work on these expressions too: ``expr.evalf(n)`` and
``sp.lambdify(args, expr, "numpy")`` / ``"mpmath"`` / ``"jax"`` (:mod:`stumpcheck.theory.special`). lambdify's
numpy code imports the float64 helpers from this module (``trunc_exp_log_mass_numpy``,
``trunc_exp_cumulant_numpy``, ``softmax_weight_differences_numpy``, made on first use), its JAX code the
JAX ones (``…_jax``).
"""

from __future__ import annotations

import keyword
import math
from fractions import Fraction
from decimal import Decimal
from functools import cache

import mpmath
import sympy as sp

from stumpcheck.theory.codegen import function_source, helper_namespace
from stumpcheck.theory.codegen_rewrites import factored_rates
from stumpcheck.theory.errors import InputError
from stumpcheck.theory.paper_latex import LINE_WIDTH, paper_latex, split_environment
from stumpcheck.theory.special_mpmath import (softmax_weight_differences_mpmath, trunc_exp_cumulant_mpmath,
                                              trunc_exp_log_mass_mpmath)

__all__ = ["to_numpy", "to_mpmath", "to_arb", "to_jax", "to_latex", "split_latex"]

# The package's precision range (stumpcheck.numerics.precision.MIN_DPS, MAX_DPS; a test keeps them equal).
_MIN_DPS, _MAX_DPS = 15, 10_000
_GUARD_DIGITS = 10
_MAX_GUARD_DIGITS = 640
_FUNCTION = "expression"
_RESERVED = {_FUNCTION, "analytic", "one_minus_theta"}

#: The names lambdify's numpy code imports from here, and the helpers they are.
_FLOAT64_NAMES = {"trunc_exp_log_mass_numpy": "trunc_exp_log_mass",
                  "trunc_exp_cumulant_numpy": "trunc_exp_cumulant",
                  "softmax_weight_differences_numpy": "softmax_weight_differences"}


#: The names lambdify's JAX code imports from here.
_JAX_NAMES = {f"{name}_jax": name for name in _FLOAT64_NAMES.values()}


@cache
def _float64_helpers() -> dict:
    return helper_namespace("numpy")


@cache
def _jax_helpers() -> dict:
    try:
        return helper_namespace("jax")
    except ImportError as exc:
        raise ImportError(f"to_jax needs JAX, an optional extra: pip install 'stumpcheck[jax]' ({exc})") from None


def __getattr__(name):
    if name in _FLOAT64_NAMES:
        return _float64_helpers()[_FLOAT64_NAMES[name]]
    if name in _JAX_NAMES:
        return _jax_helpers()[_JAX_NAMES[name]]
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def _expressions(expr) -> tuple[list[sp.Expr], bool]:
    """(expressions, single): one SymPy expression, or a list or tuple of them (the function returns a tuple).
    An equation gives its right-hand side, a matrix its entries row by row (a tuple)."""
    if isinstance(expr, sp.Equality):
        expr = expr.rhs
    if isinstance(expr, sp.MatrixBase):
        expr = list(expr)
    single = isinstance(expr, sp.Basic)
    items = [expr] if single else list(expr) if isinstance(expr, (list, tuple)) else None
    if not items or not all(isinstance(e, sp.Expr) and not isinstance(e, sp.MatrixBase) for e in items):
        raise InputError(f"expr must be a SymPy expression, an equation, a matrix or a list of expressions, "
                         f"got {expr!r:.80}")
    return items, single


def _arguments(args, exprs: list[sp.Expr]) -> tuple[sp.Symbol, ...]:
    """``args`` as a tuple of distinct symbols covering the expressions' free symbols."""
    symbols = (args,) if isinstance(args, sp.Symbol) else tuple(args) if isinstance(args, (list, tuple)) else None
    if symbols is None or not all(isinstance(s, sp.Symbol) for s in symbols):
        raise InputError(f"args must be a SymPy symbol or a list of them, got {args!r:.80}")
    if len(set(symbols)) != len(symbols):
        raise InputError(f"args has a symbol twice: {', '.join(str(s) for s in symbols)}")
    missing = sorted({s.name for e in exprs for s in e.free_symbols if s not in symbols})
    if missing:
        raise InputError(f"the expression has symbols that are not in args: {', '.join(missing)}")
    return symbols


def _printable(symbols: tuple[sp.Symbol, ...], exprs: list[sp.Expr], taken) -> tuple[tuple, list]:
    """Symbols whose names are not Python identifiers, or that would shadow a name of the generated code,
    replaced by ``arg0``, ``arg1``, … with the same assumptions."""
    renamed, mapping = [], {}
    for i, s in enumerate(symbols):
        name = s.name
        if not name.isidentifier() or keyword.iskeyword(name) or name.startswith("_") or name in taken:
            new = sp.Symbol(f"arg{i}", **s.assumptions0)
            while new.name in taken or any(new.name == t.name for t in symbols):
                new = sp.Symbol(f"{new.name}_", **s.assumptions0)
            mapping[s] = new
            s = new
        renamed.append(s)
    return tuple(renamed), [e.xreplace(mapping) for e in exprs]


def _compiled(exprs, single, symbols, target: str, namespace: dict, doc: str):
    """The function ``expression(*symbols)`` printed for ``target`` and defined in ``namespace``."""
    symbols, exprs = _printable(symbols, exprs, set(namespace) | _RESERVED)
    body = exprs[0] if single else tuple(exprs)
    try:
        source = function_source(_FUNCTION, symbols, body, target, doc)
    except (NotImplementedError, TypeError, ValueError) as exc:
        raise InputError(f"cannot print the expression for {target}: {exc}") from None
    exec(compile(source, f"<stumpcheck {target} expression>", "exec"), namespace)  # noqa: S102 - printed by us
    return namespace[_FUNCTION]


def to_numpy(expr, args):
    """``expr`` as a float64 function of ``args`` (numpy arrays broadcast), stable for all real rates.

    Λ and κ_k come from Taylor polynomials near 0 and forms in ``1/(exp(|β|) − 1)`` beyond, softmax weights
    from simplified differences with the largest shifted out (the generated package's own helpers), so
    nothing overflows or cancels inside them; what the expression itself cancels, float64 cancels too.

    :param expr: a SymPy expression, or a list of them (the function then returns a tuple).
    :param args: the symbols, in the order the function takes them; they must cover ``expr``'s free symbols.
    :raises InputError: for anything else, or an expression the numpy printer cannot print.

    Example::

        >>> import sympy as sp
        >>> from stumpcheck.theory import stable_error, to_numpy
        >>> from stumpcheck.theory.symbols import a, b, theta
        >>> de_db = to_numpy(sp.diff(stable_error("one-head"), b), (a, b, theta))
        >>> print(f"{de_db(10.0, 10.0, 0.3):.12f}")
        -0.009634399049
    """
    exprs, single = _expressions(expr)
    symbols = _arguments(args, exprs)
    exprs = [factored_rates(e) for e in exprs]
    return _compiled(exprs, single, symbols, "numpy", _float64_helpers().copy(),
                     "The expression in float64 (numpy), printed by stumpcheck.theory.evaluate.to_numpy.")


def _validated_dps(dps, name: str = "dps") -> int:
    if isinstance(dps, bool) or not isinstance(dps, int) or not _MIN_DPS <= dps <= _MAX_DPS:
        raise InputError(f"{name} must be an int number of decimal digits in [{_MIN_DPS}, {_MAX_DPS}], got {dps!r:.40}")
    return dps


def _mpf(value):
    """A real or complex number at the working precision; decimal strings are read at that precision."""
    if isinstance(value, bool):
        raise InputError(f"a value must be a number, got {value!r}")
    if isinstance(value, sp.Basic):
        if not value.is_number:
            raise InputError(f"a value must be a number, got {value}")
        return value._to_mpmath(mpmath.mp.prec)
    if isinstance(value, Fraction):
        return mpmath.mpf(value.numerator) / value.denominator
    if isinstance(value, Decimal):
        value = str(value)
    try:
        return mpmath.mpmathify(value)
    except (TypeError, ValueError):
        raise InputError(f"a value must be a number or a decimal string, got {value!r:.60}") from None


def _agree(first, second, dps: int) -> bool:
    return first == second or abs(first - second) <= abs(second) * mpmath.mpf(10) ** (-dps - 1)


def to_mpmath(expr, args, *, dps: int):
    """``expr`` as a function of ``args`` returning mpmath numbers with ``dps`` correct digits.

    Each call evaluates at dps + 10 and dps + 20 guard digits, doubling the guard until two results
    agree to dps + 1 digits (relative); the agreed value is returned rounded to dps digits. Values may
    be numbers (int, float, Fraction, Decimal, mpmath or SymPy numbers) or decimal strings, read at the
    working precision. The mpmath precision of the caller is left as it was.

    :param dps: decimal digits, an int in [15, 10000] (keyword only).
    :raises InputError: for bad ``expr``, ``args``, ``dps`` or values.
    :raises ArithmeticError: if the results still disagree with a guard of 640 digits (a value that is
        0 or has no dps correct digits at these arguments).

    Example::

        >>> import sympy as sp
        >>> from stumpcheck.theory import stable_error, to_mpmath
        >>> from stumpcheck.theory.symbols import a, b, theta
        >>> import mpmath
        >>> error = to_mpmath(stable_error("one-head"), (a, b, theta), dps=30)
        >>> print(mpmath.nstr(error(10, 10, "0.3"), 30))
        0.099088076633188681789440753154
    """
    exprs, single = _expressions(expr)
    symbols = _arguments(args, exprs)
    dps = _validated_dps(dps)
    namespace = {"mpmath": mpmath, "trunc_exp_log_mass": trunc_exp_log_mass_mpmath,
                 "trunc_exp_cumulant": trunc_exp_cumulant_mpmath,
                 "softmax_weight_differences": softmax_weight_differences_mpmath}
    function = _compiled([factored_rates(e) for e in exprs], False, symbols, "mpmath", namespace,
                         "The expression in mpmath, printed by stumpcheck.theory.evaluate.to_mpmath.")

    def run(values, digits):
        with mpmath.workdps(digits):
            return function(*[_mpf(v) for v in values])

    names = ", ".join(s.name for s in symbols)

    def evaluate(*values):
        if len(values) != len(symbols):
            raise InputError(f"expected {len(symbols)} values ({names}), got {len(values)}")
        guard = _GUARD_DIGITS
        previous = run(values, dps + guard)
        while True:
            guard *= 2
            current = run(values, dps + guard)
            if all(_agree(p, c, dps) for p, c in zip(previous, current)):
                break
            if guard >= _MAX_GUARD_DIGITS:
                raise ArithmeticError(f"could not confirm {dps} digits: the value changed between {dps + guard // 2} "
                                      f"and {dps + guard} working digits (it may be 0 or ill-conditioned here)")
            previous = current
        with mpmath.workdps(dps):
            rounded = tuple(+c for c in current)
        return rounded[0] if single else rounded

    evaluate.__doc__ = f"The expression at {dps} correct digits, as a function of ({names})."
    return evaluate


def _ball(value, flint):
    """An Arb ball containing ``value``: balls as they are, exact numbers exactly (then rounded outward),
    decimal strings as balls containing them."""
    if isinstance(value, (flint.arb, flint.acb)):
        return value
    if isinstance(value, bool):
        raise InputError(f"a value must be a number, got {value!r}")
    if isinstance(value, (int, float)) and math.isfinite(value):
        return flint.arb(value)
    if isinstance(value, (Fraction, sp.Rational)):
        return flint.arb(flint.fmpq(int(value.numerator), int(value.denominator)))
    if isinstance(value, (str, Decimal)):
        try:
            return flint.arb(str(value).strip())
        except ValueError:
            raise InputError(f"a value must be a decimal number, got {value!r:.60}") from None
    if isinstance(value, sp.Float):
        return flint.arb(flint.fmpq(*(int(x) for x in sp.Rational(value).as_numer_denom())))
    raise InputError(f"a value must be an arb or acb ball, a finite number or a decimal string, got {value!r:.60}")


def to_arb(expr, args, *, dps: int | None = None):
    """``expr`` as a function of ``args`` returning python-flint balls that contain the exact value.

    Values may be ``arb`` or ``acb`` balls (the value is enclosed for every point of them), exact numbers
    (int, float, Fraction, SymPy rationals) or decimal strings (a ball containing the decimal). With real
    values the function returns an ``arb``: the real part of the enclosure, whose imaginary part contains
    0 (else the value is not real there, an InputError); with an ``acb`` value it returns the ``acb``.
    A list of expressions gives a tuple.

    The Arb printer is rigorous, so it prints exact numbers and Arb's own constants only: rationals (no
    floats: write Rational), π, e, γ and Catalan's constant (``arb.pi()``, ``arb.const_e()``,
    ``arb.const_euler()``, ``arb.const_catalan()``), rational powers (√2 as ``acb(2).sqrt()``), exp and log
    (log 2 as ``acb(2).log()``), ζ(s) and ζ(s, q) (``acb.zeta``), Li_s(z) (``acb.polylog``), Λ, κ_k and softmax
    weights; no other function.

    :param dps: working precision in decimal digits, in [15, 10000] (keyword only); None: flint's own
        ``ctx.prec``. The ball's radius reflects the precision and the conditioning.
    :raises InputError: for bad ``expr``, ``args``, ``dps`` or values, or an expression Arb cannot print.

    Example::

        >>> import sympy as sp
        >>> from stumpcheck.theory import stable_error, to_arb
        >>> from stumpcheck.theory.symbols import a, b, theta
        >>> error = to_arb(stable_error("one-head"), (a, b, theta), dps=30)
        >>> print(error(10, 10, sp.Rational(3, 10)).str(20, radius=False))
        0.099088076633188681789
    """
    import flint

    exprs, single = _expressions(expr)
    symbols = _arguments(args, exprs)
    bits = None if dps is None else int(_validated_dps(dps) * math.log2(10)) + 8
    function = _compiled(exprs, False, symbols, "arb", helper_namespace("arb"),
                         "The expression in Arb balls, printed by stumpcheck.theory.evaluate.to_arb.")

    names = ", ".join(s.name for s in symbols)

    def evaluate(*values):
        if len(values) != len(symbols):
            raise InputError(f"expected {len(symbols)} values ({names}), got {len(values)}")
        prec = flint.ctx.prec if bits is None else bits
        with flint.ctx.workprec(prec):
            balls = [_ball(v, flint) for v in values]
            results = tuple(flint.acb(result) for result in function(*balls))  # a constant may print as an int
        if any(isinstance(ball, flint.acb) for ball in balls):
            return results[0] if single else results
        for result in results:
            if not result.imag.contains(0):
                raise InputError(f"the value is not real at these arguments: {result}")
        real = tuple(result.real for result in results)
        return real[0] if single else real

    evaluate.__doc__ = f"Balls containing the expression, as a function of ({names})."
    return evaluate


def to_jax(expr, args):
    """``expr`` as a JAX function of ``args``: ``jax.grad``, ``jax.jit`` and ``jax.vmap`` work through it.

    Printed by SymPy's JAX printer with the project's rewrites (as :func:`to_numpy`), Λ, κ_k and softmax
    weights as the differentiable helpers of :mod:`stumpcheck.theory.codegen_jax` (Taylor polynomial and
    large-rate form, each traced at a safe point, so no branch gives a NaN gradient). Values and gradients
    are in JAX's dtype: float32 unless ``jax_enable_x64`` is on, then as accurate as :func:`to_numpy`.
    JAX is an optional extra (``pip install 'stumpcheck[jax]'``); without it this raises ImportError.

    :param expr: as :func:`to_numpy` (an expression, an equation, a matrix or a list; a list gives a tuple).
    :param args: the symbols, in the order the function takes them.
    :raises InputError: for bad ``expr`` or ``args``, or an expression the JAX printer cannot print.

    Example::

        >>> import jax
        >>> from stumpcheck.theory import stable_error, to_jax
        >>> from stumpcheck.theory.symbols import a, b, theta
        >>> error = to_jax(stable_error("one-head"), (a, b, theta))
        >>> de_db = jax.grad(error, argnums=1)(10.0, 10.0, 0.3)    # float32 here
        >>> print(f"{float(de_db):.5f}")
        -0.00963
    """
    exprs, single = _expressions(expr)
    symbols = _arguments(args, exprs)
    namespace = _jax_helpers().copy()
    exprs = [factored_rates(e) for e in exprs]
    return _compiled(exprs, single, symbols, "jax", namespace,
                     "The expression in JAX, printed by stumpcheck.theory.evaluate.to_jax.")


def to_latex(expr, name, *, macros: bool = False) -> str:
    """``name = expr`` in LaTeX: Λ(β), κ_k(β) and softmax_j(ℓ₁, …) as docs/model.md writes them.

    :param name: the left-hand side: LaTeX text, or a SymPy expression (printed).
    :param macros: write the model's symbols as the restylable macros of the exports' ``tex/macros.tex``
        (``\\featurescore`` for b, …; :data:`stumpcheck.theory.paper_latex.MACROS`).
    :raises InputError: if ``expr`` is not a SymPy expression, ``name`` is empty or ``macros`` not a bool.

    Example::

        >>> from stumpcheck.theory import to_latex
        >>> from stumpcheck.theory.special import TruncExpCumulant
        >>> from stumpcheck.theory.symbols import b, theta
        >>> to_latex(theta * TruncExpCumulant(1, b * theta), "m")
        'm = \\\\theta \\\\kappa_{1}\\\\left(b \\\\theta\\\\right)'
    """
    if not isinstance(expr, sp.Basic):
        raise InputError(f"expr must be a SymPy expression, got {expr!r:.80}")
    if not isinstance(macros, bool):
        raise InputError(f"macros must be True or False, got {macros!r:.40}")
    if isinstance(name, sp.Basic):
        name = paper_latex(name, macros=macros)
    if not isinstance(name, str) or not name.strip():
        raise InputError(f"name must be non-empty LaTeX text or a SymPy expression, got {name!r:.40}")
    return f"{name} = {paper_latex(expr, macros=macros)}"


def split_latex(expr, name, *, macros: bool = False, width: int = LINE_WIDTH, where: bool = True) -> str:
    """``name = expr`` broken into lines for a paper: amsmath's ``split``, the body of an ``equation``.

    The expression is broken at its sums, then its products, then a function's arguments, into lines of
    at most ``width`` glyphs (66: a one-column article at 10 pt; estimated from the LaTeX, macros at their
    default bodies), aligned at ``=`` with continued lines indented; what cannot be broken further stays on
    a line of its own. With ``where`` (default), common subexpressions of at least 12 glyphs are named once,
    in rows after it (``where ℓ₁ = …``: ℓ_k a softmax weight's arguments, w_k softmax weights, ξ_k the
    rest; SymPy's ``cse``). A matrix is written entry by entry. Signs are normalised as in :func:`to_latex`
    (a sum leads with a positive term). This is what ``stumpcheck export`` writes as ``tex/NAME_split.tex``.

    :param name: the left-hand side: LaTeX text, or a SymPy expression (printed).
    :param macros: write the model's symbols as the macros of the exports' ``tex/macros.tex``.
    :param width: glyphs per line, an int ≥ 20.
    :raises InputError: for a non-SymPy ``expr``, an empty ``name``, a bad ``macros``, ``width`` or ``where``.

    Example::

        >>> from stumpcheck.theory import split_latex, stable_error
        >>> print(split_latex(stable_error("one-head"), "e(\\\\theta)", width=60))  # doctest: +ELLIPSIS
        \\begin{split}
        e(\\theta) &= \\left(1 - \\theta\\right) \\operatorname{softmax}_{2}\\left(\\ell_{1}, \\ell_{2}\\right) ...
        ...
        \\text{where } \\ell_{1} &= \\log{\\left(\\theta \\right)} + \\Lambda\\left(b \\theta\\right) \\\\
        ...
        \\end{split}
    """
    if isinstance(expr, sp.Equality):
        expr = expr.rhs
    if not isinstance(expr, (sp.Expr, sp.MatrixBase)):
        raise InputError(f"expr must be a SymPy expression or matrix, got {expr!r:.80}")
    for flag, value in (("macros", macros), ("where", where)):
        if not isinstance(value, bool):
            raise InputError(f"{flag} must be True or False, got {value!r:.40}")
    if isinstance(width, bool) or not isinstance(width, int) or width < 20:
        raise InputError(f"width must be an int number of glyphs >= 20, got {width!r:.40}")
    if isinstance(name, sp.Basic):
        name = paper_latex(name, macros=macros)
    if not isinstance(name, str) or not name.strip():
        raise InputError(f"name must be non-empty LaTeX text or a SymPy expression, got {name!r:.40}")
    return split_environment(name, expr, macros=macros, width=width, where=where)
