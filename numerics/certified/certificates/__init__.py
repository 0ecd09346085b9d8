"""Certificates of proved lemmas and boxes, and their re-checks (docs/lemmas.md): the lemma
certificate (format ``stumpcheck-lemma-certificate/2``), the statement it proves derived from what
is proved, the checks of its fields, the limits a file must respect before any work, and the
re-checks that trust nothing but the file: :func:`recheck` for a lemma, :func:`recheck_box_certificate`
for a certificate of ``stumpcheck certify``.
"""

from stumpcheck.numerics.lazy import lazy_exports

_LAZY = {
    "FORMAT": "stumpcheck.numerics.certified.certificates.lemma_certificate",
    "read_certificate": "stumpcheck.numerics.certified.certificates.lemma_certificate",
    "write_certificate": "stumpcheck.numerics.certified.certificates.lemma_certificate",
    "RecheckResult": "stumpcheck.numerics.certified.certificates.lemma_recheck",
    "recheck": "stumpcheck.numerics.certified.certificates.lemma_recheck",
    "derived_statement": "stumpcheck.numerics.certified.certificates.lemma_statement",
    "is_box_certificate": "stumpcheck.numerics.certified.certificates.box_recheck",
    "recheck_box_certificate": "stumpcheck.numerics.certified.certificates.box_recheck",
}

__all__ = list(_LAZY)
__getattr__, __dir__ = lazy_exports(__name__, _LAZY)
