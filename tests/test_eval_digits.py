"""Every digit `stumpcheck eval` prints agrees with an independent certified (Arb) or higher-precision value.

Driven through tiny and huge b and a (pointwise b down to 1e-300; the
θ-integrals' domain starts at b = 1e-30), θ near 1 (inside the one-head switch
layer, 1 − θ* ≈ e^{−(a−b)}/b far below the working precision's spacing),
and the evidence loop itself (raise the precision, or print only the
verified digits with a warning and exit 1). Expensive integral cases (b =
1e-30, a = 400 with b = 100) are marked slow.
"""

from __future__ import annotations

import math

import mpmath
import pytest

from stumpcheck.numerics.certified import enclosures as certified
from stumpcheck.numerics.evidence import verified_evaluation
from stumpcheck.numerics.population.quadrature import transition_point
from stumpcheck.cli.commands import main


def run(argv, capsys):
    status = main(argv)
    captured = capsys.readouterr()
    return status, captured.out, captured.err


def _printed(out: str) -> dict:
    values = {}
    for line in out.splitlines():
        if " = " in line and not line.startswith("#"):
            name, text = line.split(" = ", 1)
            values[name] = text.split()[0]
    return values


def _significant(text: str) -> int:
    mantissa = text.lstrip("-").split("e")[0].replace(".", "").lstrip("0")
    return len(mantissa)


def _assert_digits_agree(text: str, enclosure) -> None:
    """The printed decimal agrees with the certified ball to all its significant digits:
    |printed − exact| ≤ half a unit in the last printed digit (plus the ball's radius)."""
    with mpmath.workdps(200):
        printed = mpmath.mpf(text)
        exponent = int(mpmath.floor(mpmath.log10(abs(printed)))) if printed != 0 else 0
        unit = mpmath.mpf(10) ** (exponent - _significant(text) + 1)
        exact_mid, radius = mpmath.mpf(enclosure.mid), mpmath.mpf(enclosure.rad)
        # one unit: the reference's own rounding to the printed digits may go either way at a tie
        assert abs(printed - exact_mid) <= unit + radius, (text, str(enclosure))


def _layer_theta(a: str, b: str, factor: str) -> str:
    """A θ inside the switch layer: 1 − θ = factor·(1 − θ*), as an exact decimal of enough digits."""
    with mpmath.workdps(200):
        _, rest, _ = transition_point(mpmath.mpf(a), mpmath.mpf(b))
        digits = 40 - int(mpmath.floor(mpmath.log10(rest)))
        return mpmath.nstr(1 - mpmath.mpf(factor) * rest, digits, strip_zeros=False)


@pytest.mark.parametrize("a, b, factor", [
    ("1212.3989362310265", "1069.9639383994872", "1.3"),  # the audit's case: 1 − θ* ≈ 1.3e-65
    ("400", "100", "0.5"),  # 1 − θ* ≈ 1e-132
    ("25", "20", "1"),
])
def test_eval_error_inside_the_switch_layer_near_one_has_every_printed_digit_right(a, b, factor, capsys):
    theta = _layer_theta(a, b, factor)
    status, out, err = run(["eval", "error", "--a", a, "--b", b, "--theta", theta, "--dps", "30"], capsys)
    assert status == 0, err
    text = _printed(out)["e"]
    assert _significant(text) == 30
    reference = certified.certified_error(a, b, theta, dps=60)
    _assert_digits_agree(text, reference)


@pytest.mark.parametrize("a, b, theta", [
    ("10", "1e-300", "0.3"), ("-1e6", "1e-300", "0.7"), ("1e6", "1e8", "0.999999999999"),
    ("-3", "1e9", "0.5"), ("1e9", "1e-3", "0.999"), ("0", "1e-30", "1"), ("7", "1e8", "0"),
])
def test_eval_error_at_tiny_and_huge_scales_prints_certified_digits(a, b, theta, capsys):
    status, out, err = run(["eval", "error", "--a", a, "--b", b, "--theta", theta, "--dps", "20"], capsys)
    assert status == 0, err
    _assert_digits_agree(_printed(out)["e"], certified.certified_error(a, b, theta, dps=50))


@pytest.mark.slow
@pytest.mark.parametrize("a, b", [("10", "1e-3"), ("1013.8155105579642", "1000"), ("-5", "0.5")])
def test_eval_grad_prints_certified_digits(a, b, capsys):
    status, out, err = run(["eval", "grad", "--a", a, "--b", b, "--dps", "15"], capsys)
    assert status == 0, err
    printed = _printed(out)
    balls = certified.certified_loss_gradient(a, b, dps=25, rel_width=1e-20)
    for name, ball in zip(("dL/da", "dL/db"), balls):
        _assert_digits_agree(printed[name], ball)


@pytest.mark.slow
@pytest.mark.parametrize("argv", [
    ["eval", "grad", "--a", "10", "--b", "1e-30"],
    ["eval", "grad", "--a", "400", "--b", "100", "--dps", "30"],
    ["eval", "grad", "--a", "210", "--b", "10", "--dps", "30"],
])
def test_eval_grad_audit_cases_print_only_verified_digits(argv, capsys):
    status, out, err = run(argv, capsys)
    printed = _printed(out)
    a, b = argv[argv.index("--a") + 1], argv[argv.index("--b") + 1]
    # the reference at 60 digits: at b = 1e-30, 30 digits leave ∂L/∂a = O(b) only 3 digits wide after cancellation
    balls = certified.certified_loss_gradient(a, b, dps=60, rel_width=1e-12)
    for name, ball in zip(("dL/da", "dL/db"), balls):
        if printed[name] != "unverified":
            _assert_digits_agree(printed[name], ball)
    assert status == 0 or (status == 1 and "warning" in err)


def test_the_evidence_loop_raises_the_precision_until_the_digits_agree():
    """A computation whose error is 10^-(d/2) at d digits is verified only once d is doubled."""
    calls = []

    def compute(subdivide):
        calls.append(mpmath.mp.dps)
        return (mpmath.mpf(1) / 3 + mpmath.mpf(10) ** -(mpmath.mp.dps // 2),)

    result = verified_evaluation(compute, 20, max_dps=200)
    assert result.complete and result.working_dps > 20
    with mpmath.workdps(60):
        assert abs(result.values[0] - mpmath.mpf(1) / 3) < mpmath.mpf(10) ** -20


def test_the_evidence_loop_reports_unverified_digits_within_its_budget():
    def compute(subdivide):  # a different wrong answer at every precision: never verified
        return (mpmath.mpf(1) + mpmath.mpf(subdivide) / 1000,)

    result = verified_evaluation(compute, 30, max_dps=60)
    assert not result.complete and result.verified == (3,)  # 1.001 vs 1.002
    assert result.working_dps == 60


def test_the_evidence_loop_starts_no_attempt_after_its_time_budget():
    attempts = []

    def compute(subdivide):
        attempts.append(subdivide)
        return (mpmath.mpf(1) + mpmath.mpf(subdivide) / 1000,)

    result = verified_evaluation(compute, 30, max_dps=1000, time_budget=0)
    assert result.attempts == 1 and len(attempts) == 2 and not result.complete


def test_eval_exits_1_and_prints_only_verified_digits_when_the_budget_is_exhausted(monkeypatch, capsys):
    from stumpcheck.numerics.population import quantities as population

    monkeypatch.setattr(population, "error", lambda a, b, theta, estimator: mpmath.mpf(2) ** -mpmath.mp.prec * 1e6)
    status, out, err = run(["eval", "error", "--a", "1", "--b", "1", "--theta", "0.5", "--dps", "15", "--method",
                            "mpmath"], capsys)
    assert status == 1
    assert "unverified" in _printed(out)["e"] or _significant(_printed(out)["e"]) < 15
    assert "warning" in err and len(err.strip().splitlines()) == 1


@pytest.mark.parametrize("argv, fragment", [
    (["eval", "error", "--a", "1e999999999", "--b", "1", "--theta", "0.5"], "outside the supported range"),
    (["eval", "error", "--a", "1e400", "--b", "1", "--theta", "0.5", "--certified"], "|a| <= 1e9"),
    (["eval", "error", "--a", "1", "--b", "1e-400", "--theta", "0.5"], "1e-300 <= b"),
    (["eval", "loss", "--a", "1", "--b", "2", "--dps", "1001"], "limit for the θ-integrals"),
    (["eval", "grad", "--a", "10", "--b", "1e-300"], "supported for b >= 1e-30"),  # printed the wrong sign
    (["eval", "error", "--a", "1", "--b", "2", "--theta", "0." + "1" * 20000], "characters"),
])
def test_eval_rejects_magnitudes_outside_its_domain_quickly(argv, fragment, capsys):
    status, out, err = run(argv, capsys)
    assert status == 2 and fragment in err and len(err.strip().splitlines()) == 1


def test_certified_eval_works_at_the_inputs_digits_and_reports_relative_radii(capsys):
    theta = "0." + "9" * 60 + "1"
    status, out, err = run(["eval", "error", "--a", "150", "--b", "100", "--theta", theta, "--dps", "20",
                            "--certified"], capsys)
    assert status == 0, err
    line = next(line for line in out.splitlines() if line.startswith("e = "))
    radius = float(line.split("rel. radius ")[1].rstrip(")"))
    assert radius < 1e-18  # with θ rounded to 20 digits the ball was [−0.50 ± 0.501]
    assert math.isfinite(radius)
