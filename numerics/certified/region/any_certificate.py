"""Either kind of region certificate: the finite region R (format ``stumpcheck-region-certificate/1``) or the
tail b ≥ B (``stumpcheck-region-tail-certificate/1``, possibly joined to a finite one): their limits checked
and their re-check, each by its own module (this one only chooses)."""

from __future__ import annotations

from stumpcheck.numerics.certified.region.certificate import check_region_limits, recheck_region
from stumpcheck.numerics.certified.region.tail_certificate import check_tail_limits, is_tail_certificate, recheck_tail

__all__ = ["check_limits", "recheck_any"]


def check_limits(document: dict) -> None:
    """InputError (one line) if the certificate exceeds a limit of its kind (run before any work)."""
    return check_tail_limits(document) if is_tail_certificate(document) else check_region_limits(document)


def recheck_any(document, *, points: str = "midpoint", progress=None, arithmetic: str = "fast") -> tuple[bool, str]:
    """(ok, message): :func:`~stumpcheck.numerics.certified.region.tail_certificate.recheck_tail` for a tail
    certificate, else :func:`~stumpcheck.numerics.certified.region.certificate.recheck_region`."""
    if is_tail_certificate(document):
        return recheck_tail(document, progress=progress, points=points, arithmetic=arithmetic)
    return recheck_region(document, points=points, progress=progress, arithmetic=arithmetic)
