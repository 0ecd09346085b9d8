"""Finite corpora (docs/model.md §1): m tasks, each a threshold θⱼ ~ Uniform[l, u] and n features xⱼᵢ ∈ [0, 1].

A corpus stores only x (m × n, float64) and θ (m,); the labels are derived,
yⱼᵢ = 1{xⱼᵢ ≥ θⱼ}. Sampling is seeded (numpy PCG64 via ``default_rng(seed)``;
θ is drawn first, then x), so the same (m, n, seed, prior, sampler) gives the
same corpus bit for bit.

File format: ``.npz`` with arrays ``x`` (m × n float64 in [0, 1]) and
``theta`` (m,) float64 in [0, 1]; optional metadata ``seed`` (integer scalar),
``prior`` (2 floats) and ``sampler_name`` (string). :func:`load_corpus`
validates shape, dtype, range and finiteness and raises
:class:`~stumpcheck.numerics.precision.InputError` with one line naming the problem.
"""

from __future__ import annotations

import hashlib
import math
import zipfile
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from stumpcheck.numerics.display import Display
from stumpcheck.numerics.precision import InputError
from stumpcheck.numerics.resources import require_memory

#: most tokens m·n of a sampled corpus (16 GB of float64 x)
MAX_TOKENS = 2 * 10 ** 9
#: seeds are integers in [0, SEED_LIMIT) (stored as int64 metadata)
SEED_LIMIT = 2 ** 63

__all__ = ["MAX_TOKENS", "SEED_LIMIT", "Corpus", "make_corpus", "save_corpus", "load_corpus", "validate_corpus_arrays", "uniform_sampler"]


def uniform_sampler(rng: np.random.Generator, shape) -> np.ndarray:
    """The reference feature law: x ~ Uniform[0, 1) (float64)."""
    return rng.random(shape)


@dataclass(frozen=True, eq=False, repr=False)
class Corpus(Display):
    """m tasks of n points: ``x`` (m, n) float64 in [0, 1], ``theta`` (m,) float64 in [0, 1].

    ``seed`` is the sampling seed (None if unknown, e.g. a file without
    metadata), ``prior`` the (l, u) of θ ~ Uniform[l, u] (None if unknown),
    ``sampler_name`` the feature sampler. The arrays are read-only.

    It shows itself briefly: a one-line ``repr`` (m, n, seed, prior, sampler and :attr:`digest`, never
    the arrays' values), a small HTML table in a notebook, and a JSON-ready :meth:`to_dict`.
    """

    x: np.ndarray
    theta: np.ndarray
    seed: int | None
    prior: tuple[float, float] | None
    sampler_name: str

    @property
    def m(self) -> int:
        return int(self.x.shape[0])

    @property
    def n(self) -> int:
        return int(self.x.shape[1])

    @property
    def y(self) -> np.ndarray:
        """Labels yⱼᵢ = 1{xⱼᵢ ≥ θⱼ} (bool, m × n)."""
        return self.x >= self.theta[:, None]

    @property
    def digest(self) -> str:
        """The first 16 hex digits of the SHA-256 of θ's and then x's float64 bytes (C order, little-endian):
        two corpora with the same digest hold the same numbers, bit for bit (up to a hash collision)."""
        sha = hashlib.sha256()
        for array in (self.theta, self.x):
            sha.update(np.ascontiguousarray(array, dtype="<f8").tobytes())
        return sha.hexdigest()[:16]

    def _display_rows(self) -> list[tuple[str, object]]:
        prior = "unknown" if self.prior is None else f"Uniform[{self.prior[0]:g}, {self.prior[1]:g}]"
        return [("m", self.m), ("n", self.n), ("seed", "unknown" if self.seed is None else self.seed),
                ("prior", prior), ("sampler", self.sampler_name), ("sha256", self.digest)]

    def to_dict(self) -> dict:
        """JSON-ready metadata, never the arrays: m, n, seed, prior (a list or None), sampler, sha256
        (:attr:`digest`)."""
        return {"m": self.m, "n": self.n, "seed": self.seed,
                "prior": None if self.prior is None else [float(v) for v in self.prior],
                "sampler": self.sampler_name, "sha256": self.digest}


def _positive_int(value, name: str) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < 1:
        raise InputError(f"{name} must be a positive integer, got {value!r}")
    return int(value)


def _check_prior(prior) -> tuple[float, float]:
    try:
        lo, hi = (float(v) for v in prior)
    except (TypeError, ValueError):
        raise InputError(f"prior must be two numbers (l, u), got {prior!r}") from None
    if not (math.isfinite(lo) and math.isfinite(hi) and 0.0 <= lo < hi <= 1.0):
        raise InputError(f"prior must satisfy 0 <= l < u <= 1, got ({lo}, {hi})")
    return lo, hi


def validate_corpus_arrays(x, theta, *, where: str = "corpus") -> tuple[np.ndarray, np.ndarray]:
    """Check x (m × n, float64, finite, in [0, 1]) and θ (m,, float64, finite, in [0, 1]).

    Returns the arrays (C-contiguous float64); raises InputError naming the first problem.
    """
    x = np.asarray(x)
    theta = np.asarray(theta)
    if x.dtype != np.float64:
        raise InputError(f"{where}: x must be float64, got {x.dtype}")
    if theta.dtype != np.float64:
        raise InputError(f"{where}: theta must be float64, got {theta.dtype}")
    if x.ndim != 2 or x.shape[0] < 1 or x.shape[1] < 1:
        raise InputError(f"{where}: x must be a non-empty 2-D array (m × n), got shape {x.shape}")
    if theta.shape != (x.shape[0],):
        raise InputError(f"{where}: theta must have shape ({x.shape[0]},) to match x {x.shape}, got {theta.shape}")
    if not np.all(np.isfinite(x)):
        raise InputError(f"{where}: x has {int(np.count_nonzero(~np.isfinite(x)))} non-finite values")
    if not np.all(np.isfinite(theta)):
        raise InputError(f"{where}: theta has {int(np.count_nonzero(~np.isfinite(theta)))} non-finite values")
    if x.min() < 0.0 or x.max() > 1.0:
        raise InputError(f"{where}: x must lie in [0, 1], found values in [{x.min()!r}, {x.max()!r}]")
    if theta.min() < 0.0 or theta.max() > 1.0:
        raise InputError(f"{where}: theta must lie in [0, 1], found values in [{theta.min()!r}, {theta.max()!r}]")
    return np.ascontiguousarray(x), np.ascontiguousarray(theta)


def _frozen(array: np.ndarray, *, fresh: bool = False) -> np.ndarray:
    """A read-only float64 C-contiguous array; no copy of a ``fresh`` array (one nobody else holds)."""
    if not (fresh and array.dtype == np.float64 and array.flags.c_contiguous and array.flags.owndata):
        array = np.array(array, dtype=np.float64, copy=True, order="C")
    array.setflags(write=False)
    return array


def make_corpus(m: int, n: int, *, seed: int, prior=(0.0, 1.0), sampler=None) -> Corpus:
    """Sample m tasks: θⱼ ~ Uniform[l, u] (``prior``), then x ~ ``sampler`` (m × n).

    ``sampler(rng, shape)`` must return float64-convertible values in [0, 1] of
    that shape (default :func:`uniform_sampler`); its output is validated.
    ``seed`` is an integer in [0, 2⁶³) (required: every corpus is reproducible);
    m·n ≤ :data:`MAX_TOKENS` and the arrays must fit in the memory available.
    """
    m = _positive_int(m, "m")
    n = _positive_int(n, "n")
    if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)) or not 0 <= seed < SEED_LIMIT:
        raise InputError(f"seed must be an integer in [0, 2^63), got {seed!r}")
    if m * n > MAX_TOKENS:
        raise InputError(f"m·n = {m * n} tokens is above the supported {MAX_TOKENS:.0e}")
    # x (m × n float64) plus one temporary of the same size while it is validated and frozen
    require_memory(16 * m * n + 16 * m, f"a corpus of m·n = {m * n} tokens")
    lo, hi = _check_prior(prior)
    if sampler is None:
        sampler = uniform_sampler
    if not callable(sampler):
        raise InputError(f"sampler must be callable(rng, shape), got {sampler!r}")
    rng = np.random.default_rng(int(seed))
    theta = lo + (hi - lo) * rng.random(m)
    theta = np.minimum(theta, hi)  # lo + (hi − lo)·u can round up past hi
    x = np.asarray(sampler(rng, (m, n)))
    if x.shape != (m, n):
        raise InputError(f"sampler returned shape {x.shape}, expected {(m, n)}")
    if not np.issubdtype(x.dtype, np.floating) and not np.issubdtype(x.dtype, np.integer):
        raise InputError(f"sampler returned dtype {x.dtype}, expected real numbers")
    x = x.astype(np.float64, copy=False)
    x, theta = validate_corpus_arrays(x, theta, where="sampler output")
    name = getattr(sampler, "__name__", None) or type(sampler).__name__
    fresh = sampler is uniform_sampler  # a custom sampler might hand out an array it keeps
    return Corpus(x=_frozen(x, fresh=fresh), theta=_frozen(theta, fresh=True), seed=int(seed), prior=(lo, hi),
                  sampler_name=str(name))


def save_corpus(corpus: Corpus, path) -> Path:
    """Write ``corpus`` as .npz (x, theta, and metadata seed, prior, sampler_name); returns the path."""
    path = Path(path)
    meta = {}
    if corpus.seed is not None:
        meta["seed"] = np.int64(corpus.seed)
    if corpus.prior is not None:
        meta["prior"] = np.asarray(corpus.prior, dtype=np.float64)
    meta["sampler_name"] = np.str_(corpus.sampler_name)
    try:
        with open(path, "wb") as handle:
            np.savez(handle, x=corpus.x, theta=corpus.theta, **meta)
    except OSError as exc:
        raise InputError(f"cannot write {path}: {exc.strerror or exc}") from None
    return path


def load_corpus(path) -> Corpus:
    """Read and validate a corpus .npz (see the module docstring); InputError on any problem."""
    path = Path(path)
    if not path.is_file():
        raise InputError(f"corpus file {path} does not exist or is not a file")
    try:
        data = np.load(path, allow_pickle=False)
        if not isinstance(data, np.lib.npyio.NpzFile):
            raise InputError(f"{path}: not an .npz archive (a single .npy array?)")
        with data:
            missing = [k for k in ("x", "theta") if k not in data.files]
            if missing:
                raise InputError(f"{path}: missing array(s) {', '.join(missing)} (has {', '.join(data.files) or 'none'})")
            x = data["x"]
            theta = data["theta"]
            seed = data["seed"] if "seed" in data.files else None
            prior = data["prior"] if "prior" in data.files else None
            sampler_name = data["sampler_name"] if "sampler_name" in data.files else None
    except InputError:
        raise
    except (zipfile.BadZipFile, ValueError, OSError, EOFError, KeyError) as exc:
        raise InputError(f"{path}: not a readable .npz corpus ({type(exc).__name__}: {exc})".replace("\n", " ")) \
            from None
    x, theta = validate_corpus_arrays(x, theta, where=str(path))
    if seed is not None:
        if seed.shape != () or not np.issubdtype(seed.dtype, np.integer) or int(seed) < 0:
            raise InputError(f"{path}: seed must be a non-negative integer scalar, got {seed!r}")
        seed = int(seed)
    if prior is not None:
        if prior.shape != (2,) or not np.issubdtype(prior.dtype, np.floating):
            raise InputError(f"{path}: prior must be 2 floats, got shape {prior.shape} dtype {prior.dtype}")
        prior = _check_prior(prior)
        if theta.min() < prior[0] or theta.max() > prior[1]:
            raise InputError(f"{path}: theta outside the stated prior [{prior[0]}, {prior[1]}]")
    if sampler_name is not None:
        if sampler_name.shape != () or sampler_name.dtype.kind != "U":
            raise InputError(f"{path}: sampler_name must be a string scalar")
        sampler_name = str(sampler_name)
    else:
        sampler_name = "unknown"
    return Corpus(x=_frozen(x, fresh=True), theta=_frozen(theta, fresh=True), seed=seed, prior=prior,
                  sampler_name=sampler_name)
