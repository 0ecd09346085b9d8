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

**Pruning** (``prune=T``, off by default). With b > 0 the scores of a group fall along its sorted points
(P: a − b·x, N: −b·x, x ascending), so a task's points whose float score lies more than T below the
task's top float score form a suffix of each group. They are not summed: each has weight
e^{sᵢ − shift} ≤ W_g = e^{s(first dropped) − shift} (one Arb exponential per group, its upper end), so
their total mass is in [0, k_g·W_g/Z] and every sum over them of α·f with −1 ≤ f ≤ 1 (x − x_c, x − θ̂ and
their squares: x, θ̂ ∈ [0, 1]) lies in ±k_g·W_g/Z (the mass itself in [0, k_g·W_g/Z]); those balls are
added to the sums. Where the float scores are off (they only choose which points are dropped), the
bound still holds. At T = 80 the added radius is below n·e^{−80} ≈ n·10⁻³⁵ of the task's scale.
"""

from __future__ import annotations

from fractions import Fraction

from flint import arb, ctx, fmpq

__all__ = ["corpus_gradient_arb"]


def _ball(v) -> arb:
    if isinstance(v, Fraction):
        return arb(fmpq(v.numerator, v.denominator))
    return arb(v)


def _upto(value: arb) -> arb:
    """A ball containing [0, the upper end of ``value``] (value ≥ 0)."""
    return arb(0).union(arb(value.upper()))


def _within(value: arb) -> arb:
    """A ball containing [−u, u], u the upper end of ``value`` (value ≥ 0)."""
    u = arb(value.upper())
    return (-u).union(u)


def corpus_gradient_arb(x, theta, a, b, *, prec: int = 128, prune: float | None = None) -> tuple[arb, arb, arb]:
    """(L̂, ∂L̂/∂a, ∂L̂/∂b) as arb balls at the exact point (a, b) (Fractions or floats), ``prec`` bits;
    ``prune``: the score gap T beyond which points are bounded instead of summed (module docstring; b > 0)."""
    if prune is not None and float(b) > 0:
        return _pruned(x, theta, a, b, prec, float(prune))
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


def _pruned(x, theta, a, b, prec: int, gap: float) -> tuple[arb, arb, arb]:
    import numpy as np

    with ctx.workprec(prec):
        A, B = _ball(a), _ball(b)
        fa, fb = float(a), float(b)
        m = len(theta)
        loss = ga = gb = arb(0)
        for row, th in zip(np.asarray(x, dtype=float), theta):
            th = float(th)
            xs = np.sort(row)
            split = int(np.count_nonzero(xs < th))
            groups = [(xs[split:].tolist(), 1), (xs[:split].tolist(), 0)]   # P, N (ascending)
            tops = [(fa * y - fb * g[0], g[0], y) for g, y in groups if g]
            top, xc, yc = max(tops)
            shift = A * yc - B * arb(xc)
            kept, dropped = [], []          # (x, y) kept; (count, weight bound) per dropped group
            for g, y in groups:
                k = 0
                while k < len(g) and fa * y - fb * g[k] >= top - gap:
                    k += 1
                kept += [(v, y) for v in g[:k]]
                if k < len(g):
                    dropped.append((len(g) - k, (A * y - B * arb(g[k]) - shift).exp(), y))
            weights = [(A * y - B * arb(v) - shift).exp() for v, y in kept]
            total = sum(weights, arb(0))
            total += sum((_upto(c * w) for c, w, _ in dropped), arb(0))
            mass = {1: arb(0), 0: arb(0)}
            for c, w, y in dropped:
                mass[y] += c * w / total
            alpha = [w / total for w in weights]
            dx = [arb(v) - arb(xc) for v, _ in kept]
            rest = mass[1] + mass[0]
            mean = sum((al * d for al, d in zip(alpha, dx)), arb(0)) + _within(rest)
            err = (arb(xc) - arb(th)) + mean
            centred = [d - mean for d in dx]
            w = sum((al for al, (_, y) in zip(alpha, kept) if y), arb(0)) + _upto(mass[1])
            v = sum((al for al, (_, y) in zip(alpha, kept) if not y), arb(0)) + _upto(mass[0])
            cov = (v * (sum((al * q for al, q, (_, y) in zip(alpha, centred, kept) if y), arb(0)) + _within(mass[1]))
                   - w * (sum((al * q for al, q, (_, y) in zip(alpha, centred, kept) if not y), arb(0))
                          + _within(mass[0])))
            var = sum((al * q * q for al, q in zip(alpha, centred)), arb(0)) + _upto(rest)
            loss += err * err / 2
            ga += err * cov
            gb -= err * var
        return loss / m, ga / m, gb / m
