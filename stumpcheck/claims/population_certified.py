"""Certified readings of C2–C4 from the certified tube, on [0, T], with verdicts only for what the enclosures decide.

The claims are asymptotic (docs/claims.md): their sampled criteria are fits over t ∈ [10⁶, 10¹²] of a
float64 flow. The tube (docs/certified_flow.md) proves where the exact flow from (10, 10) is for t ≤ T;
from it this module encloses, rigorously (:mod:`stumpcheck.numerics.certified.tube.reading_enclosures`):

* at 8 fixed log-spaced times per decade in the fit window [t_start, T] and at T (the states of
  :func:`stumpcheck.numerics.certified.tube.readings.node_states`: the tube's own enclosure z̃(s) ± r_sup at those times
  when its pieces are at hand, else the rows' intersections nearest them), and at T itself
  (:func:`~stumpcheck.numerics.certified.tube.readings.state_at`: z̃(s_T) ± r_sup, or the hull of the rows containing
  T): λ = a − calibration_a(b), λ·b, the residual without the ρ₁/b term, b⁴/(2t),
  sup_{θ ∈ [0.05, 0.95]} |e(θ)| and sup|e|·b;
* for every t ∈ [0, T] (every row of the tube; b⁴/(2t) for t ≥ t₁, the end of the first row, since it is
  infinite at t = 0), and for every t of the window: bounds of λ and of b⁴/(2t), and optionally of
  sup|e|·b (a branch and bound per row);
* the least-squares slopes over the window's nodes, as intervals (a slope is linear in the data): the order
  of |λ| in 1/b (slope of log|λ| on log b, negated), the exponent of b in t (slope of log b on log t) and the
  exponent of sup|e| in t — the fits of the sampled criteria, over the certified window instead;
* beyond T, with a region certificate (:mod:`stumpcheck.claims.population_beyond`): z(t) ∈ R for
  t ∈ [T, t_B], the ḃ bounds and the bands of b⁴/t, certified only when the region was proved or
  re-checked in this run and the tube's state at T lies in R.

A verdict is given only for a statement the enclosures decide, and it says which: the sampled
criterion's inequality *for the fit over the certified window* is ``met`` when the whole interval
satisfies it, ``not met`` when none of it does (on this window: not a refutation of the claim),
``undecided`` otherwise. That is a statement about the exact flow on [t_start, T], not the asymptotic
claim: the claim rows take their verdicts from the certified limit statements for every t ≥ T
(:mod:`stumpcheck.claims.population_all_time`), with these window readings beside them. Default window: the last
three decades below T (as C2's sampled fit).
"""

from __future__ import annotations

import math
import time
from fractions import Fraction
from pathlib import Path

from flint import arb, ctx

from stumpcheck.numerics.certified.enclosures.balls import Enclosure
from stumpcheck.numerics.certified.tube.readings import NodeState, node_states, state_at, tube_rows
from stumpcheck.numerics.certified.tube.reading_enclosures import (PRECISION_BITS, calibration_residual, exact_ball,
                                                       interior_error_sup, ols_slope, ols_slope_float,
                                                       residual_without_rho1, scale_ratio)
from stumpcheck.numerics.certified.tube.records import lower_decimal, upper_decimal
from stumpcheck.numerics.precision import InputError

__all__ = ["certified_readings", "claim_reading", "claim_markdown", "interval", "CRITERIA"]

#: the sampled criteria of docs/claims.md, read on the fits over the certified window: (name, figure, lo, hi)
CRITERIA = {
    "C2": (("order of |lambda| in 1/b >= 1.5", "calibration_order", 1.5, math.inf),
           ("the rho1/b term reduces |lambda| >= 5x at the last node", "rho1_gain_end", 5.0, math.inf)),
    "C3": (("|p_raw - 1/4| <= 5e-3", "scale_exponent", 0.245, 0.255),),
    "C4": (("|p + 1/4| <= 5e-3", "error_exponent", -0.255, -0.245),),
}


def interval(x: arb, digits: int = 10) -> list[str]:
    """[lower, upper] of a ball as outward-rounded decimals (still an enclosure)."""
    return [lower_decimal(x, digits), upper_decimal(x, digits)]


def _show(x: arb) -> str:
    return str(Enclosure.from_ball(x, prec_bits=PRECISION_BITS, digits=12))


def _decide(ball: arb, lo: float, hi: float) -> str:
    inside = (math.isinf(lo) or ball >= arb(lo)) and (math.isinf(hi) or ball <= arb(hi))
    outside = (not math.isinf(lo) and ball < arb(lo)) or (not math.isinf(hi) and ball > arb(hi))
    return "met" if inside else "not met" if outside else "undecided"


def _node_figures(node, sup_options: dict) -> dict:
    box = (node.a_lo, node.a_hi, node.b_lo, node.b_hi)
    lam = calibration_residual(box)
    b = exact_ball(node.b_lo).union(exact_ball(node.b_hi))
    sup, search = interior_error_sup(box, **sup_options)
    return {"t": exact_ball(node.t_lo).union(exact_ball(node.t_hi)), "a": exact_ball(node.a_lo).union(
        exact_ball(node.a_hi)), "b": b, "lambda": lam, "lambda_b": lam * b, "without_rho1": residual_without_rho1(box),
        "scale_ratio": scale_ratio(node.t_lo, node.t_hi, node.b_lo, node.b_hi), "sup_e": sup, "sup_e_b": sup * b,
        "search": search}


def _slope(xs, ys) -> dict:
    ball = ols_slope(xs, ys)
    mids = ols_slope_float([float(x.mid()) for x in xs], [float(y.mid()) for y in ys])
    return {"ball": ball, "midpoint_fit": mids}


def _for_all_t(tube, t_start: Fraction, sup_evaluations: int | None) -> tuple[dict, dict]:
    """Bounds of λ, b⁴/(2t) and (with ``sup_evaluations``) sup|e|·b for every t of the whole tube
    [0, certified_to] and of the fit window [t_start, certified_to]: unions over the rows meeting each range
    (a row's box holds z(t) on all its own interval). b⁴/(2t) is infinite at t = 0: it is bounded for
    t ≥ t₁, the end of the first row (every row clipped to t ≥ t₁)."""
    rows = [r for r in tube.rows if r.t_lo <= tube.certified_to]
    t_one = tube.rows[0].t_hi
    every = {"rows": 0, "lambda": None, "scale_ratio": None, "sup_e_b": None}
    window = dict(every)

    def join(bounds, key, value):
        bounds[key] = value if bounds[key] is None else bounds[key].union(value)

    for row in rows:
        box = (row.a_lo, row.a_hi, row.b_lo, row.b_hi)
        parts = [(every, t_one)] + ([(window, t_start)] if row.t_hi >= t_start else [])
        lam = calibration_residual(box)
        sup_b = None
        if sup_evaluations:
            sup, _ = interior_error_sup(box, rel_tol=1e-2, max_evaluations=sup_evaluations)
            sup_b = sup * exact_ball(row.b_lo).union(exact_ball(row.b_hi))
        for bounds, t_from in parts:
            bounds["rows"] += 1
            join(bounds, "lambda", lam)
            t_lo = max(row.t_lo, t_from)
            if 0 < t_lo <= row.t_hi:
                join(bounds, "scale_ratio", scale_ratio(t_lo, row.t_hi, row.b_lo, row.b_hi))
            if sup_b is not None:
                join(bounds, "sup_e_b", sup_b)
    every["scale_ratio_from_t"] = t_one
    return every, window


def _beyond(source, region, region_checked, tube, end: Fraction) -> dict | None:
    """The beyond-T part (:mod:`stumpcheck.claims.population_beyond`) from ``region`` (a region certificate,
    its path, or a flow certificate embedding one), else from a "region" embedded in the tube's own
    flow_certificate.json (then not re-checked here); None without a region."""
    from stumpcheck.claims.population_beyond import beyond_t, region_document

    if region is None:
        path = Path(source) if isinstance(source, (str, Path)) else None
        if path is not None and path.is_dir():
            path = path / "flow_certificate.json"
        if path is None or path.suffix != ".json" or not path.is_file():
            return None
        try:
            region = region_document(path)
        except InputError:
            return None  # no region embedded in the tube's certificate
        region_checked = None
    else:
        region = region_document(region)
    return beyond_t(region, t_entry=end, box=state_at(tube, end), checked=region_checked)


def certified_readings(source, *, t_start=None, per_decade: int = 8, sup_rel_tol: float = 1e-3,
                       sup_evaluations: int = 2000, window_sup_evaluations: int | None = None, region=None,
                       region_checked: str | None = None) -> dict:
    """The certified figures of C2–C4 from a tube (a Tube, its folder, tube.csv or flow_certificate.json;
    see the module doc). ``t_start``: the window's start (default certified_to/10³); the window ends where
    the tube certifies the flow (T if complete); ``window_sup_evaluations``: also bound sup|e|·b for every t
    of the tube, over every row's box, with that budget per row (about a second each). ``region``: a region
    certificate (or its path, or a flow certificate embedding one) for the part beyond T, with
    ``region_checked`` saying how it was verified in this run (else the beyond-T part is not certified);
    without it, a region embedded in the tube's flow_certificate.json is read (not re-checked here).
    JSON-ready: balls as [lower, upper] decimal strings."""
    started = time.perf_counter()
    tube = tube_rows(source)
    end = tube.certified_to
    t_start = end / 1000 if t_start is None else Fraction(t_start)
    if not 0 < t_start < end:
        raise InputError(f"the certified window needs 0 < t_start < {float(end):g} (where the tube stops), "
                         f"got {float(t_start):g}")
    sup_options = {"rel_tol": sup_rel_tol, "max_evaluations": sup_evaluations}
    with ctx.workprec(PRECISION_BITS):
        nodes = node_states(tube, t_from=t_start, per_decade=per_decade)
        if len(nodes) < 3:
            raise InputError(f"fewer than 3 tube nodes in [{float(t_start):g}, {float(end):g}]: no fit")
        figures = [_node_figures(node, sup_options) for node in nodes]
        log_t = [f["t"].log() for f in figures]
        log_b = [f["b"].log() for f in figures]
        fits = {"scale_exponent": _slope(log_t, log_b)}
        if all(f["sup_e"] > 0 for f in figures):
            fits["error_exponent"] = _slope(log_t, [f["sup_e"].log() for f in figures])
        if all(not f["lambda"].contains(0) for f in figures):
            order = _slope(log_b, [abs(f["lambda"]).log() for f in figures])
            fits["calibration_order"] = {"ball": -order["ball"], "midpoint_fit": -order["midpoint_fit"]}
        last = figures[-1]
        # z at t = certified_to itself (T for a complete tube): the hull of the rows containing it
        at_end = _node_figures(NodeState(end, end, *state_at(tube, end)), sup_options)
        if not last["lambda"].contains(0):
            gain = abs(last["without_rho1"]) / abs(last["lambda"])
            fits["rho1_gain_end"] = {"ball": gain, "midpoint_fit": float(gain.mid())}
        every, window = _for_all_t(tube, t_start, window_sup_evaluations)
        coverage = (f"certified on [0, {float(end):g}]" if tube.complete else
                    f"the tube stopped early: certified up to t = {float(end):.6g} only (T = {float(tube.t_max):g})")
        document = {
            "evidence": "certified",
            "tube": {"complete": tube.complete, "t_max": float(tube.t_max), "certified_to": float(end),
                     "certified_to_exact": str(end), "rows": len(tube.rows)},
            "window": [float(t_start), float(end)],
            "coverage": [0.0, float(end)],
            "covers": coverage,
            "node_source": tube.node_source,
            "nodes": [{key: interval(value) for key, value in f.items() if key != "search"} | {"search": f["search"]}
                      for f in figures],
            "fits": {name: {"interval": interval(fit["ball"], 8), "ball": _show(fit["ball"]),
                            "midpoint_fit": fit["midpoint_fit"], "points": len(figures)}
                     for name, fit in fits.items()},
            "for_all_t_in_window": {"rows": window["rows"]} | {
                key: None if window[key] is None else interval(window[key])
                for key in ("lambda", "scale_ratio", "sup_e_b")},
            "for_all_t": {"t_range": [0.0, float(end)], "rows": every["rows"],
                          "scale_ratio_from_t": float(every["scale_ratio_from_t"])} | {
                key: None if every[key] is None else interval(every[key])
                for key in ("lambda", "scale_ratio", "sup_e_b")},
            "end": {key: _show(value) for key, value in last.items() if key != "search"},
            "at_certified_to": {key: _show(value) for key, value in at_end.items() if key != "search"},
        }
        document["verdicts"] = {}
        for claim, criteria in CRITERIA.items():
            document["verdicts"][claim] = [
                {"statement": f"{text}, for the fit over the tube's nodes in [{float(t_start):.6g}, {float(end):.6g}]",
                 "figure": name, "verdict": _decide(fits[name]["ball"], lo, hi) if name in fits else "undecided"}
                for text, name, lo, hi in criteria]
        beyond = _beyond(source, region, region_checked, tube, end)
        if beyond is not None:
            document["beyond_t"] = beyond
    document["seconds"] = round(time.perf_counter() - started, 2)
    return document


def _beyond_clause(beyond: dict, claim: str) -> str:
    """The figure's short beyond-T clause of C2 or C3 ('' for C4 and when there is no entry)."""
    if "bands" not in beyond:
        return ""
    if beyond.get("horizon") == "inf" and beyond["evidence"] == "certified":
        if claim == "C2":
            text = f"{beyond['calibration_all_time']}, so |λ| <= c/b → 0"
        elif claim == "C3":
            last, rate = beyond["bands_all_time"][-1], beyond["rate"][-1]
            text = (f"b⁴/t in [{last['b4_over_t'][0]}, {last['b4_over_t'][1]}] at t = {last['t']:.3g}, "
                    f"{rate['statement']}: b⁴/t → 2 and log b/log t → 1/4")
        else:
            interior = beyond.get("interior_error_all_time")
            if interior is None:
                text = "z(t) in R for all t, but no bound of sup|e|·b beyond T is proved (C4 stays sampled there)"
            else:
                first, last = interior["rows"][0], interior["rows"][-1]
                text = (f"sup|e|·b in [{first['sup_e_b'][0]}, {first['sup_e_b'][1]}] at t = T and in "
                        f"[{last['sup_e_b'][0]}, {last['sup_e_b'][1]}] at t = {last['t']:.3g}, log sup|e|/log t + 1/4 "
                        f"in [{last['log_sup_e_over_log_t_plus_quarter'][0]}, "
                        f"{last['log_sup_e_over_log_t_plus_quarter'][1]}] there: {interior['limits']}")
        return f"; for all t >= T (certified): {text}"
    if claim == "C4":
        return ""
    where = f"t in [{beyond['t_entry']:g}, {beyond['horizon_t_B']:.3g}]"
    if claim == "C2":
        text = f"|w| = b|λ| <= {beyond['region']['c']} for {where}"
    else:
        last = beyond["bands"][-1]
        text = f"b⁴/t in [{last['b4_over_t'][0]}, {last['b4_over_t'][1]}] at t = {last['t']:.3g}"
    return f"; beyond T ({beyond['evidence']}): {text}"


def claim_reading(readings: dict, claim: str) -> tuple[str, dict]:
    """(a figure suffix, the details entry) of claim C2, C3 or C4 from :func:`certified_readings`.

    The ``*_for_all_t`` entries are over the whole tube [0, certified_to] (b⁴/(2t) from t₁ = the first row's
    end); ``*_for_all_t_in_window`` over the fit window."""
    end, fits = readings["end"], readings["fits"]
    every, window = readings["for_all_t"], readings["for_all_t_in_window"]
    lo, hi = readings["window"]
    span = readings["covers"] + f" (fits over [{lo:.3g}, {hi:.3g}])"
    if claim == "C2":
        keys = ("lambda", "lambda_b", "without_rho1")
        text = f"{span}: λ = {end['lambda']}, λ·b = {end['lambda_b']} at t = {end['t']}"
        fit_names = ("calibration_order", "rho1_gain_end")
        names = ("lambda",)
    elif claim == "C3":
        keys = ("b", "scale_ratio")
        text = f"{span}: b⁴/(2t) = {end['scale_ratio']} at the last node, exponent {fits['scale_exponent']['ball']}"
        fit_names = ("scale_exponent",)
        names = ("scale_ratio",)
    elif claim == "C4":
        keys = ("sup_e", "sup_e_b")
        exponent = fits["error_exponent"]["ball"] if "error_exponent" in fits else "undecided (a sup ball holds 0)"
        text = f"{span}: sup|e|·b = {end['sup_e_b']} at the last node, exponent {exponent}"
        if every["sup_e_b"] is not None:
            text += f", sup|e|·b <= {every['sup_e_b'][1]} for every t in [0, {hi:g}]"
        fit_names = ("error_exponent",)
        names = ("sup_e_b",)
    else:
        raise InputError(f"no certified reading for {claim}")
    extra = {}
    for name in names:
        extra[f"{name}_for_all_t"] = every[name]
        extra[f"{name}_for_all_t_in_window"] = window[name]
    verdicts = readings["verdicts"][claim]
    text += "; " + ", ".join(f"{v['figure']} {v['verdict']}" for v in verdicts)
    at_end = readings["at_certified_to"]
    details = {"evidence": "certified", "covers": readings["covers"], "coverage": readings["coverage"],
               "window": readings["window"], "node_source": readings["node_source"],
               "tube": readings["tube"], "end": {k: end[k] for k in ("t", *keys)},
               "at_certified_to": {k: at_end[k] for k in ("t", "a", *keys) if k in at_end},
               "nodes": [{k: n[k] for k in ("t", *keys)} for n in readings["nodes"]],
               "fits": {k: fits[k] for k in fit_names if k in fits}, "verdicts": verdicts,
               "for_all_t": {k: v for k, v in every.items() if k in ("t_range", "rows", "scale_ratio_from_t")},
               **extra}
    if "beyond_t" in readings:
        details["beyond_t"] = readings["beyond_t"]
        text += _beyond_clause(readings["beyond_t"], claim)
    return text, details


def claim_markdown(details: dict) -> str:
    """The certified part of a claim's section in report.md, from :func:`claim_reading`'s details."""
    from stumpcheck.claims.population_beyond import beyond_markdown

    lo, hi = details["window"]
    lines = [f"**Certified part** ({details['covers']}; {details.get('note', '')}). Node states: "
             f"{details.get('node_source', 'intersections of consecutive row boxes')}.", "",
             "| quantity | enclosure at the last node | at t = T |", "|---|---|---|"]
    at_end = details.get("at_certified_to", {})
    lines += [f"| {key} | {value} | {at_end.get(key, '')} |" for key, value in details["end"].items()]
    bounds = [(key[: -len("_for_all_t")], value) for key, value in details.items()
              if key.endswith("_for_all_t") and value is not None]
    if bounds:
        t_one = details.get("for_all_t", {}).get("scale_ratio_from_t")
        lines += ["", f"For every t in [0, {hi:g}] (the union over the tube's "
                  f"{details.get('for_all_t', {}).get('rows', '')} rows"
                  + (f"; b⁴/(2t) for t >= {t_one:.6g}, the first row's end" if t_one is not None else "") + "):"]
        lines += [f"- {name} ∈ [{value[0]}, {value[1]}]" for name, value in bounds]
    lines += ["", f"| fit over the nodes in [{lo:.6g}, {hi:.6g}] | interval | midpoints' fit |", "|---|---|---|"]
    lines += [f"| {name} | [{fit['interval'][0]}, {fit['interval'][1]}] | {fit['midpoint_fit']:.6g} |"
              for name, fit in details["fits"].items()]
    lines += [""] + [f"- {v['statement']}: **{v['verdict']}**" for v in details["verdicts"]]
    lines += ["", "These window verdicts are about the exact flow on [t_start, T] only, and are not the row's: its "
              "PASS/FAIL is the certified statement for every t ≥ T above."]
    beyond = details.get("beyond_t", {})
    if beyond.get("horizon") == "inf" and beyond.get("evidence") == "certified":
        lines += ["", "**For all t ≥ 0** (certified): the tube on [0, T] and the region joined with the tail on "
                  "[T, ∞), below. Still sampled: the control (the fitted exponent over [10⁶, 10¹²] against its "
                  "tolerance, a fit at finite t)."]
    if "beyond_t" in details:
        lines += [""] + beyond_markdown(details["beyond_t"])
    return "\n".join(lines)
