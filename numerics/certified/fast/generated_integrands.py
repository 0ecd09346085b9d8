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

import hashlib
import importlib.util
import math
import os
import sys
from pathlib import Path

import numba
import numpy as np

from stumpcheck.numerics.certified.fast import interval as _interval
from stumpcheck.numerics.certified.fast.integrand_translation import Unsupported, translate
from stumpcheck.numerics.certified.fast.rounding import down, up
from stumpcheck.numerics.certified.fast.truncated_exponential import truncated_exponential_jet

__all__ = ["compile_integrand", "first_order_integrals", "kernel_box", "translate", "Unsupported", "cache_directory",
           "load_module", "module_path"]

_JIT = dict(fastmath=False, error_model="numpy")
_E_FAR = 2.0 ** -865
_TINY = 2.0 ** -1000
_SCALE = 2.0 ** 400
_SCALE_BELOW = 2.0 ** -400
_TINY_SCALED = 2.0 ** -600
_INLINE = dict(cache=True, **_JIT)  # not inlined at numba level: the kernels compile fast


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
_DEPENDENCIES = ("generated_integrands.py", "integrand_translation.py", "interval.py", "rounding.py", "truncated_exponential.py", "cumulants.py")


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


def module_path(text: str, dependencies=()) -> Path | None:
    """Where :func:`load_module` keeps the translated text (None without a cache folder)."""
    here = Path(__file__).resolve().parent
    key = hashlib.sha256(text.encode("utf-8"))
    for name in (*_DEPENDENCIES, *dependencies):
        key.update((here / name).read_bytes())
    folder = cache_directory()
    return None if folder is None else folder / f"kernel_{key.hexdigest()[:24]}.py"


def load_module(text: str, dependencies=()):
    """The module of the translated text (``_HEADER`` prepended): from a file in :func:`cache_directory` keyed by
    the sha256 of the text and of the modules it calls (``_DEPENDENCIES`` and ``dependencies``, file names in
    this package), so that numba's cache serves later processes, else exec'd into a namespace object."""
    import types

    module_text = _HEADER + text.replace("@numba.njit(fastmath=False", "@numba.njit(cache=True, fastmath=False")
    path = module_path(text, dependencies)
    if path is not None:
        try:
            if not path.exists():
                partial = path.with_suffix(f".{os.getpid()}.tmp")
                partial.write_text(module_text, encoding="utf-8")
                os.replace(partial, path)
            name = f"stumpcheck_fast_kernel_{path.stem}"
            if name in sys.modules:
                return sys.modules[name]
            spec = importlib.util.spec_from_file_location(name, path)
            module = importlib.util.module_from_spec(spec)
            sys.modules[name] = module  # numba's cache re-imports the module by name
            spec.loader.exec_module(module)
            return module
        except OSError:
            pass
    namespace: dict = {}
    exec(compile(_HEADER + text, "<fast kernel>", "exec"), namespace)  # noqa: S102 - printed by translate()
    return types.SimpleNamespace(**namespace)


def _load(text: str):
    """(``integrate``, ``kernel``) of the translated module text (:func:`load_module`)."""
    module = load_module(text)
    return module.integrate, module.kernel


def compile_integrand(source: str, function: str, variables):
    """(``integrate``, ``kernel``, outputs) of ``function`` in ``source``, compiled (cached per process by the
    source's sha256, and on disk by numba: :func:`cache_directory`), or raise :class:`Unsupported`."""
    key = (hashlib.sha256(source.encode("utf-8")).hexdigest(), function, tuple(variables))
    if key not in _COMPILED:
        try:
            text, outputs = translate(source, function, tuple(variables))
            _COMPILED[key] = (*_load(text), outputs)
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
    integrate = compiled[0]
    v = np.array([x for pair in intervals for x in pair], dtype=np.float64)
    out, evaluations = integrate(v, theta_points, rest_points, float(goal), int(max_subdivisions))
    return out, int(evaluations)


def kernel_box(compiled, intervals, theta, u) -> list:
    """[(lo, hi) per output]: the translated integrand over the box of the variables' ``intervals`` and the
    θ-box given by ``theta`` = (lo, hi) together with ``u`` = (lo, hi) ⊇ 1 − θ (for tests and checks)."""
    kernel = compiled[1]
    v = np.array([x for pair in intervals for x in pair], dtype=np.float64)
    return [(float(lo), float(hi)) for lo, hi in kernel(v, float(theta[0]), float(theta[1]), float(u[0]),
                                                        float(u[1]))]
