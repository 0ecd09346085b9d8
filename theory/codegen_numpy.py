"""The numpy (float64) target: its printer and the source of its stable Λ, κ_k and softmax helpers.

The generated helpers evaluate Λ(β) (``trunc_exp_log_mass``) and κ_k(β)
(``trunc_exp_cumulant``) from the Taylor polynomial derived by SymPy for
|β| < TAYLOR_SWITCH = 2 (degree TAYLOR_DEGREE = 40, error < 1e-19 relative to
the series' radius 2π) and from SymPy's form in p = 1/(e^{|β|} − 1) beyond, with
the reflections Λ(−β) = β + Λ(β), κ₁(−β) = 1 − κ₁(β), κ_k(−β) = (−1)^k κ_k(β)
(k ≥ 2); ``trunc_exp_jet`` gives Λ, κ_1, …, κ_K of one rate in one pass; the
softmax weights are computed with the maximum shifted out.
"""

from __future__ import annotations

from sympy.printing.numpy import NumPyPrinter

from stumpcheck.theory.codegen_rewrites import MAX_CUMULANT_ORDER, stabilize
from stumpcheck.theory.special import large_rate_form, taylor_coefficients

__all__ = ["NumpyModelPrinter", "numpy_special_functions_source", "TAYLOR_DEGREE", "TAYLOR_SWITCH"]

#: Degree of the Taylor polynomials used by the numpy helpers for |β| < TAYLOR_SWITCH.
TAYLOR_DEGREE = 40
TAYLOR_SWITCH = 2


class _SpecialPrinting:
    """Λ, κ_k and softmax weights as calls of the generated helpers (shared by the numpy and mpmath printers)."""

    def _print_TruncExpLogMass(self, expr):
        return "trunc_exp_log_mass(%s)" % self._print(expr.args[0])

    def _print_TruncExpCumulant(self, expr):
        return "trunc_exp_cumulant(%d, %s)" % (int(expr.args[0]), self._print(expr.args[1]))

    def _print_SoftmaxWeight(self, expr):
        return "softmax_weight(%d, %s)" % (expr.index, ", ".join(self._print(a) for a in expr.log_masses))

    def _print_SoftmaxFromDifferences(self, expr):
        return "softmax_weight_differences(%s)" % ", ".join(self._print(d) for d in expr.args)


class _ConstantFunctions:
    """ζ and Li_s for a float64 target without them: at number arguments (ζ(3), Li₂(½)) the float64 nearest
    to the value (SymPy's ``evalf`` at 30 digits, then rounded once); at symbolic ones refused."""

    def _constant_function(self, expr):
        if not expr.is_number:
            raise NotImplementedError(f"{type(self).__name__} prints {expr.func} at number arguments only, not "
                                      f"{expr} (to_mpmath and to_arb evaluate it at symbolic ones)")
        value = expr.evalf(30)
        if not value.is_real:
            raise NotImplementedError(f"{expr} is not a real number")
        return repr(float(value))

    _print_zeta = _print_polylog = _constant_function


class NumpyModelPrinter(_SpecialPrinting, _ConstantFunctions, NumPyPrinter):
    """NumPy printer that knows Λ, κ_k, softmax weights and the constants ζ(n), Li_s(z) (as float64 literals)."""


def _float_tuple(values) -> str:
    return "(" + ", ".join(repr(float(v)) for v in values) + ",)"


def numpy_special_functions_source(printer: NumpyModelPrinter) -> str:
    """Source of the float64 Λ, κ_k and softmax helpers (the Taylor coefficients and large-rate forms printed)."""
    orders = range(0, MAX_CUMULANT_ORDER + 1)
    taylor = "\n".join(
        f"    {k}: {_float_tuple(reversed(taylor_coefficients(k, TAYLOR_DEGREE)))},"
        for k in orders)
    large = "\n".join(
        f"    if order == {k}:\n        return {printer.doprint(stabilize(large_rate_form(k), expm1=True))}"
        for k in orders)
    return _NUMPY_SPECIALS.format(taylor=taylor, large=large, switch=float(TAYLOR_SWITCH),
                                  degree=TAYLOR_DEGREE, max_order=MAX_CUMULANT_ORDER)


_NUMPY_SPECIALS = '''
# Taylor coefficients about 0, highest degree first,
# for order 0 (Λ) and κ_1..κ_4; degree {degree}, used for |β| < {switch}.
_TAYLOR = {{
{taylor}
}}
_SWITCH = {switch}


def _large_rate(order, beta, q, p):
    """κ_order(β) (order 0: Λ(β)) for β ≥ {switch}; q = exp(-β), p = q/(1 - q)."""
{large}
    raise ValueError(f"cumulant order {{order}} is not generated")


def _taylor_parts(coefficients):
    """Even and odd parts of a highest-degree-first polynomial, each in β², leading zeros dropped."""
    ascending = coefficients[::-1]
    parts = []
    for part in (ascending[0::2], ascending[1::2]):
        descending = list(part[::-1])
        while len(descending) > 1 and descending[0] == 0.0:
            descending.pop(0)
        parts.append(tuple(descending))
    return tuple(parts)


_TAYLOR_PARTS = {{order: _taylor_parts(coefficients) for order, coefficients in _TAYLOR.items()}}


def _padded(parts):
    """Rows of highest-degree-first coefficients, zero-padded in front to one length (Horner is unchanged)."""
    width = max(len(part) for part in parts)
    return numpy.array([(0.0,) * (width - len(part)) + part for part in parts])


# one row per order 0..{max_order}: the even and odd parts of all Taylor polynomials, for one Horner pass
_TAYLOR_EVEN = _padded([_TAYLOR_PARTS[order][0] for order in sorted(_TAYLOR_PARTS)])
_TAYLOR_ODD = _padded([_TAYLOR_PARTS[order][1] for order in sorted(_TAYLOR_PARTS)])


def _taylor(order, beta):
    """The degree-{degree} Taylor polynomial of κ_order (Λ for order 0) at β: Horner in β²."""
    even, odd = _TAYLOR_PARTS[order]
    square = beta * beta
    even_sum = even[0] + 0.0 * beta
    for c in even[1:]:
        even_sum = even_sum * square + c
    odd_sum = odd[0] + 0.0 * beta
    for c in odd[1:]:
        odd_sum = odd_sum * square + c
    return even_sum + beta * odd_sum


def _signed(order, value, y, positive):
    """κ_order(β) from κ_order(|β|) = value: Λ(−y) = y + Λ(y), κ₁(−y) = 1 − κ₁(y), odd κ change sign."""
    if order == 0:
        return numpy.where(positive, value, y + value)
    if order == 1:
        return numpy.where(positive, value, 1.0 - value)
    if order % 2 == 1:
        return numpy.where(positive, value, -value)
    return value


def _special(order, beta):
    beta = numpy.asarray(beta, dtype=float)
    if beta.ndim == 0:  # one number: no masks, no arrays (the reflections of _signed, as conditionals)
        x = float(beta)
        y = abs(x)
        if y < _SWITCH:
            return numpy.float64(_taylor(order, x))
        q = math.exp(-y)
        value = float(_large_rate(order, y, q, -q / math.expm1(-y)))
        if x > 0 or (order > 1 and order % 2 == 0):
            return numpy.float64(value)
        return numpy.float64(y + value if order == 0 else 1.0 - value if order == 1 else -value)
    size = numpy.abs(beta)
    out = numpy.empty(beta.shape)
    small = size < _SWITCH
    if small.any():
        out[small] = _taylor(order, beta[small])
    large = ~small
    y = size[large]
    q = numpy.exp(-y)
    out[large] = _signed(order, _large_rate(order, y, q, -q / numpy.expm1(-y)), y, beta[large] > 0)
    return out


def _taylor_all(beta, count):
    """Taylor polynomials of Λ, κ_1, …, κ_(count−1) at the 1-d array β (|β| < {switch}), shape (count, n).

    Powers 1, β², β⁴, … (numpy.vander) times the coefficient matrices: two
    matrix products instead of a Horner loop per order. The terms decrease
    like (β/2π)^k, so the power form is as accurate as Horner's (a few ulps).
    """
    powers = numpy.vander(beta * beta, _TAYLOR_EVEN.shape[1], increasing=True)
    even = powers @ _TAYLOR_EVEN[:count, ::-1].T
    odd = powers[:, :_TAYLOR_ODD.shape[1]] @ _TAYLOR_ODD[:count, ::-1].T
    return (even + beta[:, None] * odd).T


def trunc_exp_jet(beta, max_order):
    """(Λ(β), κ_1(β), …, κ_max_order(β)) in one pass: the single functions' values to a few ulps.

    One exp(−|β|) and one Taylor pass serve every order (the one-pass e, ∇e, ∇²e call this).
    """
    beta = numpy.asarray(beta, dtype=float)
    flat = beta.ravel()
    size = numpy.abs(flat)
    out = numpy.empty((max_order + 1, flat.size))
    small = size < _SWITCH
    if small.any():
        out[:, small] = _taylor_all(flat[small], max_order + 1)
    large = ~small
    if large.any():
        y = size[large]
        q = numpy.exp(-y)
        p = -q / numpy.expm1(-y)
        positive = flat[large] > 0
        for order in range(max_order + 1):
            out[order, large] = _signed(order, _large_rate(order, y, q, p), y, positive)
    return tuple(row.reshape(beta.shape) for row in out)


def trunc_exp_log_mass(beta):
    """Λ(β) = log((1 - exp(-β))/β), float64, stable for all real β."""
    return _special(0, beta)


def trunc_exp_cumulant(order, beta):
    """κ_order(β), the cumulants of the density ∝ exp(-βτ) on [0, 1]."""
    if order not in _TAYLOR or order == 0:
        raise ValueError(f"cumulant order {{order}} is not generated")
    return _special(order, beta)


def softmax_weight(index, *log_masses):
    """exp(ℓ_index) / Σ exp(ℓ_i), computed with the maximum shifted out."""
    ells = numpy.broadcast_arrays(*[numpy.asarray(ell, dtype=float) for ell in log_masses])
    top = ells[0]
    for ell in ells[1:]:
        top = numpy.maximum(top, ell)
    total = sum(numpy.exp(ell - top) for ell in ells)
    return numpy.exp(ells[index] - top) / total


def softmax_weight_differences(*differences):
    """1 / Σ exp(d_i) for d_i = ℓ_i − ℓ_j (one d_i is 0): the softmax weight of j.

    The largest d_i (≥ 0) is shifted out; a weight whose entry is e^(−∞) is 0.
    """
    if len(differences) == 2:  # the usual case, without the general path's overhead (same arithmetic)
        first, second = numpy.asarray(differences[0], dtype=float), numpy.asarray(differences[1], dtype=float)
        top = numpy.maximum(first, second)
        with numpy.errstate(invalid="ignore"):
            weight = numpy.exp(-top) / (numpy.exp(first - top) + numpy.exp(second - top))
        return numpy.where(numpy.isposinf(top), 0.0, weight)
    ds = numpy.broadcast_arrays(*[numpy.asarray(d, dtype=float) for d in differences])
    top = ds[0]
    for d in ds[1:]:
        top = numpy.maximum(top, d)
    with numpy.errstate(invalid="ignore"):
        total = sum(numpy.exp(d - top) for d in ds)
        weight = numpy.exp(-top) / total
    return numpy.where(numpy.isposinf(top), 0.0, weight)
'''
