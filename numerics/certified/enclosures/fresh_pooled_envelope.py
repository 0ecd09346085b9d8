"""The pooled estimator's fresh-context risk bracketed through its weight's envelope, in closed form.

The pooled estimator puts the one-head and the reflected score of each point into one softmax
(docs/model.md §5): a point's weight is w(x) = v(x) + v′(x) with v = e^{a·1{x ≥ θ} − b x} and
v′ = e^{a·1{x < θ} − b(1 − x)}. On each side of θ one of the two is the larger when a ≥ b:

    right of θ (x ≥ θ):  v = e^{a − b x},         v′/v = e^{2bx − a − b} ≤ e^{b − a}  (largest at x = 1);
    left of θ (x < θ):   v′ = e^{a − b + b x},   v/v′ = e^{b − a − 2bx} ≤ e^{b − a}  (largest at x = 0).

Write w̃ for that larger exponential (the *envelope*: one exponential per side, both falling away
from θ, so its risk has the closed forms of the one-head law; the ``"pooled-envelope"`` segments of
:func:`~stumpcheck.numerics.certified.enclosures.fresh_segments.segments`). Then w = w̃·(1 + r) with
0 ≤ r ≤ ρ = e^{b − a} at every x (the bound holds for any a, b > 0; it is small when a − b is large, as
on the calibration relation a ≈ b + 2 log b, where ρ ≈ b⁻²).

**Lemma (weights perturbed by factors in [1, 1 + ρ]).** For any points xᵢ ∈ [0, 1],
|θ̂_w − θ̂_w̃| ≤ ρ. Proof: Σ w̃ᵢ (xᵢ − θ̂_w̃) = 0, so θ̂_w − θ̂_w̃ = Σ wᵢ (xᵢ − θ̂_w̃)/Σ wᵢ =
Σ w̃ᵢ rᵢ (xᵢ − θ̂_w̃)/Σ wᵢ, and |xᵢ − θ̂_w̃| ≤ 1 (both in [0, 1]), rᵢ ≤ ρ, Σ w̃ᵢ ≤ Σ wᵢ. ∎

So, context by context, |θ̂_w − θ| lies within ρ of |θ̂_w̃ − θ|, and with the envelope's certified
bias and MSE (:func:`~stumpcheck.numerics.certified.enclosures.fresh_risk.fresh_context_risk`):

    E|θ̂_w − θ| ≥ E|θ̂_w̃ − θ| − ρ ≥ |bias_w̃| − ρ,     E|θ̂_w − θ| ≤ E|θ̂_w̃ − θ| + ρ ≤ √MSE_w̃ + ρ,
    |bias_w − bias_w̃| ≤ ρ,     |√MSE_w − √MSE_w̃| ≤ ρ  (Minkowski).

The pooled risk by quadrature (:mod:`~stumpcheck.numerics.certified.enclosures.fresh_pooled`) costs one
to two orders of magnitude more; at (25, 20, 0.4, 10), where ρ = e⁻⁵, the two agree far inside ρ
(tests/test_fresh_pooled_envelope.py checks that the pooled balls lie within ρ of the envelope's).

Evidence: certified (Arb balls for the envelope's risk and for ρ, rounded outward to decimal strings).
"""

from __future__ import annotations

from flint import arb, ctx

from stumpcheck.numerics.certified.enclosures.fresh_segments import POOLED_ENVELOPE

__all__ = ["pooled_risk_bracket", "perturbation_bound"]

_PREC = 128


def perturbation_bound(a, b) -> arb:
    """ρ = e^{b − a} as an Arb ball (a, b numbers or decimal strings): the largest relative weight the smaller
    head adds to the envelope anywhere on [0, 1]."""
    with ctx.workprec(_PREC):
        return (arb(str(b)) - arb(str(a))).exp()


def _text(value: arb, direction: str) -> str:
    """The ball's lower (``down``) or upper (``up``) end as a 17-digit decimal string rounded outward."""
    import math

    end = float(value.lower()) if direction == "down" else float(value.upper())
    end = math.nextafter(end, -math.inf if direction == "down" else math.inf)
    return repr(end)


def pooled_risk_bracket(a, b, theta, N: int, *, dps: int = 15, rel_width=None) -> dict:
    """Certified brackets of the pooled estimator's fresh-context risk at a frozen (a, b), θ and N:

    ``mean_abs_error`` [max(0, |bias_w̃| − ρ), √MSE_w̃ + ρ] ∋ E|θ̂_N − θ|, ``bias`` [bias_w̃ − ρ, bias_w̃ + ρ],
    ``root_mse`` [√MSE_w̃ − ρ, √MSE_w̃ + ρ] (decimal strings rounded outward), with ``rho`` (its upper end) and
    the envelope's own risk (``envelope``: :meth:`FreshRisk.to_dict`). a, b, θ as for
    :func:`~stumpcheck.numerics.certified.enclosures.fresh_risk.fresh_context_risk` (points, not boxes), and
    so are ``dps`` and ``rel_width``."""
    from stumpcheck.numerics.certified.enclosures.fresh_risk import fresh_context_risk

    risk = fresh_context_risk(a, b, theta, int(N), estimator=POOLED_ENVELOPE, dps=dps, rel_width=rel_width)
    with ctx.workprec(_PREC):
        rho = perturbation_bound(a, b)
        rho = arb(rho.upper())
        bias, mse = risk.bias.to_arb(), risk.mse.to_arb()
        root = arb(mse.lower()).max(arb(0)).sqrt().union(arb(mse.upper()).sqrt())
        low = (abs(bias) - rho).max(arb(0))
        high = root + rho
        return {"mean_abs_error": [_text(low, "down") if low.lower() > 0 else "0", _text(high, "up")],
                "bias": [_text(bias - rho, "down"), _text(bias + rho, "up")],
                "root_mse": [_text((root - rho).max(arb(0)), "down"), _text(root + rho, "up")],
                "rho": _text(rho, "up"), "envelope": risk.to_dict()}
