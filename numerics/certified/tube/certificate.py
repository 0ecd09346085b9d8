"""The certificate of a certified tube (format ``stumpcheck-flow-certificate/3``) and its re-check.

The document records the initial disk (a₀, b₀, radius), T, the method's settings
(:class:`stumpcheck.numerics.certified.tube.piece.Settings`) and per interval k: the Chebyshev piece (s₀, s₁ and the
coefficients of a and b as float64 hex strings), the bounds P (Σ|c_k| of the defect's interpolant), M
(|d| on the Bernstein ellipse), δ, G (|∇L| near z̃ of the ellipse), the a-priori radius ρ, r_start and per
sub-interval μ_i, r_end_i, r_sup_i and the row (t_lo, t_hi, a_lo, a_hi, b_lo, b_hi) of tube.csv, all
decimals rounded outward. ``digest`` is the sha256 of the rest.

:func:`recheck_flow_certificate` trusts none of the recorded bounds. First, cheaply, for every interval:
the pieces start at s = 0 and follow each other (s₁ of one is s₀ of the next), r_start_k ≥ r_end_{k−1} +
the jump between the pieces (r_start_0 ≥ radius + ‖z̃_0(0) − (a₀, b₀)‖), δ ≥ the value its formula
gives from the recorded P and M, each r_end_i ≥ the Gronwall radius from the recorded δ and μ_i, r_sup_i ≥
both ends and < ρ ≤ RHO_MAX, each row's box contains the hull of z̃ over its sub-interval ± r_sup_i, each
row's time interval contains [e^{s_lo} − 1, e^{s_hi} − 1], and the last interval reaches T if the tube
says it is complete. Then, at its own precision, it recomputes every interval's integrals: M and G on
the ellipse (first: the cheaper part), then the point defects and P, and the Hessians along z̃, requiring
them below the recorded M, G, P and the recomputed μ_i (from the recorded G and ρ) below the recorded μ_i.
Before any of that, :func:`stumpcheck.numerics.certified.tube.statement.check_limits` bounds the file (digits, counts,
decimal sizes; InputError), and after the digest (integrity only: a forger recomputes it) the meaning of the
file is derived, not trusted (:mod:`stumpcheck.numerics.certified.tube.statement`): the estimator is the one-head
loss's, the statement is the one the start and radius give, each row's time range lies within the outward
rounding of its proved range, and a complete tube's last row ends at T.
Format /3 is /2 with its ``arithmetic`` record required (a /2 certificate, written before the record
existed, is read as before: the record optional, checked when present). Certificates of format /1 are
re-checked by :mod:`stumpcheck.numerics.certified.tube.certificate_v1`. A passed re-check's ``statement`` is
:func:`~stumpcheck.numerics.certified.tube.statement.proved_statement`: the statement with the time range proved.
"""

from __future__ import annotations

import platform
import time
from importlib import metadata
from pathlib import Path

from flint import arb, ctx

from stumpcheck.numerics.certified.tube import certificate_v1 as v1
from stumpcheck.numerics.certified.certificates.lemma_certificate import write_certificate
from stumpcheck.numerics.certified.certificates.lemma_recheck import RecheckResult
from stumpcheck.numerics.certified.tube.arithmetic import arithmetic_record
from stumpcheck.numerics.certified.tube.build import PADDING, Tube
from stumpcheck.numerics.certified.tube.workers import piece_from_json
from stumpcheck.numerics.certified.tube.analytic import ellipse_defect_bound
from stumpcheck.numerics.certified.tube.chebyshev import segment_hull
from stumpcheck.numerics.certified.tube.defect import interpolant_bound, point_defects
from stumpcheck.numerics.certified.tube.interval_v1 import radius_bound
from stumpcheck.numerics.certified.tube.lognorm import log_norms, point_hessians
from stumpcheck.numerics.certified.tube.records import exact_fraction, parse_lower, parse_upper
from stumpcheck.numerics.certified.tube.piece import RHO_MAX, Settings, delta_from, jump, sub_interval_s
from stumpcheck.numerics.certified.tube.statement import (ESTIMATOR, METHOD, check_limits, ends_fault, flow_statement,
                                                         proved_statement, row_time_fault, statement_fault)
from stumpcheck.numerics.precision import InputError

__all__ = ["FORMAT", "FORMAT_V2", "flow_certificate", "write_flow_certificate", "recheck_flow_certificate",
           "is_flow_certificate", "digest"]

FORMAT = "stumpcheck-flow-certificate/3"
#: the format before the arithmetic record was required (still read)
FORMAT_V2 = "stumpcheck-flow-certificate/2"
digest = v1.digest


def is_flow_certificate(document) -> bool:
    """Whether ``document`` (parsed JSON) is a tube certificate, of any format (/3, /2 or the first, /1)."""
    return isinstance(document, dict) and document.get("format") in (FORMAT, FORMAT_V2, v1.FORMAT)


def _versions() -> dict:
    versions = {"python": platform.python_version()}
    for package in ("stumpcheck", "python-flint", "mpmath", "numpy", "scipy"):
        try:
            versions[package] = metadata.version(package)
        except metadata.PackageNotFoundError:
            versions[package] = "unknown"
    return versions


def flow_certificate(tube: Tube) -> dict:
    """The certificate of ``tube`` (a JSON-ready dict)."""
    from stumpcheck.numerics.certified.proofs.box_certificate import generated_code_identity

    valid_to = tube.intervals[-1].rows[-1][1] if tube.intervals else "0"
    document = {
        "format": FORMAT,
        "statement": flow_statement(tube.a0, tube.b0, tube.r0),
        "initial": {"a0": float(tube.a0).hex(), "b0": float(tube.b0).hex(), "radius": tube.r0},
        "t_max": repr(float(tube.t_max)),
        "complete": bool(tube.complete),
        "valid_to_t": valid_to,
        "stop_reason": tube.stop_reason,
        "method": METHOD,
        "estimator": ESTIMATOR,
        "dps": int(tube.dps),
        "settings": tube.settings.as_json(),
        "padding": PADDING,
        "intervals": [iv.record for iv in tube.intervals],
        "seconds": round(float(tube.seconds), 3),
        "versions": _versions(),
        "generated_code": generated_code_identity(),
        "arithmetic": arithmetic_record(tube.arithmetic, tube.counts),
    }
    document["digest"] = digest(document)
    return document


def write_flow_certificate(document: dict, path) -> Path:
    """Write ``document`` to ``path``, one field and one interval a line; InputError if it cannot be written."""
    return write_certificate(document, path, one_per_line=("intervals",))


def _fail(message, index=None, item=None, started=0.0, bits=0, checked=0):
    return RecheckResult(False, message, leaf_index=index, leaf=item, leaves_checked=checked, prec_bits=bits,
                         seconds=time.perf_counter() - started)


def _parse(document: dict):
    """(a0, b0, radius, t_max, settings, [(piece, item)]), or InputError if malformed."""
    initial, intervals = document.get("initial"), document.get("intervals")
    if not isinstance(initial, dict) or not isinstance(intervals, list):
        raise InputError("the certificate has no 'initial' object or no 'intervals' list")
    try:
        a0, b0 = float.fromhex(initial["a0"]), float.fromhex(initial["b0"])
        settings = Settings.from_json(document["settings"])
        parsed = [(piece_from_json(item["piece"]), item) for item in intervals]
        for _, item in parsed:
            for name in ("p", "m", "delta", "g", "rho", "r_start", "mu", "r_end", "r_sup", "rows"):
                item[name]
            if not (len(item["p"]) == len(item["m"]) == 2 and all(isinstance(row, list) and len(row) == 6
                                                                  for row in item["rows"])):
                raise ValueError("an interval needs two P, two M and rows of six decimals")
            for text in (*item["p"], *item["m"], item["delta"], item["g"], item["rho"], item["r_start"], *item["mu"],
                         *item["r_end"], *item["r_sup"], *(x for row in item["rows"] for x in row)):
                exact_fraction(text)
    except (KeyError, TypeError, ValueError, OverflowError, AttributeError) as exc:
        raise InputError(f"a malformed flow certificate: {str(exc)[:80]}") from None
    radius = exact_fraction(initial.get("radius"), "initial.radius")
    t_max = exact_fraction(document.get("t_max"), "t_max")
    return a0, b0, radius, t_max, settings, parsed


def _cheap_checks(document, a0, b0, radius, t_max, settings, parsed):
    """The first fault (index, message) found without θ-integrals, or (None, None)."""
    if not parsed:
        return None, "the certificate has no intervals"
    if parsed[0][0].s0 != 0:
        return 0, "the first interval does not start at s = 0"
    r_previous = parse_upper(str(radius))
    previous = None
    count = settings.subdivisions
    for k, (piece, item) in enumerate(parsed):
        lengths = {name: len(item[name]) for name in ("mu", "r_end", "r_sup", "rows")}
        if set(lengths.values()) != {count}:
            return k, f"the interval has {lengths} entries, not the {count} sub-intervals of its settings"
        if not piece.s1 > piece.s0:
            return k, "an interval with s_end <= s_start"
        if previous is not None and piece.s0 != previous.s1:
            return k, "a gap: the interval does not start where the previous one ends"
        if not parse_lower(item["r_start"]) >= r_previous + jump(previous, piece, a0, b0):
            return k, "r_start is below the previous radius plus the jump between the pieces"
        if not delta_from(item["p"], item["m"], settings) <= parse_lower(item["delta"]):
            return k, "the defect bound delta is below what the recorded P and M give"
        rho = exact_fraction(item["rho"])
        if not 0 < rho <= RHO_MAX:
            return k, f"the a-priori radius rho is not in (0, {RHO_MAX}]"
        r = parse_upper(item["r_start"])
        delta = parse_upper(item["delta"])
        for i in range(count):
            s_lo, s_hi = sub_interval_s(piece, i, count)
            r_end = radius_bound(r, delta, parse_upper(item["mu"][i]), arb((s_hi - s_lo).upper()))
            if not r_end <= parse_lower(item["r_end"][i]):
                return k, f"the Gronwall radius {r_end.str(5)} exceeds the recorded r_end of sub-interval {i}"
            sup = exact_fraction(item["r_sup"][i])
            if not (sup >= max(exact_fraction(item["r_end"][i]), exact_fraction(item["r_start"] if i == 0
                                                                                  else item["r_end"][i - 1]))
                    and sup < rho):
                return k, "r_sup is below a radius of its sub-interval, or not below rho"
            x_lo = arb(-1) + arb(2 * i) / count
            x_hi = arb(-1) + arb(2 * (i + 1)) / count
            ha, hb = segment_hull(piece, x_lo, x_hi)
            rs = parse_upper(item["r_sup"][i])
            row = item["rows"][i]
            inside = ((ha.lower() - rs) >= parse_upper(row[2]) and (ha.upper() + rs) <= parse_lower(row[3])
                      and (hb.lower() - rs) >= parse_upper(row[4]) and (hb.upper() + rs) <= parse_lower(row[5]))
            if not inside:
                return k, f"the box of sub-interval {i} does not contain the piece's hull widened by r_sup"
            fault = row_time_fault(row[0], row[1], s_lo, s_hi)
            if fault is not None:
                return k, f"the row of sub-interval {i} {fault}"
            r = parse_upper(item["r_end"][i])
        r_previous = r
        previous = piece
    if exact_fraction(parsed[0][1]["rows"][0][0]) != 0:
        return 0, "the tube does not start at t = 0"
    fault = ends_fault(document, t_max, arb(parsed[-1][0].s1).expm1(), parsed[-1][1]["rows"][-1][1])
    if fault is not None:
        return len(parsed) - 1, fault
    return None, None


def _recompute(piece, item, settings: Settings, bits: int, arithmetic: str = "fast", counts=None):
    """None if the interval's integrals (in ``arithmetic``, :mod:`stumpcheck.numerics.certified.tube.arithmetic`)
    confirm the recorded bounds, else the reason. A fast ellipse cell above the recorded M or G is split, then
    enclosed by Arb; fast point defects whose P, or fast Hessians whose μ_i, do not confirm the recorded ones are
    all computed again in Arb (the recorded bounds may come from a tighter Arb run)."""
    from stumpcheck.numerics.certified.tube.arithmetic import Counts
    from stumpcheck.numerics.certified.tube.piece import _q

    widen = 2 * _q(settings.cauchy_radius) + _q(RHO_MAX)
    limits = (parse_lower(item["m"][0]), parse_lower(item["m"][1]), parse_lower(item["g"]))
    m_a, m_b, g = ellipse_defect_bound(piece, settings.rho_ellipse, widen, *settings.cells, arithmetic=arithmetic,
                                       counts=counts, limits=limits)
    if not (m_a <= parse_lower(item["m"][0]) and m_b <= parse_lower(item["m"][1])):
        return f"the ellipse bound M is not confirmed (recomputed {m_a.str(3)}, {m_b.str(3)} > {item['m']})"
    if not g <= parse_lower(item["g"]):
        return f"the gradient bound G is not confirmed (recomputed {g.str(3)} > {item['g']})"

    def confirmed_points(how, tally):
        points = point_defects(piece, settings.defect_points, settings.dps, arithmetic=how, counts=tally)
        for index, name in ((0, "a"), (1, "b")):
            if not interpolant_bound([d[index] for d in points]) <= parse_lower(item["p"][index]):
                return f"the bound P of the defect's interpolant ({name}) is not confirmed"
        return None

    def confirmed_mus(how, tally):
        hessians = point_hessians(piece, settings.hessian_points, settings.dps, arithmetic=how, counts=tally)
        mus = log_norms(piece, hessians, parse_upper(item["g"]), _q(settings.cauchy_radius), settings.rho_ellipse,
                        parse_upper(item["rho"]), settings.subdivisions)
        for i, mu in enumerate(mus):
            if not mu <= parse_lower(item["mu"][i]):
                return f"the logarithmic-norm bound of sub-interval {i} is not confirmed (recomputed {mu.str(5)})"
        return None

    for confirm in (confirmed_points, confirmed_mus):
        # fast integrals that do not confirm a recorded bound: the interval's integrals of that kind again in Arb
        tally = Counts()
        reason = confirm(arithmetic, tally)
        if reason is not None and arithmetic == "fast":
            tally = Counts()
            reason = confirm("arb", tally)
        if counts is not None:
            counts.merge(tally)
        if reason is not None:
            return reason
    return None


def _recompute_job(job):
    """One interval's integrals in a worker process: (piece, item, settings, bits, arithmetic) -> (None or the
    reason, counts of the integrals by arithmetic)."""
    from stumpcheck.numerics.certified.tube.arithmetic import Counts

    piece, item, settings, bits, arithmetic = job
    counts = Counts()
    with ctx.workprec(bits):
        try:
            return _recompute(piece, item, settings, bits, arithmetic, counts), counts.as_json()
        except ArithmeticError as exc:
            return f"a rigorous θ-integral failed: {exc}", counts.as_json()


def _recomputed(parsed, settings: Settings, bits: int, workers: int, arithmetic: str):
    """(k, (reason or None, counts)) for the intervals in order, on
    :func:`stumpcheck.numerics.scheduling.for_workers` (``workers``): the intervals' integrals are independent;
    the first failure in interval order is reported."""
    from stumpcheck.numerics.scheduling import for_workers

    jobs = [(piece, item, settings, bits, arithmetic) for piece, item in parsed]
    with for_workers(workers if len(jobs) > 1 else 1) as scheduler:
        yield from enumerate(scheduler.imap(_recompute_job, ((job,) for job in jobs)))


def _integrals_text(arithmetic: str, counts) -> str:
    """How the re-check's θ-integrals were enclosed, for its message."""
    data = counts.as_json()
    if arithmetic == "arb":
        return "in Arb"
    return ("fast, Arb fallbacks: " + ", ".join(f"{data[k]['arb']}/{sum(data[k].values())} {k}"
                                                 for k in ("gradients", "hessians", "cells"))
            + f", {data['cells']['split']} cells split")


def recheck_flow_certificate(document: dict, dps: int, progress=None, *, workers: int = 1,
                             arithmetic: str = "fast") -> RecheckResult:
    """Re-check a flow certificate at ``dps`` digits (must differ from the certificate's); see the module doc.
    ``workers`` > 1 recomputes the intervals' integrals in that many local processes, unless the command chose a
    scheduler (:func:`stumpcheck.numerics.scheduling.using`; same checks, same order). ``arithmetic`` "fast"
    encloses the integrals with the float64 layer first (Arb where it does not suffice), "arb" with Arb only,
    whatever built the certificate."""
    from stumpcheck.numerics.certified.tube.arithmetic import Counts, check_arithmetic, record_fault

    check_arithmetic(arithmetic)
    started = time.perf_counter()
    if not is_flow_certificate(document):
        raise InputError(f"not a flow certificate: format {str(document.get('format'))[:60]!r}, expected {FORMAT!r}")
    if document.get("format") == v1.FORMAT:
        return v1.recheck_flow_certificate(document, dps, progress)
    if document.get("dps") == dps:
        raise InputError(f"re-check at another precision than the certificate's {dps} digits")
    check_limits(document, dps)
    a0, b0, radius, t_max, settings, parsed = _parse(document)
    if document.get("digest") != digest(document):
        return _fail("the digest does not match the certificate's contents (it was edited)", started=started)
    fault = statement_fault(document, a0, b0) or record_fault(document.get("arithmetic"), len(parsed),
                                                              required=document.get("format") == FORMAT)
    if fault is not None:
        return _fail(fault, started=started)
    settings = settings.at_dps(max(15, int(dps)))
    from stumpcheck.numerics.certified.tube.workers import bound_bits

    bits = bound_bits(settings)
    with ctx.workprec(bits):
        index, message = _cheap_checks(document, a0, b0, radius, t_max, settings, parsed)
        if message is not None:
            return _fail(message, index, parsed[index][1] if index is not None else None, started, bits)
        counts = Counts()
        if arithmetic == "fast" and int(workers) > 1:
            from stumpcheck.numerics.certified.fast.hessian import compile_once

            compile_once()  # a cold cache: compiled here once, then loaded by each worker
        for k, (reason, done) in _recomputed(parsed, settings, bits, int(workers), arithmetic):
            counts.merge(done)
            if reason is not None:
                return _fail(reason, k, parsed[k][1], started, bits, k)
            if progress is not None:
                progress(k + 1, len(parsed))
    what = (f"complete on [0, T = {document.get('t_max')}]" if document.get("complete") is True
            else f"incomplete: proved for t in [0, {document.get('valid_to_t')}] only, not to T = {document.get('t_max')}")
    rows = sum(len(item["rows"]) for _, item in parsed)
    message = (f"{len(parsed)} intervals ({rows} rows) re-verified at {settings.dps} digits ({bits} bits; θ-integrals "
               f"{_integrals_text(arithmetic, counts)}): contiguous "
               f"from t = 0, jumps and Gronwall radii, boxes, rows' times within their proved ranges, defect "
               f"(points and ellipse) and log-norm bounds confirmed; estimator {ESTIMATOR}, statement derived from "
               f"the start; tube {what}")
    return RecheckResult(True, message, leaves_checked=len(parsed), prec_bits=bits,
                         seconds=time.perf_counter() - started, statement=proved_statement(document))
