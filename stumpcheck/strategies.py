"""Hypothesis strategies for the model's parameters and corpora (docs/model.md §1–§2).

Written in Hypothesis's own API style: every argument is keyword-only, bounds
are named ``min_value``/``max_value`` (or ``min_<name>``/``max_<name>`` when a
strategy draws several quantities), and bad bounds are rejected *eagerly*, when
the strategy is built, with :class:`hypothesis.errors.InvalidArgument`.

All strategies draw Python floats (or ints). Every float converts to an
``mpmath.mpf`` exactly, so a drawn point means the same number to the float64
code and to the arbitrary-precision code; pass the floats themselves (not their
decimal ``str``) to mpmath.

:func:`corpora` draws a corpus size (m, n) and a seed and builds the corpus
with :func:`stumpcheck.numerics.corpus.corpora.make_corpus`, so a drawn corpus is reproducible
from the (m, n, seed) that Hypothesis prints.

Requires ``hypothesis`` at run time (it is imported by this module).
"""

from __future__ import annotations

import math
from numbers import Real

from hypothesis import strategies as st
from hypothesis.errors import InvalidArgument

__all__ = ["scales", "thresholds", "offsets", "parameters", "precisions", "rates", "corpora"]


def _check_real(name: str, value) -> float:
    if isinstance(value, bool) or not isinstance(value, Real):
        raise InvalidArgument(f"{name}={value!r} must be a real number")
    value = float(value)
    if not math.isfinite(value):
        raise InvalidArgument(f"{name}={value!r} must be finite")
    return value


def _check_bounds(min_name: str, min_value, max_name: str, max_value) -> tuple[float, float]:
    lo, hi = _check_real(min_name, min_value), _check_real(max_name, max_value)
    if lo > hi:
        raise InvalidArgument(f"Cannot have {max_name}={max_value!r} < {min_name}={min_value!r}")
    return lo, hi


def _log_uniform(lo: float, hi: float) -> st.SearchStrategy[float]:
    """Floats in [lo, hi] (0 < lo ≤ hi) whose base-10 logarithm is uniform."""
    if lo == hi:
        return st.just(lo)
    exponents = st.floats(min_value=math.log10(lo), max_value=math.log10(hi))
    # 10**exponent may round just outside [lo, hi]; clamp to the exact bounds.
    return exponents.map(lambda e: min(max(10.0**e, lo), hi))


def scales(*, min_value: float = 1e-2, max_value: float = 1e4) -> st.SearchStrategy[float]:
    """Feature scores (attention scales) b, log-uniform in [min_value, max_value].

    The model needs b > 0, so ``min_value`` must be positive. Log-uniform draws
    visit every decade equally: the large-b boundary layers (width 1/b) are as
    likely as the nearly flat small-b regime.
    """
    lo, hi = _check_bounds("min_value", min_value, "max_value", max_value)
    if lo <= 0:
        raise InvalidArgument(f"min_value={min_value!r} must be > 0 (b is a positive scale)")
    return _log_uniform(lo, hi)


def thresholds(*, min_value: float = 0.0, max_value: float = 1.0) -> st.SearchStrategy[float]:
    """Thresholds θ in [min_value, max_value] ⊆ [0, 1] (endpoints included).

    Hypothesis' float strategy favours the endpoints, tiny values and values
    just below 1 (θ = 1 − 2⁻⁵³, …): the places where θ and 1 − θ lose digits.
    """
    lo, hi = _check_bounds("min_value", min_value, "max_value", max_value)
    if lo < 0 or hi > 1:
        raise InvalidArgument(f"thresholds must lie in [0, 1], got [{min_value!r}, {max_value!r}]")
    return st.floats(min_value=lo, max_value=hi, allow_nan=False, allow_infinity=False)


def offsets(*, min_value: float = -50.0, max_value: float = 1e3) -> st.SearchStrategy[float]:
    """Score offsets o = a − bθ (the right segment's peak score), uniform floats."""
    lo, hi = _check_bounds("min_value", min_value, "max_value", max_value)
    return st.floats(min_value=lo, max_value=hi, allow_nan=False, allow_infinity=False)


def parameters(*, min_b: float = 1e-2, max_b: float = 1e4, min_offset: float = -50.0,
               max_offset: float = 1e3, min_theta: float = 0.0,
               max_theta: float = 1.0) -> st.SearchStrategy[tuple[float, float, float]]:
    """Points (a, b, θ) with b log-uniform in [min_b, max_b], θ in [min_theta, max_theta]
    and the offset a − bθ in [min_offset, max_offset].

    The offset, not a itself, is drawn: a − bθ is the score of the positive
    just above θ relative to the negative at x = 0, so it decides which segment
    the softmax attends to, and a = o + bθ keeps every drawn point in the
    regime it names (a is rounded once, so a − bθ meets the bounds to within
    one rounding of a).
    """
    b_strategy = scales(min_value=min_b, max_value=max_b)
    theta_strategy = thresholds(min_value=min_theta, max_value=max_theta)
    offset_strategy = offsets(min_value=min_offset, max_value=max_offset)

    @st.composite
    def _points(draw):
        b = draw(b_strategy)
        theta = draw(theta_strategy)
        offset = draw(offset_strategy)
        return (offset + b * theta, b, theta)

    return _points()


def precisions(*, min_value: int = 15, max_value: int = 60) -> st.SearchStrategy[int]:
    """Working precisions in decimal digits (``mpmath.mp.dps``), integers ≥ 1."""
    for name, value in (("min_value", min_value), ("max_value", max_value)):
        if isinstance(value, bool) or not isinstance(value, int):
            raise InvalidArgument(f"{name}={value!r} must be an int")
    if min_value < 1:
        raise InvalidArgument(f"min_value={min_value!r} must be at least 1 digit")
    if min_value > max_value:
        raise InvalidArgument(f"Cannot have max_value={max_value!r} < min_value={min_value!r}")
    return st.integers(min_value=min_value, max_value=max_value)


def rates(*, min_magnitude: float = 1e-300, max_magnitude: float = 1e5) -> st.SearchStrategy[float]:
    """Rates β of the truncated exponential: 0, or ``±|β|`` with ``|β|`` log-uniform in
    [min_magnitude, max_magnitude]. Covers the Taylor regime (``|β| ≪ 1``), the
    switch between evaluation forms (``|β| ≈ 2``) and the large-rate regime."""
    lo, hi = _check_bounds("min_magnitude", min_magnitude, "max_magnitude", max_magnitude)
    if lo <= 0:
        raise InvalidArgument(f"min_magnitude={min_magnitude!r} must be > 0")
    signed = st.tuples(st.sampled_from((1.0, -1.0)), _log_uniform(lo, hi)).map(lambda p: p[0] * p[1])
    return st.one_of(st.just(0.0), signed)


def _check_int(name: str, value) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise InvalidArgument(f"{name}={value!r} must be an int")
    return value


def _check_int_bounds(min_name: str, min_value, max_name: str, max_value, *, least: int) -> tuple[int, int]:
    lo, hi = _check_int(min_name, min_value), _check_int(max_name, max_value)
    if lo < least:
        raise InvalidArgument(f"{min_name}={min_value!r} must be at least {least}")
    if lo > hi:
        raise InvalidArgument(f"Cannot have {max_name}={max_value!r} < {min_name}={min_value!r}")
    return lo, hi


def corpora(*, min_m: int = 1, max_m: int = 32, min_n: int = 1, max_n: int = 64, min_seed: int = 0,
            max_seed: int = 2**32 - 1, prior: tuple[float, float] = (0.0, 1.0)) -> st.SearchStrategy:
    """Corpora of m tasks with n context points each (docs/model.md §1), built by
    :func:`stumpcheck.numerics.corpus.corpora.make_corpus` ``(m, n, seed=seed, prior=prior)``.

    m and n are uniform integers in [min_m, max_m] and [min_n, max_n] (both ≥ 1),
    the seed an integer in [min_seed, max_seed] (≥ 0); the threshold prior is
    Uniform[l, u] with 0 ≤ l < u ≤ 1. Features x are i.i.d. U[0, 1] (shape
    (m, n)), thresholds θⱼ ~ prior (shape (m,)). Shrinking moves towards small
    m, n and seed 0. ``stumpcheck.numerics.corpus.corpora`` is imported when the first corpus is
    drawn, not when the strategy is built.
    """
    m_lo, m_hi = _check_int_bounds("min_m", min_m, "max_m", max_m, least=1)
    n_lo, n_hi = _check_int_bounds("min_n", min_n, "max_n", max_n, least=1)
    s_lo, s_hi = _check_int_bounds("min_seed", min_seed, "max_seed", max_seed, least=0)
    if not isinstance(prior, tuple) or len(prior) != 2:
        raise InvalidArgument(f"prior={prior!r} must be a tuple (l, u)")
    low, high = _check_real("prior[0]", prior[0]), _check_real("prior[1]", prior[1])
    if not 0 <= low < high <= 1:
        raise InvalidArgument(f"prior={prior!r} must satisfy 0 <= l < u <= 1")

    def build(size_and_seed):
        from stumpcheck.numerics.corpus.corpora import make_corpus

        m, n, seed = size_and_seed
        return make_corpus(m, n, seed=seed, prior=(low, high))

    return st.tuples(st.integers(m_lo, m_hi), st.integers(n_lo, n_hi), st.integers(s_lo, s_hi)).map(build)
