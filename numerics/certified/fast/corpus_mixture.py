"""The two groups of a task mixed: θ̂ − θ, ∇θ̂ and ∇²θ̂ over a box from the groups' moments, float64 intervals.

The algebra is that of :mod:`~stumpcheck.numerics.certified.fast.corpus_algebra` (its docstring states
and proves it): from enclosures, valid over the box, of each group g ∈ {P, N}'s Z_g, m_g, V_g and (with
``hessian``) K_g, and the exact doubles θ, x*_P, x*_N, with t = b·D − a (or b·(D − s) − a′ on a sheared
box, a = a′ + s·b),

    w = Z_P / (Z_P + Z_N e^{t}),  v = 1 − w,  A_P = (x*_P − θ) + m_P,  B_N = (θ − x*_N) − m_N,  Δ = A_P + B_N,
    e = w·A_P − v·B_N,  ∂θ̂/∂a = w·v·Δ,  ∂θ̂/∂b = −(w·V_P + v·V_N + w·v·Δ²),

and the second derivatives from W = w·v and σ = v − w. Only t depends on a: the groups' moments depend
on the b-range alone, which lets boxes of one b-range share them
(:mod:`~stumpcheck.numerics.certified.fast.corpus_sorted`). Each operation is an interval operation of
:mod:`stumpcheck.numerics.certified.fast.interval`, rounded outward (the module's assumptions).

Domain: as :func:`~stumpcheck.numerics.certified.fast.corpus_algebra.task_box`; an empty group
(np_ = 0 or nn = 0) drops out exactly.
"""

from __future__ import annotations

import numba

from stumpcheck.numerics.certified.fast import interval as _iv
from stumpcheck.numerics.certified.fast.rounding import down, up

__all__ = ["mixture", "weights", "diff", "FAR", "E_FAR"]

_JIT = dict(cache=True, fastmath=False, error_model="numpy")
_INF = float("inf")
#: Beyond an exponent of −600 a weight e^{−τ} < 2⁻⁸⁶⁵ is enclosed as [0, 2⁻⁸⁶⁵] (no subnormal arithmetic).
FAR = 600.0
E_FAR = 2.0 ** -865


# The interval operations as ordinary compiled functions: numba inlines the interval module's
# operations at the level of its own IR wherever they are called, which made compiling task_box take
# over half a minute; called through these wrappers each is inlined once (LLVM still inlines the calls).
@numba.njit(**_JIT)
def add(alo, ahi, blo, bhi):
    return _iv.add(alo, ahi, blo, bhi)


@numba.njit(**_JIT)
def sub(alo, ahi, blo, bhi):
    return _iv.sub(alo, ahi, blo, bhi)


@numba.njit(**_JIT)
def mul(alo, ahi, blo, bhi):
    return _iv.mul(alo, ahi, blo, bhi)


@numba.njit(**_JIT)
def mul_pos(alo, ahi, blo, bhi):
    return _iv.mul_pos(alo, ahi, blo, bhi)


@numba.njit(**_JIT)
def div(alo, ahi, blo, bhi):
    return _iv.div(alo, ahi, blo, bhi)


@numba.njit(**_JIT)
def sqr(alo, ahi):
    return _iv.sqr(alo, ahi)


@numba.njit(**_JIT)
def exp(alo, ahi):
    return _iv.exp(alo, ahi)


@numba.njit(**_JIT)
def diff(x, g):
    """An enclosure of x − g ≥ 0 for doubles 0 ≤ g ≤ x (exact by Sterbenz when x ≤ 2g or g = 0)."""
    r = x - g
    if x <= 2.0 * g or g == 0.0:
        return r, r
    return max(down(r), 0.0), up(r)


@numba.njit(**_JIT)
def weights(t, zp, zn):
    """(w lo, w hi, v lo, v hi) at exact t, Z_P = zp, Z_N = zn: w = Z_P/(Z_P + Z_N e^t), v = 1 − w."""
    if t >= 0.0:
        qlo, qhi = exp(-t, -t) if t < FAR else (0.0, E_FAR)
        qlo, qhi = mul_pos(zp, zp, qlo, qhi)
        dlo, dhi = add(qlo, qhi, zn, zn)
        wlo, whi = div(qlo, qhi, dlo, dhi)
        vlo, vhi = div(zn, zn, dlo, dhi)
    else:
        qlo, qhi = exp(t, t) if t > -FAR else (0.0, E_FAR)
        qlo, qhi = mul_pos(zn, zn, qlo, qhi)
        dlo, dhi = add(zp, zp, qlo, qhi)
        wlo, whi = div(zp, zp, dlo, dhi)
        vlo, vhi = div(qlo, qhi, dlo, dhi)
    return max(wlo, 0.0), min(whi, 1.0), max(vlo, 0.0), min(vhi, 1.0)


@numba.njit(**_JIT)
def mixture(theta, xp, xn, np_, nn, zplo, zphi, znlo, znhi, mplo, mphi, mnlo, mnhi, vplo, vphi, vnlo, vnhi,
            kplo, kphi, knlo, knhi, alo, ahi, blo, bhi, slo, shi, hessian):
    """(e lo, e hi, ∂θ̂/∂a lo, hi, ∂θ̂/∂b lo, hi, ∂²θ̂/∂a² lo, hi, ∂²θ̂/∂a∂b lo, hi, ∂²θ̂/∂b² lo, hi) of one
    task over the box from its groups' enclosures (module docstring); the last six are zeros unless
    ``hessian``. ``np_``, ``nn``: the groups' sizes; ``xp``, ``xn``: their smallest points."""
    if nn == 0:   # every weight on P: θ̂ = μ_P, ∂²θ̂/∂b² = K_P
        aplo, aphi = diff(xp, theta)
        aplo, aphi = add(aplo, aphi, mplo, mphi)
        return max(aplo, 0.0), aphi, 0.0, 0.0, -vphi, -vplo, 0.0, 0.0, 0.0, 0.0, kplo, kphi
    bnlo, bnhi = diff(theta, xn)
    bnlo, bnhi = sub(bnlo, bnhi, mnlo, mnhi)
    bnlo = max(bnlo, 0.0)
    if np_ == 0:  # every weight on N: θ̂ = μ_N, ∂²θ̂/∂b² = K_N
        return -bnhi, -bnlo, 0.0, 0.0, -vnhi, -vnlo, 0.0, 0.0, 0.0, 0.0, knlo, knhi
    aplo, aphi = diff(xp, theta)
    aplo, aphi = add(aplo, aphi, mplo, mphi)
    aplo = max(aplo, 0.0)
    # t = b·D − a over the box; w, v at the two corners of (t, Z_P, Z_N)
    dlo, dhi = diff(xp, xn)
    if slo == 0.0 and shi == 0.0:
        tlo, thi = mul_pos(blo, bhi, dlo, dhi)
    else:       # t = b·(D − s) − a′ on the parallelogram a = a′ + s·b
        dlo, dhi = sub(dlo, dhi, slo, shi)
        tlo, thi = mul(blo, bhi, dlo, dhi)
    tlo, thi = sub(tlo, thi, alo, ahi)
    wlo, _, _, vhi = weights(thi, zplo, znhi)
    _, whi, vlo, _ = weights(tlo, zphi, znlo)
    # e = w A_P − v B_N, Δ = A_P + B_N, ∂θ̂/∂a = w v Δ, ∂θ̂/∂b = −(w V_P + v V_N + w v Δ²)
    xlo, xhi = mul_pos(wlo, whi, aplo, aphi)
    ylo, yhi = mul_pos(vlo, vhi, bnlo, bnhi)
    elo, ehi = sub(xlo, xhi, ylo, yhi)
    delo, dehi = add(aplo, aphi, bnlo, bnhi)
    wvlo, wvhi = mul_pos(wlo, whi, vlo, vhi)
    galo, gahi = mul_pos(wvlo, wvhi, delo, dehi)
    s1lo, s1hi = mul_pos(wlo, whi, vplo, vphi)
    s2lo, s2hi = mul_pos(vlo, vhi, vnlo, vnhi)
    d2lo, d2hi = sqr(delo, dehi)
    s3lo, s3hi = mul_pos(wvlo, wvhi, d2lo, d2hi)
    slo, shi = add(s1lo, s1hi, s2lo, s2hi)
    slo, shi = add(slo, shi, s3lo, s3hi)
    if not hessian:
        return elo, ehi, galo, gahi, -shi, -slo, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0
    # with W = wv, σ = v − w: ∂²θ̂/∂a² = WΔσ, ∂²θ̂/∂a∂b = −WσΔ² + W(V_N − V_P),
    # ∂²θ̂/∂b² = wK_P + vK_N + WσΔ³ − 3WΔ(V_N − V_P)
    sglo, sghi = sub(vlo, vhi, wlo, whi)
    sglo, sghi = max(sglo, -1.0), min(sghi, 1.0)
    haalo, haahi = mul(galo, gahi, sglo, sghi)
    dvlo, dvhi = sub(vnlo, vnhi, vplo, vphi)
    p1lo, p1hi = mul(wvlo, wvhi, dvlo, dvhi)
    p2lo, p2hi = mul_pos(wvlo, wvhi, d2lo, d2hi)
    p2lo, p2hi = mul(p2lo, p2hi, sglo, sghi)
    hablo, habhi = sub(p1lo, p1hi, p2lo, p2hi)
    d3lo, d3hi = mul_pos(d2lo, d2hi, delo, dehi)
    q1lo, q1hi = mul(wlo, whi, kplo, kphi)
    q2lo, q2hi = mul(vlo, vhi, knlo, knhi)
    q3lo, q3hi = mul_pos(wvlo, wvhi, d3lo, d3hi)
    q3lo, q3hi = mul(q3lo, q3hi, sglo, sghi)
    q4lo, q4hi = mul(galo, gahi, dvlo, dvhi)
    q4lo, q4hi = mul(q4lo, q4hi, 3.0, 3.0)
    hbblo, hbbhi = add(q1lo, q1hi, q2lo, q2hi)
    hbblo, hbbhi = add(hbblo, hbbhi, q3lo, q3hi)
    hbblo, hbbhi = sub(hbblo, hbbhi, q4lo, q4hi)
    return elo, ehi, galo, gahi, -shi, -slo, haalo, haahi, hablo, habhi, hbblo, hbbhi
