"""Re-check a certificate of ``stumpcheck certify`` (a predicate proved on a box of (a, b, θ)).

Those certificates (:class:`stumpcheck.numerics.certified.proofs.box_certificate.Certificate`) record the predicate, its
parameters, the requested box and the proved leaves, whose ends were printed as decimals rounded outward
(lower ends down, upper ends up). So the leaves overlap by a rounding sliver, and they need not tile the box,
only **cover** it: :func:`covering_failure` checks with exact rational arithmetic that every point of the
box lies in some leaf. Each leaf is then evaluated again with the same predicate
(:data:`stumpcheck.numerics.certified.proofs.predicates.PREDICATES`) at a working precision other than the certificate's,
its decimal ends rounded outward once more, and must come out certainly true. Covering plus every leaf true
proves the predicate on the box.

Before any work every field is checked against the limits of :mod:`stumpcheck.numerics.certified.certificates.limits` (dps,
number texts, leaf count; InputError), and the box and every leaf must be boxes (lo ≤ hi; the box also with
b > 0, θ ⊆ [0, 1] and |ends| ≤ 10³⁰⁰, as ``certify`` requires). Fields that would say more than the proof are rejected (a failed
check): a field the format does not define (a ``statement``, say), a status "proved" with a failure or an
undecided box, ``evidence`` other than "certified", ``prec_bits`` other than the working precision the prover
derives from ``dps`` and the box, counts (``boxes``, ``evaluations``, ``max_boxes``) that no bisection with these
leaves has. ``min_width``, ``seconds``, ``versions`` and ``generated_code`` are informational (a setting and
provenance; a different generated code is the re-check's own, rigorous with the code it runs). Each leaf's recorded ``bounds`` must themselves prove the predicate and must
contain the quantity's rigorous value at the leaf's midpoint and corners (a narrowed or moved enclosure is
caught). What passed is :func:`derived_statement`: the predicate's own sentence with its parameters, the box
and the estimator, printed from the re-checked data.
"""

from __future__ import annotations

import time
from decimal import Decimal
from fractions import Fraction

from stumpcheck.numerics.precision import InputError

__all__ = ["is_box_certificate", "recheck_bits", "recheck_box_certificate", "covering_failure", "derived_statement"]

_DIMS = ("a", "b", "theta")
#: the fields of a ``certify`` certificate (:class:`stumpcheck.numerics.certified.proofs.box_certificate.Certificate`)
_FIELDS = frozenset({"predicate", "params", "estimator", "box", "status", "leaves", "evaluations", "boxes", "dps",
                     "prec_bits", "max_boxes", "min_width", "versions", "generated_code", "failure_box",
                     "undecided_box", "reason", "seconds", "evidence"})
#: the quantity each predicate's bounds enclose, and when a recorded enclosure proves the predicate
#: the largest |end| of a box (``stumpcheck certify`` refuses larger ones)
MAX_END = 10 ** 300
_QUANTITY = {"error_abs_le_c_over_b": "b*e", "error_gradient_b_negative": "de/db", "dLdb_negative": "dL/db"}


def is_box_certificate(document: dict) -> bool:
    """True for a ``stumpcheck certify`` certificate (it has a predicate, a box and leaves, no format)."""
    return "format" not in document and {"predicate", "box", "leaves"} <= set(document)


def recheck_bits(document: dict, dps: int) -> int:
    """The working bits of a re-check at ``dps`` digits, of a lemma certificate or of a ``stumpcheck certify``
    one: :func:`stumpcheck.numerics.certified.enclosures.balls.working_bits`, sized by the largest ``|end|`` of
    each variable of the certificate's domain (box). Malformed ends are skipped here: the re-check reports them."""
    from stumpcheck.numerics.certified.certificates.lemma_certificate import parse_exact
    from stumpcheck.numerics.certified.enclosures.balls import working_bits

    if is_box_certificate(document):  # a `stumpcheck certify` certificate: the box of (a, b, θ)
        variables = document.get("box") or {}
    else:
        variables = (document.get("domain") or {}).get("variables") or {}
    sizes = []
    for name, ends in variables.items() if isinstance(variables, dict) else ():
        try:
            sizes.append(max(abs(float(parse_exact(x, name))) for x in ends))
        except (InputError, TypeError, ValueError, OverflowError):
            continue
    return working_bits(dps, *sizes)


def covering_failure(box: dict, leaves: list, dims) -> str | None:
    """None if the union of ``leaves`` ({dim: (lo, hi)} Fractions) contains ``box``; else the first region
    (as text) that no leaf covers. Splits the box at leaf ends inside it until each region lies in one leaf."""
    stack = [(box, list(range(len(leaves))))]
    while stack:
        region, members = stack.pop()
        members = [i for i in members if all(leaves[i][d][0] < region[d][1] and leaves[i][d][1] > region[d][0]
                                             for d in dims if region[d][0] < region[d][1])
                   and all(leaves[i][d][0] <= region[d][0] and region[d][1] <= leaves[i][d][1]
                           for d in dims if region[d][0] == region[d][1])]
        if not members:
            return ", ".join(f"{d} ∈ [{region[d][0]}, {region[d][1]}]" for d in dims)
        if any(all(leaves[i][d][0] <= region[d][0] and region[d][1] <= leaves[i][d][1] for d in dims)
               for i in members):
            continue
        best = None
        for d in dims:
            lo, hi = region[d]
            inside = sorted({e for i in members for e in leaves[i][d] if lo < e < hi})
            if inside:
                cut = inside[len(inside) // 2]
                best = (d, cut)
                break
        if best is None:  # no leaf contains the region and none has an end inside it: cannot happen
            return ", ".join(f"{d} ∈ [{region[d][0]}, {region[d][1]}]" for d in dims)
        d, cut = best
        stack.append(({**region, d: (region[d][0], cut)}, members))
        stack.append(({**region, d: (cut, region[d][1])}, members))
    return None


def _fraction(text, where: str) -> Fraction:
    from stumpcheck.numerics.certified.certificates.limits import check_number_text

    if isinstance(text, float):  # written by an older json.dump of a Decimal: read its shortest repr
        text = repr(text)
    check_number_text(text, where)
    try:
        return Fraction(Decimal(str(text)))
    except Exception:
        raise InputError(f"{where} must be a decimal, got {str(text)[:40]!r}") from None


def derived_statement(name: str, params: dict, box: dict, estimator: str) -> str:
    """The sentence a ``certify`` certificate proves, from its predicate, parameters, box and estimator."""
    from stumpcheck.numerics.certified.certificates.lemma_certificate import exact_text
    from stumpcheck.numerics.certified.proofs.predicates import PREDICATES

    text = PREDICATES[name].description
    for key, value in sorted(params.items()):
        text = text.replace(key, str(value)) if key == "c" else text
    ranges = ", ".join(f"{d} ∈ [{exact_text(box[d][0])}, {exact_text(box[d][1])}]" for d in _DIMS)
    return f"{name}: {text} {ranges} ({estimator} estimator)"


def _check_box(box: dict) -> None:
    """InputError unless the certificate's box is one ``certify`` proves on (what
    :class:`stumpcheck.numerics.certified.proofs.boxes.Box` and the command require): b > 0, θ ⊆ [0, 1] and every |end| at most
    10³⁰⁰. (A box with lo > hi is empty: "proved" on it, its statement would print a range that holds nothing.)"""
    if any(abs(x) > MAX_END for ends in box.values() for x in ends):
        raise InputError("the box has an end beyond 1e300 in magnitude (certify's limit)")
    if not box["b"][0] > 0:
        raise InputError(f"the box needs b > 0, got b lo = {float(box['b'][0]):g}")
    if not (box["theta"][0] >= 0 and box["theta"][1] <= 1):
        raise InputError("the box's theta must lie in [0, 1]")


def _proves(name: str, ends, params) -> bool:
    """Whether a recorded enclosure [lo, hi] of the predicate's quantity proves it."""
    lo, hi = ends
    if name == "error_abs_le_c_over_b":
        c = Fraction(params["c"])
        return -c <= lo and hi <= c
    return hi < 0


def _recorded_bounds(leaf: dict, name: str, index: int):
    """The exact [lo, hi] a leaf records for its predicate's quantity; InputError if malformed."""
    bounds = leaf.get("bounds")
    ends = bounds.get(_QUANTITY[name]) if isinstance(bounds, dict) else None
    if not isinstance(ends, list) or len(ends) != 2:
        raise InputError(f"leaf {index}: its bounds need {_QUANTITY[name]!r}: [lower, upper]")
    return _fraction(ends[0], f"leaf {index} lower"), _fraction(ends[1], f"leaf {index} upper")


def _enclosure_fault(spec, leaf_box: dict, recorded, c_params, estimator, counter, options) -> str | None:
    """Why the recorded enclosure does not contain the quantity at the leaf's midpoint or a corner, or None."""
    import itertools

    from flint import arb, fmpq

    from stumpcheck.numerics.certified.proofs.boxes import _outward

    def exact(x: Fraction):  # an exact dyadic ball next to x (within rounding of the working precision)
        return arb(arb(fmpq(x.numerator, x.denominator)).mid())

    # the prover's box has dyadic ends inside the recorded decimal ones: test at its midpoint and at points
    # 2^-40 of the width inside each corner, which lie in it
    sides = {}
    for d in spec.dims:
        lo, hi = leaf_box[d]
        inset = (hi - lo) / 2 ** 40
        sides[d] = [lo + inset, hi - inset] if lo < hi else [lo]
    points = [("midpoint", {d: (leaf_box[d][0] + leaf_box[d][1]) / 2 for d in spec.dims})]
    points += [("corner", dict(zip(spec.dims, corner))) for corner in itertools.product(*sides.values())]
    for what, point in points:
        ends = {d: (exact(point[d]),) * 2 if d in spec.dims else _outward(Decimal(0), Decimal(1)) if d not in
                leaf_box else (exact(leaf_box[d][0]), exact(leaf_box[d][1])) for d in _DIMS}
        _, bounds = spec.evaluate(ends, c_params, estimator, counter, options)
        lo, hi = bounds.get(_QUANTITY[spec.name], ["-inf", "inf"])
        if "inf" in (lo.lstrip("-"), hi.lstrip("-")):
            continue
        value = (Fraction(Decimal(lo)), Fraction(Decimal(hi)))
        if value[1] < recorded[0] or value[0] > recorded[1]:
            where = ", ".join(f"{d}={float(point[d]):.10g}" for d in spec.dims)
            return (f"its recorded enclosure [{float(recorded[0]):.6g}, {float(recorded[1]):.6g}] of "
                    f"{_QUANTITY[spec.name]} is not one: at the {what} ({where}) it is in "
                    f"[{float(value[0]):.6g}, {float(value[1]):.6g}]")
    return None


def recheck_box_certificate(document: dict, *, prec_bits: int):
    """Re-check a ``stumpcheck certify`` certificate at ``prec_bits``; a RecheckResult (see the module doc)."""
    from flint import arb, ctx

    from stumpcheck.numerics.certified.proofs.boxes import _outward
    from stumpcheck.numerics.certified.proofs.predicates import PREDICATES, _Counter, _validate_params
    from stumpcheck.numerics.certified.certificates.lemma_recheck import RecheckResult

    started = time.perf_counter()
    from stumpcheck.numerics.certified.enclosures.balls import ESTIMATORS, working_bits
    from stumpcheck.numerics.certified.certificates.limits import MAX_LEAVES, check_dps, check_int

    name = document.get("predicate")
    if name not in PREDICATES:
        raise InputError(f"unknown predicate {str(name)[:40]!r}")
    spec = PREDICATES[name]
    params = _validate_params(spec, document.get("params"))
    for key, value in params.items():
        _fraction(value, f"parameter {key}")
    estimator = document.get("estimator", "one-head")
    if estimator not in ESTIMATORS:
        raise InputError(f"the certificate's estimator {str(estimator)[:40]!r} is not one of {', '.join(ESTIMATORS)}")
    dps = check_dps(document.get("dps"))
    recorded_bits = check_int(document.get("prec_bits"), "prec_bits", 16, 40_000)
    if recorded_bits == prec_bits:
        raise InputError(f"the re-check must run at a precision other than the certificate's ({prec_bits} bits)")
    leaves = document.get("leaves")
    if not isinstance(leaves, list):
        raise InputError("the certificate's 'leaves' is missing or not a list")
    if len(leaves) > MAX_LEAVES:
        raise InputError(f"the certificate has {len(leaves)} leaves, more than the limit {MAX_LEAVES}")

    def box_of(data, where):
        if not isinstance(data, dict):
            raise InputError(f"{where} is not an object")
        out = {}
        for d in _DIMS:
            ends = data.get(d, ["0", "1"] if d == "theta" else None)
            if not isinstance(ends, list) or len(ends) != 2:
                raise InputError(f"{where}: {d} must be [lo, hi]")
            out[d] = (_fraction(ends[0], f"{where} {d}"), _fraction(ends[1], f"{where} {d}"))
            if not out[d][0] <= out[d][1]:
                raise InputError(f"{where}: {d} needs lo <= hi, got [{str(ends[0])[:30]}, {str(ends[1])[:30]}]")
        return out

    box = box_of(document.get("box"), "box")
    _check_box(box)
    boxes = [box_of(leaf, f"leaf {i}") for i, leaf in enumerate(leaves)]
    recorded = [_recorded_bounds(leaf, name, i) for i, leaf in enumerate(leaves)]

    def result(passed, message, index=None, checked=0, statement=""):
        return RecheckResult(passed=passed, message=message, leaf_index=index,
                             leaf=leaves[index] if index is not None else None, leaves_checked=checked,
                             prec_bits=prec_bits, seconds=round(time.perf_counter() - started, 3),
                             statement=statement)

    extra = sorted(set(document) - _FIELDS)
    if extra:
        return result(False, "the certificate has fields a certify certificate does not define, which the re-check "
                             f"would not check: {', '.join(str(k)[:30] for k in extra[:5])}")
    if document.get("status") != "proved":
        return result(False, f"not a proof: the certificate's status is {str(document.get('status'))[:20]!r}")
    if document.get("failure_box") is not None or document.get("undecided_box") is not None or document.get("reason"):
        return result(False, "the status says proved, but the certificate records a failure or undecided box")
    if document.get("evidence", "certified") != "certified":
        return result(False, f"the certificate's evidence {str(document.get('evidence'))[:20]!r} is not 'certified'")
    bits = working_bits(dps, float(max(abs(box["a"][0]), abs(box["a"][1]))), float(box["b"][1]))
    if recorded_bits != bits:
        return result(False, f"the recorded prec_bits {recorded_bits} is not the working precision of {dps} digits "
                             f"on this box ({bits} bits)")
    for index, leaf_box in enumerate(boxes):
        for d in set(_DIMS) - set(spec.dims):  # not bisected (θ of dLdb_negative): each leaf spans the box's
            if not (leaf_box[d][0] <= box[d][0] and box[d][1] <= leaf_box[d][1]):
                return result(False, f"leaf {index} fails: its {d} range does not span the box's", index, index)
    gap = covering_failure(box, boxes, spec.dims)
    if gap is not None:
        return result(False, f"the leaves do not cover the box: no leaf covers {gap}")
    counts = [document.get(k) for k in ("boxes", "evaluations", "max_boxes")]
    if not all(isinstance(c, int) and not isinstance(c, bool) for c in counts) or not (
            len(leaves) <= counts[0] <= max(1, 2 * len(leaves) - 1) and counts[1] >= counts[0] and counts[2] >= counts[0]):
        return result(False, f"boxes, evaluations and max_boxes are not those of a bisection with {len(leaves)} "
                             "leaves (leaves <= boxes <= 2·leaves − 1 <= max_boxes, evaluations >= boxes)")
    counter = _Counter()
    options = {"digits": dps, "theta_pieces": 256}
    with ctx.workprec(prec_bits):
        c_params = {k: arb(v) for k, v in params.items()}
        for index, leaf in enumerate(leaves):
            ends = {d: _outward(Decimal(str(leaf[d][0])), Decimal(str(leaf[d][1]))) if d in leaf
                    else _outward(Decimal(0), Decimal(1)) for d in _DIMS}
            verdict, bounds = spec.evaluate(ends, c_params, estimator, counter, options)
            if verdict is not True:
                return result(False, f"leaf {index} fails: {name} is not certainly true on it at {prec_bits} "
                                     f"bits (bounds {bounds})", index, index)
            if not _proves(name, recorded[index], params):
                return result(False, f"leaf {index} fails: its recorded bounds of {_QUANTITY[name]} do not prove "
                                     f"{name}", index, index)
            fault = _enclosure_fault(spec, boxes[index], recorded[index], c_params, estimator, counter, options)
            if fault is not None:
                return result(False, f"leaf {index} fails: {fault}", index, index)
    statement = derived_statement(name, params, box, estimator)
    return result(True, f"{len(leaves)} leaves cover the box and {name} is certainly true on each at "
                        f"{prec_bits} bits, each recorded enclosure containing its values at the leaf's midpoint "
                        f"and corners (the certificate: {recorded_bits} bits)", None, len(leaves), statement)
