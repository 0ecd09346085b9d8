"""The certificate of C7's or C8's population proof (format ``stumpcheck-boundary-certificate/1``) and its re-check.

A certificate records ``claim`` ("C7" or "C8"), the proof's ``parameters`` (exact rationals: b₀, and c, δ for
C7, the target for C8), the SymPy ``identities`` it rests on, its ``leaves`` (C7: ε-intervals with the
enclosure [lower, upper] of W = (1 + e(1 − ε⁴))/ε; C8: (θ, ε)-boxes with the enclosure of b·e_pooled), the
proof's side ``checks`` (C7: the interior constant; C8: calibration_a(b₀) − b₀ > 0), ``arithmetic``, the
``statement`` and ``digest`` (sha256 of the rest: integrity only).

:func:`recheck_boundary` trusts none of it. It refuses fields the format does not define, checks the sizes
before any work and the digest, re-derives the identities by SymPy, checks that the leaves tile the domain
exactly (rationals), re-encloses every leaf at 64 more bits (the recorded enclosure must contain the new one,
and hold the value at the leaf's centre and corners: a narrowed or edited enclosure is rejected), recomputes
the side checks, and derives the statement from the recorded constants and the largest recorded upper end
(now proved to bound every leaf); the document's statement must be that one. It returns (ok, message,
statement).
"""

from __future__ import annotations

import time
from fractions import Fraction

from flint import arb, ctx

from stumpcheck.numerics.certified.boundary import one_head as c7
from stumpcheck.numerics.certified.boundary import symmetrized as c8
from stumpcheck.numerics.certified.region.bounds import upper_decimal
from stumpcheck.numerics.precision import InputError

__all__ = ["BOUNDARY_FORMAT", "boundary_certificate", "recheck_boundary", "is_boundary_certificate"]

BOUNDARY_FORMAT = "stumpcheck-boundary-certificate/1"
FIELDS = {"format", "claim", "parameters", "statement", "identities", "leaves", "checks", "arithmetic", "digest"}
PARAMETERS = {"C7": {"b_min", "c", "delta"}, "C8": {"b_min", "target"}}
LEAF_FIELDS = {"C7": {"eps", "lower", "upper"}, "C8": {"theta", "eps", "lower", "upper"}}
CHECKS = {"C7": {"interior_M_at_b_min", "interior_constant", "interior_M_delta_at_b_min", "interior_floor"},
          "C8": {"relation_gap_at_b_min", "pooled_floor"}}
#: the most leaves a certificate may hold (the proofs use 17 and about a dozen)
MAX_LEAVES = 10_000
RECHECK_EXTRA_BITS = 64
_TEXT_LIMIT = 80


def is_boundary_certificate(document) -> bool:
    return isinstance(document, dict) and document.get("format") == BOUNDARY_FORMAT


_FACTS = {"C7": "E_u = e^{-1/ε+ε³}, E_u/ε, R_A = (e^t - 1 - t)/t² (t = ε³) and q = e^{(ρ₁-w)ε} increase in ε ∈ (0, 1)",
          "C8": ("g(β) = 1 - β/(e^β - 1) increases from 0 to 1; v e^{-v} decreases for v >= 1; "
                 "X = e^{(2θ-1)/ε} increases in θ and, for θ <= 1/2, in ε; e(1 - θ) = -e(θ)")}


def _arithmetic(claim: str) -> dict:
    return {"balls": f"python-flint arb at {c7.PREC_BITS} bits; the re-check at {c7.PREC_BITS + RECHECK_EXTRA_BITS}",
            "exact_forms": "stumpcheck.theory.boundary, decided by SymPy against the model's closed form",
            "facts": _FACTS[claim]}


def boundary_certificate(claim: str, proof: dict | None = None) -> dict:
    """The certificate of C7's or C8's population proof (module doc): ``proof`` as
    :func:`~stumpcheck.numerics.certified.boundary.one_head.prove_c7_population` or
    :func:`~stumpcheck.numerics.certified.boundary.symmetrized.prove_c8_population` returned it, or None to prove
    it here (default constants)."""
    if claim == "C7":
        proof = proof if proof is not None else c7.prove_c7_population()
        parameters = {k: proof[k] for k in ("b_min", "c", "delta")}
        leaves = [{"eps": leaf["eps"], "lower": leaf["W"][0], "upper": leaf["W"][1]} for leaf in proof["leaves"]]
        checks = {k: proof[k] for k in CHECKS["C7"]}
    elif claim == "C8":
        proof = proof if proof is not None else c8.prove_c8_population()
        parameters = {"b_min": proof["b_min"], "target": proof["pooled"]["target"]}
        leaves = [{"theta": box["theta"], "eps": box["eps"], "lower": box["b_e"][0], "upper": box["b_e"][1]}
                  for box in proof["pooled"]["boxes"]]
        checks = {"relation_gap_at_b_min": proof["relation_gap_at_b_min"], "pooled_floor": proof["pooled"]["floor"]}
    else:
        raise InputError(f"a boundary certificate is for C7 or C8, got {claim!r}")
    if not proof["proved"]:
        raise ArithmeticError(f"the {claim} population proof did not close; no certificate")
    document = {"format": BOUNDARY_FORMAT, "claim": claim, "parameters": parameters, "statement": proof["statement"],
                "identities": proof["identities"], "leaves": leaves, "checks": checks,
                "arithmetic": _arithmetic(claim)}
    from stumpcheck.numerics.certified.certificates.lemma_certificate import digest

    document["digest"] = digest(document)
    return document


def _exact(text, what: str) -> Fraction:
    if not isinstance(text, str) or not 0 < len(text) <= _TEXT_LIMIT:
        raise InputError(f"{what} must be an exact decimal or rational written as a string of at most "
                         f"{_TEXT_LIMIT} characters")
    try:
        return Fraction(text)
    except (ValueError, ZeroDivisionError):
        raise InputError(f"{what} is not an exact number: {text[:40]!r}") from None


def _check_limits(document: dict) -> str:
    """InputError (one line) for anything beyond the re-check's limits, before any work; the claim."""
    from stumpcheck.numerics.certified.tube.records import check_record_sizes

    claim = document.get("claim")
    if claim not in PARAMETERS:
        raise InputError(f"a boundary certificate's claim must be C7 or C8, got {str(claim)[:20]!r}")
    leaves = document.get("leaves")
    if not isinstance(leaves, list) or not 0 < len(leaves) <= MAX_LEAVES:
        raise InputError(f"a boundary certificate needs between 1 and {MAX_LEAVES} leaves")
    for name in ("parameters", "leaves", "checks"):
        check_record_sizes(document.get(name), name)
    return claim


def _tiles(claim: str, boxes: list, b_min: Fraction) -> str | None:
    """Why the leaves do not tile the proof's domain exactly, or None (C7: ε ∈ [0, 1/b₀]; C8: [0, ½] × [0, 1/b₀])."""
    top = 1 / b_min
    if claim == "C7":
        spans = sorted(boxes)
        if spans[0][0] != 0 or spans[-1][1] != top or any(lo >= hi for lo, hi in spans):
            return "the ε-leaves do not cover [0, 1/b_min] (an end is missing or a leaf is empty)"
        if any(left[1] != right[0] for left, right in zip(spans, spans[1:])):
            return "the ε-leaves leave a gap or overlap"
        return None
    area = Fraction(0)
    for (t0, t1), (e0, e1) in boxes:
        if not (0 <= t0 < t1 <= Fraction(1, 2) and 0 <= e0 < e1 <= top):
            return "a leaf lies outside [0, 1/2] × [0, 1/b_min] or has no area"
        area += (t1 - t0) * (e1 - e0)
    for k, ((t0, t1), (e0, e1)) in enumerate(boxes):
        for (s0, s1), (f0, f1) in boxes[k + 1:]:
            if min(t1, s1) > max(t0, s0) and min(e1, f1) > max(e0, f0):
                return "two leaves overlap"
    if area != top / 2:
        return "the leaves do not cover [0, 1/2] × [0, 1/b_min] (a leaf is missing)"
    return None


def _enclose(claim: str, box, params: dict, bits: int) -> arb:
    if claim == "C7":
        return c7.witness_enclosure(box[0], box[1], params["c"], bits)
    (t0, t1), (e0, e1) = box
    return c8.pooled_enclosure(t0, t1, e0, e1, bits)


def _test_boxes(claim: str, box, params: dict) -> list:
    """Degenerate boxes at the leaf's centre and corners (for C7 also at w = −c, 0, c)."""
    if claim == "C7":
        lo, hi = box
        return [((e, e), (w, w)) for e in (lo, (lo + hi) / 2, hi) for w in (-params["c"], Fraction(0), params["c"])]
    (t0, t1), (e0, e1) = box
    points = [((t0 + t1) / 2, (e0 + e1) / 2)] + [(t, e) for t in (t0, t1) for e in (e0, e1) if e > 0]
    return [((t, t), (e, e)) for t, e in points]


def _point_enclosure(claim: str, test, params: dict, bits: int) -> arb:
    if claim == "C7":
        (e, _), w = test
        return c7.witness_enclosure(e, e, params["c"], bits, w=w)
    (t, _), (e, _) = test
    return c8.pooled_enclosure(t, t, e, e, bits)


def recheck_boundary(document) -> tuple:
    """(ok, message, statement): re-check a boundary certificate from its data alone (module doc)."""
    from stumpcheck.numerics.certified.certificates.lemma_certificate import digest

    if not is_boundary_certificate(document):
        raise InputError(f"not a boundary certificate (format {BOUNDARY_FORMAT})")
    started = time.process_time()
    claim = _check_limits(document)
    if document.get("digest") != digest(document):
        return False, "the certificate was edited after it was written (its digest does not match)", None
    extra = sorted(set(document) - FIELDS)
    if extra:
        return False, f"the certificate has fields a boundary certificate does not define: {', '.join(extra[:5])}", None
    params_doc = document.get("parameters")
    if not isinstance(params_doc, dict) or set(params_doc) != PARAMETERS[claim]:
        return False, f"the parameters of {claim} must be exactly {', '.join(sorted(PARAMETERS[claim]))}", None
    params = {k: _exact(v, f"parameters.{k}") for k, v in params_doc.items()}
    if params["b_min"] < 2 or (claim == "C7" and not (0 <= params["c"] <= 1 and 0 < params["delta"] < Fraction(1, 2))):
        return False, "the parameters are outside the proof's domain (b_min >= 2, 0 <= c <= 1, 0 < delta < 1/2)", None
    if claim == "C8" and not params["target"] >= 1:
        return False, "the C8 target must be at least 1", None
    if document.get("arithmetic") != _arithmetic(claim):
        return False, "the arithmetic record is not this code's", None
    identities = c7.identities(claim)  # decided by SymPy in this process (once per process)
    if not all(identities.values()) or document.get("identities") != identities:
        return False, "the identities are not the ones SymPy decides here (re-derived: they differ or fail)", None
    boxes, ends = [], []
    for leaf in document["leaves"]:
        if not isinstance(leaf, dict) or set(leaf) != LEAF_FIELDS[claim]:
            return False, f"a leaf must have exactly the fields {', '.join(sorted(LEAF_FIELDS[claim]))}", None
        try:
            eps = tuple(_exact(v, "leaf.eps") for v in leaf["eps"])
            box = eps if claim == "C7" else (tuple(_exact(v, "leaf.theta") for v in leaf["theta"]), eps)
            ends.append((_exact(leaf["lower"], "leaf.lower"), _exact(leaf["upper"], "leaf.upper")))
        except (TypeError, ValueError):
            return False, "a leaf's ends cannot be read", None
        if len(eps) != 2 or (claim == "C8" and len(box[0]) != 2):
            return False, "a leaf's intervals must be pairs", None
        boxes.append(box)
    fault = _tiles(claim, boxes, params["b_min"])
    if fault:
        return False, fault, None
    bits = c7.PREC_BITS + RECHECK_EXTRA_BITS
    with ctx.workprec(bits):
        for box, (lower, upper), leaf in zip(boxes, ends, document["leaves"]):
            lo, hi = arb(lower.numerator) / lower.denominator, arb(upper.numerator) / upper.denominator
            shown = f"[{leaf['lower']}, {leaf['upper']}]"
            ball = _enclose(claim, box, params, bits)
            if not (ball.is_finite() and ball >= lo and ball <= hi):
                return False, (f"a leaf's recorded enclosure {shown} does not contain its re-enclosure at {bits} bits "
                               "(narrowed or edited)"), None
            for test in _test_boxes(claim, box, params):
                value = _point_enclosure(claim, test, params, bits)
                if not (value >= lo and value <= hi):
                    return False, f"a leaf's recorded enclosure {shown} misses its value at a test point", None
        checks = document.get("checks")
        if not isinstance(checks, dict) or set(checks) != CHECKS[claim]:
            return False, f"the checks of {claim} must be exactly {', '.join(sorted(CHECKS[claim]))}", None
        if claim == "C7":
            from stumpcheck.numerics.certified.region.interior_error import interior_error_margin

            from stumpcheck.numerics.certified.region.bounds import lower_decimal

            m = interior_error_margin(params["b_min"], params["c"], params["delta"])
            m_delta = interior_error_margin(params["b_min"], params["c"], params["delta"], at_left_end=True)
            interior, floor = upper_decimal(arb(1).max(m - 1), 8), lower_decimal(1 - m_delta, 8)
            if checks != {"interior_M_at_b_min": upper_decimal(m, 8), "interior_constant": interior,
                          "interior_M_delta_at_b_min": upper_decimal(m_delta, 8), "interior_floor": floor}:
                return False, "the interior bounds are not the ones recomputed here", None
            if not Fraction(floor) > 0:
                return False, "the interior floor is not positive", None
            k_text = max((leaf["upper"] for leaf in document["leaves"]), key=Fraction)
            if not 1 - Fraction(k_text) / params["b_min"] > 0:
                return False, "the proved K does not keep the sup away from 0 at b_min", None
            statement = c7.c7_statement(params["b_min"], params["c"], params["delta"], k_text, interior, floor)
        else:
            from stumpcheck.numerics.certified.region.bounds import lower_decimal

            with ctx.workprec(c8.PREC_BITS):  # the precision the proof recorded them at
                gap = c8.relation_gap(params["b_min"])
                floor = c8.pooled_floor(params["b_min"])
            if not gap > 0 or checks.get("relation_gap_at_b_min") != lower_decimal(gap, 8):
                return False, "calibration_a(b_min) − b_min > 0 is not what is recomputed here", None
            if checks.get("pooled_floor") != lower_decimal(floor, 8) or not floor > 0:
                return False, "the pooled floor b·e(0) is not the one recomputed here", None
            if max(max(abs(lo), abs(hi)) for lo, hi in ends) > params["target"]:
                return False, "a leaf does not show |b·e| <= the target", None
            statement = c8.c8_statement(params["b_min"], c8.pooled_k_text(
                [[leaf["lower"], leaf["upper"]] for leaf in document["leaves"]]), checks["pooled_floor"])
    if document.get("statement") != statement:
        return False, "the statement is not the one the re-proved leaves and constants give", None
    return True, (f"{claim}: {len(boxes)} leaves re-enclosed at {bits} bits, identities re-derived; "
                  f"{time.process_time() - started:.1f} s CPU"), statement
