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
from fractions import Fraction

import numpy as np
import pytest

from stumpcheck.cli.commands import main
from stumpcheck.numerics.certified.certificates.lemma_certificate import digest, read_certificate
from stumpcheck.numerics.corpus.corpora import load_corpus, make_corpus
from stumpcheck.numerics.corpus.interval.certificate import recheck_interval
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
    ok, reason, derived = recheck_interval(document, corpus.x, corpus.theta, arb="all")
    assert ok and reason == "every leaf re-proved; the leaves tile S"
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


def test_a_consistent_truncation_passes(proved):
    """Not a tamper but a weaker true statement: b_end lowered to 9 with the leaves above dropped and the step
    bound recomputed. The re-check accepts it and derives b_end = 9 (it checks content, not identity)."""
    _, document, corpus = proved

    def truncate(d):
        d["statement"]["b_end"] = "9"
        d["leaves"] = [lf for lf in d["leaves"] if F(lf["b"][1]) <= 9]
        d["statement"]["steps"] = step_bound([(F(lf["b"][0]), F(lf["b"][1]), F(lf["drift"])) for lf in d["leaves"]],
                                             F(340))[0]
    d = _tampered(document, truncate)
    ok, _, derived = recheck_interval(d, corpus.x, corpus.theta)
    assert ok and derived["b_end"] == "9" and derived["steps"] == d["statement"]["steps"] < 47


def test_the_statement_text_is_derived_not_read(proved):
    """An edited statement text does not reach the verdict: the re-check prints the text it derives."""
    _, document, corpus = proved
    d = _tampered(document, _st("text", "gradient descent reaches b = 10^6"))
    ok, _, derived = recheck_interval(d, corpus.x, corpus.theta)
    assert ok and derived["text"] == document["statement"]["text"] and "10^6" not in derived["text"]


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
    """With another format string the file is no interval certificate: --corpus is refused (exit 2, one line)."""
    path = _write(_tampered(proved[1], lambda d: d.__setitem__("format", "stumpcheck-interval-certificate/2")),
                  tmp_path / "c.json")
    status = main(["recheck", path, "--corpus", str(proved[0] / "corpus.npz")])
    err = capsys.readouterr().err
    assert status == 2 and err.strip() == (f"stumpcheck: error: {path}: --corpus goes with an interval certificate "
                                           "(stumpcheck interval) or a training certificate (stumpcheck train "
                                           "--certify)")
