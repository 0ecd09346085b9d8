"""The certificate of C9's descent proof on a corpus (format ``stumpcheck-descent-certificate/1``) and its re-check.

It records the ``corpus`` (m, n, seed, prior, sampler name and the sha256 of its arrays), the ``run`` (start,
η, steps, estimator), the recorded ``iterates`` (float64, written by JSON's shortest round-trip repr, so read
back exactly), per step the number of segment ``pieces`` and the bound M_k of λ_max(∇²L̂) over them
(``curvature``, doubles rounded up), ``M``, ``bound`` = 2/M rounded down, ``arithmetic`` (the fast layer's
assumptions), the ``statement`` and ``digest`` (sha256 of the rest: integrity only).

:func:`recheck_descent` trusts none of it: it refuses fields the format does not define, checks the sizes
first and the digest, checks the corpus' hash, re-runs the proof of
:func:`stumpcheck.numerics.corpus.descent.certify_descent` with the recorded pieces (the recomputed M_k must be
the recorded doubles: an edited bound is rejected), requires every step proved and η < 2/M, and derives the
statement from what it re-proved; the document's must be that one. A re-run of GD from the recorded start is
compared with the recorded iterates and the result given as a note (bit-identical on the machine that wrote
it; the proof is about the recorded iterates either way).
"""

from __future__ import annotations

import math

import numpy as np

from stumpcheck.numerics.precision import InputError

__all__ = ["DESCENT_FORMAT", "descent_certificate", "recheck_descent", "is_descent_certificate", "descent_statement"]

DESCENT_FORMAT = "stumpcheck-descent-certificate/1"
FIELDS = {"format", "statement", "corpus", "run", "iterates", "pieces", "curvature", "M", "bound", "arithmetic",
          "digest"}
CORPUS_FIELDS = {"m", "n", "seed", "prior", "sampler", "fingerprint"}
RUN_FIELDS = {"a0", "b0", "eta", "steps", "estimator"}
#: the most steps a certificate may hold
MAX_STEPS = 200_000


def is_descent_certificate(document) -> bool:
    return isinstance(document, dict) and document.get("format") == DESCENT_FORMAT


def descent_statement(corpus: dict, run: dict, proof) -> str:
    """What the descent proof states, from the corpus, the run and the proof (writer and re-check alike)."""
    return (f"on the corpus m={corpus['m']}, n={corpus['n']} (sha256 {corpus['fingerprint'][:16]}…), for the "
            f"{proof.steps} recorded steps of one-head GD from ({run['a0']!r}, {run['b0']!r}) at eta = {run['eta']!r}: "
            f"lambda_max(Hess L̂) <= M = {proof.M!r} on boxes holding every step's segment (recorded and exact), "
            f"eta < 2/M = {proof.bound!r}, L̂(z_k+1) < L̂(z_k) at every recorded step, and the exact step from each "
            "z_k lowers L̂ by at least eta(1 - eta M_k/2)|grad L̂(z_k)|^2 > 0")


def _arithmetic() -> dict:
    from stumpcheck.numerics.certified.fast.corpus import ASSUMPTIONS

    return {"fast_layer": dict(ASSUMPTIONS),
            "scalars": "python-flint arb at 128 bits; boxes rounded outward to doubles",
            "lemma": "L̂(z + d) <= L̂(z) + grad L̂(z)·d + (M_k/2)|d|² when lambda_max(Hess L̂) <= M_k on [z, z + d]"}


def descent_certificate(x, theta, corpus: dict, run, eta: float, proof) -> dict:
    """The certificate of a proved :class:`~stumpcheck.numerics.corpus.descent.DescentProof` of the run ``run`` (a
    :class:`~stumpcheck.numerics.corpus.gd.TrainResult`) on the corpus (x, θ); ``corpus`` its m, n, seed, prior and
    sampler name."""
    from stumpcheck.numerics.certified.certificates.lemma_certificate import digest
    from stumpcheck.numerics.corpus.checkpoint import corpus_fingerprint

    if not proof.proved:
        raise ArithmeticError("the descent proof did not close; no certificate")
    corpus_record = {**{k: corpus[k] for k in ("m", "n", "seed", "sampler")}, "prior": [float(v) for v in corpus["prior"]],
                     "fingerprint": corpus_fingerprint(x, theta)}
    a, b = run.trajectory["a"], run.trajectory["b"]
    run_record = {"a0": float(a[0]), "b0": float(b[0]), "eta": float(eta), "steps": int(a.size - 1),
                  "estimator": "one-head"}
    document = {"format": DESCENT_FORMAT, "statement": descent_statement(corpus_record, run_record, proof),
                "corpus": corpus_record, "run": run_record,
                "iterates": {"a": [float(v) for v in a], "b": [float(v) for v in b]},
                "pieces": list(proof.pieces), "curvature": list(proof.curvature), "M": proof.M, "bound": proof.bound,
                "arithmetic": _arithmetic()}
    document["digest"] = digest(document)
    return document


def _float(value, what: str) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        raise InputError(f"{what} must be a finite number")
    return float(value)


def _int(value, what: str, low: int, high: int) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
        raise InputError(f"{what} must be an integer in [{low}, {high}]")
    return value


def _check_limits(document: dict) -> None:
    """InputError (one line) for anything beyond the limits or of the wrong shape, before any work."""
    run, iterates = document.get("run"), document.get("iterates")
    if not isinstance(run, dict) or not isinstance(iterates, dict) or not isinstance(document.get("corpus"), dict):
        raise InputError("a descent certificate needs the records corpus, run and iterates")
    steps = _int(run.get("steps"), "run.steps", 1, MAX_STEPS)
    for name in ("a", "b"):
        values = iterates.get(name)
        if not isinstance(values, list) or len(values) != steps + 1:
            raise InputError(f"iterates.{name} must hold steps + 1 = {steps + 1} numbers")
    for name in ("pieces", "curvature"):
        if not isinstance(document.get(name), list) or len(document[name]) != steps:
            raise InputError(f"{name} must hold one entry per step ({steps})")


def _corpus(record: dict, x, theta):
    """The corpus the certificate names: (x, θ) given, or regenerated from its seed (uniform sampler only)."""
    from stumpcheck.numerics.corpus.corpora import make_corpus

    if x is not None:
        return x, theta
    if record.get("sampler") != "uniform_sampler":
        raise InputError("this corpus was not drawn with the uniform sampler: give the corpus file (--corpus)")
    prior = record.get("prior")
    if not (isinstance(prior, list) and len(prior) == 2):
        raise InputError("corpus.prior must be a pair")
    corpus = make_corpus(_int(record.get("m"), "corpus.m", 1, 2**20), _int(record.get("n"), "corpus.n", 1, 2**20),
                         seed=_int(record.get("seed"), "corpus.seed", 0, 2**63 - 1),
                         prior=(_float(prior[0], "prior"), _float(prior[1], "prior")))
    return corpus.x, corpus.theta


def recheck_descent(document, x=None, theta=None) -> tuple:
    """(ok, message, statement, notes): re-check a descent certificate (module doc); ``x``, ``theta`` the corpus,
    or None to regenerate it from the recorded seed."""
    from stumpcheck.numerics.certified.certificates.lemma_certificate import digest
    from stumpcheck.numerics.corpus.checkpoint import corpus_fingerprint
    from stumpcheck.numerics.corpus.descent import certify_descent
    from stumpcheck.numerics.corpus.gd import train_gd

    if not is_descent_certificate(document):
        raise InputError(f"not a descent certificate (format {DESCENT_FORMAT})")
    _check_limits(document)
    if document.get("digest") != digest(document):
        return False, "the certificate was edited after it was written (its digest does not match)", None, []
    for record, fields, name in ((document, FIELDS, "the certificate"), (document["corpus"], CORPUS_FIELDS, "corpus"),
                                 (document["run"], RUN_FIELDS, "run")):
        if set(record) != fields:
            return False, f"{name} must have exactly the fields {', '.join(sorted(fields))}", None, []
    if set(document["iterates"]) != {"a", "b"}:
        return False, "iterates must have exactly the fields a, b", None, []
    if document["run"]["estimator"] != "one-head":
        return False, "the proof covers the one-head estimator only", None, []
    if document.get("arithmetic") != _arithmetic():
        return False, "the arithmetic record is not this code's (the fast layer's assumptions differ)", None, []
    x, theta = _corpus(document["corpus"], x, theta)
    if corpus_fingerprint(x, theta) != document["corpus"]["fingerprint"]:
        return False, "the corpus is not the one the certificate names (its sha256 differs)", None, []
    run = document["run"]
    a = np.array([_float(v, "iterates.a") for v in document["iterates"]["a"]])
    b = np.array([_float(v, "iterates.b") for v in document["iterates"]["b"]])
    eta = _float(run["eta"], "run.eta")
    if a[0] != _float(run["a0"], "run.a0") or b[0] != _float(run["b0"], "run.b0"):
        return False, "the iterates do not start at the recorded start", None, []
    proof = certify_descent(x, theta, a, b, eta, pieces=document["pieces"])
    if proof.curvature != [_float(v, "curvature") for v in document["curvature"]]:
        return False, "a recorded bound M_k is not the one recomputed here (edited)", None, []
    if not proof.proved:
        return False, (f"the re-proof does not close: eta < 2/M {proof.eta_below_bound}, exact steps "
                       f"{proof.exact_step_decreases}/{proof.steps}, recorded iterates "
                       f"{proof.iterate_decreases}/{proof.steps}"), None, []
    if document.get("M") != proof.M or document.get("bound") != proof.bound:
        return False, "M or 2/M is not the one the re-proved bounds give", None, []
    statement = descent_statement(document["corpus"], run, proof)
    if document.get("statement") != statement:
        return False, "the statement is not the one the re-proof gives", None, []
    again = train_gd(x, theta, a0=float(a[0]), b0=float(b[0]), eta=eta, steps=int(run["steps"]))
    same = np.array_equal(again.trajectory["a"], a) and np.array_equal(again.trajectory["b"], b)
    notes = ["a GD run from the recorded start reproduces the recorded iterates bit for bit" if same else
             "a GD run here does not reproduce the recorded iterates bit for bit (another machine's arithmetic?); "
             "the proof is about the recorded iterates"]
    return True, f"{proof.steps} steps re-proved over {proof.boxes} boxes; {proof.seconds:.1f} s CPU", statement, notes
