"""``stumpcheck verify`` end to end (:mod:`stumpcheck.cli.verify`, :mod:`stumpcheck.report`).

The default run uses the built-in lemmas with few examples, the example lemma files and
fast stand-in claim checks; the full ``verify --quick`` over C1–C9 is marked slow."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest
from click.testing import CliRunner

from stumpcheck.claims.result import ClaimResult
from stumpcheck.lemmas import definitions as lemmas
from stumpcheck.lemmas import catalogue
from stumpcheck.cli.commands import cli, main
from stumpcheck.lemmas import ClaimCheck
from stumpcheck.report import finite_json, results_document, table

EXAMPLES = Path(__file__).resolve().parent.parent / "examples"
TRUE_LEMMA = f"{EXAMPLES / 'lemma_example.py'}:overshoot_in_the_interior"
FALSE_LEMMA = f"{EXAMPLES / 'false_lemma.py'}:half_over_b"
CLAIM_KEYS = {"id", "status", "figure", "tolerance", "evidence", "seconds", "provenance", "statement", "details"}
PROVENANCE_KEYS = {"versions", "git_commit", "machine", "precision", "seed", "seeds", "date"}


def _strict_json(path: Path):
    def refuse(constant):
        raise AssertionError(f"non-finite JSON constant {constant}")

    return json.loads(path.read_text(encoding="utf-8"), parse_constant=refuse)


def _invoke(*args):
    return CliRunner().invoke(cli, ["verify", *args], catch_exceptions=False)


def _plot_writing_check(*, quick, seed, out_dir):
    """A fast stand-in with the C5–C9 signature: writes a PNG into out_dir and lists it."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots()
    ax.plot([0, 1], [seed, seed + 1])
    fig.savefig(Path(out_dir) / "standin.png")
    plt.close(fig)
    return ClaimResult(id="STANDIN", statement="a stand-in claim", figure="value 1.0", tolerance="<= 2",
                       status="PASS", evidence="sampled", seconds=0.01,
                       details={"plots": ["standin.png", "missing.png"], "seed": seed, "nan": math.nan,
                                "precision": "float64"})


@pytest.fixture
def stand_ins(monkeypatch):
    entries = dict(catalogue.registry())
    entries["STANDIN"] = ClaimCheck(name="STANDIN", statement="a stand-in claim", check=_plot_writing_check,
                                    evidence=("sampled",))
    entries["GONE"] = ClaimCheck(name="GONE", statement="a claim whose module is missing",
                                 check="stumpcheck.numerics.claim_gone:check_gone")
    monkeypatch.setattr(lemmas, "_REGISTRY", entries)


def test_verify_writes_results_and_report_with_embedded_plots(tmp_path, stand_ins):
    out = tmp_path / "report"
    result = _invoke("--only", "STANDIN,label_encoding,bulk_error", "--max-examples", "5", "--out", str(out),
                     "--seed", "7")
    assert result.exit_code == 0, result.output
    assert "3/3 PASS" in result.output
    header = result.stdout.splitlines()[0].split()
    assert header == ["id", "statement", "figure", "tolerance", "status", "evidence", "seconds", "reached"]
    document = _strict_json(out / "results.json")
    assert [c["id"] for c in document["claims"]] == ["STANDIN", "label_encoding", "bulk_error"]
    for claim in document["claims"]:
        assert CLAIM_KEYS <= set(claim)
        assert PROVENANCE_KEYS <= set(claim["provenance"])
        assert claim["status"] == "PASS"
    assert document["claims"][0]["details"]["nan"] is None  # NaN -> null
    assert document["claims"][1]["provenance"]["seed"] == 7
    assert document["summary"] == {"total": 3, "passed": 3, "failed": [],
                                   "seconds": document["summary"]["seconds"]}
    report = (out / "report.md").read_text(encoding="utf-8")
    assert "![STANDIN: standin.png](standin.png)" in report
    assert "missing.png" not in report.split("## STANDIN")[1].split("<details>")[0]
    assert (out / "standin.png").is_file()
    assert "| id | statement | figure | tolerance | status | evidence | seconds | reached |" in report
    assert [c["evidence_reached"] for c in document["claims"]] == ["sampled", "certified", "certified"]
    assert (out / "bulk_error.certificate.json").is_file()


def test_unavailable_claim_is_reported_as_fail_with_exit_1(tmp_path, stand_ins):
    result = _invoke("--only", "GONE", "--out", str(tmp_path))
    assert result.exit_code == 1
    claim = _strict_json(tmp_path / "results.json")["claims"][0]
    assert claim["status"] == "FAIL"
    assert claim["evidence_reached"] is None  # a FAIL reaches no level
    assert claim["figure"] == "not available: No module named 'stumpcheck.numerics.claim_gone'"


def test_user_lemma_passes_and_false_lemma_fails_with_counterexample_and_seed(tmp_path):
    passed = _invoke("--lemma", TRUE_LEMMA, "--out", str(tmp_path / "true"), "--max-examples", "40")
    assert passed.exit_code == 0, passed.output
    assert "overshoot_in_the_interior" in passed.output and "1/1 PASS" in passed.output
    failed = _invoke("--lemma", FALSE_LEMMA, "--lemma", TRUE_LEMMA, "--out", str(tmp_path / "false"),
                     "--seed", "3", "--max-examples", "40")
    assert failed.exit_code == 1
    assert "FAIL half_over_b: counterexample (shrunk)" in failed.output and "seed 3" in failed.output
    claims = _strict_json(tmp_path / "false" / "results.json")["claims"]
    assert [c["status"] for c in claims] == ["FAIL", "PASS"]
    details = claims[0]["details"]
    assert set(details["counterexample"]) == {"b", "offset", "theta"} and details["counterexample_margin"] < 0
    assert details["replay"] == f"stumpcheck verify --lemma {FALSE_LEMMA} --seed 3"


def test_main_returns_exit_statuses(tmp_path):
    assert main(["verify", "--lemma", FALSE_LEMMA, "--out", str(tmp_path), "--max-examples", "20"]) == 1
    assert main(["verify", "--lemma", TRUE_LEMMA, "--out", str(tmp_path), "--max-examples", "20"]) == 0


@pytest.mark.parametrize("args", [
    ["--only", "C10"],
    ["--only", "C1,,C2"],
    ["--lemma", "examples/no_such_file.py:x"],
    ["--lemma", f"{EXAMPLES / 'lemma_example.py'}:missing"],
    ["--lemma", "no_colon"],
    ["--lemma", TRUE_LEMMA, "--level", "certified"],
    ["--lemma", TRUE_LEMMA, "--certified"],
    ["--lemma", TRUE_LEMMA, "--certified", "--level", "sampled"],
    ["--seed", "-3"],
    ["--seed", "x"],
    ["--max-examples", "0"],
    ["--level", "proved"],
    ["--scheduler", " "],
])
def test_bad_input_exits_2_with_one_line(args, tmp_path, capsys):
    assert main(["verify", *args, "--out", str(tmp_path)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("stumpcheck: error:"), err


def test_level_without_only_says_which_entries_ran_at_their_own_level(tmp_path, monkeypatch):
    """--level high-precision over a registry of a claim (sampled), a lemma with high-precision and a
    sampled-only lemma certified symbolically: the two without the level run at their own, and the row's
    evidence, its details and a note before the summary say so."""
    entries = catalogue.registry()
    monkeypatch.setattr(lemmas, "_REGISTRY", {
        "STANDIN": ClaimCheck(name="STANDIN", statement="a stand-in claim", check=_plot_writing_check,
                              evidence=("sampled",)),
        "bulk_error": entries["bulk_error"], "label_encoding": entries["label_encoding"]})
    result = _invoke("--level", "high-precision", "--max-examples", "5", "--out", str(tmp_path))
    assert result.exit_code == 0, result.output
    lines = result.stdout.strip().splitlines()
    assert lines[-2] == ("note: 2 entries do not support --level high-precision and ran at their own level "
                         "(evidence column): STANDIN sampled, label_encoding certified")
    assert lines[-1].startswith("3/3 PASS")
    rows = {c["id"]: c for c in _strict_json(tmp_path / "results.json")["claims"]}
    assert {i: r["evidence"] for i, r in rows.items()} == {"STANDIN": "sampled", "bulk_error": "high-precision",
                                                           "label_encoding": "certified"}
    assert rows["STANDIN"]["details"]["level_requested"] == "high-precision"
    assert rows["label_encoding"]["details"]["level_requested"] == "high-precision"
    assert "level_requested" not in rows["bulk_error"]["details"]
    alone = _invoke("--only", "bulk_error", "--level", "high-precision", "--max-examples", "5", "--out",
                    str(tmp_path / "alone"))
    assert alone.exit_code == 0 and "note:" not in alone.stdout


def _builtin_lemmas_through_verify(tmp_path, names):
    """The fast equivalent of ``verify --quick`` for the lemmas: every built-in lemma at its
    default level, few examples. Every lemma with a certified level runs it: interior_error_bound, bulk_error
    and right_layer are proved on their whole stated domains under --quick too (rows certified, certificates
    written), label_encoding symbolically; leading_loss and progress_direction on their quick sub-domains only,
    so their rows keep the sampled verdict."""
    result = _invoke("--only", ",".join(names), "--max-examples", "8", "--out", str(tmp_path))
    assert result.exit_code == 0, result.output
    claims = _strict_json(tmp_path / "results.json")["claims"]
    reached = {"bulk_error": "certified", "right_layer": "certified", "leading_loss": "sampled",
               "progress_direction": "sampled", "interior_error_bound": "certified", "label_encoding": "certified",
               "progress_along_error": "sampled"}
    assert {c["id"]: c["evidence_reached"] for c in claims} == {n: reached[n] for n in names}
    rows = {c["id"]: c for c in claims}
    for name in ("interior_error_bound", "bulk_error", "right_layer"):
        assert rows[name]["evidence"] == "certified" and rows[name]["details"]["level"] == "certified"
        certified_part = rows[name]["details"]["certified"]
        assert certified_part["status"] == "proved" and certified_part["whole_domain"] is True
        assert certified_part["undecided_fraction"] == 0.0 and certified_part["max_depth"] >= 0
        assert rows[name]["figure"].startswith("proved on the whole domain"), rows[name]["figure"]
        assert "undecided volume 0" in rows[name]["figure"]
        assert (tmp_path / f"{name}.certificate.json").is_file()
    assert "identity" in rows["bulk_error"]["details"]["certified"]
    for name in {"leading_loss", "progress_direction"} & set(names):  # quick sub-domain: the sampled verdict
        assert rows[name]["evidence"] == "sampled"
        assert rows[name]["details"]["certified"]["whole_domain"] is False
    proof = rows["label_encoding"]["details"]["symbolic_proof"]
    assert proof["status"] == "proved" and proof["general_n"]["difference"] == "0"
    assert "every context size n" in proof["proves"]


def test_builtin_lemmas_run_through_verify(tmp_path):
    """All built-in lemmas but the two whose quick certified sub-domain takes tens of seconds (slow test below)."""
    from stumpcheck.lemmas.builtin import LEMMA_NAMES

    slow = ("leading_loss", "progress_direction")
    _builtin_lemmas_through_verify(tmp_path, [n for n in LEMMA_NAMES if n not in slow])


@pytest.mark.slow
def test_every_builtin_lemma_runs_through_verify(tmp_path):
    from stumpcheck.lemmas.builtin import LEMMA_NAMES

    _builtin_lemmas_through_verify(tmp_path, list(LEMMA_NAMES))


def test_report_names_the_evidence_of_each_part(tmp_path):
    """A row whose parts rest on different evidence (details["evidence_parts"]) says so in report.md."""
    from stumpcheck.report import evidence_reached, write_report

    parts = {"population (every b >= b0)": "certified", "fresh contexts": "sampled (Monte Carlo, 95% CIs)"}
    results = [ClaimResult(id="P", statement="s", figure="f", tolerance="t", status="PASS", evidence="certified",
                           seconds=0.1, details={"evidence_parts": parts}),
               ClaimResult(id="Q", statement="s", figure="f", tolerance="t", status="PASS", evidence="sampled",
                           seconds=0.1)]
    write_report(results, tmp_path, run={"seed": 0})
    report = (tmp_path / "report.md").read_text(encoding="utf-8")
    line = ("- **evidence per part**: population (every b >= b0): certified; "
            "fresh contexts: sampled (Monte Carlo, 95% CIs)")
    assert report.split("## P:")[1].split("## Q:")[0].count(line) == 1
    assert "evidence per part" not in report.split("## Q:")[1]
    # a partial proof is not a proof of the whole row: it reaches the lowest level of its parts
    assert [evidence_reached(r) for r in results] == ["sampled", "sampled"]
    proved = ClaimResult(id="R", statement="s", figure="f", tolerance="t", status="PASS", evidence="certified",
                         seconds=0.1, details={"evidence_parts": {"population": "certified", "fresh": "certified"}})
    assert evidence_reached(proved) == "certified"


def test_report_helpers_make_json_finite_and_tables_aligned():
    results = [ClaimResult(id="X", statement="s|t", figure="f", tolerance="t", status="FAIL", evidence="sampled",
                           seconds=1.25, details={"v": [math.inf, -math.inf, 1.0], "t": (1, 2)})]
    document = results_document(results, {"seed": 0})
    assert document["claims"][0]["details"] == {"v": [None, None, 1.0], "t": [1, 2]}
    assert document["summary"]["failed"] == ["X"]
    json.dumps(document, allow_nan=False)
    assert finite_json(float("nan")) is None
    assert "s\\|t" in table(results, markdown=True)
    assert table(results).splitlines()[1].split()[-4:] == ["FAIL", "sampled", "1.2", "-"]


@pytest.mark.slow
def test_verify_quick_runs_every_claim_c1_to_c9(tmp_path):
    """The issue's acceptance run: ``stumpcheck verify --quick`` writes the report with all of
    C1–C9 (about 4 minutes on 2 cores). Exit status 0 or 1 is a verdict; the claims must be there
    and none 'not available'."""
    result = _invoke("--quick", "--out", str(tmp_path))
    assert result.exit_code in (0, 1), result.output
    claims = {c["id"]: c for c in _strict_json(tmp_path / "results.json")["claims"]}
    assert {f"C{i}" for i in range(1, 10)} <= set(claims)
    assert not [i for i, c in claims.items() if c["figure"].startswith("not available")]
    assert (tmp_path / "report.md").is_file()
