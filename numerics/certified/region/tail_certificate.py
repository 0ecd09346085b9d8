"""The tail region's certificate (format ``stumpcheck-region-tail-certificate/2``), its join with a finite
region, and its re-check.

:func:`tail_certificate` proves the four obligations of :mod:`stumpcheck.numerics.certified.region.tail` on
ε = 1/b ∈ [0, 1/B] and records in one JSON document: the statement, the region (B, c, d₋, d₊; b_max = inf),
``assumptions`` (empty: nothing is assumed), ``rest`` (the enclosure of the exponentially small rest E for every
b ≥ B, :mod:`stumpcheck.numerics.certified.region.tail_rest`: its statement, the sha256 of the zones' terms SymPy
derives, the bound at ε = 1/B), the derivation (sha256 of the scaled margins SymPy derives, the series orders, the
limits at ε = 0), the remainders' ranges over the whole domain, each obligation's leaves (box in (ε, w),
enclosure [lower, upper], depth), what is and is not proved, optionally ``join`` (a finite region certificate
whose top edge b = B lies in R_∞), and a digest. The first version (format /1) assumed the hand-proved Lemma E
instead of ``rest``: such a certificate is recognised and refused, with the command that proves the tail again.

:func:`recheck_tail` trusts none of it: it re-derives the scaled margins and the rest's terms (both sha256 must
match), recomputes every text, the rest's bound, the remainders' ranges and the domains from the recorded
constants, checks that each
obligation's leaves tile its domain exactly (rationals; ε = 0 included), re-encloses every leaf at another
precision (it must decide) and requires the recorded enclosure to hold the margin's value at the leaf's centre
(so a narrowed enclosure is rejected); with a join, that the finite region's B and c fit and that its own
certificate re-checks. The digest is integrity only: a forger recomputes it.
"""

from __future__ import annotations

import hashlib
import time
from fractions import Fraction
from pathlib import Path

from stumpcheck.numerics.certified.region.tail import (PREC_BITS, TAIL_OBLIGATIONS, TailBox,
                                                    TailRegion, fraction_text, margin_enclosure,
                                                    prove_tail_obligation, symbol_ranges, tail_domain)
from stumpcheck.numerics.precision import InputError

__all__ = ["TAIL_FORMAT", "TAIL_FORMAT_V1", "is_tail_certificate", "tail_certificate", "recheck_tail", "check_tail_limits",
           "MAX_TAIL_LEAVES"]

TAIL_FORMAT = "stumpcheck-region-tail-certificate/2"
#: the first version, whose obligations assumed the hand-proved Lemma E: recognised, and refused by the re-check
TAIL_FORMAT_V1 = "stumpcheck-region-tail-certificate/1"
TAIL_FIELDS = frozenset({"format", "statement", "status", "region", "assumptions", "rest", "derivation", "remainders",
                         "obligations", "summary", "proved", "not_proved", "join", "seconds", "region_code",
                         "digest"})
#: the fields of an obligation's record and of its leaves (what :func:`_obligation_record` writes)
_OBLIGATION_FIELDS = frozenset({"statement", "strict", "domain", "prec_bits", "status", "leaves", "max_depth", "seconds",
                                "smallest_lower"})
_LEAF_FIELDS = frozenset({"box", "lower", "upper", "depth"})
MAX_TAIL_LEAVES = 1024
MIN_BITS, MAX_BITS = 64, 1024
#: the re-check encloses every leaf with this many more bits
RECHECK_EXTRA_BITS = 64
_MODULES = ("tail.py", "tail_certificate.py", "tail_rest.py")


def is_tail_certificate(document) -> bool:
    return isinstance(document, dict) and document.get("format") in (TAIL_FORMAT, TAIL_FORMAT_V1)


def _region_code() -> dict:
    here = Path(__file__).resolve().parent
    theory = here.parents[2] / "theory"
    files = [here / name for name in _MODULES] + [theory / "tail.py", theory / "tail_series.py", theory / "tail_rest.py"]
    text = "".join(f.read_text(encoding="utf-8") for f in files if f.exists())
    return {"modules": [f"numerics/certified/region/{m}" for m in _MODULES] + ["theory/tail.py",
                                                                               "theory/tail_series.py",
                                                                               "theory/tail_rest.py"],
            "sha256": hashlib.sha256(text.encode("utf-8")).hexdigest()}


def _derivation_record() -> dict:
    from stumpcheck.theory import tail

    margins = tail.scaled_margins()
    return {"sha256": hashlib.sha256(tail.margins_srepr().encode("utf-8")).hexdigest(),
            "orders": {"r": tail.ORDER_R, "exp": tail.ORDER_EXP},
            "terms": {name: len(terms) for name, terms in margins.items()},
            "limits_at_epsilon_0": {name: str(value) for name, value in tail.limits().items()}}


def _remainders(region: TailRegion) -> dict:
    """Each symbol's range over ε ∈ [0, 1/B], w ∈ [−c, c] (outward 12-digit decimals)."""
    from flint import ctx

    from stumpcheck.numerics.certified.region.bounds import lower_decimal, upper_decimal

    with ctx.workprec(PREC_BITS):
        ranges = symbol_ranges(TailBox((Fraction(0), 1 / region.b_start), (-region.c, region.c)))
        return {k: [lower_decimal(v), upper_decimal(v)] for k, v in ranges.items() if k not in ("w",)}


def _obligation_statement(region: TailRegion, name: str) -> str:
    box = tail_domain(region, name)
    e = f"ε ∈ [0, {fraction_text(box.eps[1])}]"
    if name.startswith("inward"):
        return f"−w·b³·dw/dt > 0 on w = {fraction_text(box.w[0])}, {e} (the field points into |w| < {fraction_text(region.c)})"
    return (f"{fraction_text(region.d_minus)} <= b·(1 − 2b³·db/dt) <= {fraction_text(region.d_plus)} for {e}, "
            f"w ∈ [{fraction_text(box.w[0])}, {fraction_text(box.w[1])}]")


def _box_json(box: TailBox) -> dict:
    return {"epsilon": [fraction_text(x) for x in box.eps], "w": [fraction_text(x) for x in box.w]}


def _box_from_json(data) -> TailBox:
    from stumpcheck.numerics.certified.certificates.lemma_certificate import parse_exact

    if not isinstance(data, dict):
        raise InputError("a leaf's box must be an object {epsilon: [lo, hi], w: [lo, hi]}")
    try:
        eps = tuple(parse_exact(x, "a leaf's ε") for x in data["epsilon"])
        w = tuple(parse_exact(x, "a leaf's w") for x in data["w"])
    except (KeyError, TypeError, ValueError) as exc:
        if isinstance(exc, InputError):
            raise
        raise InputError("a leaf's box needs epsilon and w intervals [lo, hi]") from None
    if len(eps) != 2 or len(w) != 2 or eps[0] > eps[1] or w[0] > w[1]:
        raise InputError("a leaf's box needs two ends lo <= hi in ε and w")
    return TailBox(eps, w)


def _obligation_record(region: TailRegion, name: str, proof: dict) -> dict:
    from stumpcheck.numerics.certified.region.bounds import lower_decimal, upper_decimal

    leaves = [{"box": _box_json(box), "lower": lower_decimal(ball), "upper": upper_decimal(ball), "depth": depth}
              for box, ball, depth in proof["leaves"]]
    return {"statement": _obligation_statement(region, name), "strict": name.startswith("inward"),
            "domain": _box_json(tail_domain(region, name)), "prec_bits": PREC_BITS, "status": proof["status"],
            "leaves": leaves, "max_depth": proof["max_depth"], "seconds": proof["seconds"],
            "smallest_lower": _smallest(leaves)}


def _smallest(leaves: list):
    """The smallest recorded lower end (by value), or None."""
    from stumpcheck.numerics.certified.certificates.lemma_certificate import parse_exact

    return min((leaf["lower"] for leaf in leaves), key=lambda x: parse_exact(x, "lower"), default=None)


def _summary(records: dict) -> dict:
    return {n: {"status": r.get("status"), "leaves": len(r.get("leaves") or []), "max_depth": r.get("max_depth"),
                "smallest_lower": r.get("smallest_lower"), "seconds": r.get("seconds")} for n, r in records.items()}


def _proved_text(region: TailRegion) -> list:
    return ["on |w| = c, b >= B (ε ∈ [0, 1/B], ε = 0 included): d/dt w² < 0 (obligations inward_*)",
            "on R_inf: (1 − d_plus/b)/(2b³) <= db/dt <= (1 − d_minus/b)/(2b³), so db/dt > 0 (obligations drift_*)",
            "hence: if z(T) ∈ R_inf, then z(t) ∈ R_inf for every t >= T, and b(t) → ∞ with "
            "2(1 − d_plus/B) <= d(b⁴)/dt <= 2"]


def _not_proved_text() -> list:
    return ["that the flow's state reaches R_inf: that is the finite region's (or an entry's) hypothesis"]


def _rest(region: TailRegion) -> dict:
    from stumpcheck.numerics.certified.region.tail_rest import rest_record

    return rest_record(1 / region.b_start)


def _join_record(region: TailRegion, finite: dict) -> dict:
    """{"finite": the finite region certificate, "check": what the join needs, derived}; InputError if it
    cannot be joined (not a region certificate, another B, a wider w range)."""
    from stumpcheck.numerics.certified.region.certificate import is_region_certificate
    from stumpcheck.numerics.certified.region.invariant_region import Region

    if not is_region_certificate(finite):
        raise InputError("the join needs a finite region certificate (format stumpcheck-region-certificate/1)")
    finite_region = Region.from_json(finite.get("region"))
    if finite_region.b_max != region.b_start:
        raise InputError(f"the finite region ends at b = {float(finite_region.b_max):g}, the tail starts at "
                         f"B = {float(region.b_start):g}: they do not meet")
    if finite_region.c > region.c:
        raise InputError("the finite region's c exceeds the tail's: its top edge is not in R_inf")
    statement = (f"{{b_T <= b, |w| <= c}} with b_T = {fraction_text(finite_region.b_start)}: the finite region "
                 f"up to b = {fraction_text(region.b_start)} and R_inf beyond; its top edge b = B, "
                 f"|w| <= {fraction_text(finite_region.c)}, lies in R_inf; so z(T) ∈ R gives z(t) ∈ R ∪ R_inf "
                 "for every t >= T")
    return {"finite": finite, "check": {"finite_b_max": fraction_text(finite_region.b_max),
                                        "finite_c": fraction_text(finite_region.c), "meets": True,
                                        "statement": statement}}


def tail_certificate(region: TailRegion, *, finite: dict | None = None, progress=None) -> dict:
    """Prove the tail's four obligations and write the certificate (``finite``: a region certificate to join)."""
    from stumpcheck.numerics.certified.region.tail import _derivation

    started, cpu = time.perf_counter(), time.process_time()
    _derivation()  # SymPy, once (its CPU is not the obligations')
    derivation_cpu = time.process_time() - cpu
    join = None if finite is None else _join_record(region, finite)
    records = {}
    for name in TAIL_OBLIGATIONS:
        if progress is not None:
            progress(name)
        records[name] = _obligation_record(region, name, prove_tail_obligation(region, name))
    status = "proved" if all(r["status"] == "proved" for r in records.values()) else "not proved"
    document = {"format": TAIL_FORMAT, "statement": region.statement(), "status": status,
                "region": region.to_json(), "assumptions": [], "rest": _rest(region),
                "derivation": _derivation_record(),
                "remainders": _remainders(region), "obligations": records, "summary": _summary(records),
                "proved": _proved_text(region) if status == "proved" else [], "not_proved": _not_proved_text(),
                "join": join, "seconds": {"wall": round(time.perf_counter() - started, 3),
                                           "derivation_cpu": round(derivation_cpu, 3)},
                "region_code": _region_code()}
    from stumpcheck.numerics.certified.certificates.lemma_certificate import digest

    document["digest"] = digest(document)
    return document


def check_tail_limits(document: dict) -> None:
    """InputError (one line) if a tail certificate exceeds a limit: before any work."""
    from stumpcheck.numerics.certified.region.certificate import check_region_limits
    from stumpcheck.numerics.certified.tube.records import check_record_sizes

    check_record_sizes(document.get("region"), "region")
    records = document.get("obligations")
    for name, record in (records.items() if isinstance(records, dict) else ()):
        if not isinstance(record, dict):
            continue
        bits = record.get("prec_bits")
        if isinstance(bits, bool) or not isinstance(bits, int) or not MIN_BITS <= bits <= MAX_BITS:
            raise InputError(f"obligation {name}: prec_bits {str(bits)[:20]} outside [{MIN_BITS}, {MAX_BITS}]")
        leaves = record.get("leaves")
        if isinstance(leaves, list) and len(leaves) > MAX_TAIL_LEAVES:
            raise InputError(f"obligation {name}: {len(leaves)} leaves, more than the limit {MAX_TAIL_LEAVES}")
        check_record_sizes(leaves, f"obligation {name}: leaves")
        check_record_sizes(record.get("domain"), f"obligation {name}: domain")
    join = document.get("join")
    if isinstance(join, dict) and isinstance(join.get("finite"), dict):
        check_region_limits(join["finite"])


def _tiles(domain: TailBox, boxes: list) -> str | None:
    """Why ``boxes`` do not tile ``domain`` exactly (inside it, interiors disjoint, measures summing up), or None.
    A degenerate coordinate (w fixed) is measured in ε alone."""
    def measure(box):
        m = box.eps[1] - box.eps[0]
        return m * (box.w[1] - box.w[0]) if domain.w[0] != domain.w[1] else m

    for box in boxes:
        if not (domain.eps[0] <= box.eps[0] and box.eps[1] <= domain.eps[1] and domain.w[0] <= box.w[0]
                and box.w[1] <= domain.w[1]):
            return "a leaf lies outside the obligation's domain"
        if measure(box) <= 0:
            return "a leaf has no volume"
    for k, one in enumerate(boxes):
        for other in boxes[k + 1:]:
            overlap_e = min(one.eps[1], other.eps[1]) - max(one.eps[0], other.eps[0])
            overlap_w = min(one.w[1], other.w[1]) - max(one.w[0], other.w[0])
            if overlap_e > 0 and (overlap_w > 0 or domain.w[0] == domain.w[1]):
                return "two leaves overlap"
    if sum(measure(box) for box in boxes) != measure(domain):
        return "the leaves do not cover the obligation's domain (a leaf is missing)"
    return None


def _test_points(box: TailBox) -> list:
    """The leaf's centre and corners (point boxes): the recorded enclosure must hold the margin there."""
    corners = {TailBox((e, e), (w, w)) for e in box.eps for w in box.w}
    return [box.midpoint()] + sorted(corners, key=lambda p: (p.eps, p.w))


def _recheck_obligation(region: TailRegion, name: str, record: dict) -> tuple:
    from flint import arb, ctx

    from stumpcheck.numerics.certified.certificates.lemma_certificate import parse_exact

    if set(record) != _OBLIGATION_FIELDS or not all(isinstance(leaf, dict) and set(leaf) == _LEAF_FIELDS
                                                    for leaf in record.get("leaves") or ()):
        return False, (f"obligation {name} must hold exactly {', '.join(sorted(_OBLIGATION_FIELDS))}, and each leaf "
                       f"{', '.join(sorted(_LEAF_FIELDS))}"), 0
    if record.get("statement") != _obligation_statement(region, name) or record.get("strict") is not name.startswith(
            "inward") or record.get("domain") != _box_json(tail_domain(region, name)):
        return False, f"obligation {name} does not state what the tail needs", 0
    if record.get("status") != "proved" or not isinstance(record.get("leaves"), list) or not record["leaves"]:
        return False, f"obligation {name} is not proved", 0
    try:
        boxes = [_box_from_json(leaf.get("box")) for leaf in record["leaves"]]
        ends = [(parse_exact(leaf["lower"], "lower"), parse_exact(leaf["upper"], "upper")) for leaf in record["leaves"]]
    except (InputError, KeyError, TypeError, AttributeError) as exc:
        return False, f"obligation {name}: a leaf cannot be read: {exc}", 0
    depths = [leaf.get("depth") for leaf in record["leaves"]]
    if not all(isinstance(d, int) and not isinstance(d, bool) and d >= 0 for d in depths) or record.get(
            "max_depth") != max(depths) or record.get("smallest_lower") != _smallest(record["leaves"]):
        return False, f"obligation {name}: its depths, max_depth or smallest_lower are not its leaves'", 0
    fault = _tiles(tail_domain(region, name), boxes)
    if fault:
        return False, f"obligation {name}: {fault}", 0
    strict = name.startswith("inward")
    bits = int(record["prec_bits"]) + RECHECK_EXTRA_BITS
    for box, (lower, upper) in zip(boxes, ends):
        if not (lower > 0 if strict else lower >= 0) or lower > upper:
            return False, f"obligation {name}: a recorded enclosure does not decide", 0
        ball = margin_enclosure(region, name, box, bits)
        if not (ball > 0 if strict else ball >= 0):
            return False, f"obligation {name}: a leaf re-enclosed at {bits} bits does not decide", 0
        for point in _test_points(box):
            value = margin_enclosure(region, name, point, bits)
            with ctx.workprec(bits):
                lo = arb(lower.numerator) / lower.denominator
                hi = arb(upper.numerator) / upper.denominator
                if not (value >= lo and value <= hi):
                    return False, (f"obligation {name}: a recorded enclosure [{float(lower):.6g}, {float(upper):.6g}] "
                                   "does not hold the margin's value at its leaf's centre or a corner (narrowed "
                                   "or edited)"), 0
    return True, "", len(boxes)


def recheck_tail(document, *, progress=None, points: str = "midpoint", arithmetic: str = "fast") -> tuple:
    """(ok, message): re-check a tail certificate from its data alone (module doc). ``points`` and ``arithmetic``
    go to the joined finite region's re-check (the tail's own leaves are enclosed in Arb)."""
    from stumpcheck.numerics.certified.certificates.lemma_certificate import digest

    if not is_tail_certificate(document):
        raise InputError(f"not a tail region certificate (format {TAIL_FORMAT})")
    started = time.perf_counter()
    if document.get("format") == TAIL_FORMAT_V1:
        return False, (f"format {TAIL_FORMAT_V1}: its obligations assumed the hand-proved Lemma E; prove the tail "
                       "again (stumpcheck region --b-min 1000 --b-max inf), which encloses the rest instead")
    check_tail_limits(document)
    if document.get("digest") != digest(document):
        return False, "the certificate was edited after it was written (its digest does not match)"
    if document.get("status") != "proved":
        return False, f"not a proof: the certificate's status is {str(document.get('status'))[:20]!r}"
    extra = sorted(set(document) - TAIL_FIELDS)
    if extra:
        return False, f"the certificate has fields a tail certificate does not define: {', '.join(extra[:5])}"
    try:
        region = TailRegion.from_json(document.get("region"))
    except InputError as exc:
        return False, f"the recorded tail region is not one: {exc}"
    if document["region"] != region.to_json():
        return False, "the recorded region is not what its constants give"
    from stumpcheck.numerics.certified.region.certificate import provenance_fault

    fault = provenance_fault(document)
    if fault is not None:
        return False, fault
    if document.get("statement") != region.statement():
        return False, "the statement is not the one the recorded region states"
    if document.get("assumptions") != []:
        return False, "the certificate lists assumptions: a tail proof rests on none (an edited certificate?)"
    if document.get("rest") != _rest(region):
        return False, "the rest's enclosure is not the one re-derived and recomputed here (edited)"
    if document.get("proved") != _proved_text(region) or document.get("not_proved") != _not_proved_text():
        return False, "the 'proved' or 'not_proved' texts are not the ones the recorded region gives"
    if document.get("derivation") != _derivation_record():
        return False, "the derivation is not the scaled margins SymPy derives here (re-derived: they differ)"
    if document.get("remainders") != _remainders(region):
        return False, "the recorded remainder ranges are not the ones recomputed from the region (edited)"
    records = document.get("obligations")
    if not isinstance(records, dict) or set(records) != set(TAIL_OBLIGATIONS):
        return False, f"the certificate must hold exactly the obligations {', '.join(TAIL_OBLIGATIONS)}"
    if not all(isinstance(r, dict) for r in records.values()):
        return False, "an obligation is not a record"
    if document.get("summary") != _summary(records):
        return False, "the summary is not the one the obligations' records give"
    join = document.get("join")
    if join is not None:
        try:
            again = _join_record(region, join.get("finite") if isinstance(join, dict) else None)
        except InputError as exc:
            return False, f"the join does not hold: {exc}"
        if again != join:
            return False, "the join's check is not what the finite region and the tail give"
    leaves = 0
    for name in TAIL_OBLIGATIONS:
        if progress is not None:
            progress(name)
        ok, message, count = _recheck_obligation(region, name, records[name])
        if not ok:
            return False, message
        leaves += count
    joined = ""
    if join is not None:
        from stumpcheck.numerics.certified.region.certificate import recheck_region

        ok, message = recheck_region(join["finite"], progress=progress, points=points, arithmetic=arithmetic)
        if not ok:
            return False, f"the joined finite region: {message}"
        joined = f"; joined with the finite region from b = {join['finite']['region']['b_start']}: {message}"
    used = sorted({int(records[name]["prec_bits"]) + RECHECK_EXTRA_BITS for name in TAIL_OBLIGATIONS})
    return True, (f"the tail b >= {fraction_text(region.b_start)} (ε ∈ [0, 1/{fraction_text(region.b_start)}]): "
                  f"4 obligations re-derived and re-checked, {leaves} leaves tile their domains and re-enclose "
                  f"their margins at {' and '.join(map(str, used))} bits (the precision used: each obligation's "
                  f"recorded bits + {RECHECK_EXTRA_BITS}), the rest re-enclosed{joined}; "
                  f"{time.perf_counter() - started:.1f} s")
