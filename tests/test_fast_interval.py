"""The fast interval layer's primitives (stumpcheck.numerics.certified.fast.rounding, .interval, .cumulants):
every result contains the exact one (exact rationals for + − × ÷, Arb at 256 bits for exp, expm1, log,
log1p, κ₁, κ₂), across subnormals, overflow, zeros and infinite ends; division by an interval holding 0
gives the whole line; the compiled code rounds to nearest and has no fused multiply-add."""

from __future__ import annotations

import ctypes
import ctypes.util
import math
import platform
import re
from fractions import Fraction

import numpy as np
import pytest
from flint import arb, ctx

from stumpcheck.numerics.certified.fast import interval as iv
from stumpcheck.numerics.certified.fast import rounding
from stumpcheck.numerics.certified.fast.cumulants import SERIES_BELOW, kappa_interval, kappa_point, kappa_range
from stumpcheck.numerics.certified.fast.one_head import jet_box
from stumpcheck.numerics.certified.fast.theta_integrals import integrate_pieces

SEED = 20261205


def _doubles(rng, n):
    """Doubles of every kind: normal of any exponent and sign, subnormal, zero, near-overflow."""
    kind = rng.integers(0, 5, n)
    mant = rng.uniform(1.0, 2.0, n) * rng.choice([-1.0, 1.0], n)
    out = np.where(kind == 0, mant * 2.0 ** rng.integers(-60, 60, n).astype(float),
          np.where(kind == 1, mant * np.ldexp(1.0, rng.integers(-1074, -1022, n)),
          np.where(kind == 2, mant * np.ldexp(1.0, rng.integers(-1022, 1024, n)),
          np.where(kind == 3, 0.0, mant * np.ldexp(1.0, rng.integers(1000, 1024, n))))))
    return out


def _float(v: Fraction) -> float:
    try:
        return float(v)
    except OverflowError:
        return math.inf


def _le(x: float, v: Fraction) -> bool:
    return x == -math.inf or (x != math.inf and Fraction(x) <= v)


def _ge(x: float, v: Fraction) -> bool:
    return x == math.inf or (x != -math.inf and Fraction(x) >= v)


def test_arithmetic_contains_the_exact_rational_result():
    """2000 random pairs of point intervals (and of intervals made of two of them): +, −, ×, ÷ and x²
    contain the exact rational result at every combination of ends (0 misses), and widen by at most a
    few ulps where the result is a normal number."""
    rng = np.random.default_rng(SEED)
    xs, ys = _doubles(rng, 2000), _doubles(rng, 2000)
    misses = 0
    for x, y in zip(xs, ys):
        X, Y = Fraction(float(x)), Fraction(float(y))
        for op, exact in ((iv.add, X + Y), (iv.sub, X - Y), (iv.mul, X * Y)):
            lo, hi = op(x, x, y, y)
            misses += not (_le(lo, exact) and _ge(hi, exact))
            value = _float(exact)
            if math.isfinite(value) and 1e-290 < abs(value) < 1e300:
                assert hi - lo <= 4 * abs(value) * 2.0 ** -52
        if y != 0:
            lo, hi = iv.div(x, x, y, y)
            misses += not (_le(lo, X / Y) and _ge(hi, X / Y))
            lo, hi = iv.recip(y, y)
            misses += not (_le(lo, 1 / Y) and _ge(hi, 1 / Y))
        lo, hi = iv.sqr(x, x)
        misses += not (_le(lo, X * X) and _ge(hi, X * X))
        a, b = sorted((float(x), float(y)))
        lo, hi = iv.sqr(a, b)
        top = max(Fraction(a) ** 2, Fraction(b) ** 2)
        bottom = Fraction(0) if a <= 0 <= b else min(Fraction(a) ** 2, Fraction(b) ** 2)
        misses += not (_le(lo, bottom) and _ge(hi, top))
    assert misses == 0


def test_ends_at_overflow_subnormals_and_infinity():
    big = 1.7976931348623157e308
    lo, hi = iv.add(big, big, big, big)  # overflows: the exact sum is finite and > DBL_MAX
    assert lo == big and hi == math.inf
    lo, hi = iv.mul(5e-324, 5e-324, 0.5, 0.5)  # 2^-1075 rounds to 0 or 2^-1074: both sides kept
    assert lo < 0 < hi
    lo, hi = iv.mul(0.0, 0.0, 1.0, math.inf)  # 0·[1, ∞) = 0
    assert lo <= 0 <= hi and math.isfinite(lo) and math.isfinite(hi)
    assert iv.mul(-1.0, 1.0, 1.0, math.inf) == (-math.inf, math.inf)
    assert rounding.down(math.nan) == -math.inf and rounding.up(math.nan) == math.inf
    assert rounding.down(math.inf) == big and rounding.up(-math.inf) == -big


@pytest.mark.parametrize(("lo", "hi"), [(-1.0, 1.0), (0.0, 2.0), (-3.0, 0.0), (0.0, 0.0), (-5e-324, 5e-324)])
def test_division_by_an_interval_holding_zero_is_the_whole_line(lo, hi):
    assert iv.div(1.0, 2.0, lo, hi) == (-math.inf, math.inf)
    assert iv.recip(lo, hi) == (-math.inf, math.inf)


def _arb_contains(lo, hi, ball) -> bool:
    return (lo == -math.inf or arb(lo) <= ball.lower()) and (hi == math.inf or ball.upper() <= arb(hi))


def test_elementary_functions_contain_arb():
    """exp, expm1, log, log1p of 4000 random points each (arguments across the whole range, including
    overflow and underflow of exp) contain Arb's 256-bit ball: 0 misses; and the ends are within
    2⁻⁴⁸ relative where the result is normal."""
    rng = np.random.default_rng(SEED + 1)
    misses = 0
    with ctx.workprec(1500):
        for x in np.concatenate([rng.uniform(-760, 720, 2000), rng.normal(0, 1, 1000) * 10.0 ** rng.uniform(-300, 0, 1000)]):
            x = float(x)
            for fn, ref in ((iv.exp, arb(x).exp()), (iv.expm1, arb(x).expm1())):
                lo, hi = fn(x, x)
                misses += not _arb_contains(lo, hi, ref)
                value = float(ref.mid())
                if math.isfinite(value) and abs(value) > 1e-290:
                    assert hi - lo <= abs(value) * 2.0 ** -48
        for x in np.concatenate([10.0 ** rng.uniform(-320, 308, 2000), rng.uniform(-1, 3, 1000)]):
            x = float(x)
            if x > 0:
                lo, hi = iv.log(x, x)
                misses += not _arb_contains(lo, hi, arb(x).log())
            if x > -1:
                lo, hi = iv.log1p(x, x)
                misses += not _arb_contains(lo, hi, arb(x).log1p())
    assert misses == 0
    assert iv.log(-1.0, -0.5) == (-math.inf, math.inf)
    assert iv.log(0.0, 1.0)[0] == -math.inf


def test_cumulants_contain_arb_and_are_narrow():
    """κ₁, κ₂ at 3000 rates from 10⁻³⁰⁰ to 10⁶ (dense about the switch to the closed forms) contain Arb's closed
    forms at 2000 bits (which do not cancel at that precision down to β = 10⁻¹⁵⁰; below it the series'
    own limits ½ and 1/12 are compared), within 2⁻⁴⁴ relative; over a range of rates (also one that
    straddles the switch to the closed forms) both enclosures contain both ends' values."""
    rng = np.random.default_rng(SEED + 2)
    betas = np.concatenate([10.0 ** rng.uniform(-150, 6, 2000), SERIES_BELOW + rng.normal(0, 1e-3, 500),
                            rng.uniform(0, 4, 500), [SERIES_BELOW, np.nextafter(SERIES_BELOW, 0), 0.25,
                                                     np.nextafter(0.25, 0), 1e-300, 0.0]])
    misses = 0
    with ctx.workprec(2000):
        for beta in betas:
            beta = float(abs(beta))
            k1lo, k1hi, k2lo, k2hi = kappa_point(beta)
            if beta > 1e-150:
                b = arb(beta)
                p = 1 / b.expm1()
                k1, k2 = 1 / b - p, 1 / (b * b) - p * (1 + p)
            else:
                k1, k2 = arb(0.5) - arb(beta) / 12, arb(1) / 12 - arb(beta) ** 2 / 240
            misses += not (_arb_contains(k1lo, k1hi, k1) and _arb_contains(k2lo, k2hi, k2))
            assert k1hi - k1lo <= 2.0 ** -44 * k1hi and k2hi - k2lo <= 2.0 ** -44 * k2hi
            other = beta * float(rng.uniform(1, 1.5)) + 1e-3
            r1lo, r1hi, r2lo, r2hi = kappa_range(beta, other)
            f1lo, f1hi, f2lo, f2hi = kappa_point(other)
            assert r1lo <= min(k1lo, f1lo) and r1hi >= max(k1hi, f1hi)
            assert r2lo <= min(k2lo, f2lo) and r2hi >= max(k2hi, f2hi)
            i1lo, i1hi, i2lo, i2hi = kappa_interval(beta, other)  # any range, one interval evaluation
            assert i1lo <= min(k1lo, f1lo) and i1hi >= max(k1hi, f1hi)
            assert i2lo <= min(k2lo, f2lo) and i2hi >= max(k2hi, f2hi)
    assert misses == 0
    assert SERIES_BELOW == 2.0


def test_the_rounding_mode_is_round_to_nearest_and_a_directed_mode_is_refused():
    rounding.check_rounding_mode()
    if platform.machine() not in ("x86_64", "AMD64"):
        pytest.skip("the fesetround constants below are x86's")
    libm = ctypes.CDLL(ctypes.util.find_library("m"))
    fe_upward, fe_tonearest = 0x800, 0
    assert libm.fesetround(fe_upward) == 0
    try:
        with pytest.raises(RuntimeError, match="round to nearest"):
            rounding.check_rounding_mode()
    finally:
        assert libm.fesetround(fe_tonearest) == 0
    rounding.check_rounding_mode()


_FMA = re.compile(r"\b(v?fn?m(?:add|sub)\w*)\b")  # x86 vfmadd…/vfnmsub…, aarch64 fmadd/fmsub/fnmadd


def _fused(asm: str) -> list:
    return _FMA.findall(asm)


def test_the_fma_detector_sees_a_contracted_multiply_add_on_this_machine():
    """Positive control: with fast-math a·b + c compiles to an FMA here (if the CPU has one); without
    it, to a multiply and an add. So the absence checks below are not vacuous."""
    import numba

    fused = numba.njit(fastmath=True)(lambda a, b, c: a * b + c)
    plain = numba.njit(lambda a, b, c: a * b + c)
    fused(1.0, 2.0, 3.0), plain(1.0, 2.0, 3.0)
    assert not _fused("\n".join(plain.inspect_asm().values()))
    has_fma = platform.system() == "Linux" and "fma" in open("/proc/cpuinfo").read().split()
    if not has_fma:
        pytest.skip("no FMA unit to detect (or no /proc/cpuinfo to tell)")
    assert _fused("\n".join(fused.inspect_asm().values()))


def test_no_fused_multiply_add_in_the_interval_primitives():
    """A fresh (uncached) kernel made of the primitives, which numba inlines into it (add, sub, mul,
    div, sqr, exp, expm1, log1p and the widenings): no fmuladd/fma intrinsic or fast-math flag in its
    LLVM IR, no FMA instruction in its machine code."""
    import numba

    def probe(alo, ahi, blo, bhi):
        x = iv.mul(alo, ahi, blo, bhi)
        y = iv.add(x[0], x[1], alo, ahi)
        z = iv.div(y[0], y[1], blo, bhi)
        s = iv.sqr(z[0], z[1])
        t = iv.sub(s[0], s[1], x[0], x[1])
        e = iv.exp(t[0], t[1])
        m = iv.expm1(e[0], e[1])
        g = iv.log1p(m[0], m[1])
        return iv.mul_pos(g[0], g[1], e[0], e[1])

    kernel = numba.njit(fastmath=False, error_model="numpy")(probe)
    assert kernel(0.5, 0.75, 1.25, 1.5)[0] > 0
    ir = "\n".join(kernel.inspect_llvm().values())
    asm = "\n".join(kernel.inspect_asm().values())
    assert "fmul" in ir and "expm1" in asm
    assert "fmuladd" not in ir and "llvm.fma" not in ir
    assert not re.search(r"\bf(add|sub|mul|div)\s+(fast|contract|reassoc)", ir)
    assert not _fused(asm)


_WHOLE_KERNELS = """
import json, re
import numpy as np
from stumpcheck.numerics.certified.fast.one_head import jet_box
from stumpcheck.numerics.certified.fast.theta_integrals import integrate_pieces
jet_box(1.0, 1.0, 2.0, 2.0, 0.3, 0.3, 0.7, 0.7)
integrate_pieces(1.0, 1.0, 2.0, 2.0, np.array([0.0, 0.5]), np.array([0.0, 0.5]), 2)
out = {}
for kernel in (jet_box, integrate_pieces):
    ir = "\\n".join(kernel.inspect_llvm().values())
    asm = "\\n".join(kernel.inspect_asm().values())
    out[kernel.__name__] = [len(asm), "fmuladd" in ir or "llvm.fma" in ir,
                            bool(re.search(r"\\bf(add|sub|mul|div)\\s+(fast|contract|reassoc)", ir)),
                            re.findall(r"\\b(v?fn?m(?:add|sub)\\w*)\\b", asm)]
print(json.dumps(out))
"""


@pytest.mark.slow
def test_no_fused_multiply_add_in_the_whole_kernels(tmp_path):
    """jet_box and integrate_pieces compiled afresh in a new process with an empty numba cache (cached
    code cannot be inspected; about a minute of compiling): no fmuladd, fast-math flag or FMA."""
    import json
    import os
    import subprocess
    import sys

    env = dict(os.environ, NUMBA_CACHE_DIR=str(tmp_path))
    done = subprocess.run([sys.executable, "-c", _WHOLE_KERNELS], env=env, capture_output=True, text=True,
                          check=True)
    found = json.loads(done.stdout.strip().splitlines()[-1])
    for name, (size, intrinsic, flags, fused) in found.items():
        assert size > 10_000, name
        assert not intrinsic and not flags and not fused, (name, fused)


def test_assumptions_are_recorded():
    for key in ("arithmetic", "rounding_mode", "outward_rounding", "fused_operations", "libm"):
        assert isinstance(rounding.ASSUMPTIONS[key], str) and rounding.ASSUMPTIONS[key]
    assert rounding.LIBM_STEPS >= 2 * rounding.LIBM_ULPS
