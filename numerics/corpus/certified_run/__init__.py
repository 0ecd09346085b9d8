"""The certified training run: enclosures of the exact GD iterates of the trainer's own run, and their certificate.

:func:`certify_training` (:mod:`~stumpcheck.numerics.corpus.certified_run.chain`) encloses z_{k+1} = z_k − η∇L̂(z_k)
from the trainer's start with its step, by the Lohner step of :mod:`~stumpcheck.numerics.corpus.certified_run.lohner`;
:mod:`~stumpcheck.numerics.corpus.certified_run.certificate` writes and re-checks the certificate
(format ``stumpcheck-training-certificate/1``). docs/training_certificate.md states what it proves.
"""

from stumpcheck.numerics.corpus.certified_run.chain import CertifiedTraining, certify_training, float_distances

__all__ = ["CertifiedTraining", "certify_training", "float_distances"]
