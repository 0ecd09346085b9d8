"""The statement a lemma certificate proves, derived from what is proved: margin, domain, strict, identity.

A lemma certificate (:mod:`stumpcheck.numerics.certified.certificates.lemma_certificate`) proves "m ≥ 0 (strict: > 0) at every
point of the domain". :func:`derived_statement` prints that sentence from the certificate's data alone:

    <m in SymPy's text form> >= 0 for every b ∈ [20, 30], lam ∈ [-1, 1], theta ∈ [0.2, 0.8]
    (calibration coordinates: a = calibration_a(b) + lam; one-head estimator)

``m`` is the margin rebuilt from its ``srepr``; for a certificate with a symbolic ``identity``
(:mod:`stumpcheck.theory.margin_identities`) it is the identity's *stated* margin, which the identity proves equal to a
quotient that is > 0 wherever the atom margin proved by Arb is > 0. The domain's ends are printed from their
exact values, the coordinates with the relation that gives a (or θ), and the estimator that e, its
derivatives and the θ-integrals L… belong to. The writer stores this sentence as ``statement``; the re-check
derives it again and rejects a certificate whose ``statement`` says anything else.

:func:`required_identity` tells when a margin cannot be presented on its own: the atom margin of a registered
identity (1 − e^{−u} of ``bulk_error``, 1 − 2e^{−u} of ``right_layer``) proves the lemma only with the
identity, so a certificate of it without its identity record is rejected.
"""

from __future__ import annotations

import hashlib

import sympy as sp

from stumpcheck.numerics.certified.proofs.domains import exact_text
from stumpcheck.numerics.certified.certificates.limits import bounded_exact

__all__ = ["derived_statement", "margin_text", "coordinates_text", "required_identity"]

_COORDINATES = {
    "abtheta": "",
    "calibration": "a = calibration_a(b) + lam",
    "scaled": "a = calibration_a(b) + w/b",
    "excess": "a = b + excess",
}


#: the derived coordinates of stumpcheck.theory.margin_quantities, printed where a margin uses them
_DERIVED = (("u", "u = b*theta"), ("v", "v = b*(1 - theta)"), ("r", "r = exp(b - a)"))


def coordinates_text(coordinates: str, variables) -> str:
    """``calibration coordinates: a = calibration_a(b) + lam``: the coordinates and what a (and θ) are."""
    if coordinates == "layer":
        names = set(variables)
        relation = "theta = 1 - v/b" + ("; a = calibration_a(b) + lam" if "lam" in names else
                                        "; a = b + excess" if "excess" in names else "")
    else:
        relation = _COORDINATES.get(coordinates, "")
    return f"{coordinates} coordinates" + (f": {relation}" if relation else "")


def margin_text(margin_json: dict, parse) -> str:
    """The margin as text: SymPy's ``sstr`` of its rebuilt ``srepr`` (``parse`` rebuilds it: the caller's safe
    parser), or the name and sha256 of a Python margin's source."""
    source = margin_json.get("source") if isinstance(margin_json, dict) else None
    source = source if isinstance(source, dict) else {}
    if isinstance(source.get("sympy_srepr"), str):
        return sp.sstr(parse(source["sympy_srepr"]))
    if isinstance(source.get("python_source"), str):
        digest = hashlib.sha256(source["python_source"].encode("utf-8")).hexdigest()[:16]
        return f"the Python margin {str(source.get('function'))[:60]}(…) (source sha256 {digest}…)"
    return "the margin " + ", ".join(f"{k} = {str(v)[:60]}" for k, v in sorted(source.items()))


def derived_statement(margin_json: dict, domain_json: dict, strict: bool, parse, identity=None) -> str:
    """The sentence the certificate proves (see the module doc). ``identity``: the certificate's identity
    record, whose stated margin is then the statement's margin (after the re-check has re-derived it)."""
    source = margin_json.get("source") if isinstance(margin_json, dict) else None
    if identity is not None:
        parsed = parse(identity["stated_margin"]["srepr"])
        expression = sp.sstr(parsed)
    else:
        parsed = parse(source["sympy_srepr"]) if isinstance(source, dict) and isinstance(
            source.get("sympy_srepr"), str) else None
        expression = sp.sstr(parsed) if parsed is not None else margin_text(margin_json, parse)
    used = {s.name for s in parsed.free_symbols} if isinstance(parsed, sp.Basic) else set()
    where = "".join(f"; {text}" for name, text in _DERIVED if name in used)
    variables = domain_json.get("variables") or {}
    ranges = ", ".join(f"{name} ∈ [{exact_text(bounded_exact(ends[0], name))}, "
                       f"{exact_text(bounded_exact(ends[1], name))}]" for name, ends in sorted(variables.items()))
    coordinates = str(domain_json.get("coordinates", "abtheta"))
    estimator = str(margin_json.get("estimator", "one-head"))
    relation = "> 0" if strict else ">= 0"
    return (f"{expression} {relation} for every {ranges} ({coordinates_text(coordinates, variables)}{where}; "
            f"{estimator} estimator)")


def required_identity(expression) -> str | None:
    """The name of the registered identity whose atom margin ``expression`` is (it then proves that lemma only
    with the identity), or None. Only expressions in u alone are compared (the atom margins are)."""
    if not isinstance(expression, sp.Expr) or not expression.free_symbols or any(
            s.name != "u" for s in expression.free_symbols):
        return None
    from stumpcheck.theory.margin_identities import IDENTITIES, identity_for

    for name in IDENTITIES:
        if sp.srepr(identity_for(name).atom_margin()) == sp.srepr(expression):
            return name
    return None
