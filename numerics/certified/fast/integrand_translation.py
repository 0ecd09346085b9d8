"""The generated θ-integrands' Arb source translated to float64 interval code for numba, by its syntax tree.

What :func:`translate` covers, and nothing else (anything else raises :class:`Unsupported`; the caller keeps
Arb), is listed in :mod:`stumpcheck.numerics.certified.fast.generated_integrands`, which compiles and runs
the printed text: straight-line assignments whose every value is an interval pair (lo, hi) and every
operation the outward-rounded interval operation of the same name (the ``p_*`` functions there), so that the
inclusion property holds operation by operation; constants are folded exactly (Fractions) and enclosed by the
two doubles around them; ζ(3) and π by Arb enclosures widened one step each way. The printed module also
holds the first-order θ-sum driver ``integrate`` (see
:func:`~stumpcheck.numerics.certified.fast.generated_integrands.first_order_integrals`).

Domain: the one-head integrands of the Taylor forms (:mod:`stumpcheck.theory.taylor_codegen`); the text is
read, never executed.
"""

from __future__ import annotations

import ast
import math
from fractions import Fraction

from stumpcheck.numerics.certified.fast.cumulants import _enclose

__all__ = ["Unsupported", "translate"]


class Unsupported(ValueError):
    """The generated source uses something the translation does not cover (the caller keeps Arb)."""


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


