"""The fields of an interval certificate around its statement and leaves, checked against what the re-check re-proves.

:func:`~stumpcheck.numerics.corpus.interval.certificate.recheck_interval` re-proves the statement from the
leaves; every other field of the file must then say nothing the re-check did not establish:

* :func:`shape_fault`: no field the format does not define, at the top level and in ``statement``,
  ``corpus``, ``proof``, ``end`` and each leaf (a ``note`` saying "the entry phase is certified" would
  otherwise ride along under a PASS); every number within the limits of
  :mod:`stumpcheck.numerics.certified.certificates.limits` (``eta = "1e999999999"`` is refused by its text,
  before a billion-digit integer is built); b in [:data:`MIN_B`, :data:`MAX_B`] and at most :data:`MAX_NODES`
  centre nodes, so that the tiling check's column loop is bounded;
* :func:`arithmetic_fault`: ``arithmetic`` is this version's record (:data:`ARITHMETIC`): every rule the same
  text, the fast layer's environment (``libc``, ``numba``, ``machine``) text; deleted or rewritten, it is refused;
  its ``pruning`` record (required) is :func:`pruning_fault`'s: the record
  :func:`~stumpcheck.numerics.certified.fast.corpus_sorted.pruning_record` writes for its cut, the cut within
  ``CUT_RANGE`` and the bound above e^{-cut/(1+gamma_2)} in Arb (an edited bound or rule is refused, digest or not);
* :func:`corpus_fault`: ``m`` and ``n`` are the corpus's shape, ``seed`` and ``prior`` the corpus file's own
  metadata (when the caller gives it); ``file`` is informational text (this version writes the file's name only:
  a path would leak the writer's folders; an older certificate's path is still read);
* :func:`eta_rule_fault`: ``eta_rule`` is ``given: <eta>`` with the statement's η, or the half-curvature rule,
  possibly halved k ≤ 4 times by the start search (:func:`~stumpcheck.numerics.corpus.interval.start.halved_rule`),
  whose η is recomputed from the corpus and the recorded centre
  (:func:`~stumpcheck.numerics.corpus.interval.centre.eta_half_curvature`, divided by 2^k);
* ``start_search`` (optional: written when b_start or η was searched) is re-derived trial by trial
  (:func:`~stumpcheck.numerics.corpus.interval.start.start_search_fault`);
* :func:`proof_fault`: ``leaf_count``, ``columns`` and ``smallest_margins`` are the leaves', and
  ``max_depth`` (an int in [1, 20]) is at least the depth of every leaf (halvings of its column's start box);
* ``statement.text`` and ``end`` are derived by the re-check itself
  (:func:`~stumpcheck.numerics.corpus.interval.certificate.statement_text`,
  :func:`~stumpcheck.numerics.corpus.interval.certificate.end_fault`).

``seconds`` and ``versions`` are informational (how long, with what): an object of numbers, and an object.
"""

from __future__ import annotations

from fractions import Fraction

from stumpcheck.numerics.certified.certificates.limits import check_number_text
from stumpcheck.numerics.precision import InputError

__all__ = ["FIELDS", "STATEMENT_FIELDS", "LEAF_FIELDS", "MIN_B", "MAX_B", "MAX_NODES", "ENVIRONMENT", "exact",
           "shape_fault", "arithmetic_fault", "pruning_fault", "corpus_fault", "eta_rule_fault", "proof_fault",
           "leaf_depth"]

FIELDS = frozenset({"format", "statement", "corpus", "proof", "end", "eta_rule", "arithmetic", "seconds", "versions",
                    "start_search", "leaves", "digest"})
STATEMENT_FIELDS = frozenset({"b_start", "b_end", "eta", "start", "steps", "centre", "band", "text"})
_CENTRE_FIELDS = frozenset({"nodes", "rule"})
_BAND_FIELDS = frozenset({"c_minus", "c_plus"})
_CORPUS_FIELDS = frozenset({"sha256", "m", "n", "seed", "prior", "file"})
_PROOF_FIELDS = frozenset({"leaf_count", "columns", "max_depth", "smallest_margins"})
_MARGINS = ("drift", "inward", "gd")
LEAF_FIELDS = frozenset({"b", "mu", "box_enclosure", "centre_enclosure", *_MARGINS})
#: the fields of ``end``, by its status (what :meth:`IntervalRun.run` and ``examine_failure`` write)
_END_FIELDS = {"b_max reached": {"status", "b_max"}, "stopped": {"status", "reason", "b"},
               "undecided": {"status", "b", "mu", "margins"},
               "false": {"status", "b", "mu", "margins", "point", "obligation", "margin_upper", "arb_confirmed"}}
#: the b range a certificate may state (the ``interval`` command's), and the most centre nodes
MIN_B, MAX_B = Fraction(1), Fraction(2 ** 16)
MAX_NODES = 100_000
#: the fast layer's record of the machine it ran on (text, not a rule)
ENVIRONMENT = ("libc", "numba", "machine")
CENTRE_RULE = "A is linear between consecutive nodes and continues with the last slope"


def exact(text, what: str) -> Fraction:
    """An exact rational from a string, within the number limits (checked on the text first); InputError."""
    if not isinstance(text, str):
        raise InputError(f"{what} must be an exact rational written as a string")
    check_number_text(text, what)
    try:
        return Fraction(text.strip())
    except (ValueError, ZeroDivisionError):
        raise InputError(f"{what} is not an exact rational: {text[:40]!r}") from None


def _extra(record, allowed, where: str) -> str | None:
    if not isinstance(record, dict):
        return f"{where} must be an object"
    extra = sorted(str(k)[:30] for k in set(record) - set(allowed))
    if extra:
        return (f"{where} has fields an interval certificate does not define, which the re-check would not "
                f"check: {', '.join(extra[:5])}")
    return None


def shape_fault(document: dict) -> str | None:
    """The first field the format does not define (or of the wrong kind), or None."""
    st = document.get("statement")
    faults = [_extra(document, FIELDS, "the certificate"), _extra(st, STATEMENT_FIELDS, "the statement")]
    if isinstance(st, dict):
        faults += [_extra(st.get("centre"), _CENTRE_FIELDS, "the statement's centre"),
                   _extra(st.get("band"), _BAND_FIELDS, "the statement's band")]
    faults += [_extra(document.get("corpus"), _CORPUS_FIELDS, "corpus"),
               _extra(document.get("proof"), _PROOF_FIELDS, "proof")]
    end = document.get("end")
    status = end.get("status") if isinstance(end, dict) else None
    if status not in _END_FIELDS:
        faults.append(f"end must be an object with a status among {', '.join(_END_FIELDS)}")
    elif set(end) != _END_FIELDS[status]:
        faults.append(f"an end of status {status!r} holds exactly {', '.join(sorted(_END_FIELDS[status]))}")
    leaves = document.get("leaves")
    for k, leaf in enumerate(leaves if isinstance(leaves, list) else ()):
        if not isinstance(leaf, dict) or set(leaf) != LEAF_FIELDS:
            faults.append(f"leaf {k} must hold exactly the fields {', '.join(sorted(LEAF_FIELDS))}")
            break
    seconds = document.get("seconds")
    if not (isinstance(seconds, dict) and all(isinstance(v, (int, float)) and not isinstance(v, bool)
                                              for v in seconds.values())):
        faults.append("seconds must be an object of numbers")
    if not isinstance(document.get("versions"), dict):
        faults.append("versions must be an object (the provenance of the run)")
    if isinstance(st, dict) and st.get("centre", {}).get("rule") != CENTRE_RULE:
        faults.append("the centre's rule is not the one the re-check reads the nodes by")
    return next((f for f in faults if f is not None), None)


def arithmetic_fault(recorded, current: dict) -> str | None:
    """Why the certificate's ``arithmetic`` is not ``current`` (this version's record), or None."""
    if not isinstance(recorded, dict):
        return "the certificate has no arithmetic record (what its proof rests on): it is required"
    if set(recorded) != set(current):
        return f"the arithmetic record must hold exactly {', '.join(sorted(current))}"
    for key, value in current.items():
        if key == "fast_layer":
            got = recorded[key]
            if not isinstance(got, dict) or set(got) != set(value):
                return "the arithmetic record's fast_layer does not hold the fast layer's assumptions"
            for name, rule in value.items():
                if name in ENVIRONMENT:
                    if not isinstance(got[name], str):
                        return f"the arithmetic record's fast_layer.{name} must be text"
                elif got[name] != rule:
                    return (f"the arithmetic record's fast_layer.{name} is not the fast layer's assumption "
                            "(edited, or another version's)")
        elif key == "pruning":
            fault = pruning_fault(recorded[key])[1]
            if fault:
                return fault
        elif recorded[key] != value:
            return f"the arithmetic record's {key} is not what this version's proof rests on"
    return None


def pruning_fault(record) -> tuple:
    """(cut, None) for a valid pruning record, (None, why) otherwise. Valid: exactly the record
    :func:`~stumpcheck.numerics.certified.fast.corpus_sorted.pruning_record` writes for its cut (float.hex
    strings), the cut within ``CUT_RANGE``, and the bound above e^{-cut/(1+gamma_2)} in Arb at 128 bits
    (re-derived here, not taken from the prover)."""
    from flint import arb, ctx, fmpq

    from stumpcheck.numerics.certified.fast.corpus_sorted import CUT_RANGE, pruning_record

    if not isinstance(record, dict):
        return None, "malformed pruning record (cut and bound must be float.hex strings)"
    try:
        cut, bound = float.fromhex(record["cut"]), float.fromhex(record["bound"])
    except (KeyError, TypeError, ValueError, OverflowError):
        return None, "malformed pruning record (cut and bound must be float.hex strings)"
    if not CUT_RANGE[0] <= cut <= CUT_RANGE[1]:
        return None, f"the pruning cut {cut} lies outside [{CUT_RANGE[0]}, {CUT_RANGE[1]}]"
    if record != pruning_record(cut):
        return None, "the pruning record is not the one its cut gives (bound or rule edited)"
    gamma2 = Fraction(2, 2 ** 53) / (1 - Fraction(2, 2 ** 53))
    exponent = Fraction(cut) / (1 + gamma2)
    with ctx.workprec(128):
        if not arb(bound) > (-arb(fmpq(exponent.numerator, exponent.denominator))).exp():
            return None, "the pruning bound is not above exp(-cut/(1 + gamma_2)) in Arb"
    return cut, None


def corpus_fault(record: dict, shape: tuple, metadata: dict | None) -> str | None:
    """Why the ``corpus`` record disagrees with the corpus given (``metadata``: its seed and prior), or None."""
    if (record.get("m"), record.get("n")) != tuple(shape):
        return f"the corpus record's m, n are not the corpus's shape {shape[0]} x {shape[1]}"
    name = record.get("file")
    if not (isinstance(name, str) and name and len(name) <= 4096):
        return "the corpus record's file must be the corpus file's name (text)"
    if metadata is not None:
        if record.get("seed") != metadata.get("seed"):
            return (f"the corpus record's seed {str(record.get('seed'))[:20]} is not the corpus file's "
                    f"({metadata.get('seed')})")
        prior = metadata.get("prior")
        if "prior" in record and record["prior"] != (None if prior is None else [float(v) for v in prior]):
            return f"the corpus record's prior is not the corpus file's ({prior})"
    return None


def eta_rule_fault(rule, eta: Fraction, eta_text: str, derive) -> str | None:
    """Why ``eta_rule`` does not give the statement's η, or None; ``derive()`` recomputes the half-curvature η
    (None if the corpus has no positive curvature there). The half-curvature rule halved k times (the start
    search's, :func:`~stumpcheck.numerics.corpus.interval.start.halved_rule`) gives that η / 2^k."""
    from stumpcheck.numerics.corpus.interval.centre import HALF_CURVATURE_RULE
    from stumpcheck.numerics.corpus.interval.start import halvings_of_rule

    if rule == f"given: {eta_text}":
        return None
    k = halvings_of_rule(rule, HALF_CURVATURE_RULE) if isinstance(rule, str) else None
    if k is None:
        return f"the eta_rule is neither 'given: {eta_text}' nor the half-curvature rule"
    base = derive()
    if base is None:
        return "the half-curvature rule finds no positive curvature on this corpus and centre: it gives no eta"
    derived = base / 2 ** k
    if derived != eta:
        return f"the half-curvature rule gives eta = {derived} on this corpus and centre, not the statement's {eta_text}"
    return None


def _halvings(ratio: Fraction) -> int:
    """The least k with 2^k >= ratio (ratio > 0)."""
    k = 0
    while Fraction(2) ** k < ratio:
        k += 1
    return k


def leaf_depth(box, column_width: Fraction, band) -> int:
    """Halvings of its column's start box (height ≤ 1/8 of μ) a leaf's b-width and μ-height take, at least."""
    from stumpcheck.numerics.corpus.interval.prover import _start_boxes

    b0, b1, mu0, mu1 = box
    height = _start_boxes(Fraction(0), Fraction(1), band)[0]
    start_height = height[3] - height[2]
    return _halvings(column_width / (b1 - b0)) + _halvings(start_height / (mu1 - mu0))


def proof_fault(proof: dict, leaves: list, boxes: list, column_count: int, widths: list, band) -> str | None:
    """Why ``proof`` is not what the leaves give (checked after every leaf re-proved), or None."""
    if proof.get("leaf_count") != len(leaves):
        return f"the proof's leaf_count {str(proof.get('leaf_count'))[:20]} is not the {len(leaves)} leaves"
    if proof.get("columns") != column_count:
        return f"the proof's columns {str(proof.get('columns'))[:20]} is not the {column_count} columns of S"
    depth = proof.get("max_depth")
    if isinstance(depth, bool) or not isinstance(depth, int) or not 1 <= depth <= 20:
        return "the proof's max_depth must be an int in [1, 20]"
    deepest = max((leaf_depth(box, w, band) for box, w in zip(boxes, widths)), default=0)
    if deepest > depth:
        return f"a leaf lies {deepest} halvings deep, more than the proof's max_depth {depth}"
    smallest = {}
    for key in _MARGINS:
        values = [Fraction(lf[key]) for lf in leaves if lf[key] is not None]
        smallest[key] = float(min(values)) if values else None
    if proof.get("smallest_margins") != smallest:
        return "the proof's smallest_margins are not the leaves' smallest margins"
    return None
