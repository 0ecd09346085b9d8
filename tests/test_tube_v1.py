"""Certificates of the first tube version (format stumpcheck-flow-certificate/1, cubic Hermite pieces) are
still re-checked: tests/flow_certificate_v1.json was written by that version (T = 0.05, rel-goal 1e-2)."""

from __future__ import annotations

import copy
import json
from pathlib import Path

from stumpcheck.numerics.certified.tube.certificate import digest, is_flow_certificate, recheck_flow_certificate

V1 = Path(__file__).with_name("flow_certificate_v1.json")


def test_a_version_1_certificate_is_rechecked_and_a_narrowed_box_rejected():
    document = json.loads(V1.read_text(encoding="utf-8"))
    assert document["format"] == "stumpcheck-flow-certificate/1" and is_flow_certificate(document)
    result = recheck_flow_certificate(document, dps=30)
    assert result.passed and "complete" in result.message, result.message
    tampered = copy.deepcopy(document)
    interval = tampered["intervals"][-1]
    interval["box"][3] = repr(float.fromhex(interval["end"]["b"]))  # b_hi down to the end node's b
    tampered["digest"] = digest(tampered)
    result = recheck_flow_certificate(tampered, dps=30)
    assert not result.passed and result.leaf_index == len(document["intervals"]) - 1, result.message
