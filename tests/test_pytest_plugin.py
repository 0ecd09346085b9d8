"""The pytest plugin (:mod:`stumpcheck.pytest_plugin`) and lemmas as tests (:meth:`stumpcheck.lemmas.Lemma.as_test`).

Scratch projects are run by pytest's ``pytester`` in this process. The plugin is loaded explicitly
(``-p stumpcheck.pytest_plugin``) because the sources under test need not be the installed ones, and the
installed entry point is turned off (``-p no:stumpcheck``) so that it cannot load a second copy. Each test
gets its own copy of the lemma registry: a scratch project's lemma files register their lemmas when pytest
imports them.
"""

from __future__ import annotations

import json
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

# imported before any scratch run: pytester's in-process runs drop the modules they imported, and numpy's
# extension modules cannot be imported a second time in one process
import stumpcheck.numerics.corpus.corpora  # noqa: F401
import stumpcheck.numerics.generated.asymptotics_numpy  # noqa: F401
import stumpcheck.numerics.generated.population_numpy  # noqa: F401
from stumpcheck.lemmas import definitions
from stumpcheck.lemmas.files import load_lemmas
from stumpcheck.numerics.precision import InputError

pytest_plugins = ["pytester"]

ROOT = Path(__file__).resolve().parent.parent
EXAMPLES = ROOT / "examples"
PLUGIN = ("-p", "no:stumpcheck", "-p", "stumpcheck.pytest_plugin")
HEAVY = ("numpy", "mpmath", "sympy", "flint", "scipy", "matplotlib", "numba", "hypothesis")


@pytest.fixture(autouse=True)
def _own_registry(monkeypatch):
    monkeypatch.setattr(definitions, "_REGISTRY", dict(definitions._REGISTRY))


def _scratch(pytester, **files):
    """A scratch project with the two example lemma files: false_lemma.py and lemmas_true.py."""
    pytester.makepyfile(false_lemma=(EXAMPLES / "false_lemma.py").read_text(),
                        lemmas_true=(EXAMPLES / "lemma_example.py").read_text(), **files)


def _replay_line(lines) -> tuple[str, dict]:
    """The replay recipe printed by a failed lemma test, run here: (its text, the result's details)."""
    line = next(text for text in lines if "replay: from stumpcheck.lemmas import" in text)
    code = line.split("replay: ", 1)[1]
    statement, expression = code.split("; ", 1)
    namespace: dict = {}
    exec(statement, namespace)  # noqa: S102 - the recipe is what a user pastes
    result = eval(expression, namespace)  # noqa: S307
    return expression, result


# --------------------------------------------------------------------------------------------------------
# the plugin module


def test_pyproject_declares_the_plugin_entry_point():
    with open(ROOT / "pyproject.toml", "rb") as handle:
        project = tomllib.load(handle)["project"]
    assert project["entry-points"]["pytest11"] == {"stumpcheck": "stumpcheck.pytest_plugin"}


def test_importing_the_plugin_loads_no_numeric_stack():
    """pytest imports the plugin in every session of every user: it must stay light."""
    probe = (f"import json, sys; import stumpcheck.pytest_plugin; "
             f"print(json.dumps(sorted({{m.split('.')[0] for m in sys.modules}} & set({HEAVY!r}))))")
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, cwd=ROOT, timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]
    assert json.loads(done.stdout.strip().splitlines()[-1]) == []


# --------------------------------------------------------------------------------------------------------
# Lemma.as_test


def test_as_test_collects_a_true_lemma_that_passes_and_a_false_one_that_fails_with_its_counterexample(pytester):
    _scratch(pytester, test_scratch="""
        from false_lemma import half_over_b
        from lemmas_true import overshoot_in_the_interior

        test_half_over_b = half_over_b.as_test(max_examples=20, seed=0)
        test_overshoot = overshoot_in_the_interior.as_test(max_examples=20)
        """)
    result = pytester.runpytest(*PLUGIN, "-v")
    result.assert_outcomes(passed=1, failed=1)
    result.stdout.fnmatch_lines([
        "*test_scratch.py::test_half_over_b FAILED*",
        "*test_scratch.py::test_overshoot PASSED*",
        "*lemma half_over_b: FAIL at level sampled*",
        "*figure: counterexample (shrunk) {b=*, offset=*, theta=*}: margin -*",
        "*replay: from stumpcheck.lemmas import check_lemma, load_lemma; "
        "check_lemma(load_lemma('false_lemma.py:half_over_b'), seed=0, max_examples=20)",
        "*or: stumpcheck verify --lemma false_lemma.py:half_over_b --seed 0 --max-examples 20",
    ])
    # the counterexample is the shrunk point, and the printed recipe replays it in a fresh load of the file
    shown = next(line for line in result.outlines if "counterexample: {" in line)
    point = json.loads(shown.split("counterexample: ", 1)[1].rsplit(", margin", 1)[0])
    _, replayed = _replay_line(result.outlines)
    assert replayed.status == "FAIL"
    assert replayed.details["counterexample"] == point
    assert replayed.details["counterexample_margin"] < 0
    assert f"margin {replayed.details['counterexample_margin']!r}" in shown


def test_a_lemma_defined_in_the_test_module_replays_from_that_module(pytester):
    pytester.makepyfile(test_inline="""
        from hypothesis import strategies as st
        from stumpcheck.lemmas import lemma

        @lemma(name="at_most_ten", statement="x <= 10", domain={"x": st.integers(0, 1000)})
        def at_most_ten(x):
            return 10 - x

        test_at_most_ten = at_most_ten.as_test(max_examples=30, seed=2)
        """)
    result = pytester.runpytest(*PLUGIN)
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(["*counterexample: {\"x\": 11}, margin -1.0*",
                                 "*check_lemma(load_lemma('test_inline.py:at_most_ten'), seed=2, max_examples=30)"])
    _, replayed = _replay_line(result.outlines)
    assert replayed.details["counterexample"] == {"x": 11}


def test_as_test_checks_its_arguments_when_the_test_is_made():
    false = load_lemmas(EXAMPLES / "false_lemma.py")["half_over_b"]
    with pytest.raises(InputError, match="sampled-only, not certified"):
        false.as_test(level="certified")
    with pytest.raises(InputError, match="level must be one of"):
        false.as_test(level="proved")
    for bad in (dict(max_examples=0), dict(seed=-1), dict(seed=True), dict(dps=5), dict(quick="yes")):
        with pytest.raises(InputError):
            false.as_test(**bad)
    test = false.as_test(max_examples=7)
    assert test.__name__ == "test_half_over_b" and test.options["max_examples"] == 7
    assert test.options["level"] == "sampled" and test.lemma is false


def test_as_test_fails_a_check_that_passes_below_the_level_asked_for(monkeypatch):
    """A certified test is not passed by sampled evidence (a proof on the quick sub-domain only)."""
    from stumpcheck.claims.result import ClaimResult
    from stumpcheck.lemmas import LemmaFailure, testing

    entry = load_lemmas(EXAMPLES / "false_lemma.py")["half_over_b"]
    sampled_pass = ClaimResult(id=entry.name, statement=entry.statement, figure="certified on the quick "
                               "sub-domain only; sampled: smallest margin 0.1", tolerance="t", status="PASS",
                               evidence="sampled", seconds=0.0, details={"replay": "check_lemma(...)"})
    monkeypatch.setattr(testing, "check_lemma", lambda *args, **kwargs: sampled_pass)
    options = dict(testing.lemma_test_options(entry), level="certified")
    with pytest.raises(LemmaFailure, match="reached sampled evidence only, not certified") as caught:
        testing.check_as_test(entry, options)
    assert caught.value.result is sampled_pass
    options["level"] = "sampled"
    assert testing.check_as_test(entry, options) is sampled_pass


# --------------------------------------------------------------------------------------------------------
# lemma files named by the ini setting


def test_lemma_files_named_in_the_ini_are_collected_one_item_per_lemma(pytester):
    _scratch(pytester)
    pytester.makeini("[pytest]\nstumpcheck_lemma_files = lemmas_*.py false_lemma.py\nstumpcheck_max_examples = 20\n")
    collected = pytester.runpytest(*PLUGIN, "--collect-only", "-q")
    collected.stdout.fnmatch_lines(["false_lemma.py::half_over_b", "lemmas_true.py::overshoot_in_the_interior",
                                    "2 tests collected*"])
    result = pytester.runpytest(*PLUGIN, "-v")
    result.assert_outcomes(passed=1, failed=1)
    result.stdout.fnmatch_lines([
        "*false_lemma.py::half_over_b FAILED*", "*lemmas_true.py::overshoot_in_the_interior PASSED*",
        "lemma half_over_b: FAIL at level sampled",
        "counterexample: {*}, margin -*",
        "replay: *check_lemma(load_lemma('false_lemma.py:half_over_b'), seed=0, max_examples=20)",
    ])
    _, replayed = _replay_line(result.outlines)
    assert replayed.status == "FAIL"
    # a level a lemma does not have skips it; a bad setting is a usage error before any test
    skipped = pytester.runpytest(*PLUGIN, "-o", "stumpcheck_level=certified", "-rs")
    skipped.assert_outcomes(skipped=2)
    skipped.stdout.fnmatch_lines(["*lemma half_over_b supports sampled, not certified*"])
    bad = pytester.runpytest(*PLUGIN, "-o", "stumpcheck_seed=-1")
    assert bad.ret == pytest.ExitCode.USAGE_ERROR
    bad.stderr.fnmatch_lines(["*stumpcheck_seed must be an int >= 0, got '-1'*"])


def test_a_lemma_file_that_does_not_import_is_a_collection_error_in_one_line(pytester):
    pytester.makepyfile(lemmas_broken="raise RuntimeError('boom')\n")
    pytester.makeini("[pytest]\nstumpcheck_lemma_files = lemmas_*.py\n")
    result = pytester.runpytest(*PLUGIN)
    result.assert_outcomes(errors=1)
    result.stdout.fnmatch_lines(["lemma file: importing 'lemmas_broken.py' failed: RuntimeError: boom"])


def test_without_the_ini_setting_no_lemma_file_is_collected(pytester):
    _scratch(pytester)
    result = pytester.runpytest(*PLUGIN, "false_lemma.py", "lemmas_true.py")
    assert result.ret == pytest.ExitCode.NO_TESTS_COLLECTED


def test_load_lemmas_lists_the_lemmas_a_file_defines_not_those_it_imports(tmp_path, monkeypatch):
    (tmp_path / "first.py").write_text((EXAMPLES / "lemma_example.py").read_text())
    (tmp_path / "second.py").write_text("from first import overshoot_in_the_interior\nalias = overshoot_in_the_interior\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    first = load_lemmas(tmp_path / "first.py")
    assert list(first) == ["overshoot_in_the_interior"]
    assert first["overshoot_in_the_interior"].source == f"{tmp_path / 'first.py'}:overshoot_in_the_interior"
    assert load_lemmas(tmp_path / "second.py") == {}


# --------------------------------------------------------------------------------------------------------
# fixtures


def test_the_precision_fixture_restores_mpmath_even_when_the_test_fails_and_is_opt_in(pytester):
    pytester.makepyfile(test_precision="""
        import mpmath
        import pytest

        START = (mpmath.mp.prec, mpmath.mp.pretty)

        def test_sets_it_and_fails(stumpcheck_precision):
            assert stumpcheck_precision.saved_prec == START[0]
            stumpcheck_precision.dps = 80
            mpmath.mp.pretty = True
            assert mpmath.mp.dps == 80 and stumpcheck_precision.prec == mpmath.mp.prec
            assert False, "fails on purpose"

        def test_it_was_restored():
            assert (mpmath.mp.prec, mpmath.mp.pretty) == START

        @pytest.mark.parametrize("stumpcheck_precision", [30, 60], indirect=True)
        def test_indirect_parametrization_sets_dps(stumpcheck_precision):
            assert mpmath.mp.dps == stumpcheck_precision.dps
            assert mpmath.mp.dps in (30, 60)

        def test_bad_values_are_refused(stumpcheck_precision):
            for bad in (0, -3, 2.5, True):
                with pytest.raises(ValueError, match="must be an int >= 1"):
                    stumpcheck_precision.dps = bad
            stumpcheck_precision.prec = 200
            assert mpmath.mp.prec == 200

        def test_restored_again():
            assert (mpmath.mp.prec, mpmath.mp.pretty) == START

        def test_a_test_without_the_fixture_is_left_alone():
            mpmath.mp.dps = 40

        def test_so_the_next_one_sees_its_precision():
            assert mpmath.mp.dps == 40
        """)
    result = pytester.runpytest(*PLUGIN, "-p", "no:randomly")
    result.assert_outcomes(passed=7, failed=1)
    result.stdout.fnmatch_lines(["*test_sets_it_and_fails*", "*fails on purpose*"])


def test_the_strategy_fixtures_draw_valid_values_inside_given(pytester):
    pytester.makepyfile(test_strategies="""
        import math

        import numpy as np
        from hypothesis import given, settings, strategies as st

        def within(value, lo, hi, slack=0.0):
            return lo - slack <= value <= hi + slack

        @settings(max_examples=25, deadline=None)
        @given(data=st.data())
        def test_points(data, stumpcheck_parameters, stumpcheck_scales, stumpcheck_thresholds, stumpcheck_offsets,
                        stumpcheck_precisions, stumpcheck_rates):
            a, b, theta = data.draw(stumpcheck_parameters)
            assert within(b, 1e-2, 1e4) and within(theta, 0.0, 1.0)
            # a = offset + b·θ is rounded once: a − bθ meets the offset bounds to within that rounding
            assert within(a - b * theta, -50.0, 1e3, slack=4 * math.ulp(abs(a) + abs(b * theta)))
            assert within(data.draw(stumpcheck_scales), 1e-2, 1e4)
            assert within(data.draw(stumpcheck_thresholds), 0.0, 1.0)
            assert within(data.draw(stumpcheck_offsets), -50.0, 1e3)
            digits = data.draw(stumpcheck_precisions)
            assert isinstance(digits, int) and 15 <= digits <= 60
            rate = data.draw(stumpcheck_rates)
            assert rate == 0.0 or within(abs(rate), 1e-300, 1e5)

        @settings(max_examples=10, deadline=None)
        @given(data=st.data())
        def test_corpora(data, stumpcheck_corpora, stumpcheck_strategies):
            corpus = data.draw(stumpcheck_corpora)
            assert 1 <= corpus.m <= 32 and 1 <= corpus.n <= 64
            assert corpus.x.shape == (corpus.m, corpus.n) and corpus.theta.shape == (corpus.m,)
            assert np.all((corpus.x >= 0) & (corpus.x <= 1)) and np.all((corpus.theta >= 0) & (corpus.theta <= 1))
            small = data.draw(stumpcheck_strategies.corpora(max_m=3, max_n=4, prior=(0.25, 0.5)))
            assert small.m <= 3 and small.n <= 4 and np.all((small.theta >= 0.25) & (small.theta <= 0.5))
            _, b, _ = data.draw(stumpcheck_strategies.parameters(min_b=10.0, max_b=20.0))
            assert 10.0 <= b <= 20.0
        """)
    result = pytester.runpytest(*PLUGIN)
    result.assert_outcomes(passed=2)


def test_the_plugin_lists_its_fixtures(pytester):
    pytester.makepyfile(test_nothing="def test_nothing():\n    pass\n")
    result = pytester.runpytest(*PLUGIN, "--fixtures")
    assert result.ret == pytest.ExitCode.OK
    listed = {line.split(" ", 1)[0] for line in result.outlines if line.startswith("stumpcheck_")}
    assert listed == {"stumpcheck_precision", "stumpcheck_strategies", "stumpcheck_parameters", "stumpcheck_scales",
                      "stumpcheck_thresholds", "stumpcheck_offsets", "stumpcheck_precisions", "stumpcheck_rates",
                      "stumpcheck_corpora"}
