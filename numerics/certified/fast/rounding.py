"""Outward rounding of float64 results without changing the rounding mode, and libm's assumed error bounds.

**Arithmetic.** IEEE 754 binary64 in the default rounding mode, round-to-nearest-even (RN), compiled with
numba. For an exact real v whose RN result is r = RN(v), two elementary widenings give certified bounds:

    down(r) = r − max(|r|·2⁻⁵², 2⁻¹⁰²²) ≤ v,      up(r) = r + max(|r|·2⁻⁵², 2⁻¹⁰²²) ≥ v,

each evaluated in RN. Proof (for ``down``; ``up`` is its mirror). Let pred(r) be the largest double
below r and g = r − pred(r) the gap. Since r = RN(v), v lies at or above the midpoint of pred(r) and r,
so pred(r) ≤ v. The gap is a power of two ≥ 2⁻¹⁰⁷⁴, and g ≤ 2⁻⁵²|r| for a normal r (the gap below a
positive power of two is half an ulp; below a negative r it is one ulp of |r|), g = 2⁻¹⁰⁷⁴ for a
subnormal or zero r. The computed s = max(RN(|r|·2⁻⁵²), 2⁻¹⁰²²) satisfies s ≥ g: RN is monotone and g
is a double, so RN(|r|·2⁻⁵²) ≥ g for a normal r (also where |r|·2⁻⁵² is subnormal and rounds), and
s ≥ 2⁻¹⁰²² > g otherwise. Hence r − s ≤ pred(r), a double, and by monotonicity RN(r − s) ≤ pred(r) ≤ v.
The floor is the smallest normal number 2⁻¹⁰²², not the smallest subnormal 2⁻¹⁰⁷⁴, and enters
through a ``max``, not a sum: an arithmetic operation with a subnormal operand or result costs a
microcode assist of ~100 cycles on x86 (a comparison does not), and a widened zero, the commonest
case, would otherwise be subnormal; the price is an absolute widening of 2.2·10⁻³⁰⁸. Overflow: r − s may round to −∞, which is a valid lower bound;
a result r = +∞ of an operation on finite doubles means v > DBL_MAX (RN overflows only beyond
DBL_MAX + ½ulp), so down(+∞) = DBL_MAX; down(−∞) = −∞ and down(NaN) = −∞ (NaN gives the whole line). Each
widening costs one multiply, one add, a ``max`` and an ``abs``: no ``nextafter``, no change of rounding mode.

**No fused or reordered operations.** numba compiles without fast-math flags by default (every
function here is ``fastmath=False`` explicitly): LLVM then neither reassociates nor contracts a·b + c
into an FMA (contraction needs the ``contract`` flag or an ``llvm.fmuladd`` intrinsic, which numba
does not emit; the x86 backend's default fusion level only fuses ``fmuladd``). The argument above needs
every operation to be a separately rounded RN operation; tests/test_fast_interval.py inspects the LLVM
IR and the machine code of the compiled kernels for ``fmuladd``/``fma`` and ``vfmadd`` (none), and
checks cases where an FMA would change a bound.

**The rounding mode** is checked when this module is imported, in compiled code on run-time
arguments (RN gives 1 + 3·2⁻⁵⁴ → 1 + 2⁻⁵², −1 − 3·2⁻⁵⁴ → −1 − 2⁻⁵², 1 + 2⁻⁵⁴ → 1; directed modes give
another result in at least one): a process that changed it raises ``RuntimeError`` on import. A
change of mode after import is not detected (nothing in stumpcheck changes it).

**libm.** exp, expm1, log and log1p are the C library's (numba calls them through LLVM; glibc on
Linux). They are not correctly rounded; glibc's manual lists known maximum errors of at most 1 ulp for
these four in double precision on x86_64 and aarch64. The assumption recorded in :data:`ASSUMPTIONS`
is twice that: |f̃(x) − f(x)| ≤ 2 ulp(f(x)). An error of 2 ulp of the exact value is at most 4 steps
between consecutive doubles from the returned one (a step doubles across a binade boundary), so each
end is widened by :data:`LIBM_STEPS` = 4 applications of ``down``/``up`` (each at least one step). A
libm result of ±∞ for a finite argument is treated as overflow (the bound becomes ±DBL_MAX widened).
The alternative the issue names, a correctly rounded exp (CORE-MATH through ``crival``), would remove
this assumption but is not a dependency and runs on arrays only; these scalar kernels keep libm and
state the bound instead (tests check every result against Arb).

Domain: any doubles; precision: a widening costs about one ulp per operation (four per libm call).
"""

from __future__ import annotations

import math
import platform

import numba

__all__ = ["ASSUMPTIONS", "LIBM_STEPS", "LIBM_ULPS", "down", "up", "down_libm", "up_libm", "check_rounding_mode"]

#: ulps of the exact value assumed for exp, expm1, log, log1p (twice glibc's documented maxima).
LIBM_ULPS = 2
#: steps between doubles that cover LIBM_ULPS ulps of the exact value, even across a binade boundary.
LIBM_STEPS = 4

#: What every fast enclosure rests on; a certificate built on them copies this dict.
ASSUMPTIONS = {
    "arithmetic": "IEEE 754 binary64, round-to-nearest-even, each operation rounded separately",
    "rounding_mode": "round-to-nearest assumed; checked on import in compiled code (1 + 3*2^-54 etc.)",
    "outward_rounding": "each result r widened to r -/+ max(|r|*2^-52, 2^-1022) in round-to-nearest, "
                        "which is at least one step to the next double below/above",
    "fused_operations": "none: numba without fast-math flags; no llvm.fmuladd/fma in the IR, no vfmadd "
                        "in the machine code (checked by tests)",
    "libm": "exp, expm1, log, log1p from the C library with error <= 2 ulp of the exact value "
            "(glibc documents <= 1 ulp); each end widened by 4 steps",
    "trig": "sin, cos from the C library within 2^-45 absolute (glibc documents <= 1 ulp); used by the "
            "Gauss-Legendre remainder bound (complex exponentials on the Bernstein ellipse)",
    "libc": " ".join(platform.libc_ver()) or "unknown",
    "numba": numba.__version__,
    "machine": platform.machine(),
}

_ULP = 2.0 ** -52
_FLOOR = 2.0 ** -1022  # the smallest normal double
_MAX = 1.7976931348623157e308
_INF = math.inf


@numba.njit(cache=True, fastmath=False, error_model="numpy", inline="always")
def down(r):
    """A double ≤ v for r = RN(v) (module docstring); −∞ for NaN."""
    if r != r:
        return -_INF
    if r == _INF:
        return _MAX
    if r == -_INF:
        return r
    return r - max(abs(r) * _ULP, _FLOOR)


@numba.njit(cache=True, fastmath=False, error_model="numpy", inline="always")
def up(r):
    """A double ≥ v for r = RN(v) (module docstring); +∞ for NaN."""
    if r != r:
        return _INF
    if r == -_INF:
        return -_MAX
    if r == _INF:
        return r
    return r + max(abs(r) * _ULP, _FLOOR)


@numba.njit(cache=True, fastmath=False, error_model="numpy", inline="always")
def down_libm(r):
    """A double ≤ f(x) for r = libm's f(x), under the assumed bound (LIBM_STEPS steps down)."""
    for _ in range(LIBM_STEPS):
        r = down(r)
    return r


@numba.njit(cache=True, fastmath=False, error_model="numpy", inline="always")
def up_libm(r):
    """A double ≥ f(x) for r = libm's f(x), under the assumed bound (LIBM_STEPS steps up)."""
    for _ in range(LIBM_STEPS):
        r = up(r)
    return r


@numba.njit(cache=True, fastmath=False, error_model="numpy")
def _probe(one, third):
    """RN sums that tell the rounding modes apart (arguments at run time: no constant folding)."""
    return one + 3.0 * third, -one - 3.0 * third, one + third


def check_rounding_mode() -> None:
    """Raise RuntimeError unless compiled float64 arithmetic rounds to nearest (module docstring)."""
    third = 2.0 ** -54
    got = _probe(1.0, third)
    want = (1.0 + 2.0 ** -52, -1.0 - 2.0 ** -52, 1.0)
    if tuple(got) != want:
        raise RuntimeError(f"float64 arithmetic does not round to nearest here ({got!r} instead of {want!r}): "
                           "the fast interval layer would not be rigorous")


check_rounding_mode()
