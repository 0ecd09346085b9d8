"""exp(y) for y ≤ 0 in plain float64 arithmetic, so that the compiler can vectorise the kernel's sweep.

A call to the C library's exp cannot be vectorised; this one is branch-free arithmetic:

    k = round(y / ln 2)  (the 1.5·2⁵² rounding trick),   r = (y − k ln2_hi) − k ln2_lo,  |r| ≤ ln2/2,
    exp(y) = 2^k · Σ_{j ≤ 13} r^j / j!      (the truncation is < r¹⁴/14! ≈ 4·10⁻¹⁸ relative),

with ln2_hi holding the leading 32 bits of ln 2 (so k·ln2_hi is exact) and 2^k built from its
exponent bits. Domain: y ≤ 0 (every exponent of the kernel is ≤ 0). Below y = −708 the result
is 0 (exp(−708) ≈ 3.3·10⁻³⁰⁸, the bottom of the normal range: an absolute error below that,
which :mod:`stumpcheck.numerics.corpus.empirical` counts in its 10⁻³⁰⁰ absolute allowance). Accuracy:
within 2 ulps of the correctly rounded exp on [−708, 0] (the largest error measured against
np.longdouble over 4·10⁶ random points of [−708, 0], [−1, 0] and [−0.35, 0] is 0.89 ulp;
tests/test_kernel.py checks it against mpmath).

Evaluation order: 1 + r(1 + r(1/2 + r(1/6 + r·h))) by Horner, where h = Σ_{4 ≤ j ≤ 13} r^{j−4}/j!
is summed by Estrin's scheme (pairs c_j + r c_{j+1}, combined with r², r⁴): the Horner chain of
thirteen dependent steps made the vectorised sweep wait on latency (3.4 ns per token on the
development machine against 2.0 ns now); h's contribution r⁴h is at most 6·10⁻⁴ of the sum, so
the reordering of its rounding errors does not show in the result (an all-Estrin evaluation,
measured: 2.1 ulps). The one fast-math flag is ``contract``: a·b + c may be one fused multiply-add
(one rounding instead of two), which cannot loosen the error bound (measured: 1.15 ulps without
it, 0.89 with it). No reassociation: callers that allow it for their own sums (the sweeps of
:mod:`stumpcheck.numerics.corpus.kernel`) call these functions as separate functions, whose instructions
keep their own flags when they are inlined.
"""

from __future__ import annotations

from llvmlite import ir
from numba import njit, types
from numba.extending import intrinsic

__all__ = ["exp_nonpositive", "exp_above_flush", "EXP_FLUSH", "float_bits", "float_from_bits"]

EXP_FLUSH = -708.0
_LOG2E = 1.4426950408889634
_LN2_HI = 0.6931471803691238     # 0x3FE62E42FEE00000: ln 2 to 32 bits
_LN2_LO = 1.9082149292705877e-10  # ln 2 − _LN2_HI
_ROUND = 6755399441055744.0      # 1.5·2⁵²: t = z/ln2 + this holds round(z/ln2) in its low bits


@intrinsic
def float_from_bits(typingctx, bits):
    """The float64 whose IEEE-754 bits are the int64 ``bits`` (a bit cast, no conversion)."""
    def codegen(context, builder, signature, args):
        return builder.bitcast(args[0], ir.DoubleType())
    return types.float64(types.int64), codegen


@intrinsic
def float_bits(typingctx, value):
    """The IEEE-754 bits of a float64 as an int64 (for x ≥ 0 they are ordered as x is)."""
    def codegen(context, builder, signature, args):
        return builder.bitcast(args[0], ir.IntType(64))
    return types.int64(types.float64), codegen


@njit(cache=True, fastmath={"contract"})
def exp_nonpositive(y):
    """exp(y) for y ≤ 0, within 2 ulps; 0 for y < −708 (see the module docstring)."""
    value = exp_above_flush(max(y, EXP_FLUSH))
    return value if y >= EXP_FLUSH else 0.0


@njit(cache=True, fastmath={"contract"})
def exp_above_flush(z):
    """exp(z) for −708 ≤ z ≤ 0 with no test of the domain: the same bits as :func:`exp_nonpositive`
    there (which is this after clamping), for callers whose exponents are known to lie in it."""
    t = z * _LOG2E + _ROUND
    k = t - _ROUND
    r = (z - k * _LN2_HI) - k * _LN2_LO
    # r⁴ … r¹³ (terms below 2⁻⁵⁵ relative) by Estrin's scheme, whose independent products overlap;
    # the leading terms by Horner, so the rounding of the high part is scaled down by r⁴
    r2 = r * r
    r4 = r2 * r2
    q4 = 1.0 / 24.0 + r * (1.0 / 120.0)
    q6 = 1.0 / 720.0 + r * (1.0 / 5040.0)
    q8 = 1.0 / 40320.0 + r * (1.0 / 362880.0)
    q10 = 1.0 / 3628800.0 + r * (1.0 / 39916800.0)
    q12 = 1.0 / 479001600.0 + r * (1.0 / 6227020800.0)
    p = (q4 + r2 * q6) + r4 * ((q8 + r2 * q10) + r4 * q12)
    p = p * r + 1.0 / 6.0
    p = p * r + 0.5
    p = p * r + 1.0
    p = p * r + 1.0
    # t's bits are those of 1.5·2⁵² plus k; shifting k + 1023 into the exponent field gives 2^k
    # (k ≥ −1022 since z ≥ −708: a normal number)
    scale = float_from_bits((float_bits(t) + 1023) << 52)
    return p * scale
