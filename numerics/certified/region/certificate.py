"""The certificate of the forward-invariant region (format ``stumpcheck-region-certificate/1``) and its re-check.

:func:`region_certificate` proves the four obligations of :func:`stumpcheck.numerics.certified.region.invariant_region.obligations`
(or takes their lemma certificates, already proved) and records, in one JSON document:

* ``statement``, ``region`` (b_start = b_T, b_max = B, c, d_minus, d_plus and δ = d₊/b_T, exact decimals);
* ``obligations``: {name: a lemma certificate (:mod:`stumpcheck.numerics.certified.certificates.lemma_certificate`)}: each its margin,
  domain, leaf boxes with their enclosures, depth, precision, seconds, generated-code and margin-code sha256;
* ``proved`` and ``not_proved``: what follows (forward invariance of R while b ≤ B, the drift bounds, and,
  with an entry, the horizon and the bands of b⁴) and what does not (anything beyond b = B);
* optionally ``entry``: a box {a, b} at a time T (e.g. the certified tube's last box), checked to lie in R,
  with the horizon t_B and bands of b(t)⁴/t (:mod:`stumpcheck.numerics.certified.region.bounds`);
* ``region_code``: sha256 of the modules that state the region; ``digest`` of everything else.

:func:`recheck_region` trusts none of the recorded verdicts: it rebuilds the four obligations from the
recorded region constants alone, requires each recorded lemma certificate to state exactly that obligation
(margin, domain, strictness), re-checks each by :func:`stumpcheck.numerics.certified.certificates.lemma_recheck.recheck` (exact tiling of
its domain, every leaf enclosed again at another precision), recomputes δ, the entry check and the bands.
So a narrower region (smaller c), a smaller δ (or d₊), or a dropped leaf box is rejected. The texts are
derived too: ``region`` must be exactly what its constants give (``delta``, ``coordinates``),
``statement``, ``proved`` and ``not_proved`` the ones the recorded region gives, ``summary`` the one its
obligations' records give, and no field beyond :data:`FIELDS` (the digest is integrity only: a forger
recomputes it).

Before any of that, :func:`check_region_limits` bounds the file (the region's decimals, each obligation's
digits, leaf count and decimals) and reads the entry's shape: InputError (one line, with the limit).
The entry is re-checked before the leaves (it is cheap).
"""

from __future__ import annotations

import hashlib
import time
from pathlib import Path

from stumpcheck.numerics.certified.region.invariant_region import OBLIGATIONS, Region, obligations, prove_obligation
from stumpcheck.numerics.certified.region.bounds import band_table, entry_check, horizon, lower_decimal
from stumpcheck.numerics.certified.certificates.lemma_certificate import certificate, digest, parse_exact
from stumpcheck.numerics.certified.tube.records import check_decimal_size, check_record_sizes
from stumpcheck.numerics.precision import InputError

__all__ = ["FORMAT", "FIELDS", "region_certificate", "recheck_region", "is_region_certificate", "entry_record",
           "provenance_fault",
           "check_region_limits", "check_entry_shape", "MAX_REGION_LEAVES", "MAX_REGION_DPS"]

FORMAT = "stumpcheck-region-certificate/1"
#: the fields of a region certificate (``seconds`` and ``region_code`` are informational; the rest is derived)
FIELDS = frozenset({"format", "statement", "status", "region", "proved", "not_proved", "summary", "obligations",
                    "entry", "seconds", "region_code", "digest"})
#: the times at which an entry's bands of b(t)⁴/t are recorded (those in [T, t_B])
BAND_TIMES = tuple(10**k for k in range(6, 17))
#: leaves of one obligation (the prover's default box budget) and digits of its certificate, at most
MAX_REGION_LEAVES = 20_000
MIN_REGION_DPS, MAX_REGION_DPS = 15, 100
_MODULES = ("invariant_region.py", "bounds.py", "certificate.py")


def _region_code() -> dict:
    here = Path(__file__).resolve().parent
    text = "".join((here / name).read_text(encoding="utf-8") for name in _MODULES)
    return {"modules": [f"numerics/certified/region/{name}" for name in _MODULES],
            "sha256": hashlib.sha256(text.encode("utf-8")).hexdigest()}


def is_region_certificate(document) -> bool:
    """Whether ``document`` (parsed JSON) is a region certificate (format ``stumpcheck-region-certificate/1``)."""
    return isinstance(document, dict) and document.get("format") == FORMAT


def _proved_text(region: Region) -> list[str]:
    return [
        "on |w| = c, b ∈ [b_start, b_max] (w = b·(a − calibration_a(b))): d/dt w² < 0 (obligations inward_*)",
        "on R: (1 − d_plus/b)/(2b³) <= db/dt <= (1 − d_minus/b)/(2b³), so (1 − δ)/(2b³) <= db/dt <= (1 + δ)/(2b³) "
        "with δ = d_plus/b_start, and db/dt > 0 (obligations drift_*)",
        "hence: if z(T) ∈ R, then z(t) ∈ R for every t >= T until b(t) first reaches b_max",
        "and, with b(T) ∈ [β₋, β₊]: b(t)⁴ <= β₊⁴ + 2(1 − d_minus/b_max)(t − T), b(t)⁴ >= β₋⁴ + 2(1 − d_plus/β₋)(t − T), "
        "and b(t) <= b_max for t <= t_B = T + (b_max⁴ − β₊⁴)/(2(1 − d_minus/b_max))",
    ]


def _not_proved_text(region: Region) -> list[str]:
    return ["nothing for b > b_max: the tail b ∈ [b_max, ∞) through ε = 1/b has no certified remainder here, so "
            "'for all t' holds up to the exit time from b <= b_max only (at least t_B), not beyond",
            "that the flow's state at T is in R: that is the entry box's hypothesis (checked by Arb when an entry "
            "is recorded; the box itself comes from the certified tube)"]


def check_entry_shape(entry) -> None:
    """InputError (one line) unless ``entry`` is {"t": a decimal >= 0, "box": {"a": [lo, hi], "b": [lo, hi]}}
    with lo <= hi and b > 0, every decimal within the size limits."""
    if not isinstance(entry, dict) or not isinstance(entry.get("box"), dict):
        raise InputError("an entry needs 't' (the time T) and 'box' ({a: [lo, hi], b: [lo, hi]})")
    box = entry["box"]
    try:
        check_decimal_size(entry["t"], "the entry's t")
        t = parse_exact(entry["t"], "the entry's t")
        ends = {}
        for name in ("a", "b"):
            lo, hi = box[name]
            for x in (lo, hi):
                check_decimal_size(x, f"the entry box's {name}")
            ends[name] = (parse_exact(lo, f"the entry box's {name}"), parse_exact(hi, f"the entry box's {name}"))
    except (KeyError, TypeError, ValueError) as exc:
        if isinstance(exc, InputError):
            raise
        raise InputError("an entry box needs 'a' and 'b' intervals [lo, hi] of decimals") from None
    if not t >= 0:
        raise InputError(f"the entry's t must be >= 0, got {str(entry['t'])[:30]}")
    if not all(lo <= hi for lo, hi in ends.values()) or not ends["b"][0] > 0:
        raise InputError("an entry box needs lo <= hi in a and b, and b > 0")


def check_region_limits(document: dict) -> None:
    """InputError (one line, with the limit) if a region certificate exceeds a limit or has a malformed
    entry: run before any work, so that a hostile file cannot stall the re-check (a tail certificate:
    :func:`stumpcheck.numerics.certified.region.any_certificate.check_limits`)."""
    region = document.get("region")
    if isinstance(region, dict):
        for key in ("b_start", "b_max", "c", "d_minus", "d_plus", "delta"):
            if isinstance(region.get(key), (str, int)) and not isinstance(region.get(key), bool):
                check_decimal_size(region[key], f"region.{key}")
    records = document.get("obligations")
    for name, lemma in (records.items() if isinstance(records, dict) else ()):
        if not isinstance(lemma, dict):
            continue
        dps = lemma.get("dps")
        if isinstance(dps, bool) or not isinstance(dps, int) or not MIN_REGION_DPS <= dps <= MAX_REGION_DPS:
            raise InputError(f"obligation {name}: dps {str(dps)[:20]} is outside the limits "
                             f"[{MIN_REGION_DPS}, {MAX_REGION_DPS}] of a region certificate")
        leaves = lemma.get("leaves")
        if isinstance(leaves, list) and len(leaves) > MAX_REGION_LEAVES:
            raise InputError(f"obligation {name}: {len(leaves)} leaves, more than the limit {MAX_REGION_LEAVES}")
        check_record_sizes(lemma.get("domain"), f"obligation {name}: domain")
        for leaf in leaves if isinstance(leaves, list) else ():
            if isinstance(leaf, dict):
                check_record_sizes({k: leaf.get(k) for k in ("box", "lower", "upper", "depth")}, f"obligation {name}: leaf")
    if document.get("entry") is not None:
        check_entry_shape(document["entry"])


def provenance_fault(document: dict) -> str | None:
    """Why the informational ``region_code`` (the modules stating the region and their sha256) or ``seconds``
    holds something else (a field the record does not define), or None."""
    code = document.get("region_code")
    if not (isinstance(code, dict) and set(code) == {"modules", "sha256"} and isinstance(code["sha256"], str)
            and isinstance(code["modules"], list) and all(isinstance(m, str) for m in code["modules"])):
        return "region_code must hold exactly 'modules' (a list of paths) and 'sha256' (text)"
    seconds = document.get("seconds")
    values = seconds.values() if isinstance(seconds, dict) else [seconds]
    if not all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in values):
        return "seconds must be a number (or an object of numbers)"
    return None


def _summary_row(r: dict) -> dict:
    row = {"status": r.get("status"), "leaves": len(r.get("leaves") or []), "boxes": r.get("boxes"),
           "max_depth": r.get("max_depth_reached"), "seconds": r.get("seconds"), "prec_bits": r.get("prec_bits")}
    arithmetic = r.get("arithmetic")
    if isinstance(arithmetic, dict):
        row["fast_leaves"] = arithmetic.get("fast_leaves")
        row["fallbacks"] = arithmetic.get("fallbacks")
    return row


def _summary(records: dict) -> dict:
    return {name: _summary_row(r) for name, r in records.items()}


def entry_record(region: Region, entry: dict) -> dict:
    """The entry's record: its time and box, the check that the box lies in R, and (if it does) t_B and bands."""
    try:
        t_entry, box = entry["t"], entry["box"]
    except (KeyError, TypeError):
        raise InputError("an entry needs 't' (the time T) and 'box' ({a: [lo, hi], b: [lo, hi]})") from None
    check = entry_check(region, box)
    record = {"t": str(t_entry), "box": {k: [str(x) for x in box[k]] for k in ("a", "b")}, "check": check}
    if check["inside"]:
        beta_lo, beta_hi = box["b"]
        t_b = horizon(region, t_entry, beta_hi)
        record["horizon_t_B"] = lower_decimal(t_b)
        record["bands"] = band_table(region, t_entry, beta_lo, beta_hi, [t for t in BAND_TIMES if t >= float(t_entry)])
    return record


def region_certificate(region: Region | None = None, *, proofs: dict | None = None, entry: dict | None = None,
                       workers: int = 1, max_boxes: int = 20_000, progress=None, arithmetic: str = "fast") -> dict:
    """The region's certificate (a JSON-ready dict); ``proofs`` {name: lemma certificate} skips proving those.

    ``entry`` = {"t": T, "box": {"a": (lo, hi), "b": (lo, hi)}}: the state's box at time T (exact decimals).
    ``progress(name)`` is called before each obligation is proved."""
    from stumpcheck.numerics.certified.region.invariant_region import DEFAULT_REGION

    region = region or DEFAULT_REGION
    started = time.perf_counter()
    stated = obligations(region)
    records = {}
    for name in OBLIGATIONS:
        if proofs and name in proofs:
            records[name] = proofs[name]
            continue
        if progress is not None:
            progress(name)
        statement, margin, domain, strict = stated[name]
        proof = prove_obligation(region, name, workers=workers, max_boxes=max_boxes, arithmetic=arithmetic)
        records[name] = certificate(statement, margin, domain, proof, strict=strict)
    status = "proved" if all(r.get("status") == "proved" for r in records.values()) else "not proved"
    document = {
        "format": FORMAT,
        "statement": region.statement(),
        "status": status,
        "region": region.to_json(),
        "proved": _proved_text(region) if status == "proved" else [],
        "not_proved": _not_proved_text(region),
        "summary": _summary(records),
        "obligations": records,
        "entry": None if entry is None else entry_record(region, entry),
        "seconds": round(time.perf_counter() - started, 3),
        "region_code": _region_code(),
    }
    document["digest"] = digest(document)
    return document


def _bits(lemma: dict) -> int:
    from stumpcheck.numerics.certified.enclosures.balls import working_bits
    from stumpcheck.numerics.certified.certificates.lemma_certificate import parse_exact

    sizes = [max(abs(float(parse_exact(x, name))) for x in ends)
             for name, ends in ((lemma.get("domain") or {}).get("variables") or {}).items()]
    return working_bits(int(lemma.get("dps", 30)) + 10, *sizes)


def recheck_region(document, *, points: str = "midpoint", progress=None, arithmetic: str = "fast") -> tuple[bool, str]:
    """(ok, message): re-check a region certificate from its data alone (see the module doc).

    ``points``: where each recorded leaf enclosure is tested against the margin's value ("midpoint" or
    "corners", as for lemma certificates); ``arithmetic``: "fast" (float64 θ-integrals first, Arb where they do not
    decide a leaf) or "arb" (every leaf in Arb). InputError for a document that is not a region certificate.
    A tail certificate is re-checked by :func:`stumpcheck.numerics.certified.region.tail_certificate.recheck_tail`
    (:func:`stumpcheck.numerics.certified.region.any_certificate.recheck_any` chooses)."""
    from stumpcheck.numerics.certified.proofs.domains import Domain
    from stumpcheck.numerics.certified.certificates.lemma_recheck import recheck

    if not is_region_certificate(document):
        raise InputError(f"not a region certificate: format {str((document or {}).get('format'))[:60]!r}, "
                         f"expected {FORMAT!r}" if isinstance(document, dict) else "not a region certificate")
    started = time.perf_counter()
    check_region_limits(document)
    if document.get("digest") != digest(document):
        return False, "the certificate was edited after it was written (its digest does not match)"
    if document.get("status") != "proved":
        return False, f"not a proof: the certificate's status is {str(document.get('status'))[:20]!r}"
    try:
        region = Region.from_json(document.get("region"))
    except InputError as exc:
        return False, f"the recorded region is not one: {exc}"
    try:
        recorded_delta = parse_exact(document["region"].get("delta"), "delta")
    except InputError:
        recorded_delta = None
    if recorded_delta != region.delta:
        return False, (f"the recorded δ = {document['region'].get('delta')} is not d_plus/b_start = "
                       f"{region.to_json()['delta']}")
    recorded_region, derived_region = document["region"], region.to_json()
    if recorded_region != derived_region:
        wrong = sorted(str(k)[:30] for k in set(recorded_region) | set(derived_region)
                       if recorded_region.get(k) != derived_region.get(k))
        return False, f"the recorded region's {', '.join(wrong[:5])} is not what its constants give"
    extra = sorted(set(document) - FIELDS)
    if extra:
        return False, ("the certificate has fields a region certificate does not define, which the re-check would "
                       f"not check: {', '.join(str(k)[:30] for k in extra[:5])}")
    fault = provenance_fault(document)
    if fault is not None:
        return False, fault
    if document.get("statement") != region.statement():
        return False, "the statement is not the one the recorded region states"
    if document.get("proved") != _proved_text(region) or document.get("not_proved") != _not_proved_text(region):
        return False, "the 'proved' or 'not_proved' texts are not the ones the recorded region gives"
    records = document.get("obligations")
    if not isinstance(records, dict) or set(records) != set(OBLIGATIONS):
        return False, f"the certificate must hold exactly the obligations {', '.join(OBLIGATIONS)}"
    if not all(isinstance(r, dict) for r in records.values()):
        return False, "an obligation is not a lemma certificate"
    summary, derived = document.get("summary"), _summary(records)
    if summary != derived:
        wrong = [n for n in OBLIGATIONS if not isinstance(summary, dict) or summary.get(n) != derived[n]]
        return False, f"the summary of {', '.join(wrong) or 'the obligations'} is not the one its record gives"
    stated = obligations(region)
    for name, (statement, margin, domain, strict) in stated.items():
        lemma = records[name]
        try:
            recorded_domain = Domain.from_json(lemma.get("domain")).to_json()
        except InputError as exc:
            return False, f"obligation {name}: its domain cannot be read: {exc}"
        if (lemma.get("margin") != margin.to_json() or recorded_domain != domain.to_json()
                or lemma.get("strict") is not strict
                or lemma.get("author_statement", lemma.get("statement")) != statement):
            return False, (f"obligation {name} does not state what the region needs (margin, domain "
                           f"{domain.to_json()['variables']}, strict={strict})")
    entry = document.get("entry")
    if entry is not None:  # cheap, so before the leaves
        again = entry_record(region, {"t": entry["t"], "box": entry["box"]})
        if again != entry:
            return False, "the entry's check, horizon or bands are not what the recorded box and region give"
        if not again["check"]["inside"]:
            return False, f"the entry box is not in the region: {again['check']['reason']}"
    leaves, used = 0, set()
    for name in stated:
        lemma = records[name]
        if progress is not None:
            progress(name)
        try:
            used.add(_bits(lemma))
            result = recheck(lemma, prec_bits=_bits(lemma), points=points, embedded=True, arithmetic=arithmetic)
        except (InputError, TypeError, ValueError) as exc:
            return False, f"obligation {name}: not a readable lemma certificate: {exc}"
        if not result.passed:
            return False, f"obligation {name}: {result.message}"
        leaves += result.leaves_checked
    seconds = time.perf_counter() - started
    return True, (f"the region's 4 obligations restate its constants and re-check: {leaves} leaves tile their "
                  f"domains and re-enclose their margins at {' and '.join(map(str, sorted(used)))} bits (each "
                  "obligation's digits + 10)"
                  + ("; the entry box lies in R" if entry is not None else "") + f"; {seconds:.1f} s")
