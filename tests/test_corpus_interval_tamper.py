"""Tampered corpus-interval certificates are rejected by their content, each for its own stated reason.

One certificate is proved (m = n = 32, seed 1, b in [8, 10]: 16 grid columns of width 1/8, 6 leaves each,
nodes of the centre at b = 8, 9, 10, …, η = 340 by the half-curvature rule). Every tamper below
recomputes the digest (:func:`~stumpcheck.numerics.certified.certificates.lemma_certificate.digest`), so
only the content checks of :func:`~stumpcheck.numerics.corpus.interval.certificate.recheck_interval`
can catch it; each test asserts the one-line reason. The leaf indices name places in that certificate
(leaf 6k + j: column k, j-th box from the band's lower edge; column 2 = [67/8, 17/2] holds leaves 18…23,
leaves 42…47 end at the node b = 9).
"""

from __future__ import annotations

import copy
import json
from fractions import Fraction

import numpy as np
import pytest

from stumpcheck.cli.commands import main
from stumpcheck.numerics.certified.certificates.lemma_certificate import digest, read_certificate
from stumpcheck.numerics.corpus.corpora import load_corpus, make_corpus
from stumpcheck.numerics.corpus.interval.certificate import recheck_interval, statement_text
from stumpcheck.numerics.corpus.interval.prover import step_bound

F = Fraction
ENCLOSURES = "the recorded enclosures are not the fast layer's"
MARGINS = "the recorded margins are not the derived ones"


@pytest.fixture(scope="module")
def proved(tmp_path_factory):
    out = tmp_path_factory.mktemp("interval")
    status = main(["interval", "--m", "32", "--n", "32", "--seed", "1", "--b-max", "10", "--out", str(out), "--quiet"])
    assert status == 0
    document = read_certificate(out / "interval_certificate.json")
    return out, document, load_corpus(out / "corpus.npz")


def _tampered(document, edit):
    d = copy.deepcopy(document)
    edit(d)
    d["digest"] = digest(d)
    return d


def _reason(proved, edit, x=None, theta=None) -> str:
    _, document, corpus = proved
    ok, reason, derived = recheck_interval(_tampered(document, edit), corpus.x if x is None else x,
                                           corpus.theta if theta is None else theta)
    assert not ok and derived is None
    assert "\n" not in reason
    return reason


def test_the_certificate_as_written_passes(proved):
    _, document, corpus = proved
    st = document["statement"]
    assert (st["b_start"], st["b_end"], st["eta"], st["steps"]) == ("8", "10", "340", 47)
    assert len(document["leaves"]) == 96 and [lf["b"] for lf in document["leaves"][42:48]] == [["71/8", "9"]] * 6
    assert _tampered(document, lambda d: None)["digest"] == document["digest"]
    ok, reason, derived = recheck_interval(document, corpus.x, corpus.theta, arb="all",
                                           corpus_meta={"seed": corpus.seed, "prior": corpus.prior})
    assert ok and reason == ("every leaf re-proved; the leaves tile S; every other field checked; the corpus's "
                             "seed and prior are the file's")
    assert {k: derived[k] for k in ("b_start", "b_end", "eta", "steps")} == {
        "b_start": "8", "b_end": "10", "eta": "340", "steps": 47}


def _st(key, value):
    return lambda d: d["statement"].__setitem__(key, value)


def _band(key, value):
    return lambda d: d["statement"]["band"].__setitem__(key, value)


def _node(i, delta=F(0), b=None):
    def edit(d):
        nodes = d["statement"]["centre"]["nodes"]
        nodes[i] = [nodes[i][0] if b is None else b, str(F(nodes[i][1]) + delta)]
    return edit


def _leaf(i, key, value):
    return lambda d: d["leaves"][i].__setitem__(key, value)


def _drop(*indices):
    return lambda d: d.__setitem__("leaves", [lf for k, lf in enumerate(d["leaves"]) if k not in indices])


def _copy_leaf(source, target, key, value):
    """Leaf ``target`` replaced by a copy of leaf ``source`` (its enclosures and margins) moved to ``value``."""
    def edit(d):
        leaf = copy.deepcopy(d["leaves"][source])
        leaf[key] = value
        d["leaves"][target] = leaf
    return edit


def _nudge(i, field, row, end, direction):
    """One end of one recorded enclosure moved by one double (inward: the enclosure narrowed)."""
    def edit(d):
        pair = d["leaves"][i][field][row]
        pair[end] = float(np.nextafter(pair[end], direction * np.inf))
    return edit


def _margin(i, key, delta):
    return lambda d: d["leaves"][i].__setitem__(key, str(F(d["leaves"][i][key]) + delta))


def _lower_start_with_a_node(d):
    """b_start lowered by one column, with a node there on the first piece's line, and the start moved to it:
    the statement is consistent, but no leaf covers the new column."""
    st = d["statement"]
    nodes = st["centre"]["nodes"]
    (b0, a0), (b1, a1) = [(F(b), F(a)) for b, a in nodes[:2]]
    new = a0 - (a1 - a0) / (b1 - b0) * F(1, 8)
    nodes.insert(0, ["63/8", str(new)])
    st["b_start"], st["start"] = "63/8", [str(new), "63/8"]


TAMPERS = [
    ("raised b_end, one column", _st("b_end", "81/8"), "no leaf covers the column b in [10, 81/8]"),
    ("raised b_end, one octave", _st("b_end", "16"), "no leaf covers the column b in [10, 81/8]"),
    ("raised b_end, off the grid", _st("b_end", "161/16"),
     "the statement's eta, band or b-range is not valid (eta, c > 0; b_start < b_end on the grid)"),
    ("lowered b_end, leaves kept", _st("b_end", "9"), "leaf 48 is not inside one grid column of [b_start, b_end]"),
    ("lowered b_start", _st("b_start", "63/8"), "the centre's nodes must start at b_start and increase"),
    ("lowered b_start with a node and start", _lower_start_with_a_node, "no leaf covers the column b in [63/8, 127/16]"),
    ("dropped leaf inside the band", _drop(20), "the leaves do not cover b in [67/8, 17/2] for mu above 3/50"),
    ("dropped leaf on the lower edge", _drop(18), "the leaves do not cover b in [67/8, 17/2] for mu above -1/20"),
    ("dropped column", _drop(18, 19, 20, 21, 22, 23), "no leaf covers the column b in [67/8, 17/2]"),
    ("leaf duplicated and shifted in mu", _copy_leaf(21, 20, "mu", ["3/50", "17/100"]),
     f"leaf 20 (b in [67/8, 17/2]): {ENCLOSURES}"),
    ("leaf duplicated and shifted in b", _copy_leaf(14, 20, "b", ["67/8", "17/2"]),
     f"leaf 20 (b in [67/8, 17/2]): {ENCLOSURES}"),
    ("box enclosure narrowed (lo of L_b raised)", _nudge(0, "box_enclosure", 2, 0, +1), f"leaf 0 (b in [8, 65/8]): {ENCLOSURES}"),
    ("box enclosure narrowed (hi of L_ab lowered)", _nudge(30, "box_enclosure", 4, 1, -1),
     f"leaf 30 (b in [69/8, 35/4]): {ENCLOSURES}"),
    ("box enclosure widened", _nudge(0, "box_enclosure", 0, 0, -1), f"leaf 0 (b in [8, 65/8]): {ENCLOSURES}"),
    ("centre enclosure edited", _nudge(0, "centre_enclosure", 1, 1, -1), f"leaf 0 (b in [8, 65/8]): {ENCLOSURES}"),
    ("gd margin lowered", _margin(3, "gd", -F(1, 10 ** 40)), f"leaf 3: {MARGINS}"),
    ("drift margin raised", _margin(3, "drift", F(1, 10 ** 6)), f"leaf 3: {MARGINS}"),
    ("inward margin on an edge edited", _margin(5, "inward", F(1, 10 ** 30)), f"leaf 5: {MARGINS}"),
    ("inward margin added inside the band", _leaf(3, "inward", "1/1000"), f"leaf 3: {MARGINS}"),
    ("larger eta", _st("eta", "341"), f"leaf 0: {MARGINS}"),
    ("smaller eta", _st("eta", "339"), f"leaf 0: {MARGINS}"),
    ("much larger eta", _st("eta", "10000"),
     "leaf 0 (b in [8, 65/8], mu in [-1/20, 1/200]): an obligation is not proved"),
    ("zero eta", _st("eta", "0"),
     "the statement's eta, band or b-range is not valid (eta, c > 0; b_start < b_end on the grid)"),
    ("smaller steps", _st("steps", 46), "the statement's step bound 46 is not the derived 47"),
    ("larger steps", _st("steps", 48), "the statement's step bound 48 is not the derived 47"),
    ("edited start", _st("start", ["12300222/1048576", "8"]), "the statement's start is not the centre point at b_start"),
    ("start at another b", _st("start", ["12300221/1048576", "65/8"]),
     "the statement's start is not the centre point at b_start"),
    ("centre node b = 9 raised by 2^-20", _node(1, F(1, 2 ** 20)), f"leaf 0 (b in [8, 65/8]): {ENCLOSURES}"),
    ("centre node b = 10 (= b_end) lowered by 2^-20", _node(2, -F(1, 2 ** 20)), f"leaf 41: {MARGINS}"),
    ("centre node moved into a column", _node(1, b="145/16"), "leaf 48 straddles a node of the centre"),
    ("centre nodes not increasing", _node(1, b="8"), "the centre's nodes must start at b_start and increase"),
    ("larger c_plus", _band("c_plus", "3/5"), "the leaves do not cover b in [8, 65/8] for mu above 1/2"),
    ("larger c_minus", _band("c_minus", "1/10"), "the leaves do not cover b in [8, 65/8] for mu above -1/10"),
    ("smaller c_plus", _band("c_plus", "49/100"), "leaf 5 leaves the band [-c_minus, c_plus]"),
    ("leaf straddling a node", _leaf(42, "b", ["71/8", "73/8"]), "leaf 42 straddles a node of the centre"),
    ("leaf outside the band", _leaf(5, "mu", ["39/100", "51/100"]), "leaf 5 leaves the band [-c_minus, c_plus]"),
    ("leaf reversed", _leaf(5, "mu", ["1/2", "39/100"]), "leaf 5 is empty or reversed"),
    ("leaf b as a number", _leaf(5, "b", [8, "65/8"]), "malformed certificate: leaf b must be an exact rational written "
                                                         "as a string"),
    ("b_end as a number", _st("b_end", 10), "malformed certificate: b_end must be an exact rational written as a string"),
    ("wrong format", lambda d: d.__setitem__("format", "stumpcheck-interval-certificate/2"),
     "not a corpus-interval certificate"),
]


def _pruning(key, value):
    return lambda d: d["arithmetic"]["pruning"].__setitem__(key, value)


PRUNING_TAMPERS = [
    ("pruning bound lowered", _pruning("bound", (2.0 ** -100).hex()),
     "the pruning record is not the one its cut gives (bound or rule edited)"),
    ("pruning bound raised", _pruning("bound", (2.0 ** -80).hex()),
     "the pruning record is not the one its cut gives (bound or rule edited)"),
    ("pruning rule edited", _pruning("rule", "nothing is pruned"),
     "the pruning record is not the one its cut gives (bound or rule edited)"),
    ("pruning cut out of range", _pruning("cut", (8.0).hex()), "the pruning cut 8.0 lies outside [16.0, 600.0]"),
    ("pruning cut not a number", _pruning("cut", "sixty-four"),
     "malformed pruning record (cut and bound must be float.hex strings)"),
]
TAMPERS += PRUNING_TAMPERS


def test_another_cut_with_its_own_bound_is_valid_arithmetic(proved):
    """A consistent pruning record for another cut (its bound derived for it) is sound: the re-check uses the
    recorded cut. At b <= 10 a cut of 16 prunes no point of this corpus (d <= 1), so every enclosure is the
    same and the certificate passes; a cut of 600 neither."""
    from stumpcheck.numerics.certified.fast.corpus_sorted import pruning_record

    _, document, corpus = proved
    for cut in (16.0, 600.0):
        d = _tampered(document, lambda d: d["arithmetic"].__setitem__("pruning", pruning_record(cut)))
        assert recheck_interval(d, corpus.x, corpus.theta, arb="none")[0]


@pytest.mark.parametrize("edit, expected", [t[1:] for t in TAMPERS], ids=[t[0] for t in TAMPERS])
def test_tamper_is_rejected(proved, edit, expected):
    assert _reason(proved, edit) == expected


def test_digest_alone_edited(proved):
    _, document, corpus = proved
    d = copy.deepcopy(document)
    d["digest"] = "0" * 64
    assert recheck_interval(d, corpus.x, corpus.theta) == (
        False, "the certificate was edited after it was written (its digest does not match)", None)
    d = copy.deepcopy(document)
    d["statement"]["b_end"] = "81/8"          # an edit without the digest recomputed
    assert recheck_interval(d, corpus.x, corpus.theta)[1].startswith("the certificate was edited after it was written")


def test_another_corpus(proved):
    other = make_corpus(32, 32, seed=2)
    assert _reason(proved, lambda d: None, other.x, other.theta) == \
        "the corpus given is not the certificate's (sha256 differs)"


def test_the_corpus_edited_by_one_value(proved):
    _, _, corpus = proved
    x = np.array(corpus.x)
    x[3, 5] = np.nextafter(x[3, 5], 1.0)
    assert _reason(proved, lambda d: None, x) == "the corpus given is not the certificate's (sha256 differs)"
    theta = np.array(corpus.theta)
    theta[7] = np.nextafter(theta[7], 0.0)
    assert _reason(proved, lambda d: None, None, theta) == "the corpus given is not the certificate's (sha256 differs)"


def _truncate(d, end=None):
    """b_end lowered to 9 with the leaves above dropped and every field that follows recomputed."""
    st = d["statement"]
    st["b_end"] = "9"
    d["leaves"] = [lf for lf in d["leaves"] if F(lf["b"][1]) <= 9]
    st["steps"] = step_bound([(F(lf["b"][0]), F(lf["b"][1]), F(lf["drift"])) for lf in d["leaves"]], F(340))[0]
    st["text"] = statement_text(st)
    d["proof"]["leaf_count"], d["proof"]["columns"] = len(d["leaves"]), 8
    d["proof"]["smallest_margins"] = {
        key: float(min(F(lf[key]) for lf in d["leaves"] if lf[key] is not None)) for key in ("drift", "inward", "gd")}
    d["end"] = end or {"status": "b_max reached", "b_max": "9"}


def test_a_consistent_truncation_passes(proved):
    """Not a tamper but a weaker true statement: b_end lowered to 9 with the leaves above dropped and every
    field that follows from them recomputed. The re-check accepts it and derives b_end = 9 (it checks content,
    not identity)."""
    _, document, corpus = proved
    d = _tampered(document, _truncate)
    ok, _, derived = recheck_interval(d, corpus.x, corpus.theta)
    assert ok and derived["b_end"] == "9" and derived["steps"] == d["statement"]["steps"] < 47


def test_an_edited_statement_text_is_rejected(proved):
    """The text is derived and must be the recorded one: an edited text is a false record."""
    assert _reason(proved, _st("text", "gradient descent reaches b = 10^6")) == (
        "the statement's text is not the one its b-range, eta, band, nodes and steps give")


def _undecided_end(proved):
    """The end a prover stopping at the unproved start box of column [9, 145/16] records (enclosed and examined
    exactly as the prover encloses and examines a failed box: shared, sorted enclosures at this version's cut)."""
    from stumpcheck.numerics.certified.fast.corpus_sorted import sort_tasks
    from stumpcheck.numerics.corpus.interval.centre import Centre
    from stumpcheck.numerics.corpus.interval.obligations import SharedEnclosures, evaluate_box
    from stumpcheck.numerics.corpus.interval.prover import _start_boxes, examine_failure

    _, document, corpus = proved
    st = document["statement"]
    centre = Centre.from_nodes([(F(b), F(a)) for b, a in st["centre"]["nodes"]])
    band = (F(st["band"]["c_minus"]), F(st["band"]["c_plus"]))
    enclose = SharedEnclosures(sort_tasks(corpus.x, corpus.theta))
    for box in _start_boxes(F(9), F(145, 16), band):
        piece = centre.piece(box[0])
        G, P = enclose(piece, box)
        result = evaluate_box(G, P, piece, box, band, F(340), centre.slopes_over)
        if not result.proved:
            return examine_failure(corpus.x, corpus.theta, centre, {"box": box, "piece": piece, "result": result},
                                   band, F(340))
    raise AssertionError("every start box of the column is proved")


def test_an_undecided_end_is_examined_again(proved):
    _, document, corpus = proved
    end = _undecided_end(proved)
    assert end["status"] in ("undecided", "false")
    ok, reason, _ = recheck_interval(_tampered(document, lambda d: _truncate(d, end)), corpus.x, corpus.theta)
    assert ok, reason
    moved = {**end, "margins": {**end["margins"], "gd": end["margins"]["gd"] + 1.0}}
    assert _reason(proved, lambda d: _truncate(d, moved)).startswith("end is not what examining its box gives")
    false = {**end, "status": "false", "point": {"b": end["b"][0], "mu": end["mu"][0]}, "obligation": "drift",
             "margin_upper": -1.0, "arb_confirmed": True}
    assert _reason(proved, lambda d: _truncate(d, false)).startswith("end is not what examining its box gives")


def _end(value):
    return lambda d: d.__setitem__("end", value)


def _set(path, value):
    def edit(d):
        *head, last = path
        target = d
        for key in head:
            target = target[key]
        if value is _DELETE:
            del target[last]
        else:
            target[last] = value
    return edit


_DELETE = object()

FALSE_RECORDS = [
    ("arithmetic deleted", _set(["arithmetic"], _DELETE),
     "the certificate has no arithmetic record (what its proof rests on): it is required"),
    ("arithmetic rewritten", _set(["arithmetic"], "correctly rounded; no assumption"),
     "the certificate has no arithmetic record (what its proof rests on): it is required"),
    ("arithmetic's libm rule edited", _set(["arithmetic", "fast_layer", "libm"], "correctly rounded"),
     "the arithmetic record's fast_layer.libm is not the fast layer's assumption (edited, or another version's)"),
    ("arithmetic's margins edited", _set(["arithmetic", "margins"], "exact"),
     "the arithmetic record's margins is not what this version's proof rests on"),
    ("a note", _set(["note"], "the entry phase is certified too"),
     "the certificate has fields an interval certificate does not define, which the re-check would not check: note"),
    ("a statement field", _set(["statement", "entry_certified"], True),
     "the statement has fields an interval certificate does not define, which the re-check would not check: "
     "entry_certified"),
    ("a leaf field", _set(["leaves", 3, "certified_for"], "all b"), "leaf 3 must hold exactly the fields "
     "b, box_enclosure, centre_enclosure, drift, gd, inward, mu"),
    ("false end: b_max", _end({"status": "b_max reached", "b_max": "1000"}),
     "end says b_max 1000 was reached, but b_end is 10"),
    ("false end: an unknown status", _end({"status": "proved for all b"}),
     "end must be an object with a status among b_max reached, stopped, undecided, false"),
    ("false end: made-up margins", _end({"status": "undecided", "b": ["10", "161/16"], "mu": ["-1/20", "3/40"],
                                         "margins": {"drift": 0.0, "gd": 0.0, "inward": None}}),
     "end is not what examining its box gives (undecided: no obligation certainly false at its centre or edge "
     "midpoint)"),
    ("false end: a proved box", _end({"status": "undecided", "b": ["10", "1289/128"], "mu": ["1/4", "1/2"],
                                      "margins": {"drift": 0.0, "gd": 0.0, "inward": None}}),
     "end says the proof stopped at a box whose obligations the re-check proves"),
    ("smallest margins", _set(["proof", "smallest_margins", "gd"], 0.5),
     "the proof's smallest_margins are not the leaves' smallest margins"),
    ("leaf count", _set(["proof", "leaf_count"], 1000), "the proof's leaf_count 1000 is not the 96 leaves"),
    ("columns", _set(["proof", "columns"], 17), "the proof's columns 17 is not the 16 columns of S"),
    ("max depth below the leaves'", _set(["proof", "max_depth"], 0), "the proof's max_depth must be an int in [1, 20]"),
    ("a corpus file that is no name", _set(["corpus", "file"], 42),
     "the corpus record's file must be the corpus file's name (text)"),
    ("corpus shape", _set(["corpus", "m"], 64), "the corpus record's m, n are not the corpus's shape 32 x 32"),
    ("eta rule", _set(["eta_rule"], "half-curvature, proved optimal"),
     "the eta_rule is neither 'given: 340' nor the half-curvature rule"),
    ("eta = 1e999999999", _st("eta", "1e999999999"),
     "malformed certificate: eta '1e999999999' has a decimal exponent beyond ±1000 (the limit)"),
    ("b_end beyond the limits", _st("b_end", "1e300"),
     "the statement is beyond the limits of a re-check: b in [1, 65536], eta <= 1e30, c in [0.001, 10]"),
    ("leaves repeated 50 times", lambda d: d.__setitem__("leaves", d["leaves"] * 50),
     "the leaves of column [8, 65/8] overlap (their areas exceed the column's)"),
    ("one leaf repeated", lambda d: d["leaves"].append(copy.deepcopy(d["leaves"][7])),
     "the leaves of column [65/8, 33/4] overlap (their areas exceed the column's)"),
]


def _search(path, value):
    return _set(["start_search", *path], value)


def _trial(index, trial):
    return lambda d: d["start_search"]["tried"].insert(index, trial)


def _halved_rule(k):
    from stumpcheck.numerics.corpus.interval.centre import HALF_CURVATURE_RULE
    from stumpcheck.numerics.corpus.interval.start import halved_rule

    return halved_rule(HALF_CURVATURE_RULE, k)


def _claim_halved(d):
    """The η rule and the search's choice say the step was halved once; the statement's η stays 340."""
    d["eta_rule"] = _halved_rule(1)
    d["start_search"]["chosen"]["halvings"] = 1


STEPS = "start_search's trials at b_start = 8 are not the search's steps (the half-curvature step halved 0, 1, ... " \
        "times, or the given one)"
TRIED = ("start_search's tried must be 1 to 20 trials [b_start, eta or null, outcome], outcome among proved, not "
         "proved, no step (null eta with no step only)")

# the certificate's start search (no --b-start, no --eta): one trial, b_start = 8 with the unhalved step
SEARCH_RECORDS = [
    ("pruning record deleted", _set(["arithmetic", "pruning"], _DELETE),
     "the arithmetic record must hold exactly fast_layer, gd, margins, pruning, sheared_boxes"),
    ("fast layer's pruning assumption edited", _set(["arithmetic", "fast_layer", "pruning"], "nothing is pruned"),
     "the arithmetic record's fast_layer.pruning is not the fast layer's assumption (edited, or another version's)"),
    ("start_search null", _set(["start_search"], None),
     "start_search must hold exactly b_start_candidates, chosen, max_halvings, tried"),
    ("start_search: a note", _search(["note"], "b_start = 8 is optimal"),
     "start_search must hold exactly b_start_candidates, chosen, max_halvings, tried"),
    ("start_search: candidates", _search(["b_start_candidates"], ["8"]),
     "start_search's b_start_candidates or max_halvings are not this version's"),
    ("start_search: chosen b_start", _search(["chosen", "b_start"], "16"),
     "start_search's chosen b_start and eta are not the statement's"),
    ("start_search: chosen eta", _search(["chosen", "eta"], "170"),
     "start_search's chosen b_start and eta are not the statement's"),
    ("start_search: chosen halvings", _search(["chosen", "halvings"], 2),
     "start_search's chosen halvings are not the eta_rule's"),
    ("start_search: no trial", _search(["tried"], []), TRIED),
    ("start_search: no step with a step", _search(["tried", 0, 2], "no step"), TRIED),
    ("start_search: last trial not proved", _search(["tried", 0, 2], "not proved"),
     "start_search's last trial is not the chosen b_start and eta with its first column proved"),
    ("start_search: a proved trial before", _trial(0, ["8", "340", "proved"]),
     "start_search records a proved trial before the last (the search stops at the first)"),
    ("start_search: a made-up earlier trial", _trial(0, ["8", "340", "not proved"]), STEPS),
    ("start_search: a made-up larger step", _trial(0, ["8", "680", "not proved"]), STEPS),
    ("start_search: another b_start first", _trial(0, ["16", "100", "not proved"]),
     "start_search's trials are not in the search's order of b_start (8, 16, 32, 64, or the given one)"),
    ("start_search: a halved step claimed", _claim_halved,
     "the half-curvature rule gives eta = 170 on this corpus and centre, not the statement's 340"),
]
FALSE_RECORDS += SEARCH_RECORDS


def test_the_certificate_records_its_start_search(proved):
    _, document, corpus = proved
    assert document["start_search"]["tried"] == [["8", "340", "proved"]]
    assert document["start_search"]["chosen"] == {"b_start": "8", "eta": "340", "halvings": 0}
    # without the record (a certificate of a given b_start and eta rule) the statement is still re-proved
    ok, reason, _ = recheck_interval(_tampered(document, lambda d: d.pop("start_search")), corpus.x, corpus.theta,
                                     arb="none")
    assert ok, reason


@pytest.mark.parametrize("edit, expected", [t[1:] for t in FALSE_RECORDS], ids=[t[0] for t in FALSE_RECORDS])
def test_a_false_record_is_rejected(proved, edit, expected):
    assert _reason(proved, edit) == expected


def test_the_seed_and_prior_are_the_corpus_files(proved):
    _, document, corpus = proved
    meta = {"seed": corpus.seed, "prior": corpus.prior}
    for edit, expected in ((_set(["corpus", "seed"], 7), "the corpus record's seed 7 is not the corpus file's (1)"),
                           (_set(["corpus", "prior"], [0.0, 0.5]), "the corpus record's prior is not the corpus file's")):
        ok, reason, _ = recheck_interval(_tampered(document, edit), corpus.x, corpus.theta, corpus_meta=meta)
        assert not ok and reason.startswith(expected), reason


def test_the_tamper_checks_come_before_the_leaves(proved, monkeypatch):
    """A repeated leaf set and a huge exponent are refused without enclosing a single leaf."""
    from stumpcheck.numerics.corpus.interval import certificate, obligations

    def no_work(*args, **kwargs):
        raise AssertionError("a leaf was enclosed")

    monkeypatch.setattr(obligations.SharedEnclosures, "__call__", no_work)
    monkeypatch.setattr(certificate, "sort_tasks", no_work)
    _reason(proved, lambda d: d.__setitem__("leaves", d["leaves"] * 50))
    _reason(proved, _st("eta", "1e999999999"))
    _reason(proved, _pruning("bound", (2.0 ** -100).hex()))


def _split_leaf(proved, rounding):
    """Leaf 0 (b in [8, 65/8]) split in b at the non-dyadic 8 + 1/24, its halves' enclosures computed with b's
    ends rounded by ``rounding`` (nearest: the old bug; outward: the fix, as the prover's shared enclosures do),
    every dependent field recomputed."""
    from stumpcheck.numerics.certified.fast.corpus_sorted import group_moments, mixed_enclosure, sort_tasks
    from stumpcheck.numerics.corpus.interval.centre import Centre
    from stumpcheck.numerics.corpus.interval.obligations import (SharedEnclosures, evaluate_box, float_down, float_up,
                                                                 to_interval)
    from stumpcheck.numerics.corpus.interval.prover import leaf_record

    _, document, corpus = proved
    tasks = sort_tasks(corpus.x, corpus.theta)
    st = document["statement"]
    centre = Centre.from_nodes([(F(b), F(a)) for b, a in st["centre"]["nodes"]])
    band = (F(st["band"]["c_minus"]), F(st["band"]["c_plus"]))
    leaf = document["leaves"][0]
    mu0, mu1 = F(leaf["mu"][0]), F(leaf["mu"][1])
    cut = 8 + F(1, 24)
    halves = []
    for box in ((F(8), cut, mu0, mu1), (cut, F(65, 8), mu0, mu1)):
        piece = centre.piece(box[0])
        if rounding == "outward":
            G, P = SharedEnclosures(tasks)(piece, box)
        else:  # the old conversion: b's ends to the nearest double
            b_i, a_i, s = piece
            a_prime = (float_down(a_i - s * b_i + mu0), float_up(a_i - s * b_i + mu1))
            G = mixed_enclosure(tasks, group_moments(tasks, (float(box[0]), float(box[1])), hessian=True), a_prime,
                                shear=to_interval(s)).tolist()
            bc, muc = (box[0] + box[1]) / 2, (mu0 + mu1) / 2
            P = mixed_enclosure(tasks, group_moments(tasks, to_interval(bc)),
                                to_interval(a_i + s * (bc - b_i) + muc)).tolist()
        halves.append(leaf_record(box, evaluate_box(G, P, piece, box, band, F(340), centre.slopes_over)))

    def edit(d):
        d["leaves"][0:1] = halves
        drift = [(F(lf["b"][0]), F(lf["b"][1]), F(lf["drift"])) for lf in d["leaves"]]
        d["statement"]["steps"] = step_bound(drift, F(340))[0]
        d["statement"]["text"] = statement_text(d["statement"])
        d["proof"]["leaf_count"] = len(d["leaves"])
        d["proof"]["smallest_margins"] = {
            key: float(min(F(lf[key]) for lf in d["leaves"] if lf[key] is not None)) for key in ("drift", "inward", "gd")}
    return _tampered(document, edit)


def test_a_non_dyadic_split_is_enclosed_with_its_ends_rounded_outward(proved):
    _, _, corpus = proved
    ok, reason, _ = recheck_interval(_split_leaf(proved, "nearest"), corpus.x, corpus.theta)
    assert not ok and reason in (f"leaf 0 (b in [8, 193/24]): {ENCLOSURES}",
                                 f"leaf 1 (b in [193/24, 65/8]): {ENCLOSURES}"), reason
    ok, reason, _ = recheck_interval(_split_leaf(proved, "outward"), corpus.x, corpus.theta)
    assert ok, reason


# ---------------------------------------------------------------- through the command line

def _write(document, path):
    from stumpcheck.numerics.certified.certificates.lemma_certificate import write_certificate
    return str(write_certificate(document, path, one_per_line=("leaves",)))


def test_cli_rejects_a_raised_b_end(proved, tmp_path, capsys):
    path = _write(_tampered(proved[1], _st("b_end", "81/8")), tmp_path / "c.json")
    status = main(["recheck", path, "--corpus", str(proved[0] / "corpus.npz")])
    out = capsys.readouterr().out
    assert status == 1 and out.strip() == f"FAIL {path}: no leaf covers the column b in [10, 81/8]"


def test_cli_rejects_a_corpus_file_edited_by_one_value(proved, tmp_path, capsys):
    out_dir, document, _ = proved
    with np.load(out_dir / "corpus.npz", allow_pickle=False) as data:
        arrays = {k: np.array(data[k]) for k in data.files}
    arrays["x"][0, 0] = np.nextafter(arrays["x"][0, 0], 1.0)
    edited = tmp_path / "edited.npz"
    np.savez(edited, **arrays)
    load_corpus(edited)                                   # still a valid corpus file
    path = str(out_dir / "interval_certificate.json")
    status = main(["recheck", path, "--corpus", str(edited)])
    out = capsys.readouterr().out
    assert status == 1 and out.strip() == f"FAIL {path}: the corpus given is not the certificate's (sha256 differs)"


def test_cli_wrong_format_is_not_an_interval_certificate(proved, tmp_path, capsys):
    """With another format string the file is no certificate this version reads: exit 2, one line naming it."""
    path = _write(_tampered(proved[1], lambda d: d.__setitem__("format", "stumpcheck-interval-certificate/2")),
                  tmp_path / "c.json")
    status = main(["recheck", path, "--corpus", str(proved[0] / "corpus.npz")])
    err = capsys.readouterr().err
    assert status == 2 and err.count("\n") == 1 and err.startswith(
        f"stumpcheck: error: {path}: unknown certificate format 'stumpcheck-interval-certificate/2'; known: "), err
    assert " interval/1 training/1 " in err and "(128 characters left out)" not in err
    assert err.rstrip().endswith(", and stumpcheck certify's (no format field)")


@pytest.mark.parametrize("edit, reason", [
    (_st("eta", "1e999999999"), "malformed certificate: eta '1e999999999' has a decimal exponent beyond ±1000 (the limit)"),
    (lambda d: d.__setitem__("leaves", d["leaves"] * 50),
     "the leaves of column [8, 65/8] overlap (their areas exceed the column's)"),
], ids=["eta_exponent", "leaves_50_times"])
def test_cli_refuses_a_hostile_interval_certificate_at_once(proved, tmp_path, capsys, edit, reason):
    import time

    path = _write(_tampered(proved[1], edit), tmp_path / "c.json")
    started = time.perf_counter()
    status = main(["recheck", path, "--corpus", str(proved[0] / "corpus.npz")])
    out = capsys.readouterr().out
    assert status == 1 and out.strip() == f"FAIL {path}: {reason}" and time.perf_counter() - started < 30


def test_cli_refuses_options_an_interval_recheck_ignores(proved, capsys):
    path = str(proved[0] / "interval_certificate.json")
    status = main(["recheck", path, "--corpus", str(proved[0] / "corpus.npz"), "--dps", "14"])
    err = capsys.readouterr().err
    assert status == 2 and err.strip() == f"stumpcheck: error: {path}: --dps does nothing for an interval certificate: drop it"


def test_the_certificate_records_the_corpus_file_by_name(proved, tmp_path):
    """A corpus given by an absolute path: the shareable certificate names the file only, and re-checks."""
    corpus_file = tmp_path / "sub" / "mine.npz"
    corpus_file.parent.mkdir()
    corpus_file.write_bytes((proved[0] / "corpus.npz").read_bytes())
    out = tmp_path / "iv"
    assert main(["interval", "--corpus", str(corpus_file.resolve()), "--b-max", "8.125", "--out", str(out),
                 "--quiet"]) == 0
    document = read_certificate(out / "interval_certificate.json")
    assert document["corpus"]["file"] == "mine.npz" and str(tmp_path) not in json.dumps(document)
    assert main(["recheck", str(out / "interval_certificate.json"), "--corpus", str(corpus_file)]) == 0
