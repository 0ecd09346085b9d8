"""Step rules for constant-step GD on L̂ (docs/model.md §4), and the large-resolution start.

Three rules give η from the start z₀ = (a₀, b₀); each returns (η, a sentence
stating the rule and its numbers):

* ``corpus`` — η = 1/‖∇²L̂(z₀)‖₂ from the exact corpus Hessian, lowered by a
  look at the curvature where the first step lands
  (:func:`stumpcheck.numerics.corpus.gd.default_eta`). Right near the usual start
  a₀ = b₀ = 10. At a calibrated start with b₀ ≫ 1 the corpus Hessian is
  indefinite and tiny: at m = n = 512, b₀ = 128, 1/‖∇²L̂‖₂ = 1.1·10⁸, 50× the
  population step (it leaves the model), and the look-ahead lowers it to
  2.3·10³, so b moves by 0.02 in 20 steps (measured, seed 3).
* ``population`` — η = 1/λ_max(∇²L(z₀)) of the population Hessian (float64
  Gauss–Legendre on the model's breakpoints, :mod:`stumpcheck.numerics.population.quantities`).
  On the calibration relation λ_max ≈ b₀⁻³ (the stiff direction across the
  relation), so η ≈ b₀³ and the first steps advance b by about ½ each: stable
  and useful at large starts.
* ``lookahead`` — the largest of the candidates η_pop·2^j, j = 6, 5, …, −10,
  for which the first two GD steps stay in the model (b > 0, finite) and each
  lowers L̂ (strictly). Falls back to an error if none does.

The large-resolution start of the finite-corpus theorem (C6):
b₀ = (m ∧ n)/4, a₀ = calibration_a(b₀) (:func:`large_resolution_start`). It
needs m ∧ n ≥ 8, so that b₀ ≥ 2: docs/model.md §4.4 asks b₀ ≫ 1, and below
that the start is not on the large-resolution side of the calibration phase
(at m = n = 1, b₀ = 0.25 and GD left b where it was for 20 000 steps).
"""

from __future__ import annotations

import math

from dataclasses import dataclass

import numpy as np

from stumpcheck.numerics.corpus.curvature import ESTIMATORS, loss_gradient_hessian, spectral_curvature
from stumpcheck.numerics.precision import InputError, finite_float

__all__ = ["ETA_SAFETY", "StepBound", "corpus_arrays", "default_eta", "estimator_name", "step_bound", "ETA_RULES",
           "LOOKAHEAD_POWERS",           "MIN_LARGE_RESOLUTION_SIZE", "check_large_resolution_size", "choose_eta",
           "large_resolution_start", "lookahead_eta", "population_eta", "population_hessian_eigenvalues"]

ETA_RULES = ("population", "corpus", "lookahead")
#: candidates of the lookahead rule: η_pop · 2^j for j in this order (largest first)
LOOKAHEAD_POWERS = tuple(range(6, -11, -1))
#: b₀ = (m ∧ n) · START_FRACTION for the large-resolution start; its horizon cap is (m ∧ n) · HORIZON_FRACTION
START_FRACTION = 0.25
HORIZON_FRACTION = 0.5
#: smallest m ∧ n of a large-resolution start: b₀ = (m ∧ n)/4 ≥ 2 (the sweep's cells need the same)
MIN_LARGE_RESOLUTION_SIZE = 8


#: η = ETA_SAFETY / ‖∇²L̂(a₀, b₀)‖₂; 1 means half the local descent-lemma bound 2/‖∇²L̂‖₂
ETA_SAFETY = 1.0

@dataclass(frozen=True)
class StepBound:
    """2/M with M = max ‖∇²L̂‖₂ over the sampled points (descent-lemma step bound).

    If M bounds the curvature on every segment [z_k, z_{k+1}], any η < 2/M gives
    L̂(z_{k+1}) ≤ L̂(z_k) − η(1 − ηM/2)‖∇L̂(z_k)‖² < L̂(z_k). M is the maximum over the
    points passed in (sampled, not certified between them).
    """

    bound: float
    curvature: float
    at_a: float
    at_b: float
    points: int


def corpus_arrays(x, theta):
    """(x, θ) as validated float64 arrays of a training corpus (InputError otherwise)."""
    from stumpcheck.numerics.corpus.corpora import validate_corpus_arrays

    return validate_corpus_arrays(np.asarray(x, dtype=np.float64), np.asarray(theta, dtype=np.float64),
                                  where="training corpus")


def estimator_name(name: str) -> str:
    """``name`` if it is one of the corpus estimators (InputError otherwise)."""
    if name not in ESTIMATORS:
        raise InputError(f"unknown estimator {name!r}; one of {', '.join(ESTIMATORS)}")
    return name


def default_eta(x, theta, a0: float, b0: float, *, estimator: str = "one-head",
                safety: float = ETA_SAFETY, look_ahead: int = 40) -> tuple[float, str]:
    """η from the curvature at the start, and the sentence stating the rule and its numbers.

    η₀ = safety/‖∇²L̂(z₀)‖₂ (``‖·‖₂ = max |λ|``; exact Hessian from the third
    cumulants of the softmax weights, :mod:`stumpcheck.numerics.corpus.curvature`, not
    finite differences). Look-ahead: where the first step z₁ = z₀ − η∇L̂(z₀)
    lands, the curvature must not forbid η either, so while
    η > safety/‖∇²L̂(z₁)‖₂ (or z₁ leaves b > 0) η is lowered to that value
    (halved if b₁ ≤ 0), at most ``look_ahead`` times. Near the usual start
    (a₀ = b₀ = 10) the curvature falls along the first step and η = η₀; at
    scales where the corpus loss is nearly flat (b₀ ≫ m ∧ n) η₀ alone would
    be enormous and the look-ahead is what keeps the first step sane.
    """
    x, theta = corpus_arrays(x, theta)
    a0 = finite_float(a0, "a0")
    b0 = finite_float(b0, "b0", positive=True)
    safety = finite_float(safety, "safety", positive=True)
    estimator = estimator_name(estimator)
    _, gradient, hessian = loss_gradient_hessian(x, theta, a0, b0, estimator=estimator)
    curvature = spectral_curvature(hessian)
    if not (math.isfinite(curvature) and curvature > 0):
        raise InputError(f"the Hessian of L̂ at (a0, b0) = ({a0}, {b0}) is {hessian.tolist()}: no curvature to set "
                         "a default step from; pass eta explicitly")
    eta = eta0 = safety / curvature
    lowered = 0
    for _ in range(look_ahead):
        a1, b1 = a0 - eta * gradient[0], b0 - eta * gradient[1]
        if not (math.isfinite(a1) and b1 > 0):
            eta, lowered = eta / 2, lowered + 1
            continue
        ahead = spectral_curvature(loss_gradient_hessian(x, theta, a1, b1, estimator=estimator)[2])
        if eta * ahead <= safety:
            break
        eta, lowered = safety / ahead, lowered + 1
    rule = (f"eta = {safety:g}/||Hess L̂||_2 from the curvature at the start: {safety:g}/{curvature:.6g} = {eta0:.6g} "
            f"at (a0, b0) = ({a0:g}, {b0:g})")
    if lowered:
        rule += (f", lowered {lowered} time(s) to {eta:.6g} by the curvature where the first step lands "
                 f"(a1, b1) = ({a0 - eta * gradient[0]:.6g}, {b0 - eta * gradient[1]:.6g})")
    rule += (f"; exact Hessian (softmax third cumulants), ||.||_2 = max |eigenvalue|; safety factor {safety:g} "
             f"= {safety / 2:g} x the local descent-lemma bound 2/||Hess||")
    return eta, rule


def step_bound(x, theta, a, b, *, estimator: str = "one-head") -> StepBound:
    """The descent-lemma step bound 2/max ‖∇²L̂‖₂ over the points (a[i], b[i]) (see :class:`StepBound`)."""
    x, theta = corpus_arrays(x, theta)
    a = np.atleast_1d(np.asarray(a, dtype=np.float64))
    b = np.atleast_1d(np.asarray(b, dtype=np.float64))
    if a.shape != b.shape or a.ndim != 1 or a.size == 0:
        raise InputError(f"step_bound needs 1-D arrays a, b of the same non-zero length, got {a.shape}, {b.shape}")
    if not (np.all(np.isfinite(a)) and np.all(np.isfinite(b))):
        raise InputError("step_bound: a and b must be finite")
    estimator = estimator_name(estimator)
    worst, where = -1.0, 0
    for i in range(a.size):
        curvature = spectral_curvature(loss_gradient_hessian(x, theta, float(a[i]), float(b[i]),
                                                             estimator=estimator)[2])
        if curvature > worst:
            worst, where = curvature, i
    bound = 2.0 / worst if worst > 0 else math.inf
    return StepBound(bound=bound, curvature=worst, at_a=float(a[where]), at_b=float(b[where]), points=int(a.size))


def check_large_resolution_size(m: int, n: int) -> None:
    """InputError unless m ∧ n ≥ MIN_LARGE_RESOLUTION_SIZE (b₀ = (m ∧ n)/4 ≥ 2, docs/model.md §4.4)."""
    size = min(int(m), int(n))
    if size < MIN_LARGE_RESOLUTION_SIZE:
        raise InputError(f"the large-resolution start needs m ∧ n >= {MIN_LARGE_RESOLUTION_SIZE}: b0 = (m ∧ n)/4 "
                         f"would be {START_FRACTION * size:g}, below {START_FRACTION * MIN_LARGE_RESOLUTION_SIZE:g} "
                         f"(b0 >> 1, docs/model.md §4.4); got m={m}, n={n}")


def large_resolution_start(m: int, n: int) -> tuple[float, float]:
    """(a₀, b₀) = (calibration_a(b₀), (m ∧ n)/4): on the derived calibration relation a = b + 2 log b − ρ₁/b."""
    from stumpcheck.numerics.generated import asymptotics_numpy as derived

    check_large_resolution_size(m, n)
    b0 = START_FRACTION * min(int(m), int(n))
    return float(derived.calibration_a(b0)), float(b0)


def population_hessian_eigenvalues(a0: float, b0: float, *, estimator: str = "one-head") -> np.ndarray:
    """The eigenvalues (ascending) of the population Hessian ∇²L(a₀, b₀) (float64, 24-point G–L per piece);
    InputError when it cannot be evaluated or has no positive eigenvalue (no step to set)."""
    from stumpcheck.numerics.population.quantities import loss_gradient_hessian_float64

    a0 = finite_float(a0, "a0")
    b0 = finite_float(b0, "b0", positive=True)
    try:
        _, _, hessian = loss_gradient_hessian_float64(a0, b0, estimator=estimator)
    except ArithmeticError as exc:
        raise InputError(f"the population Hessian at (a0, b0) = ({a0:g}, {b0:g}) cannot be evaluated: {exc}") from None
    eigenvalues = np.linalg.eigvalsh(hessian)
    if not (math.isfinite(float(eigenvalues[-1])) and eigenvalues[-1] > 0):
        raise InputError(f"the population Hessian at (a0, b0) = ({a0:g}, {b0:g}) has no positive eigenvalue "
                         f"({eigenvalues.tolist()}): no step to set; pass eta or another --eta-rule")
    return eigenvalues


def population_eta(a0: float, b0: float, *, estimator: str = "one-head") -> tuple[float, str]:
    """η = 1/λ_max(∇²L(a₀, b₀)), the population Hessian's largest eigenvalue (float64, 24-point G–L per piece)."""
    a0 = finite_float(a0, "a0")
    b0 = finite_float(b0, "b0", positive=True)
    eigenvalues = population_hessian_eigenvalues(a0, b0, estimator=estimator)
    top = float(eigenvalues[-1])
    eta = 1.0 / top
    rule = (f"eta = 1/lambda_max(Hess L(a0, b0)) of the population loss: 1/{top:.6g} = {eta:.6g} at (a0, b0) = "
            f"({a0:g}, {b0:g}) (eigenvalues {eigenvalues[0]:.3g}, {top:.3g}; b0^-3 = {b0 ** -3:.3g}; "
            "float64 Gauss-Legendre on the model's breakpoints)")
    return eta, rule


def _loss(source, theta, a, b, estimator, method):
    from stumpcheck.numerics.corpus.empirical import loss_and_gradient

    loss, gradient = loss_and_gradient(source, theta, a, b, estimator=estimator, method=method)
    return float(loss), np.asarray(gradient, dtype=float)


def lookahead_eta(x, theta, a0: float, b0: float, *, estimator: str = "one-head",
                  method: str = "dense") -> tuple[float, str]:
    """The largest η_pop·2^j (j from :data:`LOOKAHEAD_POWERS`) whose first two GD steps stay in the model and
    each lower L̂ strictly; InputError if no candidate does."""
    eta_pop, _ = population_eta(a0, b0, estimator=estimator)
    loss0, grad0 = _loss(x, theta, a0, b0, estimator, method)
    for power in LOOKAHEAD_POWERS:
        eta = eta_pop * 2.0 ** power
        z, loss, grad, ok = np.array([a0, b0]), loss0, grad0, True
        for _ in range(2):
            z = z - eta * grad
            if not (np.all(np.isfinite(z)) and z[1] > 0):
                ok = False
                break
            new_loss, grad = _loss(x, theta, float(z[0]), float(z[1]), estimator, method)
            if not (math.isfinite(new_loss) and new_loss < loss):
                ok = False
                break
            loss = new_loss
        if ok:
            return eta, (f"eta = {eta:.6g} = 2^{power} x the population-curvature step {eta_pop:.6g}: the largest "
                         f"candidate 2^j x eta_pop (j = {LOOKAHEAD_POWERS[0]}..{LOOKAHEAD_POWERS[-1]}) whose first "
                         f"two GD steps from (a0, b0) = ({a0:g}, {b0:g}) stay in b > 0 and each lower L̂")
    raise InputError(f"lookahead step rule: no candidate 2^j x {eta_pop:.3g} lowers L̂ on the first two steps from "
                     f"(a0, b0) = ({a0:g}, {b0:g}); pass eta explicitly")


def choose_eta(x, theta, a0: float, b0: float, rule: str, *, estimator: str = "one-head",
               method: str = "dense") -> tuple[float, str]:
    """(η, rule sentence) by the named step rule (one of :data:`ETA_RULES`)."""
    if rule == "population":
        return population_eta(a0, b0, estimator=estimator)
    if rule == "lookahead":
        return lookahead_eta(x, theta, a0, b0, estimator=estimator, method=method)
    if rule == "corpus":
        return default_eta(x, theta, a0, b0, estimator=estimator)
    raise InputError(f"unknown step rule {rule!r}; one of {', '.join(ETA_RULES)}")
