"""One certificate for the tube and the region beyond it: the flow certificate with the region embedded.

A complete certified tube (:mod:`stumpcheck.numerics.certified.tube.certificate`, format /2) states z(t) ∈ its boxes for
t ∈ [0, T]; a region certificate (:mod:`stumpcheck.numerics.certified.region.certificate`) states that
R = {b_T ≤ b ≤ B, |a − calibration_a(b)| ≤ c/b} is forward invariant while b ≤ B, given z(T) in an entry box
inside R. Joined: **z(t) ∈ R for every t ≥ T up to t_B**, with the bands of b(t)⁴/t there.

The entry box is the tube's own enclosure of z(T) (:func:`tube_box_at_t_max`): with s_T = log(1 + T) (a
ball), for every sub-interval i of the last pieces whose s-range meets s_T, z̃(x) ± r_sup_i over
x ∈ x(s_T) ∩ [x_lo_i, x_hi_i] (z̃ the interval's Chebyshev piece, r_sup_i ≥ |z(t) − z̃(s(t))| on the
sub-interval, as the tube's re-check confirms), and the hull of those boxes, rounded outward to exact
decimals. It is ~10⁶ times narrower than the row box at T (a row is the hull of a whole sub-interval).

The flow certificate gains two keys, both under its ``digest``:

* ``region``: the region certificate document, its ``entry`` = {"t": T (the certificate's ``t_max``), "box":
  the tube's box at T} with the entry check, horizon t_B and bands (its own digest recomputed);
* ``for_all_t``: the summary :func:`for_all_t_summary` gives (proved or not and why, the region's statement,
  the entry's w range, t_B, bands of b(t)⁴/t at 10⁸, 10¹¹ and t_B).

With the tail b ≥ B (a tail certificate joined to the finite region, docs/tail.md; ``tail=True``), ``region``
holds the tail certificate, its joined finite region carries the entry, and ``for_all_t`` says **z(t) ∈ R ∪ R_∞
for every t ≥ T** (``horizon``: "inf"; ``assumptions`` the tail certificate's, empty), with the bands of
b(t)⁴/t up to t_B (``bands``) and for all t (``bands_all_time`` at 10⁸ … 10³⁰, ``rate``: K with
|β_±(t) − 2| ≤ K·t^{−1/4} for t ≥ t₀; :mod:`stumpcheck.numerics.certified.region.all_time`).

The region is embedded only if the tube is complete, every obligation is proved and the box lies in R;
otherwise ``region`` is absent and ``for_all_t`` says "not proved" and why.

:func:`recheck_flow_region` (after the tube's own re-check passed) re-checks the embedded region by
:func:`~stumpcheck.numerics.certified.region.certificate.recheck_region` (obligations restated from the
region's constants, leaves re-enclosed; the entry's check and bands recomputed), then requires the entry's
time to equal T and its box to CONTAIN the tube's box at T recomputed from the certificate's pieces and
radii, and the ``for_all_t`` summary to be the one the region gives. Without a region, ``for_all_t`` must
prove nothing and say so in the writer's words: exactly {"proved": false, "status": "for all t >= T: not
proved (REASON)"} with REASON the incomplete tube's (only for an incomplete tube) or a complete tube's
(the entry box not in R, with the entry check's detail, which is not re-derived: no region is recorded to
derive it from; or obligations not all proved).
"""

from __future__ import annotations

import copy
from fractions import Fraction

from flint import arb, ctx

from stumpcheck.numerics.certified.region.invariant_region import Region
from stumpcheck.numerics.certified.region.bounds import b4_band, horizon, lower_decimal as region_lower
from stumpcheck.numerics.certified.region.any_certificate import check_limits as check_region_limits
from stumpcheck.numerics.certified.region.any_certificate import recheck_any as recheck_region
from stumpcheck.numerics.certified.region.certificate import entry_record, is_region_certificate, region_certificate
from stumpcheck.numerics.certified.certificates.lemma_certificate import digest as region_digest
from stumpcheck.numerics.certified.tube.certificate import digest as flow_digest
from stumpcheck.numerics.certified.tube.records import exact_fraction, lower_decimal, upper_decimal
from stumpcheck.numerics.precision import InputError

__all__ = ["tube_box_at_t_max", "entry_of", "embed_region", "embed_region_certificate", "checked_region_certificate",
           "for_all_t_summary", "check_region_structure", "recheck_flow_region", "SUMMARY_TIMES"]

#: the times (besides t_B) at which ``for_all_t`` reports the band of b(t)⁴/t, when they lie in [T, t_B]
SUMMARY_TIMES = (10**8, 10**11)
_PREC = 200
_DIGITS = 17


def _fraction_ball(x: Fraction) -> arb:
    return arb(x.numerator) / x.denominator


def tube_box_at_t_max(document: dict) -> dict:
    """{"a": [lo, hi], "b": [lo, hi]} (outward exact decimals) containing z(T), T = the certificate's t_max,
    from its pieces and r_sup (see the module doc; :func:`stumpcheck.numerics.certified.tube.reading_nodes.pieces_state_at`);
    InputError if the tube is incomplete or malformed."""
    from stumpcheck.numerics.certified.tube.reading_nodes import piece_record, pieces_state_at

    if document.get("complete") is not True:
        raise InputError("the tube is not complete: it has no enclosure of z(T)")
    t_max = exact_fraction(document.get("t_max"), "t_max")
    intervals = document.get("intervals")
    if not isinstance(intervals, list):
        raise InputError("a malformed flow certificate: no list of intervals")
    with ctx.workprec(_PREC):
        box = pieces_state_at([piece_record(item) for item in intervals], t_max)
        if box is None:
            raise InputError("no interval of the tube contains T")
        a, b = _fraction_ball(box[0]).union(_fraction_ball(box[1])), _fraction_ball(box[2]).union(_fraction_ball(box[3]))
        return {"a": [lower_decimal(a, _DIGITS), upper_decimal(a, _DIGITS)],
                "b": [lower_decimal(b, _DIGITS), upper_decimal(b, _DIGITS)]}


def entry_of(document: dict) -> dict:
    """The region's entry for this tube: {"t": its t_max (the recorded text), "box": :func:`tube_box_at_t_max`}."""
    return {"t": str(document["t_max"]), "box": tube_box_at_t_max(document)}


def _finite_part(region_document: dict) -> dict:
    """The finite region certificate of an embedded region: itself, or a tail certificate's joined one."""
    from stumpcheck.numerics.certified.region.tail_certificate import is_tail_certificate

    if is_tail_certificate(region_document):
        join = region_document.get("join")
        if not isinstance(join, dict) or not isinstance(join.get("finite"), dict):
            raise InputError("a tail certificate embedded in a flow certificate needs a joined finite region")
        return join["finite"]
    return region_document


def _bands(region: Region, entry: dict) -> tuple[str, dict]:
    """(t_B rounded down, {"1e+08": band, "1e+11": band, "t_B": band}) for the entry (inside R)."""
    t_entry, (beta_lo, beta_hi) = entry["t"], entry["box"]["b"]
    with ctx.workprec(_PREC):
        t_b = region_lower(horizon(region, t_entry, beta_hi))
    bands = {}
    for label, t in (*((f"{float(t):g}", str(t)) for t in SUMMARY_TIMES), ("t_B", t_b)):
        t_exact = exact_fraction(t, "t")
        if exact_fraction(t_entry, "T") <= t_exact <= exact_fraction(t_b, "t_B"):
            band = b4_band(region, t_entry, beta_lo, beta_hi, t_exact)
            bands[label] = {"t": t, "b4_over_t": band["b4_over_t"], "minus_2_scaled": band["minus_2_scaled"]}
    return t_b, bands


def for_all_t_summary(region_document: dict | None, reason: str | None = None) -> dict:
    """The short "for all t ≥ T" record of the flow certificate and tube.json.

    ``region_document`` embedded (proved, entry inside R): {"proved": True, "status", "statement", "entry_t",
    "entry_w", "horizon_t_B", "bands"}; else {"proved": False, "status": "not proved (<reason>)", ...}."""
    if region_document is None:
        return {"proved": False, "status": f"for all t >= T: not proved ({reason})"}
    finite = _finite_part(region_document)
    region = Region.from_json(finite["region"])
    entry = finite["entry"]
    t_b, bands = _bands(region, entry)
    summary = {"proved": True,
               "status": f"for all t in [T, t_B]: z(t) in R (proved: the tube's box at T = {entry['t']} lies in R)",
               "statement": finite["statement"], "entry_t": entry["t"], "entry_w": entry["check"]["w"],
               "horizon_t_B": t_b, "bands": bands}
    if finite is not region_document:  # the tail b >= B joined: horizon ∞
        summary.update({
            "status": (f"for all t >= T: z(t) in R ∪ R_inf (proved: the tube's box at T = "
                       f"{entry['t']} lies in R, and R's top edge b = {finite['region']['b_max']} lies in R_inf)"),
            "statement": f"{finite['statement']}; {region_document['statement']}", "horizon": "inf",
            "assumptions": list(region_document.get("assumptions") or [])})
        summary.update(_all_time(region, Region.from_json(finite["region"]), region_document, entry))
    return summary


def _all_time(region: Region, finite_region: Region, tail_document: dict, entry: dict) -> dict:
    """The all-time part of ``for_all_t`` (:mod:`stumpcheck.numerics.certified.region.all_time_record`): bands of
    b(t)⁴/t at 10⁸ … 10³⁰, the rate constant K for t₀ = T and 10¹², and the bounds of b·sup|e| over the
    interior (C4), on R ∪ R_∞ with the weaker of the two regions' constants (d₋ the smaller, d₊ and c the
    larger)."""
    from stumpcheck.numerics.certified.region.all_time_record import all_time_record

    t_entry, (beta_lo, beta_hi) = entry["t"], entry["box"]["b"]
    record = all_time_record(finite_region, tail_document, t_entry, beta_lo, beta_hi)
    return {"bands_all_time": {f"{row['t']:g}": row for row in record["bands"]},
            "rate": record["rate"],
            "interior_error_all_time": record["interior_error"],
            "limits": ("b(t)⁴/t → 2 (both band ends, at the rate above), hence log b/log t → 1/4; "
                       "|a − calibration_a(b)| ≤ c/b → 0; b·sup over θ in [0.05, 0.95] of |e(θ)| → 1, hence "
                       "log sup|e|/log t → −1/4")}


def _before_interior_error(summary: dict) -> dict:
    """The all-time summary as written before it carried the bounds of b·sup|e| (everything else the same)."""
    older = {key: value for key, value in summary.items() if key != "interior_error_all_time"}
    older["limits"] = ("b(t)⁴/t → 2 (both band ends, at the rate above), hence log b/log t → 1/4; "
                       "|a − calibration_a(b)| ≤ c/b → 0")
    return older


def _embed(flow: dict, region_document: dict | None, reason: str | None) -> dict:
    out = dict(flow)
    out.pop("region", None)
    if region_document is not None:
        out["region"] = region_document
    out["for_all_t"] = for_all_t_summary(region_document, reason)
    out["digest"] = flow_digest(out)
    return out


_INCOMPLETE = "the tube is incomplete: it does not reach T"
_NOT_ALL_PROVED = "the region's obligations were not all proved"
_NOT_IN_R = "entry box not in R: "


def _unproved_fault(summary: dict, complete) -> str | None:
    """None if ``summary`` is a "not proved" record as :func:`for_all_t_summary` writes it for this tube."""
    status = summary.get("status")
    prefix = "for all t >= T: not proved ("
    if set(summary) != {"proved", "status"} or not isinstance(status, str) or not (
            status.startswith(prefix) and status.endswith(")")):
        return "for_all_t without a region must be exactly {proved: false, status: 'for all t >= T: not proved (...)'}"
    reason = status[len(prefix):-1]
    allowed = reason == _INCOMPLETE if complete is not True else (reason == _NOT_ALL_PROVED
                                                                   or reason.startswith(_NOT_IN_R))
    if not allowed:
        return f"for_all_t's reason {reason[:60]!r} is not one the writer gives for this tube"
    return None


def _entry_reason(region: Region, flow: dict):
    """(entry, None) for a complete tube whose box at T lies in R, else (entry or None, the reason why not)."""
    from stumpcheck.numerics.certified.region.bounds import entry_check

    if flow.get("complete") is not True:
        return None, _INCOMPLETE
    entry = entry_of(flow)
    check = entry_check(region, entry["box"])
    if not check["inside"]:
        return entry, f"{_NOT_IN_R}{check['reason']}"
    return entry, None


def embed_region(flow: dict, region: Region, *, workers: int = 1, max_boxes: int = 20_000,
                 progress=None) -> dict:
    """The flow certificate with ``region`` proved now (entry: the tube's box at T) embedded; a copy.

    The region is proved only when the tube is complete and its box at T lies in R (checked first, cheaply);
    otherwise the copy's ``for_all_t`` says why not."""
    entry, reason = _entry_reason(region, flow)
    if reason is not None:
        return _embed(flow, None, reason)
    document = region_certificate(region, entry=entry, workers=workers, max_boxes=max_boxes, progress=progress)
    if document["status"] != "proved":
        return _embed(flow, None, _NOT_ALL_PROVED)
    return _embed(flow, document, None)


def checked_region_certificate(region_document, *, b_max=None, tail: bool = False) -> Region:
    """The region of a region certificate after the cheap checks of :func:`embed_region_certificate`;
    InputError (one line) if one fails. With ``tail``, a tail certificate (b >= B) is accepted too: it must hold
    a joined finite region, whose region is returned (the entry lies in it)."""
    from stumpcheck.numerics.certified.region.tail import TailRegion
    from stumpcheck.numerics.certified.region.tail_certificate import _join_record, is_tail_certificate

    if is_tail_certificate(region_document) and not tail:
        raise InputError("a tail region certificate (b >= B) is embedded only where asked for (tail=True); "
                         "embed its finite region, or the tail with the library's embed_region_certificate")
    if is_tail_certificate(region_document):
        if region_document.get("digest") != region_digest(region_document):
            raise InputError("the tail certificate was edited after it was written (its digest does not match)")
        if region_document.get("status") != "proved":
            raise InputError("the tail certificate's status is not 'proved'")
        tail = TailRegion.from_json(region_document.get("region"))
        if region_document.get("statement") != tail.statement():
            raise InputError("the tail certificate's statement is not the one its recorded region states")
        finite = _finite_part(region_document)
        if _join_record(tail, finite) != region_document["join"]:
            raise InputError("the tail certificate's join is not the one its finite region gives")
        return checked_region_certificate(finite, b_max=b_max)
    if not is_region_certificate(region_document):
        raise InputError("not a region certificate (format stumpcheck-region-certificate/1)")
    if region_document.get("digest") != region_digest(region_document):
        raise InputError("the region certificate was edited after it was written (its digest does not match)")
    if region_document.get("status") != "proved":
        raise InputError(f"the region certificate's status is {str(region_document.get('status'))[:20]!r}, "
                         "not 'proved'")
    region = Region.from_json(region_document.get("region"))
    if region_document.get("statement") != region.statement():
        raise InputError("the region certificate's statement is not the one its recorded region states")
    if b_max is not None and Fraction(b_max) != region.b_max:
        raise InputError(f"the region certificate is for B = {float(region.b_max):g}, not --region-b-max "
                         f"{float(Fraction(b_max)):g}")
    return region


def embed_region_certificate(flow: dict, region_document: dict, *, b_max=None, tail: bool = False) -> dict:
    """The flow certificate with an existing region certificate embedded, its entry recomputed for this tube.

    Checked cheaply first (its leaves are re-enclosed by ``stumpcheck recheck`` only): the format, the
    digest, status "proved", the statement the recorded region states, and B = ``b_max`` if given.
    With ``tail``, a tail certificate joined to a finite region (:mod:`stumpcheck.numerics.certified.region.tail_certificate`)
    is accepted: the finite part gets the entry, and ``for_all_t`` says "for all t >= T" (horizon inf).
    InputError if any fails."""
    region = checked_region_certificate(region_document, b_max=b_max, tail=tail)
    entry, reason = _entry_reason(region, flow)
    if reason is not None:
        return _embed(flow, None, reason)
    document = copy.deepcopy(region_document)
    finite = _finite_part(document)
    finite["entry"] = entry_record(region, entry)
    finite["digest"] = region_digest(finite)
    if finite is not document:  # a tail certificate: its join and digest follow the finite part's new entry
        from stumpcheck.numerics.certified.region.tail import TailRegion
        from stumpcheck.numerics.certified.region.tail_certificate import _join_record

        document["join"] = _join_record(TailRegion.from_json(document["region"]), finite)
        document["digest"] = region_digest(document)
    return _embed(flow, document, None)


def _contains(outer: dict, inner: dict) -> bool:
    return all(exact_fraction(outer[k][0]) <= exact_fraction(inner[k][0]) and
               exact_fraction(inner[k][1]) <= exact_fraction(outer[k][1]) for k in ("a", "b"))


def check_region_structure(document: dict) -> None:
    """InputError (one line) if the flow certificate's ``region`` or ``for_all_t`` is malformed: run before the
    tube's re-check, so that a malformed file is refused at once."""
    region_document, summary = document.get("region"), document.get("for_all_t")
    if summary is not None and not (isinstance(summary, dict) and isinstance(summary.get("proved"), bool)):
        raise InputError("the certificate's 'for_all_t' is not a summary {proved: true or false, ...}")
    from stumpcheck.numerics.certified.region.tail_certificate import is_tail_certificate

    if region_document is not None and not (is_region_certificate(region_document)
                                            or is_tail_certificate(region_document)):
        raise InputError("the embedded 'region' is not a region certificate")
    if region_document is not None:
        check_region_limits(region_document)


def recheck_flow_region(document: dict, *, points: str = "midpoint", progress=None,
                        arithmetic: str = "fast") -> tuple[bool, str]:
    """(ok, message) for the region part of a flow certificate whose tube part passed its re-check.

    Without ``region``: ok if ``for_all_t`` (when present) claims nothing. With it: see the module doc.
    InputError for a malformed embedded document."""
    check_region_structure(document)
    region_document = document.get("region")
    summary = document.get("for_all_t")
    if region_document is None:
        if summary is not None and summary.get("proved") is not False:
            return False, "for_all_t claims a proof but the certificate holds no region"
        fault = None if summary is None else _unproved_fault(summary, document.get("complete"))
        if fault is not None:
            return False, fault
        return True, "no region embedded: nothing is claimed for t > T"
    if document.get("complete") is not True:
        return False, "a region is embedded but the tube is not complete"
    entry = _finite_part(region_document).get("entry")
    if not isinstance(entry, dict) or not isinstance(entry.get("box"), dict):
        return False, "the embedded region has no entry box"
    try:
        if exact_fraction(entry.get("t"), "entry t") != exact_fraction(document.get("t_max"), "t_max"):
            return False, f"the region's entry time {str(entry.get('t'))[:30]} is not the tube's T = {document['t_max']}"
        own = tube_box_at_t_max(document)
        if not _contains(entry["box"], own):
            return False, (f"the region's entry box does not contain the tube's box at T (a {own['a']}, "
                           f"b {own['b']})")
    except (KeyError, TypeError, IndexError):
        return False, "the region's entry box is not {a: [lo, hi], b: [lo, hi]}"
    ok, message = recheck_region(region_document, points=points, progress=progress, arithmetic=arithmetic)
    if not ok:
        return False, f"the embedded region: {message}"
    expected = for_all_t_summary(region_document)
    if "interior_error_all_time" not in summary and "interior_error_all_time" in expected:
        expected = _before_interior_error(expected)  # written before the C4 bounds were added: still checked
    if summary != expected:
        return False, "for_all_t is not the summary the embedded region gives"
    return True, f"the embedded region re-checks ({message}); its entry box at T contains the tube's box at T"
