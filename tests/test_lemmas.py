"""The lemma registry (:mod:`stumpcheck.lemmas`): registration, loading user files, the
Hypothesis search (shrinking, replay by seed, target), claim entries and their failures."""

from __future__ import annotations

import importlib.util
import math
import sys
from pathlib import Path

import pytest
from hypothesis import strategies as st

from stumpcheck.claims.result import ClaimResult
from stumpcheck.numerics.precision import InputError
from stumpcheck.lemmas import definitions as lemmas
from stumpcheck.lemmas.builtin import CLAIM_IDS, LEMMA_NAMES
from stumpcheck.lemmas.catalogue import get, load_lemma, registry
from stumpcheck.lemmas.check import check_lemma, run_entry
from stumpcheck.lemmas import ClaimCheck, Lemma, lemma

EXAMPLES = Path(__file__).resolve().parent.parent / "examples"


def _lemma(margin, domain=None, **options):
    return Lemma(name=options.pop("name", "t"), statement="test statement",
                 domain=domain or {"x": st.integers(0, 1000)}, margin=margin, **options)


# --------------------------------------------------------------------------------------
# registry


def test_registry_has_the_claims_then_the_builtin_lemmas():
    names = list(registry())
    assert names[:9] == list(CLAIM_IDS)
    assert set(LEMMA_NAMES) <= set(names)
    assert all(isinstance(registry()[i], ClaimCheck) for i in CLAIM_IDS)
    assert all(isinstance(registry()[n], Lemma) for n in LEMMA_NAMES)


def test_get_unknown_name_is_input_error():
    assert get("C3").name == "C3"
    with pytest.raises(InputError, match="no lemma or claim named 'C10'"):
        get("C10")


@pytest.mark.parametrize("bad", [
    dict(name="has space"), dict(name="a,b"), dict(name=""), dict(statement=" "), dict(margin=3),
    dict(domain={"x": 3}), dict(domain=[1, 2]), dict(evidence=()), dict(evidence=("proved",)),
    dict(evidence=("certified",)), dict(max_examples=0),
])
def test_lemma_validates_its_fields(bad):
    fields = dict(name="ok", statement="s", domain={"x": st.integers()}, margin=lambda x: 1.0)
    fields.update(bad)
    with pytest.raises(ValueError):
        Lemma(**fields)


@pytest.mark.parametrize("bad", [dict(strict=1), dict(dps=10), dict(dps=True), dict(max_leaves=3)])
def test_certified_specs_validate_their_fields(bad):
    with pytest.raises(ValueError):
        lemmas.certified(lambda: None, lambda: None, **bad)


def test_a_certified_spec_is_a_certify_and_resolves_to_a_margin_and_a_domain():
    spec = lemmas.certified(lambda: "not a margin", lambda: "not a domain", max_boxes=10)
    entry = Lemma(name="ok", statement="s", domain={"x": st.integers()}, margin=lambda x: 1.0,
                  evidence=("sampled", "certified"), certify=spec)
    assert entry.certify.prove_options == {"max_boxes": 10} and entry.certify.strict is False
    with pytest.raises(InputError, match="lemma ok: its certified margin must be a Margin, got str"):
        spec.resolve(quick=True, name="ok")

    def broken():
        raise RuntimeError("no such quantity")

    with pytest.raises(InputError, match="building its certified margin failed: RuntimeError: no such quantity"):
        lemmas.certified(broken, broken).resolve(quick=False, name="ok")


def test_register_refuses_a_second_definition_under_the_same_name(monkeypatch):
    monkeypatch.setattr(lemmas, "_REGISTRY", dict(lemmas._REGISTRY))

    def margin(x):
        return 1.0

    first = lemma(name="dup", statement="s", domain={"x": st.integers()})(margin)
    assert lemmas._REGISTRY["dup"] is first
    lemma(name="dup", statement="s", domain={"x": st.integers()})(margin)  # same definition again: fine
    with pytest.raises(ValueError, match="already registered"):
        lemma(name="dup", statement="s", domain={"x": st.integers()})(lambda x: 2.0)
    with pytest.raises(ValueError, match="already registered"):
        lemma(name="C1", statement="s", domain={"x": st.integers()})(margin)


# --------------------------------------------------------------------------------------
# load_lemma


def test_load_lemma_returns_the_example_lemmas():
    true = load_lemma(f"{EXAMPLES / 'lemma_example.py'}:overshoot_in_the_interior")
    false = load_lemma(f"{EXAMPLES / 'false_lemma.py'}:half_over_b")
    assert isinstance(true, Lemma) and true.name == "overshoot_in_the_interior"
    assert isinstance(false, Lemma) and false.name == "half_over_b"
    # loading the same file twice is fine (same definition)
    assert load_lemma(f"{EXAMPLES / 'false_lemma.py'}:half_over_b").name == "half_over_b"


@pytest.mark.parametrize(("spec", "message"), [
    ("no_colon.py", "must be FILE.py:NAME"),
    (":name", "must be FILE.py:NAME"),
    ("file.py:", "must be FILE.py:NAME"),
    ("/nonexistent/lemmas.py:x", "no such file"),
])
def test_load_lemma_rejects_bad_specs(spec, message):
    with pytest.raises(InputError, match=message):
        load_lemma(spec)


def test_load_lemma_reports_missing_names_non_lemmas_and_import_errors(tmp_path):
    good = tmp_path / "mine.py"
    good.write_text("VALUE = 3\n")
    with pytest.raises(InputError, match="has no attribute 'other'"):
        load_lemma(f"{good}:other")
    with pytest.raises(InputError, match="is a int, not a Lemma"):
        load_lemma(f"{good}:VALUE")
    broken = tmp_path / "broken.py"
    broken.write_text("raise RuntimeError('boom')\n")
    with pytest.raises(InputError, match="importing .* failed: RuntimeError: boom"):
        load_lemma(f"{broken}:anything")
    syntax = tmp_path / "syntax.py"
    syntax.write_text("def (:\n")
    with pytest.raises(InputError, match="SyntaxError"):
        load_lemma(f"{syntax}:anything")


# --------------------------------------------------------------------------------------
# check_lemma: the Hypothesis search


def test_false_lemma_is_shrunk_to_the_smallest_counterexample():
    """x ≤ 10 over integers 0..1000 fails; Hypothesis shrinks to x = 11 (margin −1)."""
    result = check_lemma(_lemma(lambda x: 10.0 - x), max_examples=100, seed=3)
    assert result.status == "FAIL"
    assert result.details["counterexample"] == {"x": 11}
    assert result.details["counterexample_margin"] == -1.0
    assert result.details["seed"] == 3 and "seed 3" in result.figure
    assert "x=11" in result.figure


def test_example_false_lemma_fails_with_a_shrunk_counterexample_that_replays():
    false = load_lemma(f"{EXAMPLES / 'false_lemma.py'}:half_over_b")
    first = check_lemma(false, seed=5)
    assert first.status == "FAIL"
    point = first.details["counterexample"]
    assert set(point) == {"b", "offset", "theta"}
    # the reported point really is a counterexample, with the reported margin
    assert false.margin(**point) == first.details["counterexample_margin"] < 0
    # shrunk: Hypothesis moves every coordinate to its simplest value (offset 0, b and θ round numbers)
    assert point["offset"] == 0.0 and float(point["b"]).is_integer()
    again = check_lemma(false, seed=5)
    assert again.details["counterexample"] == point


def _replay(recipe: str):
    """Run a replay recipe with the names of :mod:`stumpcheck.lemmas`, as a user would paste it."""
    from stumpcheck import lemmas as package

    return eval(recipe, {name: getattr(package, name) for name in ("check_lemma", "load_lemma", "get")})  # noqa: S307


def test_the_replay_recipe_of_a_lemma_loaded_from_a_file_loads_that_file(monkeypatch):
    """``get`` knows only registered lemmas: the recipe of a file's lemma names the file, and running it
    (in another working directory than the file's, with a relative path) gives the same result."""
    monkeypatch.chdir(EXAMPLES.parent)
    false = load_lemma("examples/false_lemma.py:half_over_b")
    assert false.source == "examples/false_lemma.py:half_over_b"
    first = check_lemma(false, seed=4, max_examples=30)
    recipe = first.details["replay"]
    assert recipe == "check_lemma(load_lemma('examples/false_lemma.py:half_over_b'), seed=4, max_examples=30)"
    again = _replay(recipe)
    assert (again.status, again.details["counterexample"], again.details["counterexample_margin"]) == (
        "FAIL", first.details["counterexample"], first.details["counterexample_margin"])
    assert again.details["replay"] == recipe
    true = load_lemma("examples/lemma_example.py:overshoot_in_the_interior")
    passed = check_lemma(true, seed=1, max_examples=20, dps=40)
    assert passed.details["replay"] == ("check_lemma(load_lemma('examples/lemma_example.py:overshoot_in_the_interior'), "
                                        "seed=1, max_examples=20, dps=40)")
    assert _replay(passed.details["replay"]).details["min_margin"] == passed.details["min_margin"]


def test_the_replay_recipe_of_a_builtin_a_module_lemma_and_a_notebook_lemma(tmp_path, monkeypatch):
    builtin = next(entry for entry in registry().values() if isinstance(entry, Lemma) and entry.python_margin)
    from stumpcheck.lemmas.replay import replay_recipe

    assert replay_recipe(builtin, level="sampled", seed=2, max_examples=5) == (
        f"check_lemma(get({builtin.name!r}), seed=2, max_examples=5)")
    assert replay_recipe(builtin, level="high-precision", seed=0, max_examples=5) == (
        f"check_lemma(get({builtin.name!r}), level='high-precision', seed=0, max_examples=5)")
    # a lemma file imported as a module (as pytest imports a test module): its file, found from the margin
    (tmp_path / "my_lemmas.py").write_text(
        "from hypothesis import strategies as st\nfrom stumpcheck.lemmas import lemma\n\n"
        "@lemma(name='mine_le_10', statement='x <= 10', domain={'x': st.integers(0, 100)}, register_it=False)\n"
        "def mine(x):\n    return 10 - x\n")
    monkeypatch.chdir(tmp_path)
    spec = importlib.util.spec_from_file_location("my_lemmas", tmp_path / "my_lemmas.py")
    my_lemmas = importlib.util.module_from_spec(spec)
    monkeypatch.setitem(sys.modules, "my_lemmas", my_lemmas)
    spec.loader.exec_module(my_lemmas)
    result = check_lemma(my_lemmas.mine, seed=0, max_examples=40)
    assert result.details["replay"] == "check_lemma(load_lemma('my_lemmas.py:mine'), seed=0, max_examples=40)"
    assert _replay(result.details["replay"]).details["counterexample"] == result.details["counterexample"] == {"x": 11}
    # made in a session, in no file: the recipe names the object, not a loader that would not find it
    loose = _lemma(lambda x: 1.0, name="loose")
    assert check_lemma(loose, max_examples=3).details["replay"] == "check_lemma(<the Lemma 'loose'>, seed=0, max_examples=3)"


def test_check_lemma_creates_its_output_folder_and_refuses_a_file(tmp_path):
    entry = _lemma(lambda x: 1.0 + x)
    out = tmp_path / "not" / "yet" / "there"
    result = check_lemma(entry, max_examples=5, out_dir=str(out))
    assert result.status == "PASS" and out.is_dir()
    assert (out / "lemma_t.png").is_file() and result.details["plots"] == ["lemma_t.png"]
    check_lemma(entry, max_examples=5, out_dir=out)  # an existing folder is fine
    a_file = tmp_path / "a_file"
    a_file.write_text("x")
    with pytest.raises(InputError, match="out_dir: cannot write into .*a_file: it exists and is not a directory"):
        check_lemma(entry, max_examples=5, out_dir=a_file)
    with pytest.raises(InputError, match="out_dir: cannot create .*: .*a_file is not a directory"):
        check_lemma(entry, max_examples=5, out_dir=a_file / "below")
    with pytest.raises(InputError, match="out_dir must be a path, got int"):
        check_lemma(entry, max_examples=5, out_dir=3)
    assert a_file.read_text() == "x"


def test_true_lemma_passes_and_reports_its_smallest_margin():
    true = load_lemma(f"{EXAMPLES / 'lemma_example.py'}:overshoot_in_the_interior")
    result = check_lemma(true, max_examples=60, seed=1)
    assert result.status == "PASS", result.figure
    assert result.details["examples_run"] >= 60
    smallest = result.details["min_margin"]
    assert smallest > 0
    assert true.margin(**result.details["argmin"]) == smallest


def test_target_pushes_toward_the_smallest_margin():
    """1 + (x − 1/π)² over [0, 1]: the minimum 1 is at x = 1/π, away from the boundaries and
    from the simple values Hypothesis favours; the reported smallest margin is within 1e-3 of it."""
    centre = 1 / math.pi
    entry = _lemma(lambda x: 1.0 + (x - centre) ** 2, domain={"x": st.floats(0, 1)})
    result = check_lemma(entry, max_examples=300, seed=0)
    assert result.status == "PASS"
    assert result.details["min_margin"] - 1.0 < 1e-3


def test_nan_and_exceptions_are_failures_not_passes():
    nan = check_lemma(_lemma(lambda x: math.nan if x > 5 else 1.0), max_examples=50)
    assert nan.status == "FAIL" and nan.details["counterexample"] == {"x": 6}

    def raising_at_7(x):
        return 1.0 / (x != 7)

    # a small domain, so that 200 examples certainly visit x = 7 whatever the search order
    raising = check_lemma(_lemma(raising_at_7, domain={"x": st.integers(0, 20)}), max_examples=200)
    assert raising.status == "FAIL"
    assert "ZeroDivisionError" in raising.details["error"] and raising.details["counterexample"] == {"x": 7}


def test_check_lemma_validates_its_arguments():
    entry = _lemma(lambda x: 1.0)
    with pytest.raises(InputError, match="level must be one of"):
        check_lemma(entry, level="proved")
    with pytest.raises(InputError, match="supports the evidence levels sampled, not certified"):
        check_lemma(_sympy_lemma("1 + b"), level="certified")
    with pytest.raises(InputError, match="seed"):
        check_lemma(entry, seed=-1)
    with pytest.raises(InputError, match="max_examples"):
        check_lemma(entry, max_examples=0)
    with pytest.raises(InputError, match="needs a Lemma"):
        check_lemma(get("C1"))


def _sympy_lemma(text, **options):
    """A lemma given by its SymPy margin in b alone (b drawn from the integers 0..1000)."""
    from stumpcheck.numerics.certified.proofs.margins import Margin

    return Lemma(name="t", statement="test statement", domain={"b": st.integers(0, 1000)}, margin=None,
                 sympy_margin=lambda: Margin.from_sympy(text, coordinates="abtheta"), **options)


def test_high_precision_level_recomputes_the_worst_margin_at_more_digits():
    entry = _sympy_lemma("1/3 - b/3000", evidence=("high-precision",))
    result = check_lemma(entry, level="high-precision", max_examples=50, dps=20)
    assert result.status == "PASS"
    assert result.details["check_dps"] == 32 and result.details["agreeing_digits"] >= 15


def test_a_python_only_lemma_is_sampled_only():
    """No SymPy margin: declaring high-precision, or certified without a symbolic proof, is refused where the
    lemma is defined; asking check_lemma for those levels names the fix."""
    fix = r"sampled-only, not {}: give it a SymPy margin \(sympy_margin=Margin.from_sympy\(...\), or define it " \
          r"with sympy_lemma\(...\)\)"
    with pytest.raises(ValueError, match=fix.format("high-precision")):
        _lemma(lambda x: 1.0, evidence=("high-precision", "sampled"))
    with pytest.raises(ValueError, match=fix.format("certified") + r" or a SymPy proof of its statement"):
        _lemma(lambda x: 1.0, evidence=("certified", "sampled"), certify=lambda quick=True: [])
    for level in ("high-precision", "certified"):
        with pytest.raises(InputError, match=fix.format(level)):
            check_lemma(_lemma(lambda x: 1.0), level=level)
    assert _lemma(lambda x: 1.0, evidence=("certified", "sampled"),
                  certify=lemmas.symbolic(lambda: {"status": "proved"})).evidence == ("certified", "sampled")


def test_a_file_declaring_high_precision_on_a_python_margin_is_refused_when_loaded(tmp_path):
    path = tmp_path / "python_only.py"
    path.write_text("from hypothesis import strategies as st\nfrom stumpcheck.lemmas import lemma\n\n"
                    "@lemma(name='p', statement='s', domain={'x': st.integers()}, evidence=('high-precision', 'sampled'))\n"
                    "def p(x):\n    return 1.0\n")
    with pytest.raises(InputError, match=r"lemma p: a lemma with a Python function only is sampled-only, not "
                                         r"high-precision: give it a SymPy margin"):
        load_lemma(f"{path}:p")


# --------------------------------------------------------------------------------------
# claim entries


def _stand_in(recorded: dict):
    """A claim check with the C5–C9 signature that records its arguments."""

    def check(*, quick, seed, out_dir, **extra):
        recorded.update(quick=quick, seed=seed, out_dir=out_dir, **extra)
        return ClaimResult(id="CX", statement="s", figure="f", tolerance="t", status="PASS", evidence="sampled",
                           seconds=0.0, details={"seed": seed})

    return check


def test_claim_entry_runs_its_check_and_passes_the_scheduler_only_when_asked():
    recorded = {}
    entry = ClaimCheck(name="CX", statement="s", check=_stand_in(recorded), evidence=("sampled",))
    result = run_entry(entry, quick=False, seed=4, out_dir="somewhere", scheduler="tcp://x:1")
    assert result.status == "PASS"
    assert recorded == {"quick": False, "seed": 4, "out_dir": "somewhere"}
    recorded.clear()
    with_scheduler = ClaimCheck(name="CY", statement="s", check=entry.check, takes_scheduler=True)
    run_entry(with_scheduler, scheduler="tcp://x:1")
    assert recorded["scheduler"] == "tcp://x:1"


def test_unavailable_claim_check_is_a_fail_with_the_import_error():
    missing_module = ClaimCheck(name="CZ", statement="s", check="stumpcheck.numerics.no_such_module:check_cz")
    result = run_entry(missing_module)
    assert result.status == "FAIL"
    assert result.figure.startswith("not available: No module named 'stumpcheck.numerics.no_such_module'")
    missing_name = ClaimCheck(name="CZ", statement="s", check="stumpcheck.claims.population:check_c99")
    assert run_entry(missing_name).figure == "not available: cannot import name 'check_c99' from 'stumpcheck.claims.population'"


def test_claim_check_errors_and_wrong_results_are_fails_but_input_errors_propagate():
    def broken(**kwargs):
        raise ArithmeticError("overflow in the flow")

    def wrong(**kwargs):
        return {"status": "PASS"}

    def bad_input(**kwargs):
        raise InputError("bad scheduler address")

    assert run_entry(ClaimCheck(name="A", statement="s", check=broken)).figure == \
        "error: ArithmeticError: overflow in the flow"
    assert run_entry(ClaimCheck(name="B", statement="s", check=wrong)).status == "FAIL"
    with pytest.raises(InputError, match="bad scheduler"):
        run_entry(ClaimCheck(name="C", statement="s", check=bad_input))


def test_user_lemmas_stay_out_of_the_registry_and_may_reuse_a_name(tmp_path):
    before = list(registry())
    load_lemma(f"{EXAMPLES / 'false_lemma.py'}:half_over_b")
    mine = tmp_path / "mine.py"
    mine.write_text("from hypothesis import strategies as st\n"
                    "from stumpcheck.lemmas import lemma\n"
                    "@lemma(name='C1', statement='my own C1', domain={'x': st.integers(0, 3)})\n"
                    "def my_c1(x):\n    return 1.0\n")
    entry = load_lemma(f"{mine}:my_c1")
    assert entry.name == "C1" and entry.statement == "my own C1"
    assert list(registry()) == before and isinstance(registry()["C1"], ClaimCheck)


def test_a_domain_callable_that_does_not_give_a_strategy_is_input_error():
    entry = Lemma(name="d", statement="s", domain=lambda: [1, 2], margin=lambda **kw: 1.0)
    with pytest.raises(InputError, match="building its domain failed"):
        check_lemma(entry)
    callable_domain = Lemma(name="d", statement="s", domain=lambda: st.fixed_dictionaries({"x": st.just(2)}),
                            margin=lambda x: 1.0 - x)
    assert check_lemma(callable_domain).details["counterexample"] == {"x": 2}


def test_a_domain_hypothesis_cannot_draw_from_is_input_error():
    empty = Lemma(name="e", statement="s", domain={"x": st.integers(0, 10).filter(lambda x: x > 10)},
                  margin=lambda x: 1.0)
    with pytest.raises(InputError, match="could not draw from its domain"):
        check_lemma(empty, max_examples=20)


# --------------------------------------------------------------------------------------
# what margins may be (non-finite, sys.exit), tight to rounding, the digits compared


@pytest.mark.parametrize("value", [math.inf, -math.inf, math.nan])
def test_a_non_finite_margin_is_a_failure_with_its_reason(value):
    result = check_lemma(_lemma(lambda x: value, max_examples=5), seed=0)
    assert result.status == "FAIL"
    assert "not a finite number" in result.figure and "None" not in result.figure


def test_a_margin_calling_sys_exit_is_input_error_naming_the_file():
    def margin(x):
        raise SystemExit(3)

    with pytest.raises(InputError, match=r"test_lemmas\.py\) called sys\.exit\(3\)"):
        check_lemma(_lemma(margin, max_examples=5), seed=0)


def test_a_lemma_file_calling_sys_exit_is_input_error_naming_the_file(tmp_path):
    path = tmp_path / "exits.py"
    path.write_text("import sys\nsys.exit(3)\n")
    with pytest.raises(InputError, match=r"exits\.py.*called sys\.exit\(3\)"):
        load_lemma(f"{path}:anything")


@pytest.mark.parametrize("rounding", [-1e-20, 1.0, math.nan, True])
def test_rounding_allowance_is_validated(rounding):
    with pytest.raises(ValueError, match="rounding"):
        _lemma(lambda x: 1.0, rounding=rounding)


def test_a_margin_at_its_rounding_allowance_is_tight_and_the_digits_are_those_compared():
    """margin = allowance + (1 − ratio) with ratio = 1: reported as tight, digits limited by float64's ulp."""
    allowance = 1e-20
    result = check_lemma(_sympy_lemma("10**-20", evidence=("high-precision",), rounding=allowance, max_examples=5),
                         level="high-precision", seed=0)
    assert result.status == "PASS" and result.details["tight_to_rounding"]
    assert result.figure.startswith("tight to rounding")
    expected = -math.log10(math.ulp(allowance))  # ≈ 35.8: what two equal float64 margins can show
    assert result.details["agreeing_digits"] == pytest.approx(expected)
    assert "99" not in result.figure


def test_digits_of_a_plain_float_margin_never_exceed_float64():
    result = check_lemma(_sympy_lemma("1 + b", evidence=("high-precision",), max_examples=5),
                         level="high-precision", seed=0)
    assert result.details["agreeing_digits"] <= 15.96 and "float64 margin agree" in result.figure


def test_a_margin_that_drifts_with_precision_reports_the_digits_that_agree(monkeypatch):
    """The margin at the higher precision is 1 + 10⁻¹⁰ where the sampled one is 1: about 10 digits agree."""
    from stumpcheck.lemmas.margin import PointMargin

    entry = _sympy_lemma("1 + 0*b", evidence=("high-precision",), max_examples=3)
    exact = PointMargin.value

    def drifting(self, point, *, high_precision=False):
        return exact(self, point, high_precision=high_precision) + (1e-10 if high_precision else 0)

    monkeypatch.setattr(PointMargin, "value", drifting)
    result = check_lemma(entry, level="high-precision", seed=0)
    assert 9 < result.details["agreeing_digits"] < 11


def test_a_symbolic_spec_certifies_only_a_proved_record():
    """symbolic(proof): PASS at level certified iff the record says proved; a raising proof is a FAIL."""
    from stumpcheck.lemmas.check import check_lemma

    def make(proof):
        return Lemma(name="sym", statement="s", domain={"x": st.integers()}, margin=lambda x: 1.0,
                     evidence=("certified", "sampled"), certify=lemmas.symbolic(proof))

    proved = check_lemma(make(lambda: {"status": "proved", "proves": "for all x", "method": "m"}), level="certified")
    assert proved.status == "PASS" and proved.evidence == "certified"
    assert proved.details["evidence_reached"] == "certified"
    assert proved.details["symbolic_proof"]["proves"] == "for all x"
    failed = check_lemma(make(lambda: {"status": "failed", "method": "m"}), level="certified")
    assert failed.status == "FAIL" and failed.details["evidence_reached"] is None

    def broken():
        raise RuntimeError("simplify gave up")

    raised = check_lemma(make(broken), level="certified")
    assert raised.status == "FAIL" and "simplify gave up" in raised.figure
    with pytest.raises(ValueError):
        lemmas.symbolic("not callable")


def test_a_certified_spec_identity_record_must_be_a_dict():
    assert lemmas.certified(lambda: None, lambda: None, identity=lambda: {"name": "x"}).identity_record() == {
        "name": "x"}
    with pytest.raises(InputError, match="identity record must be a dict"):
        lemmas.certified(lambda: None, lambda: None, identity=lambda: 3).identity_record("ok")
    with pytest.raises(InputError, match="its symbolic identity failed: ValueError: no"):
        lemmas.certified(lambda: None, lambda: None,
                         identity=lambda: (_ for _ in ()).throw(ValueError("no"))).identity_record("ok")
