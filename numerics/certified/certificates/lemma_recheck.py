"""Re-check a lemma certificate (:mod:`stumpcheck.numerics.certified.certificates.lemma_certificate`) without trusting the code that wrote it.

:func:`recheck` establishes "m ≥ 0 (strict: > 0) on the domain" from the certificate's data alone, and then
that the certificate's ``statement`` is exactly that sentence:

0. before any work, every number, precision, count and the margin's ``srepr`` are checked against the limits
   of :mod:`stumpcheck.numerics.certified.certificates.limits` (InputError: a hostile file cannot hang the re-check);
1. the format is ``stumpcheck-lemma-certificate/2`` (a ``/1`` certificate, whose statement is its author's
   words, is refused with what to do, unless a region certificate embeds it and binds it, ``embedded=True``),
   the ``digest`` matches the content (integrity only: anyone can recompute it), the certificate has no field
   the format does not define, its status is ``"proved"`` with no undecided leaf and no failure, and its
   ``prec_bits`` is the working precision of its ``dps`` on its domain;
2. the margin is rebuilt from its recorded source (:meth:`Margin.from_json`: SymPy ``srepr``, checked first to be
   a tree of allowed SymPy constructors on bounded literals; Python source runs only with ``allow_python=True``,
   since it is code), in the domain's coordinates;
3. with exact rational arithmetic (:mod:`stumpcheck.numerics.certified.proofs.tiling`), the leaves tile the stated domain:
   each inside it, interiors pairwise disjoint, no gap;
4. a margin that needs a symbolic step has it: the atom margin of a registered identity
   (:func:`stumpcheck.numerics.certified.certificates.lemma_statement.required_identity`) without its ``identity`` record is rejected,
   and the record is re-derived (:func:`stumpcheck.theory.margin_identities.recheck_identity`: every field but the
   seconds); a leaf recorded in a Taylor form needs the margin's Taylor order, and the order must be one the
   generated code supports;
5. every leaf is enclosed again at a working precision *different* from the certificate's
   (:meth:`Margin.enclose` at ``prec_bits``), and the new enclosure must have lower end ≥ 0 (> 0 when strict);
6. the recorded enclosures are what the re-check confirms: the certificate's [lower, upper] of a leaf must
   contain the re-check's enclosure of the margin on the leaf, or the prover's recomputed at the certificate's
   precision (on its halves, halved again, where both are wider:
   :func:`~stumpcheck.numerics.certified.certificates.lemma_checks.unconfirmed_end`), and must
   not exclude the margin's rigorous value at the leaf's midpoint (and, with ``points="corners"``, at its
   corners), so a narrowed ball — a lower end raised above what the margin takes on the leaf —, or a margin
   source changed after the proof, is caught;
7. the statement is derived (:func:`stumpcheck.numerics.certified.certificates.lemma_statement.derived_statement`: margin — the
   identity's stated margin when there is one —, relation, domain, coordinates, estimator) and must be the
   certificate's ``statement`` character for character. The result carries the derived statement: that is what
   passed. The ``author_statement`` is never read.

The result names the first fault and why. The proof rests on steps 3, 4 and 5; 7 binds the words to it.
"""

from __future__ import annotations

import itertools
import time
from dataclasses import dataclass, field
from fractions import Fraction

from stumpcheck.numerics.certified.certificates.lemma_certificate import FORMAT, FORMAT_V1, digest
from stumpcheck.numerics.certified.certificates.limits import bounded_exact, check_srepr
from stumpcheck.numerics.certified.proofs.tiling import tiling_failure
from stumpcheck.numerics.precision import InputError

__all__ = ["RecheckResult", "recheck", "confirm_failure", "parse_box"]

POINTS = ("midpoint", "corners")


@dataclass
class RecheckResult:
    """``passed``; ``message`` (one line: what passed, or the first fault); ``leaf_index`` / ``leaf`` (the first
    failing leaf, if a leaf failed); ``leaves_checked``; ``prec_bits`` (the re-check's precision); ``seconds``;
    ``notes`` (e.g. the generated code differs from the certificate's); ``statement`` (what passed: the
    statement derived from the re-checked data, empty when the check failed or derives none)."""

    passed: bool
    message: str
    leaf_index: int | None = None
    leaf: dict | None = None
    leaves_checked: int = 0
    prec_bits: int = 0
    seconds: float = 0.0
    notes: list = field(default_factory=list)
    statement: str = ""


def parse_box(box, where: str) -> dict:
    """{variable: (lo, hi)} of Fractions from a certificate's ``{variable: [lo, hi]}``; InputError if malformed."""
    if not isinstance(box, dict) or not box:
        raise InputError(f"{where}: a box must be a non-empty object {{variable: [lo, hi]}}")
    out = {}
    for name, ends in box.items():
        if not isinstance(ends, list) or len(ends) != 2:
            raise InputError(f"{where}: {name} must be [lo, hi]")
        out[str(name)] = (bounded_exact(ends[0], f"{where} {name} lo"), bounded_exact(ends[1], f"{where} {name} hi"))
    return out


def _bound(text, where: str):
    """A recorded enclosure end: an exact rational, or ±inf (None stands for it)."""
    if isinstance(text, str) and text.strip().lstrip("+-") in ("inf", "Infinity"):
        return None
    return bounded_exact(text, where)


def _check_srepr(text: str, allowed_names=()) -> None:
    """:func:`stumpcheck.numerics.certified.certificates.limits.check_srepr` (kept under its old name)."""
    check_srepr(text, allowed_names)


def _domain_variables(data: dict) -> dict:
    """The stated domain's box {variable: (lo, hi)} (Fractions), read by :meth:`Domain.from_json`."""
    from stumpcheck.numerics.certified.proofs.domains import Domain

    try:
        domain = Domain.from_json(data)
    except InputError:
        raise
    except Exception as exc:  # a corrupt domain: bad input, one line
        raise InputError(f"the certificate's domain cannot be read: {type(exc).__name__}: {exc}") from None
    return {v: (Fraction(lo), Fraction(hi)) for v, (lo, hi) in domain.variables.items()}


def _rebuild_margin(document: dict, allow_python: bool):
    from stumpcheck.numerics.certified.proofs.margins import Margin

    source = document.get("margin")
    if not isinstance(source, dict):
        raise InputError("the certificate has no margin object")
    inner = source.get("source", source)
    if isinstance(inner, dict) and "python_source" in inner and not allow_python:
        raise InputError("the margin is Python source, which recheck would run as code; "
                         "read it, then pass --allow-python to run it")
    if isinstance(inner, dict) and isinstance(inner.get("sympy_srepr"), str):
        from stumpcheck.theory.margin_quantities import RELATIONS

        check_srepr(inner["sympy_srepr"], {f.__name__ for f in RELATIONS})
    try:
        return Margin.from_json(source)
    except InputError:
        raise
    except Exception as exc:  # a corrupt source: bad input, one line
        raise InputError(f"the certificate's margin cannot be rebuilt: {type(exc).__name__}: "
                         f"{str(exc).splitlines()[0][:160] if str(exc) else ''}") from None


def _arb_fraction(x) -> Fraction:
    man, exp = x.man_exp()
    man, exp = int(man), int(exp)
    return Fraction(man * 2 ** exp) if exp >= 0 else Fraction(man, 2 ** -exp)


def _ends(ball) -> tuple[Fraction, Fraction] | None:
    """The exact ends of a finite arb ball, or None if it is not finite."""
    from flint import arb

    if not ball.is_finite():
        return None
    return _arb_fraction(arb(ball.lower())), _arb_fraction(arb(ball.upper()))


def _sample_points(box: dict, points: str):
    mid = {v: (lo + hi) / 2 for v, (lo, hi) in box.items()}
    yield "midpoint", {v: (x, x) for v, x in mid.items()}
    if points == "corners":  # the distinct corners (a fixed variable has one value)
        choices = [sorted({box[v][0], box[v][1]}) for v in box]
        for corner in itertools.product(*choices):
            yield "corner", {v: (x, x) for v, x in zip(box, corner)}


def _enclose(margin, box: dict, prec_bits: int, arithmetic: str, decided) -> tuple:
    """(ball, form, arithmetic used): the fast layer's ball if ``arithmetic`` is "fast" and ``decided(ends)`` holds
    for it, else Arb's."""
    if arithmetic == "fast" and hasattr(margin, "enclose_fast"):
        fast = margin.enclose_fast(box, prec_bits)
        if fast is not None and decided(_ends(fast[0])):
            return fast[0], fast[1], "fast"
    ball, form = margin.enclose(box, prec_bits)
    return ball, form, "arb"


def _leaf_faults_task(margin_json: dict, leaves: list, start: int, options: dict) -> list:
    """Task: :func:`_checked_leaf` of leaves ``start``, ``start + 1``, … on the margin rebuilt from its JSON."""
    from stumpcheck.numerics.certified.proofs.margins import Margin

    margin = Margin.from_json(margin_json)
    return [_checked_leaf(margin, leaf, start + k, options) for k, leaf in enumerate(leaves)]


def _checked_leaf(margin, leaf: dict, index: int, options: dict) -> tuple:
    """(why leaf ``index`` fails or None, the arithmetic of each of its enclosures)."""
    used: list = []
    return _leaf_fault(margin, leaf, index, used=used, **options), used


def _leaf_faults(margin, leaves: list, **options):
    """(why each leaf fails or None, the arithmetic of its enclosures), in the order of the leaves; on the
    command's scheduler (:func:`stumpcheck.numerics.scheduling.for_workers`) for a SymPy margin, in about 4
    tasks per worker, else in this process. A consumer that stops at the first fault cancels the tasks not
    yet started."""
    from stumpcheck.numerics.scheduling import MIN_CHUNK, InProcess, for_workers

    with for_workers(1) as scheduler:
        if isinstance(scheduler, InProcess) or "sympy_srepr" not in margin.source:
            for index, leaf in enumerate(leaves):
                yield _checked_leaf(margin, leaf, index, options)
            return
        size = max(MIN_CHUNK, -(-len(leaves) // (4 * scheduler.workers)))
        jobs = ((margin.to_json(), leaves[k:k + size], k, options) for k in range(0, len(leaves), size))
        for faults in scheduler.imap(_leaf_faults_task, jobs):
            yield from faults


def _leaf_fault(margin, leaf: dict, index: int, *, strict: bool, prec_bits: int, points: str,
                arithmetic: str = "arb", used: list | None = None, recorded_bits: int | None = None) -> str | None:
    """Why leaf ``index`` fails the re-check, or None; ``used`` collects the arithmetic of each enclosure."""
    box = parse_box(leaf.get("box"), f"leaf {index}")
    lower, upper = _bound(leaf.get("lower"), f"leaf {index} lower"), _bound(leaf.get("upper"), f"leaf {index} upper")
    if lower is None or (lower < 0 or (strict and lower == 0)):
        return f"its recorded lower end {leaf.get('lower')} is not {'> 0' if strict else '>= 0'}"

    def positive(ends):
        return ends is not None and (ends[0] > 0 or (not strict and ends[0] == 0))

    ball, form, how = _enclose(margin, box, prec_bits, arithmetic, positive)
    if used is not None:
        used.append(how)
    form = form if how == "arb" else f"{form}, float64 θ-integrals"
    ends = _ends(ball)
    if ends is None:
        return f"re-enclosed at {prec_bits} bits ({form}): not finite"
    if ends[0] < 0 or (strict and ends[0] == 0):
        return (f"re-enclosed at {prec_bits} bits ({form}): lower end {float(ends[0]):.6g} is not "
                f"{'> 0' if strict else '>= 0'}")
    from stumpcheck.numerics.certified.certificates.lemma_checks import unconfirmed_end

    def as_recorded():  # the prover's own enclosure: at the certificate's bits, in the leaf's recorded arithmetic
        how = "fast" if leaf.get("arithmetic") == "fast" else "arb"
        return _ends(_enclose(margin, box, recorded_bits, how, positive)[0]) if recorded_bits else None

    fault = unconfirmed_end(lambda part: _ends(_enclose(margin, part, prec_bits, arithmetic, positive)[0]),
                            box, lower, upper, ends, again=as_recorded)
    if fault is not None:
        return fault
    for what, point in _sample_points(box, points):
        value = _ends(_enclose(margin, point, prec_bits, arithmetic, lambda ends: ends is not None)[0])
        if value is None:
            continue
        if value[1] < lower or (upper is not None and value[0] > upper):
            where = ", ".join(f"{v}={x[0]}" for v, x in point.items())
            return (f"its recorded enclosure [{leaf.get('lower')}, {leaf.get('upper')}] is not one: the margin at "
                    f"the {what} ({where}) is in [{float(value[0]):.6g}, {float(value[1]):.6g}]")
    return None


def _require(document: dict, key: str, kind):
    if key not in document or not isinstance(document[key], kind):
        raise InputError(f"the certificate's {key!r} is missing or not a {getattr(kind, '__name__', kind)}")
    return document[key]


def _safe_parse(text):
    from stumpcheck.numerics.certified.proofs.margins import parse_srepr

    if not isinstance(text, str):
        raise TypeError("an srepr must be a string")
    from stumpcheck.theory.margin_quantities import RELATIONS

    check_srepr(text, {f.__name__ for f in RELATIONS})
    return parse_srepr(text)


def recheck(document: dict, *, prec_bits: int, points: str = "corners", allow_python: bool = False,
            progress=None, embedded: bool = False, arithmetic: str = "fast") -> RecheckResult:
    """Re-check ``document`` (a parsed certificate) at ``prec_bits`` bits; see the module doc.

    InputError for a certificate that is not one (wrong format, missing fields, unparsable ends or source, a
    field beyond the limits) or for ``prec_bits`` equal to the certificate's own; a certificate that is well
    formed but does not prove its statement is a result with ``passed=False``. ``progress(k, n)`` is called
    after each leaf. ``embedded``: the caller (a region certificate) has bound the margin, domain, strict and
    statement to its own derivation, so a format /1 certificate is read too. ``arithmetic``: "fast" encloses
    each leaf (and its sample points) of a Taylor-form θ-integral margin first with the float64 θ-integrals
    (:meth:`~stumpcheck.numerics.certified.proofs.margins.Margin.enclose_fast`) and in Arb where that does not
    decide it; "arb" encloses every leaf in Arb, whatever the certificate says produced it.
    """
    if arithmetic not in ("fast", "arb"):
        raise InputError(f"arithmetic must be 'fast' or 'arb', got {arithmetic!r}")
    from stumpcheck.numerics.certified.certificates.lemma_checks import (arithmetic_fault, check_fields,
                                                                         check_taylor_order, consistency_fault,
                                                                         form_fault, identity_fault, margin_fault,
                                                                         work_fault)
    from stumpcheck.numerics.certified.certificates.lemma_statement import derived_statement

    started = time.perf_counter()
    version = document.get("format")
    if version not in (FORMAT, FORMAT_V1):
        raise InputError(f"not a lemma certificate: format {str(version)[:60]!r}, expected {FORMAT!r}")
    if isinstance(prec_bits, bool) or not isinstance(prec_bits, int) or prec_bits < 16:
        raise InputError(f"prec_bits must be an int >= 16, got {prec_bits!r}")
    if points not in POINTS:
        raise InputError(f"points must be one of {', '.join(POINTS)}, got {points!r}")
    check_fields(document)  # limits before any work
    recorded_bits = document.get("prec_bits")
    if recorded_bits == prec_bits:
        raise InputError(f"the re-check must run at a precision other than the certificate's ({prec_bits} bits)")
    leaves = document["leaves"]
    strict = document["strict"]

    def result(passed, message, index=None, notes=(), statement=""):
        leaf = leaves[index] if index is not None and 0 <= index < len(leaves) else None
        return RecheckResult(passed=passed, message=message, leaf_index=index, leaf=leaf,
                             leaves_checked=checked, prec_bits=prec_bits,
                             seconds=round(time.perf_counter() - started, 3), notes=list(notes), statement=statement)

    checked = 0
    if document.get("digest") != digest(document):
        return result(False, "the certificate was edited after it was written (its digest does not match)")
    if version == FORMAT_V1 and not embedded:
        return result(False, f"a {FORMAT_V1} certificate states its lemma in its author's words, which the re-check "
                             "cannot derive from the proof: re-run the proof with this version (verify --certified) "
                             f"to write a {FORMAT} certificate")
    fault = consistency_fault(document, v1=version == FORMAT_V1)
    if fault is not None:
        return result(False, fault)
    variables = _domain_variables(_require(document, "domain", dict))
    boxes = [parse_box(leaf.get("box"), f"leaf {i}") for i, leaf in enumerate(leaves)]
    fault = tiling_failure(variables, boxes)
    if fault is not None:
        return result(False, f"the leaves do not tile the domain: leaf {fault.index}: {fault.reason}",
                      fault.index if fault.index >= 0 else None)
    fault = arithmetic_fault(document) or work_fault(document)  # after the tiling: a dropped leaf is reported as one
    if fault is not None:
        return result(False, fault)
    margin = _rebuild_margin(document, allow_python)
    fault = margin_fault(margin)
    if fault is not None:
        return result(False, fault)
    check_taylor_order(margin, variables)
    notes = _code_notes(document, margin)
    fault, has_identity = identity_fault(document, margin, _safe_parse)
    if fault is not None:
        return result(False, fault, None, notes)
    if has_identity:
        notes.append("the symbolic identity re-derives (SymPy) from its stated margin")
    fault = form_fault(document)
    if fault is not None:
        return result(False, fault, None, notes)
    used: list = []
    faults = _leaf_faults(margin, leaves, strict=strict, prec_bits=prec_bits, points=points, arithmetic=arithmetic,
                          recorded_bits=recorded_bits)
    for index, (reason, how) in enumerate(faults):
        used += how
        if reason is not None:
            return result(False, f"leaf {index} fails: {reason}", index, notes)
        checked += 1
        if progress is not None:
            progress(checked, len(leaves))
    statement = derived_statement(document["margin"], document["domain"], strict, _safe_parse,
                                  document.get("identity"))
    if version == FORMAT and document.get("statement") != statement:
        return result(False, f"the statement is not the one the proof derives: {_difference(document.get('statement'), statement)}",
                      None, notes)
    relation = "> 0" if strict else ">= 0"
    if "fast" in used:
        notes.append(f"{used.count('fast')} leaves re-enclosed with float64 θ-integrals, {used.count('arb')} in Arb "
                     "(--arb: all in Arb)")
    return result(True, f"{checked} leaves tile the domain exactly and each re-encloses the margin {relation} at "
                        f"{prec_bits} bits (the certificate: {recorded_bits} bits)", None, notes, statement)


def _difference(recorded, derived: str) -> str:
    """Where the certificate's statement and the derived one part: a short excerpt of each."""
    recorded = str(recorded)
    k = next((i for i, (x, y) in enumerate(zip(recorded, derived)) if x != y), min(len(recorded), len(derived)))
    start = max(0, k - 30)

    def excerpt(text):
        return ("…" if start else "") + text[start:k + 50] + ("…" if len(text) > k + 50 else "")

    return f"the certificate says {excerpt(recorded)!r} where the proof gives {excerpt(derived)!r}"


def _code_notes(document: dict, margin) -> list:
    """Notes where this installation's code differs from the certificate's (not a failure: the re-check is
    rigorous with the code it runs, and then independent of the code that wrote the certificate)."""
    from stumpcheck.numerics.certified.proofs.box_certificate import generated_code_identity
    from stumpcheck.numerics.certified.certificates.lemma_certificate import margin_code_identity

    notes = []
    pairs = (("generated Arb module", (document.get("generated_code") or {}).get("sha256"),
              lambda: generated_code_identity()["sha256"]),
             ("margin's compiled Arb code", (document.get("margin_code") or {}).get("sha256"),
              lambda: margin_code_identity(margin, _RebuiltDomain(document))["sha256"]))
    for what, recorded, current in pairs:
        if recorded and recorded != current():
            notes.append(f"the {what} differs from the certificate's (sha256 {str(recorded)[:12]}… recorded): "
                         "the re-evaluation used this installation's code")
    return notes


class _RebuiltDomain:
    """The domain's variable names, enough to compile the margin as the certificate did."""

    def __init__(self, document: dict):
        self.variables = dict.fromkeys((document.get("domain") or {}).get("variables") or {})


def confirm_failure(margin, box: dict, prec_bits: int, digits: int = 12) -> dict:
    """Confirm a refuting box at ``prec_bits``: the margin's enclosure over the whole box and at its midpoint.

    Returns {"confirmed": the upper end over the box is < 0, "prec_bits", "form", "box_ball": [lower, upper],
    "midpoint": {variable: exact value}, "midpoint_ball": [lower, upper]}, the balls as decimals rounded
    outward to ``digits`` significant digits (so they still contain the values)."""
    from stumpcheck.numerics.certified.proofs.boxes import _ball_bounds
    from stumpcheck.numerics.certified.certificates.lemma_certificate import exact_text

    ball, form = margin.enclose(box, prec_bits)
    ends = _ends(ball)
    mid = {v: (lo + hi) / 2 for v, (lo, hi) in box.items()}
    point = margin.enclose({v: (x, x) for v, x in mid.items()}, prec_bits)[0]
    return {"confirmed": ends is not None and ends[1] < 0, "prec_bits": prec_bits, "form": form,
            "box_ball": _ball_bounds(ball, digits), "midpoint": {v: exact_text(x) for v, x in mid.items()},
            "midpoint_ball": _ball_bounds(point, digits)}
