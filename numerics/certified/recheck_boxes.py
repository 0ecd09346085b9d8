"""Re-check a certificate of ``stumpcheck certify`` (a predicate proved on a box of (a, b, θ)).

Those certificates (:class:`numerics.certified.certificate.Certificate`) record the predicate, its
parameters, the requested box and the proved leaves, whose ends were printed as decimals rounded outward
(lower ends down, upper ends up). So the leaves overlap by a rounding sliver, and they need not tile the box,
only **cover** it: :func:`covering_failure` checks with exact rational arithmetic that every point of the
box lies in some leaf. Each leaf is then evaluated again with the same predicate
(:data:`numerics.certified.predicates.PREDICATES`) at a working precision other than the certificate's,
its decimal ends rounded outward once more, and must come out certainly true. Covering plus every leaf true
proves the predicate on the box.
"""

from __future__ import annotations

import time
from decimal import Decimal
from fractions import Fraction

from numerics.precision import InputError

__all__ = ["is_box_certificate", "recheck_box_certificate", "covering_failure"]

_DIMS = ("a", "b", "theta")


def is_box_certificate(document: dict) -> bool:
    """True for a ``stumpcheck certify`` certificate (it has a predicate, a box and leaves, no format)."""
    return "format" not in document and {"predicate", "box", "leaves"} <= set(document)


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
    try:
        return Fraction(Decimal(str(text)))
    except Exception:
        raise InputError(f"{where} must be a decimal, got {str(text)[:40]!r}") from None


def recheck_box_certificate(document: dict, *, prec_bits: int):
    """Re-check a ``stumpcheck certify`` certificate at ``prec_bits``; a RecheckResult (see the module doc)."""
    from flint import arb, ctx

    from numerics.certified.boxes import _outward
    from numerics.certified.predicates import PREDICATES, _Counter, _validate_params
    from numerics.certified.recheck import RecheckResult

    started = time.perf_counter()
    name = document.get("predicate")
    if name not in PREDICATES:
        raise InputError(f"unknown predicate {str(name)[:40]!r}")
    spec = PREDICATES[name]
    params = _validate_params(spec, document.get("params"))
    estimator = document.get("estimator", "one-head")
    if document.get("prec_bits") == prec_bits:
        raise InputError(f"the re-check must run at a precision other than the certificate's ({prec_bits} bits)")
    leaves = document.get("leaves")
    if not isinstance(leaves, list):
        raise InputError("the certificate's 'leaves' is missing or not a list")

    def box_of(data, where):
        if not isinstance(data, dict):
            raise InputError(f"{where} is not an object")
        out = {}
        for d in _DIMS:
            ends = data.get(d, ["0", "1"] if d == "theta" else None)
            if not isinstance(ends, list) or len(ends) != 2:
                raise InputError(f"{where}: {d} must be [lo, hi]")
            out[d] = (_fraction(ends[0], f"{where} {d}"), _fraction(ends[1], f"{where} {d}"))
        return out

    def result(passed, message, index=None, checked=0):
        return RecheckResult(passed=passed, message=message, leaf_index=index,
                             leaf=leaves[index] if index is not None else None, leaves_checked=checked,
                             prec_bits=prec_bits, seconds=round(time.perf_counter() - started, 3))

    if document.get("status") != "proved":
        return result(False, f"not a proof: the certificate's status is {str(document.get('status'))[:20]!r}")
    box = box_of(document.get("box"), "box")
    boxes = [box_of(leaf, f"leaf {i}") for i, leaf in enumerate(leaves)]
    for index, leaf_box in enumerate(boxes):
        for d in set(_DIMS) - set(spec.dims):  # not bisected (θ of dLdb_negative): each leaf spans the box's
            if not (leaf_box[d][0] <= box[d][0] and box[d][1] <= leaf_box[d][1]):
                return result(False, f"leaf {index} fails: its {d} range does not span the box's", index, index)
    gap = covering_failure(box, boxes, spec.dims)
    if gap is not None:
        return result(False, f"the leaves do not cover the box: no leaf covers {gap}")
    counter = _Counter()
    options = {"digits": int(document.get("dps", 30)), "theta_pieces": 256}
    with ctx.workprec(prec_bits):
        c_params = {k: arb(v) for k, v in params.items()}
        for index, leaf in enumerate(leaves):
            ends = {d: _outward(Decimal(str(leaf[d][0])), Decimal(str(leaf[d][1]))) if d in leaf
                    else _outward(Decimal(0), Decimal(1)) for d in _DIMS}
            verdict, bounds = spec.evaluate(ends, c_params, estimator, counter, options)
            if verdict is not True:
                return result(False, f"leaf {index} fails: {name} is not certainly true on it at {prec_bits} "
                                     f"bits (bounds {bounds})", index, index)
    return result(True, f"{len(leaves)} leaves cover the box and {name} is certainly true on each at "
                        f"{prec_bits} bits (the certificate: {document.get('prec_bits')} bits)", None, len(leaves))
