"""Constant-step gradient descent on the corpus loss L̂ (docs/model.md §4), with checkpoints.

    z_{k+1} = z_k − η ∇L̂(z_k),   z = (a, b),   t_k = k·η  (flow time of step k)

∇L̂ is the exact analytic gradient of :func:`stumpcheck.numerics.corpus.empirical.loss_and_gradient`
(float64, log-space softmax). The default step comes from the curvature at the
start (:func:`default_eta`): η = 1/‖∇²L̂(a₀, b₀)‖₂, half the local descent-lemma
bound. The loss flattens as b grows (L ≈ 1/(2b²), curvature ≈ b⁻⁴), so with a
constant η reaching scale b takes about b⁴/(2η) steps: a large-resolution start
b₀ and the curvature-based η decide which scales are reachable.

Trajectory rule: the loss L̂(z_k) and z_k are recorded at every step k with
k ≡ 0 (mod ``record_every``) and at the final step (default: every step).
Stop rules (the first one met ends the run, checked after evaluating z_k):
``steps`` (k = steps), ``t_max`` (k·η ≥ t_max), ``b_target`` (b_k ≥ b_target).
A run whose ``steps`` or ⌈t_max/η⌉ (whichever is smaller) exceeds
:data:`MAX_STEPS` is refused before the first step (:func:`step_budget`):
a horizon such as t_max = 10³⁰⁰ would otherwise never end.
A step that leaves b > 0 or produces a non-finite value ends the run at the
last good iterate (``stopped_because`` says so).

Checkpoints (:mod:`stumpcheck.numerics.corpus.checkpoint`) are written atomically at the
start, every ``checkpoint_every`` steps and at the end; ``resume=True`` continues from the
last one after checking the corpus fingerprint and every setting, and ends
bit-identical to an uninterrupted run (the update uses only z_k and η).

Where GD is too long, :func:`stumpcheck.numerics.corpus.gradient_flow.empirical_flow` integrates
the gradient flow of L̂ adaptively instead (GD converges to it at first order
in η; tested); results must say which one was used.
"""

from __future__ import annotations

import json
import math
import time
from dataclasses import dataclass, field

import numpy as np

from stumpcheck.numerics.display import Display, brief_text, figure_text, last, shape_text
from stumpcheck.numerics.json_output import finite_json
from stumpcheck.numerics.precision import InputError, finite_float
from stumpcheck.numerics.corpus.checkpoint import (TRAJECTORY_KEYS, Checkpoint, CheckpointWriter, corpus_fingerprint,
                                          read_checkpoint)
from stumpcheck.numerics.corpus.steps import (ETA_RULES, ETA_SAFETY, StepBound, choose_eta, corpus_arrays,
                                              default_eta, estimator_name, step_bound)

__all__ = ["DEFAULT_A0", "DEFAULT_B0", "ETA_SAFETY", "MAX_RECORDS", "MAX_STEPS", "StepBound", "TrainResult", "default_eta", "step_bound",
           "step_budget", "train_gd"]

#: docs/model.md §4: a₀ = b₀ = 10 by default, so that the calibration phase (a → b + 2 log b) is visible
DEFAULT_A0 = 10.0
DEFAULT_B0 = 10.0
#: most GD steps one run may take (measured 47 µs a step at m = n = 8: about 8 min)
MAX_STEPS = 10 ** 7
#: most trajectory rows one run records (about 350 bytes each while running, measured): ⌈steps/record_every⌉
MAX_RECORDS = 10 ** 6


def step_budget(steps: int | None, t_max: float | None, eta: float, record_every: int = 1) -> int | None:
    """The most steps a run with these stop rules takes: min(steps, ⌈t_max/η⌉), None when neither is given.

    InputError when it exceeds :data:`MAX_STEPS` (naming the rule and the steps it would take), or when it
    would record more than :data:`MAX_RECORDS` rows at ``record_every``.
    """
    by_time = None if t_max is None else t_max / eta
    budget = min([v for v in (steps, by_time) if v is not None], default=None)
    if budget is None:
        return None
    if budget > MAX_STEPS:
        if steps is not None and (by_time is None or steps <= by_time):
            raise InputError(f"steps = {steps} is above the cap of {MAX_STEPS:.0e} GD steps a run")
        raise InputError(f"t_max = {t_max:g} at eta = {eta:.6g} needs about {by_time:.3g} GD steps, above the cap "
                         f"of {MAX_STEPS:.0e} steps a run; lower t_max or take a larger eta")
    budget = math.ceil(budget)
    if -(-budget // record_every) > MAX_RECORDS:
        raise InputError(f"{budget} steps recorded every {record_every} would keep {-(-budget // record_every)} "
                         f"trajectory rows, above the {MAX_RECORDS:.0e} a run keeps; record every "
                         f"{-(-budget // MAX_RECORDS)} steps or more (record_every)")
    return budget


@dataclass(repr=False)
class TrainResult(Display):
    """Outcome of :func:`train_gd`: frozen (a, b), η and its rule, steps taken, trajectory arrays.

    ``trajectory`` maps step (int), t = k·η, a, b, loss (L̂(z_k)) to arrays of the
    recorded steps. ``stopped_because`` is one of "steps", "t_max", "b_target",
    "max_steps_this_run" (paused, resumable), "step cap: …" (only ``b_target`` was given and b did not reach it
    within :data:`MAX_STEPS` steps, or within the steps whose rows :data:`MAX_RECORDS` can keep) or
    "diverged: …". Shown
    (:class:`~stumpcheck.numerics.display.Display`) by why it stopped, the frozen (a, b), L̂ and η;
    :meth:`to_dict` (every field), :meth:`to_csv` (trajectory.csv) and :meth:`to_dataframe` have the
    trajectory's columns step, t, a, b, loss, one row a recorded step.
    """

    a: float
    b: float
    eta: float
    eta_rule: str
    steps: int
    trajectory: dict
    stopped_because: str
    settings: dict = field(default_factory=dict)
    corpus_fingerprint: str = ""
    resumed_from_step: int | None = None
    seconds: float = 0.0

    @property
    def loss(self) -> float:
        """L̂ at the final (frozen) parameters."""
        return float(self.trajectory["loss"][-1])

    def _display_rows(self) -> list:
        return [("stopped_because", brief_text(self.stopped_because, 80, clause=False)), ("steps", str(self.steps)),
                ("a", figure_text(self.a, 12)), ("b", figure_text(self.b, 12)),
                ("loss L̂", figure_text(last(self.trajectory["loss"]), 6)),
                ("eta", f"{figure_text(self.eta, 6)} ({brief_text(self.eta_rule)})"),
                ("estimator", f"{self.settings.get('estimator', '?')}, float64, {self.seconds:.3g} s"),
                ("arrays", shape_text(self.trajectory))]

    def _display_columns(self) -> dict:
        return {key: self.trajectory[key] for key in TRAJECTORY_KEYS}

    def to_dict(self) -> dict:
        """Every field and the final L̂, JSON-ready (the trajectory's arrays as lists, NaN/±inf as None)."""
        return finite_json({"a": self.a, "b": self.b, "loss": last(self.trajectory["loss"]), "eta": self.eta,
                            "eta_rule": self.eta_rule, "steps": self.steps, "stopped_because": self.stopped_because,
                            "trajectory": self._display_columns(), "settings": self.settings,
                            "corpus_fingerprint": self.corpus_fingerprint,
                            "resumed_from_step": self.resumed_from_step, "seconds": self.seconds})


def _positive_int(value, name: str) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < 1:
        raise InputError(f"{name} must be a positive integer, got {value!r}")
    return int(value)


def _settings(a0, b0, eta, estimator, steps, t_max, b_target, record_every, method) -> dict:
    settings = {"a0": a0, "b0": b0, "eta": eta, "estimator": estimator, "steps": steps, "t_max": t_max,
                "b_target": b_target, "record_every": record_every, "method": method}
    return json.loads(json.dumps(settings))  # the form a checkpoint stores (floats round-trip exactly)


def _check_resumable(state: Checkpoint, settings: dict, fingerprint: str, where) -> None:
    if state.fingerprint != fingerprint:
        raise InputError(f"checkpoint in {where} was made on a different corpus (fingerprint "
                         f"{state.fingerprint[:12]}… vs {fingerprint[:12]}…)")
    differ = [f"{k} {state.settings.get(k)!r} (checkpoint) vs {settings[k]!r} (now)"
              for k in settings if state.settings.get(k) != settings[k]]
    if differ or set(state.settings) != set(settings):
        raise InputError(f"checkpoint in {where} was made with other settings: {'; '.join(differ) or 'keys differ'}")


def train_gd(x, theta, *, a0: float = DEFAULT_A0, b0: float = DEFAULT_B0, eta: float | None = None,
             steps: int | None = None, b_target: float | None = None, t_max: float | None = None,
             estimator: str = "one-head", checkpoint_dir=None, checkpoint_every: int = 1000, resume: bool = False,
             progress=None, record_every: int = 1, max_steps_this_run: int | None = None,
             method: str = "dense", keep_b_positive: bool = True, step_rule: str = "corpus",
             chosen_eta: tuple[float, str] | None = None, stop_rule=None) -> TrainResult:
    """Run constant-step GD on L̂ of the corpus (x, θ) from (a₀, b₀); see the module docstring.

    ``eta=None`` uses :func:`default_eta`. At least one stop rule (``steps``,
    ``t_max``, ``b_target``) is required. ``progress(step, a, b, loss)`` is called
    after each evaluation of L̂(z_k) (it may raise KeyboardInterrupt; the last
    checkpoint then stays valid). ``max_steps_this_run`` pauses after that many
    steps of this call (writing a checkpoint), to be continued with
    ``resume=True``. ``method`` is passed to :func:`stumpcheck.numerics.corpus.empirical.loss_and_gradient`.
    ``keep_b_positive=False`` lets an iterate leave the model's regime b > 0
    (L̂ is defined for every real b) instead of ending the run there.
    ``step_rule`` names the rule for ``eta=None`` (:data:`stumpcheck.numerics.corpus.steps.ETA_RULES`:
    "corpus", the default here, "population" or "lookahead"); a run that would
    leave the model ends with ``stopped_because`` naming the step and the rule.
    ``chosen_eta`` is the (η, rule sentence) that ``choose_eta`` already returned
    for this start, estimator and ``step_rule`` (so a caller that checked it
    first need not compute it twice). ``stop_rule(k, a, b)``, if given, is asked at every iterate and
    ends the run with the sentence it returns (None: go on). A run longer than :data:`MAX_STEPS`
    steps is refused (:func:`step_budget`). Invalid input raises InputError.
    """
    from stumpcheck.numerics.corpus.empirical import loss_and_gradient

    started = time.perf_counter()
    x, theta = corpus_arrays(x, theta)
    a0 = finite_float(a0, "a0")
    b0 = finite_float(b0, "b0", positive=True)
    estimator = estimator_name(estimator)
    steps = None if steps is None else _positive_int(steps, "steps")
    t_max = None if t_max is None else finite_float(t_max, "t_max", positive=True)
    b_target = None if b_target is None else finite_float(b_target, "b_target", positive=True)
    if steps is None and t_max is None and b_target is None:
        raise InputError("train_gd needs a stop rule: steps, t_max or b_target")
    checkpoint_every = _positive_int(checkpoint_every, "checkpoint_every")
    record_every = _positive_int(record_every, "record_every")
    if max_steps_this_run is not None:
        max_steps_this_run = _positive_int(max_steps_this_run, "max_steps_this_run")
    if resume and checkpoint_dir is None:
        raise InputError("resume needs a checkpoint directory")
    if method not in ("dense", "pruned"):
        raise InputError(f"unknown method {method!r}; one of dense, pruned")

    if step_rule not in ETA_RULES:
        raise InputError(f"unknown step rule {step_rule!r}; one of {', '.join(ETA_RULES)}")
    if eta is None:
        eta_value, eta_rule = (chosen_eta if chosen_eta is not None
                               else choose_eta(x, theta, a0, b0, step_rule, estimator=estimator))
        rule_name = f"the {step_rule} step rule"
    else:
        eta_value = finite_float(eta, "eta", positive=True)
        eta_rule = f"eta = {eta_value:.6g}, given by the user"
        rule_name = "the user's step"
    budget = step_budget(steps, t_max, eta_value, record_every)
    # b_target alone bounds nothing: a run whose b never reaches it ends at the caps (never a silent hang)
    cap = budget if budget is not None else min(MAX_STEPS, MAX_RECORDS * record_every)
    settings = _settings(a0, b0, eta_value, estimator, steps, t_max, b_target, record_every, method)
    settings["keep_b_positive"] = bool(keep_b_positive)
    fingerprint = corpus_fingerprint(x, theta)

    source = x
    if method == "pruned":
        from stumpcheck.numerics.corpus.empirical import sort_corpus

        source = sort_corpus(x, theta)
    k, a, b = 0, a0, b0
    trajectory = {key: [] for key in TRAJECTORY_KEYS}
    resumed_from = None
    stopped = None
    writer = None if checkpoint_dir is None else CheckpointWriter(checkpoint_dir)
    if resume:
        state = read_checkpoint(checkpoint_dir)
        _check_resumable(state, settings, fingerprint, checkpoint_dir)
        k, a, b, resumed_from, stopped = state.step, state.a, state.b, state.step, state.stopped_because
        trajectory = {key: state.trajectory[key].tolist() for key in TRAJECTORY_KEYS}
        writer = CheckpointWriter(checkpoint_dir, state.parts)

    def checkpoint(reason=None):
        if writer is not None:
            writer.write(Checkpoint(step=k, a=a, b=b, eta=eta_value, eta_rule=eta_rule, settings=settings,
                                    fingerprint=fingerprint, trajectory=trajectory, stopped_because=reason))

    def record(loss):
        trajectory["step"].append(k)
        trajectory["t"].append(k * eta_value)
        trajectory["a"].append(a)
        trajectory["b"].append(b)
        trajectory["loss"].append(loss)

    if writer is not None and not resume:
        checkpoint()  # step 0, so that an interruption before the first interval can be resumed too
    taken_this_run = 0
    last_good = None  # (k, a, b, loss) of the last evaluated iterate, to end on if the next one fails
    while stopped is None:
        if max_steps_this_run is not None and taken_this_run >= max_steps_this_run:
            checkpoint()
            return _result(a, b, eta_value, eta_rule, k, trajectory, "max_steps_this_run", settings, fingerprint,
                           resumed_from, started)
        try:
            loss, gradient = loss_and_gradient(source, theta, a, b, estimator=estimator, method=method)
            loss = float(loss)
            grad_a, grad_b = float(gradient[0]), float(gradient[1])
            if not (math.isfinite(loss) and math.isfinite(grad_a) and math.isfinite(grad_b)):
                raise ArithmeticError("non-finite L̂ or gradient")
        except (ArithmeticError, InputError) as exc:
            if last_good is None:
                raise InputError(f"L̂ cannot be evaluated at (a, b) = ({a!r}, {b!r}): {exc}") from None
            stopped = (f"diverged: L̂ cannot be evaluated at step {k} (a={a!r}, b={b!r}) under {rule_name} "
                       f"(eta = {eta_value:.6g}): {exc}")
            k, a, b, loss = last_good
            break
        if steps is not None and k >= steps:
            stopped = "steps"
        elif t_max is not None and k * eta_value >= t_max:
            stopped = "t_max"
        elif b_target is not None and b >= b_target:
            stopped = "b_target"
        elif budget is None and k >= cap:
            stopped = (f"step cap: b = {b:.6g} < b_target = {b_target:g} after {k} steps (at most {MAX_STEPS:.0e} "
                       f"steps a run, {MAX_RECORDS:.0e} recorded rows)")
        elif stop_rule is not None:
            stopped = stop_rule(k, a, b)
        if stopped is not None or k % record_every == 0:
            record(loss)
        if progress is not None:
            progress(k, a, b, loss)
        if stopped is not None:
            break
        a_next, b_next = a - eta_value * grad_a, b - eta_value * grad_b
        if not (math.isfinite(a_next) and math.isfinite(b_next) and (b_next > 0 or not keep_b_positive)):
            stopped = (f"diverged: step {k + 1} would leave the model (b > 0, finite) under {rule_name} "
                       f"(eta = {eta_value:.6g}): a={a_next!r}, b={b_next!r}; stopped at step {k}")
            break
        last_good = (k, a, b, loss)
        a, b, k = a_next, b_next, k + 1
        taken_this_run += 1
        if k % checkpoint_every == 0:
            checkpoint()
    if not trajectory["step"] or trajectory["step"][-1] != k:
        record(loss)  # a diverged run ends on its last good iterate, which may fall between recorded steps
    checkpoint(stopped)
    return _result(a, b, eta_value, eta_rule, k, trajectory, stopped, settings, fingerprint, resumed_from, started)


def _result(a, b, eta, eta_rule, k, trajectory, stopped, settings, fingerprint, resumed_from, started):
    arrays = {key: np.asarray(trajectory[key], dtype=np.int64 if key == "step" else np.float64)
              for key in TRAJECTORY_KEYS}
    return TrainResult(a=float(a), b=float(b), eta=eta, eta_rule=eta_rule, steps=int(k), trajectory=arrays,
                       stopped_because=stopped, settings=settings, corpus_fingerprint=fingerprint,
                       resumed_from_step=resumed_from, seconds=time.perf_counter() - started)
