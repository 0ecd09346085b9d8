"""One task of a corpus: enclosures of θ̂ − θ, ∂θ̂/∂a, ∂θ̂/∂b over an (a, b) box, compiled float64 intervals.

**The algebra** (one head, docs/model.md §2–§3). A task has points x₁ … xₙ ∈ [0, 1], a threshold
θ ∈ [0, 1], labels yᵢ = 1{xᵢ ≥ θ} (taken on the exact doubles: a tie xᵢ = θ is labelled 1), scores
sᵢ = a·yᵢ − b·xᵢ with b > 0, weights αᵢ = e^{sᵢ}/Σₖ e^{sₖ} and θ̂ = Σ αᵢ xᵢ. Split the points into the
groups P (y = 1) and N (y = 0), with smallest points x*_P ≥ θ > x*_N; in a group g the scores are
s*_g − b·dᵢ with dᵢ = xᵢ − x*_g ≥ 0, so with uᵢ = e^{−b dᵢ} ∈ (0, 1] (the group's scores shifted by
their maximum: no overflow) and

    Z_g = Σ_g uᵢ ∈ [1, n_g],   m_g = Σ_g uᵢdᵢ / Z_g,   V_g = Σ_g uᵢ (dᵢ − m_g)² / Z_g,
    w = Z_P / (Z_P + Z_N e^{t}) = Z_P e^{−t} / (Z_P e^{−t} + Z_N),   v = 1 − w,   t = b·D − a,  D = x*_P − x*_N,

the identities (the law of total mean and variance for α = w·α_P + v·α_N, and the exponential family
∂ log αᵢ/∂a = yᵢ − ȳ, ∂ log αᵢ/∂b = −(xᵢ − θ̂)) are

    A_P = μ_P − θ = (x*_P − θ) + m_P ≥ 0,    B_N = θ − μ_N = (θ − x*_N) − m_N > 0,   Δ = A_P + B_N,
    e = θ̂ − θ = w·A_P − v·B_N,
    ∂θ̂/∂a = Cov_α(x, y) = w·v·Δ,
    ∂θ̂/∂b = −Var_α(x) = −(w·V_P + v·V_N + w·v·Δ²).

With ``hessian``, also the second derivatives (joint third cumulants; with W = w·v, σ = v − w and the
centred third moments K_g = Σ_g uᵢ(dᵢ − m_g)³/Z_g, from ∂w/∂a = W, ∂w/∂b = −WΔ, ∂Δ/∂b = V_N − V_P,
∂V_g/∂b = −K_g):

    ∂²θ̂/∂a² = W·Δ·σ,   ∂²θ̂/∂a∂b = W·(V_N − V_P) − W·σ·Δ²,
    ∂²θ̂/∂b² = κ₃(x) = w·K_P + v·K_N + W·σ·Δ³ − 3·W·Δ·(V_N − V_P);

K_g is a signed sum, taken in intervals (each uᵢ enclosed as [r(b_hi)(1 − ε), r(b_lo)(1 + ε)], see
below), so it is accurate to the absolute scale of Σuᵢ|dᵢ − m_g|³, not relatively.

A group that is empty drops out (w = 0 without P, w = 1 without N, exactly). Every quantity but e is a
sum or product of non-negative terms, and the variance is *centred* (V_g sums uᵢ(dᵢ − m_g)², never
Σuᵢdᵢ²/Z − m_g², so it keeps its relative precision when V_g ≪ m_g²). The two weights w and v are
enclosed separately, each from a quotient of positive terms with one exponential of −|t| (the form
chosen by the sign of t), so neither cancels nor overflows.

**Over a box** a ∈ [a_lo, a_hi], b ∈ [b_lo, b_hi] (a point is the degenerate box):

* uᵢ, Z_g decrease in b (dᵢ ≥ 0) and m_g decreases in b (dm_g/db = −V_g ≤ 0); so their ranges are
  enclosed from two point evaluations, at b_hi (lower ends) and at b_lo (upper ends): uᵢ ∈ [uᵢ(b_hi),
  uᵢ(b_lo)], Z_g ∈ [Z_g(b_hi), Z_g(b_lo)], m_g ∈ [m_g(b_hi), m_g(b_lo)], each end itself an interval
  enclosure at that b (so the range is enclosed up to rounding, whatever the width in b);
* V_g: at each b of the box, V_g(b) = Σ uᵢ(b)(dᵢ − m_g(b))²/Z_g(b) with uᵢ(b) ∈ [uᵢ], m_g(b) ∈ [m_g],
  Z_g(b) ∈ [Z_g]; evaluating the same expression on these intervals (the square as the range of
  x² over [dᵢ − m_g], a quotient of a non-negative numerator by a positive denominator) therefore
  encloses V_g(b) for every b of the box: the inclusion property of interval arithmetic, each
  variable replaced by an interval containing its value at that b. It is no longer the range up to
  rounding (the dependence on b through uᵢ, m_g and Z_g is forgotten), and widens with the box;
* w is increasing in Z_P and decreasing in Z_N and t, and v the reverse, so both are enclosed at the
  two corners (t_hi, Z_P lo, Z_N hi) and (t_lo, Z_P hi, Z_N lo) of the product of the three ranges,
  which contains (t, Z_P, Z_N)(a, b) for every (a, b) of the box; t = b·D − a over the box is [b]·[D] − [a];
* A_P, B_N, Δ, e and the derivatives are then interval expressions of enclosures: each contains its
  value at every (a, b) of the box (inclusion again).

**Sheared boxes.** Only t depends on a. On the parallelogram P = {(a′ + s·b, b) : a′ ∈ [a′], b ∈ [b]}
(a band along a line of slope s in the (b, a) plane, such as a strip around a curve a = A(b)),
t = b·D − a = b·(D − s) − a′, so t over P is enclosed by [b]·([D] − [s]) − [a′] (s itself may be an
interval containing the exact slope); every other quantity depends on b alone and keeps its range over
[b]. The result contains the values at every point of P, and is much narrower than over P's bounding
box when |D − s| ≪ s: along a = A(b) with A′ ≈ 1, t varies by (1 − D)·Δb instead of (1 + D)·Δb + Δa.

**Floating point.** Two kinds of arithmetic, both resting on
:data:`~stumpcheck.numerics.certified.fast.rounding.ASSUMPTIONS` (binary64, round to nearest (RN),
no fused operations, libm's exp within 2 ulp). (1) Everything after the sums, the centred squares
(dᵢ − m_g)² and the differences xᵢ − x*_g of pass two are intervals of
:mod:`stumpcheck.numerics.certified.fast.interval`, each result widened outward by a step (proof in
:mod:`stumpcheck.numerics.certified.fast.rounding`); a difference of two doubles 0 ≤ x*_g ≤ xᵢ is
exact when xᵢ ≤ 2x*_g or x*_g = 0 (Sterbenz's lemma). (2) The sums over the points (the costly
part) run in plain RN and are bounded afterwards, per group and end of the box, by the standard
error analysis (u = 2⁻⁵³, γ_k = ku/(1 − ku)):

* a weight: d = RN(xᵢ − x*_g), t = RN(b·d), r = exp(−t) from libm. With τ = b·δ the exact exponent
  (δ the exact difference), |t − τ| ≤ γ₂τ + 2⁻¹⁰⁷⁴, and |r − e^{−t}| ≤ 2 ulp ≤ 2⁻⁵¹e^{−t} (t ≤ 600, so
  e^{−t} is normal); hence e^{−τ} ∈ r·[1 − ρ, 1 + ρ] with ρ = (1 + t_max)·2⁻⁴⁹, t_max the largest t
  of the group (a generous bound of 2⁻⁵⁰ + 2.01·t_max·2⁻⁵³ + 2⁻¹⁰⁰⁰ and its products). Beyond
  t = 600 the weight is counted as "far": e^{−τ} ≤ e^{−600/(1+γ₂)} < 2⁻⁸⁶⁵ (and 0 as its lower end),
  which keeps subnormal numbers (slow on x86) out of every sum;
* over a box the weight at b_lo comes from the one at b_hi without a second exponential:
  e^{−τ(b_lo)} = e^{−τ(b_hi)}·e^{H}, H = (b_hi − b_lo)·δ, and 1 + H ≤ e^{H} ≤ 1 + H + H² for
  0 ≤ H ≤ 1.79; used when h = RN(RN(b_hi − b_lo)·d) ≤ ½ (so H ≤ 0.51), r·(1 + h) and r·((1 + h) + h²)
  in RN for the lower and the upper end (about ten roundings more, relative ≤ 11u, and the same ρ);
  a far point at b_hi with t > 601 stays far at b_lo; otherwise a second exp at b_lo;
* a sum of k ≤ n non-negative terms each carrying at most 12 relative roundings and the relative ρ,
  computed in RN, is within the relative ρ + γ_{n+12} ≤ ρ + (n + 16)·2⁻⁵² of the exact sum of the
  exact terms (recursive summation of non-negative terms), and each product r·d, r·c below the
  normal range adds an absolute error ≤ 2⁻¹⁰⁷⁵ < 2⁻¹⁰⁰⁰; for these small numbers
  (1 + x)(1 + y)/(1 − z) ≤ 1 + 2(x + y + z), so the exact sum lies in
  [Ŝ_lo·(1 − ε) − n·2⁻¹⁰⁰⁰, Ŝ_hi·(1 + ε) + n·2⁻¹⁰⁰⁰ + (far count)·2⁻⁸⁶⁵], ε = 2(ρ + (n + 16)·2⁻⁵²),
  evaluated with outward widening (Ŝ_lo, Ŝ_hi: the RN sums of the terms' lower and upper ends).
  Valid for n ≤ 10¹¹ (ε ≤ 10⁻³).

Domain: a finite, 0 < b_lo ≤ b_hi finite, x ∈ [0, 1], θ ∈ [0, 1] (validated by the caller,
:mod:`stumpcheck.numerics.certified.fast.corpus`). Precision: at a point, a few dozen ulps of each
term's scale (sums of n terms add one rounding each).
"""

from __future__ import annotations

import math

import numba

from stumpcheck.numerics.certified.fast.corpus_mixture import E_FAR, FAR, add, div, mixture, mul, sqr, sub
from stumpcheck.numerics.certified.fast.corpus_mixture import diff as _diff
from stumpcheck.numerics.certified.fast.rounding import down, up

__all__ = ["task_box", "FAR", "E_FAR"]

_JIT = dict(cache=True, fastmath=False, error_model="numpy")
_INF = math.inf

# The interval operations (add, …, _diff) are compiled wrappers shared with the mixture (corpus_mixture
# says why).
_TINY = 2.0 ** -1000   # > the underflow error 2⁻¹⁰⁷⁵ of one product, per term


@numba.njit(**_JIT)
def _slack(tmax, n):
    """ε = 2(ρ + (n + 16)·2⁻⁵²), ρ = (1 + t_max)·2⁻⁴⁹: the relative error bound of a pass's sums (module docstring)."""
    return up(2.0 * up(up((1.0 + tmax) * 2.0 ** -49) + up((n + 16.0) * 2.0 ** -52)))


@numba.njit(**_JIT)
def _bounded(lo, hi, far, eps, n):
    """[lo(1 − ε) − n·2⁻¹⁰⁰⁰, hi(1 + ε) + n·2⁻¹⁰⁰⁰ + far·2⁻⁸⁶⁵] from round-to-nearest sums lo ≤ hi of
    non-negative terms (module docstring); the lower end clamped at 0."""
    slack = up(n * _TINY)
    lo = max(down(down(lo * down(1.0 - eps)) - slack), 0.0)
    hi = up(up(hi * up(1.0 + eps)) + up(slack + up(far * E_FAR)))
    return lo, hi


@numba.njit(**_JIT)
def _sums(zl, z, sl, s, far, eps, n):
    """Enclosures of Z and S from round-to-nearest sums of their terms' lower (zl, sl) and upper (z, s)
    ends (module docstring); Z ≥ 1 if n > 0."""
    zlo, zhi = _bounded(zl, z, far, eps, n)
    slo, shi = _bounded(sl, s, far, eps, n)
    if n > 0:
        zlo = max(zlo, 1.0)
    return zlo, zhi, slo, shi


@numba.njit(**_JIT)
def task_box(row, theta, alo, ahi, blo, bhi, slo, shi, scratch, hessian):
    """(e lo, e hi, ∂θ̂/∂a lo, hi, ∂θ̂/∂b lo, hi, ∂²θ̂/∂a² lo, hi, ∂²θ̂/∂a∂b lo, hi, ∂²θ̂/∂b² lo, hi) of one
    task over the box (module docstring); the last six are zeros unless ``hessian``.

    With a shear s ∈ [slo, shi] the set is the parallelogram {(a′ + s·b, b) : a′ ∈ [alo, ahi],
    b ∈ [blo, bhi]} (module docstring, "Sheared boxes"); slo = shi = 0 is the axis box.

    ``row``: the task's n points; ``scratch``: at least 2n doubles, overwritten.
    """
    n = row.shape[0]
    point = blo == bhi
    xp = _INF
    xn = _INF
    np_ = 0
    for i in range(n):
        xi = row[i]
        if xi >= theta:
            np_ += 1
            xp = min(xp, xi)
        else:
            xn = min(xn, xi)
    nn = n - np_
    # pass 1 (round to nearest, bounded afterwards): Ẑ = Σ r, Ŝ = Σ r·d per group (p: P, n: N) at b_hi
    # (…1) and b_lo (…0), the largest exponent t kept, the count of far points; r to scratch
    zp1 = zp0 = sp1 = sp0 = zn1 = zn0 = sn1 = sn0 = 0.0
    zpl = spl = znl = snl = 0.0   # lower-end sums at b_lo (r(b_lo) ≥ r(b_hi)·(1 + h), h = (b_hi − b_lo)·d)
    tp1 = tp0 = tn1 = tn0 = 0.0
    fp1 = fp0 = fn1 = fn0 = 0
    db = bhi - blo
    for i in range(n):
        xi = row[i]
        inp = xi >= theta
        d = xi - (xp if inp else xn)
        t1 = bhi * d
        far1 = t1 > FAR
        r1 = 0.0 if far1 else math.exp(-t1)
        t0 = t1
        if point:
            far0, r0, r0l = far1, r1, r1
        else:
            h = db * d
            if h <= 0.5 and not far1:        # e^{H} ∈ [1 + H, 1 + H + H²]: no second exponential
                far0 = False
                r0l = r1 * (1.0 + h)
                r0 = r1 * ((1.0 + h) + h * h)
            elif h <= 0.5 and t1 > FAR + 1.0:  # τ(b_lo) = τ(b_hi) − H > 600 still
                far0, r0, r0l = True, 0.0, 0.0
            else:
                t0 = blo * d
                far0 = t0 > FAR
                r0 = 0.0 if far0 else math.exp(-t0)
                r0l = r0
        scratch[2 * i] = r1
        scratch[2 * i + 1] = E_FAR if far0 else r0
        if inp:
            if far1:
                fp1 += 1
            else:
                zp1 += r1
                sp1 += r1 * d
                tp1 = max(tp1, t1)
            if far0:
                fp0 += 1
            else:
                zp0 += r0
                sp0 += r0 * d
                zpl += r0l
                spl += r0l * d
                tp0 = max(tp0, t0)
        else:
            if far1:
                fn1 += 1
            else:
                zn1 += r1
                sn1 += r1 * d
                tn1 = max(tn1, t1)
            if far0:
                fn0 += 1
            else:
                zn0 += r0
                sn0 += r0 * d
                znl += r0l
                snl += r0l * d
                tn0 = max(tn0, t0)
    # ranges over the box: Z_g ∈ [Z_g(b_hi) lo, Z_g(b_lo) hi], m_g ∈ [m_g(b_hi) lo, m_g(b_lo) hi]
    # (a non-empty group holds its smallest point, whose weight is e⁰ = 1: Z_g ≥ 1 exactly)
    ep = _slack(max(tp0, tp1), np_)
    en = _slack(max(tn0, tn1), nn)
    zp1lo, zp1hi, sp1lo, sp1hi = _sums(zp1, zp1, sp1, sp1, fp1, ep, np_)
    zp0lo, zp0hi, sp0lo, sp0hi = _sums(zpl, zp0, spl, sp0, fp0, ep, np_)
    zn1lo, zn1hi, sn1lo, sn1hi = _sums(zn1, zn1, sn1, sn1, fn1, en, nn)
    zn0lo, zn0hi, sn0lo, sn0hi = _sums(znl, zn0, snl, sn0, fn0, en, nn)
    zplo, zphi = zp1lo, zp0hi
    znlo, znhi = zn1lo, zn0hi
    mplo = mphi = mnlo = mnhi = 0.0
    if np_ > 0:
        mplo, _ = div(sp1lo, sp1hi, zp1lo, zp1hi)
        _, mphi = div(sp0lo, sp0hi, zp0lo, zp0hi)
        mplo = max(mplo, 0.0)
    if nn > 0:
        mnlo, _ = div(sn1lo, sn1hi, zn1lo, zn1hi)
        _, mnhi = div(sn0lo, sn0hi, zn0lo, zn0hi)
        mnlo = max(mnlo, 0.0)
    # pass 2: the centred second moments Q_g = Σ u (d − m_g)², the square in intervals, the sum in
    # round to nearest (lower ends with u's lower end r(b_hi), upper ends with r(b_lo)), bounded after
    qplo = qphi = qnlo = qnhi = 0.0
    kplo = kphi = knlo = knhi = 0.0   # third central moments Σ u (d − m_g)³ (signed: interval sums)
    for i in range(n):
        xi = row[i]
        inp = xi >= theta
        dlo, dhi = _diff(xi, xp if inp else xn)
        if inp:
            clo, chi = sub(dlo, dhi, mplo, mphi)
        else:
            clo, chi = sub(dlo, dhi, mnlo, mnhi)
        if hessian:
            c2lo, c2hi = sqr(clo, chi)
            c3lo, c3hi = mul(clo, chi, c2lo, c2hi)
            # the stored r are round-to-nearest values: u ∈ [r(b_hi)(1 − ε), r(b_lo)(1 + ε)] (ε ≥ ρ)
            eg = ep if inp else en
            ulo = max(down(scratch[2 * i] * down(1.0 - eg)), 0.0)
            uhi = up(scratch[2 * i + 1] * up(1.0 + eg))
            c3lo, c3hi = mul(ulo, uhi, c3lo, c3hi)
            if inp:
                kplo, kphi = add(kplo, kphi, c3lo, c3hi)
            else:
                knlo, knhi = add(knlo, knhi, c3lo, c3hi)
        clo, chi = sqr(clo, chi)
        if inp:
            qplo += scratch[2 * i] * clo
            qphi += scratch[2 * i + 1] * chi
        else:
            qnlo += scratch[2 * i] * clo
            qnhi += scratch[2 * i + 1] * chi
    qplo, qphi = _bounded(qplo, qphi, 0, ep, np_)
    qnlo, qnhi = _bounded(qnlo, qnhi, 0, en, nn)
    vplo = vphi = vnlo = vnhi = 0.0
    if np_ > 0:
        vplo, vphi = div(qplo, qphi, zplo, zphi)
        vplo = max(vplo, 0.0)
    if nn > 0:
        vnlo, vnhi = div(qnlo, qnhi, znlo, znhi)
        vnlo = max(vnlo, 0.0)
    if hessian and np_ > 0:
        kplo, kphi = div(kplo, kphi, zplo, zphi)
    if hessian and nn > 0:
        knlo, knhi = div(knlo, knhi, znlo, znhi)
    return mixture(theta, xp, xn, np_, nn, zplo, zphi, znlo, znhi, mplo, mphi, mnlo, mnhi, vplo, vphi,
                   vnlo, vnhi, kplo, kphi, knlo, knhi, alo, ahi, blo, bhi, slo, shi, hessian)
