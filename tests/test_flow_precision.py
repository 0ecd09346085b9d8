"""The high-precision population flow (run_population_flow(..., dps=D)) against float64.

The mpmath flow evaluates ∇L, ∇²L from the generated mpmath code by breakpoint
Gauss–Legendre whose order is chosen by a two-order comparison, and runs the
Rosenbrock solver in mpmath at D digits. Its cost is ~0.5–1 s per field
evaluation, so the default run integrates a short horizon; the comparison to
a large horizon is marked slow.
"""

from __future__ import annotations

import mpmath
import pytest

from numerics.population_flow import quadrature_order_for, run_population_flow
from numerics.precision import InputError


def test_quadrature_order_check_can_fail_and_then_succeeds():
    """From 4 points the two-order comparison does not reach dps + 2 digits, so a larger
    order is returned, whose check does; the precision is restored."""
    before = mpmath.mp.prec
    order, digits = quadrature_order_for(10.0, 10.0, 20, start=4)
    assert order > 4
    assert digits >= 22
    assert mpmath.mp.prec == before
    with pytest.raises(InputError):
        quadrature_order_for(10.0, 10.0, 20, start=4, largest=5)


def test_short_mp_flow_matches_float64_dopri5():
    """(10, 10) → t = 0.01 at 20 digits (Rodas3, rtol 1e-10) against the float64 Dopri5 flow at
    rtol 1e-12: both are accurate to ~1e-10, so their final b agree to 1e-9 relative. The
    20-digit final state is reported to 20 digits and the quadrature check is recorded."""
    before = mpmath.mp.prec
    hp = run_population_flow(10.0, 10.0, 0.01, rtol=1e-10, dps=20, solver="rodas3", check=False, per_decade=1)
    assert mpmath.mp.prec == before
    assert hp.status.ok and hp.stats["accepted_steps"] >= 3
    assert hp.stats["quadrature_check_digits_start"] >= 22 and hp.stats["quadrature_check_digits_end"] >= 22
    assert len(hp.stats["final_b"].replace(".", "")) >= 19
    lo = run_population_flow(10.0, 10.0, 0.01, rtol=1e-12, solver="dopri5", check=False, per_decade=1)
    final_b = mpmath.mpf(hp.stats["final_b"])
    assert abs(lo.b[-1] - final_b) / final_b <= 1e-9, (lo.b[-1], hp.stats["final_b"])
    assert abs(lo.a[-1] - mpmath.mpf(hp.stats["final_a"])) / abs(lo.a[-1]) <= 1e-9


def test_bad_precision_is_an_input_error():
    with pytest.raises(InputError):
        run_population_flow(10.0, 10.0, 1.0, dps=5)
    with pytest.raises(InputError):
        run_population_flow(10.0, 10.0, 1.0, dps=20, rtol=1e-25)


def test_cli_flow_rejects_bad_dps_and_solver(capsys):
    from stumpcheck.cli import main

    for args in (["--dps", "abc"], ["--dps", "3"], ["--solver", "euler"]):
        assert main(["flow", "--t-max", "1", "--quiet", *args]) == 2, args
        err = capsys.readouterr().err
        assert err.count("\n") == 1 and "error" in err, err


@pytest.mark.slow
def test_float64_flow_against_30_digit_flow():
    """(10, 10) → t = 1e3: the float64 Rodas4 flow at rtol 1e-8 and the 30-digit flow at rtol
    1e-11 (a-posteriori checked) differ by ≤ 1e-8 relative in the final b. (To t = 1e12 the
    30-digit flow needs thousands of ~1 s field evaluations: hours, see benchmarks/README.md.)"""
    hp = run_population_flow(10.0, 10.0, 1e3, rtol=1e-11, dps=30, per_decade=1)
    assert hp.status.ok
    assert hp.a_posteriori_rel_error_b <= 1e-10
    lo = run_population_flow(10.0, 10.0, 1e3, rtol=1e-8, per_decade=1)
    final_b = mpmath.mpf(hp.stats["final_b"])
    assert abs(lo.b[-1] - final_b) / final_b <= 1e-8
