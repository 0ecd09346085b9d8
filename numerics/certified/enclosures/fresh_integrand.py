"""The s-integrand of the exact fresh-context risk, its magnitude bound on complex balls, and its tails.

With U = Σᵢ (xᵢ − θ)v(xᵢ), V = Σᵢ v(xᵢ) over N i.i.d. points and 1/V = ∫₀^∞ e^{−sV} ds,
1/V² = ∫₀^∞ s e^{−sV} ds (docs/fresh_risk.md §1),

    bias = ∫₀^∞ N A₁ φ^{N−1} ds,     MSE = ∫₀^∞ s [N A₂ φ^{N−1} + N(N − 1) A₁² φ^{N−2}] ds,

φ(s) = E e^{−s v}, A_k(s) = E[((x − θ)v)^k e^{−s v}] (:mod:`stumpcheck.numerics.certified.enclosures.fresh_segments`).
The variable is σ with s = e^{σ − K}, ds = s dσ, K ≈ log(N·E v) (an exact float: any value is
correct, this one puts the bulk of the integrand near σ = 0). The integrand is entire in σ on
|Im σ| < π/2 (where Re s > 0); ``acb.integral`` gets g = bias-integrand + i·κ·MSE-integrand,
both real on the real line, so one integral gives both (κ an exact positive scale).

* **Nodes** (balls of radius ≤ 2^{−prec/2}): the closed forms; φ^{N−1} = exp((N − 1)·log1p(−q))
  with q = 1 − φ computed directly (stable when φ is near 1, as for large N), or exp((N − 1)·log φ)
  when q ≥ ½ (φ is then computed directly from E₁). The logarithms see Re q < ½ or Re φ > 0 only,
  so they are analytic on the ball.
* **Wide balls** (``acb.integral``'s bounds on ellipses, and its trial enclosures): the bound
  |A_k(s)| ≤ Ā_k(Re s) := E[|x − θ|^k v^k e^{−Re(s) v}], |φ(s)| ≤ φ(Re s), both decreasing in
  Re s, with r_lo ≤ Re s ≤ r_hi and |s| ≤ s_max on the ball:
  |bias-integrand| ≤ N·M₁·φ(r_lo)^{N−1} and |MSE-integrand| ≤ N·M₂·φ(r_lo)^{N−1} + N(N − 1)·M₁²·φ(r_lo)^{N−2},
  where M_k ≥ sup |s^k A_k(s)| is the smaller of the ratio form (s_max/r_lo)^k·r_lo^k Ā_k(r_lo) and the
  unimodal form of :meth:`RiskIntegrand.bounds`. A ball with |Im σ| ≥ 1.4 gives a non-finite value
  (the integrator then subdivides).

**Tails** (rigorous, added to the result's radius), with Δ_max = max(θ, 1 − θ) ≥ |x − θ|,
s_lo = e^{σ_lo − K}, s_hi = e^{σ_hi − K}:

* s < s_lo: |∫ N A₁ φ^{N−1}| ≤ N s_lo Δ_max E v, and the MSE part lies in
  [0, ½ s_lo² Δ_max² (N v_max E v + N(N − 1)(E v)²)] (|A₁| ≤ Δ_max E v, A₂ ≤ Δ_max² v_max E v, φ ≤ 1).
* s > s_hi: φ decreases, ∫_{s_hi}^∞ v e^{−sv} ds = e^{−s_hi v}, and (1 + y)e^{−y} ≤ 2e^{−y/2}, so
  |∫ N A₁ φ^{N−1}| ≤ N Δ_max φ(s_hi)^N and the MSE part lies in
  [0, Δ_max² (2N φ(s_hi)^{N−1} φ(s_hi/2) + ½ N(N − 1) φ(s_hi)^{N−2} φ(s_hi/2)²)]
  (for the cross term (E[v e^{−sv}])² = E[v₁v₂ e^{−s(v₁+v₂)}] and v₁v₂ ≤ (v₁ + v₂)²/4).
"""

from __future__ import annotations

from flint import acb, arb

__all__ = ["RiskIntegrand"]

#: |Im σ| beyond which the integrand refuses (non-finite): cos(1.4) = 0.17 keeps Re s > 0 with room.
_MAX_IMAG = 1.4


class RiskIntegrand:
    """The σ-integrand g = bias + i·κ·MSE at the working precision ``prec``.

    ``weights`` describes the per-point weight law (:class:`~stumpcheck.numerics.certified.enclosures.fresh_segments.ClosedFormWeights`
    or :class:`~stumpcheck.numerics.certified.enclosures.fresh_pooled.PooledWeights`): its ``sums(σ)`` (q, φ, s·A₁, s²·A₂,
    Σ|s·S₁|), ``K``, ``mean_v`` = e^{−K}·E v, ``max_v`` ≥ e^{−K}·max v and ``max_length`` ≥ max |x − θ|.
    """

    def __init__(self, weights, N: int, prec: int, kappa: arb = arb(1)):
        self.weights, self.N, self.prec, self.kappa = weights, N, prec, kappa
        self.max_length, self.mean_v, self.max_v = weights.max_length, weights.mean_v, weights.max_v
        self.calls = 0

    # ------------------------------------------------------------------ evaluation

    def sums(self, sigma: acb):
        return self.weights.sums(sigma)

    def _log_phi(self, sums, analytic: bool):
        """log φ at the ball, or None when neither form is safe there."""
        if sums.q.real.upper() < 0.5:
            return (-sums.q).log1p()
        if sums.phi.real > 0:
            return sums.phi.log(analytic=analytic)
        if sums.q.real.upper() < 1:  # both wide (a box of parameters): log1p is still analytic here
            return (-sums.q).log1p()
        return None

    def risk_terms(self, sigma: acb, analytic: bool = False):
        """(bias-integrand, MSE-integrand) at σ (acb), or None where the closed forms fail on this ball."""
        sums = self.sums(sigma)
        if sums is None:
            return None
        N = self.N
        if N == 1:
            return sums.s_a1, sums.s2_a2
        log_phi = self._log_phi(sums, analytic)
        if log_phi is None:
            return None
        power1 = ((N - 1) * log_phi).exp()
        bias = N * sums.s_a1 * power1
        mse = N * sums.s2_a2 * power1
        if N >= 2:
            power2 = ((N - 2) * log_phi).exp()
            mse += N * (N - 1) * sums.s_a1 * sums.s_a1 * power2
        return bias, mse

    def phi_upper(self, sigma: arb) -> arb:
        """An upper bound of φ(e^{σ − K}) at the exact real point σ (as an exact arb)."""
        sums = self.sums(acb(sigma))
        return arb(1) if sums is None else self._phi_upper_of(sums)

    def _phi_upper_of(self, sums) -> arb:
        best = arb(1)
        for candidate in (1 - sums.q.real, sums.phi.real):
            if candidate.is_finite() and candidate.upper() < best:
                best = arb(candidate.upper())
        return arb(0).max(best)

    def bounds(self, sigma: acb) -> tuple[arb, arb] | None:
        """Upper bounds of |bias-integrand| and |MSE-integrand| over the whole (wide) ball σ.

        With r_lo ≤ Re s ≤ r_hi on the ball and |s| ≤ Re s/cos(Im σ): |s·A₁(s)| ≤ sup_r r·Ā₁(r)/cos and
        |s²A₂(s)| ≤ sup_r r²Ā₂(r)/cos², bounded either by the ratio form (s_max/r_lo)^k·r_lo^kĀ_k(r_lo) or, as
        y e^{−y} and y² e^{−y} are unimodal (peaks 1/e at y = 1, 4/e² at y = 2), by the values at r_lo and r_hi
        plus the peak times E[|x − θ|^k; r_lo v ≤ y* ≤ r_hi v] (the weights' ``level_measure``); the smaller wins.
        """
        imag = abs(sigma.imag).upper()
        if not imag < _MAX_IMAG:
            return None
        cos = arb(arb(imag).cos().lower())
        lowest = arb(arb(sigma.real.lower() + cos.log()).lower())
        log_ratio = arb(arb(sigma.real.upper() - lowest).upper())
        low = self.sums(acb(lowest))
        if low is None:
            return None
        phi = self._phi_upper_of(low)
        ratio = log_ratio.exp()
        a1 = ratio * arb(low.s_a1_abs.real.upper())
        a2 = ratio * ratio * arb(low.s2_a2.real.upper())
        measure = self.weights.level_measure(log_ratio) if log_ratio > 1 else None
        if measure is not None:
            high = self.sums(acb(arb(sigma.real.upper())))
            if high is not None:
                inv = 1 / cos
                b1 = inv * (arb(low.s_a1_abs.real.upper()) + arb(high.s_a1_abs.real.upper()) + measure[0])
                b2 = inv * inv * (arb(low.s2_a2.real.upper()) + arb(high.s2_a2.real.upper()) + measure[1])
                a1, a2 = arb(a1.upper()).min(arb(b1.upper())), arb(a2.upper()).min(arb(b2.upper()))
        N = self.N
        p1 = phi ** (N - 1)
        bias = N * a1 * p1
        mse = N * a2 * p1
        if N >= 2:
            mse += N * (N - 1) * a1 * a1 * phi ** (N - 2)
        return bias, mse

    def __call__(self, sigma: acb, analytic: bool) -> acb:
        self.calls += 1
        imag = abs(sigma.imag).upper()
        if not imag < _MAX_IMAG:
            return acb(arb.nan())
        narrow = max(sigma.real.rad(), sigma.imag.rad()) < arb(2) ** (-(self.prec // 2))
        if narrow:
            terms = self.risk_terms(sigma, analytic)
            if terms is not None:
                return terms[0] + acb(0, 1) * (self.kappa * terms[1])
        bound = self.bounds(sigma)
        if bound is None:
            return acb(arb.nan())
        radius = arb((bound[0] + self.kappa * bound[1]).upper())
        return acb(arb(0, radius), arb(0, radius))

    # ------------------------------------------------------------------ tails

    def lower_tails(self, sigma_lo: arb) -> tuple[arb, arb]:
        """Bounds of the parts below s_lo: |bias part| and MSE part (both ≥ 0 upper bounds)."""
        N, ev, d = self.N, self.mean_v, self.max_length
        s = sigma_lo.exp()
        bias = N * s * d * ev
        mse = s * s / 2 * d * d * (N * self.max_v * ev + N * (N - 1) * ev * ev)
        return arb(bias.upper()), arb(mse.upper())

    def upper_tails(self, sigma_hi: arb) -> tuple[arb, arb]:
        """Bounds of the parts above s_hi: |bias part| and MSE part."""
        N, d = self.N, self.max_length
        phi = self.phi_upper(sigma_hi)
        half = self.phi_upper(arb((sigma_hi - arb(2).log()).lower()))
        bias = N * d * phi ** N
        mse = d * d * 2 * N * phi ** (N - 1) * half
        if N >= 2:
            mse += d * d * N * (N - 1) / 2 * phi ** (N - 2) * half * half
        return arb(bias.upper()), arb(mse.upper())
