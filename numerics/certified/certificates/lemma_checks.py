"""The checks of a lemma certificate's fields around its re-proof: limits first, then what its fields must agree on.

:func:`check_fields` runs before any work (InputError, one line: the file is not a certificate this re-check
reads): the types and limits of every field a re-check uses (:mod:`stumpcheck.numerics.certified.certificates.limits`).

The others return why the certificate says more than its proof, or None (a failed check, exit 1):

* :func:`consistency_fault`: no field the format does not define; status ``"proved"`` with no undecided leaf,
  no failure and undecided volume 0;
* :func:`work_fault` (after the tiling, so that a dropped leaf is reported as a gap): no notes,
  ``max_depth_reached`` the deepest leaf's and ``boxes`` the size of a bisection with these leaves; ``prec_bits`` is the working precision the prover derives from ``dps``
  and the domain (:func:`stumpcheck.numerics.certified.enclosures.balls.working_bits`); the margin's coordinates are the domain's;
* :func:`identity_fault`: a margin that is the atom margin of a registered identity has its ``identity``
  record, the record re-derives (:func:`stumpcheck.theory.margin_identities.recheck_identity`), the statement is strict
  and the estimator the identity's (one-head: the closed form of e it is derived from);
* :func:`margin_fault`: a θ-integral margin has a θ-integral in it;
* :func:`form_fault`: each leaf was enclosed in a form the margin has (``taylor-n`` only with Taylor order n).

:func:`unconfirmed_end` (per leaf, after its re-enclosure): the recorded [lower, upper] must be confirmed by the
re-check's own enclosure of the leaf or by the prover's, recomputed at the certificate's precision (halving the
leaf up to :data:`CONFIRM_DEPTH` times where both are wider), so a narrowed record is rejected, not only one that
excludes the margin's value at a point.

:func:`check_taylor_order` refuses, before any leaf is enclosed, a Taylor order the generated code cannot
support for the margin (it would need a cumulant κ_k the code does not have), naming the orders it supports.
"""

from __future__ import annotations

from stumpcheck.numerics.certified.certificates.limits import (MAX_DEPTH, MAX_LEAVES, MAX_PREC_BITS, MAX_THETA_PIECES,
                                               check_dps, check_int, check_number_text, check_srepr)
from stumpcheck.numerics.precision import InputError

__all__ = ["FIELDS", "check_fields", "consistency_fault", "work_fault", "arithmetic_fault", "identity_fault", "margin_fault", "form_fault",
           "check_taylor_order", "unconfirmed_end", "CONFIRM_DEPTH"]

#: the fields of format /2 (``identity`` only with an identity)
FIELDS = frozenset({"format", "statement", "author_statement", "margin", "domain", "strict", "status", "leaves",
                    "undecided", "undecided_fraction", "failure", "boxes", "max_depth_reached", "notes", "dps",
                    "prec_bits", "seconds", "versions", "generated_code", "margin_code", "identity", "arithmetic",
                    "digest"})
#: the fast layer's record of the machine it ran on (text, not a rule)
ENVIRONMENT = ("libc", "numba", "machine")
#: what a leaf may record as the arithmetic that enclosed it (float64 θ-integrals, or Arb)
LEAF_ARITHMETICS = ("fast", "arb")
#: the fields of a certificate's ``arithmetic`` record
ARITHMETIC_FIELDS = frozenset({"fast_leaves", "arb_leaves", "fallbacks", "method", "assumptions"})
_MARGIN_FIELDS = frozenset({"source", "coordinates", "estimator", "theta_integral", "name", "theta_pieces",
                            "taylor_order"})


def _leaf_fields(leaf, where: str) -> None:
    if not isinstance(leaf, dict):
        raise InputError(f"{where} is not an object")
    box = leaf.get("box")
    if not isinstance(box, dict) or not box or len(box) > 8:
        raise InputError(f"{where}: a box must be a non-empty object {{variable: [lo, hi]}}")
    for name, ends in box.items():
        if not isinstance(ends, list) or len(ends) != 2:
            raise InputError(f"{where}: {str(name)[:20]} must be [lo, hi]")
        check_number_text(ends[0], f"{where} {str(name)[:20]} lo")
        check_number_text(ends[1], f"{where} {str(name)[:20]} hi")
    for key in ("lower", "upper"):
        value = leaf.get(key)
        if not (isinstance(value, str) and value.strip().lstrip("+-") in ("inf", "Infinity")):
            check_number_text(value, f"{where} {key}")
    if "depth" in leaf:
        check_int(leaf["depth"], f"{where} depth", 0, MAX_DEPTH)
    if "form" in leaf and not isinstance(leaf["form"], str):
        raise InputError(f"{where}: its form must be a string")
    if "arithmetic" in leaf and leaf["arithmetic"] not in LEAF_ARITHMETICS:
        raise InputError(f"{where}: its arithmetic must be one of {', '.join(LEAF_ARITHMETICS)}")


def check_fields(document: dict) -> None:
    """The types and limits of every field a re-check uses (see the module doc); InputError naming the limit."""
    check_dps(document.get("dps"))
    check_int(document.get("prec_bits"), "prec_bits", 16, MAX_PREC_BITS)
    leaves = document.get("leaves")
    if not isinstance(leaves, list):
        raise InputError("the certificate's 'leaves' is missing or not a list")
    if len(leaves) > MAX_LEAVES:
        raise InputError(f"the certificate has {len(leaves)} leaves, more than the limit {MAX_LEAVES}")
    if not isinstance(document.get("strict"), bool):
        raise InputError("the certificate's 'strict' is missing or not a bool")
    domain = document.get("domain")
    variables = domain.get("variables") if isinstance(domain, dict) else None
    if not isinstance(variables, dict) or not variables or len(variables) > 8:
        raise InputError("the certificate's domain needs 'variables', an object {variable: [lo, hi]}")
    for name, ends in variables.items():
        if not isinstance(ends, list) or len(ends) != 2:
            raise InputError(f"the domain's {str(name)[:20]} must be [lo, hi]")
        for end in ends:
            check_number_text(end, f"the domain's {str(name)[:20]}")
    margin = document.get("margin")
    if not isinstance(margin, dict):
        raise InputError("the certificate has no margin object")
    from stumpcheck.numerics.certified.enclosures.balls import ESTIMATORS
    from stumpcheck.numerics.certified.proofs.domains import COORDINATES

    if margin.get("estimator", "one-head") not in ESTIMATORS:
        raise InputError(f"the margin's estimator {str(margin.get('estimator'))[:40]!r} is not one of "
                         f"{', '.join(ESTIMATORS)}")
    if margin.get("coordinates") not in COORDINATES:
        raise InputError(f"the margin's coordinates {str(margin.get('coordinates'))[:40]!r} are not one of "
                         f"{', '.join(COORDINATES)}")
    source = margin.get("source")
    if isinstance(source, dict) and "sympy_srepr" in source:
        from stumpcheck.theory.margin_quantities import RELATIONS

        check_srepr(source["sympy_srepr"], {f.__name__ for f in RELATIONS})
    if not isinstance(margin.get("theta_integral", False), bool):
        raise InputError("the margin's theta_integral must be a bool")
    if "theta_pieces" in margin:
        check_int(margin["theta_pieces"], "margin's theta_pieces", 1, MAX_THETA_PIECES)
    if "taylor_order" in margin:
        check_int(margin["taylor_order"], "margin's taylor_order", 1, 4)
    for index, leaf in enumerate(leaves):
        _leaf_fields(leaf, f"leaf {index}")
    identity = document.get("identity")
    if isinstance(identity, dict):
        for part in ("stated_margin", "rewritten_margin"):
            record = identity.get(part)
            if isinstance(record, dict) and "srepr" in record:
                check_srepr(record["srepr"])


def arithmetic_fault(document: dict) -> str | None:
    """Why the ``arithmetic`` record (fast and Arb leaves, fallbacks, the fast layer's assumptions) disagrees with
    the leaves, or None. Without the record no leaf may name an arithmetic (a proof in Arb alone); with it every
    leaf names one, the counts are the leaves', and its method and assumptions are this version's fast layer's
    (each rule the same text; the machine's ``libc``, ``numba`` and ``machine`` text). Informational for the
    verdict (a re-check encloses every leaf again), but an edited record is a false statement of what the proof
    rests on."""
    record = document.get("arithmetic")
    leaves = document.get("leaves") or []
    named = [leaf.get("arithmetic") for leaf in leaves if isinstance(leaf, dict)]
    if record is None:
        return None if all(a is None for a in named) else "leaves name an arithmetic but the certificate has no arithmetic record"
    if not isinstance(record, dict) or set(record) != ARITHMETIC_FIELDS:
        return f"the arithmetic record must have exactly the fields {', '.join(sorted(ARITHMETIC_FIELDS))}"
    if any(a is None for a in named):
        return "the certificate has an arithmetic record but a leaf names no arithmetic"
    counts = {"fast_leaves": named.count("fast"), "arb_leaves": named.count("arb")}
    for key, count in counts.items():
        if record.get(key) != count:
            return f"the arithmetic record's {key} is {str(record.get(key))[:20]}, but {count} leaves say so"
    fallbacks = record.get("fallbacks")
    if isinstance(fallbacks, bool) or not isinstance(fallbacks, int) or fallbacks < 0:
        return "the arithmetic record's fallbacks must be an int >= 0"
    if not isinstance(record.get("assumptions"), dict) or not isinstance(record.get("method"), str):
        return "the arithmetic record needs 'method' (text) and 'assumptions' (an object)"
    from stumpcheck.numerics.certified.certificates.lemma_certificate import FAST_METHOD
    from stumpcheck.numerics.certified.fast.rounding import ASSUMPTIONS

    if record["method"] != FAST_METHOD:
        return "the arithmetic record's method is not the fast layer's (edited, or another version's)"
    assumptions = record["assumptions"]
    if set(assumptions) != set(ASSUMPTIONS) or any(
            (not isinstance(assumptions[k], str)) if k in ENVIRONMENT else assumptions[k] != v
            for k, v in ASSUMPTIONS.items()):
        return "the arithmetic record's assumptions are not the fast layer's (edited, or another version's)"
    return None


def consistency_fault(document: dict, *, v1: bool) -> str | None:
    """Why the certificate's fields disagree with one another or with a proof, or None (see the module doc)."""
    from stumpcheck.numerics.certified.enclosures.balls import working_bits
    from stumpcheck.numerics.certified.certificates.limits import bounded_exact

    if not v1:
        extra = sorted(set(document) - FIELDS)
        if extra:
            return (f"the certificate has fields a lemma certificate does not define, which the re-check would "
                    f"not check: {', '.join(str(k)[:30] for k in extra[:5])}")
        extra = sorted(set(document["margin"]) - _MARGIN_FIELDS)
        if extra:
            return f"the margin has fields the format does not define: {', '.join(str(k)[:30] for k in extra[:5])}"
    status = document.get("status")
    if status != "proved":
        return f"not a proof: the certificate's status is {str(status)[:20]!r}"
    if document.get("undecided") or document.get("failure") is not None or document.get("undecided_fraction"):
        return "the status says proved, but the certificate records undecided leaves or a failure"
    variables = document["domain"]["variables"]
    if "b" in variables:
        ends = {name: [bounded_exact(x, name) for x in pair] for name, pair in variables.items()}
        magnitude = max(float(max(abs(lo), abs(hi))) for lo, hi in ends.values())
        bits = working_bits(document["dps"], magnitude, 2 * float(ends["b"][1]))
        if document["prec_bits"] != bits:
            return (f"the recorded prec_bits {document['prec_bits']} is not the working precision of "
                    f"{document['dps']} digits on this domain ({bits} bits)")
    margin_coordinates = document["margin"].get("coordinates")
    if margin_coordinates != document["domain"].get("coordinates", "abtheta"):
        return (f"the margin is written in {margin_coordinates} coordinates, the domain in "
                f"{str(document['domain'].get('coordinates'))[:20]}")
    if document["margin"].get("taylor_order", 1) > 1 and not document["margin"].get("theta_integral"):
        return "the margin records a Taylor order but is not a θ-integral margin"
    return None


def work_fault(document: dict) -> str | None:
    """Why the prover's records of a proved certificate disagree with its leaves, or None: no ``notes`` (the
    prover writes one only when it stops with boxes pending), ``max_depth_reached`` the deepest leaf's depth,
    and ``boxes`` a count of a bisection tree with these leaves (each split box has at least two parts, so
    leaves <= boxes <= 2·leaves − 1)."""
    leaves = document["leaves"]
    if document.get("notes") not in ([], None):
        return "a proved certificate records notes, which the prover writes only when it stops with boxes pending"
    depths = [leaf.get("depth") for leaf in leaves if isinstance(leaf, dict) and "depth" in leaf]
    if depths and document.get("max_depth_reached") != max(depths):
        return (f"max_depth_reached {str(document.get('max_depth_reached'))[:20]} is not the deepest leaf's depth "
                f"{max(depths)}")
    boxes = document.get("boxes")
    if isinstance(boxes, bool) or not isinstance(boxes, int) or not len(leaves) <= boxes <= max(1, 2 * len(leaves) - 1):
        return (f"boxes {str(boxes)[:20]} is not the size of a bisection with {len(leaves)} leaves (between "
                f"{len(leaves)} and {2 * len(leaves) - 1})")
    return None


def identity_fault(document: dict, margin, parse) -> tuple[str | None, bool]:
    """(why the identity step fails, or None; whether the certificate has one). See the module doc."""
    from stumpcheck.numerics.certified.certificates.lemma_statement import required_identity
    from stumpcheck.theory.margin_identities import recheck_identity

    srepr = (document["margin"].get("source") or {}).get("sympy_srepr")
    expression = margin.expr if isinstance(srepr, str) else None
    needed = required_identity(expression)
    identity = document.get("identity")
    if identity is None:
        if needed is not None:
            return (f"the margin is the atom margin of the {needed} identity, which proves the lemma only with "
                    f"the identity, and the certificate has no identity record"), False
        return None, False
    if not isinstance(srepr, str):
        return "an identity needs a SymPy margin", True
    if document.get("strict") is not True:
        return "an identity certificate must be strict (its atoms must be > 0)", True
    if document["margin"].get("estimator", "one-head") != "one-head":
        return "the identity is derived from the one-head closed form of e; the margin's estimator is not one-head", True
    fault = recheck_identity(identity, srepr, parse)
    return (None if fault is None else f"the symbolic identity does not re-derive: {fault}"), True


def margin_fault(margin) -> str | None:
    """A θ-integral margin without a θ-integral in it (its Taylor form would be empty), or None."""
    if getattr(margin, "theta_integral", False) and margin.expr is not None:
        from stumpcheck.theory.margin_quantities import INTEGRALS

        if not set(INTEGRALS) & margin.expr.free_symbols:
            return f"the margin is marked θ-integral but has no θ-integral in it ({', '.join(map(str, INTEGRALS))})"
    return None


def form_fault(document: dict) -> str | None:
    """A leaf recorded in a form the margin does not have (e.g. ``taylor-3`` with Taylor order 1), or None."""
    order = document["margin"].get("taylor_order", 1)
    forms = {"direct", "mean-value"} | ({f"taylor-{order}"} if order > 1 else set())
    for index, leaf in enumerate(document["leaves"]):
        form = leaf.get("form", "direct")
        if form not in forms:
            return (f"leaf {index} was enclosed in the {form[:20]} form, which this margin (Taylor order {order}) "
                    f"does not have: the proof needs that step")
    return None


def check_taylor_order(margin, variables) -> None:
    """InputError if the θ-integral ``margin``'s Taylor order needs cumulants the generated code lacks."""
    if not getattr(margin, "theta_integral", False) or margin.taylor_order <= 1:
        return
    from stumpcheck.theory.margin_taylor import taylor_form

    names = tuple(sorted(variables))
    free = [n for n in names if variables[n][0] < variables[n][1]]
    along = free[0] if len(free) == 1 else ("b" if "b" in names else names[0])

    def supported(order):
        try:
            taylor_form(margin.expr, margin.coordinates, names, along, order, margin.estimator)
        except ValueError:
            return False
        return True

    if supported(margin.taylor_order):
        return
    orders = [str(k) for k in range(1, margin.taylor_order) if k == 1 or supported(k)]
    raise InputError(f"the margin's taylor_order {margin.taylor_order} is not supported for it (its Taylor form "
                     f"would need cumulants the generated code does not have); supported orders: {', '.join(orders)}")


#: halvings of a leaf (every free variable at once) a re-check may take to confirm its recorded enclosure
CONFIRM_DEPTH = 2


def _halves(box: dict) -> list:
    """The 2^k boxes of ``box`` halved in each of its k variables of positive width."""
    parts = [{}]
    for name, (lo, hi) in box.items():
        sides = [(lo, (lo + hi) / 2), ((lo + hi) / 2, hi)] if lo < hi else [(lo, hi)]
        parts = [{**part, name: side} for part in parts for side in sides]
    return parts


def unconfirmed_end(enclose, box: dict, lower, upper, ends, depth: int = CONFIRM_DEPTH, again=None) -> str | None:
    """Why the recorded ``[lower, upper]`` of a leaf (``upper`` None: +inf) is not confirmed by the re-check, or
    None. Confirmed: an enclosure of the margin over the box lies inside it — the re-check's own (``ends``,
    exact (lo, hi)), or else ``again()`` (the prover's enclosure recomputed at the certificate's precision and
    arithmetic: the record is that ball rounded outward); where neither does (both balls wider, or the record
    narrowed), the box is halved in every variable, up to ``depth`` times, and each part whose enclosure
    (``enclose(part)`` → ends or None) is not inside the record is halved again. A narrowed record — a lower end
    raised above what the margin takes on the leaf — stays unconfirmed at every depth and is rejected."""
    def inside(found):
        return found is not None and found[0] >= lower and (upper is None or found[1] <= upper)

    if inside(ends) or (again is not None and inside(again())):
        return None
    pending = [box]
    for _ in range(depth):
        pending = [part for piece in pending for part in _halves(piece) if not inside(enclose(part))]
        if not pending:
            return None
    if not pending:
        return None
    low = enclose(pending[0])
    low_text = "not finite" if low is None else f"[{float(low[0]):.10g}, {float(low[1]):.10g}]"
    recorded = f"[{float(lower):.10g}, {'inf' if upper is None else format(float(upper), '.10g')}]"
    return (f"its recorded enclosure {recorded} is not confirmed: the margin "
            f"re-enclosed on a part of the leaf (halved {depth} times) is {low_text}")
