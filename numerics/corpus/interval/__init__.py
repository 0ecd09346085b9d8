"""A certified training interval for one corpus (docs/corpus_interval.md): the centre curve and its grid,
the obligations on a box with mean-value forms, the prover that extends the interval column by column,
the certificate (format ``stumpcheck-interval-certificate/1``) and its re-check, checkpoints, the plot.
"""

from stumpcheck.numerics.lazy import lazy_exports

_LAZY = {
    "Centre": "stumpcheck.numerics.corpus.interval.centre",
    "eta_half_curvature": "stumpcheck.numerics.corpus.interval.centre",
    "IntervalRun": "stumpcheck.numerics.corpus.interval.prover",
    "step_bound": "stumpcheck.numerics.corpus.interval.prover",
    "interval_certificate": "stumpcheck.numerics.corpus.interval.certificate",
    "recheck_interval": "stumpcheck.numerics.corpus.interval.certificate",
    "is_interval_certificate": "stumpcheck.numerics.corpus.interval.certificate",
    "plot_interval": "stumpcheck.numerics.corpus.interval.plot",
}

__all__ = list(_LAZY)
__getattr__, __dir__ = lazy_exports(__name__, _LAZY)
