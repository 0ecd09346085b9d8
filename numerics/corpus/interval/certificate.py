"""The corpus-interval certificate (format ``stumpcheck-interval-certificate/1``): writing and re-checking.

The certificate states, for one corpus (sha256 of its arrays and its shape) and one constant step η:

    GD z ↦ z − η∇L̂(z), started at any point of S = {b_start ≤ b ≤ b_end, A(b) − c₋ ≤ a ≤ A(b) + c₊},
    stays in S and raises b at every step until b ≥ b_end, which it reaches within ``steps`` steps;
    the corpus gradient flow started in S stays in S, with ḃ > 0, while b ≤ b_end.

``statement`` holds b_start, b_end, eta, start (a point of S at b_start: the centre), steps, the
centre's exact nodes and the band; ``leaves`` (last, one a line) the boxes with their fast-layer enclosures and margins
(:mod:`~stumpcheck.numerics.corpus.interval.obligations`); ``arithmetic`` what the proof rests on;
``end`` why the interval ends there; ``digest`` the sha256 of the rest (integrity only).

:func:`recheck_interval` trusts none of it: it checks the corpus hash, that the leaves tile S exactly
(column by column of the grid, in exact rationals), recomputes every leaf's enclosures with the fast
layer (they must be the recorded doubles: a narrowed or edited enclosure is rejected) and its margins
(all > 0, as recorded), recomputes the step bound, and checks the fast layer's centre values against
Arb (:mod:`~stumpcheck.numerics.certified.enclosures.corpus_arb`) at the leaves with the smallest
margins, or at every leaf with ``arb="all"``. It returns the statement it derived.
"""

from __future__ import annotations

from fractions import Fraction

from stumpcheck.numerics.certified.certificates.lemma_certificate import digest
from stumpcheck.numerics.certified.enclosures.corpus_arb import corpus_gradient_arb
from stumpcheck.numerics.certified.fast.corpus_sorted import ASSUMPTIONS as FAST_ASSUMPTIONS
from stumpcheck.numerics.certified.fast.corpus_sorted import CUT, CUT_RANGE, pruning_record, sort_tasks
from stumpcheck.numerics.corpus.interval.centre import Centre, column_after, column_width, columns, on_grid
from stumpcheck.numerics.corpus.interval.obligations import PREC, SharedEnclosures, enclosures, evaluate_box
from stumpcheck.numerics.corpus.interval.prover import step_bound
from stumpcheck.numerics.corpus.checkpoint import corpus_fingerprint

__all__ = ["membership", "FORMAT", "ARITHMETIC", "interval_certificate", "recheck_interval", "is_interval_certificate",
           "statement_text", "MAX_LEAVES"]

FORMAT = "stumpcheck-interval-certificate/1"
#: the score gap beyond which Arb's point check bounds points instead of summing them (corpus_arb)
ARB_PRUNE = 80.0
MAX_LEAVES = 2_000_000
ARITHMETIC = {
    "fast_layer": FAST_ASSUMPTIONS,
    "sheared_boxes": "boxes of (b, mu) are parallelograms a = a' + s*b of (a, b); t = b*(D - s) - a' enclosed over them",
    "margins": f"python-flint arb balls at {PREC} bits from exact rationals and the fast layer's enclosures",
    "gd": "exact-arithmetic gradient descent z -> z - eta*grad(L_hat)(z); the statement is about that map",
    "pruning": pruning_record(CUT),
}


def is_interval_certificate(document) -> bool:
    return isinstance(document, dict) and document.get("format") == FORMAT


def _q(text, what: str) -> Fraction:
    if not isinstance(text, str) or len(text) > 200:
        raise ValueError(f"{what} must be an exact rational written as a string")
    try:
        return Fraction(text)
    except (ValueError, ZeroDivisionError):
        raise ValueError(f"{what} is not an exact rational: {text!r}") from None


def statement_text(st: dict) -> str:
    return (f"For this corpus and the constant step eta = {st['eta']}, gradient descent started anywhere in "
            f"S = {{{st['b_start']} <= b <= {st['b_end']}, A(b) - {st['band']['c_minus']} <= a <= A(b) + "
            f"{st['band']['c_plus']}}} (A piecewise linear through the {len(st['centre']['nodes'])} recorded nodes) "
            f"stays in S and raises b at every step until b >= {st['b_end']}, within at most {st['steps']} "
            f"steps; the corpus gradient flow started in S stays in S with db/dt > 0 while b <= {st['b_end']}.")


def interval_certificate(run, corpus_info: dict, *, eta_rule: str, seconds: dict, versions: dict,
                         start_search: dict | None = None) -> dict:
    """The certificate of an :class:`~stumpcheck.numerics.corpus.interval.prover.IntervalRun`."""
    leaves = list(run.leaves())
    drift = [(Fraction(lf["b"][0]), Fraction(lf["b"][1]), Fraction(lf["drift"])) for lf in leaves]
    steps = step_bound(drift, run.eta)[0] if leaves else 0
    c_minus, c_plus = run.band
    nodes = run.centre.nodes_up_to(2 * run.b_end)
    start_a = run.centre.value(run.b_start)
    statement = {"b_start": str(run.b_start), "b_end": str(run.b_end), "eta": str(run.eta),
                 "start": [str(start_a), str(run.b_start)], "steps": steps,
                 "centre": {"nodes": [[str(b), str(a)] for b, a in nodes],
                            "rule": "A is linear between consecutive nodes and continues with the last slope"},
                 "band": {"c_minus": str(c_minus), "c_plus": str(c_plus)}}
    statement["text"] = statement_text(statement) if leaves else "nothing is proved: no column of S was proved"
    smallest = {}
    for key in ("drift", "inward", "gd"):
        values = [Fraction(lf[key]) for lf in leaves if lf[key] is not None]
        smallest[key] = float(min(values)) if values else None
    document = {"format": FORMAT, "statement": statement, "corpus": corpus_info,
                "proof": {"leaf_count": len(leaves), "columns": len(run.columns),
                          "max_depth": run.max_depth, "smallest_margins": smallest},
                "end": run.failure if run.failure is not None else {"status": "b_max reached", "b_max": str(run.b_max)},
                "eta_rule": eta_rule, "arithmetic": ARITHMETIC, "seconds": seconds, "versions": versions}
    if start_search is not None:
        document["start_search"] = start_search   # how b_start and eta were chosen (not part of the proof)
    document["leaves"] = leaves
    document["digest"] = digest(document)
    return document


def _fail(reason: str):
    return False, reason, None


def _check_tiling(leaves, b_start, b_end, band, centre) -> str | None:
    """None if the leaves tile [b_start, b_end] × [−c₋, c₊] exactly, grid column by column; else why not."""
    c_minus, c_plus = band
    node_bs = [b for b, _ in centre.nodes]
    by_column: dict = {}
    for k, (b0, b1, mu0, mu1) in enumerate(leaves):
        if not (b0 < b1 and mu0 < mu1):
            return f"leaf {k} is empty or reversed"
        if not (-c_minus <= mu0 and mu1 <= c_plus):
            return f"leaf {k} leaves the band [-c_minus, c_plus]"
        if any(b0 < nb < b1 for nb in node_bs):
            return f"leaf {k} straddles a node of the centre"
        col = b0 - b0 % column_width(b0)
        if column_after(col) < b1 or col < b_start or b1 > b_end:
            return f"leaf {k} is not inside one grid column of [b_start, b_end]"
        by_column.setdefault(col, []).append((b0, b1, mu0, mu1))
    for lo, hi in columns(b_start, b_end):
        boxes = by_column.pop(lo, None)
        if not boxes:
            return f"no leaf covers the column b in [{lo}, {hi}]"
        ends = sorted({b for bx in boxes for b in bx[:2]} | {lo, hi})
        if ends[0] != lo or ends[-1] != hi:
            return f"the leaves of column [{lo}, {hi}] leave it"
        for p, q in zip(ends, ends[1:]):
            spans = sorted((m0, m1) for b0, b1, m0, m1 in boxes if b0 <= p and b1 >= q)
            reach = -c_minus
            for m0, m1 in spans:
                if m0 > reach:
                    break
                reach = max(reach, m1)
            if reach < c_plus:
                return f"the leaves do not cover b in [{p}, {q}] for mu above {reach}"
    if by_column:
        return "a leaf lies outside [b_start, b_end]"
    return None


def _parse(document):
    st = document["statement"]
    b_start, b_end, eta = (_q(st[k], k) for k in ("b_start", "b_end", "eta"))
    band = (_q(st["band"]["c_minus"], "c_minus"), _q(st["band"]["c_plus"], "c_plus"))
    nodes = [(_q(b, "node b"), _q(a, "node a")) for b, a in st["centre"]["nodes"]]
    return st, b_start, b_end, eta, band, nodes


def recheck_interval(document, x, theta, *, arb: str = "smallest", threads=None, progress=None):
    """(ok, reason, derived statement dict or None); ``arb``: "smallest" (the leaves with the smallest
    margin of each obligation), "all" (every leaf) or "none"."""
    if not is_interval_certificate(document):
        return _fail("not a corpus-interval certificate")
    if document.get("digest") != digest(document):
        return _fail("the certificate was edited after it was written (its digest does not match)")
    try:
        st, b_start, b_end, eta, band, nodes = _parse(document)
        leaves = document["leaves"]
        if not isinstance(leaves, list) or len(leaves) > MAX_LEAVES:
            return _fail(f"leaves must be a list of at most {MAX_LEAVES} leaves")
        boxes = [(_q(lf["b"][0], "leaf b"), _q(lf["b"][1], "leaf b"), _q(lf["mu"][0], "leaf mu"),
                  _q(lf["mu"][1], "leaf mu")) for lf in leaves]
    except (KeyError, TypeError, IndexError, ValueError) as exc:
        return _fail(f"malformed certificate: {exc}")
    corpus = document.get("corpus", {})
    if corpus.get("sha256") != corpus_fingerprint(x, theta):
        return _fail("the corpus given is not the certificate's (sha256 differs)")
    cut, reason = _pruning(document)
    if reason:
        return _fail(reason)
    if not (eta > 0 and band[0] > 0 and band[1] > 0 and 0 < b_start < b_end and on_grid(b_start) and on_grid(b_end)):
        return _fail("the statement's eta, band or b-range is not valid (eta, c > 0; b_start < b_end on the grid)")
    if not nodes or nodes[0][0] != b_start or any(b1 <= b0 for (b0, _), (b1, _) in zip(nodes, nodes[1:])):
        return _fail("the centre's nodes must start at b_start and increase")
    centre = Centre.from_nodes(nodes)
    if [str(centre.value(b_start)), str(b_start)] != st.get("start"):
        return _fail("the statement's start is not the centre point at b_start")
    reason = _check_tiling(boxes, b_start, b_end, band, centre)
    if reason:
        return _fail(reason)
    drift = []
    shared = None if cut is None else SharedEnclosures(sort_tasks(x, theta), cut=cut, threads=threads)
    for k, (lf, box) in enumerate(zip(leaves, boxes)):
        piece = centre.piece(box[0])
        G, P = enclosures(x, theta, piece, box, threads=threads) if shared is None else shared(piece, box)
        if G != lf["box_enclosure"] or P != lf["centre_enclosure"]:
            return _fail(f"leaf {k} (b in [{box[0]}, {box[1]}]): the recorded enclosures are not the fast layer's")
        res = evaluate_box(G, P, piece, box, band, eta, centre.slopes_over)
        if not res.proved:
            return _fail(f"leaf {k} (b in [{box[0]}, {box[1]}], mu in [{box[2]}, {box[3]}]): an obligation is not proved")
        got = {"drift": str(res.drift), "gd": str(res.gd), "inward": None if res.inward is None else str(res.inward)}
        if any(got[key] != lf.get(key) for key in got):
            return _fail(f"leaf {k}: the recorded margins are not the derived ones")
        drift.append((box[0], box[1], res.drift))
        if progress is not None:
            progress((k + 1) / len(leaves))
    steps = step_bound(drift, eta)[0]
    if steps != st.get("steps"):
        return _fail(f"the statement's step bound {st.get('steps')} is not the derived {steps}")
    reason = _arb_check(leaves, boxes, centre, x, theta, arb)
    if reason:
        return _fail(reason)
    derived = {**{k: st[k] for k in ("b_start", "b_end", "eta", "start", "centre", "band")}, "steps": steps}
    derived["text"] = statement_text(derived)
    return True, "every leaf re-proved; the leaves tile S", derived


def _pruning(document) -> tuple:
    """(cut, None) from the certificate's pruning record, re-derived: the cut within its range, the bound
    the one :func:`~stumpcheck.numerics.certified.fast.corpus_sorted.pruning_bound` gives for it and above
    e^{-cut/(1+gamma_2)} in Arb; (None, None) without a record (a certificate of unsorted enclosures);
    (None, why) if the record is not valid."""
    record = document.get("arithmetic", {}).get("pruning") if isinstance(document.get("arithmetic"), dict) else None
    if record is None:
        return None, None
    try:
        cut, bound = float.fromhex(record["cut"]), float.fromhex(record["bound"])
    except (KeyError, TypeError, ValueError, OverflowError):
        return None, "malformed pruning record (cut and bound must be float.hex strings)"
    if not CUT_RANGE[0] <= cut <= CUT_RANGE[1]:
        return None, f"the pruning cut {cut} lies outside [{CUT_RANGE[0]}, {CUT_RANGE[1]}]"
    if record != pruning_record(cut):
        return None, "the pruning record is not the one its cut gives (bound or rule edited)"
    from flint import arb as _arb, ctx, fmpq

    gamma2 = Fraction(2, 2 ** 53) / (1 - Fraction(2, 2 ** 53))
    exponent = Fraction(cut) / (1 + gamma2)
    with ctx.workprec(PREC):
        if not _arb(bound) > (-_arb(fmpq(exponent.numerator, exponent.denominator))).exp():
            return None, "the pruning bound is not above exp(-cut/(1 + gamma_2)) in Arb"
    return cut, None


def _arb_check(leaves, boxes, centre, x, theta, mode: str) -> str | None:
    """The fast centre enclosures contain Arb's values (at the chosen leaves)."""
    if mode == "none":
        return None
    if mode == "all":
        chosen = range(len(leaves))
    else:
        chosen = sorted({min(range(len(leaves)), key=lambda k: Fraction(leaves[k][key]))
                         for key in ("drift", "gd")} |
                        {min((k for k in range(len(leaves)) if leaves[k]["inward"] is not None),
                             key=lambda k: Fraction(leaves[k]["inward"]), default=0)})
    for k in chosen:
        lf = leaves[k]
        b0, b1, mu0, mu1 = boxes[k]
        bc, muc = (b0 + b1) / 2, (mu0 + mu1) / 2
        values = corpus_gradient_arb(x, theta, centre.value(bc) + muc, bc, prec=PREC, prune=ARB_PRUNE)
        for name, value, (lo, hi) in zip(("L", "L_a", "L_b"), values, lf["centre_enclosure"]):
            if not (value.lower() >= lo and value.upper() <= hi):
                if value.upper() < lo or value.lower() > hi:
                    return f"leaf {k}: Arb's {name} at the centre lies outside the fast enclosure"
                return f"leaf {k}: Arb's {name} at the centre is not resolved inside the fast enclosure"
    return None



def membership(document):
    """``stop(k, a, b)`` for :func:`~stumpcheck.numerics.corpus.gd.train_gd`: None while the iterate (a, b)
    (doubles, taken exactly) lies in the certificate's S, else the sentence that ends the run (left S
    through the band or below b_start; passed b_end, where the statement ends). The certificate is taken
    as written: only its digest is checked here (``stumpcheck recheck`` re-proves it)."""
    if not is_interval_certificate(document) or document.get("digest") != digest(document):
        raise ValueError("not an interval certificate, or edited after it was written (digest)")
    st, b_start, b_end, eta, band, nodes = _parse(document)
    centre = Centre.from_nodes(nodes)

    def stop(k, a, b):
        qa, qb = Fraction(a), Fraction(b)
        if qb > b_end:
            return f"passed b_end = {st['b_end']} of the certified interval at step {k} (b = {b:.8g})"
        if qb < b_start:
            return f"left the certified interval S at step {k}: b = {b:.8g} < b_start = {st['b_start']}"
        mu = qa - centre.value(qb)
        if not -band[0] <= mu <= band[1]:
            return (f"left the certified interval S at step {k}: a - A(b) = {float(mu):.6g} outside "
                    f"[-{st['band']['c_minus']}, {st['band']['c_plus']}] at b = {b:.8g}")
        return None
    return stop
