"""Finite corpora (docs/model.md §1, §3, §4): m tasks of n points with thresholds θⱼ ~ π, seeded
and stored as validated .npz files; the corpus loss L̂_{m,n} and its exact gradient ∇L̂ for the
four estimators; constant-step gradient descent with its step rules and checkpoints, and the
corpus gradient flow; the frozen estimator on fresh contexts of size N; resumable sweeps over
cells on a process pool or Dask.
"""

from stumpcheck.numerics.corpus.checkpoint import (CHECKPOINT_NAME, FORMAT_VERSION, TRAJECTORY_KEYS, Checkpoint,
    CheckpointWriter, corpus_fingerprint, read_checkpoint)
from stumpcheck.numerics.corpus.corpora import (MAX_TOKENS, SEED_LIMIT, Corpus, make_corpus, save_corpus, load_corpus,
    validate_corpus_arrays, uniform_sampler)
from stumpcheck.numerics.corpus.curvature import (ESTIMATORS, estimate_derivatives, loss_gradient_hessian,
    spectral_curvature)
from stumpcheck.numerics.corpus.empirical import (METHODS, DEFAULT_WINDOW, ROUNDING_ULPS, SortedCorpus, sort_corpus,
    estimate, estimate_and_gradient, error_and_gradient, loss_and_gradient, pruned_window_bound,
    window_sizes)
from stumpcheck.numerics.corpus.gradient_flow import (EmpiricalFlowResult, empirical_flow)
from stumpcheck.numerics.corpus.fresh import (BLOCK, DEFAULT_THETAS, MAX_N, MAX_REPS, MAX_MAGNITUDE, FreshResult,
    SupResult, context_stream, fresh_context_errors, sup_error_over_theta, validate_frozen)
from stumpcheck.numerics.corpus.gd import (DEFAULT_A0, DEFAULT_B0, ETA_SAFETY, StepBound, TrainResult, default_eta,
    step_bound, train_gd)
from stumpcheck.numerics.corpus.groups import (Group, group_moments, mixture, combine, mean_difference, mean_minus,
    one_minus_sum, two_sum, two_prod, sum2, row_dot)
from stumpcheck.numerics.corpus.steps import (ETA_RULES, LOOKAHEAD_POWERS, choose_eta, large_resolution_start,
    lookahead_eta, population_eta, population_hessian_eigenvalues)
from stumpcheck.numerics.corpus.sweep import (SCHEDULER_ENV, cell_key, load_store, run_sweep)
from stumpcheck.numerics.corpus.training_report import (training_table, write_training_outputs)

__all__ = [
    "CHECKPOINT_NAME", "FORMAT_VERSION", "TRAJECTORY_KEYS", "Checkpoint", "CheckpointWriter",
    "corpus_fingerprint", "read_checkpoint", "MAX_TOKENS", "SEED_LIMIT", "Corpus", "make_corpus",
    "save_corpus", "load_corpus", "validate_corpus_arrays", "uniform_sampler", "ESTIMATORS",
    "estimate_derivatives", "loss_gradient_hessian", "spectral_curvature", "METHODS", "DEFAULT_WINDOW",
    "ROUNDING_ULPS", "SortedCorpus", "sort_corpus", "estimate", "estimate_and_gradient", "error_and_gradient",
    "loss_and_gradient", "pruned_window_bound", "window_sizes", "EmpiricalFlowResult", "empirical_flow",
    "BLOCK", "DEFAULT_THETAS", "MAX_N", "MAX_REPS", "MAX_MAGNITUDE", "FreshResult", "SupResult",
    "context_stream", "fresh_context_errors", "sup_error_over_theta", "validate_frozen", "DEFAULT_A0",
    "DEFAULT_B0", "ETA_SAFETY", "StepBound", "TrainResult", "default_eta", "step_bound", "train_gd", "Group",
    "group_moments", "mixture", "combine", "mean_difference", "mean_minus", "one_minus_sum", "two_sum",
    "two_prod", "sum2", "row_dot", "ETA_RULES", "LOOKAHEAD_POWERS", "choose_eta", "large_resolution_start",
    "lookahead_eta", "population_eta", "population_hessian_eigenvalues", "SCHEDULER_ENV", "cell_key", "load_store", "run_sweep",
    "training_table", "write_training_outputs",
]
