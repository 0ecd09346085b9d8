"""The corpus-interval certificate (format ``stumpcheck-interval-certificate/1``): writing and re-checking.

The certificate states, for one corpus (sha256 of its arrays and its shape) and one constant step η:

    GD z ↦ z − η∇L̂(z), started at any point of S = {b_start ≤ b ≤ b_end, A(b) − c₋ ≤ a ≤ A(b) + c₊},
    stays in S and raises b at every step until b ≥ b_end, which it reaches within ``steps`` steps;
    the corpus gradient flow started in S stays in S, with ḃ > 0, while b ≤ b_end.

``statement`` holds b_start, b_end, eta, start (a point of S at b_start: the centre), steps, the
centre's exact nodes and the band; ``leaves`` (last, one a line) the boxes with their fast-layer enclosures and margins
(:mod:`~stumpcheck.numerics.corpus.interval.obligations`); ``arithmetic`` what the proof rests on;
``end`` why the interval ends there; ``start_search`` (when b_start or η was searched) how they were chosen
(:mod:`~stumpcheck.numerics.corpus.interval.start`); ``digest`` the sha256 of the rest (integrity only).

:func:`recheck_interval` trusts none of it. Before any leaf is enclosed it checks the limits and fields
(:mod:`~stumpcheck.numerics.corpus.interval.fields`: no field the format does not define, bounded numbers,
``arithmetic`` this version's record, its ``pruning`` record included:
:func:`~stumpcheck.numerics.corpus.interval.fields.pruning_fault`, the cut in range and the bound re-derived in
Arb), the corpus hash and its record (shape, seed and prior of the file given), that the leaves tile S
exactly (column by column of the grid, in exact rationals, their areas summing to the column's: no
overlap). It then recomputes every leaf's enclosures with
the sorted fast layer at the recorded cut, the moments of a b-range shared by its boxes
(:class:`~stumpcheck.numerics.corpus.interval.obligations.SharedEnclosures`; they must be the recorded
doubles: a narrowed or edited enclosure is rejected) and its margins (all > 0, as recorded), recomputes the
step bound, derives ``statement.text`` (it must be the recorded one), recomputes η by the recorded
``eta_rule`` (its halvings included), checks ``proof`` against the leaves, runs the start search's earlier
trials again and checks the rest of its record
(:func:`~stumpcheck.numerics.corpus.interval.start.start_search_fault`), checks the fast
layer's centre values against Arb (:mod:`~stumpcheck.numerics.certified.enclosures.corpus_arb`) at the leaves
with the smallest margins, or at every leaf with ``arb="all"``, and derives ``end`` again
(:func:`end_fault`: the box above b_end where the proof stopped is examined again, with the same
enclosures). It returns the statement it derived.
"""

from __future__ import annotations

from fractions import Fraction

from stumpcheck.numerics.certified.certificates.lemma_certificate import digest
from stumpcheck.numerics.certified.enclosures.corpus_arb import corpus_gradient_arb
from stumpcheck.numerics.certified.fast.corpus_sorted import ASSUMPTIONS as FAST_ASSUMPTIONS
from stumpcheck.numerics.certified.fast.corpus_sorted import CUT, pruning_record, sort_tasks
from stumpcheck.numerics.corpus.interval.centre import (HALF_CURVATURE_RULE, Centre, NoPositiveCurvature,
                                                        column_after, column_width, columns, eta_half_curvature,
                                                        on_grid)
from stumpcheck.numerics.corpus.interval.fields import (MAX_B, MAX_NODES, MIN_B, arithmetic_fault, corpus_fault,
                                                        eta_rule_fault, exact, proof_fault, pruning_fault, shape_fault)
from stumpcheck.numerics.corpus.interval.obligations import PREC, SharedEnclosures, evaluate_box
from stumpcheck.numerics.corpus.interval.prover import step_bound
from stumpcheck.numerics.corpus.checkpoint import corpus_fingerprint
from stumpcheck.numerics.precision import InputError

__all__ = ["membership", "FORMAT", "ARITHMETIC", "interval_certificate", "recheck_interval", "is_interval_certificate",
           "statement_text", "end_fault", "MAX_LEAVES"]

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
        document["start_search"] = start_search   # how b_start and eta were chosen (re-derived by the re-check)
    document["leaves"] = leaves
    document["digest"] = digest(document)
    return document


def _fail(reason: str):
    return False, reason, None


def _check_tiling(leaves, b_start, b_end, band, centre) -> str | None:
    """None if the leaves tile [b_start, b_end] × [−c₋, c₊] exactly, grid column by column; else why not.

    Each column's leaves must cover it and their areas sum to its area (so their interiors are disjoint: a
    repeated or overlapping leaf is refused here, before any leaf's enclosures are recomputed)."""
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
        if sum((b1 - b0) * (m1 - m0) for b0, b1, m0, m1 in boxes) > (hi - lo) * (c_minus + c_plus):
            return f"the leaves of column [{lo}, {hi}] overlap (their areas exceed the column's)"
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
    b_start, b_end, eta = (exact(st[k], k) for k in ("b_start", "b_end", "eta"))
    band = (exact(st["band"]["c_minus"], "c_minus"), exact(st["band"]["c_plus"], "c_plus"))
    nodes = st["centre"]["nodes"]
    if not isinstance(nodes, list) or len(nodes) > MAX_NODES:
        raise ValueError(f"the centre must be a list of at most {MAX_NODES} nodes")
    nodes = [(exact(b, "node b"), exact(a, "node a")) for b, a in nodes]
    return st, b_start, b_end, eta, band, nodes


def _limits(document):
    """(statement, b_start, b_end, eta, band, nodes, leaf boxes) after the limits; a reason string if refused."""
    if not isinstance(document.get("statement"), dict) or not isinstance(document.get("leaves"), list):
        return "malformed certificate: it needs a statement object and a list of leaves"
    leaves = document["leaves"]
    if len(leaves) > MAX_LEAVES:
        return f"leaves must be a list of at most {MAX_LEAVES} leaves"
    fault = shape_fault(document)
    if fault:
        return fault
    try:
        st, b_start, b_end, eta, band, nodes = _parse(document)
        boxes = [(exact(lf["b"][0], "leaf b"), exact(lf["b"][1], "leaf b"), exact(lf["mu"][0], "leaf mu"),
                  exact(lf["mu"][1], "leaf mu")) for lf in leaves]
        for lf in leaves:
            for key in ("drift", "gd", "inward"):
                if lf[key] is not None or key != "inward":
                    exact(lf[key], f"a leaf's {key} margin")
    except (KeyError, TypeError, IndexError, ValueError) as exc:
        return f"malformed certificate: {str(exc)[:200]}"
    if isinstance(st.get("steps"), bool) or not isinstance(st.get("steps"), int):
        return "malformed certificate: the statement's steps must be an int"
    valid = eta > 0 and band[0] > 0 and band[1] > 0 and 0 < b_start < b_end
    if valid and not (MIN_B <= b_start and b_end <= MAX_B and eta <= 10 ** 30
                      and all(Fraction(1, 1000) <= c <= 10 for c in band)):
        return (f"the statement is beyond the limits of a re-check: b in [{MIN_B}, {MAX_B}], eta <= 1e30, "
                "c in [0.001, 10]")
    if not (valid and on_grid(b_start) and on_grid(b_end)):
        return "the statement's eta, band or b-range is not valid (eta, c > 0; b_start < b_end on the grid)"
    return st, b_start, b_end, eta, band, nodes, boxes


def recheck_interval(document, x, theta, *, arb: str = "smallest", threads=None, progress=None,
                     corpus_meta: dict | None = None):
    """(ok, reason, derived statement dict or None); ``arb``: "smallest" (the leaves with the smallest
    margin of each obligation), "all" (every leaf) or "none". ``corpus_meta``: the corpus file's ``seed``
    and ``prior`` (:class:`~stumpcheck.numerics.corpus.corpora.Corpus`), checked against the certificate's
    corpus record; without it they are not checked, and the reason says so.

    Before any leaf is enclosed: the limits and fields (:mod:`~stumpcheck.numerics.corpus.interval.fields`),
    the corpus, the statement and its text, the arithmetic record with its pruning record, the tiling."""
    if not is_interval_certificate(document):
        return _fail("not a corpus-interval certificate")
    if document.get("digest") != digest(document):
        return _fail("the certificate was edited after it was written (its digest does not match)")
    try:
        parsed = _limits(document)
    except InputError as exc:
        return _fail(f"malformed certificate: {exc}")
    if isinstance(parsed, str):
        return _fail(parsed)
    st, b_start, b_end, eta, band, nodes, boxes = parsed
    leaves = document["leaves"]
    corpus = document["corpus"]
    if corpus.get("sha256") != corpus_fingerprint(x, theta):
        return _fail("the corpus given is not the certificate's (sha256 differs)")
    fault = corpus_fault(corpus, tuple(x.shape), corpus_meta)
    if fault:
        return _fail(fault)
    if not nodes or nodes[0][0] != b_start or any(b1 <= b0 for (b0, _), (b1, _) in zip(nodes, nodes[1:])):
        return _fail("the centre's nodes must start at b_start and increase")
    centre = Centre.from_nodes(nodes)
    if [str(centre.value(b_start)), str(b_start)] != st.get("start"):
        return _fail("the statement's start is not the centre point at b_start")
    fault = arithmetic_fault(document.get("arithmetic"), ARITHMETIC)
    if fault:
        return _fail(fault)
    cut = pruning_fault(document["arithmetic"]["pruning"])[0]
    reason = _check_tiling(boxes, b_start, b_end, band, centre)
    if reason:
        return _fail(reason)
    drift = []
    shared = SharedEnclosures(sort_tasks(x, theta), cut=cut, threads=threads)
    for k, (lf, box) in enumerate(zip(leaves, boxes)):
        piece = centre.piece(box[0])
        G, P = shared(piece, box)
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
    derived = {**{k: st[k] for k in ("b_start", "b_end", "eta", "start", "centre", "band")}, "steps": steps}
    derived["text"] = statement_text(derived)
    if st.get("text") != derived["text"]:
        return _fail("the statement's text is not the one its b-range, eta, band, nodes and steps give")
    base_step = _half_curvature(x, theta, centre, band, threads)
    fault = eta_rule_fault(document.get("eta_rule"), eta, st["eta"], base_step)
    if fault:
        return _fail(fault)
    widths = [column_width(box[0] - box[0] % column_width(box[0])) for box in boxes]
    fault = proof_fault(document["proof"], leaves, boxes, len(columns(b_start, b_end)), widths, band)
    if fault:
        return _fail(fault)
    fault = _search_fault(document, x, theta, centre, eta, band, base_step, threads, shared.tasks)
    if fault:
        return _fail(fault)
    reason = _arb_check(leaves, boxes, centre, x, theta, arb)
    if reason:
        return _fail(reason)
    fault = end_fault(document["end"], x, theta, centre, b_end, band, eta, document["proof"]["max_depth"],
                      threads=threads, enclose=shared)
    if fault:
        return _fail(fault)
    checked = ("; the corpus's seed and prior are the file's" if corpus_meta is not None
               else "; the corpus's seed and prior were not checked (no corpus file given)")
    return True, "every leaf re-proved; the leaves tile S; every other field checked" + checked, derived


def end_fault(end: dict, x, theta, centre, b_end, band, eta, max_depth, *, threads=None, enclose=None) -> str | None:
    """Why ``end`` (where and why the proof stopped) is not what the re-check derives, or None.
    ``enclose``: the proof's enclosures (:class:`~stumpcheck.numerics.corpus.interval.obligations.SharedEnclosures`
    at the recorded cut; this version's cut if None), with which the box is enclosed again.

    "b_max reached": b_max = b_end. "stopped" (a time limit): the column above b_end. "undecided" / "false":
    a box of that column at most ``max_depth`` halvings deep whose obligations are not all proved, examined
    again (:func:`~stumpcheck.numerics.corpus.interval.prover.examine_failure`: the certainly false point,
    its margin and Arb's confirmation are recomputed); the record must be that examination."""
    from stumpcheck.numerics.corpus.interval.prover import examine_failure

    status, nxt = end["status"], column_after(b_end)
    if status == "b_max reached":
        return None if end["b_max"] == str(b_end) else f"end says b_max {str(end['b_max'])[:30]} was reached, but b_end is {b_end}"
    if status == "stopped":
        return None if end["b"] == [str(b_end), str(nxt)] else "end's stopped column is not the one above b_end"
    try:
        box = tuple(exact(v, "end's box") for v in (*end["b"], *end["mu"]))
    except (InputError, TypeError, ValueError) as exc:
        return f"end's box cannot be read: {str(exc)[:80]}"
    b0, b1, mu0, mu1 = box
    if not (b_end <= b0 < b1 <= nxt and -band[0] <= mu0 < mu1 <= band[1]):
        return "end's box is not a box of the column above b_end inside the band"
    from stumpcheck.numerics.corpus.interval.fields import leaf_depth

    if leaf_depth(box, nxt - b_end, band) > max_depth:
        return "end's box lies deeper than the proof's max_depth"
    piece = centre.piece(b0)
    if enclose is None:
        enclose = SharedEnclosures(sort_tasks(x, theta), cut=CUT, threads=threads)
    G, P = enclose(piece, box)
    result = evaluate_box(G, P, piece, box, band, eta, centre.slopes_over)
    if result.proved:
        return "end says the proof stopped at a box whose obligations the re-check proves"
    again = examine_failure(x, theta, centre, {"box": box, "piece": piece, "result": result}, band, eta,
                            threads=threads)
    if again != end:
        return f"end is not what examining its box gives ({again['status']}: {_end_words(again)})"
    return None


def _end_words(end: dict) -> str:
    if end["status"] == "false":
        return f"{end['obligation']} certainly false at b = {end['point']['b']}, mu = {end['point']['mu']}"
    return "no obligation certainly false at its centre or edge midpoint"


def _search_fault(document, x, theta, centre, eta, band, base_step, threads, tasks) -> str | None:
    """Why ``start_search`` is not the search that chose the statement's b_start and η, or None (the η rule
    already checked); a halved η rule needs the search that halved it."""
    from stumpcheck.numerics.corpus.interval.start import halvings_of_rule, start_search_fault

    st = document["statement"]
    rule = document["eta_rule"]
    halvings = None if rule == f"given: {st['eta']}" else halvings_of_rule(rule, HALF_CURVATURE_RULE)
    if "start_search" not in document:
        if halvings:
            return "the eta_rule says the step was halved by a start search, but there is no start_search"
        return None
    return start_search_fault(document["start_search"], x, theta, centre=centre, eta=eta, eta_text=st["eta"],
                              halvings=halvings, band=band, max_depth=document["proof"]["max_depth"],
                              base_step=base_step, threads=threads, tasks=tasks)


def _half_curvature(x, theta, centre, band, threads):
    """The half-curvature step at the recorded centre, computed once when first asked (None without positive
    curvature)."""
    memo = []

    def base():
        if not memo:
            try:
                memo.append(eta_half_curvature(x, theta, centre, band[0], band[1], threads=threads))
            except NoPositiveCurvature:
                memo.append(None)
        return memo[0]
    return base


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
