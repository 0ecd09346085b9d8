"""The part of C2–C4 beyond the tube's T: what a certified forward-invariant region gives for t ∈ [T, t_B].

The region (:mod:`stumpcheck.numerics.certified.region.invariant_region`, certificate format ``stumpcheck-region-certificate/1``)
is R = {b_T ≤ b ≤ B, |w| ≤ c} with w = b·λ = b·(a − calibration_a(b)), i.e. |λ| ≤ c/b (the defaults
b_T = 30, B = 1000, c = 1/2). Its four obligations prove: the field points strictly into R on |w| = c,
(1 − d₊/b)/(2b³) ≤ ḃ ≤ (1 − d₋/b)/(2b³) on R, so z(t) ∈ R for every t ≥ T until b first reaches B once
z(T) ∈ R. The hypothesis z(T) ∈ R is checked here, by Arb, on the tube's own enclosure of z(T)
(:func:`stumpcheck.numerics.certified.region.bounds.entry_check`), and with b(T) ∈ [β₋, β₊] the horizon
t_B (b ≤ B before it) and the bands of b(t)⁴/t at t = 10⁸, 10¹¹ and t_B follow
(:func:`~stumpcheck.numerics.certified.region.bounds.band_table`).

Evidence: *certified* only when the region certificate was proved or re-checked in this run (the caller
says so: ``checked``) and the entry check passed for this tube's state at T; otherwise the same figures
are shown as *not certified* with the reason. Nothing is said for t > t_B unless the region is a tail
certificate b ≥ B joined to the finite region: then z(t) ∈ R ∪ R_∞ for every t ≥ T, with the all-time bands
of b⁴/t, the rate constants and the bounds of b·sup|e| (C4) of
:mod:`stumpcheck.numerics.certified.region.all_time_record`.
"""

from __future__ import annotations

import json
from fractions import Fraction
from pathlib import Path

from stumpcheck.numerics.precision import InputError

__all__ = ["BAND_TIMES", "region_document", "beyond_t", "beyond_markdown"]

#: the times of the b(t)⁴/t bands shown (those in [T, t_B]; t_B itself is added)
BAND_TIMES = (10**8, 10**11)


def region_document(source) -> dict:
    """A region certificate from a dict, a region_certificate.json, or a flow certificate (a dict or file)
    that embeds one under "region"; InputError if none is there."""
    from stumpcheck.numerics.certified.region.certificate import is_region_certificate
    from stumpcheck.numerics.certified.region.tail_certificate import is_tail_certificate

    document = source
    if not isinstance(source, dict):
        path = Path(source)
        try:
            document = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            raise InputError(f"{path.name}: not a readable region certificate") from None
    if isinstance(document, dict) and not (is_region_certificate(document) or is_tail_certificate(document)):
        document = document.get("region")
    if not (is_region_certificate(document) or is_tail_certificate(document)):
        raise InputError("no region certificate (format stumpcheck-region-certificate/1) there")
    return document


def _decimals(x: Fraction, up: bool) -> str:
    """x rounded outward to 20 significant digits (a wider box is still an enclosure)."""
    from stumpcheck.numerics.certified.tube.reading_enclosures import exact_ball
    from stumpcheck.numerics.certified.tube.records import lower_decimal, upper_decimal

    return upper_decimal(exact_ball(x), 20) if up else lower_decimal(exact_ball(x), 20)


def beyond_t(document: dict, *, t_entry, box, checked: str | None) -> dict:
    """What the region certificate ``document`` gives beyond t_entry = T for the state box (a_lo, a_hi, b_lo,
    b_hi) ∋ z(T) (module doc). ``checked``: how the certificate was verified in this run ("proved in this
    run", "re-checked in this run"), or None. JSON-ready."""
    from flint import ctx

    from stumpcheck.numerics.certified.region.invariant_region import Region
    from stumpcheck.numerics.certified.region.bounds import band_table, entry_check, horizon, lower_decimal
    from stumpcheck.numerics.certified.region.tail_certificate import is_tail_certificate

    tail = document if is_tail_certificate(document) else None
    if tail is not None:
        join = tail.get("join")
        if not isinstance(join, dict) or not isinstance(join.get("finite"), dict):
            raise InputError("a tail certificate without a joined finite region: the state at T has no region")
        document = join["finite"]
    region = Region.from_json(document.get("region"))
    t_entry = Fraction(t_entry)
    entry_box = {"a": (_decimals(box[0], False), _decimals(box[1], True)),
                 "b": (_decimals(box[2], False), _decimals(box[3], True))}
    check = entry_check(region, entry_box)
    constants = region.to_json()
    out = {
        "region": constants,
        "statement": (f"for t in [T, t_B]: z(t) in R = {{{constants['b_start']} <= b <= {constants['b_max']}, "
                      f"|w| <= {constants['c']}}}, w = b*lambda = b*(a - calibration_a(b)) (i.e. |lambda| <= "
                      f"{constants['c']}/b), and (1 - {constants['d_plus']}/b)/(2b^3) <= db/dt <= "
                      f"(1 - {constants['d_minus']}/b)/(2b^3) there, so (1 - delta)/(2b^3) <= db/dt <= "
                      f"(1 + delta)/(2b^3) with delta = {constants['delta']}"),
        "region_status": document.get("status"),
        "region_checked": checked or "not verified in this run",
        "t_entry": float(t_entry),
        "entry": {"box": {k: list(v) for k, v in entry_box.items()}, **check},
        "not_proved": list(document.get("not_proved") or []),
    }
    if check["inside"]:
        with ctx.workprec(200):
            t_b = Fraction(lower_decimal(horizon(region, t_entry, entry_box["b"][1])))
        times = [t for t in BAND_TIMES if t_entry <= t <= t_b] + [t_b]
        out["horizon_t_B"] = float(t_b)
        out["bands"] = band_table(region, t_entry, entry_box["b"][0], entry_box["b"][1], times)
    reasons = []
    if document.get("status") != "proved":
        reasons.append(f"the region certificate's status is {document.get('status')!r}")
    if checked is None:
        reasons.append("the region certificate was not proved or re-checked in this run")
    if not check["inside"]:
        reasons.append(f"the tube's state at T is not certainly in R: {check['reason']}")
    if tail is not None and tail.get("status") != "proved":
        reasons.append(f"the tail certificate's status is {tail.get('status')!r}")
    out["evidence"] = "certified" if not reasons else "not certified"
    out["why_not"] = "; ".join(reasons) or None
    out["covers"] = (f"certified on [{float(t_entry):g}, {out['horizon_t_B']:.6g}] (t_B)" if not reasons else
                     f"not certified: {out['why_not']}")
    if tail is not None and check["inside"]:
        out.update(_all_time(region, tail, t_entry, entry_box))
        # the finite region's "nothing for b > b_max" is what the joined tail proves
        finite_only = [text for text in out["not_proved"] if not text.startswith("nothing for b > b_max")]
        out["not_proved"] = [*finite_only, *tail.get("not_proved", [])]
        if not reasons:
            out["covers"] = f"certified on [{float(t_entry):g}, ∞)"
    return out


def _all_time(region, tail: dict, t_entry: Fraction, entry_box: dict) -> dict:
    """The all-time part with the tail joined: statement, assumptions, bands to 10³⁰, the rate constants and the
    bounds of b·sup|e| (:mod:`stumpcheck.numerics.certified.region.all_time_record`, on R ∪ R_∞ with the weaker
    constants)."""
    from stumpcheck.numerics.certified.region.all_time_record import all_time_record

    (beta_lo, beta_hi) = entry_box["b"]
    record = all_time_record(region, tail, t_entry, beta_lo, beta_hi)
    return {"horizon": "inf", "tail_statement": tail["statement"], "assumptions": list(tail.get("assumptions", [])),
            "bands_all_time": record["bands"], "rate": record["rate"],
            "interior_error_all_time": record["interior_error"],
            "calibration_all_time": f"|w| = b|λ| <= {float(record['union'].c):g} for every t >= T"}


def beyond_markdown(part: dict) -> list[str]:
    """report.md lines of the beyond-T part."""
    lines = [f"**Beyond T** ({part['evidence']}; the region certificate: {part['region_status']}, "
             f"{part['region_checked']}): {part['statement']}.", "",
             f"- Entry at T = {part['t_entry']:g}: w = b·λ ∈ [{part['entry']['w'][0]}, {part['entry']['w'][1]}] "
             f"over the tube's box at T, " + ("inside R" if part["entry"]["inside"] else
                                               f"NOT inside R ({part['entry']['reason']})") + "."]
    if "bands" in part:
        lines += [f"- Horizon t_B >= {part['horizon_t_B']:.6g} (b(t) <= B before it).", "",
                  "| t | b(t)⁴/t | t^{1/4}·(b⁴/t − 2) |", "|---|---|---|"]
        lines += [f"| {band['t']:.6g} | [{band['b4_over_t'][0]}, {band['b4_over_t'][1]}] | "
                  f"[{band['minus_2_scaled'][0]}, {band['minus_2_scaled'][1]}] |" for band in part["bands"]]
    if "bands_all_time" in part:
        lines += ["", f"**For all t ≥ T** ({part['covers']}): {part['tail_statement']}.", "",
                  "| t | b(t)⁴/t | log b/log t − 1/4 | bound of \\|a − calibration_a(b)\\| |", "|---|---|---|---|"]
        lines += [f"| {band['t']:.3g} | [{band['b4_over_t'][0]}, {band['b4_over_t'][1]}] | "
                  f"[{band['log_b_over_log_t_minus_quarter'][0]}, {band['log_b_over_log_t_minus_quarter'][1]}] | "
                  f"{band['calibration_gap_at_most']} |" for band in part["bands_all_time"]]
        lines += [""] + [f"- Rate: {r['statement']}." for r in part["rate"]]
        interior = part.get("interior_error_all_time")
        if interior is not None:
            lines += ["", f"C4 for all t ≥ T: {interior['statement']}.", "",
                      "| t | b(t) ≥ | M | b·sup\\|e\\| | log sup\\|e\\|/log t + 1/4 |", "|---|---|---|---|---|"]
            lines += [f"| {row['t']:.3g} | {row['b_at_least']} | {row['M']} | [{row['sup_e_b'][0]}, "
                      f"{row['sup_e_b'][1]}] | [{row['log_sup_e_over_log_t_plus_quarter'][0]}, "
                      f"{row['log_sup_e_over_log_t_plus_quarter'][1]}] |" for row in interior["rows"]]
            lines += ["", f"- Limits: {interior['limits']}."]
        lines += [f"- Assumed: {a}" for a in part["assumptions"]]
    if part["why_not"]:
        lines += ["", f"Not certified: {part['why_not']}."]
    lines += ["", "Not proved: " + "; ".join(part["not_proved"]) + "."] if part["not_proved"] else []
    return lines
