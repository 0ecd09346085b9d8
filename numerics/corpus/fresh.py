"""Fresh-context evaluation of a frozen estimator (docs/model.md §4, claims C6–C8).

A frozen (a, b) is applied, unchanged, to ``reps`` independent fresh contexts
of N points x ~ U[0, 1] (or a given sampler on [0, 1]) labelled by a fixed
threshold θ, y = 1{x ≥ θ}. For each context the estimate θ̂_N comes from
:func:`stumpcheck.numerics.corpus.empirical.estimate` (float64, log-space softmax) and the
figure is the Monte Carlo mean of |θ̂_N − θ| with

* a 95% confidence interval by the normal approximation with the sample
  standard deviation, mean ± 1.96·sd/√reps (the errors are bounded by 1, so
  the CLT applies; at reps ≳ 100 the interval is accurate to a few percent);
* the median and the 90% quantile of |θ̂_N − θ|.

Evidence level: *sampled*. Random streams are keyed, not sequential: the
replicates come in fixed blocks of :data:`BLOCK` contexts, block j of the cell
(θ, N) drawing from ``SeedSequence(seed, spawn_key=(key(θ), N, j))``. So a
result depends only on (seed, θ, N, reps, sampler), never on ``chunk`` (how
many blocks go into one call of ``estimate``) or on which other θ and N are
evaluated alongside.
"""

from __future__ import annotations

import math
import struct
from dataclasses import asdict, dataclass, field
from typing import Callable

import numpy as np

from stumpcheck.numerics.display import Display, figure_text
from stumpcheck.numerics.json_output import finite_json
from stumpcheck.numerics.precision import InputError, finite_float
from stumpcheck.numerics.resources import require_memory

__all__ = ["BLOCK", "DEFAULT_THETAS", "MAX_N", "MAX_REPS", "MAX_MAGNITUDE", "ESTIMATORS", "FreshResult", "SupResult",
           "context_stream", "fresh_context_errors", "sup_error_over_theta", "validate_frozen"]

ESTIMATORS = ("one-head", "reflected", "averaged", "pooled")

#: replicates per independent random stream (the unit that makes results chunk-independent)
BLOCK = 64
#: largest context size (a block of BLOCK contexts of N float64 is held in memory: 512 MiB at MAX_N)
MAX_N = 2 ** 20
#: most fresh contexts per (θ, N): the errors are held in memory (about 32 bytes per context at the peak)
MAX_REPS = 10 ** 8
#: ``|a|`` and b of a frozen estimator: the float64 scores a·y − b·x and their products stay finite up to here
MAX_MAGNITUDE = 1e150

#: θ grid of :func:`sup_error_over_theta`: both ends, points close to them, and the bulk
DEFAULT_THETAS = (0.0, 1e-3, 0.01, 0.05, 0.1, 0.3, 0.5, 0.7, 0.9, 0.95, 0.99, 0.999, 1.0)

_Z95 = 1.959963984540054

Sampler = Callable[[np.random.Generator, tuple], np.ndarray]


@dataclass(frozen=True, repr=False)
class FreshResult(Display):
    """Mean ``|θ̂_N − θ|`` over ``reps`` fresh contexts, with its 95% CI and quantiles.

    Shown (:class:`~stumpcheck.numerics.display.Display`) by the mean with its CI, where it was measured and
    how; :meth:`to_dict` (every field), :meth:`to_csv` and :meth:`to_dataframe` give one row of every field.
    """

    a: float
    b: float
    theta: float
    N: int
    estimator: str
    reps: int
    seed: int
    mean_abs_error: float
    ci_low: float
    ci_high: float
    sd_abs_error: float
    median_abs_error: float
    q90_abs_error: float
    mean_signed_error: float
    ci_method: str = "normal approximation, mean ± 1.96·sd/√reps (sample sd)"
    sampler: str = "uniform[0,1]"
    precision: str = "float64"
    evidence: str = "sampled"

    def as_dict(self) -> dict:
        return asdict(self)

    def _display_rows(self) -> list:
        return [("mean |θ̂_N − θ|", f"{figure_text(self.mean_abs_error, 6)} (95% CI [{figure_text(self.ci_low, 4)}, "
                                    f"{figure_text(self.ci_high, 4)}])"),
                ("at", f"a = {figure_text(self.a, 8)}, b = {figure_text(self.b, 8)}, θ = {figure_text(self.theta)}, "
                       f"N = {self.N}, {self.estimator}"),
                ("median, q90", f"{figure_text(self.median_abs_error, 4)}, {figure_text(self.q90_abs_error, 4)}"),
                ("mean signed error", figure_text(self.mean_signed_error, 4)),
                ("contexts", f"{self.reps} ({self.sampler}), seed {self.seed}, {self.precision}, {self.evidence}")]

    def _display_columns(self) -> dict:
        return {name: [value] for name, value in asdict(self).items()}

    def to_dict(self) -> dict:
        """Every field, JSON-ready (NaN/±inf as None)."""
        return finite_json(asdict(self))


@dataclass(frozen=True)
class SupResult:
    """max over a θ grid of the fresh-context mean ``|θ̂_N − θ|`` (and where it is attained)."""

    N: int
    estimator: str
    sup_mean_abs_error: float
    theta_at_sup: float
    ci_low: float
    ci_high: float
    per_theta: list = field(default_factory=list)

    def as_dict(self) -> dict:
        return asdict(self)


def _positive_int(value, name: str) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)):
        raise InputError(f"{name} must be a positive integer, got {value!r}")
    if value < 1:
        raise InputError(f"{name} must be >= 1, got {value}")
    return int(value)


def validate_frozen(a, b, *, estimator: str) -> tuple[float, float]:
    """Return (a, b) as floats after checking ``|a| ≤ MAX_MAGNITUDE``, 0 < b ≤ MAX_MAGNITUDE and the estimator name."""
    a, b = finite_float(a, "a"), finite_float(b, "b")
    if not b > 0:
        raise InputError(f"b must be > 0 (the attention scale), got {b}")
    if not (abs(a) <= MAX_MAGNITUDE and b <= MAX_MAGNITUDE):
        raise InputError(f"|a| and b must be at most {MAX_MAGNITUDE:g} (float64 scores), got a={a:g}, b={b:g}")
    if estimator not in ESTIMATORS:
        raise InputError(f"unknown estimator {estimator!r}; expected one of {', '.join(ESTIMATORS)}")
    return a, b


def _theta(theta) -> float:
    value = finite_float(theta, "theta")
    if not 0.0 <= value <= 1.0:
        raise InputError(f"theta must lie in [0, 1], got {value}")
    return value


def _theta_key(theta: float) -> int:
    """The bit pattern of θ as a float64: an exact, stable integer key for the stream."""
    return struct.unpack("<Q", struct.pack("<d", float(theta)))[0]


def context_stream(seed: int, theta: float, N: int, block: int) -> np.random.Generator:
    """The generator of block ``block`` of the cell (θ, N) under ``seed``."""
    return np.random.default_rng(np.random.SeedSequence(int(seed), spawn_key=(_theta_key(theta), int(N), int(block))))


def _draw(rng: np.random.Generator, shape: tuple, sampler: Sampler | None) -> np.ndarray:
    if sampler is None:
        return rng.random(shape)
    x = np.asarray(sampler(rng, shape), dtype=np.float64)
    if x.shape != shape:
        raise InputError(f"sampler returned shape {x.shape}, expected {shape}")
    if not (np.all(np.isfinite(x)) and np.all((x >= 0) & (x <= 1))):
        raise InputError("sampler must return finite values in [0, 1]")
    return x


def _errors(a: float, b: float, theta: float, N: int, *, estimator: str, reps: int, seed: int,
            sampler: Sampler | None, chunk: int, progress=None) -> np.ndarray:
    """θ̂_N − θ for ``reps`` fresh contexts, in block order."""
    from stumpcheck.numerics.corpus.empirical import estimate

    blocks = math.ceil(reps / BLOCK)
    per_call = max(1, chunk // (BLOCK * N))  # blocks per call of estimate
    out = np.empty(blocks * BLOCK)
    for first in range(0, blocks, per_call):
        js = range(first, min(first + per_call, blocks))
        x = np.concatenate([_draw(context_stream(seed, theta, N, j), (BLOCK, N), sampler) for j in js])
        theta_hat = np.asarray(estimate(x, np.full(x.shape[0], theta), a, b, estimator=estimator), dtype=float)
        out[first * BLOCK:first * BLOCK + x.shape[0]] = theta_hat - theta
        if progress is not None:
            progress(min(x.shape[0], reps - first * BLOCK))
    errors = out[:reps]
    if not np.all(np.isfinite(errors)):
        raise ArithmeticError(f"non-finite estimate at a={a}, b={b}, theta={theta}, N={N} ({estimator})")
    return errors


def fresh_context_errors(a, b, theta, N, *, estimator: str = "one-head", reps: int = 1000, seed: int = 0,
                         sampler: Sampler | None = None, sampler_name: str | None = None,
                         chunk: int = 2 ** 20, progress: Callable | None = None) -> FreshResult:
    """Mean ``|θ̂_N − θ|`` of the frozen (a, b) over ``reps`` fresh contexts of N points.

    ``sampler(rng, shape)`` draws features in [0, 1] (default U[0, 1]);
    ``chunk`` bounds the tokens (contexts × N) per call of ``estimate`` and
    does not change the result; ``progress(k)`` is told after each call that
    k more contexts are done. N ≤ :data:`MAX_N` (a block of 64 contexts is held
    in memory at once). Evidence: sampled, float64.
    """
    a, b = validate_frozen(a, b, estimator=estimator)
    theta = _theta(theta)
    N = _positive_int(N, "N")
    if N > MAX_N:
        raise InputError(f"N = {N} is above the supported maximum {MAX_N} (memory: {BLOCK} contexts at once)")
    chunk = _positive_int(chunk, "chunk")
    reps = _positive_int(reps, "reps")
    if reps < 2:
        raise InputError("reps must be >= 2 (the confidence interval needs a sample standard deviation)")
    if reps > MAX_REPS:
        raise InputError(f"reps = {reps} is above the supported maximum {MAX_REPS} (the errors are kept in memory)")
    # the error arrays (errors, |errors|, quantile copies) and about four float64 arrays of each call's tokens
    require_memory(32 * reps + 32 * max(chunk, BLOCK * N), f"{reps} fresh contexts of N = {N}")
    if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)) or not 0 <= seed < 2 ** 63:
        raise InputError(f"seed must be an integer in [0, 2^63), got {seed!r}")
    errors = _errors(a, b, theta, N, estimator=estimator, reps=reps, seed=int(seed), sampler=sampler, chunk=chunk,
                     progress=progress)
    absolute = np.abs(errors)
    mean = float(absolute.mean())
    sd = float(absolute.std(ddof=1))
    half = _Z95 * sd / math.sqrt(reps)
    name = sampler_name or ("uniform[0,1]" if sampler is None else getattr(sampler, "__name__", "custom"))
    return FreshResult(a=a, b=b, theta=theta, N=N, estimator=estimator, reps=reps, seed=int(seed),
                       mean_abs_error=mean, ci_low=max(0.0, mean - half), ci_high=mean + half, sd_abs_error=sd,
                       median_abs_error=float(np.quantile(absolute, 0.5)),
                       q90_abs_error=float(np.quantile(absolute, 0.9)),
                       mean_signed_error=float(errors.mean()), sampler=name)


def sup_error_over_theta(a, b, N, *, thetas=DEFAULT_THETAS, estimator: str = "one-head", reps: int = 1000,
                         seed: int = 0, sampler: Sampler | None = None, chunk: int = 2 ** 20) -> SupResult:
    """max over ``thetas`` of the fresh-context mean ``|θ̂_N − θ|``, with every θ's result.

    The default grid holds both ends θ = 0 and θ = 1 and points at 10⁻³ and
    10⁻² from them, where the one-head model's boundary limitation shows. A
    sup over a finite grid is a lower bound for the sup over [0, 1].
    """
    thetas = [_theta(t) for t in thetas]
    if not thetas:
        raise InputError("thetas must not be empty")
    rows = [fresh_context_errors(a, b, t, N, estimator=estimator, reps=reps, seed=seed, sampler=sampler, chunk=chunk)
            for t in thetas]
    best = max(rows, key=lambda r: r.mean_abs_error)
    return SupResult(N=int(N), estimator=estimator, sup_mean_abs_error=best.mean_abs_error, theta_at_sup=best.theta,
                     ci_low=best.ci_low, ci_high=best.ci_high, per_theta=[r.as_dict() for r in rows])
