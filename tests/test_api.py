"""The public API (stumpcheck.api, re-exported by stumpcheck): its name list, the one precision convention
(dps validated up front, scoped: the global mpmath precision is neither read nor changed), each wrapper's
value against its engine at the same precision, Enclosure interop with python-flint, the docstring
examples, and a light ``import stumpcheck``."""

from __future__ import annotations

import doctest
import inspect
import json
import subprocess
import sys
from decimal import Decimal
from fractions import Fraction
from pathlib import Path

import mpmath
import numpy as np
import pytest
from flint import acb, arb, ctx
from hypothesis import strategies as st

import stumpcheck
from stumpcheck import api
from stumpcheck.numerics.certified.enclosures import balls
from stumpcheck.numerics.certified.enclosures.balls import Enclosure
from stumpcheck.numerics.precision import InputError

ROOT = Path(__file__).resolve().parent.parent
#: a narrow prior keeps the mpmath θ-integrals fast (their cost is in the switch layers near 0 and 1)
PRIOR = (0.4, 0.6)
WRAPPERS = [name for name, value in vars(api).items()
            if inspect.isfunction(value) and value.__module__ == api.__name__ and not name.startswith("_")]


# ---------------------------------------------------------------------------------------------------
# the name list


def test_all_lists_exactly_the_wrappers_and_the_re_exports():
    assert len(api.__all__) == len(set(api.__all__))
    assert set(api.__all__) == set(WRAPPERS) | set(api._LAZY) | {"InputError"}
    for name, module in api._LAZY.items():
        assert getattr(api, name) is getattr(__import__(module, fromlist=[name]), name), name
    assert all(callable(getattr(api, name)) for name in api.__all__)


def test_the_package_exposes_the_same_list_lazily():
    assert stumpcheck.__all__ == api.__all__
    for name in api.__all__:
        assert getattr(stumpcheck, name) is getattr(api, name), name
    assert set(api.__all__) <= set(dir(stumpcheck)) and "__version__" in dir(stumpcheck)
    with pytest.raises(AttributeError, match="no attribute 'not_public'"):
        stumpcheck.not_public  # noqa: B018


def test_version_is_the_installed_distribution_else_the_source_tree(monkeypatch):
    from importlib import metadata
    import tomllib

    try:
        installed = metadata.version("stumpcheck")
    except metadata.PackageNotFoundError:
        installed = None
    with open(ROOT / "pyproject.toml", "rb") as handle:
        source = tomllib.load(handle)["project"]["version"]
    assert stumpcheck.__version__ == (installed or source)

    def missing(name):
        raise metadata.PackageNotFoundError(name)

    monkeypatch.setattr(metadata, "version", missing)
    assert stumpcheck._version() == source


def test_import_stumpcheck_loads_no_numeric_library():
    probe = ("import json, sys, stumpcheck; stumpcheck.__all__; stumpcheck.__version__; "
             "print(json.dumps(sorted({m.split('.')[0] for m in sys.modules} & "
             "{'numpy', 'mpmath', 'sympy', 'flint', 'scipy', 'matplotlib', 'numba', 'hypothesis', 'click'})))")
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, cwd=ROOT, timeout=120)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout.strip().splitlines()[-1]) == []


# ---------------------------------------------------------------------------------------------------
# the precision convention


def _dps_takers():
    return [name for name in WRAPPERS if "dps" in inspect.signature(getattr(api, name)).parameters]


def test_every_precision_argument_is_the_keyword_only_dps_and_every_default_is_keyword_only():
    assert set(_dps_takers()) == {"error", "error_gradient", "loss", "loss_gradient", "loss_hessian",
                                  "certified_error", "certified_loss", "certified_loss_gradient",
                                  "certified_loss_hessian", "integrate_flow", "run_population_flow", "certified",
                                  "check_lemma", "recheck", "check_c1", "fresh_context_risk", "certified_flow"}
    for name in WRAPPERS:
        parameters = inspect.signature(getattr(api, name)).parameters.values()
        assert not any(p.kind == p.POSITIONAL_OR_KEYWORD and p.default is not p.empty for p in parameters), name
        assert not any("prec" in p.name and p.name != "dps" for p in parameters), name
    with pytest.raises(TypeError):
        api.error(25, 20, "0.5", "one-head", 30)  # a keyword-only argument by position: Python's TypeError


def _calls_with_dps(dps):
    """One valid-but-for-dps call of every wrapper that takes dps (the dps is checked before any work)."""
    return {
        "error": lambda: api.error(25, 20, "0.5", dps=dps),
        "error_gradient": lambda: api.error_gradient(25, 20, "0.5", dps=dps),
        "loss": lambda: api.loss(10, 10, dps=dps),
        "loss_gradient": lambda: api.loss_gradient(10, 10, dps=dps),
        "loss_hessian": lambda: api.loss_hessian(10, 10, dps=dps),
        "certified_error": lambda: api.certified_error(25, 20, "0.5", dps=dps),
        "certified_loss": lambda: api.certified_loss(10, 10, dps=dps),
        "certified_loss_gradient": lambda: api.certified_loss_gradient(10, 10, dps=dps),
        "certified_loss_hessian": lambda: api.certified_loss_hessian(10, 10, dps=dps),
        "integrate_flow": lambda: api.integrate_flow(10.0, 10.0, 1e3, dps=dps),
        "run_population_flow": lambda: api.run_population_flow(10.0, 10.0, 1e3, dps=dps),
        "certified": lambda: api.certified(None, None, dps=dps),
        "check_lemma": lambda: api.check_lemma(_lemma(), dps=dps),
        "recheck": lambda: api.recheck(ROOT / "no-such-certificate.json", dps=dps),
        "check_c1": lambda: api.check_c1(dps=dps),
        "fresh_context_risk": lambda: api.fresh_context_risk(25, 20, "0.4", 10, dps=dps),
        "certified_flow": lambda: api.certified_flow(10.0, 10.0, 1.0, dps=dps),
    }


@pytest.mark.parametrize("dps", [0, -3, 10 ** 7, 15.5, True, "30", 14, 10_001, 30.0, [30]])
def test_a_bad_dps_is_one_line_naming_the_argument_and_the_range(dps):
    calls = _calls_with_dps(dps)
    assert set(calls) == set(_dps_takers())
    for name, call in calls.items():
        with pytest.raises(InputError) as caught:
            call()
        message = str(caught.value)
        assert "\n" not in message and message.startswith("dps must be") and "[15, 10000]" in message, (name, message)


def test_none_is_a_precision_only_where_float64_is_one():
    for name, call in _calls_with_dps(None).items():
        if name in ("integrate_flow", "run_population_flow", "recheck", "error", "error_gradient", "loss",
                    "loss_gradient", "loss_hessian"):
            continue  # float64 flows and model quantities; the certificate's own digits + 10
        with pytest.raises(InputError, match=r"^dps must be"):
            call()


def _lemma(**changes):
    options = dict(name="b_above_one", statement="b − 1 ≥ 0 for b ∈ [2, 3]",
                   margin=api.Margin.from_sympy("b - 1", coordinates="abtheta"),
                   domain={"a": st.floats(0, 1), "b": st.floats(2, 3)}, evidence=("sampled", "certified"),
                   certify=api.certified(None, api.Domain({"a": ("0", "1"), "b": ("2", "3")}, coordinates="abtheta")),
                   register_it=False)
    return api.sympy_lemma(**{**options, **changes})


@pytest.fixture(scope="module")
def certificate(tmp_path_factory):
    out = tmp_path_factory.mktemp("certificate")
    result = api.check_lemma(_lemma(), level="certified", out_dir=out)
    assert result.status == "PASS" and result.evidence == "certified", result.figure
    return out / "b_above_one.certificate.json"


def _every_wrapper(certificate, tmp_path):
    """(name, a valid call, a call that fails inside the wrapper's precision scope or its engine)."""
    return [
        ("error", lambda: api.error(25, 20, "0.95", dps=40), lambda: api.error(25, -1, "0.5", dps=40)),
        ("error_gradient", lambda: api.error_gradient(25, 20, "0.95", dps=40),
         lambda: api.error_gradient(25, 20, "1.5", dps=40)),
        ("loss", lambda: api.loss(10, 10, prior=PRIOR, dps=20), lambda: api.loss(10, 1e9, dps=20)),
        ("loss_gradient", lambda: api.loss_gradient(10, 10, prior=PRIOR, dps=20),
         lambda: api.loss_gradient(10, 10, prior=(0.6, 0.4), dps=20)),
        ("loss_hessian", lambda: api.loss_hessian(10, 10, prior=PRIOR, dps=20),
         lambda: api.loss_hessian(10, 10, estimator="two-head", dps=20)),
        ("certified_error", lambda: api.certified_error(25, 20, "0.95", dps=40),
         lambda: api.certified_error(25, 20, ("0.9", "0.95"), dps=20, rel_width=1e-3)),
        ("certified_loss", lambda: api.certified_loss(10, 10, dps=20),
         lambda: api.certified_loss(10, 10, dps=20, rel_width=-1)),
        ("certified_loss_gradient", lambda: api.certified_loss_gradient(10, 10, dps=20),
         lambda: api.certified_loss_gradient(10, 0, dps=20)),
        ("certified_loss_hessian", lambda: api.certified_loss_hessian(10, 10, dps=20),
         lambda: api.certified_loss_hessian(10, 10, estimator="two-head", dps=20)),
        ("integrate_flow", lambda: api.integrate_flow(10.0, 10.0, 100.0),
         lambda: api.integrate_flow(10.0, 10.0, -1.0)),
        ("run_population_flow", lambda: api.run_population_flow(10.0, 10.0, 100.0),
         lambda: api.run_population_flow(10.0, 10.0, 100.0, solver="euler")),
        ("certified_flow", lambda: api.certified_flow(10.0, 10.0, 0.5),
         lambda: api.certified_flow(10.0, 10.0, 0.0)),
        ("certified", lambda: api.certified(None, None, dps=40), lambda: api.certified(None, None, max_box=3)),
        ("check_lemma", lambda: api.check_lemma(_lemma(), max_examples=10, dps=40),
         lambda: api.check_lemma(_lemma(), level="proved")),
        ("recheck", lambda: api.recheck(certificate, dps=50), lambda: api.recheck(certificate, dps=30)),
        ("check_c1", lambda: api.check_c1(samples=1, loss_points=(), dps=20), lambda: api.check_c1(samples=0)),
        ("fresh_context_risk", lambda: api.fresh_context_risk(25, 20, "0.4", 1, dps=20),
         lambda: api.fresh_context_risk(25, 20, "0.4", 10, dps=20, estimator="averaged")),
        ("export", lambda: api.export(tmp_path / "derivations", fmt="json"),
         lambda: api.export(tmp_path, fmt="pdf")),
    ]


def test_the_global_mpmath_and_flint_precisions_are_never_changed_also_on_error(certificate, tmp_path):
    calls = _every_wrapper(certificate, tmp_path)
    assert {name for name, _, _ in calls} == set(WRAPPERS)
    saved_mp, saved_flint = mpmath.mp.prec, ctx.prec
    try:
        mpmath.mp.prec, ctx.prec = 77, 91  # unusual values, so that a reset to a default would show
        for name, valid, failing in calls:
            valid()
            assert (mpmath.mp.prec, ctx.prec) == (77, 91), name
            with pytest.raises((InputError, api.EnclosureTooWide)) as caught:
                failing()
            assert "\n" not in str(caught.value), (name, str(caught.value))
            assert (mpmath.mp.prec, ctx.prec) == (77, 91), name
    finally:
        mpmath.mp.prec, ctx.prec = saved_mp, saved_flint


@pytest.mark.parametrize("call", [
    lambda: api.error(25, 20, "0.5", estimator="two-head"),
    lambda: api.loss(10, 10, prior=(1, 0)),
    lambda: api.certified_error(25, 20, "0.5", rel_width=0),
    lambda: api.certified(None, None, strict="yes"),
    lambda: api.certified(None, None, b_ratio=0.5),
    lambda: api.integrate_flow(10.0, 10.0, 100.0, rtol=1.0),
    lambda: api.run_population_flow(10.0, 10.0, 1e30),
    lambda: api.check_lemma("not a lemma"),
    lambda: api.check_c1(seed=-1),
    lambda: api.export(".", fmt=None),
    lambda: api.recheck(ROOT / "pyproject.toml"),
])
def test_bad_keyword_values_are_one_line_input_errors(call):
    with pytest.raises(InputError) as caught:
        call()
    assert "\n" not in str(caught.value) and str(caught.value)


def test_recheck_arguments_are_checked_before_the_file_is_read():
    missing = ROOT / "no-such-certificate.json"
    with pytest.raises(InputError, match="^allow_python must be True or False"):
        api.recheck(missing, allow_python="yes")
    with pytest.raises(InputError, match="^points must be one of"):
        api.recheck(missing, points="edges")
    with pytest.raises(InputError, match="cannot read"):
        api.recheck(missing)


# ---------------------------------------------------------------------------------------------------
# each wrapper against its engine, at the same precision


def _engine(function, dps, *args, **kwargs):
    with mpmath.workdps(dps):
        return function(*args, **kwargs)


def test_quantities_equal_the_engine_at_the_same_precision_whatever_the_global_precision():
    from stumpcheck.numerics.certified.enclosures import verified_integrals
    from stumpcheck.numerics.population import quantities as engine

    cases = [("error", (25, 20, "0.95"), {}), ("error_gradient", (25, 20, "0.95"), {"estimator": "pooled"}),
             ("loss", (10, 10), {"prior": PRIOR}), ("loss_gradient", (10, 10), {"prior": PRIOR}),
             ("loss_hessian", (3, 2), {"prior": PRIOR, "estimator": "reflected"})]
    for name, args, options in cases:
        for dps in (20, 45):
            if name.startswith("loss"):  # verified by Arb; the mpmath quadrature agrees to its last digit or so
                expected = getattr(verified_integrals, name)(*args, **options, dps=dps)
                quadrature = _engine(getattr(engine, name), dps, *args, **options)
                pairs = zip(*(x if isinstance(x, tuple) else (x,) for x in (expected, quadrature)))
                assert all(abs(v - q) <= abs(v) * mpmath.mpf(10) ** (1 - dps) for v, q in pairs), name
            else:
                expected = _engine(getattr(engine, name), dps, *args, **options)
            for global_dps in (15, 60):
                with mpmath.workdps(global_dps):
                    got = getattr(api, name)(*args, **options, dps=dps)
                assert got == expected, (name, dps, global_dps)
            with mpmath.workdps(dps):  # returned at dps digits: rounding to them changes nothing
                assert all(+x == x for x in (got if isinstance(got, tuple) else (got,))), name
        low, high = (getattr(api, name)(*args, **options, dps=d) for d in (20, 45))
        assert low != high, name  # dps is honoured, not ignored


def test_certified_enclosures_equal_the_engine_and_keep_full_precision():
    from stumpcheck.numerics.certified import enclosures as engine

    cases = [("certified_error", (25, 20, "0.95"), {"rel_width": 1e-25}),
             ("certified_loss", (10, 10), {}), ("certified_loss_gradient", (10, 10), {"estimator": "reflected"}),
             ("certified_loss_hessian", (10, 10), {})]
    for name, args, options in cases:
        expected = getattr(engine, name)(*args, **options, dps=40)
        with mpmath.workdps(15):
            got = getattr(api, name)(*args, **options, dps=40)
        assert got == expected, name
        for enclosure in got if isinstance(got, tuple) else (got,):
            assert enclosure.lower._mpf_[3] > 120 and enclosure.mid._mpf_[3] > 120, name  # not 53 bits
            assert enclosure.lower == mpmath.fsub(enclosure.mid, enclosure.rad, exact=True)
            assert enclosure.upper == mpmath.fadd(enclosure.mid, enclosure.rad, exact=True)
    value = api.error(25, 20, "0.95", dps=60)
    assert value in api.certified_error(25, 20, "0.95", dps=30)  # 60 digits lie inside a 30-digit ball


def test_flows_equal_the_engine():
    from stumpcheck.numerics.flow.integrate import integrate_flow
    from stumpcheck.numerics.flow.run import run_population_flow

    got, expected = api.integrate_flow(10.0, 10.0, 1e3, rtol=1e-8), integrate_flow(10.0, 10.0, 1e3, rtol=1e-8)
    assert np.array_equal(got.t, expected.t) and np.array_equal(got.b, expected.b)
    assert got.status == expected.status and got.a_posteriori_rel_error_b == expected.a_posteriori_rel_error_b
    got, expected = api.run_population_flow(10.0, 10.0, 1e3), run_population_flow(10.0, 10.0, 1e3)
    assert np.array_equal(got.b, expected.b) and np.array_equal(got.sup_error_interior, expected.sup_error_interior)
    # one engine: the same solve and check, so the same earned final state
    assert got.stats["final_b"] == api.integrate_flow(10.0, 10.0, 1e3).settings["final_b"]


def test_certified_flow_encloses_the_flow():
    """certified_flow (the tube, fast float64 intervals) encloses b(1) from (10, 10); the 36-digit value of
    tests/test_flow_digits.py lies inside; at(t) encloses other times; bad input is one line."""
    from fractions import Fraction

    flow = api.certified_flow(10.0, 10.0, 1.0)
    assert isinstance(flow, api.CertifiedFlow) and flow.complete and flow.valid_to_t >= 1.0
    assert Fraction("9.99136967749673520863961625821") in flow.b and Fraction("10.01012930402593087855557709966") in flow.a
    assert flow.b.relative_radius < 1e-9
    a_half, b_half = flow.at("0.5")
    assert b_half.lower > flow.b.upper and a_half.upper < flow.a.lower  # b falls and a rises early on
    assert flow.certificate()["complete"] is True and "b" in flow.to_dict() and "b(T)" in repr(flow)
    with pytest.raises(InputError, match="t must be in"):
        flow.at(2)
    with pytest.raises(InputError, match="at most 40"):
        api.certified_flow(10.0, 10.0, 1.0, dps=50)
    with pytest.raises(InputError):
        api.certified_flow(10.0, 10.0, -1.0)


def test_lemma_claim_and_export_wrappers_equal_the_engine(certificate, tmp_path):
    from stumpcheck.claims.population import check_c1
    from stumpcheck.lemmas.check import check_lemma
    from stumpcheck.lemmas.definitions import certified
    from stumpcheck.numerics.certified.certificates.lemma_certificate import read_certificate
    from stumpcheck.numerics.certified.certificates.lemma_recheck import recheck
    from stumpcheck.theory.export import export

    assert api.certified(None, None, dps=40, max_boxes=7) == certified(None, None, dps=40, max_boxes=7)
    got, expected = api.check_lemma(_lemma(), max_examples=15, seed=3, dps=25), check_lemma(
        _lemma(), max_examples=15, seed=3, dps=25)
    assert (got.status, got.figure, got.evidence) == (expected.status, expected.figure, expected.evidence)
    got = api.recheck(certificate)
    document = read_certificate(certificate)
    assert got.passed and got.prec_bits != document["prec_bits"]
    expected = recheck(document, prec_bits=got.prec_bits)
    assert (got.passed, got.statement, got.leaves_checked) == (expected.passed, expected.statement,
                                                               expected.leaves_checked)
    got, expected = api.check_c1(samples=2, loss_points=(), dps=20), check_c1(samples=2, loss_points=(), dps=20)
    assert (got.status, got.figure, got.evidence) == (expected.status, expected.figure, expected.evidence)
    mine, theirs = api.export(tmp_path / "a", fmt="tex"), export(tmp_path / "b", "tex")
    assert [p.relative_to(tmp_path / "a") for p in mine] == [p.relative_to(tmp_path / "b") for p in theirs]
    assert all(p.read_bytes() == q.read_bytes() for p, q in zip(mine, theirs))


# ---------------------------------------------------------------------------------------------------
# Enclosure interop


def _third(bits: int) -> arb:
    with ctx.workprec(bits):
        return arb(1) / 3


def test_an_arb_ball_round_trips_exactly_at_its_own_precision():
    ball = _third(1000)
    assert ball.mid().man_exp()[0].bit_length() > 990  # a 1000-bit midpoint
    enclosure = Enclosure.from_arb(ball, prec_bits=1000)
    back = enclosure.to_arb()  # at flint's default 53 bits
    assert ctx.prec == 53 and back.mid() == ball.mid() and back.rad() == ball.rad()
    assert back.mid().man_exp() == ball.mid().man_exp() and back.rad().man_exp() == ball.rad().man_exp()
    assert enclosure.mid._mpf_[3] == ball.mid().man_exp()[0].bit_length()
    assert Enclosure.from_arb(back, prec_bits=1000) == enclosure
    assert Enclosure.from_arb(ball).prec_bits >= 990  # default: the midpoint's bits
    for exact in (arb(5), arb(-3) / 8, arb(0)):
        assert Enclosure.from_arb(exact).to_arb().mid() == exact.mid() and Enclosure.from_arb(exact).rad == 0


def test_containment_is_exact_at_the_ends_and_one_ulp_beyond():
    enclosure = Enclosure.from_arb(_third(200), prec_bits=200)
    lower, upper = enclosure.lower, enclosure.upper
    ulp = mpmath.ldexp(1, int(mpmath.mag(lower)) - 200)  # one unit in the last place at 200 bits
    below, above = mpmath.fsub(lower, ulp, exact=True), mpmath.fadd(upper, ulp, exact=True)
    with mpmath.workprec(53):  # the global precision plays no part
        assert lower in enclosure and upper in enclosure and enclosure.mid in enclosure
        assert below not in enclosure and above not in enclosure
        assert mpmath.fadd(lower, ulp, exact=True) in enclosure
        assert _fraction(lower) in enclosure and _fraction(below) not in enclosure
        assert _fraction(lower) - Fraction(1, 2 ** 400) not in enclosure
    assert Fraction(1, 3) in enclosure and Decimal("0.3333333333") not in enclosure
    assert 1 not in enclosure and 0.5 not in enclosure and float("nan") not in enclosure
    assert float(mpmath.mpf(enclosure.mid)) not in enclosure  # its 53-bit rounding: far outside a 200-bit ball
    assert Fraction(1, 3) in Enclosure.from_arb(arb(1) / 3) and np.float64(0.25) not in enclosure


def test_an_arb_ball_is_contained_only_if_wholly_inside():
    ball = _third(200)
    enclosure = Enclosure.from_arb(ball, prec_bits=200)
    assert ball in enclosure
    assert arb(ball.mid()) in enclosure  # the exact midpoint
    wider = arb(ball.mid(), arb(ball.rad()) * 2)
    assert wider not in enclosure
    shifted = arb(ball.mid() + ball.rad(), ball.rad())  # overlaps half of it
    assert shifted not in enclosure and shifted.overlaps(ball)
    assert arb.nan() not in enclosure


def test_hand_built_and_non_finite_enclosures_and_bad_input():
    wide = Enclosure(mid=mpmath.mpf(1), rad=mpmath.mpf("0.1"), lower=mpmath.mpf("0.9"), upper=mpmath.mpf("1.1"),
                     prec_bits=53)
    ball = wide.to_arb()  # its [lower, upper] is not [mid ± rad] exactly: the ball of the hull
    for point in (wide.lower, wide.upper, mpmath.fsub(wide.mid, wide.rad, exact=True)):
        assert point in Enclosure.from_arb(ball)
    assert wide.contains(1) and 1 in wide and 1.2 not in wide
    nan = Enclosure.from_arb(arb.nan(), prec_bits=53)
    assert not nan.is_finite and not nan.to_arb().is_finite() and 5 in nan and arb.nan() in nan
    for bad in ("0.5", None, True, 1 + 2j):
        with pytest.raises(InputError, match="^in: expected a real number"):
            bad in wide  # noqa: B015
    with pytest.raises(InputError, match="complex ball"):
        Enclosure.from_arb(acb(1, 1))
    with pytest.raises(InputError, match="needs a flint.arb ball"):
        Enclosure.from_arb(0.5)
    for bits in (True, 0, 1.5, "53"):
        with pytest.raises(InputError, match="^prec_bits must be"):
            Enclosure.from_arb(arb(1), prec_bits=bits)
    assert Enclosure.from_ball(acb(2, 0).real, prec_bits=53).contains(2)  # the earlier constructor still works


def _fraction(value) -> Fraction:
    sign, man, exp, _ = value._mpf_
    return (-1 if sign else 1) * Fraction(int(man)) * Fraction(2) ** int(exp)


# ---------------------------------------------------------------------------------------------------
# the examples


def test_the_docstring_examples_run():
    for module in (api, balls):
        result = doctest.testmod(module, optionflags=doctest.ELLIPSIS)
        assert result.failed == 0 and result.attempted > 0, (module.__name__, result)
    assert all(">>>" in (getattr(api, name).__doc__ or "") for name in WRAPPERS)
