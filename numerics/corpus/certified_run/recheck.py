"""Re-checking a training certificate (``stumpcheck-training-certificate/1``) against its corpus.

:func:`recheck_training` trusts none of the file. It checks the digest, that the document has exactly the
known fields, the corpus's sha256, that the ``arithmetic`` record is this fast layer's (the assumptions
word for word; the machine's libc, numba and architecture may differ and are then named in a note), and
that every number is a double written exactly. Then it re-derives the chain from the start:

1. record 0 is the start itself: c₀ = (a₀, b₀), A₀ = I, R₀ = 0;
2. every record's ``box`` is the hull c_k + A_k·R_k recomputed in outward-rounded intervals (exactly the
   recorded doubles), with b > 0;
3. every step k → k+1 is proved again: the fast layer's [∇L̂] at c_k and [∇²L̂] over the hull of X_k
   (recomputed, steps in parallel: :mod:`~stumpcheck.numerics.corpus.certified_run.batch`), the Lohner image
   R′ in the recorded frame (c_{k+1}, A_{k+1}) (:mod:`~stumpcheck.numerics.corpus.certified_run.lohner`),
   and R′ ⊂ R_{k+1} (so a narrowed R_{k+1}, hence a narrowed box, is rejected);
4. the stopping rule: it stops no point of X_k for k < K and every point of X_K ("proved"), or not every
   point of X_K ("partial"); ``final_box`` is the hull of X_K, ``steps`` is K, ``text`` the derived sentence;
5. the fast layer against Arb (python-flint, 128 bits): Arb's L̂, ∇L̂ at the recorded centre of the
   last step (``arb="last"``, the default), or of every step (``arb="all"``), lie inside the fast
   layer's point enclosures that the steps used.

The ``float64_run`` section is informative (not part of the statement): only its fields are checked,
unless ``float64=True``, which recomputes it (the float64 trainer from the same start, with the same
step and rule) and compares; a difference is then a note, not a failure (another machine's float64 run
may differ in its last bits).
"""

from __future__ import annotations

from fractions import Fraction

import numpy as np

from stumpcheck.numerics.certified.certificates.lemma_certificate import digest
from stumpcheck.numerics.certified.certificates.limits import check_number_text
from stumpcheck.numerics.certified.enclosures.corpus_arb import corpus_gradient_arb
from stumpcheck.numerics.corpus.certified_run.batch import batch_enclosures
from stumpcheck.numerics.corpus.certified_run.certificate import (ARITHMETIC, ENVIRONMENT_KEYS, float64_section,
                                                                  is_training_certificate, statement_text)
from stumpcheck.numerics.corpus.certified_run.chain import MAX_CERTIFIED_STEPS, CertifiedTraining, stop_reason
from stumpcheck.numerics.corpus.certified_run.lohner import gd_point_image, hull_box, image_coordinates
from stumpcheck.numerics.corpus.checkpoint import corpus_fingerprint
from stumpcheck.numerics.precision import InputError

__all__ = ["recheck_training", "RecheckFailure"]

_TOP = {"format", "status", "statement", "corpus", "end", "float64_run", "eta_rule", "arithmetic", "settings",
        "seconds", "versions", "chain", "digest"}
_STATEMENT = {"start", "eta", "steps", "final_box", "stop", "stopped_because", "estimator", "text"}
_STOP = {"b_target", "max_steps", "t_max"}
_RECORD = {"k", "c", "A", "r", "box"}
_CORPUS = {"sha256", "m", "n", "seed", "file"}
_SETTINGS = {"max_relative_width", "estimator"}
_FLOAT64 = {"method", "steps", "stopped_because", "final", "steps_compared", "inside_hull", "max_distance",
            "max_distance_step", "max_relative_distance", "note"}
_CHUNK = 64   # steps re-enclosed per batch (memory: 2·64·m·12 doubles)


class RecheckFailure(Exception):
    """A fault of the certificate (the re-check's FAIL), as opposed to bad input."""


def _keys(obj, allowed: set, where: str, required: set | None = None) -> None:
    if not isinstance(obj, dict):
        raise RecheckFailure(f"{where} must be an object")
    unknown = set(obj) - allowed
    missing = (allowed if required is None else required) - set(obj)
    if unknown:
        raise RecheckFailure(f"{where} has unknown field(s) {', '.join(sorted(map(str, unknown)))}")
    if missing:
        raise RecheckFailure(f"{where} lacks the field(s) {', '.join(sorted(missing))}")


def _double(text, what: str) -> float:
    try:
        check_number_text(text, what)
        q = Fraction(text)
    except (InputError, ValueError, ZeroDivisionError) as exc:
        raise RecheckFailure(f"{what}: {exc}") from None
    value = float(q)
    if Fraction(value) != q:
        raise RecheckFailure(f"{what} = {text[:40]} is not a double written exactly")
    return value


def _hex(text, what: str) -> float:
    """A double from its canonical float.hex string (anything else is refused)."""
    if not isinstance(text, str) or len(text) > 30:
        raise RecheckFailure(f"{what} must be a double in hexadecimal (float.hex)")
    try:
        value = float.fromhex(text)
    except (ValueError, OverflowError):
        raise RecheckFailure(f"{what} = {text!r} is not a hexadecimal double") from None
    if value.hex() != text or value != value or value in (float("inf"), float("-inf")):
        raise RecheckFailure(f"{what} = {text!r} is not a finite double in float.hex's form")
    return value


def _pair(obj, what: str, read=None) -> tuple[float, float]:
    """[lo, hi] read by ``read`` (decimal doubles by default; ``_hex`` for float.hex strings), lo <= hi."""
    read = _double if read is None else read
    if not isinstance(obj, list) or len(obj) != 2:
        raise RecheckFailure(f"{what} must be [lo, hi]")
    lo, hi = read(obj[0], what), read(obj[1], what)
    if not lo <= hi:
        raise RecheckFailure(f"{what} has lo > hi")
    return lo, hi


def _int(value, what: str, minimum: int = 0) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < minimum:
        raise RecheckFailure(f"{what} must be an integer >= {minimum}")
    return value


def _check_arithmetic(record, notes: list) -> None:
    if not isinstance(record, dict) or set(record) != set(ARITHMETIC):
        raise RecheckFailure("the arithmetic record is missing or not this fast layer's (its fields differ)")
    for key, value in ARITHMETIC.items():
        if key == "fast_layer":
            continue
        if record[key] != value:
            raise RecheckFailure(f"the arithmetic record's {key!r} is not this re-check's")
    fast = record["fast_layer"]
    if not isinstance(fast, dict) or set(fast) != set(ARITHMETIC["fast_layer"]):
        raise RecheckFailure("the arithmetic record's fast_layer assumptions are not this fast layer's")
    for key, value in ARITHMETIC["fast_layer"].items():
        if key in ENVIRONMENT_KEYS:
            if not isinstance(fast[key], str):
                raise RecheckFailure(f"the arithmetic record's fast_layer {key!r} must be a string")
            if fast[key] != value:
                notes.append(f"the proof ran with {key} {fast[key]!r}, this re-check with {value!r}")
        elif fast[key] != value:
            raise RecheckFailure(f"the arithmetic record's fast_layer assumption {key!r} is not this fast layer's")


def _parse_chain(records, steps: int):
    if not isinstance(records, list) or len(records) != steps + 1:
        raise RecheckFailure(f"chain must be a list of steps + 1 = {steps + 1} records")
    C = np.empty((steps + 1, 2))
    A = np.empty((steps + 1, 2, 2))
    R = np.empty((steps + 1, 2, 2))
    H = np.empty((steps + 1, 2, 2))
    for k, rec in enumerate(records):
        _keys(rec, _RECORD, f"chain record {k}")
        if rec["k"] != k or isinstance(rec["k"], bool):
            raise RecheckFailure(f"chain record {k} is numbered {rec['k']!r}")
        if not (isinstance(rec["c"], list) and len(rec["c"]) == 2 and isinstance(rec["A"], list)
                and len(rec["A"]) == 2 and all(isinstance(row, list) and len(row) == 2 for row in rec["A"])
                and isinstance(rec["r"], list) and len(rec["r"]) == 2):
            raise RecheckFailure(f"chain record {k} is malformed")
        C[k] = [_hex(v, f"record {k} c") for v in rec["c"]]
        A[k] = [[_hex(v, f"record {k} A") for v in row] for row in rec["A"]]
        R[k] = [_pair(row, f"record {k} r", _hex) for row in rec["r"]]
        _keys(rec["box"], {"a", "b"}, f"chain record {k} box")
        H[k] = [_pair(rec["box"]["a"], f"record {k} box a", _hex), _pair(rec["box"]["b"], f"record {k} box b", _hex)]
    return C, A, R, H


def _parse_statement(st):
    _keys(st, _STATEMENT, "statement")
    _keys(st["stop"], _STOP, "statement stop")
    if not (isinstance(st["start"], list) and len(st["start"]) == 2):
        raise RecheckFailure("statement start must be [a0, b0]")
    a0, b0 = (_double(v, "start") for v in st["start"])
    eta = _double(st["eta"], "eta")
    stop = st["stop"]
    b_target = None if stop["b_target"] is None else _double(stop["b_target"], "b_target")
    t_max = None if stop["t_max"] is None else _double(stop["t_max"], "t_max")
    max_steps = None if stop["max_steps"] is None else _int(stop["max_steps"], "max_steps")
    steps = _int(st["steps"], "steps")
    if not (b0 > 0 and eta > 0 and (b_target is None or b_target > 0) and (t_max is None or t_max > 0)):
        raise RecheckFailure("the statement's b0, eta, b_target, t_max must be > 0")
    if b_target is None and t_max is None and max_steps is None:
        raise RecheckFailure("the statement has no stopping rule")
    if steps > MAX_CERTIFIED_STEPS or st["estimator"] != "one-head":
        raise RecheckFailure(f"steps must be at most {MAX_CERTIFIED_STEPS} and the estimator one-head")
    _keys(st["final_box"], {"a", "b"}, "statement final_box")
    final = (_pair(st["final_box"]["a"], "final_box a"), _pair(st["final_box"]["b"], "final_box b"))
    return a0, b0, eta, b_target, max_steps, t_max, steps, final


def _check_steps(x, theta, C, A, R, H, eta, threads, progress):
    """Every step k → k+1 re-proved (module docstring, 3.); returns the point enclosures [∇L̂](c_k) used."""
    steps = C.shape[0] - 1
    grads = np.empty((steps, 3, 2))
    for start in range(0, steps, _CHUNK):
        end = min(steps, start + _CHUNK)
        span = end - start
        boxes = np.empty((2 * span, 4))
        boxes[:span, 0] = boxes[:span, 1] = C[start:end, 0]
        boxes[:span, 2] = boxes[:span, 3] = C[start:end, 1]
        boxes[span:] = H[start:end].reshape(span, 4)
        flags = np.arange(2 * span) >= span
        enc = batch_enclosures(x, theta, boxes, flags, threads=threads)
        for i in range(span):
            k = start + i
            grads[k] = enc[i, :3]
            image = gd_point_image(C[k], enc[i, 1:3], eta)
            hess = enc[span + i, 3:]
            if not (np.all(np.isfinite(image)) and np.all(np.isfinite(hess))):
                raise RecheckFailure(f"step {k} -> {k + 1}: an enclosure is not finite")
            derived, ok = image_coordinates(image, hess, eta, A[k], R[k], C[k + 1], A[k + 1])
            if not ok:
                raise RecheckFailure(f"step {k} -> {k + 1}: the recorded frame A_{k + 1} is not certainly invertible")
            if not (np.all(derived[:, 0] >= R[k + 1, :, 0]) and np.all(derived[:, 1] <= R[k + 1, :, 1])):
                raise RecheckFailure(f"step {k} -> {k + 1}: the image of X_{k} is not inside the recorded X_{k + 1} "
                                     f"(recorded r {R[k + 1].tolist()}, derived {derived.tolist()})")
        if progress is not None:
            progress(end / max(steps, 1))
    return grads


def _arb_check(x, theta, C, grads, mode: str) -> int:
    """Arb's (L̂, ∇L̂) at the chosen centres inside the fast enclosures; the number of centres checked."""
    steps = grads.shape[0]
    if mode == "none" or steps == 0:
        return 0
    chosen = range(steps) if mode == "all" else [steps - 1]
    for k in chosen:
        values = corpus_gradient_arb(x, theta, float(C[k, 0]), float(C[k, 1]), prec=128)
        for name, value, (lo, hi) in zip(("L_hat", "dL/da", "dL/db"), values, grads[k]):
            if not (value.lower() >= lo and value.upper() <= hi):
                raise RecheckFailure(f"step {k}: Arb's {name} at the centre c_{k} is not inside the fast layer's "
                                     "enclosure")
    return len(chosen)


def _float64_note(document, x, theta, chain: CertifiedTraining, notes: list, recompute: bool) -> None:
    section = document["float64_run"]
    if section is None:
        return
    _keys(section, _FLOAT64, "float64_run")
    from stumpcheck.numerics.corpus.gd import train_gd

    if section["method"] not in ("dense", "pruned"):
        raise RecheckFailure("float64_run method must be dense or pruned")
    if not recompute:
        return
    run = train_gd(x, theta, a0=chain.a0, b0=chain.b0, eta=chain.eta, steps=chain.max_steps, b_target=chain.b_target,
                   t_max=chain.t_max, method=section["method"])
    derived = float64_section(chain, {"a": run.trajectory["a"], "b": run.trajectory["b"], "steps": run.steps,
                                      "stopped_because": run.stopped_because, "method": section["method"]})
    if derived != section:
        notes.append("the float64 run recomputed here differs from the recorded one (informative only): "
                     f"recorded max distance {section.get('max_distance')}, here {derived['max_distance']}")
    else:
        notes.append(f"float64 run recomputed: {derived['inside_hull']} of {derived['steps_compared']} iterates inside "
                     f"their hulls, max distance {float(derived['max_distance']):.3g}")


def recheck_training(document, x, theta, *, arb: str = "last", threads=None, progress=None, float64: bool = False):
    """(ok, reason, derived statement or None, notes) for a training certificate and the corpus (x, θ); ``arb``:
    "last" (Arb at the last step's centre), "all" or "none"; ``float64``: recompute the float64 run too
    (module docstring)."""
    if arb not in ("last", "all", "none"):
        raise InputError(f"arb must be 'last', 'all' or 'none', got {arb!r}")
    notes: list = []
    try:
        if not is_training_certificate(document):
            raise RecheckFailure("not a training certificate")
        if document.get("digest") != digest(document):
            raise RecheckFailure("the certificate was edited after it was written (its digest does not match)")
        _keys(document, _TOP, "the certificate")
        _keys(document["corpus"], _CORPUS, "corpus", required={"sha256", "m", "n"})
        _keys(document["settings"], _SETTINGS, "settings")
        _keys(document["end"], {"stopped_because"}, "end")
        if not (isinstance(document["eta_rule"], str) and isinstance(document["seconds"], dict)
                and isinstance(document["versions"], dict) and isinstance(document["end"]["stopped_because"], str)):
            raise RecheckFailure("eta_rule and end.stopped_because must be text, seconds and versions objects")
        if document["corpus"]["sha256"] != corpus_fingerprint(x, theta):
            raise RecheckFailure("the corpus given is not the certificate's (sha256 differs)")
        _check_arithmetic(document["arithmetic"], notes)
        status = document["status"]
        if status not in ("proved", "partial"):
            raise RecheckFailure(f"unknown status {status!r}")
        st = document["statement"]
        a0, b0, eta, b_target, max_steps, t_max, steps, final = _parse_statement(st)
        C, A, R, H = _parse_chain(document["chain"], steps)
        if not (C[0].tolist() == [a0, b0] and A[0].tolist() == [[1.0, 0.0], [0.0, 1.0]] and not R[0].any()):
            raise RecheckFailure("chain record 0 is not the start {(a0, b0)}")
        for k in range(steps + 1):
            derived = hull_box(C[k], A[k], R[k])
            if not np.array_equal(derived, H[k]):
                raise RecheckFailure(f"chain record {k}: the box is not the hull of c + A r (recorded "
                                     f"{H[k].tolist()}, derived {derived.tolist()})")
            if not derived[1, 0] > 0.0:
                raise RecheckFailure(f"chain record {k}: the box leaves b > 0")
            verdict, rule = stop_reason(k, H[k, 1, 0], H[k, 1, 1], eta=eta, b_target=b_target, max_steps=max_steps,
                                        t_max=t_max)
            if k < steps and verdict != "go":
                raise RecheckFailure(f"the stopping rule may hold at step {k} < steps = {steps} ({rule})")
        if status == "proved" and (verdict != "stop" or rule != st["stopped_because"]):
            raise RecheckFailure(f"the stopping rule does not hold for the whole box at step {steps} "
                                 f"(derived: {verdict}, {rule}; recorded {st['stopped_because']!r})")
        if status == "partial" and (verdict == "stop" or st["stopped_because"] is not None):
            raise RecheckFailure("a partial certificate whose rule holds, or with a stopped_because")
        if (final[0], final[1]) != (tuple(H[-1, 0]), tuple(H[-1, 1])):
            raise RecheckFailure("final_box is not the hull of the last recorded set")
        if st["text"] != statement_text(st, status):
            raise RecheckFailure("the statement's text is not the derived sentence")
        grads = _check_steps(x, theta, C, A, R, H, eta, threads, progress)
        checked = _arb_check(x, theta, C, grads, arb)
        chain = CertifiedTraining(a0=a0, b0=b0, eta=eta, b_target=b_target, max_steps=max_steps, t_max=t_max,
                                  centres=C, frames=A, boxes=R, hulls=H, proved=status == "proved",
                                  stopped_because=st["stopped_because"] or document["end"]["stopped_because"])
        _float64_note(document, x, theta, chain, notes, float64)
    except RecheckFailure as exc:
        return False, str(exc), None, notes
    except (KeyError, TypeError, IndexError, ValueError) as exc:
        return False, f"malformed certificate: {exc}", None, notes
    derived = {k: st[k] for k in ("start", "eta", "steps", "final_box", "stop", "stopped_because", "estimator")}
    derived["text"] = statement_text(derived, status)
    reason = (f"all {steps} steps re-proved from the start; Arb checked the fast layer at {checked} centre(s)")
    if status != "proved":
        ended = document["end"]["stopped_because"]
        return False, f"{reason}, but the proof stopped before the trainer's rule held: {ended}", derived, notes
    return True, reason, derived, notes
