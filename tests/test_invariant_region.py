"""The forward-invariant region beyond the tube: its obligations, certificate, re-check and consequences.

The default tests prove the region on the short range b ∈ [30, 30.6] (one 2 % piece per obligation) and
tamper with its certificate; the whole range b ∈ [30, 1000] is behind ``slow``.
"""

from __future__ import annotations

import copy
import math
from fractions import Fraction

import pytest
from hypothesis import given, settings, strategies as st

from stumpcheck.numerics.certified.region.invariant_region import DEFAULT_REGION, OBLIGATIONS, Region, obligations
from stumpcheck.numerics.certified.region.bounds import b4_band, entry_check, horizon
from stumpcheck.numerics.certified.region.certificate import recheck_region, region_certificate
from stumpcheck.numerics.certified.certificates.lemma_certificate import digest
from stumpcheck.numerics.precision import InputError

SHORT = DEFAULT_REGION.with_b_max(Fraction("30.6"))
RHO1 = -3 * 1.2020569031595942 + 1.5 + math.pi**2 / 3


def _calibration(b: float) -> float:
    return b + 2 * math.log(b) - RHO1 / b


def _entry(b: float, w: float) -> dict:
    a = _calibration(b) + w / b
    return {"t": "500000", "box": {"a": (f"{a - 1e-7:.9f}", f"{a + 1e-7:.9f}"), "b": (f"{b:.6f}", f"{b + 1e-6:.6f}")}}


@pytest.fixture(scope="module")
def short_certificate():
    return region_certificate(SHORT, entry=_entry(30.1, -0.158))


def _redigest(document: dict) -> dict:
    document["digest"] = digest(document)
    return document


def test_the_short_region_is_proved_and_its_certificate_rechecks(short_certificate):
    assert short_certificate["status"] == "proved"
    assert set(short_certificate["obligations"]) == set(OBLIGATIONS)
    assert short_certificate["region"]["delta"] == "11/60"
    entry = short_certificate["entry"]
    assert entry["check"]["inside"] and float(entry["check"]["w"][0]) < -0.158 < float(entry["check"]["w"][1])
    ok, message = recheck_region(short_certificate)
    assert ok, message


def test_a_narrower_region_is_rejected(short_certificate):
    forged = copy.deepcopy(short_certificate)
    forged["region"]["c"] = "0.25"
    forged["statement"] = Region.from_json(forged["region"]).statement()
    ok, message = recheck_region(_redigest(forged))
    assert not ok and "inward_upper does not state what the region needs" in message


def test_a_smaller_delta_is_rejected(short_certificate):
    forged = copy.deepcopy(short_certificate)
    forged["region"]["delta"] = "1/10"
    ok, message = recheck_region(_redigest(forged))
    assert not ok and "δ" in message
    forged = copy.deepcopy(short_certificate)
    forged["region"]["d_plus"] = "4.5"
    forged["region"]["delta"] = "0.15"
    forged["statement"] = Region.from_json(forged["region"]).statement()
    ok, message = recheck_region(_redigest(forged))
    assert not ok and "drift_lower_half does not state" in message


def test_a_dropped_box_is_rejected(short_certificate):
    forged = copy.deepcopy(short_certificate)
    lemma = forged["obligations"]["drift_upper_half"]
    lemma["leaves"] = lemma["leaves"][:-1]
    _redigest(lemma)
    ok, message = recheck_region(_redigest(forged))
    assert not ok and "the summary of drift_upper_half" in message
    forged["summary"]["drift_upper_half"]["leaves"] -= 1  # the summary made to agree, as a forger would
    ok, message = recheck_region(_redigest(forged))
    assert not ok and "drift_upper_half" in message and "tile" in message


def test_an_edited_certificate_and_a_false_entry_are_rejected(short_certificate):
    edited = copy.deepcopy(short_certificate)
    edited["region"]["c"] = "0.4"
    assert recheck_region(edited) == (False, "the certificate was edited after it was written (its digest does not match)")
    forged = copy.deepcopy(short_certificate)
    forged["entry"] = {**forged["entry"], "t": "600000"}
    ok, message = recheck_region(_redigest(forged))
    assert not ok and "entry" in message
    with pytest.raises(InputError):
        recheck_region({"format": "something else"})


def test_the_entry_check_uses_the_whole_box():
    assert entry_check(DEFAULT_REGION, _entry(36.11, -0.15)["box"])["inside"]
    outside = entry_check(DEFAULT_REGION, _entry(36.11, 0.6)["box"])
    assert not outside["inside"] and "w =" in outside["reason"]
    low = entry_check(DEFAULT_REGION, _entry(29.0, 0.0)["box"])
    assert not low["inside"] and "b ∈" in low["reason"]


def test_bad_regions_are_bad_input():
    with pytest.raises(InputError):
        Region(30, 1000, 0, Fraction(5, 2), Fraction(11, 2))
    with pytest.raises(InputError):
        Region(5, 1000, Fraction(1, 2), Fraction(5, 2), Fraction(11, 2))  # b_start <= d_plus: b need not grow
    with pytest.raises(InputError):
        Region(30, 20000, Fraction(1, 2), Fraction(5, 2), Fraction(11, 2))


def test_the_obligations_restate_the_region():
    stated = obligations(DEFAULT_REGION)
    assert stated["inward_upper"][2].variables["w"] == (Fraction(1, 2), Fraction(1, 2))
    assert stated["inward_lower"][2].variables["w"] == (Fraction(-1, 2), Fraction(-1, 2))
    assert stated["drift_lower_half"][2].variables["w"] == (Fraction(-1, 2), Fraction(0))
    assert all(stated[n][3] for n in ("inward_upper", "inward_lower"))


@settings(max_examples=40, deadline=None)
@given(beta=st.floats(min_value=30.0, max_value=900.0), log_dt=st.floats(min_value=0.0, max_value=11.0))
def test_the_b4_band_contains_the_integrated_drift_extremes(beta, log_dt):
    """The band holds the solutions of the drift's two extreme laws d(b⁴)/dt = 2(1 − d/b), d = d₊ and d = d₋."""
    region = DEFAULT_REGION
    t_entry, dt = 1e6, 10**log_dt
    t_b = float(horizon(region, t_entry, beta).mid())
    if t_entry + dt > t_b:
        dt = (t_b - t_entry) * 0.99
    band = b4_band(region, t_entry, beta, beta, Fraction(t_entry + dt))
    lower, upper = float(band["b4"][0]), float(band["b4"][1])
    for d in (float(region.d_plus), float(region.d_minus)):
        y, steps = beta**4, 400
        h = dt / steps
        for _ in range(steps):  # RK4 on y = b⁴
            f = lambda y: 2 * (1 - d / y**0.25)
            k1 = f(y); k2 = f(y + h * k1 / 2); k3 = f(y + h * k2 / 2); k4 = f(y + h * k3)
            y += h * (k1 + 2 * k2 + 2 * k3 + k4) / 6
        assert lower * (1 - 1e-9) <= y <= upper * (1 + 1e-9)
    assert float(band["b4_over_t"][0]) <= float(band["b4_over_t"][1])


@pytest.mark.slow
def test_the_whole_region_is_proved_and_rechecks():
    document = region_certificate(DEFAULT_REGION, entry=_entry(36.11, -0.15), workers=2)
    assert document["status"] == "proved", document["summary"]
    ok, message = recheck_region(document)
    assert ok, message


@pytest.mark.parametrize("b, w", [(36.5, 0.5), (200.0, -0.5), (31.0, -0.25)])
def test_the_margins_are_the_field_they_name(b, w):
    """At a point the Arb margins agree with the same quantities from the float64 ∇L (sampled, independent code):
    −w·b³·dw/dt with dw/dt = b(ȧ − calibration_a′(b)ḃ) + (w/b)ḃ, and b(1 − 2b³ḃ)."""
    from stumpcheck.numerics.certified.region.invariant_region import boundary_margin, drift_margin
    from stumpcheck.numerics.population.quantities import loss_and_gradient_float64

    b_exact, w_exact = Fraction(b), Fraction(w)
    a = _calibration(b) + w / b
    _, (l_a, l_b) = loss_and_gradient_float64(a, b)
    a_dot, b_dot = -l_a, -l_b
    slope = 1 + 2 / b + RHO1 / b**2
    w_dot = b * (a_dot - slope * b_dot) + (w / b) * b_dot
    point = {"b": (b_exact, b_exact), "w": (w_exact, w_exact)}
    inward = boundary_margin().enclose(point, 128)[0]
    assert float(inward.mid()) == pytest.approx(-w * b**3 * w_dot, abs=2e-6 * b)
    drift = drift_margin(DEFAULT_REGION).enclose(point, 128)[0]
    assert float(drift.mid()) == pytest.approx(1.5 - abs(b * (1 - 2 * b**3 * b_dot) - 4), abs=2e-6 * b)


def test_the_region_command_reports_bad_input_and_a_forged_certificate(short_certificate, tmp_path, capsys):
    import json

    from stumpcheck.cli.commands import main

    for args in (["--b-max", "20"], ["--b-max", "x"], ["--entry-t", "5"], ["--recheck", str(tmp_path / "none.json")]):
        assert main(["region", *args, "--out", str(tmp_path)]) == 2
        captured = capsys.readouterr()
        assert len(captured.err.strip().splitlines()) == 1 and "error" in captured.err, captured.err
    forged = copy.deepcopy(short_certificate)
    forged["region"]["delta"] = "0.1"
    path = tmp_path / "forged.json"
    path.write_text(json.dumps(_redigest(forged)), encoding="utf-8")
    assert main(["region", "--recheck", str(path)]) == 1
    out = capsys.readouterr().out
    assert out.startswith("FAIL") and "δ" in out
