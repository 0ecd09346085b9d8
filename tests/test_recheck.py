"""Certified lemmas end to end with the real engine: a user lemma from docs/examples proved with
``--certified``, its certificate re-checked by ``stumpcheck recheck`` and tampered copies rejected; the
false example lemma refuted on a box that a 50-digit mpmath evaluation confirms; an undecided proof
keeps the sampled verdict. Domains are small sub-domains of the documented ones, so that the default
suite stays fast (the documented runs are in docs/lemmas.md and the slow test at the end)."""

from __future__ import annotations

import dataclasses
import json
from fractions import Fraction
from pathlib import Path

import mpmath
import pytest

from stumpcheck.numerics.certified.proofs.domains import Domain
from stumpcheck.numerics.certified.certificates.lemma_certificate import digest, exact_text
from stumpcheck.numerics.certified.proofs.margins import Margin
from stumpcheck.numerics.population import quantities as population
from stumpcheck.lemmas.catalogue import load_lemma
from stumpcheck.cli.commands import main
from stumpcheck.lemmas.check import check_lemma
from stumpcheck.lemmas import certified

EXAMPLES = Path(__file__).resolve().parent.parent / "docs" / "examples"
SLOPE = f"{EXAMPLES / 'bulk_slope.py'}:error_slope_in_the_bulk"
OVERSHOOT = f"{EXAMPLES / 'false_overshoot.py'}:overshoot_at_least_one_over_b"


def _on(entry, variables: dict, **changes):
    """The lemma with its certified domain replaced by a smaller one (same coordinates)."""
    spec = dataclasses.replace(entry.certify, domain=Domain(variables, "calibration"), **changes)
    return dataclasses.replace(entry, certify=spec)


def _write(path: Path, document: dict, *, reseal: bool = True) -> Path:
    if reseal:
        document["digest"] = digest(document)
    path.write_text(json.dumps(document), encoding="utf-8")
    return path


@pytest.fixture(scope="module")
def slope_certificate(tmp_path_factory):
    out = tmp_path_factory.mktemp("slope")
    entry = _on(load_lemma(SLOPE), {"b": ("20", "20.5"), "lam": ("-1", "1"), "theta": ("0.2", "0.8")})
    result = check_lemma(entry, level="certified", out_dir=out, max_examples=10)
    return result, out / "error_slope_in_the_bulk.certificate.json"


def test_a_user_lemma_is_proved_on_its_whole_domain_and_its_certificate_rechecks(slope_certificate, capsys):
    result, path = slope_certificate
    assert result.status == "PASS" and result.evidence == "certified", result.figure
    assert result.details["evidence_reached"] == "certified"
    summary = result.details["certified"]
    assert summary["status"] == "proved" and summary["undecided_fraction"] == 0 and summary["leaves"] > 10
    assert result.figure.startswith("proved on the whole domain b ∈ [20, 20.5], lam ∈ [-1, 1], theta ∈ [0.2, 0.8]")
    document = json.loads(path.read_text(encoding="utf-8"))
    assert document["format"] == "stumpcheck-lemma-certificate/2" and document["status"] == "proved"
    assert len(document["leaves"]) == summary["leaves"]
    assert set(document["versions"]) == {"python", "stumpcheck", "python-flint", "mpmath", "sympy"}
    assert len(document["generated_code"]["sha256"]) == 64
    assert main(["recheck", str(path)]) == 0
    out = capsys.readouterr().out
    assert out.startswith(f"PASS {path}: -b**2*e_b - 1/2 >= 0 for every b ∈ [20, 20.5]") and "leaves tile the domain exactly" in out
    # the same installation: the same generated and compiled code, so the one note is that the author's words of a
    # user lemma are not checked
    assert [line for line in out.splitlines() if "note:" in line] == [
        "  note: the author_statement (the author's words) is not checked: no built-in lemma is named "
        "'error_slope_in_the_bulk'; what passed is the derived statement"]


def test_recheck_in_a_fresh_process(slope_certificate):
    import subprocess
    import sys

    _, path = slope_certificate
    run = subprocess.run([sys.executable, "-m", "stumpcheck", "recheck", str(path), "--points", "midpoint"],
                         capture_output=True, text=True, timeout=600)
    assert run.returncode == 0, run.stderr
    assert run.stdout.startswith(f"PASS {path}")


def _interior(document: dict) -> int:
    """A leaf with its θ-interval strictly inside the domain's (its θ edges meet neighbours)."""
    lo, hi = (Fraction(x) for x in document["domain"]["variables"]["theta"])
    return next(i for i, leaf in enumerate(document["leaves"])
                if lo < Fraction(leaf["box"]["theta"][0]) and Fraction(leaf["box"]["theta"][1]) < hi)


@pytest.mark.parametrize("tamper, expected", [
    ("moved_edge", "do not tile the domain"),
    ("gap", "gap"),
    ("overlap", "overlaps"),
    ("narrowed_ball", "is not confirmed"),
    ("margin_source", "fails"),
    ("statement", "edited after it was written"),
])
def test_a_tampered_certificate_fails_recheck(slope_certificate, tmp_path, capsys, tamper, expected):
    _, path = slope_certificate
    document = json.loads(path.read_text(encoding="utf-8"))
    reseal = True
    index = _interior(document)
    leaf = document["leaves"][index]
    lo, hi = (Fraction(x) for x in leaf["box"]["theta"])
    if tamper == "moved_edge":
        leaf["box"]["theta"][1] = exact_text(hi - (hi - lo) / 8)
    elif tamper == "gap":
        del document["leaves"][index]
    elif tamper == "overlap":
        document["leaves"].append(dict(leaf, box={**leaf["box"], "theta": [exact_text(lo), exact_text((lo + hi) / 2)]}))
    elif tamper == "narrowed_ball":
        lower, upper = Fraction(leaf["lower"]), Fraction(leaf["upper"])
        leaf["lower"] = exact_text(lower + (upper - lower) * 3 / 4)
    elif tamper == "margin_source":
        document["margin"]["source"]["sympy_srepr"] = document["margin"]["source"]["sympy_srepr"].replace(
            "Rational(-1, 2)", "Rational(-1, 4)")  # a weaker statement than the one proved
    elif tamper == "statement":
        document["statement"] = document["statement"].replace("1/2", "1")
        reseal = False
    forged = _write(tmp_path / "forged.json", document, reseal=reseal)
    assert main(["recheck", str(forged), "--points", "midpoint"]) == 1
    out = capsys.readouterr().out
    assert out.startswith(f"FAIL {forged}:") and expected in out, out


def test_recheck_refuses_its_own_precision_and_a_corrupt_certificate(slope_certificate, tmp_path, capsys):
    _, path = slope_certificate
    document = json.loads(path.read_text(encoding="utf-8"))
    from stumpcheck.numerics.certified.certificates.lemma_recheck import recheck
    from stumpcheck.numerics.precision import InputError

    with pytest.raises(InputError, match="precision other than the certificate's"):
        recheck(document, prec_bits=document["prec_bits"])
    broken = tmp_path / "broken.json"
    broken.write_text(path.read_text(encoding="utf-8")[:-200], encoding="utf-8")
    assert main(["recheck", str(broken)]) == 2
    assert len(capsys.readouterr().err.strip().splitlines()) == 1
    document["margin"]["source"]["sympy_srepr"] = "__import__('os').getcwd()"
    assert main(["recheck", str(_write(tmp_path / "code.json", document))]) == 2
    assert "not a SymPy" in capsys.readouterr().err


def test_the_false_lemma_returns_a_box_where_the_margin_is_certainly_negative(tmp_path):
    entry = _on(load_lemma(OVERSHOOT), {"b": ("20", "21"), "lam": ("-1", "1"), "theta": ("0.6", "0.8")})
    result = check_lemma(entry, level="certified", out_dir=tmp_path, max_examples=10)
    assert result.status == "FAIL" and result.evidence == "certified"
    assert result.details["evidence_reached"] is None
    failure = result.details["certified"]["failure"]
    assert Fraction(failure["upper"]) < 0 and failure["confirmation"]["confirmed"]
    assert result.figure.startswith("refuted: the margin is certainly < 0 on the box")
    # the box's midpoint at 50 digits, independently of Arb: mpmath quadrature-free closed form
    mid = {v: Fraction(x) for v, x in failure["confirmation"]["midpoint"].items()}
    with mpmath.workdps(50):
        b = mpmath.mpf(mid["b"].numerator) / mid["b"].denominator
        rho1 = -3 * mpmath.zeta(3) + mpmath.mpf(3) / 2 + mpmath.pi ** 2 / 3
        a = b + 2 * mpmath.log(b) - rho1 / b + mpmath.mpf(mid["lam"].numerator) / mid["lam"].denominator
        theta = mpmath.mpf(mid["theta"].numerator) / mid["theta"].denominator
        value = b * population.error(a, b, theta) - 1
    lower, upper = (mpmath.mpf(x) for x in failure["confirmation"]["midpoint_ball"])
    assert value < 0 and lower <= value <= upper
    document = json.loads((tmp_path / "overshoot_at_least_one_over_b.certificate.json").read_text(encoding="utf-8"))
    assert document["status"] == "failed" and document["failure"]["box"] == failure["box"]


def test_an_undecided_proof_keeps_the_sampled_verdict_and_is_not_a_proof(tmp_path, capsys):
    entry = _on(load_lemma(SLOPE), {"b": ("20", "20.5"), "lam": ("-1", "1"), "theta": ("0.2", "0.8")},
                prove_options={"max_boxes": 6})
    result = check_lemma(entry, level="certified", out_dir=tmp_path, max_examples=10)
    assert result.status == "PASS" and result.evidence == "sampled"
    assert result.details["evidence_reached"] == "sampled"
    assert result.figure.startswith("not certified: ") and "sampled: smallest margin" in result.figure
    summary = result.details["certified"]
    assert summary["status"] == "undecided" and 0 < summary["undecided_fraction"] <= 1
    assert summary["undecided_boxes"] and summary["undecided_count"] >= len(summary["undecided_boxes"])
    assert main(["recheck", str(tmp_path / "error_slope_in_the_bulk.certificate.json")]) == 1
    assert "not a proof" in capsys.readouterr().out


def test_a_quick_sub_domain_is_reported_as_such(tmp_path):
    entry = load_lemma(SLOPE)
    small = Domain({"b": ("20", "20.25"), "lam": ("-1", "1"), "theta": ("0.4", "0.6")}, "calibration")
    entry = dataclasses.replace(entry, certify=dataclasses.replace(entry.certify, quick_domain=small))
    result = check_lemma(entry, level="certified", out_dir=tmp_path, max_examples=10, quick=True)
    assert result.evidence == "sampled" and result.details["evidence_reached"] == "sampled"
    assert result.figure.startswith("certified on the quick sub-domain b ∈ [20, 20.25]")


def python_margin(a, b):
    """b − a over balls (a test margin given as Python source)."""
    return b - a


def test_a_python_margin_runs_in_recheck_only_when_allowed(tmp_path, capsys):
    from stumpcheck.numerics.certified.certificates.lemma_certificate import certificate, write_certificate
    from stumpcheck.numerics.certified.proofs.margin_proof import prove

    margin = Margin.from_python(python_margin, coordinates="abtheta")
    domain = Domain({"a": ("0", "1"), "b": ("2", "3")}, "abtheta")
    proof = prove(margin, domain)
    assert proof.status == "proved"
    path = write_certificate(certificate("b ≥ a", margin, domain, proof, strict=False), tmp_path / "py.json")
    assert main(["recheck", str(path)]) == 2
    assert "--allow-python" in capsys.readouterr().err
    assert main(["recheck", str(path), "--allow-python"]) == 0


def test_verify_certified_writes_the_certificate_and_the_reached_column(tmp_path, capsys):
    lemma_file = tmp_path / "small_slope.py"
    lemma_file.write_text(
        "import importlib.util, sys\n"
        f"spec = importlib.util.spec_from_file_location('bulk_slope_example', {str(EXAMPLES / 'bulk_slope.py')!r})\n"
        "example = importlib.util.module_from_spec(spec); spec.loader.exec_module(example)\n"
        "import dataclasses\n"
        "from stumpcheck.numerics.certified.proofs.domains import Domain\n"
        "small = dataclasses.replace(example.error_slope_in_the_bulk, certify=dataclasses.replace(\n"
        "    example.error_slope_in_the_bulk.certify,\n"
        "    domain=Domain({'b': ('20', '20.25'), 'lam': ('-1', '1'), 'theta': ('0.4', '0.6')}, 'calibration')))\n",
        encoding="utf-8")
    out = tmp_path / "report"
    assert main(["verify", "--lemma", f"{lemma_file}:small", "--certified", "--out", str(out),
                 "--max-examples", "5"]) == 0
    printed = capsys.readouterr().out
    assert printed.splitlines()[0].split()[-1] == "reached" and "certified" in printed.splitlines()[1]
    claim = json.loads((out / "results.json").read_text(encoding="utf-8"))["claims"][0]
    assert claim["evidence"] == "certified" and claim["evidence_reached"] == "certified"
    assert claim["details"]["certified"]["certificate"] == "error_slope_in_the_bulk.certificate.json"
    assert main(["recheck", str(out / "error_slope_in_the_bulk.certificate.json"), "--points", "midpoint"]) == 0


@pytest.mark.slow
def test_the_documented_lemmas_on_their_whole_domains(tmp_path, capsys):
    """docs/lemmas.md's runs: the slope lemma proved on b ∈ [20, 30] (about 1800 boxes) and re-checked,
    the false lemma refuted."""
    assert main(["verify", "--lemma", SLOPE, "--certified", "--out", str(tmp_path / "slope")]) == 0
    assert main(["recheck", str(tmp_path / "slope" / "error_slope_in_the_bulk.certificate.json")]) == 0
    assert main(["verify", "--lemma", OVERSHOOT, "--certified", "--out", str(tmp_path / "false")]) == 1
