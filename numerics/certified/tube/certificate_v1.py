"""The re-check of a first-version tube certificate (format ``stumpcheck-flow-certificate/1``, cubic Hermite pieces).

New tubes are written in format /2 (:mod:`stumpcheck.numerics.certified.tube.certificate`); this module keeps the
re-check of /1 certificates written by earlier versions.

The document records the initial disk (a₀, b₀, radius), T, and per interval k: the nodes (s, a, b and the
slopes of z̃, as exact float64 hex strings), the a-priori radius ρ_k, the radii r_start ≥ ‖z − z̃‖ at s_k
and r_end at s_{k+1}, r_sup over the interval, the bounds δ_k ≥ sup ‖d‖₂ and μ_k ≥ the logarithmic norm
(decimals, upper bounds), and the box Z_k = [a_lo, a_hi] × [b_lo, b_hi] (outward decimals) with its time
interval [t_lo, t_hi] ⊇ [e^{s_k} − 1, e^{s_{k+1}} − 1]. ``digest`` is the sha256 of the rest.

:func:`recheck_flow_certificate` trusts none of the recorded bounds: with exact rationals it checks that
the intervals start at s = 0 from the initial point, follow each other without gap (s_{k+1} of one is s_k
of the next, the same node), that r_start_{k+1} = r_end_k and each box contains the next interval's start
(the disk of radius r_end_k about the node), and that the last interval reaches log(1 + T) if the tube
says it is complete; then, at its own working precision, it recomputes every interval's node defects,
δ and μ over the recorded ρ (rigorous θ-integrals), requires them below the recorded bounds, recomputes
the Gronwall radius from the recorded bounds and requires r_end, r_sup < ρ and the recorded box to
contain z̃'s hull ± r_sup. As for format /2, the file's limits are checked first and its meaning is derived
(:mod:`stumpcheck.numerics.certified.tube.statement`: estimator, statement, each interval's time range within the outward
rounding of its proved range, a complete tube ending at T).
"""

from __future__ import annotations

import hashlib
import json
import math
import time
from fractions import Fraction

from flint import arb, ctx

from stumpcheck.numerics.certified.enclosures.balls import working_bits
from stumpcheck.numerics.certified.certificates.lemma_recheck import RecheckResult
from stumpcheck.numerics.certified.tube.interval_v1 import Node, interval_bounds, node_defect, piece_hull, radius_bound
from stumpcheck.numerics.certified.tube.statement import (check_limits, ends_fault, proved_statement, row_time_fault,
                                                         statement_fault)
from stumpcheck.numerics.certified.tube.records import (exact_fraction, lower_decimal, parse_lower, parse_upper,
                                             upper_decimal)
from stumpcheck.numerics.precision import InputError

__all__ = ["FORMAT", "recheck_flow_certificate", "is_flow_certificate", "interval_time_bounds", "digest"]

FORMAT = "stumpcheck-flow-certificate/1"
_BOX_DIGITS = 15


def is_flow_certificate(document) -> bool:
    return isinstance(document, dict) and document.get("format") == FORMAT


def _hex(x: float) -> str:
    return float(x).hex()


def _from_hex(text, where: str) -> float:
    try:
        value = float.fromhex(str(text))
    except (ValueError, TypeError, OverflowError):
        raise InputError(f"{where}: not a float64 hex string: {str(text)[:40]!r}") from None
    if not math.isfinite(value):
        raise InputError(f"{where}: not finite: {text!r}")
    return value


def interval_time_bounds(s0: float, s1: float) -> tuple[str, str]:
    """Decimals t_lo ≤ e^{s0} − 1 and t_hi ≥ e^{s1} − 1."""
    t_lo = "0" if s0 == 0 else lower_decimal(arb(s0).expm1(), _BOX_DIGITS)
    return t_lo, upper_decimal(arb(s1).expm1(), _BOX_DIGITS)


def _node_json(node: Node) -> dict:
    return {"s": _hex(node.s), "a": _hex(node.a), "b": _hex(node.b), "fa": _hex(node.fa), "fb": _hex(node.fb)}


def _node_from(data, where: str) -> Node:
    if not isinstance(data, dict):
        raise InputError(f"{where}: a node must be an object")
    return Node(*(_from_hex(data.get(k), f"{where}.{k}") for k in ("s", "a", "b", "fa", "fb")))


def digest(document: dict) -> str:
    """sha256 of the canonical JSON (sorted keys, no spaces) of ``document`` without its ``digest``."""
    body = {k: v for k, v in document.items() if k != "digest"}
    text = json.dumps(body, sort_keys=True, separators=(",", ":"), ensure_ascii=False, allow_nan=False)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def _fail(message, index=None, interval=None, started=0.0, bits=0, checked=0):
    return RecheckResult(False, message, leaf_index=index, leaf=interval, leaves_checked=checked, prec_bits=bits,
                         seconds=time.perf_counter() - started)


def _structure(document: dict):
    """(initial node values, radius, t_max, intervals as parsed tuples), or InputError if malformed."""
    initial = document.get("initial")
    intervals = document.get("intervals")
    if not isinstance(initial, dict) or not isinstance(intervals, list):
        raise InputError("the certificate has no 'initial' object or no 'intervals' list")
    a0 = _from_hex(initial.get("a0"), "initial.a0")
    b0 = _from_hex(initial.get("b0"), "initial.b0")
    radius = exact_fraction(initial.get("radius"), "initial.radius")
    t_max = exact_fraction(document.get("t_max"), "t_max")
    parsed = []
    for k, item in enumerate(intervals):
        where = f"interval {k}"
        if not isinstance(item, dict):
            raise InputError(f"{where}: not an object")
        n0, n1 = _node_from(item.get("start"), f"{where}.start"), _node_from(item.get("end"), f"{where}.end")
        numbers = {name: exact_fraction(item.get(name), f"{where}.{name}")
                   for name in ("rho", "r_start", "r_end", "r_sup", "delta", "mu")}
        box, times = item.get("box"), item.get("t")
        if not (isinstance(box, list) and len(box) == 4 and isinstance(times, list) and len(times) == 2):
            raise InputError(f"{where}: 'box' must be [a_lo, a_hi, b_lo, b_hi] and 't' [t_lo, t_hi]")
        box = [exact_fraction(x, f"{where}.box") for x in box]
        times = [exact_fraction(x, f"{where}.t") for x in times]
        parsed.append((n0, n1, numbers, box, times, item))
    return a0, b0, radius, t_max, parsed


def _exact_checks(document, a0, b0, radius, t_max, parsed):
    """The first structural fault (index, message) found with exact rationals, or None."""
    if not parsed:
        return None, "the certificate has no intervals"
    first = parsed[0][0]
    if first.s != 0 or first.a != a0 or first.b != b0:
        return 0, "the first interval does not start at s = 0 from the initial point"
    if parsed[0][2]["r_start"] < radius:
        return 0, "the first interval's r_start is below the initial radius"
    for k, (n0, n1, numbers, box, times, _) in enumerate(parsed):
        if not n1.s > n0.s:
            return k, "an interval with s_end <= s_start"
        if min(numbers["r_start"], numbers["delta"]) < 0 or numbers["rho"] <= 0:
            return k, "a negative radius or defect bound"
        if not (box[0] <= box[1] and box[2] <= box[3]):
            return k, "an empty box"
        if numbers["r_sup"] < max(numbers["r_start"], numbers["r_end"]) or not numbers["r_sup"] < numbers["rho"]:
            return k, "r_sup is below r_start or r_end, or not below the a-priori radius rho"
        if not times[0] <= times[1]:
            return k, "a malformed time interval"
        # the box contains the start and the end disks (about the nodes, of radius r_start and r_end)
        for node, r in ((n0, numbers["r_start"]), (n1, numbers["r_end"])):
            a, b = Fraction(node.a), Fraction(node.b)
            if not (box[0] <= a - r and a + r <= box[1] and box[2] <= b - r and b + r <= box[3]):
                return k, "the box does not contain the disk about its start or end node"
        if k + 1 < len(parsed):
            nxt = parsed[k + 1]
            if nxt[0] != n1:
                return k + 1, "a gap: the interval does not start at the previous interval's end node"
            if nxt[2]["r_start"] != numbers["r_end"]:
                return k + 1, "r_start differs from the previous interval's r_end"
            if nxt[4][0] > times[1]:
                return k + 1, "a gap in t between consecutive intervals"
    if parsed[0][4][0] != 0:
        return 0, "the tube does not start at t = 0"
    with ctx.workprec(128):
        for k, (n0, n1, _, _, _, item) in enumerate(parsed):
            fault = row_time_fault(item["t"][0], item["t"][1], arb(n0.s), arb(n1.s))
            if fault is not None:
                return k, f"the interval's time range {fault}"
        fault = ends_fault(document, t_max, arb(parsed[-1][1].s).expm1(), parsed[-1][5]["t"][1], version=1)
        if fault is not None:
            return len(parsed) - 1, fault
    return None, None


def recheck_flow_certificate(document: dict, dps: int, progress=None) -> RecheckResult:
    """Re-check a flow certificate at ``dps`` digits (must differ from the certificate's); see the module doc."""
    started = time.perf_counter()
    if not is_flow_certificate(document):
        raise InputError(f"not a flow certificate: format {str(document.get('format'))[:60]!r}, expected {FORMAT!r}")
    recorded_dps = document.get("dps")
    if recorded_dps == dps:
        raise InputError(f"re-check at another precision than the certificate's {dps} digits")
    check_limits(document, dps, version=1)
    a0, b0, radius, t_max, parsed = _structure(document)
    if document.get("digest") != digest(document):
        return _fail("the digest does not match the certificate's contents (it was edited)", started=started)
    fault = statement_fault(document, a0, b0, version=1)
    if fault is not None:
        return _fail(fault, started=started)
    index, message = _exact_checks(document, a0, b0, radius, t_max, parsed)
    if message is not None:
        return _fail(message, index, parsed[index][5] if index is not None else None, started)
    bits = working_bits(dps, abs(a0) + 100, b0 + 100)
    with ctx.workprec(bits):
        d1 = node_defect(parsed[0][0], dps)
        for k, (n0, n1, numbers, box, _, item) in enumerate(parsed):
            d0, d1 = d1, node_defect(n1, dps)
            try:
                bounds = interval_bounds(n0, n1, d0, d1, parse_upper(item["rho"]), dps)
            except ArithmeticError as exc:
                return _fail(f"a rigorous θ-integral failed: {exc}", k, item, started, bits, k)
            if not bounds.delta <= parse_lower(item["delta"]):
                return _fail(f"the defect bound is not confirmed (recomputed {bounds.delta.str(5)} > "
                             f"{item['delta']})", k, item, started, bits, k)
            if not bounds.mu <= parse_lower(item["mu"]):
                return _fail(f"the logarithmic-norm bound is not confirmed (recomputed {bounds.mu.str(5)} > "
                             f"{item['mu']})", k, item, started, bits, k)
            h = arb(n1.s) - arb(n0.s)
            r_end = radius_bound(parse_upper(item["r_start"]), parse_upper(item["delta"]), parse_upper(item["mu"]), h)
            if not r_end <= parse_lower(item["r_end"]):
                return _fail(f"the Gronwall radius {r_end.str(5)} exceeds the recorded r_end {item['r_end']}",
                             k, item, started, bits, k)
            (ha, hb), _, _ = piece_hull(n0, n1)
            r_sup = parse_upper(item["r_sup"])
            inside = ((ha.lower() - r_sup) >= parse_upper(item["box"][0])
                      and (ha.upper() + r_sup) <= parse_lower(item["box"][1])
                      and (hb.lower() - r_sup) >= parse_upper(item["box"][2])
                      and (hb.upper() + r_sup) <= parse_lower(item["box"][3]))
            if not inside:
                return _fail("the recorded box does not contain the interpolant's hull widened by r_sup",
                             k, item, started, bits, k)
            t_lo, t_hi = parse_upper(item["t"][0]), parse_lower(item["t"][1])
            if not (t_lo <= arb(n0.s).expm1() and t_hi >= arb(n1.s).expm1()):
                return _fail("the recorded time interval does not contain [e^s0 - 1, e^s1 - 1]",
                             k, item, started, bits, k)
            if progress is not None:
                progress(k + 1, len(parsed))
    what = ("complete" if document.get("complete") is True else
            f"incomplete: proved for t in [0, {document.get('valid_to_t')}] only, not to T = {document.get('t_max')}")
    message = (f"{len(parsed)} intervals re-verified at {dps} digits ({bits} bits): contiguous from t = 0, "
               f"each box contains the next start, defect and log-norm bounds confirmed; tube {what}")
    return RecheckResult(True, message, leaves_checked=len(parsed), prec_bits=bits,
                         seconds=time.perf_counter() - started, statement=proved_statement(document))
