"""The training certificate (format ``stumpcheck-training-certificate/1``): writing it and the fields it holds.

The certificate states, for one corpus (sha256 of its arrays, its shape), the one-head corpus loss L̂ and
the trainer's doubles a₀, b₀, η:

    the exact-arithmetic GD z_{k+1} = z_k − η∇L̂(z_k) from z₀ = (a₀, b₀) has z_k ∈ X_k for k = 0 … K,
    X_k = {c_k + A_k r : r ∈ R_k} the recorded sets, inside the recorded boxes; the trainer's stopping
    rule holds for every point of X_K and for no point of X_k, k < K: the exact run stops at step K,
    with z_K in ``final_box``.

Fields: ``statement`` (``start`` [a₀, b₀], ``eta``, ``steps`` K, ``final_box`` {"a": [lo, hi], "b": [lo,
hi]}, ``stop`` (the rule: ``b_target``, ``max_steps``, ``t_max``), ``stopped_because``, ``estimator``,
``text``); ``status`` ("proved", or "partial" when the chain ended before the rule held: ``end`` says why,
and only the recorded steps are proved); ``corpus``; ``chain`` (one record a step: k, the centre ``c``,
the frame ``A``, the coordinates' box ``r``, the hull ``box``); ``float64_run`` (the float64 trainer's
iterates against the hulls: informative, not part of the statement); ``arithmetic`` (the fast layer's
assumptions and the method); ``settings``, ``seconds``, ``versions``; ``digest`` (sha256 of the rest:
integrity, not authority). Every number of the statement is a double written exactly: its finite decimal
expansion, or p/q when the expansion is longer than :data:`DECIMAL_LIMIT` characters; the chain's
numbers are doubles in exact hexadecimal (C99 ``%a``, Python's ``float.hex``: about 22 characters each,
read back exactly by ``float.fromhex``), a record a step.
:mod:`~stumpcheck.numerics.corpus.certified_run.recheck` re-derives all of it.
"""

from __future__ import annotations

from fractions import Fraction

from stumpcheck.numerics.certified.certificates.lemma_certificate import digest
from stumpcheck.numerics.certified.fast.corpus import ASSUMPTIONS as FAST_ASSUMPTIONS
from stumpcheck.numerics.certified.proofs.domains import exact_decimal
from stumpcheck.numerics.corpus.certified_run.chain import CertifiedTraining, float_distances

__all__ = ["FORMAT", "ARITHMETIC", "DECIMAL_LIMIT", "double_text", "training_certificate", "is_training_certificate",
           "statement_text", "CERTIFICATE_NAME"]

FORMAT = "stumpcheck-training-certificate/1"
CERTIFICATE_NAME = "training_certificate.json"
DECIMAL_LIMIT = 120
ARITHMETIC = {
    "fast_layer": FAST_ASSUMPTIONS,
    "enclosures": "grad L_hat at each centre (a point) and Hess L_hat over each hull (a box) by the fast layer's "
                  "corpus_enclosure (one head)",
    "lohner": "X_{k+1} from X_k by the mean-value form F(z) in [F(c)] + (I - eta [Hess](hull X_k)) A (z - c) in the "
              "new frame: R' = [A'^-1]([F(c)] - c') + ([A'^-1]([J] A)) R, float64 intervals rounded outward; c', A' "
              "(midpoint, QR frame) are plain doubles",
    "gd": "exact-arithmetic gradient descent z -> z - eta*grad(L_hat)(z) with the doubles a0, b0, eta; the "
          "statement is about that map, not about the rounded float64 run",
}
#: keys of ARITHMETIC["fast_layer"] that describe the machine, not an assumption (may differ on a re-check)
ENVIRONMENT_KEYS = ("libc", "numba", "machine")


def is_training_certificate(document) -> bool:
    return isinstance(document, dict) and document.get("format") == FORMAT


def double_text(value: float) -> str:
    """A double as an exact string: its finite decimal expansion, or p/q when that is shorter."""
    q = Fraction(float(value))
    text = exact_decimal(q)
    return text if len(text) <= DECIMAL_LIMIT else f"{q.numerator}/{q.denominator}"


def _pair(lo, hi) -> list:
    return [double_text(lo), double_text(hi)]


def _box(hull) -> dict:
    return {"a": _pair(*hull[0]), "b": _pair(*hull[1])}


def statement_text(st: dict, status: str) -> str:
    stop = st["stop"]
    rule = ", ".join(f"{k} = {v}" for k, v in stop.items() if v is not None)
    head = (f"For this corpus and the one-head loss, exact-arithmetic gradient descent z -> z - eta*grad L_hat(z) "
            f"from (a0, b0) = ({st['start'][0]}, {st['start'][1]}) with eta = {st['eta']}")
    box = st["final_box"]
    if status == "proved":
        return (f"{head} stops by the trainer's rule ({rule}) at step {st['steps']} ({st['stopped_because']}), "
                f"with a in [{box['a'][0]}, {box['a'][1]}], b in [{box['b'][0]}, {box['b'][1]}]; "
                f"every iterate lies in its recorded set.")
    return (f"{head} has its iterates z_0 ... z_{st['steps']} in the recorded sets, the last with a in [{box['a'][0]}, "
            f"{box['a'][1]}], b in [{box['b'][0]}, {box['b'][1]}]; the trainer's rule ({rule}) is not reached "
            f"by the proof.")


def _statement(chain: CertifiedTraining) -> dict:
    st = {"start": [double_text(chain.a0), double_text(chain.b0)], "eta": double_text(chain.eta),
          "steps": chain.steps, "final_box": _box(chain.hulls[-1]),
          "stop": {"b_target": None if chain.b_target is None else double_text(chain.b_target),
                   "max_steps": chain.max_steps,
                   "t_max": None if chain.t_max is None else double_text(chain.t_max)},
          "stopped_because": chain.stopped_because if chain.proved else None, "estimator": "one-head"}
    st["text"] = statement_text(st, "proved" if chain.proved else "partial")
    return st


def chain_records(chain: CertifiedTraining) -> list:
    """One record a step: {"k", "c", "A", "r", "box"}, every double as its exact hexadecimal string (float.hex)."""
    records = []
    for k in range(chain.steps + 1):
        c, A, R, Z = chain.centres[k], chain.frames[k], chain.boxes[k], chain.hulls[k]
        records.append({"k": k, "c": [float(c[0]).hex(), float(c[1]).hex()],
                        "A": [[float(v).hex() for v in A[0]], [float(v).hex() for v in A[1]]],
                        "r": [[float(v).hex() for v in R[0]], [float(v).hex() for v in R[1]]],
                        "box": {"a": [float(v).hex() for v in Z[0]], "b": [float(v).hex() for v in Z[1]]}})
    return records


def float64_section(chain: CertifiedTraining, float_run: dict | None) -> dict | None:
    """The float64 trainer's iterates against the hulls (``float_run``: {"a", "b", "steps", "stopped_because",
    "method"}), as the certificate records it; None without a float run."""
    if float_run is None:
        return None
    d = float_distances(chain, float_run["a"], float_run["b"])
    return {"method": float_run["method"], "steps": int(float_run["steps"]),
            "stopped_because": str(float_run["stopped_because"]),
            "final": [repr(float(float_run["a"][-1])), repr(float(float_run["b"][-1]))],
            "steps_compared": d["steps_compared"], "inside_hull": d["inside"],
            "max_distance": repr(d["max_distance"]), "max_distance_step": d["max_distance_step"],
            "max_relative_distance": repr(d["max_relative_distance"]),
            "note": "the float64 run rounds every step; it is not the exact map. Informative, not part of the "
                    "statement (the re-check recomputes it on request)"}


def training_certificate(chain: CertifiedTraining, corpus_info: dict, *, float_run: dict | None = None,
                         eta_rule: str = "", seconds: dict | None = None, versions: dict | None = None) -> dict:
    """The certificate of a :class:`~stumpcheck.numerics.corpus.certified_run.chain.CertifiedTraining`.

    ``corpus_info`` must hold the corpus's ``sha256`` (:func:`stumpcheck.numerics.corpus.checkpoint.corpus_fingerprint`),
    ``m`` and ``n``; ``float_run`` the float64 trainer's trajectory (every step) for the comparison."""
    status = "proved" if chain.proved else "partial"
    document = {"format": FORMAT, "status": status, "statement": _statement(chain), "corpus": dict(corpus_info),
                "end": {"stopped_because": chain.stopped_because},
                "float64_run": float64_section(chain, float_run), "eta_rule": str(eta_rule),
                "arithmetic": ARITHMETIC, "settings": dict(chain.settings),
                "seconds": seconds or {"wall": round(chain.seconds, 2)}, "versions": versions or {},
                "chain": chain_records(chain)}
    document["digest"] = digest(document)
    return document
