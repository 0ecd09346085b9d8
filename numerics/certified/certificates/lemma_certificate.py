"""The certificate of a proved lemma: a JSON document anyone can re-check (format ``stumpcheck-lemma-certificate/2``).

A certificate records the statement "m(p) ≥ 0 (strict: > 0) for every p of the domain" as data:

* ``statement``: the sentence the proof proves, printed from the margin, the domain, ``strict`` and the
  identity (:func:`stumpcheck.numerics.certified.certificates.lemma_statement.derived_statement`); the re-check derives it again and
  rejects any other text. ``author_statement``: the lemma's words as its author wrote them, kept for the
  reader; nothing checks them against the proof, and the re-check never presents them as proved;
* ``margin`` (the margin's source, :meth:`Margin.to_json`: the SymPy ``srepr`` or the Python source, its
  coordinates and estimator), ``domain`` (:meth:`Domain.to_json`, exact decimal ends), ``strict``;
* ``identity`` (only for the atom margin of a registered identity, :mod:`stumpcheck.theory.margin_identities`): the
  record of the symbolic step that turns the proved atom margin into the lemma's stated margin;
* ``status`` (``"proved"``, ``"failed"`` or ``"undecided"``) and the prover's work: ``boxes``,
  ``max_depth_reached``, ``undecided_fraction``, ``notes`` (e.g. which part of the domain rests on a proved
  asymptotic remainder rather than on interval arithmetic);
* ``leaves``: every leaf box of the bisection with its enclosure, ``{"box": {variable: [lo, hi]}, "lower",
  "upper", "depth", "form"}``. Box ends are exact rationals written as finite decimals (``"0.05"``) or, when
  the denominator has a prime other than 2 and 5, as ``"p/q"``; ``lower``/``upper`` are decimals rounded
  outward, so [lower, upper] contains the margin at every point of the box. The leaves tile the domain;
* ``failure`` (status failed: a leaf whose upper end is < 0, a box where the margin is certainly negative)
  and ``undecided`` (the leaves that were neither proved nor refuted);
* what identifies the computation: ``versions`` (python, stumpcheck, python-flint, mpmath, sympy), ``dps``,
  ``prec_bits``, ``generated_code`` (sha256 of the generated Arb module), ``margin_code`` (sha256 of the Arb
  code the margin compiled to, and of the stored Taylor forms it uses) and ``seconds``;
* ``arithmetic`` (only for a proof made with the fast layer, :func:`arithmetic_record`): the numbers of leaves
  proved with float64 θ-integrals and in Arb, the Arb fallbacks, the method and the fast layer's
  ``ASSUMPTIONS`` (:data:`stumpcheck.numerics.certified.fast.rounding.ASSUMPTIONS`); each leaf then records its
  ``arithmetic``. A re-check encloses every leaf again, in either arithmetic (``recheck --arb``: Arb);
* ``digest``: the sha256 of the canonical JSON of every other field. It detects a certificate damaged or
  edited after it was written by someone who did not recompute it: it is integrity, not authority (anyone can
  recompute it). What a re-check establishes independently of it is the mathematics and the statement:
  :func:`stumpcheck.numerics.certified.certificates.lemma_recheck.recheck`.

Format ``/1`` (before the statement was derived) stored the author's words as ``statement``; a re-check refuses
it on its own (re-run the proof to write ``/2``), and reads it only inside a region certificate, which binds
each obligation's margin, domain and statement itself.
"""

from __future__ import annotations

import hashlib
import json
import platform
from fractions import Fraction
from importlib import metadata
from pathlib import Path

from stumpcheck.numerics.certified.proofs.domains import exact_decimal, exact_text
from stumpcheck.numerics.precision import InputError

__all__ = ["FORMAT", "FORMAT_V1", "certificate", "digest", "exact_text", "parse_exact", "write_certificate",
           "read_certificate", "margin_code_identity"]

FORMAT = "stumpcheck-lemma-certificate/2"
#: the first format: its ``statement`` is the author's words, not derived from the proof
FORMAT_V1 = "stumpcheck-lemma-certificate/1"


def parse_exact(text, name: str) -> Fraction:
    """An exact rational from ``"0.05"``, ``"1e-3"``, ``"-7/3"`` or an int; InputError otherwise (floats
    are refused: a certificate's ends are exact), and for a text beyond the limits of
    :func:`stumpcheck.numerics.certified.certificates.limits.check_number_text` (checked before converting)."""
    from stumpcheck.numerics.certified.certificates.limits import bounded_exact

    return bounded_exact(text, name)


def _versions() -> dict:
    versions = {"python": platform.python_version()}
    for package in ("stumpcheck", "python-flint", "mpmath", "sympy"):
        try:
            versions[package] = metadata.version(package)
        except metadata.PackageNotFoundError:
            versions[package] = "unknown"
    return versions


def _leaf_json(leaf) -> dict:
    out = {"box": {var: [exact_text(lo), exact_text(hi)] for var, (lo, hi) in leaf.box.items()},
           "lower": str(leaf.lower), "upper": str(leaf.upper), "depth": int(leaf.depth), "form": str(leaf.form)}
    if getattr(leaf, "arithmetic", None) is not None:
        out["arithmetic"] = str(leaf.arithmetic)
    return out


#: how the fast layer encloses a leaf (recorded with its assumptions in each certificate it proves)
FAST_METHOD = ("Taylor form in Arb with float64 interval θ-integrals: Gauss-Legendre with a Bernstein-ellipse "
               "remainder for L, L_a, L_b; first-order sums of the generated integrands for the remainder "
               "and for derivatives over parameter balls; differences with a Taylor remainder for derivatives "
               "at a point (stumpcheck.numerics.certified.proofs.margin_taylor_fast)")


def arithmetic_record(proof) -> dict | None:
    """The certificate's ``arithmetic`` record of a proof made with the fast layer (None for Arb alone)."""
    if getattr(proof, "arithmetic", "arb") != "fast":
        return None
    from stumpcheck.numerics.certified.fast.rounding import ASSUMPTIONS

    named = [leaf.arithmetic for leaf in proof.leaves]
    return {"fast_leaves": named.count("fast"), "arb_leaves": named.count("arb"),
            "fallbacks": int(proof.fallbacks), "method": FAST_METHOD, "assumptions": dict(ASSUMPTIONS)}


def digest(document: dict) -> str:
    """sha256 of the canonical JSON (sorted keys, no spaces, UTF-8) of ``document`` without its ``digest``."""
    body = {k: v for k, v in document.items() if k != "digest"}
    text = json.dumps(body, sort_keys=True, separators=(",", ":"), ensure_ascii=False, allow_nan=False)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def margin_code_identity(margin, domain) -> dict:
    """The sha256 of the Arb code the margin compiles to on the domain's variables (printed from SymPy by
    :mod:`stumpcheck.theory.codegen_margins`), with the stored printed Taylor forms (numerics/generated/
    taylor_forms_arb.json) for a θ-integral margin of Taylor order > 1; for a Python margin, of its recorded
    source."""
    compiled = margin.compile(tuple(domain.variables)) if hasattr(margin, "compile") else None
    if compiled is not None:
        text = compiled["source"]
        if getattr(margin, "theta_integral", False) and getattr(margin, "taylor_order", 1) > 1:
            from stumpcheck.numerics.certified.proofs.margin_taylor import STORED_FORMS

            text += STORED_FORMS.read_text(encoding="utf-8") if STORED_FORMS.exists() else ""
    else:
        text = json.dumps(margin.to_json().get("source"), sort_keys=True)
    return {"sha256": hashlib.sha256(text.encode("utf-8")).hexdigest()}


def certificate(statement: str, margin, domain, proof, *, strict: bool, identity: dict | None = None) -> dict:
    """The certificate (a JSON-ready dict) of ``proof`` = :func:`stumpcheck.numerics.certified.proofs.margin_proof.prove` (margin, domain).

    ``statement`` is the author's words (``author_statement``); the certificate's ``statement`` is derived
    from the margin, the domain, ``strict`` and the identity. ``identity`` is the record of the symbolic step
    the margin needs (:meth:`stumpcheck.theory.margin_identities.MarginIdentity.record`); for the atom margin of a
    registered identity it is the registered one when not given (the atom margin proves nothing alone).
    ``leaves`` are all of the proof's leaves (they tile the domain), ``undecided`` the undecided ones again
    and ``failure`` the refuting leaf, if any; see the module doc for every field.
    """
    from stumpcheck.numerics.certified.proofs.box_certificate import generated_code_identity
    from stumpcheck.numerics.certified.certificates.lemma_statement import derived_statement, required_identity

    margin_json, domain_json = margin.to_json(), domain.to_json()
    expression = getattr(margin, "expr", None) if "sympy_srepr" in margin_json.get("source", {}) else None
    needed = required_identity(expression)
    if identity is None and needed is not None:
        from stumpcheck.theory.margin_identities import identity_for

        identity = identity_for(needed).record()
    from stumpcheck.numerics.certified.proofs.margins import parse_srepr

    document = {
        "format": FORMAT,
        "statement": derived_statement(margin_json, domain_json, bool(strict), parse_srepr, identity),
        "author_statement": str(statement),
        "margin": margin_json,
        "domain": domain_json,
        "strict": bool(strict),
        "status": proof.status,
        "leaves": [_leaf_json(leaf) for leaf in proof.leaves],
        "undecided": [_leaf_json(leaf) for leaf in proof.undecided],
        "undecided_fraction": float(proof.undecided_fraction),
        "failure": None if proof.failure is None else _leaf_json(proof.failure),
        "boxes": int(proof.boxes),
        "max_depth_reached": int(proof.max_depth_reached),
        "notes": list(proof.notes or []),
        "dps": int(proof.dps),
        "prec_bits": int(proof.prec_bits),
        "seconds": round(float(proof.seconds), 3),
        "versions": _versions(),
        "generated_code": generated_code_identity(),
        "margin_code": margin_code_identity(margin, domain),
    }
    if identity is not None:
        document["identity"] = identity
    record = arithmetic_record(proof)
    if record is not None:
        document["arithmetic"] = record
    document["digest"] = digest(document)
    return document


def write_certificate(document: dict, path, *, one_per_line=("leaves", "undecided")) -> Path:
    """Write ``document`` as JSON to ``path`` (its folder created), one field a line and one item a line of the
    lists named in ``one_per_line`` (a lemma's leaves; a flow certificate's intervals); InputError (one line) if
    it cannot be written."""
    path = Path(path)
    parts = []
    for key, value in document.items():
        if key in one_per_line and isinstance(value, list) and value:
            text = "[\n  " + ",\n  ".join(json.dumps(leaf, ensure_ascii=False, allow_nan=False) for leaf in value) + "\n ]"
        else:
            text = json.dumps(value, ensure_ascii=False, allow_nan=False)
        parts.append(f" {json.dumps(key)}: {text}")
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("{\n" + ",\n".join(parts) + "\n}\n", encoding="utf-8")
    except OSError as exc:
        raise InputError(f"cannot write the certificate {path}: {exc.strerror or exc}") from None
    return path


def read_certificate(path) -> dict:
    """A certificate file as a dict; InputError (one line) if it is unreadable, not JSON or not an object.

    Checked before reading: the path is a regular file (a FIFO would block and ``/dev/zero`` never end) of at
    most :data:`~stumpcheck.numerics.certified.certificates.limits.MAX_CERTIFICATE_BYTES`; after: its strings are text (a
    ``\\ud800`` escape decodes to a lone surrogate, which no certificate holds and nothing can print or hash)."""
    import stat

    from stumpcheck.numerics.certified.certificates.limits import MAX_CERTIFICATE_BYTES

    path = Path(path)
    try:
        info = path.stat()
        if not stat.S_ISREG(info.st_mode):
            raise InputError(f"cannot read {path}: not a regular file")
        if info.st_size > MAX_CERTIFICATE_BYTES:
            raise InputError(f"cannot read {path}: {info.st_size} bytes, more than the limit "
                             f"{MAX_CERTIFICATE_BYTES} of a certificate")
        with path.open("rb") as handle:
            data = handle.read(MAX_CERTIFICATE_BYTES + 1)
        if len(data) > MAX_CERTIFICATE_BYTES:
            raise InputError(f"cannot read {path}: more than the limit {MAX_CERTIFICATE_BYTES} bytes of a certificate")
        text = data.decode("utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise InputError(f"cannot read {path}: {getattr(exc, 'strerror', None) or exc}") from None

    def refuse(constant):
        raise ValueError(f"non-finite number {constant}")

    try:
        document = json.loads(text, parse_constant=refuse)
    except (ValueError, RecursionError) as exc:
        raise InputError(f"{path} is not a JSON certificate: {str(exc).splitlines()[0][:120]}") from None
    if not isinstance(document, dict):
        raise InputError(f"{path} is not a certificate (a JSON object), got a JSON {type(document).__name__}")
    if "\\u" in text:  # only a \u escape can make a string that is not text
        try:
            json.dumps(document, ensure_ascii=False).encode("utf-8")
        except RecursionError:
            raise InputError(f"{path} is not a JSON certificate: nested too deeply") from None
        except UnicodeEncodeError:
            raise InputError(f"{path} is not a JSON certificate: a string holds a lone surrogate (\\ud800-\\udfff), "
                             "which is not text") from None
    return document
