"""One margin per lemma (issue "Trust", item 4): the sampled search, the high-precision check and the proof
evaluate one SymPy margin; a file's Python margin is compared with it at every sampled point."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import mpmath
import pytest
from hypothesis import strategies as st

from stumpcheck.numerics.precision import InputError
from stumpcheck.lemmas import certified_builtins as cb
from stumpcheck.lemmas.catalogue import load_lemma, registry
from stumpcheck.lemmas.check import check_lemma
from stumpcheck.lemmas import Lemma, certified, lemma

ROOT = Path(__file__).resolve().parent.parent
BULK_SLOPE = ROOT / "docs" / "examples" / "bulk_slope.py"


def _two_margin_file(tmp_path) -> str:
    """docs/examples/bulk_slope.py with Python margin −b²·e_b + 10 and SymPy margin −b**2*e_b − 5."""
    text = BULK_SLOPE.read_text()
    text = text.replace('SLOPE_MARGIN = "-b**2*e_b - 1/2"', 'SLOPE_MARGIN = "-b**2*e_b - 5"')
    text = text.replace("[1] - 0.5)", "[1] + 10)")
    assert "- 5\"" in text and "+ 10)" in text
    path = tmp_path / "two_margins.py"
    path.write_text(text)
    return f"{path}:error_slope_in_the_bulk"


def test_the_two_margin_lemma_is_exit_2_with_the_point(tmp_path):
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    done = subprocess.run([sys.executable, "-m", "stumpcheck", "verify", "--lemma", _two_margin_file(tmp_path),
                           "--out", str(tmp_path / "out")], capture_output=True, text=True, env=env, timeout=120)
    assert done.returncode == 2, done.stdout + done.stderr
    last = done.stderr.strip().splitlines()[-1]
    assert last.startswith("stumpcheck: error: lemma error_slope_in_the_bulk: its Python margin and its SymPy "
                           "margin disagree at {b=")
    assert "the SymPy margin is -4." in last and "Traceback" not in done.stderr


def test_the_examples_python_and_sympy_margins_agree_at_every_sampled_point():
    for spec in (f"{BULK_SLOPE}:error_slope_in_the_bulk",
                 f"{ROOT / 'docs' / 'examples' / 'false_overshoot.py'}:overshoot_at_least_one_over_b"):
        entry = load_lemma(spec)
        result = check_lemma(entry, level="sampled", max_examples=60)
        assert result.details["margin"].startswith("the SymPy margin (compared"), result.details


def test_a_python_margin_that_differs_only_somewhere_is_caught():
    from stumpcheck.numerics.certified.proofs.margins import Margin

    def margin(b):
        return b + (1.0 if b > 0.5 else 0.0)  # equals the SymPy margin b only for b ≤ 1/2

    entry = Lemma(name="somewhere", statement="s", domain={"b": st.floats(0.0, 1.0)}, margin=margin,
                  sympy_margin=lambda: Margin.from_sympy("b", coordinates="abtheta"))
    with pytest.raises(InputError, match=r"disagree at \{b=0\.[5-9]|disagree at \{b=1\.0"):
        check_lemma(entry, max_examples=50)


def test_a_python_only_lemma_is_labelled_sampled_only_and_cannot_be_certified():
    from stumpcheck.numerics.certified.proofs.margins import Margin

    entry = Lemma(name="py", statement="s", domain={"x": st.integers(0, 5)}, margin=lambda x: 1.0)
    result = check_lemma(entry, max_examples=5)
    assert result.status == "PASS" and result.figure.endswith("Python margin (sampled only: no SymPy margin to certify)")
    assert result.details["margin"] == "a Python function (sampled only)"

    def ball_margin(b, lam, theta):
        return b

    python_certified = Lemma(name="pyc", statement="s", domain={"b": st.floats(1, 2)}, margin=lambda b: 1.0,
                             evidence=("sampled", "certified"),
                             certify=certified(lambda: Margin.from_python(ball_margin, coordinates="calibration"),
                                               lambda: None))
    with pytest.raises(InputError, match="its certified margin is Python code"):
        check_lemma(python_certified, level="certified")


@pytest.mark.parametrize("name", ["interior_error_bound", "leading_loss", "progress_direction"])
def test_builtin_proofs_enclose_the_margin_the_search_evaluates(name):
    entry = registry()[name]
    assert entry.python_margin is None  # no second margin
    assert entry.certify.margin is entry.sympy_margin  # the proof's margin is the lemma's one margin


@pytest.mark.parametrize("name", ["bulk_error", "right_layer"])
def test_builtin_identities_are_about_the_margin_the_search_evaluates(name):
    from stumpcheck.theory.margin_identities import identity_for

    entry = registry()[name]
    assert entry.python_margin is None
    assert identity_for(name).record()["stated_margin"]["srepr"] == entry.sympy_margin().source["sympy_srepr"]


def test_perturbing_a_builtin_sympy_margin_changes_the_sampled_verdict(monkeypatch):
    """interior_error_bound's margin 2 − b|e| passes; with 1/2 − b|e| in its one SymPy definition (the text the
    proof would compile too) the sampled search fails: the search evaluates that definition, not other code."""
    entry = registry()["interior_error_bound"]
    assert check_lemma(entry, level="sampled", max_examples=20).status == "PASS"
    monkeypatch.setitem(cb._MARGINS, "interior_error_bound", ("1/2 - b*Abs(e)", "calibration", False))
    cb.certified_specs.cache_clear()
    saved = entry.__dict__.pop("_point_margins", None)
    try:
        failed = check_lemma(entry, level="sampled", max_examples=20)
        assert failed.status == "FAIL" and failed.details["counterexample_margin"] < 0
        assert entry.certify.resolve(quick=False, name=entry.name)[0].source["sympy_srepr"] == \
            entry.sympy_margin().source["sympy_srepr"]
    finally:
        cb.certified_specs.cache_clear()
        entry.__dict__["_point_margins"] = saved or {}


def test_high_precision_evaluates_the_sympy_margin_at_more_digits():
    result = check_lemma(registry()["bulk_error"], level="high-precision", max_examples=10)
    assert result.status == "PASS", result.figure
    assert result.details["agreeing_digits"] > 14


def test_a_cancelling_sympy_margin_is_evaluated_to_float64_accuracy():
    """The bulk margin at b = 100, θ = 0.05, a − b = 2 is about 7.4·10⁻⁴³: 30 digits alone give noise."""
    entry = registry()["bulk_error"]
    with mpmath.workdps(30):
        value = entry.margin(b=100.0, theta=0.05, excess=2.0)
    with mpmath.workdps(200):
        reference = entry.point_margin(("b", "excess", "theta")).value({"b": 100.0, "theta": 0.05, "excess": 2.0})
    assert value == pytest.approx(float(reference), rel=1e-15) and 0 < value < 1e-40
