"""The digits a flow returns are earned (issue 37, item 1): only the digits its two solves agree on, with the
error estimate beside them, checked digit for digit against the certified enclosure of b(10⁶) from (10, 10)
(tests/flow_certificate_1e6.json) and against independent high-precision solves.

The independent values (benchmarks/flow_reference.py; benchmarks/README.md, "The high-precision flow"): linearly
implicit Euler extrapolated to order 13 in the coordinates (a, b), at 36 digits, rtol 1e-26, with one
Gauss–Legendre order on every piece (chosen by two-order checks at 36 digits) — another order, precision, tolerance and quadrature rule than the
library's 30-digit solves (order 14 at rtol 1e-25 and order 11 at 1e-20, in (a, b), per-piece orders; order 7 in
(a − b, log b) at rtol 1e-9). The 30-digit solves to t = 10⁶ and to t = 100 at rtol 1e-25 take minutes: slow.
"""

from __future__ import annotations

import json
import math
from fractions import Fraction
from pathlib import Path

import mpmath
import pytest

from stumpcheck.numerics.flow.digits import SAFETY, earned_value, rounded_decimal
from stumpcheck.numerics.flow.integrate import integrate_flow

CERTIFICATE = Path(__file__).parent / "flow_certificate_1e6.json"
#: b(10⁶), a(10⁶) from (10, 10) by the independent 36-digit solve (module docstring; 594 steps, 46927 field
#: evaluations, 984 s of CPU), to 22 digits (the float64 Radau flow at rtol 1e-12 ends 2e-16 from this b; the former
#: 30-digit Rodas4 value 36.1108372533364722962 was 1.9e-14 off: Rodas4's coefficients have 16 digits).
B_1E6 = "36.11083725333580302094"
A_1E6 = "43.24704294247210819808"
#: b(100), a(100) by the same independent solve (31 steps, 42 s of CPU), as it printed them.
B_100 = "9.40347434622846987042809518768536562"
A_100 = "10.7237133467581751105565394871541573"
#: b(1), a(1) by the same independent solve (8 steps), as it printed them: the test compares at most 20 digits.
B_1 = "9.99136967749673520863961625821009442"
A_1 = "10.0101293040259308785555770996570072"


def _digits(text: str) -> int:
    """Significant digits of a plain decimal string."""
    return len(text.replace("-", "").replace(".", "").lstrip("0"))


def _unit(text: str) -> Fraction:
    """The unit in the last place of a plain decimal string."""
    decimals = len(text.split(".")[1]) if "." in text else 0
    return Fraction(1, 10 ** decimals)


def agrees_with_value(printed: str, reference: str) -> bool:
    """Digit for digit: the reference rounded to the printed number's significant digits is the printed number."""
    with mpmath.workdps(60):
        return rounded_decimal(mpmath.mpf(reference), _digits(printed)) == printed


def agrees_with_enclosure(printed: str, lower: Fraction, upper: Fraction) -> bool:
    """Digit for digit with an enclosure [lower, upper]: some value in it rounds to the printed number, i.e. the
    printed number's rounding interval (± half its last unit) meets the enclosure. Where the enclosure is narrower
    than that unit (here up to 9–10 digits) this fixes every printed digit; beyond, the independent solve does."""
    value = Fraction(printed)
    half = _unit(printed) / 2
    return value - half <= upper and lower <= value + half


def _certified_box_1e6() -> tuple:
    from stumpcheck.numerics.certified.tube.reading_nodes import piece_record, pieces_state_at

    document = json.loads(CERTIFICATE.read_text(encoding="utf-8"))
    return pieces_state_at([piece_record(item) for item in document["intervals"]], Fraction(10**6))


# --- the rule ------------------------------------------------------------------------------------------------


def test_earned_digits_follow_the_estimate():
    """The issue's value and the 30-digit one, 6.2e-10 apart: 9 digits (10 × 6.2e-10 ≤ 5e-8, half a unit of the
    9th; not of the 10th); the decimal is the rtol/10 value rounded; the estimate is kept beside it."""
    value = earned_value("36.1108372539579065167697868771", "36.1108372533364722962", 30)
    assert value.text == "36.1108373" and value.digits == 9
    assert value.error == pytest.approx(6.214342e-10, rel=1e-6)
    assert SAFETY * value.error <= 0.5 * 10.0 ** -7 and SAFETY * value.error > 0.5 * 10.0 ** -8


def test_a_larger_trajectory_estimate_costs_digits():
    """Solves that agree at the end by chance: the trajectory's estimate decides."""
    close = earned_value(36.11083725395, 36.11083725396, 15)
    wide = earned_value(36.11083725395, 36.11083725396, 15, error=3.7e-9)
    assert close.digits == 11 and wide.digits == 9 and wide.error == 3.7e-9


def test_values_that_round_apart_earn_no_more_digits():
    """1.2340001 and 1.2339999 are 2e-7 apart and round alike to 1.234000 (7 digits, not 8); 10 × 2e-7 is within
    half a unit of the 6th digit only."""
    value = earned_value(1.2340001, 1.2339999, 15)
    assert value.text == "1.23400" and value.digits == 6
    assert earned_value(1.2340001, 1.2339999, 15, error=0.0).digits == 6


def test_nothing_earned_is_said():
    value = earned_value(1.0, 2.0, 15)
    assert value.text == "" and value.digits == 0 and "?" in str(value)
    assert earned_value(float("nan"), 1.0, 15).digits == 0


def test_rounded_decimal_is_plain():
    assert rounded_decimal(123456789.0, 3) == "123000000"
    assert rounded_decimal(1.234567e-5, 3) == "0.0000123"
    assert rounded_decimal(36.11083725395, 12) == "36.1108372540"


def test_the_reference_constants_agree_with_the_certificate():
    """The independent b(10⁶), a(10⁶) lie in the certified box, and every digit the box fixes is theirs."""
    box = _certified_box_1e6()
    assert agrees_with_enclosure(B_1E6, box[2], box[3]) and agrees_with_enclosure(A_1E6, box[0], box[1])
    assert agrees_with_enclosure("36.1108373", box[2], box[3]) and agrees_with_enclosure("36.110837253", box[2], box[3])
    assert not agrees_with_enclosure("36.1108374", box[2], box[3])  # the check can fail
    assert agrees_with_value("36.11083725334", B_1E6) and not agrees_with_value("36.11083725333", B_1E6)


# --- float64 -------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("rtol", [1e-8, 1e-10, 1e-12])
def test_float64_final_digits_agree_with_the_enclosure_and_the_reference(rtol):
    """integrate_flow(10, 10, 1e6) in float64 (LSODA; Radau at 1e-12): each printed digit of the final a, b agrees
    with the certified enclosure and the independent value (rtol 1e-10: a(10⁶) of the rtol solve is 3.9e-10 off
    while the two solves' own difference is 3.3e-10, and the value lies 5e-11 from a rounding boundary of the
    11th digit: the printed a has 10 digits)."""
    run = integrate_flow(10.0, 10.0, 1e6, rtol=rtol)
    box = _certified_box_1e6()
    final_b, final_a = run.settings["final_b"], run.settings["final_a"]
    assert _digits(final_b) >= {1e-8: 7, 1e-10: 9, 1e-12: 11}[rtol], final_b
    assert agrees_with_value(final_b, B_1E6) and agrees_with_value(final_a, A_1E6), (final_a, final_b)
    assert agrees_with_enclosure(final_b, box[2], box[3]) and agrees_with_enclosure(final_a, box[0], box[1])
    assert run.settings["final_b_error"] >= run.a_posteriori_rel_error_b * abs(run.b[-1]) * (1 - 1e-8)


# --- at 30 digits --------------------------------------------------------------------------------------------


def test_30_digit_flow_to_t_1_earns_its_rtol():
    """integrate_flow(10, 10, 1, dps=30, rtol=1e-20): order 11 in (a, b); about 19 digits, each the independent
    solve's."""
    run = integrate_flow(10.0, 10.0, 1.0, dps=30, rtol=1e-20)
    assert run.status.ok, run.status.message
    final_b, final_a = run.settings["final_b"], run.settings["final_a"]
    assert _digits(final_b) >= 17, final_b
    assert agrees_with_value(final_b, B_1) and agrees_with_value(final_a, A_1), (final_a, final_b)
    assert run.settings["state_coordinates"] == "a, b"
    assert "Euler extrapolation 11(10)" in run.settings["solver"]


@pytest.mark.slow
def test_30_digit_flow_at_the_default_rtol_prints_only_earned_digits():
    """The issue's call, integrate_flow(10, 10, 1e6, dps=30) (rtol 1e-9): it printed 30 digits of which 10 were
    right; now every printed digit agrees with the certified enclosure and the independent solve."""
    run = integrate_flow(10.0, 10.0, 1e6, dps=30)
    box = _certified_box_1e6()
    final_b, final_a = run.settings["final_b"], run.settings["final_a"]
    assert 7 <= _digits(final_b) <= 12, final_b
    assert agrees_with_value(final_b, B_1E6) and agrees_with_value(final_a, A_1E6), (final_a, final_b)
    assert agrees_with_enclosure(final_b, box[2], box[3]) and agrees_with_enclosure(final_a, box[0], box[1])


@pytest.mark.slow
def test_30_digit_flow_at_rtol_1e25_agrees_digit_for_digit():
    """integrate_flow(10, 10, 100, dps=30, rtol=1e-25) (order 14 in (a, b); measured: 36 steps, 7268 field
    evaluations for both solves, 75 s of CPU): 24 digits of b(100) and 25 of a(100), each the independent
    36-digit solve's."""
    run = integrate_flow(10.0, 10.0, 100.0, dps=30, rtol=1e-25)
    assert run.status.ok, run.status.message
    final_b, final_a = run.settings["final_b"], run.settings["final_a"]
    assert _digits(final_b) >= 22 and _digits(final_a) >= 22, (final_a, final_b)
    assert agrees_with_value(final_b, B_100) and agrees_with_value(final_a, A_100), (final_a, final_b)
    assert run.settings["final_b_error"] < 1e-23
    assert "Euler extrapolation 14(13)" in run.settings["solver"] and run.settings["state_coordinates"] == "a, b"
