"""C2–C4 decided by their certified limit statements: the tube on [0, T], the region and the tail beyond T.

The claims are limits (docs/claims.md). Each row's verdict is the certified statement for every t ≥ T, read
from a flow certificate that holds the tube from (10, 10) to T = 10⁶ and, embedded, the finite region
b ∈ [30, 1000] joined with the tail b ≥ 1000 (docs/certified_flow.md, docs/tail.md):

* **C2** — |a − calibration_a(b)| ≤ c/b for every t ≥ T (c = 1/2), so a − calibration_a(b) → 0;
* **C3** — β₋(t) ≤ b(t)⁴/t ≤ β₊(t) with |β± − 2| ≤ K·t^{−1/4} for every t ≥ t₀: b⁴/t → 2 and
  log b/log t → 1/4;
* **C4** — 1 − M_δ(b₋(t)) ≤ b·sup over θ ∈ [δ, 1 − δ] of |e(θ)| ≤ max(1, M(b₋(t)) − 1) for every t ≥ T, M, M_δ → 0:
  b·sup|e| → 1 and log sup|e|/log t → −1/4.

PASS iff the statement is *certified in this run*: under ``--quick`` the committed certificate
(:data:`CERTIFICATE`, package data of :mod:`stumpcheck.data`) is re-checked here — the tube's intervals at
its digits + 10 (:func:`~stumpcheck.numerics.certified.tube.certificate.recheck_flow_certificate`), then the
embedded region and tail with every leaf re-enclosed and the rest of the loss re-derived
(:func:`~stumpcheck.numerics.certified.region.flow_certificate.recheck_flow_region`); under ``--full`` the tube,
the region and the tail are proved anew (:mod:`stumpcheck.claims.population_shared`). The state at T must lie in
R (checked by Arb). Anything less is a FAIL with the reason: a proof that could not be checked decides nothing.
The fitted exponents of the float64 flow over [10⁶, 10¹²] stay beside the verdict as controls.
"""

from __future__ import annotations

import json
import time
from fractions import Fraction
from importlib import resources

from stumpcheck.numerics.precision import InputError

__all__ = ["BACKGROUND_TASKS", "CERTIFICATE", "committed_certificate", "recheck_committed", "all_time_part", "all_time_verdict",
           "STATEMENTS", "build_committed_certificate", "COMMITTED_B_RATIO"]

#: the start pieces in b of the committed region's proof, per obligation (the prover's default is 1.02 for all):
#: fewer, wider leaves where they still prove, so that its re-check in verify --quick is short; any tiling is
#: re-checked the same way
COMMITTED_B_RATIO = {"inward_upper": 1.1, "inward_lower": 1.1, "drift_lower_half": 1.02, "drift_upper_half": 1.02}

#: the committed flow certificate (tube to 10⁶, the finite region and the tail embedded), in stumpcheck/data/
CERTIFICATE = "flow_certificate_1e6_all_time.json"

#: each claim's certified statement (the row's statement)
STATEMENTS = {
    "C2": "the flow calibrates the label/feature scores: |a − calibration_a(b)| ≤ c/b for every t ≥ T, so "
          "a − calibration_a(b) → 0",
    "C3": "the attention scale grows as t^{1/4}: b⁴/t → 2 (|b⁴/t − 2| ≤ K·t^{−1/4}) and log b/log t → 1/4",
    "C4": "population threshold error is O(t^{−1/4}) for interior θ: b·sup over θ ∈ [δ, 1 − δ] of |e| → 1 and "
          "log sup|e|/log t → −1/4",
}


def committed_certificate() -> dict:
    """The committed flow certificate with the region and the tail embedded (InputError if unreadable)."""
    try:
        text = resources.files("stumpcheck.data").joinpath(CERTIFICATE).read_text(encoding="utf-8")
        return json.loads(text)
    except (OSError, ValueError, ModuleNotFoundError) as exc:
        raise InputError(f"the committed certificate {CERTIFICATE} cannot be read: {exc}") from None


def _recheck_region_part(document: dict | None = None) -> tuple[bool, str]:
    """The embedded region and tail re-checked (:func:`recheck_flow_region`); a malformed one is (False, why).
    Without ``document``, the committed certificate's (read here: what a background worker is given)."""
    from stumpcheck.numerics.certified.region.flow_certificate import recheck_flow_region

    try:
        return recheck_flow_region(committed_certificate() if document is None else document)
    except (InputError, KeyError, TypeError, ValueError, ArithmeticError) as exc:
        return False, f"malformed: {exc}"


def _recheck_tube_part(document: dict | None = None) -> tuple[bool, str]:
    """The tube's intervals re-checked at its digits + 10: (passed, why not); ``document`` as above."""
    from stumpcheck.numerics.certified.tube.certificate import recheck_flow_certificate

    try:
        document = committed_certificate() if document is None else document
        tube = recheck_flow_certificate(document, int(document.get("dps", 15)) + 10, workers=1)
    except (InputError, KeyError, TypeError, ValueError, ArithmeticError) as exc:
        return False, str(exc)
    return bool(tube.passed), "" if tube.passed else str(tube.message)


#: the keys of the two parts of the committed certificate's re-check in :mod:`stumpcheck.claims.background`
BACKGROUND_TASKS = ((("C2", "region"), _recheck_region_part, ()), (("C2", "tube"), _recheck_tube_part, ()))


def recheck_committed(*, workers: int = 2) -> tuple[dict | None, str, str]:
    """(the certificate, how it was verified, a note): the committed certificate re-checked whole in this run;
    (None, "", why) if any part of the re-check fails. Parts that ``verify`` started in its background workers
    (:data:`BACKGROUND_TASKS`, :mod:`stumpcheck.claims.background`) are collected; otherwise, with ``workers``
    ≥ 2 the region and the tail are re-checked in a worker process while this one re-checks the tube."""
    from stumpcheck.claims import background
    from stumpcheck.numerics.processes import parent_watching_pool

    started = time.perf_counter()
    try:
        document = committed_certificate()
    except InputError as exc:
        return None, "", str(exc)
    (region_key, _, _), (tube_key, _, _) = BACKGROUND_TASKS
    where = "re-checked in this run ({seconds:.1f} s)"
    if background.started(tube_key) and background.started(region_key):
        tube_ok, tube_message = background.take(tube_key, _recheck_tube_part, document)
        region_ok, region_message = background.take(region_key, _recheck_region_part, document)
        where = "re-checked in this run, in two background processes beside the other entries (waited {seconds:.1f} s)"
    else:
        with parent_watching_pool(1) as pool:
            region_part = pool.submit(_recheck_region_part, document) if workers >= 2 else None
            tube_ok, tube_message = _recheck_tube_part(document)
            region_ok, region_message = (region_part.result() if region_part is not None
                                         else _recheck_region_part(document))
    if not tube_ok:
        return None, "", f"the committed tube certificate does not re-check: {tube_message}"
    if not region_ok:
        return None, "", f"the committed region and tail do not re-check: {region_message}"
    where = where.format(seconds=time.perf_counter() - started)
    return document, "re-checked in this run", f"{CERTIFICATE} {where}: the tube, the finite region and the tail"


def all_time_part(document: dict, checked: str | None) -> dict:
    """The beyond-T part (:func:`stumpcheck.claims.population_beyond.beyond_t`) of a flow certificate that embeds a
    tail joined to its finite region, entering at its T with the tube's box there."""
    from stumpcheck.claims.population_beyond import beyond_t, region_document
    from stumpcheck.numerics.certified.region.flow_certificate import tube_box_at_t_max

    from stumpcheck.numerics.certified.tube.records import exact_fraction

    region = region_document(document)
    box = tube_box_at_t_max(document)
    t_max = exact_fraction(document.get("t_max"), "t_max")
    exact = tuple(Fraction(str(x)) for x in (*box["a"], *box["b"]))
    return beyond_t(region, t_entry=t_max, box=exact, checked=checked)


def _reason(part: dict | None, why: str) -> str | None:
    if part is None:
        return why or "no certified part"
    if part.get("evidence") != "certified":
        return part.get("why_not") or "the beyond-T part is not certified"
    if part.get("horizon") != "inf":
        return "the region is not joined with the tail: nothing is proved for every t >= T"
    return None


def all_time_verdict(which: str, part: dict | None, why: str = "") -> dict:
    """{"passed", "figure", "tolerance", "reason", "facts"}: claim ``which``'s certified limit statement read from the
    beyond-T part ``part`` (None: ``why`` says what failed)."""
    reason = _reason(part, why)
    tolerance = {"C2": "certified for every t >= T: b·|a − calibration_a(b)| <= c (region ∪ tail, z(T) in R)",
                 "C3": "certified for every t >= t0: |b⁴/t − 2| <= K·t^(−1/4) with K finite",
                 "C4": "certified for every t >= T: 1 − M_δ <= b·sup|e| <= max(1, M − 1) with M, M_δ → 0"}[which]
    if reason is not None:
        return {"passed": False, "figure": f"not certified: {reason}", "tolerance": tolerance, "reason": reason,
                "facts": {}}
    t_entry = part["t_entry"]
    w = part["entry"]["w"]
    if which == "C2":
        last = part["bands_all_time"][-1]
        facts = {"c": part["region"]["c"], "entry_w": w, "calibration": part["calibration_all_time"],
                 "gap_at_most": {band["t"]: band["calibration_gap_at_most"] for band in part["bands_all_time"]}}
        figure = (f"|a − calibration_a(b)| <= {part['region']['c']}/b for every t >= T = {t_entry:g} (w = b·λ at T in "
                  f"[{w[0]}, {w[1]}]), <= {last['calibration_gap_at_most']} at t = {last['t']:.3g}: → 0")
        ok = bool(part.get("calibration_all_time"))
    elif which == "C3":
        rates = part["rate"]
        last = part["bands_all_time"][-1]
        facts = {"rate": rates, "bands": part["bands_all_time"]}
        figure = ("; ".join(r["statement"] for r in rates) + f"; b⁴/t in [{last['b4_over_t'][0]}, "
                  f"{last['b4_over_t'][1]}] and log b/log t − 1/4 in [{last['log_b_over_log_t_minus_quarter'][0]}, "
                  f"{last['log_b_over_log_t_minus_quarter'][1]}] at t = {last['t']:.3g}: b⁴/t → 2, log b/log t → 1/4")
        ok = bool(rates) and all(float(r["K"]) < float("inf") for r in rates)
    else:
        interior = part.get("interior_error_all_time")
        if interior is None:
            return {"passed": False, "figure": "not certified: no bound of b·sup|e| beyond T", "tolerance": tolerance,
                    "reason": "no interior-error record", "facts": {}}
        first, last = interior["rows"][0], interior["rows"][-1]
        facts = {"interior_error": interior}
        figure = (f"b·sup|e| in [{first['sup_e_b'][0]}, {first['sup_e_b'][1]}] at t = T = {first['t']:.3g} and in "
                  f"[{last['sup_e_b'][0]}, {last['sup_e_b'][1]}] at t = {last['t']:.3g}; log sup|e|/log t + 1/4 in "
                  f"[{last['log_sup_e_over_log_t_plus_quarter'][0]}, {last['log_sup_e_over_log_t_plus_quarter'][1]}] "
                  f"there: {interior['limits']}")
        ok = bool(interior["rows"])
    return {"passed": ok, "figure": figure, "tolerance": tolerance, "reason": None, "facts": facts}


def build_committed_certificate(flow_certificate: dict, *, b_ratio: dict | None = None) -> dict:
    """The committed certificate from a complete tube's flow certificate (``stumpcheck flow --certified --t-max 1e6``;
    any region already embedded is dropped): the default finite region proved with start pieces of ratio
    ``b_ratio[name]`` in b (default :data:`COMMITTED_B_RATIO`), the tail proved and joined, both embedded with the
    tube's box at T as entry (:func:`~stumpcheck.numerics.certified.region.flow_certificate.embed_region_certificate`).
    Write it with :func:`~stumpcheck.numerics.certified.tube.certificate.write_flow_certificate` to stumpcheck/data/."""
    from stumpcheck.numerics.certified.certificates.lemma_certificate import certificate
    from stumpcheck.numerics.certified.region import invariant_region
    from stumpcheck.numerics.certified.region.certificate import region_certificate
    from stumpcheck.numerics.certified.region.flow_certificate import embed_region_certificate
    from stumpcheck.numerics.certified.region.tail import DEFAULT_TAIL
    from stumpcheck.numerics.certified.region.tail_certificate import tail_certificate

    ratios = dict(COMMITTED_B_RATIO, **(b_ratio or {}))
    flow = {k: v for k, v in flow_certificate.items() if k not in ("region", "for_all_t")}
    region, proofs = invariant_region.DEFAULT_REGION, {}
    default_ratio = invariant_region.B_RATIO
    try:
        for name, (statement, margin, domain, strict) in invariant_region.obligations(region).items():
            invariant_region.B_RATIO = ratios[name]  # read by prove_obligation at each call (in this process)
            proof = invariant_region.prove_obligation(region, name, workers=1)
            proofs[name] = certificate(statement, margin, domain, proof, strict=strict)
    finally:
        invariant_region.B_RATIO = default_ratio
    finite = region_certificate(region, proofs=proofs)
    if finite["status"] != "proved":
        raise ArithmeticError(f"the finite region is not proved with start pieces of ratios {ratios}")
    return embed_region_certificate(flow, tail_certificate(DEFAULT_TAIL, finite=finite), tail=True)
