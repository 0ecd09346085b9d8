"""A lemma at evidence level *certified*: prove its margin over its whole domain, write the certificate, report.

:func:`check_certified` proves ``spec.margin`` ≥ 0 (strict: > 0) on ``spec.domain`` with
:func:`stumpcheck.numerics.certified.proofs.margin_proof.prove` (Arb enclosures and bisection, every leaf box with its enclosure),
writes the certificate (:mod:`stumpcheck.numerics.certified.certificates.lemma_certificate`) as ``<lemma>.certificate.json`` in the
out folder, and turns the proof into a row:

* **proved** on the whole domain: PASS at level certified;
* **failed**: a leaf box where the margin is certainly negative (upper end < 0). The box is enclosed again at
  twice the working precision and at its midpoint, and the row is a FAIL at level certified with that box,
  the two enclosures and the point (a counterexample anyone can evaluate);
* **undecided** (boxes neither proved nor refuted within the prover's budget), or proved only on the
  ``quick_domain``: never "certified" for part of a domain. The row lists the undecided boxes and their
  volume fraction and keeps the *sampled* verdict (a Hypothesis search of the lemma's domain), at level
  sampled.

A spec with an ``identity`` (a symbolic step the proof rests on, e.g. the identity that turns a cancelling
ratio margin into the certified one) has its record written into the certificate as ``identity`` (the digest
covers it) and into the row's ``details["certified"]["identity"]``. A :class:`~stumpcheck.lemmas.SymbolicSpec`
(:func:`check_symbolic`) is a SymPy proof: PASS at level certified when its record says ``"proved"``, with the
record in ``details["symbolic_proof"]``.

``details["evidence_reached"]`` is the level the statement reached on its whole domain (None for a FAIL).

Arithmetic: a whole domain is proved with the fast float64 θ-integrals where they apply (``prove``'s default);
a ``--quick`` sub-domain in Arb alone. Such a sub-domain is a few boxes, which Arb proves in a second or two,
while the fast layer's compiled θ-integral kernels take about three minutes to compile in a new environment
(measured: ``leading_loss``'s quick row 178 s with numba's cache empty, 2.7 s warm; in Arb 2 s either way).
"""

from __future__ import annotations

import time
from pathlib import Path

from stumpcheck.claims.result import ClaimResult

__all__ = ["check_certified", "check_symbolic", "CERTIFICATE_SUFFIX", "domain_text"]

CERTIFICATE_SUFFIX = ".certificate.json"
#: undecided boxes listed in a row's details (all of them are in the certificate)
LISTED_BOXES = 20


def domain_text(domain) -> str:
    """``b ∈ [20, 100], lam ∈ [-1, 1] (calibration coordinates)``: exact ends."""
    from stumpcheck.numerics.certified.certificates.lemma_certificate import exact_text

    ranges = ", ".join(f"{v} ∈ [{exact_text(lo)}, {exact_text(hi)}]" for v, (lo, hi) in domain.variables.items())
    return f"{ranges} ({domain.coordinates} coordinates)"


def _box_text(box: dict) -> str:
    from stumpcheck.numerics.certified.certificates.lemma_certificate import exact_text

    return "{" + ", ".join(f"{v} ∈ [{exact_text(lo)}, {exact_text(hi)}]" for v, (lo, hi) in box.items()) + "}"


def _leaf_row(leaf) -> dict:
    from stumpcheck.numerics.certified.certificates.lemma_certificate import exact_text

    return {"box": {v: [exact_text(lo), exact_text(hi)] for v, (lo, hi) in leaf.box.items()},
            "lower": str(leaf.lower), "upper": str(leaf.upper), "depth": leaf.depth}


def _check_one_margin(entry, margin, identity) -> None:
    """The proof must be about the lemma's one margin: the proved margin is it, or (with a symbolic identity) the
    identity's stated margin is it. InputError (one line) otherwise, before any proof."""
    from stumpcheck.numerics.precision import InputError
    from stumpcheck.lemmas.margin import resolve_margin

    one = resolve_margin(entry)
    if one is None:
        return
    if identity is not None:
        stated = (identity.get("stated_margin") or {}).get("srepr")
        if stated != one.source["sympy_srepr"]:
            raise InputError(f"lemma {entry.name}: its identity's stated margin is not the lemma's margin")
    elif margin.source != one.source or margin.coordinates != one.coordinates:
        raise InputError(f"lemma {entry.name}: its certified margin is not the lemma's margin")


def check_certified(entry, spec, *, start: float, quick: bool, seed: int, max_examples: int, out_dir,
                    replay: str | None, sampled_check) -> ClaimResult:
    """Certify ``entry`` (a Lemma) with ``spec`` (its CertifiedSpec); see the module doc. Where the proof
    does not decide the whole domain, the lemma's sampled level is run by ``sampled_check`` (the checker's
    :func:`~stumpcheck.lemmas.check.check_lemma`, passed in so that this module does not import it)."""
    from stumpcheck.numerics.certified.certificates.lemma_certificate import certificate, digest, write_certificate
    from stumpcheck.numerics.certified.proofs.margin_proof import prove
    from stumpcheck.numerics.certified.certificates.lemma_recheck import confirm_failure
    from stumpcheck.lemmas import SymbolicSpec

    if isinstance(spec, SymbolicSpec):
        return check_symbolic(entry, spec, start=start)
    margin, domain, whole = spec.resolve(quick=quick, name=entry.name)
    identity = spec.identity_record(entry.name)
    _check_one_margin(entry, margin, identity)
    # a --quick sub-domain is a few boxes: Arb alone proves it in seconds, where the fast layer's compiled
    # θ-integral kernels take minutes to compile in a new environment (numba's cache empty)
    arithmetic = "fast" if whole else "arb"
    proof = prove(margin, domain, strict=spec.strict, dps=spec.dps, arithmetic=arithmetic, **spec.prove_options)
    cpu = proof.cpu_seconds  # with the spawned processes' CPU when the proof ran on several
    document = certificate(entry.statement, margin, domain, proof, strict=spec.strict)
    if identity is not None:
        document["identity"] = identity
        document["digest"] = digest(document)
    relation = "> 0" if spec.strict else ">= 0"
    summary = {"status": proof.status, "domain": domain.to_json(), "domain_text": domain_text(domain),
               "whole_domain": whole, "strict": spec.strict, "boxes": proof.boxes, "leaves": len(proof.leaves),
               "max_depth": proof.max_depth_reached, "undecided_fraction": proof.undecided_fraction,
               "cpu_seconds": round(cpu, 3),
               # a failed proof stops early: its pending boxes are undecided for want of work, not listed
               "undecided_boxes": ([] if proof.status == "failed" else
                                   [_leaf_row(leaf) for leaf in proof.undecided[:LISTED_BOXES]]),
               "undecided_count": len(proof.undecided), "dps": proof.dps, "prec_bits": proof.prec_bits,
               "seconds": round(proof.seconds, 3), "notes": list(proof.notes or [])}
    if identity is not None:
        summary["identity"] = identity
    if out_dir is not None:
        path = write_certificate(document, Path(out_dir) / f"{entry.name}{CERTIFICATE_SUFFIX}")
        summary["certificate"] = path.name
    details = {"reference": entry.reference, "level": "certified", "certified": summary,
               "precision": f"Arb ball arithmetic, {proof.prec_bits} bits ({proof.dps} digits)"}
    where = f"certificate {summary['certificate']}" if "certificate" in summary else "no certificate written"
    work = (f"{proof.boxes} boxes, {len(proof.leaves)} leaves, depth {proof.max_depth_reached}, undecided volume "
            f"{proof.undecided_fraction:.3g}, {proof.seconds:.1f} s")
    tolerance = f"margin {relation} on every leaf box (Arb enclosure)"
    if identity is not None:
        rewritten = identity.get("rewritten_margin", {}).get("in_atoms", "?")
        work += f"; with the symbolic identity stated margin = {rewritten}"
        tolerance += " and the symbolic identity (certificate field identity)"

    def row(status, evidence, figure, reached):
        details["evidence_reached"] = reached
        return ClaimResult(id=entry.name, statement=entry.statement, figure=figure, tolerance=tolerance,
                           status=status, evidence=evidence, seconds=time.perf_counter() - start, details=details)

    if proof.status == "proved" and whole:
        return row("PASS", "certified", f"proved on the whole domain {domain_text(domain)}: {work}; {where}",
                   "certified")
    if proof.status == "failed":
        check = confirm_failure(margin, proof.failure.box, 2 * proof.prec_bits)
        summary["failure"] = {**_leaf_row(proof.failure), "confirmation": check}
        box_ball, mid_ball = (f"[{', '.join(ends)}]" for ends in (check["box_ball"], check["midpoint_ball"]))
        point = ", ".join(f"{v} = {x}" for v, x in check["midpoint"].items())
        confirmed = (f"confirmed at {check['prec_bits']} bits: margin in {box_ball} on the box, in {mid_ball} at "
                     f"its midpoint ({point})" if check["confirmed"] else
                     f"NOT confirmed at {check['prec_bits']} bits (enclosure {box_ball})")
        return row("FAIL", "certified", f"refuted: the margin is certainly < 0 on the box "
                                        f"{_box_text(proof.failure.box)} (upper end {proof.failure.upper}); "
                                        f"{confirmed}; {work}; {where}", None)
    # undecided, or proved on the quick sub-domain only: the sampled verdict stands
    if proof.status == "proved":
        lead = f"certified on the quick sub-domain {domain_text(domain)} only ({work}; --full for the whole domain)"
    elif proof.status == "undecided":
        lead = (f"not certified: {len(proof.undecided)} boxes undecided, {proof.undecided_fraction:.3g} of the "
                f"domain's volume (e.g. {_box_text(proof.undecided[0].box) if proof.undecided else '?'}); {work}")
    else:
        lead = f"not certified: prover status {proof.status!r}"
    if "sampled" not in entry.evidence:
        return row("FAIL", "certified", f"{lead}; the lemma has no sampled level to fall back on", None)
    sampled = sampled_check(entry, level="sampled", max_examples=max_examples, seed=seed, replay=replay,
                          out_dir=out_dir, quick=quick)
    details.update({k: v for k, v in sampled.details.items() if k not in ("reference", "level", "precision")})
    details["precision"] = f"{sampled.details.get('precision')} (sampled); Arb balls (certified part)"
    tolerance = sampled.tolerance
    reached = "sampled" if sampled.status == "PASS" else None
    return row(sampled.status, "sampled", f"{lead}; sampled: {sampled.figure}", reached)


def check_symbolic(entry, spec, *, start: float) -> ClaimResult:
    """The row of a lemma proved symbolically: PASS at level certified iff ``spec.proof()`` says "proved"."""
    from stumpcheck.lemmas.definitions import _short_text

    try:
        record = spec.proof()
    except Exception as exc:  # noqa: BLE001 - a proof that raises proves nothing: a FAIL, with the reason
        record = {"status": "failed", "error": f"{type(exc).__name__}: {_short_text(str(exc))}"}
    if not isinstance(record, dict):
        record = {"status": "failed", "error": f"the proof returned {type(record).__name__}, not a record"}
    proved = record.get("status") == "proved"
    summary = {"status": "proved" if proved else "failed", "method": "symbolic", "domain_text": record.get("proves"),
               "whole_domain": True, "boxes": 0, "leaves": 0, "max_depth": 0, "undecided_fraction": 0.0,
               "seconds": record.get("seconds")}
    details = {"reference": entry.reference, "level": "certified", "symbolic_proof": record, "certified": summary,
               "precision": "exact (SymPy)", "evidence_reached": "certified" if proved else None}
    if proved:
        figure = f"proved symbolically {record.get('proves', '')}; {record.get('method', '')}"
    else:
        figure = f"symbolic proof failed: {record.get('error') or record.get('method', '?')}"
    return ClaimResult(id=entry.name, statement=entry.statement, figure=figure,
                       tolerance="SymPy simplifies the difference to exactly 0", status="PASS" if proved else "FAIL",
                       evidence="certified", seconds=time.perf_counter() - start, details=details)
