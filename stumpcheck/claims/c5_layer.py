"""The deep boundary layer at θ ≈ 1 and why the full-norm ratio is not C5's progress criterion.

On the calibration relation a = a_cal(b), split the population gradient

    ∇L = ∫₀¹ e ∇e dθ = ∫_{θ < 1 − w} e ∇e dθ + ∫_{θ ≥ 1 − w} e ∇e dθ = ∇L_bulk + ∇L_layer,  w = c/b³,

(c = 50 by default). Measured (float64, Gauss–Legendre of order 48 on the model's breakpoints plus
the cut at 1 − w, nodes placed by their distance from 1): ∇L_layer carries ≈ 96 % of ∂L/∂a and
≈ −96 % of ∂L/∂b (the bulk carries the rest, ≈ 196 % of ∂L/∂b), points along (−1, +1)/√2, while the
progress direction u = −∇L/‖∇L‖ ≈ (1, 1)/√2; its projection on u is ≈ 1.4/b of its size. A corpus
of m tasks expects c·m/b³ of them in the layer (< 1 once b > (c m)^{1/3}), so the corpus gradient
misses ∇L_layer there and ‖∇L̂ − ∇L‖/‖∇L‖ ≈ ‖∇L_layer‖/‖∇L‖ ≈ 0.96 whatever m ∧ n: the full-norm
ratio can certify b ~ (m ∧ n)^{1/3} at best. What the missing layer does to progress along u is
the ≈ 1.4/b share, which :func:`deep_layer_figures` measures.
"""

from __future__ import annotations

import numpy as np

from stumpcheck.numerics.generated import asymptotics_numpy as derived
from stumpcheck.numerics.generated import population_numpy as gen_np
from stumpcheck.numerics.population.quantities import loss_and_gradient_float64
from stumpcheck.numerics.population.quadrature import breakpoints_float64, gauss_legendre_nodes_split

__all__ = ["LAYER_C", "layer_split", "deep_layer_figures"]

#: the layer's width in units of b⁻³
LAYER_C = 50.0


def layer_split(a: float, b: float, *, c: float = LAYER_C, order: int = 48) -> tuple[np.ndarray, np.ndarray]:
    """(∇L_layer, ∇L_bulk) of the one-head model at (a, b): the θ-integrals of e∇e over
    [1 − c/b³, 1] and [0, 1 − c/b³] (float64, ``order``-point Gauss–Legendre per breakpoint piece)."""
    cut = 1.0 - c / b**3
    points = sorted({float(p) for p in breakpoints_float64(a, b)} | {cut})
    nodes, rest, weights = gauss_legendre_nodes_split(points, order)
    e, grad_a, grad_b = gen_np.error_and_gradient_one_head(a, b, nodes, rest)
    inside = nodes >= cut
    terms = np.stack([weights * e * grad_a, weights * e * grad_b])
    return terms[:, inside].sum(axis=1), terms[:, ~inside].sum(axis=1)


def deep_layer_figures(*, quick: bool = True, c: float = LAYER_C) -> dict:
    """The layer's shares at b ∈ {64, 256, 1024} (full: also 16 and 4096), a = a_cal(b); see the module doc.

    Per b: share_da, share_db (layer / total component), direction (unit vector of ∇L_layer),
    size (‖∇L_layer‖/‖∇L‖), projection (|∇L_layer·u|/‖∇L_layer‖) and b·projection, and
    closure (max relative |layer + bulk − ∇L| against loss_and_gradient_float64, a check).
    """
    scales = (64.0, 256.0, 1024.0) if quick else (16.0, 64.0, 256.0, 1024.0, 4096.0)
    rows = []
    for b in scales:
        a = float(derived.calibration_a(b))
        _, total = loss_and_gradient_float64(a, b)
        layer, bulk = layer_split(a, b, c=c)
        unit = -total / np.linalg.norm(total)
        size = float(np.linalg.norm(layer))
        projection = abs(float(layer @ unit)) / size
        rows.append({"b": b, "a": a, "share_da": float(layer[0] / total[0]), "share_db": float(layer[1] / total[1]),
                     "direction": (layer / size).tolist(), "size": size / float(np.linalg.norm(total)),
                     "projection": projection, "b_times_projection": b * projection,
                     "closure": float(np.max(np.abs(layer + bulk - total) / np.abs(total)))})
    return {"width": f"θ ≥ 1 − {c:g}/b³", "c": c, "rows": rows, "precision": "float64",
            "tasks_in_layer": f"a corpus of m tasks expects {c:g}·m/b³ of them in the layer"}
