"""The corpus loss L̂ and its gradient ∇L̂ at one exact point (a, b), enclosed in Arb balls.

For a corpus (x, θ) (m tasks of n points, docs/model.md §3, one head) and rationals a, b > 0,

    L̂ = (1/m) Σⱼ ½ eⱼ²,  ∂L̂/∂a = (1/m) Σⱼ eⱼ Cov_α(x, y),  ∂L̂/∂b = −(1/m) Σⱼ eⱼ Var_α(x),

with eⱼ = θ̂ⱼ − θⱼ, α the softmax of sᵢ = a·yᵢ − b·xᵢ, yᵢ = 1{xᵢ ≥ θⱼ} on the exact doubles. Each task
is evaluated with its scores shifted by their largest (no overflow) and its moments taken about the
heaviest point x_c (θ̂ = x_c + Σαᵢ(xᵢ − x_c), the differences of doubles exact), so the balls stay
narrow when the weights are concentrated. This is the independent re-checker of the fast layer's
corpus enclosures (:mod:`stumpcheck.numerics.certified.fast.corpus`): a different arithmetic
(python-flint's arb, ``prec`` bits) and a different algebra (no groups, no monotone ranges).

Cost: a Python loop, about 1 µs per point and operation (0.3–0.5 s at m = n = 256).
"""

from __future__ import annotations

from fractions import Fraction

from flint import arb, ctx, fmpq

__all__ = ["corpus_gradient_arb"]


def _ball(v) -> arb:
    if isinstance(v, Fraction):
        return arb(fmpq(v.numerator, v.denominator))
    return arb(v)


def corpus_gradient_arb(x, theta, a, b, *, prec: int = 128) -> tuple[arb, arb, arb]:
    """(L̂, ∂L̂/∂a, ∂L̂/∂b) as arb balls at the exact point (a, b) (Fractions or floats), ``prec`` bits."""
    with ctx.workprec(prec):
        A, B = _ball(a), _ball(b)
        m = len(theta)
        loss = ga = gb = arb(0)
        for row, th in zip(x, theta):
            row = [float(v) for v in row]
            ys = [1 if v >= float(th) else 0 for v in row]
            approx = [float(a) * y - float(b) * v for v, y in zip(row, ys)]
            top = max(range(len(row)), key=approx.__getitem__)
            xc = row[top]
            shift = A * ys[top] - B * xc
            weights = [(A * y - B * v - shift).exp() for v, y in zip(row, ys)]
            total = sum(weights, arb(0))
            alpha = [w / total for w in weights]
            dx = [arb(v) - arb(xc) for v in row]
            mean = sum((al * d for al, d in zip(alpha, dx)), arb(0))
            err = (arb(xc) - arb(float(th))) + mean
            centred = [d - mean for d in dx]
            w = sum((al for al, y in zip(alpha, ys) if y), arb(0))
            v = sum((al for al, y in zip(alpha, ys) if not y), arb(0))
            # Cov(x, y) = Σ α q (y − w) = v·Σ_P α q − w·Σ_N α q (no 1 − w cancellation)
            cov = (v * sum((al * q for al, q, y in zip(alpha, centred, ys) if y), arb(0))
                   - w * sum((al * q for al, q, y in zip(alpha, centred, ys) if not y), arb(0)))
            var = sum((al * q * q for al, q in zip(alpha, centred)), arb(0))
            loss += err * err / 2
            ga += err * cov
            gb -= err * var
        return loss / m, ga / m, gb / m
