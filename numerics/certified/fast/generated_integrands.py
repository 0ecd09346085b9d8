"""Generated θ-integrands (the Arb source printed from SymPy) compiled to float64 intervals, and their θ-integrals.

The Taylor forms of certified margins (:mod:`stumpcheck.theory.taylor_codegen`) print their integrands
``integrands_m(<variables>, theta, analytic)`` as straight-line Python over Arb balls. :func:`compile_integrand`
reads that source (its syntax tree, never executing it) and prints the same computation in the outward-rounded
float64 intervals of :mod:`stumpcheck.numerics.certified.fast.interval`, compiled by numba: every value is a
pair (lo, hi) and every operation the interval operation of the same name, so the result contains the
exact value of the printed expression for every point of the argument intervals (the inclusion property,
operation by operation). What it translates, and nothing else (anything else: ``None``, the caller keeps Arb):

* numbers and ``acb(n)``, and arithmetic among them only, folded exactly (Fractions) and enclosed by the two
  doubles around them; ``_zeta(3)`` and ``_pi()`` as Arb enclosures widened by one step each way;
* ``+ − * /``, unary minus, ``x**n`` for an integer n (even powers as ranges of squares; negative n as
  the reciprocal); ``_log(x, analytic)`` (libm log, widened);
* ``trunc_exp_jet(b*theta, k, analytic)`` and ``trunc_exp_jet(b*one_minus_theta, k, analytic)``: Λ and
  κ₁ … κ_k over the rate range (:func:`~stumpcheck.numerics.certified.fast.truncated_exponential.truncated_exponential_jet`;
  its argument ≥ 0 on the domain b > 0, θ ∈ [0, 1], which is why only these two arguments are accepted);
* ``softmax_weight_factored(i, (theta, one_minus_theta), (m₀, m₁))``: t_j = F_j e^{m_j − m_top}, top the
  larger midpoint, and the weight t_i/(t_i + t_other) enclosed from the ends of the t's (it increases in
  t_i and decreases in the other; the factors θ, 1 − θ ≥ 0 are clamped at 0), as the Arb helper does;
* ``one_minus_theta = 1 - theta`` is replaced by the caller's u-interval (so that θ near 1 is given by
  u = 1 − θ at full relative precision, as in :mod:`~stumpcheck.numerics.certified.fast.theta_integrals`).

:func:`first_order_integrals` then encloses ∫₀¹ q dθ for every point of the variables' intervals by the
first-order sum Σ_k [h_k]·q(V, Θ_k) over a tiling of [0, ½] in θ and of [0, ½] in u by doubles (any tiling is
valid; the model's breakpoints make it tight), as ``method="first-order"`` of the θ-integrals module does.

Domain: the one-head integrands of the Taylor forms (b > 0 among the variables); precision: float64
intervals (a first-order sum: relative width about 1/``subdivisions``); assumptions
:data:`stumpcheck.numerics.certified.fast.rounding.ASSUMPTIONS`.
"""

from __future__ import annotations

import ast
import hashlib
import importlib.util
import math
import os
import sys
from fractions import Fraction
from pathlib import Path

import numba
import numpy as np

from stumpcheck.numerics.certified.fast import interval as _interval
from stumpcheck.numerics.certified.fast.cumulants import _enclose
from stumpcheck.numerics.certified.fast.rounding import down, up
from stumpcheck.numerics.certified.fast.truncated_exponential import truncated_exponential_jet

__all__ = ["compile_integrand", "first_order_integrals", "Unsupported"]

_JIT = dict(fastmath=False, error_model="numpy")
_E_FAR = 2.0 ** -865
_TINY = 2.0 ** -1000
_SCALE = 2.0 ** 400
_SCALE_BELOW = 2.0 ** -400
_TINY_SCALED = 2.0 ** -600
_INLINE = dict(cache=True, **_JIT)  # not inlined at numba level: the kernels compile fast


class Unsupported(ValueError):
    """The generated source uses something the translation does not cover (the caller keeps Arb)."""


# -- pair operations (an interval as a 2-tuple), inlined into the translated kernels --------------------

@numba.njit(**_INLINE)
def p_add(x, y):
    return _interval.add(x[0], x[1], y[0], y[1])


@numba.njit(**_INLINE)
def p_sub(x, y):
    return _interval.sub(x[0], x[1], y[0], y[1])


@numba.njit(**_INLINE)
def p_mul(x, y):
    """x·y; a product below 2⁻¹⁰⁰⁰ in modulus is enclosed as [−2⁻¹⁰⁰⁰, 2⁻¹⁰⁰⁰] (or [0, 2⁻¹⁰⁰⁰] for
    non-negative factors) without computing it: subnormal arithmetic costs ~100 cycles an operation."""
    xm = max(abs(x[0]), abs(x[1]))
    ym = max(abs(y[0]), abs(y[1]))
    if (xm < _SCALE_BELOW and (xm * _SCALE) * ym < _TINY_SCALED) or (
            ym < _SCALE_BELOW and (ym * _SCALE) * xm < _TINY_SCALED):
        if x[0] >= 0.0 and y[0] >= 0.0:
            return 0.0, _TINY
        return -_TINY, _TINY
    return _interval.mul(x[0], x[1], y[0], y[1])


@numba.njit(**_INLINE)
def p_div(x, y):
    return _interval.div(x[0], x[1], y[0], y[1])


@numba.njit(**_INLINE)
def p_neg(x):
    return -x[1], -x[0]


@numba.njit(**_INLINE)
def p_log(x):
    return _interval.log(x[0], x[1])


@numba.njit(cache=True, **_JIT)
def p_pow(x, n):
    """x**n for an integer n (the range for even n)."""
    m = abs(n)
    if m == 0:
        r = (1.0, 1.0)
    elif m % 2 == 0:
        base = _interval.sqr(x[0], x[1])
        r = base
        for _ in range(m // 2 - 1):
            r = _interval.mul_pos(r[0], r[1], base[0], base[1])
    else:
        r = (x[0], x[1])
        if m > 1:
            base = _interval.sqr(x[0], x[1])
            for _ in range((m - 1) // 2):
                r = _interval.mul(r[0], r[1], base[0], base[1])
    if n < 0:
        r = _interval.recip(r[0], r[1])
    return r


@numba.njit(cache=True, **_JIT)
def p_jet(beta, order):
    """(Λ, κ₁, …, κ₄) as pairs over the rate interval ``beta`` (κ beyond ``order``: the whole line)."""
    j = truncated_exponential_jet(beta[0], beta[1], order)
    return (j[0], j[1]), (j[2], j[3]), (j[4], j[5]), (j[6], j[7]), (j[8], j[9])


@numba.njit(cache=True, **_JIT)
def _small_exp(d):
    """e^[d], as [0, 2⁻⁸⁶⁵] when d ≤ −600 (e^{−600} < 2⁻⁸⁶⁵: no subnormal arithmetic)."""
    if d[1] <= -600.0:
        return 0.0, _E_FAR
    return _interval.exp(d[0], d[1])


@numba.njit(cache=True, **_JIT)
def p_softmax2(index, f0, f1, m0, m1):
    """F_index e^{m_index}/(F₀e^{m₀} + F₁e^{m₁}) for factors F ≥ 0 (module docstring); within [0, 1]."""
    top = 0 if 0.5 * m0[0] + 0.5 * m0[1] >= 0.5 * m1[0] + 0.5 * m1[1] else 1
    if top == 0:
        d = _interval.sub(m1[0], m1[1], m0[0], m0[1])
        e = _small_exp(d)
        t0 = (max(f0[0], 0.0), f0[1])
        t1 = _interval.mul_pos(max(f1[0], 0.0), f1[1], e[0], e[1])
    else:
        d = _interval.sub(m0[0], m0[1], m1[0], m1[1])
        e = _small_exp(d)
        t1 = (max(f1[0], 0.0), f1[1])
        t0 = _interval.mul_pos(max(f0[0], 0.0), f0[1], e[0], e[1])
    mine, other = (t0, t1) if index == 0 else (t1, t0)
    low, high = max(mine[0], 0.0), mine[1]
    rest_low, rest_high = max(other[0], 0.0), other[1]
    if not (high >= 0.0 and rest_high >= 0.0):
        return 0.0, 1.0
    den = up(low + rest_high)
    smallest = 0.0 if not (den > 0.0 and den < math.inf) else max(down(low / den), 0.0)
    den = down(high + rest_low)
    largest = 1.0 if not (den > 0.0 and high < math.inf) else min(up(high / den), 1.0)
    if not (smallest <= largest):
        return 0.0, 1.0
    return smallest, largest


# -- the translation ---------------------------------------------------------------------------------

def _arb_constant(name: str) -> tuple[float, float]:
    from flint import arb, ctx

    with ctx.workprec(200):
        ball = arb.zeta(arb(3)) if name == "_zeta" else arb.pi()
        lo, hi = float(ball.lower()), float(ball.upper())
    return math.nextafter(lo, -math.inf), math.nextafter(hi, math.inf)


class _Translator:
    def __init__(self, variables, theta_name="theta"):
        self.variables = tuple(variables)
        self.lines: list[str] = []
        self.temp = 0

    def constant(self, node) -> Fraction | None:
        """The exact value of a constant subexpression, or None."""
        if isinstance(node, ast.Constant) and isinstance(node.value, (int, float)) and not isinstance(node.value, bool):
            return Fraction(node.value)
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "acb" and len(node.args) == 1:
            return self.constant(node.args[0])
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.USub, ast.UAdd)):
            value = self.constant(node.operand)
            return None if value is None else (-value if isinstance(node.op, ast.USub) else value)
        if isinstance(node, ast.BinOp) and isinstance(node.op, (ast.Add, ast.Sub, ast.Mult, ast.Div)):
            left, right = self.constant(node.left), self.constant(node.right)
            if left is None or right is None:
                return None
            if isinstance(node.op, ast.Add):
                return left + right
            if isinstance(node.op, ast.Sub):
                return left - right
            if isinstance(node.op, ast.Mult):
                return left * right
            return None if right == 0 else left / right
        return None

    def expr(self, node) -> str:
        value = self.constant(node)
        if value is not None:
            lo, hi = _enclose(value)
            return f"({lo!r}, {hi!r})"
        if isinstance(node, ast.Name):
            if node.id == "analytic":
                raise Unsupported("analytic used as a value")
            return node.id
        if isinstance(node, ast.BinOp):
            if isinstance(node.op, ast.Pow):
                power = self.constant(node.right)
                if power is None or power.denominator != 1 or abs(power) > 64:
                    raise Unsupported("a power that is not a small integer")
                return f"p_pow({self.expr(node.left)}, {int(power)})"
            ops = {ast.Add: "p_add", ast.Sub: "p_sub", ast.Mult: "p_mul", ast.Div: "p_div"}
            name = ops.get(type(node.op))
            if name is None:
                raise Unsupported(f"operator {type(node.op).__name__}")
            return f"{name}({self.expr(node.left)}, {self.expr(node.right)})"
        if isinstance(node, ast.UnaryOp):
            if isinstance(node.op, ast.USub):
                return f"p_neg({self.expr(node.operand)})"
            if isinstance(node.op, ast.UAdd):
                return self.expr(node.operand)
            raise Unsupported("unary operator")
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name):
            return self.call(node.func.id, node)
        raise Unsupported(f"expression {type(node).__name__}")

    def call(self, name: str, node) -> str:
        args = node.args
        if node.keywords:
            raise Unsupported("keyword arguments")
        if name == "acb" and len(args) == 1:
            return self.expr(args[0])
        if name in ("_zeta", "_pi"):
            if name == "_zeta" and not (len(args) == 1 and self.constant(args[0]) == 3):
                raise Unsupported("zeta other than zeta(3)")
            if name == "_pi" and args:
                raise Unsupported("_pi with arguments")
            lo, hi = _arb_constant(name)
            return f"({lo!r}, {hi!r})"
        if name == "_log" and len(args) in (1, 2):
            return f"p_log({self.expr(args[0])})"
        if name == "softmax_weight_factored" and len(args) == 3:
            index = self.constant(args[0])
            factors, exponents = args[1], args[2]
            if (index not in (0, 1) or not isinstance(factors, ast.Tuple) or not isinstance(exponents, ast.Tuple)
                    or [getattr(f, "id", None) for f in factors.elts] != ["theta", "one_minus_theta"]
                    or len(exponents.elts) != 2):
                raise Unsupported("softmax_weight_factored other than over (theta, one_minus_theta)")
            return (f"p_softmax2({int(index)}, theta, one_minus_theta, {self.expr(exponents.elts[0])}, "
                    f"{self.expr(exponents.elts[1])})")
        raise Unsupported(f"function {name}")

    def statement(self, node) -> None:
        if isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant):
            return  # the docstring
        if isinstance(node, ast.Return):
            values = node.value.elts if isinstance(node.value, ast.Tuple) else [node.value]
            self.lines.append("    return (" + ", ".join(self.expr(v) for v in values) + ",)")
            self.outputs = len(values)
            return
        if not (isinstance(node, ast.Assign) and len(node.targets) == 1):
            raise Unsupported(f"statement {type(node).__name__}")
        target, value = node.targets[0], node.value
        if isinstance(target, ast.Tuple):
            if isinstance(value, ast.Tuple) and all(isinstance(v, ast.Call) and getattr(v.func, "id", "") == "acb"
                                                   for v in value.elts):
                names = [t.id for t in target.elts]
                if sorted(names) != sorted((*self.variables, "theta")):
                    raise Unsupported("the argument coercion does not name the arguments")
                return
            if isinstance(value, ast.Call) and getattr(value.func, "id", "") == "trunc_exp_jet":
                self.jet(target, value)
                return
            raise Unsupported("tuple assignment")
        if not isinstance(target, ast.Name):
            raise Unsupported("assignment target")
        if target.id == "one_minus_theta":
            if ast.dump(value) != ast.dump(ast.parse("1 - theta", mode="eval").body):
                raise Unsupported("one_minus_theta is not 1 - theta")
            return
        if target.id in (*self.variables, "theta"):
            raise Unsupported("an argument is reassigned")
        self.lines.append(f"    {target.id} = {self.expr(value)}")

    def jet(self, target, call) -> None:
        args = call.args
        if len(args) not in (2, 3):
            raise Unsupported("trunc_exp_jet arguments")
        rate, order = args[0], self.constant(args[1])
        names = sorted(getattr(x, "id", "") for x in (rate.left, rate.right)) if isinstance(rate, ast.BinOp) else []
        if not (isinstance(rate, ast.BinOp) and isinstance(rate.op, ast.Mult) and "b" in self.variables
                and names in (["b", "theta"], ["b", "one_minus_theta"])):
            raise Unsupported("trunc_exp_jet of a rate other than b*theta or b*one_minus_theta")
        if order is None or order.denominator != 1 or not 0 <= order <= 4 or len(target.elts) != order + 1:
            raise Unsupported("trunc_exp_jet order")
        self.temp += 1
        holder = f"_jet{self.temp}"
        self.lines.append(f"    {holder} = p_jet({self.expr(rate)}, {int(order)})")
        for k, t in enumerate(target.elts):
            self.lines.append(f"    {t.id} = {holder}[{k}]")


_DRIVER = '''
@numba.njit(fastmath=False, error_model="numpy")
def _ends(points_a, points_b, k):
    n_a = points_a.size - 1
    if k < n_a:
        return points_a[k], points_a[k + 1], 0
    return points_b[k - n_a], points_b[k - n_a + 1], 1


@numba.njit(fastmath=False, error_model="numpy")
def _piece(v, p0, p1, half, subdivisions, out, j0):
    step = (p1 - p0) / subdivisions
    x0 = p0
    for k in range(subdivisions):
        x1 = p1 if k == subdivisions - 1 else min(max(p0 + (k + 1) * step, x0), p1)
        if half == 0:
            tlo, thi = x0, x1
            ulo, uhi = one_minus(x0, x1)
        else:
            ulo, uhi = x0, x1
            tlo, thi = one_minus(x0, x1)
        hlo = max(down(x1 - x0), 0.0)
        hhi = up(x1 - x0)
        r = kernel(v, max(tlo, 0.0), min(thi, 1.0), max(ulo, 0.0), min(uhi, 1.0))
        for j in range(OUTPUTS):
            q = mul(r[j][0], r[j][1], hlo, hhi)
            out[j0 + j, 0], out[j0 + j, 1] = add(out[j0 + j, 0], out[j0 + j, 1], q[0], q[1])
        x0 = x1


@numba.njit(fastmath=False, error_model="numpy")
def integrate(v, theta_points, rest_points, goal, max_subdivisions):
    count = theta_points.size + rest_points.size - 2
    wide = np.zeros((count * OUTPUTS, 2))
    point = np.zeros((count, OUTPUTS))
    for k in range(count):
        p0, p1, half = _ends(theta_points, rest_points, k)
        _piece(v, p0, p1, half, 1, wide, k * OUTPUTS)
        m = 0.5 * p0 + 0.5 * p1
        mlo, mhi = one_minus(m, m)
        if half == 0:
            r = kernel(v, m, m, max(mlo, 0.0), min(mhi, 1.0))
        else:
            r = kernel(v, max(mlo, 0.0), min(mhi, 1.0), m, m)
        h = up(p1 - p0)
        for j in range(OUTPUTS):
            point[k, j] = up((r[j][1] - r[j][0]) * h)
    total = np.zeros((OUTPUTS, 2))
    budget = np.zeros(OUTPUTS)
    for k in range(count):
        for j in range(OUTPUTS):
            total[j, 0] += wide[k * OUTPUTS + j, 0]
            total[j, 1] += wide[k * OUTPUTS + j, 1]
            budget[j] += point[k, j]
    for j in range(OUTPUTS):
        budget[j] = max(budget[j], goal * max(abs(total[j, 0]), abs(total[j, 1])), 1e-300)
    out = np.zeros((OUTPUTS, 2))
    evaluations = 2 * count
    for k in range(count):
        p0, p1, half = _ends(theta_points, rest_points, k)
        need = 1.0
        for j in range(OUTPUTS):
            excess = (wide[k * OUTPUTS + j, 1] - wide[k * OUTPUTS + j, 0]) - point[k, j]
            if not (excess <= 1e300):
                need = max_subdivisions
            else:
                need = max(need, math.ceil(excess * count / budget[j]))
        subdivisions = int(min(need, max_subdivisions))
        if subdivisions <= 1:
            for j in range(OUTPUTS):
                out[j, 0], out[j, 1] = add(out[j, 0], out[j, 1], wide[k * OUTPUTS + j, 0], wide[k * OUTPUTS + j, 1])
        else:
            _piece(v, p0, p1, half, subdivisions, out, 0)
            evaluations += subdivisions
    return out, evaluations
'''


def translate(source: str, function: str, variables) -> tuple[str, int]:
    """(numba source defining ``kernel`` and ``integrate``, number of outputs); Unsupported if not translatable."""
    try:
        tree = ast.parse(source)
    except SyntaxError as exc:
        raise Unsupported(f"unparsable source: {exc}") from None
    found = [n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name == function]
    if len(found) != 1:
        raise Unsupported(f"no function {function}")
    node = found[0]
    arguments = [a.arg for a in node.args.args]
    if arguments[:len(variables)] != list(variables) or arguments[len(variables):] not in (["theta", "analytic"],
                                                                                          ["theta"]):
        raise Unsupported("the function's arguments are not (variables..., theta, analytic)")
    translator = _Translator(variables)
    head = ["@numba.njit(fastmath=False, error_model='numpy')", "def kernel(v, tlo, thi, ulo, uhi):"]
    head += [f"    {n} = (v[{2 * i}], v[{2 * i + 1}])" for i, n in enumerate(variables)]
    head += ["    theta = (tlo, thi)", "    one_minus_theta = (ulo, uhi)"]
    for statement in node.body:
        translator.statement(statement)
    outputs = getattr(translator, "outputs", None)
    if outputs is None:
        raise Unsupported("no return")
    text = "\n".join(head + translator.lines) + "\n" + _DRIVER.replace("OUTPUTS", str(outputs))
    return text, outputs


_COMPILED: dict = {}
_HEADER = """import math
import numba
import numpy as np
from stumpcheck.numerics.certified.fast.generated_integrands import (p_add, p_sub, p_mul, p_div, p_neg, p_log, p_pow,
                                                                     p_jet, p_softmax2)
from stumpcheck.numerics.certified.fast.interval import add, mul, one_minus
from stumpcheck.numerics.certified.fast.rounding import down, up
"""
#: the modules a translated kernel calls: their text is part of its cache key (numba's cache checks only the
#: kernel's own file, not its callees')
_DEPENDENCIES = ("generated_integrands.py", "interval.py", "rounding.py", "truncated_exponential.py", "cumulants.py")


def cache_directory() -> Path | None:
    """Where translated kernels are written to be compiled once (numba's on-disk cache): ``$STUMPCHECK_CACHE``
    or ``$XDG_CACHE_HOME/stumpcheck`` (default ``~/.cache/stumpcheck``), sub-folder ``fast_kernels``; None if
    it cannot be created (then each process compiles its kernels again)."""
    base = os.environ.get("STUMPCHECK_CACHE") or os.path.join(
        os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache"), "stumpcheck")
    folder = Path(base) / "fast_kernels"
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError:
        return None
    return folder if os.access(folder, os.W_OK) else None


def _load(text: str):
    """``integrate`` of the translated module text: from a file in :func:`cache_directory` keyed by the sha256 of
    the text and of the modules it calls (so that numba's cache serves later processes), else exec'd."""
    here = Path(__file__).resolve().parent
    key = hashlib.sha256(text.encode("utf-8"))
    for name in _DEPENDENCIES:
        key.update((here / name).read_bytes())
    module_text = _HEADER + text.replace("@numba.njit(fastmath=False", "@numba.njit(cache=True, fastmath=False")
    folder = cache_directory()
    if folder is not None:
        path = folder / f"kernel_{key.hexdigest()[:24]}.py"
        try:
            if not path.exists():
                partial = path.with_suffix(f".{os.getpid()}.tmp")
                partial.write_text(module_text, encoding="utf-8")
                os.replace(partial, path)
            name = f"stumpcheck_fast_kernel_{path.stem}"
            if name in sys.modules:
                return sys.modules[name].integrate
            spec = importlib.util.spec_from_file_location(name, path)
            module = importlib.util.module_from_spec(spec)
            sys.modules[name] = module  # numba's cache re-imports the module by name
            spec.loader.exec_module(module)
            return module.integrate
        except OSError:
            pass
    namespace: dict = {}
    exec(compile(_HEADER + text, "<fast kernel>", "exec"), namespace)  # noqa: S102 - printed by translate()
    return namespace["integrate"]


def compile_integrand(source: str, function: str, variables):
    """The compiled ``integrate(v, theta_points, rest_points, subdivisions)`` of ``function`` in ``source``
    (cached per process by the source's sha256), or raise :class:`Unsupported`."""
    key = (hashlib.sha256(source.encode("utf-8")).hexdigest(), function, tuple(variables))
    if key not in _COMPILED:
        try:
            text, outputs = translate(source, function, tuple(variables))
            _COMPILED[key] = (_load(text), outputs)
        except Unsupported as exc:
            _COMPILED[key] = exc
    value = _COMPILED[key]
    if isinstance(value, Unsupported):
        raise value
    return value


def first_order_integrals(compiled, intervals, theta_points, rest_points, *, goal: float = 2.0 ** -8,
                          max_subdivisions: int = 256) -> tuple[np.ndarray, int]:
    """((outputs, 2) array, kernel evaluations): ∫₀¹ q_j dθ enclosed for every point of ``intervals`` (lo, hi
    pairs, one per variable in the compiled order) by first-order sums over the tiling (module docstring).

    Each piece of the tiling is first enclosed whole, and q at its midpoint θ (the width the variables'
    intervals alone cause there); a piece is then cut into S equal sub-boxes, S the least integer that
    brings its excess over that width to its share of max(Σ widths at the midpoints, ``goal``·|∫ q|), at
    most ``max_subdivisions``. A steering choice only: every tiling gives a valid enclosure."""
    integrate, _ = compiled
    v = np.array([x for pair in intervals for x in pair], dtype=np.float64)
    out, evaluations = integrate(v, theta_points, rest_points, float(goal), int(max_subdivisions))
    return out, int(evaluations)
