"""What a flow certificate states, derived from what its re-check proves; and the limits checked before any work.

A re-check (:mod:`stumpcheck.numerics.certified.tube.certificate`, format /2; :mod:`stumpcheck.numerics.certified.tube.certificate_v1`,
format /1) proves that the one-head population flow from the disk of the recorded radius about the recorded
(a₀, b₀) lies, on each sub-interval [s_lo, s_hi] of log time, in the row's box. What the file says must be
that and no more; the digest only shows that the file is the one its writer wrote, not that its text is true.
So, besides the bounds:

* no field beyond those the format defines (top level, ``initial`` and each interval): a field
  the re-check does not read, e.g. ``"claim": "b(t) = 42 for all t"``, would pass unread;
* the initial ``radius`` is ≥ 0 (a disk of negative radius is empty: the statement would hold vacuously,
  and the Gronwall chain, started below 0, would let the rows' boxes shrink below the pieces' hulls);
* ``estimator`` must be ``"one-head"``: the re-check's θ-integrals are those of the one-head loss (the
  generated Arb integrand), whatever the field says, so another name would be a claim nobody checked;
* ``statement`` must be the text :func:`flow_statement` derives from ``initial`` (start and radius);
* a row's time range [t_lo, t_hi] must lie within the outward rounding, to ``ROW_DIGITS`` significant
  digits, of its proved range [e^{s_lo} − 1, e^{s_hi} − 1] (and contain that range): no row claims time
  it was not proved for, so consecutive rows overlap by at most the rounding of their common end;
* a complete tube reaches T = ``t_max`` and its last row ends there (within the rounding); an incomplete
  one ends before T (one whose last interval reaches T is refused: ``complete`` would be false), and
  ``valid_to_t`` is where its last row ends, below T; ``complete`` is a boolean and a complete tube has no
  ``stop_reason``. What a passed re-check proves is :func:`proved_statement`: the statement with the time
  range the tube covers ([0, T], or [0, valid_to_t] only for an incomplete tube);
* ``arithmetic`` (format /3: required; /2: optional, checked when present) is a record this version writes
  (:func:`stumpcheck.numerics.certified.tube.arithmetic.record_fault`).

``method`` must be the text of the method the format's re-check checks (:data:`METHOD`, :data:`METHOD_V1`);
``padding`` (a number in [0, 1)), ``seconds``, ``versions`` and ``generated_code`` are informational: they state
nothing about the flow.

Limits (:func:`check_limits`, before the file is parsed further): the recorded and the re-check's digits,
the number of intervals and of a piece's coefficients, and every recorded decimal's length and exponent (the
settings' too: ``"rho_ellipse": "1e999999999"`` would build a billion-digit integer)
(:func:`stumpcheck.numerics.certified.tube.records.check_decimal_size`), so that a hostile file cannot stall a re-check.
"""

from __future__ import annotations

from fractions import Fraction

from flint import arb

from stumpcheck.numerics.certified.certificates.limits import check_int
from stumpcheck.numerics.certified.tube.records import check_record_sizes, exact_fraction, parse_lower, parse_upper
from stumpcheck.numerics.precision import InputError

__all__ = ["ESTIMATOR", "METHOD", "METHOD_V1", "FIELDS", "FIELDS_V1", "ROW_DIGITS", "ROW_ROUNDING", "MIN_TUBE_DPS", "MAX_TUBE_DPS", "MAX_RECHECK_DPS",
           "MAX_INTERVALS", "MAX_COEFFICIENTS", "flow_statement", "proved_statement", "check_limits", "statement_fault",
           "row_time_fault", "ends_fault"]

#: the only estimator a tube is computed and re-checked for
ESTIMATOR = "one-head"
#: what a tube's ``method`` says: the method the re-check of its format checks (format /2 and /3; format /1)
METHOD = ("a-posteriori validation of Chebyshev pieces: defect by interpolation of rigorous point defects plus a "
          "Bernstein-ellipse bound (complex theta-integrals); Euclidean log norm from the Hessian interpolated along "
          "the piece with Cauchy estimates; Gronwall chain with jumps")
METHOD_V1 = ("a-posteriori validation of a cubic Hermite interpolant: node defects and defect derivative by rigorous "
             "theta-integrals, Euclidean logarithmic norm -e^s lambda_min(Hessian), Gronwall")
#: the rows' time ends are written to this many significant digits, rounded outward
ROW_DIGITS = 15
#: the relative rounding of a row's time end: a 15-digit decimal is within 10^-14·|t| of t
ROW_ROUNDING = Fraction(1, 10 ** (ROW_DIGITS - 1))
#: digits of a tube's θ-integrals (``flow --certified --dps``) and of its re-check
MIN_TUBE_DPS, MAX_TUBE_DPS, MAX_RECHECK_DPS = 15, 50, 60
#: intervals of one tube (a tube to 10⁶ has ~70-120; to 10¹² about a thousand more would be needed)
MAX_INTERVALS = 100_000
#: Chebyshev coefficients of one piece (the tube writes degree 24: 25)
MAX_COEFFICIENTS = 64
#: the top-level fields of a format /1 certificate, /2 and /3 add ``settings`` (``region`` and ``for_all_t``: an
#: embedded region, :mod:`stumpcheck.numerics.certified.region.flow_certificate`) and ``arithmetic`` (how the
#: θ-integrals were enclosed, :mod:`stumpcheck.numerics.certified.tube.arithmetic`: optional in /2, required in /3)
FIELDS_V1 = frozenset({"format", "statement", "initial", "t_max", "complete", "valid_to_t", "stop_reason", "method",
                       "estimator", "dps", "padding", "intervals", "seconds", "versions", "generated_code", "digest",
                       "region", "for_all_t"})
FIELDS = FIELDS_V1 | {"settings", "arithmetic"}
_INITIAL_FIELDS = frozenset({"a0", "b0", "radius"})
_INTERVAL_FIELDS = frozenset({"piece", "p", "m", "delta", "g", "rho", "r_start", "mu", "r_end", "r_sup", "rows"})
_INTERVAL_FIELDS_V1 = frozenset({"start", "end", "t", "box", "delta", "rho", "r_start", "mu", "r_end", "r_sup"})
#: the last row of a complete tube ends at T up to this relative excess (2 ulps of log(1 + T), then rounding)
_END_SLACK = Fraction(1, 10**12)


def flow_statement(a0: float, b0: float, radius_text: str, version: int = 2) -> str:
    """The statement of a tube from the disk of radius ``radius_text`` about the float64 (a0, b0)."""
    rows = "the box of each row for t in [t_lo, t_hi]" if version == 2 else "box k for t in [t_lo_k, t_hi_k]"
    return (f"the population flow dz/dt = -grad L(z) from the disk of radius {radius_text} about "
            f"(a, b) = ({float(a0)!r}, {float(b0)!r}) stays in {rows}")


def proved_statement(document: dict) -> str:
    """The statement a passed re-check proves, with the time range it covers: [0, T] for a complete tube; for an
    incomplete one [0, valid_to_t] only, saying that T was not reached (and why the tube stopped)."""
    statement = str(document.get("statement"))
    if document.get("complete") is True:
        return f"{statement}, for t in [0, T = {document.get('t_max')}]"
    reason = str(document.get("stop_reason") or "no reason recorded")[:200]
    return (f"{statement}, for t in [0, {document.get('valid_to_t')}] only: the tube is incomplete ({reason}); "
            f"nothing is proved for t in ({document.get('valid_to_t')}, T = {document.get('t_max')}]")


def check_limits(document: dict, dps: int, *, version: int = 2) -> None:
    """InputError (one line, with the limit) if the certificate or the re-check's ``dps`` exceed a limit."""
    check_int(document.get("dps"), "dps", MIN_TUBE_DPS, MAX_TUBE_DPS)
    check_int(dps, "dps", MIN_TUBE_DPS, MAX_RECHECK_DPS, whose="the re-check's")
    intervals = document.get("intervals")
    if isinstance(intervals, list) and len(intervals) > MAX_INTERVALS:
        raise InputError(f"the certificate has {len(intervals)} intervals, more than the limit {MAX_INTERVALS}")
    for key in ("initial", "t_max", "valid_to_t"):
        check_record_sizes(document.get(key), key)
    if version == 2:
        settings = document.get("settings")
        if isinstance(settings, dict):
            check_int(settings.get("dps"), "settings.dps", MIN_TUBE_DPS, MAX_TUBE_DPS)
        check_record_sizes(settings, "settings")
    for k, item in enumerate(intervals if isinstance(intervals, list) else ()):
        piece = item.get("piece") if isinstance(item, dict) else None
        if isinstance(piece, dict):
            for name in ("a", "b"):
                if isinstance(piece.get(name), list) and len(piece[name]) > MAX_COEFFICIENTS:
                    raise InputError(f"interval {k}: {len(piece[name])} coefficients of {name}, more than the "
                                     f"limit {MAX_COEFFICIENTS}")
        check_record_sizes(item, f"interval {k}")


def statement_fault(document: dict, a0: float, b0: float, *, version: int = 2) -> str | None:
    """The first field whose meaning the re-check does not prove (see the module doc), or None."""
    extra = sorted(set(document) - (FIELDS if version == 2 else FIELDS_V1))
    if extra:
        return (f"the certificate has fields a flow certificate does not define, which the re-check would not "
                f"check: {', '.join(str(k)[:30] for k in extra[:5])}")
    initial = document.get("initial") or {}
    if set(initial) != _INITIAL_FIELDS:
        return f"'initial' must hold exactly {', '.join(sorted(_INITIAL_FIELDS))}"
    fields = _INTERVAL_FIELDS if version == 2 else _INTERVAL_FIELDS_V1
    for k, item in enumerate(document.get("intervals") or ()):
        if isinstance(item, dict) and set(item) != fields:
            return f"interval {k} must hold exactly the fields {', '.join(sorted(fields))}"
    if not exact_fraction(initial.get("radius"), "initial.radius") >= 0:
        return (f"the initial radius {str(initial.get('radius'))[:30]} is negative: a disk of negative radius is "
                "empty, so the statement would say nothing about the flow")
    estimator = document.get("estimator")
    if estimator != ESTIMATOR:
        return (f"the estimator {str(estimator)[:30]!r} is not what the re-check proves: the tube's θ-integrals "
                f"are the {ESTIMATOR} population loss's")
    expected = flow_statement(a0, b0, str(initial.get("radius")), version)
    if document.get("statement") != expected:
        return f"the statement is not the one its start and radius give: expected {expected!r}"
    if document.get("method") != (METHOD if version == 2 else METHOD_V1):
        return "the method text is not the method this format's re-check checks"
    if isinstance(document.get("padding"), bool) or not isinstance(document.get("padding"), (int, float)) or not (
            0 <= document["padding"] < 1):
        return "'padding' (the relative padding of the recorded bounds) must be a number in [0, 1)"
    if not all(isinstance(document.get(key, {}), dict) for key in ("versions", "generated_code")):
        return "'versions' and 'generated_code' must be objects (the provenance of the run)"
    complete = document.get("complete")
    if not isinstance(complete, bool):
        return f"'complete' must be true or false, got {str(complete)[:20]!r}"
    if complete and document.get("stop_reason") not in ("", None):
        return "a complete tube with a stop_reason"
    return None


def _q(x: Fraction) -> arb:
    return arb(x.numerator) / x.denominator


def row_time_fault(t_lo_text, t_hi_text, s_lo: arb, s_hi: arb) -> str | None:
    """None if the row's [t_lo, t_hi] contains [e^{s_lo} − 1, e^{s_hi} − 1] and lies within its outward
    rounding to ``ROW_DIGITS`` digits; else which end is wrong (at the current working precision)."""
    start, end = s_lo.expm1(), s_hi.expm1()
    slack = _q(ROW_ROUNDING)
    if not (parse_upper(t_lo_text) <= start and parse_lower(t_hi_text) >= end):
        return "does not contain its proved time range [e^s_lo - 1, e^s_hi - 1]"
    if not parse_lower(t_lo_text) >= start - abs(start) * slack:
        return (f"starts at t = {str(t_lo_text)[:24]}, before its proved start {start.str(15, radius=False)} by more "
                f"than the rounding of {ROW_DIGITS} digits")
    if not parse_upper(t_hi_text) <= end + abs(end) * slack:
        return (f"ends at t = {str(t_hi_text)[:24]}, after its proved end {end.str(15, radius=False)} by more "
                f"than the rounding of {ROW_DIGITS} digits")
    return None


def ends_fault(document: dict, t_max: Fraction, reached: arb, last_t_hi: str, *, version: int = 2) -> str | None:
    """None if the tube ends where it says: complete ⇔ it reaches T, and then its last row ends at T; an
    incomplete tube's last interval ends before T and its ``valid_to_t`` is its last row's end (formats /2 and
    /3; at most that for /1), below T."""
    t = _q(t_max)
    last = exact_fraction(last_t_hi, "the last row's t_hi")
    if document.get("complete") is True:
        if not reached >= t:
            return "the tube is called complete but its last interval ends before T"
        if last > t_max * (1 + _END_SLACK):
            return f"the last row ends at t = {str(last_t_hi)[:24]}, beyond T = {document.get('t_max')}"
        return None
    if reached >= t:
        return ("the tube is called incomplete but its last interval reaches T: 'complete' is not what the "
                "re-check proves")
    valid_to = exact_fraction(document.get("valid_to_t"), "valid_to_t")
    if valid_to >= t_max:
        return f"valid_to_t = {str(document.get('valid_to_t'))[:24]} of an incomplete tube is not below T"
    if version == 2 and valid_to != last:
        return f"valid_to_t = {str(document.get('valid_to_t'))[:24]} is not where the last row ends ({last_t_hi})"
    if valid_to > last:
        return f"valid_to_t = {str(document.get('valid_to_t'))[:24]} is beyond the last row's end ({last_t_hi})"
    return None
