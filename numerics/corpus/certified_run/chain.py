"""The certified chain of a GD run: enclosures of the exact iterates z_k of z_{k+1} = z_k − η∇L̂(z_k), step by step.

For a corpus (x, θ) (one head, docs/model.md §3), a start z₀ = (a₀, b₀) and a step η (the exact doubles
the trainer uses, :func:`stumpcheck.numerics.corpus.gd.train_gd`), :func:`certify_training` encloses the
iterates of the *exact-arithmetic* map, X_k ∋ z_k with X₀ = {z₀}, by the Lohner step of
:mod:`~stumpcheck.numerics.corpus.certified_run.lohner` (a centre, a frame and a box per step), with the
fast float64 interval layer's enclosures of ∇L̂ at the centre and of ∇²L̂ over the hull of X_k
(:func:`stumpcheck.numerics.certified.fast.corpus.corpus_enclosure`), until the trainer's stopping rule
holds for the whole set:

* ``b_target``: the trainer stops at the first k with b_k ≥ b_target. The chain stops at step K when the
  hull of X_K has b ≥ b_target everywhere, having checked b < b_target on the hull of every X_k, k < K
  (so the exact run stops exactly at K). A hull that straddles b_target leaves the stopping step
  undecided: the chain ends there, unproved;
* ``max_steps``: k = max_steps (the trainer's --steps cap);
* ``t_max``: k·η ≥ t_max, evaluated as the trainer does (a function of k alone).

A chain also ends, unproved, when a hull leaves b > 0 (the model's regime, where the trainer would stop
as diverged and the fast layer is not defined), when its relative width in b exceeds
``max_relative_width``, or when a frame's determinant is not certainly non-zero. What was proved up to
there is kept: X_k ∋ z_k for every recorded k.

What the result is about: the exact map with these doubles. The float64 trainer rounds every step, and
its iterates differ from the exact ones (:func:`float_distances` measures by how much, against the hulls).

Cost per step: one point enclosure and one box enclosure with the Hessian (about 9 and 11 ms at
m = n = 256), a few hundred interval operations, a 2×2 QR.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass, field

import numpy as np

from stumpcheck.numerics.certified.fast.corpus import corpus_enclosure
from stumpcheck.numerics.display import Display, brief_text, figure_text, shape_text
from stumpcheck.numerics.json_output import finite_json
from stumpcheck.numerics.corpus.certified_run.lohner import gd_point_image, hull_box, image_coordinates, next_frame
from stumpcheck.numerics.corpus.steps import corpus_arrays
from stumpcheck.numerics.precision import InputError, finite_float

__all__ = ["CertifiedTraining", "certify_training", "float_distances", "stop_reason", "DEFAULT_MAX_RELATIVE_WIDTH",
           "MAX_CERTIFIED_STEPS"]

#: a chain whose hull is wider in b than this fraction of b ends, unproved (nothing useful is left to say)
DEFAULT_MAX_RELATIVE_WIDTH = 1e-3
#: most steps one certified chain may take (a record a step is kept: about 1 kB each in the certificate)
MAX_CERTIFIED_STEPS = 200_000


@dataclass(repr=False)
class CertifiedTraining(Display):
    """The chain of :func:`certify_training`.

    ``centres`` (K+1, 2), ``frames`` (K+1, 2, 2), ``boxes`` (K+1, 2, 2) (the coordinates r as [lo, hi])
    and ``hulls`` (K+1, 2, 2) (rows a, b as [lo, hi]) hold X_k = {c_k + A_k r : r ∈ R_k} ∋ z_k for
    k = 0 … K = ``steps``. ``proved`` is True when the trainer's stopping rule holds for the whole X_K
    (``stopped_because`` says which one: "b_target", "steps" or "t_max"); otherwise ``stopped_because``
    says why the chain ended and only the steps recorded are proved. ``final_box`` is the hull of X_K.
    Shown (:class:`~stumpcheck.numerics.display.Display`) by its verdict, steps and final box;
    :meth:`to_dict` has every field, :meth:`to_csv` one row a step (step, a_lo, a_hi, b_lo, b_hi: the hulls).
    """

    a0: float
    b0: float
    eta: float
    b_target: float | None
    max_steps: int | None
    t_max: float | None
    centres: np.ndarray
    frames: np.ndarray
    boxes: np.ndarray
    hulls: np.ndarray
    proved: bool
    stopped_because: str
    seconds: float = 0.0
    settings: dict = field(default_factory=dict)

    @property
    def steps(self) -> int:
        """K: the last step enclosed."""
        return int(self.centres.shape[0]) - 1

    @property
    def final_box(self) -> dict:
        """{"a": (lo, hi), "b": (lo, hi)}: the hull of X_K (doubles, outward)."""
        h = self.hulls[-1]
        return {"a": (float(h[0, 0]), float(h[0, 1])), "b": (float(h[1, 0]), float(h[1, 1]))}

    def relative_width_b(self, k: int = -1) -> float:
        """(b_hi − b_lo)/b_lo of the hull of X_k (default the last)."""
        lo, hi = self.hulls[k, 1]
        return float((hi - lo) / lo)

    def _display_rows(self) -> list:
        box = self.final_box
        return [("proved", str(self.proved)), ("stopped_because", brief_text(self.stopped_because, 80, clause=False)),
                ("steps", str(self.steps)), ("final a", f"[{box['a'][0]!r}, {box['a'][1]!r}]"),
                ("final b", f"[{box['b'][0]!r}, {box['b'][1]!r}]"),
                ("relative width in b", figure_text(self.relative_width_b(), 3)),
                ("eta", repr(self.eta)), ("arithmetic", f"float64 intervals (fast layer), {self.seconds:.3g} s"),
                ("arrays", shape_text({"centres": self.centres, "frames": self.frames, "boxes": self.boxes,
                                       "hulls": self.hulls}))]

    def _display_columns(self) -> dict:
        h = self.hulls
        return {"step": np.arange(h.shape[0]), "a_lo": h[:, 0, 0], "a_hi": h[:, 0, 1], "b_lo": h[:, 1, 0],
                "b_hi": h[:, 1, 1]}

    def to_dict(self) -> dict:
        """Every field, JSON-ready (arrays as lists of doubles)."""
        return finite_json({"a0": self.a0, "b0": self.b0, "eta": self.eta, "b_target": self.b_target,
                            "max_steps": self.max_steps, "t_max": self.t_max, "proved": self.proved,
                            "stopped_because": self.stopped_because, "steps": self.steps,
                            "final_box": {k: list(v) for k, v in self.final_box.items()},
                            "centres": self.centres, "frames": self.frames, "boxes": self.boxes, "hulls": self.hulls,
                            "seconds": self.seconds, "settings": self.settings})


def stop_reason(k: int, b_lo: float, b_hi: float, *, eta: float, b_target, max_steps, t_max):
    """("stop", rule) when the trainer's rule stops every point of a set with b ∈ [b_lo, b_hi] at step k,
    ("go", None) when it stops none, ("undecided", sentence) otherwise; the trainer's order: steps, t_max, b_target."""
    if max_steps is not None and k >= max_steps:
        return "stop", "steps"
    if t_max is not None and k * eta >= t_max:
        return "stop", "t_max"
    if b_target is not None:
        if b_lo >= b_target:
            return "stop", "b_target"
        if b_hi >= b_target:
            return "undecided", (f"undecided stop: at step {k} the enclosure b in [{float(b_lo)!r}, {float(b_hi)!r}] "
                                 f"straddles b_target = {b_target!r}, so the exact run may stop at step {k} or later")
    return "go", None


def _validated(x, theta, a0, b0, eta, b_target, max_steps, t_max, max_relative_width):
    x, theta = corpus_arrays(x, theta)
    a0 = finite_float(a0, "a0")
    b0 = finite_float(b0, "b0", positive=True)
    eta = finite_float(eta, "eta", positive=True)
    b_target = None if b_target is None else finite_float(b_target, "b_target", positive=True)
    t_max = None if t_max is None else finite_float(t_max, "t_max", positive=True)
    if max_steps is not None:
        if isinstance(max_steps, bool) or not isinstance(max_steps, (int, np.integer)) or max_steps < 0:
            raise InputError(f"max_steps must be a non-negative integer, got {max_steps!r}")
        max_steps = int(max_steps)
    cap = min(v for v in (max_steps, MAX_CERTIFIED_STEPS) if v is not None)
    if t_max is not None:
        cap = min(cap, math.ceil(t_max / eta))
    if max_steps is None and t_max is None and b_target is None:
        raise InputError("certify_training needs a stopping rule: b_target, max_steps or t_max")
    if cap > MAX_CERTIFIED_STEPS:
        raise InputError(f"a certified chain takes at most {MAX_CERTIFIED_STEPS} steps; the stopping rule allows {cap}")
    width = finite_float(max_relative_width, "max_relative_width", positive=True)
    return x, theta, a0, b0, eta, b_target, max_steps, t_max, width


def certify_training(x, theta, *, a0: float, b0: float, eta: float, b_target: float | None = None,
                     max_steps: int | None = None, t_max: float | None = None,
                     max_relative_width: float = DEFAULT_MAX_RELATIVE_WIDTH, threads: int | None = None,
                     progress=None, checkpoint=None, checkpoint_seconds: float = 10.0,
                     resume_from: CertifiedTraining | None = None) -> CertifiedTraining:
    """Enclose the exact GD iterates from (a₀, b₀) with step η on the corpus (x, θ) until the trainer's
    stopping rule holds for the whole enclosure (module docstring); one-head L̂.

    ``a0``, ``b0``, ``eta``: the trainer's doubles, taken exactly. At least one of ``b_target``,
    ``max_steps``, ``t_max``; a chain takes at most :data:`MAX_CERTIFIED_STEPS` steps (InputError when
    ``max_steps`` and ``t_max`` allow more and ``b_target`` is not given: it could never end otherwise).
    ``threads``: the fast layer's (its result does not depend on it). ``progress(k, hull)`` after each
    step. ``checkpoint(partial)``, if given, receives the chain so far (a :class:`CertifiedTraining` with
    ``stopped_because`` "paused") every ``checkpoint_seconds`` and when the run is interrupted
    (KeyboardInterrupt, then re-raised); ``resume_from`` such a partial chain of the same start, step and
    rule continues from its last step (each step depends only on the last set, so the result is the
    uninterrupted one).
    Returns a :class:`CertifiedTraining`; InputError on bad input.

        >>> from stumpcheck.api import certify_training, make_corpus
        >>> corpus = make_corpus(16, 16, seed=0)
        >>> chain = certify_training(corpus.x, corpus.theta, a0=6.0, b0=4.0, eta=100.0, max_steps=5)
        >>> chain.proved, chain.steps, chain.stopped_because
        (True, 5, 'steps')
        >>> box = chain.final_box                       # the hull of X_5: z_5 of the exact map lies in it
        >>> bool(box["b"][0] <= box["b"][1] and chain.relative_width_b() < 1e-12)
        True
    """
    started = time.perf_counter()
    x, theta, a0, b0, eta, b_target, max_steps, t_max, width = _validated(
        x, theta, a0, b0, eta, b_target, max_steps, t_max, max_relative_width)
    if max_steps is None and t_max is None:
        cap = MAX_CERTIFIED_STEPS
    else:
        cap = min(v for v in (max_steps, None if t_max is None else math.ceil(t_max / eta), MAX_CERTIFIED_STEPS)
                  if v is not None)
    settings = {"max_relative_width": width, "estimator": "one-head"}

    def result(stopped, proved):
        n = min(len(centres), len(frames), len(boxes), len(hulls))   # an interrupt may fall between the appends
        return CertifiedTraining(a0=a0, b0=b0, eta=eta, b_target=b_target, max_steps=max_steps, t_max=t_max,
                                 centres=np.array(centres[:n]), frames=np.array(frames[:n]), boxes=np.array(boxes[:n]),
                                 hulls=np.array(hulls[:n]), proved=proved, stopped_because=stopped,
                                 seconds=time.perf_counter() - started, settings=settings)

    if resume_from is not None:
        centres, frames, boxes, hulls = _resumed(resume_from, a0, b0, eta, b_target, max_steps, t_max, width)
    else:
        c = np.array([a0, b0])
        A = np.eye(2)
        R = np.zeros((2, 2))
        centres, frames, boxes, hulls = [c], [A], [R], [hull_box(c, A, R)]
    saved = time.monotonic()
    try:
        stopped, proved = _run(x, theta, eta, b_target, max_steps, t_max, width, cap, threads, progress,
                               centres, frames, boxes, hulls,
                               None if checkpoint is None else lambda: checkpoint(result("paused", False)),
                               checkpoint_seconds, saved)
    except KeyboardInterrupt:
        if checkpoint is not None:
            checkpoint(result("paused", False))
        raise
    return result(stopped, proved)


def _resumed(chain: CertifiedTraining, a0, b0, eta, b_target, max_steps, t_max, width):
    """The lists of a paused chain of the same run (InputError otherwise), its sets checked to be hulls again."""
    if (chain.a0, chain.b0, chain.eta, chain.b_target, chain.max_steps, chain.t_max) != \
            (a0, b0, eta, b_target, max_steps, t_max) or chain.settings.get("max_relative_width") != width:
        raise InputError("the chain to resume was made with another start, step, stopping rule or width limit")
    if not (np.array_equal(chain.centres[0], [a0, b0]) and np.array_equal(chain.frames[0], np.eye(2))
            and not chain.boxes[0].any()):
        raise InputError("the chain to resume does not start at (a0, b0)")
    for k in range(chain.steps + 1):
        if not np.array_equal(hull_box(chain.centres[k], chain.frames[k], chain.boxes[k]), chain.hulls[k]):
            raise InputError(f"the chain to resume is inconsistent at step {k}")
    return ([v for v in chain.centres], [v for v in chain.frames], [v for v in chain.boxes],
            [v for v in chain.hulls])


def _run(x, theta, eta, b_target, max_steps, t_max, width, cap, threads, progress, centres, frames, boxes, hulls,
         save, save_seconds, saved):
    """Extend the lists step by step until the rule holds or the chain must end: (stopped_because, proved)."""
    while True:
        k = len(centres) - 1
        c, A, R, Z = centres[-1], frames[-1], boxes[-1], hulls[-1]
        verdict, rule = stop_reason(k, Z[1, 0], Z[1, 1], eta=eta, b_target=b_target, max_steps=max_steps,
                                    t_max=t_max)
        if verdict == "stop":
            return rule, True
        if verdict == "undecided":
            return rule, False
        if k >= cap:
            return f"step cap: the stopping rule did not hold within {cap} steps", False
        grad = corpus_enclosure(x, theta, float(c[0]), float(c[1]), threads=threads)[1:]
        hess = corpus_enclosure(x, theta, (float(Z[0, 0]), float(Z[0, 1])), (float(Z[1, 0]), float(Z[1, 1])),
                                hessian=True, threads=threads)[3:]
        image = gd_point_image(c, grad, eta)
        if not np.all(np.isfinite(image)) or not np.all(np.isfinite(hess)):
            return f"step {k + 1}: an enclosure of the gradient or the Hessian is not finite", False
        c_new, A_new = next_frame(image, hess, eta, A, R)
        R_new, ok = image_coordinates(image, hess, eta, A, R, c_new, A_new)
        if not ok:
            return f"step {k + 1}: the new frame's determinant is not certainly non-zero", False
        Z_new = hull_box(c_new, A_new, R_new)
        if not np.all(np.isfinite(Z_new)) or not Z_new[1, 0] > 0.0:
            return (f"step {k + 1}: the enclosure leaves b > 0 (b in [{float(Z_new[1, 0])!r}, "
                    f"{float(Z_new[1, 1])!r}])"), False
        if (Z_new[1, 1] - Z_new[1, 0]) > width * Z_new[1, 0]:
            return (f"step {k + 1}: the enclosure is too wide (b in [{float(Z_new[1, 0])!r}, {float(Z_new[1, 1])!r}], "
                    f"relative width above {width:g})"), False
        centres.append(c_new)
        frames.append(A_new)
        boxes.append(R_new)
        hulls.append(Z_new)
        if progress is not None:
            progress(k + 1, Z_new)
        if save is not None and time.monotonic() - saved > save_seconds:
            save()
            saved = time.monotonic()


def float_distances(chain: CertifiedTraining, a, b) -> dict:
    """How far the float64 trainer's iterates (a[k], b[k]), k = 0, 1, … lie from the hulls of X_k: per step the
    distance (Euclidean, 0 inside) and the relative distance in b (distance / b); the largest of each, how many lie
    inside their hull, and the steps compared (the shorter of the two runs)."""
    a = np.asarray(a, dtype=np.float64)
    b = np.asarray(b, dtype=np.float64)
    count = min(a.size, b.size, chain.steps + 1)
    h = chain.hulls[:count]
    za, zb = a[:count], b[:count]
    da = np.maximum(np.maximum(h[:, 0, 0] - za, za - h[:, 0, 1]), 0.0)
    db = np.maximum(np.maximum(h[:, 1, 0] - zb, zb - h[:, 1, 1]), 0.0)
    distance = np.hypot(da, db)
    inside = int(np.count_nonzero(distance == 0.0))
    worst = int(np.argmax(distance)) if count else 0
    return {"steps_compared": int(count), "inside": inside, "max_distance": float(distance.max()) if count else 0.0,
            "max_distance_step": worst, "max_relative_distance": float((distance / zb).max()) if count else 0.0,
            "max_hull_width_b": float((h[:, 1, 1] - h[:, 1, 0]).max()) if count else 0.0,
            "distance": distance}
