"""The rest E = L − F of the tail (theory/tail_rest.py, numerics/certified/region/tail_rest.py): its integrands
against the model's own derivatives, its zone bounds against 400-digit values at b = 1000, E_x = ∫h − ∫g against
L_x − F_x at b = 40, and the tail's proof failing when the rest's enclosure is weakened."""

from __future__ import annotations

import copy
from fractions import Fraction
from functools import cache

import mpmath as mp
import pytest
import sympy as sp

from stumpcheck.numerics.certified.region import tail as tail_module
from stumpcheck.numerics.certified.region.tail import DEFAULT_TAIL, prove_tail_obligation
from stumpcheck.numerics.certified.region.tail_rest import rest_bound, rest_terms
from stumpcheck.theory.tail_rest import ATOMS, ZONES, integrands, rest_identities, zone_terms


def _point(b_value, w_value):
    rho = mp.mpf(3) / 2 + mp.pi**2 / 3 - 3 * mp.zeta(3)
    bb = mp.mpf(b_value)
    return bb + 2 * mp.log(bb) - rho / bb + mp.mpf(w_value) / bb, bb


@cache
def _functions():
    """h_x, g_x as mpmath functions of (b, θ, r, U, E_v, d₁, d₂)."""
    names = [ATOMS[n] for n in ("b", "theta", "r", "U", "E_v", "d_1", "d_2")]
    return {key: sp.lambdify(names, expr, "mpmath") for key, expr in integrands().items()}


def _atoms(aa, bb, th):
    r = mp.exp(bb - aa)
    big_u, ev = mp.exp(-bb * th), mp.exp(bb * (1 - th))
    return bb, th, r, big_u, ev, 1 / (ev - 1 + r), 1 / (ev - 1 + r * (1 - big_u))


def _layer_error(aa, bb, th):
    """e₀ = (1 − N/D₁)/b at (a, b, θ) (θ may be < 0)."""
    _, _, r, _, ev, d1, _ = _atoms(aa, bb, th)
    return (1 - (bb * (1 - th) + r * bb * th) * d1) / bb


def test_the_identities_hold_by_sympy():
    checks = rest_identities()
    assert checks and all(checks.values()), checks


@pytest.mark.parametrize("th", ["0.001", "0.3", "0.6", "0.99", "0.9999"])
def test_h_is_e_e_x_minus_e0_e0_x(th):
    """h_x from the atoms equals e·∂_x e − e₀·∂_x e₀ from the generated model and numerical derivatives of e₀."""
    from stumpcheck.numerics.generated import population_mpmath as gen

    with mp.workdps(60):
        aa, bb = _point(40, "0.3")
        th = mp.mpf(th)
        e, e_a, e_b = gen.error_and_gradient_one_head(aa, bb, th)
        e0 = _layer_error(aa, bb, th)
        e0_a = mp.diff(lambda x: _layer_error(x, bb, th), aa)
        e0_b = mp.diff(lambda x: _layer_error(aa, x, th), bb)
        for x, (ex, e0x) in {"a": (e_a, e0_a), "b": (e_b, e0_b)}.items():
            mine = _functions()[("h", x)](*_atoms(aa, bb, th))
            direct = e * ex - e0 * e0x
            assert abs(mine - direct) <= mp.mpf(10) ** -40 * (1 + abs(e0 * e0x)), (x, mine, direct)


@pytest.mark.parametrize("th", ["-0.01", "-1"])
def test_g_is_half_the_derivative_of_e0_squared(th):
    with mp.workdps(60):
        aa, bb = _point(40, "-0.5")
        th = mp.mpf(th)
        for x in ("a", "b"):
            half = (lambda s: (_layer_error(s, bb, th) ** 2 - 1 / bb**2) / 2) if x == "a" else (
                lambda s: (_layer_error(aa, s, th) ** 2 - 1 / s**2) / 2)
            direct = mp.diff(half, aa if x == "a" else bb)
            mine = _functions()[("g", x)](*_atoms(aa, bb, th))
            assert abs(mine - direct) <= mp.mpf(10) ** -40, (x, mine, direct)


def _zone_value(zone, x, aa, bb, th):
    return _functions()[("g" if zone == "negative" else "h", x)](*_atoms(aa, bb, th))


@pytest.mark.parametrize("w_value", [-1, "0.3", 1])
def test_each_zone_bound_holds_pointwise_at_b_1000(w_value):
    """|integrand| ≤ the zone's pointwise bound (its terms divided by the width and b⁴) at 400 digits."""
    with mp.workdps(400):
        aa, bb = _point(1000, w_value)
        samples = {"left": ["1e-6", "0.001", "0.25", "0.5"], "right_far": ["0.5", "0.8", "0.998"],
                   "right_near": ["0.999", "0.9999999", "1"]}
        widths = {"left": (mp.mpf(1) / 2, 0), "right_far": (mp.mpf(1) / 2, 0), "right_near": (1, -1)}
        for zone, thetas in samples.items():
            for x in ("a", "b"):
                beta, terms = rest_terms(zone, x, Fraction(1000))
                c_width, p_width = widths[zone]
                bound = sum(mp.mpf(c.upper().str(30, radius=False)) * bb ** (p - 4 - p_width) for p, c in terms.items())
                bound *= mp.exp(-mp.mpf(beta.numerator) / beta.denominator * bb) / c_width
                for th in thetas:
                    value = _zone_value(zone, x, aa, bb, mp.mpf(th))
                    assert abs(value) <= bound, (zone, x, th, value, bound)
                    assert abs(value) > 0 or th == "1"


@pytest.mark.slow
def test_the_rest_is_the_integral_of_its_integrands_at_b_40():
    """E_x = ∫₀¹ h_x dθ − ∫_{−∞}^0 g_x dθ against L_x − F_x (60-digit θ-quadrature and the closed form F)."""
    from stumpcheck.numerics.population.quantities import loss_gradient
    from stumpcheck.theory import tail
    from stumpcheck.theory.symbols import eps, r
    from stumpcheck.theory.tail_series import K, analytic_value

    kval, kt = analytic_value("K")
    F = tail.loss_F().replace(lambda n: isinstance(n, K), lambda n: kval.subs(kt, n.args[0]))
    f_eps = sp.lambdify((eps, r), sp.diff(F, eps), "mpmath")
    rf_r = sp.lambdify((eps, r), r * sp.diff(F, r), "mpmath")
    with mp.workdps(60):
        aa, bb = _point(40, 1)
        la, lb = loss_gradient(aa, bb)
        e, r_value = 1 / bb, mp.exp(bb - aa)
        expected = {"a": la + rf_r(e, r_value), "b": lb + e**2 * f_eps(e, r_value) - rf_r(e, r_value)}
        pieces = [0, 1 / bb, mp.mpf(1) / 2, 1 - 1 / bb, 1 - r_value / bb, 1]
        for x in ("a", "b"):
            upper = mp.quad(lambda th: _zone_value("left", x, aa, bb, th), pieces)
            lower = mp.quad(lambda th: _zone_value("negative", x, aa, bb, th), [-mp.inf, -1, 0])
            assert abs((upper - lower) - expected[x]) <= mp.mpf(10) ** -45, (x, upper - lower, expected[x])


def test_the_bound_is_exponentially_small_and_zero_at_eps_zero():
    bound = rest_bound(Fraction(1, 1000))
    assert 0 < float(bound.upper() * mp.mpf(10) ** 200) < 1
    assert rest_bound(Fraction(0)) == 0
    with pytest.raises(Exception):
        rest_bound(Fraction(1, 999))


def test_every_zone_keeps_its_small_factor():
    small = {"left": "eta", "right_far": "U", "right_near": "U", "negative": "eta"}
    for zone in ZONES:
        for x in ("a", "b"):
            assert all(dict(powers).get(small[zone], 0) >= 1 for _, powers in zone_terms(zone, x))


def test_a_weakened_rest_bound_makes_the_proof_fail(monkeypatch):
    """The obligations need the rest's enclosure: multiplied by 10²¹⁵ (|Ê| up to about 3·10⁴), none proves."""
    monkeypatch.setattr(tail_module, "REST_FACTOR", 10**215)
    for name in ("inward_upper", "drift_upper_half"):
        assert prove_tail_obligation(DEFAULT_TAIL, name, max_depth=3)["status"] == "not proved"
    monkeypatch.setattr(tail_module, "REST_FACTOR", 10**150)  # still tiny (10⁻⁶¹): proved as before
    assert prove_tail_obligation(DEFAULT_TAIL, "inward_upper", max_depth=3)["status"] == "proved"


def test_a_rest_record_edited_or_an_assumption_added_is_rejected():
    from stumpcheck.numerics.certified.certificates.lemma_certificate import digest
    from stumpcheck.numerics.certified.region.tail_certificate import TAIL_FORMAT_V1, recheck_tail, tail_certificate

    document = tail_certificate(DEFAULT_TAIL)
    assert document["assumptions"] == [] and document["status"] == "proved"
    ok, message = recheck_tail(document)
    assert ok, message

    def resealed(edit):
        forged = copy.deepcopy(document)
        edit(forged)
        forged["digest"] = digest(forged)
        return recheck_tail(forged)

    ok, message = resealed(lambda d: d["assumptions"].append("Lemma E"))
    assert not ok and "assumptions" in message
    ok, message = resealed(lambda d: d["rest"].update(bound="1E-300"))
    assert not ok and "rest" in message
    ok, message = resealed(lambda d: d["remainders"]["E_a_hat"].__setitem__(1, "1E-300"))
    assert not ok and "remainder" in message
    ok, message = resealed(lambda d: d["obligations"]["inward_lower"]["leaves"][0].update(lower="0.3"))
    assert not ok
    ok, message = resealed(lambda d: d.update(format=TAIL_FORMAT_V1))
    assert not ok and "Lemma E" in message
