"""The tail b ≥ B of the population flow in ε = 1/b (docs/tail.md): derivation, enclosures, certificate.

Fast tests: the derived limits against the independent series of :func:`flow_asymptotics`, the reflection
identities and remainder forms against mpmath/Arb, the scaled field at b = 1000 against the θ-quadrature of
the finite region's field, the tail proof with its certificate, re-check and tampering. Slow: b = 2000, 10⁴,
Lemma E's size at moderate b, the join with a proved finite region.
"""

from __future__ import annotations

import copy
from fractions import Fraction

import mpmath as mp
import pytest
import sympy as sp
from flint import arb, ctx

from stumpcheck.numerics.certified.certificates.lemma_certificate import digest
from stumpcheck.numerics.certified.region.tail import (DEFAULT_TAIL, TailBox, TailRegion, _remainder_range,
                                                    field_enclosure, prove_tail_obligation)
from stumpcheck.numerics.certified.region.tail_certificate import recheck_tail, tail_certificate
from stumpcheck.numerics.precision import InputError
from stumpcheck.theory import margin_quantities as mq
from stumpcheck.theory import tail
from stumpcheck.theory.symbols import b as b_symbol
from stumpcheck.theory.symbols import eps, r
from stumpcheck.theory.tail_series import K, SERIES, analytic_value, reflection_identities, taylor_form


def test_limits_match_the_flow_asymptotics():
    """S → −w and D → 3ζ(3) + 1/2 − w; on the relation (w = 0) D's limit is −2·(the b⁻⁴ coefficient of ḃ)
    of the independent series derivation."""
    from stumpcheck.theory.asymptotics import flow_asymptotics

    limits = tail.limits()
    assert sp.simplify(limits["S"] + mq.w) == 0
    b_dot = sp.expand(flow_asymptotics().db_dt)
    fourth = b_dot.coeff(b_symbol, -4)
    assert sp.simplify(limits["D"].subs(mq.w, 0) + 2 * fourth) == 0
    assert sp.simplify(limits["D"] - (3 * sp.zeta(3) + sp.Rational(1, 2) - mq.w)) == 0


def test_every_log_comes_with_a_positive_power_of_eps():
    for terms in tail.scaled_margins().values():
        assert all(i >= 0 and (j == 0 or i >= 1) for i, j in terms)
        assert (0, 0) in terms


@pytest.mark.parametrize("value", ["1e-7", "0.01", "0.3"])
def test_reflection_identities_numerically(value):
    t = sp.Symbol("r", positive=True)
    kval, kt = analytic_value("K")
    with mp.workdps(40):
        x = mp.mpf(value)
        k_quad = mp.quad(lambda s: mp.log(1 - s) ** 2 / s, [0, x])
        assert abs(sp.N(kval.subs(kt, sp.Rational(value)), 40) - k_quad) < mp.mpf(10) ** -35 * max(1, abs(k_quad)) * 1e3
        for (left, right) in reflection_identities().items():
            exact = sp.N(left.subs(t, sp.Rational(value)), 40)
            rewritten = sp.N(right.subs(K(t), k_quad).subs(t, sp.Rational(value)), 40)
            assert abs(exact - rewritten) < 1e-30


@pytest.mark.parametrize("name", sorted(SERIES))
def test_remainder_range_contains_the_remainder(name):
    """R_N(t) = (φ(t) − T_N(t))/t^N lies in the certified range over [0, t₁] at t = t₁/3 and t₁."""
    form = taylor_form(name, 2)
    assert all(c >= 0 for c in form.coefficients)
    with ctx.workprec(256):
        t1 = arb(1) / 1000
        bounds = _remainder_range(name, 2, t1)
        function, t = analytic_value(name)
        for point in (sp.Rational(1, 3000), sp.Rational(1, 1000)):
            with mp.workdps(60):
                phi = mp.mpf(sp.N(function.subs(t, point), 60))
                poly = sum(mp.mpf(sp.N(c, 60)) * mp.mpf(point) ** n for n, c in enumerate(form.coefficients[:2]))
                value = (phi - poly) / mp.mpf(point) ** 2
            assert float(bounds.lower()) - 1e-12 <= float(value) <= float(bounds.upper()) + 1e-12


def _field_from_quadrature(b_value: int, w_value: Fraction, dps: int = 40):
    """(b³ẇ, b(1 − 2b³ḃ)) from the mpmath θ-quadrature of L_a, L_b (the finite region's field, no tail algebra)."""
    from stumpcheck.numerics.population.quantities import loss_gradient

    with mp.workdps(dps + 20):
        b = mp.mpf(b_value)
        rho = mp.mpf(3) / 2 + mp.pi**2 / 3 - 3 * mp.zeta(3)
        w = mp.mpf(w_value.numerator) / w_value.denominator
        a = b + 2 * mp.log(b) - rho / b + w / b
    with mp.workdps(dps):
        la, lb = loss_gradient(a, b)
        slope = 1 + 2 / b + rho / b**2
        return b**4 * (-la + slope * lb) - w * b**2 * lb, b * (1 + 2 * b**3 * lb)


def _field_from_F(b_value: int, w_value: Fraction, dps: int = 40):
    """(S, D) from the closed form F (Ê = 0) at one point, in mpmath: no series, no remainder."""
    kval, kt = analytic_value("K")
    x, log_r = tail.log_r_on_relation()
    with mp.workdps(dps + 20):
        e = mp.mpf(1) / b_value
        r_value = mp.exp(mp.mpf(sp.N(log_r.subs({mq.w: sp.Rational(w_value.numerator, w_value.denominator),
                                                  eps: sp.Rational(1, b_value)}), dps + 20)))
        out = []
        for expr in tail.field_in_F():
            expr = expr.subs({tail.E_a_hat: 0, tail.E_b_hat: 0}).replace(
                lambda n: isinstance(n, K), lambda n: kval.subs(kt, n.args[0]))
            f = sp.lambdify((eps, r, mq.w), expr, "mpmath")
            out.append(f(e, r_value, mp.mpf(w_value.numerator) / w_value.denominator))
        return out


def _check_field(b_value, w_value):
    quadrature = _field_from_quadrature(b_value, w_value)
    closed = _field_from_F(b_value, w_value)
    enclosure = field_enclosure(TailBox((Fraction(1, b_value),) * 2, (w_value,) * 2))
    for q, c, name in zip(quadrature, closed, ("S", "D")):
        assert abs(q - c) < mp.mpf(10) ** -28, (name, q, c)
        assert enclosure[name].contains(arb(mp.nstr(q, 30))), (name, enclosure[name], q)


def test_scaled_field_matches_the_quadrature_at_b_1000():
    _check_field(1000, Fraction(3, 10))


@pytest.mark.slow
@pytest.mark.parametrize("b_value,w_value", [(2000, Fraction(-1, 2)), (10_000, Fraction(1, 4))])
def test_scaled_field_matches_the_quadrature_far_out(b_value, w_value):
    _check_field(b_value, w_value)


def test_enclosure_at_eps_zero_is_the_limit():
    field = field_enclosure(TailBox((Fraction(0),) * 2, (Fraction(1, 4),) * 2))
    with ctx.workprec(128):
        limit = 3 * arb(3).zeta() + arb(1) / 2 - arb(1) / 4
    assert field["D"].overlaps(limit) and field["D"].rad() < 1e-10
    assert field["S"].overlaps(arb(-0.25)) and field["S"].rad() < 1e-10


def test_tail_region_rejects_bad_constants():
    with pytest.raises(InputError):
        TailRegion(999, Fraction(1, 2), Fraction(5, 2), Fraction(11, 2))
    with pytest.raises(InputError):
        TailRegion(1000, Fraction(3, 2), Fraction(5, 2), Fraction(11, 2))
    with pytest.raises(InputError):
        TailRegion(1000, Fraction(1, 2), Fraction(6), Fraction(11, 2))


def test_a_too_narrow_drift_band_is_not_proved():
    """d₋ = 4, d₊ = 4.2 excludes the limit 3ζ(3) + 1/2 − w on most of w ∈ [0, 1/2]: no proof at depth 4."""
    narrow = TailRegion(1000, Fraction(1, 2), Fraction(4), Fraction(21, 5))
    assert prove_tail_obligation(narrow, "drift_upper_half", max_depth=4)["status"] == "not proved"


@pytest.fixture(scope="module")
def certificate():
    return tail_certificate(DEFAULT_TAIL)


def _resealed(document):
    document["digest"] = digest(document)
    return document


def test_tail_certificate_proves_and_rechecks(certificate):
    assert certificate["status"] == "proved"
    assert all(row["leaves"] >= 1 and float(row["smallest_lower"]) > 0.2 for row in certificate["summary"].values())
    assert certificate["region"]["epsilon"] == ["0", "1/1000"]
    assert certificate["assumptions"] == [] and "assum" not in certificate["statement"]
    assert float(certificate["rest"]["bound"]) < 1e-200
    ok, message = recheck_tail(certificate)
    assert ok, message


def test_tampering_is_rejected(certificate):
    dropped = copy.deepcopy(certificate)
    leaf = dropped["obligations"]["drift_lower_half"]["leaves"][0]
    half = dict(leaf, box={"epsilon": ["0", "1/2000"], "w": leaf["box"]["w"]})
    dropped["obligations"]["drift_lower_half"]["leaves"] = [half]
    ok, message = recheck_tail(_resealed(dropped))
    assert not ok and "missing" in message

    narrowed = copy.deepcopy(certificate)
    record = narrowed["obligations"]["inward_upper"]["leaves"][0]
    record["upper"] = record["lower"]
    ok, message = recheck_tail(_resealed(narrowed))
    assert not ok and "narrowed" in message

    larger_b = copy.deepcopy(certificate)
    larger_b["region"] = TailRegion(2000, Fraction(1, 2), Fraction(5, 2), Fraction(11, 2)).to_json()
    larger_b["statement"] = TailRegion(2000, Fraction(1, 2), Fraction(5, 2), Fraction(11, 2)).statement()
    ok, message = recheck_tail(_resealed(larger_b))
    assert not ok and ("does not state" in message or "remainder" in message or "rest" in message)

    remainder = copy.deepcopy(certificate)
    remainder["remainders"]["R_li2"][1] = "0.25"
    ok, message = recheck_tail(_resealed(remainder))
    assert not ok and "remainder" in message

    lemma = copy.deepcopy(certificate)
    lemma["assumptions"] = ["Lemma E (docs/tail.md §4, proved by hand)"]
    ok, message = recheck_tail(_resealed(lemma))
    assert not ok and "assumptions" in message

    rest = copy.deepcopy(certificate)
    rest["rest"]["derivation_sha256"] = "0" * 64
    ok, message = recheck_tail(_resealed(rest))
    assert not ok and "rest" in message

    derivation = copy.deepcopy(certificate)
    derivation["derivation"]["limits_at_epsilon_0"]["S"] = "-2*w"
    ok, message = recheck_tail(_resealed(derivation))
    assert not ok and "derivation" in message

    unsealed = copy.deepcopy(certificate)
    unsealed["obligations"]["drift_upper_half"]["leaves"][0]["lower"] = "2"
    ok, message = recheck_tail(unsealed)
    assert not ok and "digest" in message


def test_join_needs_a_meeting_finite_region(certificate):
    from stumpcheck.numerics.certified.region.certificate import FORMAT
    from stumpcheck.numerics.certified.region.invariant_region import Region
    from stumpcheck.numerics.certified.region.tail_certificate import _join_record

    short = {"format": FORMAT, "region": Region(30, 900, Fraction(1, 2), Fraction(5, 2), Fraction(11, 2)).to_json()}
    with pytest.raises(InputError, match="do not meet"):
        _join_record(DEFAULT_TAIL, short)
    wide = {"format": FORMAT, "region": Region(30, 1000, Fraction(3, 4), Fraction(5, 2), Fraction(11, 2)).to_json()}
    with pytest.raises(InputError, match="c exceeds"):
        _join_record(DEFAULT_TAIL, wide)
    forged = copy.deepcopy(certificate)
    forged["join"] = {"finite": short, "check": {"meets": True}}
    ok, message = recheck_tail(_resealed(forged))
    assert not ok and "join" in message


def test_the_layer_integral_is_the_sum_of_its_kernels():
    """I(ε, r) = ∫₀^∞ (e₀² − ε²) dv, checked piece by piece: the partial fractions in Y rebuild the integrand
    exactly, each kernel ∫₀^∞ vʲ/(e^v − c)^m dv is (1/(m−1)!)·∂_c^{m−1} of j!·Li_{j+1}(c)/c (the series
    Σ cⁿ j!/(n+1)^{j+1} term by term) and agrees with mpmath quadrature at c = 0.3."""
    from stumpcheck.theory.asymptotics import _kernel_integral, right_layer_error
    from stumpcheck.theory.symbols import v

    c = sp.Symbol("c", positive=True)
    integrand = sp.cancel(sp.together(right_layer_error() ** 2 - eps**2).subs(r, 1 - c))
    parts = sp.apart(integrand, Y := sp.Symbol("Y", positive=True))
    assert sp.simplify(parts - integrand) == 0
    used = set()
    for term in sp.Add.make_args(sp.expand(parts)):
        m = sp.degree(sp.fraction(sp.together(term))[1], Y)
        numerator = sp.Poly(sp.cancel(term * (Y - c) ** m), v)
        used |= {(j, m) for (j,) in numerator.monoms()}
    assert used and max(m for _, m in used) <= 2
    for j, m in sorted(used):
        kernel = _kernel_integral(j, m, c)
        textbook = sp.diff(sp.factorial(j) * sp.polylog(j + 1, c) / c, c, m - 1) / sp.factorial(m - 1)
        assert sp.simplify(sp.expand_func(kernel - textbook)) == 0
        with mp.workdps(30):
            quad = mp.quad(lambda x: x**j / (mp.exp(x) - mp.mpf("0.3")) ** m, [0, 1, 10, mp.inf])
            assert abs(sp.N(kernel.subs(c, sp.Rational(3, 10)), 30) - quad) < 1e-25


def _mutations(document):
    """Malformed copies: fields dropped or of the wrong type, at every level a re-check reads."""
    yield {k: v for k, v in document.items() if k != "region"}
    for key, bad in (("region", []), ("region", {"b_min": "x"}), ("obligations", []), ("join", 3),
                     ("join", {"finite": []}), ("summary", None), ("remainders", "no")):
        yield dict(document, **{key: bad})
    for field, bad in (("leaves", [3]), ("leaves", [{"box": 1}]), ("leaves", [{"box": {"epsilon": ["0"]}}]),
                       ("prec_bits", "128"), ("prec_bits", 10**6), ("leaves", [{"box": {"epsilon": ["1e99999", "0"],
                                                                                       "w": ["0", "1"]}}])):
        forged = copy.deepcopy(document)
        forged["obligations"]["inward_upper"][field] = bad
        yield forged


def test_malformed_certificates_fail_or_are_bad_input(certificate):
    for forged in _mutations(certificate):
        forged = _resealed(copy.deepcopy(forged))
        try:
            ok, message = recheck_tail(forged)
        except InputError as exc:
            assert str(exc) and "\n" not in str(exc)
            continue
        assert not ok and message
