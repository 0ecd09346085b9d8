"""Certified readings of C2–C4 from the certified tube, on the window [t_start, T] the tube covers.

The claims are asymptotic (docs/claims.md): their sampled criteria are fits over t ∈ [10⁶, 10¹²] of a
float64 flow. The tube (docs/certified_flow.md) proves where the exact flow from (10, 10) is for t ≤ T;
from it this module encloses, rigorously (:mod:`numerics.certified.tube_claims_enclosures`):

* at the tube's nodes nearest to 8 log-spaced times per decade in [t_start, T] (the states of
  :func:`numerics.certified.tube_claims.node_states`), and at T itself (the hull of the rows containing
  it, :func:`~numerics.certified.tube_claims.state_at`: wider): λ = a − calibration_a(b), λ·b, the
  residual without the ρ₁/b term, b⁴/(2t), sup_{θ ∈ [0.05, 0.95]} |e(θ)| and sup|e|·b;
* for every t ∈ [t_start, T] (every row of the tube that meets the window): bounds of λ and of b⁴/(2t),
  and optionally of sup|e|·b (a branch and bound per row);
* the least-squares slopes over the nodes, as intervals (a slope is linear in the data): the order of
  |λ| in 1/b (slope of log|λ| on log b, negated), the exponent of b in t (slope of log b on log t) and the
  exponent of sup|e| in t — the fits of the sampled criteria, over the certified window instead.

A verdict is given only for a statement the enclosures decide, and it says which: the sampled
criterion's inequality *for the fit over the certified window* is ``met`` when the whole interval
satisfies it, ``not met`` when none of it does (on this window: not a refutation of the claim), ``undecided`` otherwise. That is a statement about the
exact flow on [t_start, T], not the asymptotic claim: the claim rows keep their sampled verdicts over
[10⁶, 10¹²] beside it. Default window: the last three decades below T (as C2's sampled fit).
"""

from __future__ import annotations

import math
import time
from fractions import Fraction

from flint import arb, ctx

from numerics.certified.balls import Enclosure
from numerics.certified.tube_claims import NodeState, node_states, state_at, tube_rows
from numerics.certified.tube_claims_enclosures import (PRECISION_BITS, calibration_residual, exact_ball,
                                                       interior_error_sup, ols_slope, ols_slope_float,
                                                       residual_without_rho1, scale_ratio)
from numerics.certified.tube_numbers import lower_decimal, upper_decimal
from numerics.precision import InputError

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


def _window_bounds(tube, t_start: Fraction, sup_evaluations: int | None) -> dict:
    """Bounds of λ, of b⁴/(2t) and (with ``sup_evaluations``) of sup|e|·b for every t ∈ [t_start,
    certified_to]: the union over the rows meeting the window (a row's box holds z(t) on all its interval)."""
    rows = [r for r in tube.rows if r.t_hi >= t_start and r.t_lo <= tube.certified_to]
    bounds = {"lambda": None, "scale_ratio": None, "sup_e_b": None}

    def join(key, value):
        bounds[key] = value if bounds[key] is None else bounds[key].union(value)

    for row in rows:
        box = (row.a_lo, row.a_hi, row.b_lo, row.b_hi)
        join("lambda", calibration_residual(box))
        t_lo = max(row.t_lo, t_start)
        if t_lo > 0:
            join("scale_ratio", scale_ratio(t_lo, row.t_hi, row.b_lo, row.b_hi))
        if sup_evaluations:
            sup, _ = interior_error_sup(box, rel_tol=1e-2, max_evaluations=sup_evaluations)
            join("sup_e_b", sup * exact_ball(row.b_lo).union(exact_ball(row.b_hi)))
    return {"rows": len(rows), **bounds}


def certified_readings(source, *, t_start=None, per_decade: int = 8, sup_rel_tol: float = 1e-3,
                       sup_evaluations: int = 2000, window_sup_evaluations: int | None = None) -> dict:
    """The certified figures of C2–C4 from a tube (a Tube, its folder, tube.csv or flow_certificate.json;
    see the module doc). ``t_start``: the window's start (default certified_to/10³); the window ends where
    the tube certifies the flow (T if complete); ``window_sup_evaluations``: also bound sup|e|·b for every t
    of the window, over every row's box, with that budget per row (about a second each). JSON-ready: balls
    as [lower, upper] decimal strings."""
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
        window = _window_bounds(tube, t_start, window_sup_evaluations)
        document = {
            "evidence": "certified",
            "tube": {"complete": tube.complete, "t_max": float(tube.t_max), "certified_to": float(end),
                     "certified_to_exact": str(end), "rows": len(tube.rows)},
            "window": [float(t_start), float(end)],
            "covers": (f"certified on [{float(t_start):.6g}, {float(end):.6g}]" if tube.complete else
                       f"the tube stopped early: certified up to t = {float(end):.6g} only (T = {float(tube.t_max):g})"),
            "nodes": [{key: interval(value) for key, value in f.items() if key != "search"} | {"search": f["search"]}
                      for f in figures],
            "fits": {name: {"interval": interval(fit["ball"], 8), "ball": _show(fit["ball"]),
                            "midpoint_fit": fit["midpoint_fit"], "points": len(figures)}
                     for name, fit in fits.items()},
            "for_all_t_in_window": {"rows": window["rows"]} | {
                key: None if window[key] is None else interval(window[key])
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
    document["seconds"] = round(time.perf_counter() - started, 2)
    return document


def claim_reading(readings: dict, claim: str) -> tuple[str, dict]:
    """(a figure suffix, the details entry) of claim C2, C3 or C4 from :func:`certified_readings`."""
    end, fits, window = readings["end"], readings["fits"], readings["for_all_t_in_window"]
    lo, hi = readings["window"]
    span = f"certified on [{lo:.3g}, {hi:.3g}]" + ("" if readings["tube"]["complete"] else " (tube stopped early)")
    if claim == "C2":
        keys = ("lambda", "lambda_b", "without_rho1")
        text = f"{span}: λ = {end['lambda']}, λ·b = {end['lambda_b']} at t = {end['t']}"
        fit_names = ("calibration_order", "rho1_gain_end")
        extra = {"lambda_for_all_t": window["lambda"]}
    elif claim == "C3":
        keys = ("b", "scale_ratio")
        text = f"{span}: b⁴/(2t) = {end['scale_ratio']} at the last node, exponent {fits['scale_exponent']['ball']}"
        fit_names = ("scale_exponent",)
        extra = {"scale_ratio_for_all_t": window["scale_ratio"]}
    elif claim == "C4":
        keys = ("sup_e", "sup_e_b")
        exponent = fits["error_exponent"]["ball"] if "error_exponent" in fits else "undecided (a sup ball holds 0)"
        text = f"{span}: sup|e|·b = {end['sup_e_b']} at the last node, exponent {exponent}"
        if window["sup_e_b"] is not None:
            text += f", sup|e|·b <= {window['sup_e_b'][1]} for every t in the window"
        fit_names = ("error_exponent",)
        extra = {"sup_e_b_for_all_t": window["sup_e_b"]}
    else:
        raise InputError(f"no certified reading for {claim}")
    verdicts = readings["verdicts"][claim]
    text += "; " + ", ".join(f"{v['figure']} {v['verdict']}" for v in verdicts)
    details = {"evidence": "certified", "covers": readings["covers"], "window": readings["window"],
               "tube": readings["tube"], "end": {k: end[k] for k in ("t", *keys)},
               "nodes": [{k: n[k] for k in ("t", *keys)} for n in readings["nodes"]],
               "fits": {k: fits[k] for k in fit_names if k in fits}, "verdicts": verdicts, **extra}
    return text, details


def claim_markdown(details: dict) -> str:
    """The certified part of a claim's section in report.md, from :func:`claim_reading`'s details."""
    lines = [f"**Certified part** ({details['covers']}; {details.get('note', '')}):", "",
             "| quantity | enclosure at the last node |", "|---|---|"]
    lines += [f"| {key} | {value} |" for key, value in details["end"].items()]
    lines += ["", "| fit over the window's nodes | interval | midpoints' fit |", "|---|---|---|"]
    lines += [f"| {name} | [{fit['interval'][0]}, {fit['interval'][1]}] | {fit['midpoint_fit']:.6g} |"
              for name, fit in details["fits"].items()]
    lines += [""] + [f"- {v['statement']}: **{v['verdict']}**" for v in details["verdicts"]]
    lines += ["", "These verdicts are about the exact flow on the window only; the row's verdict is the sampled "
              "one over [10⁶, 10¹²]."]
    return "\n".join(lines)
