"""Tail certificates (b ≥ B) with a false record, resealed as a forger would: the re-check refuses each, and a
passed re-check names the precision it actually used (the recorded bits + 64, not a constant)."""

from __future__ import annotations

import copy

import pytest

from stumpcheck.numerics.certified.certificates.lemma_certificate import digest
from stumpcheck.numerics.certified.region.tail import DEFAULT_TAIL
from stumpcheck.numerics.certified.region.tail_certificate import recheck_tail, tail_certificate


@pytest.fixture(scope="module")
def certificate():
    return tail_certificate(DEFAULT_TAIL)


def _resealed(document):
    document["digest"] = digest(document)
    return document


def test_the_pass_line_names_the_bits_the_recheck_used(certificate):
    ok, message = recheck_tail(certificate)
    bits = certificate["obligations"]["inward_upper"]["prec_bits"] + 64
    assert ok and f"re-enclose their margins at {bits} bits (the precision used" in message, message
    lowered = copy.deepcopy(certificate)
    for record in lowered["obligations"].values():
        record["prec_bits"] = 64  # a re-check at 64 + 64 = 128 bits: it must say 128, not 192
    ok, message = recheck_tail(_resealed(lowered))
    assert ok and "at 128 bits (the precision used" in message and "192" not in message, message


@pytest.mark.parametrize("edit, reason", [
    (lambda d: d["obligations"]["inward_upper"].__setitem__("note", "Lemma E is machine-checked"),
     "obligation inward_upper must hold exactly"),
    (lambda d: d["obligations"]["drift_lower_half"]["leaves"][0].__setitem__("certified", True),
     "obligation drift_lower_half must hold exactly"),
], ids=["obligation_note", "leaf_field"])
def test_a_field_the_format_does_not_define_is_refused(certificate, edit, reason):
    forged = copy.deepcopy(certificate)
    edit(forged)
    ok, message = recheck_tail(_resealed(forged))
    assert not ok and message.startswith(reason), message
