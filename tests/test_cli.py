"""The command line: outputs, exit statuses, one-line errors."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import mpmath
import pytest

from stumpcheck.cli.commands import main

ROOT = Path(__file__).resolve().parent.parent


def run(argv, capsys):
    status = main(argv)
    captured = capsys.readouterr()
    return status, captured.out, captured.err


def _value(out: str, name: str) -> str:
    lines = [line for line in out.splitlines() if line.startswith(f"{name} = ")]
    assert len(lines) == 1, out
    return lines[0].split()[-1]


def test_derive_json_has_the_promised_keys(capsys):
    status, out, _ = run(["derive", "--json"], capsys)
    assert status == 0
    data = json.loads(out)
    for key in ("calibration", "flow_constant_C", "leading_loss", "progress_direction"):
        assert key in data
    assert data["calibration"].startswith("Eq(a, ")
    assert data["flow_constant_C"] == "2"


def _independent_error(a, b, theta):
    """θ̂∞ − θ by direct quadrature of the defining integrals (scores shifted by a − bθ)."""
    shift = max(mpmath.mpf(0), a - b * theta)

    def moment(power, lo, hi, label):
        return mpmath.quad(lambda x: x**power * mpmath.exp(a * label - b * x - shift),
                           [lo, (lo + hi) / 2, hi])

    z = moment(0, 0, theta, 0) + moment(0, theta, 1, 1)
    n = moment(1, 0, theta, 0) + moment(1, theta, 1, 1)
    return n / z - theta


def test_eval_error_agrees_with_independent_quadrature_to_35_digits(capsys):
    status, out, _ = run(["eval", "error", "--a", "25", "--b", "20", "--theta", "0.95", "--dps", "40"], capsys)
    assert status == 0
    printed = _value(out, "e")
    assert len(printed.replace("0.", "", 1).lstrip("0")) >= 39  # 40 significant digits printed
    with mpmath.workdps(60):
        reference = _independent_error(mpmath.mpf(25), mpmath.mpf(20), mpmath.mpf("0.95"))
        digits = -mpmath.log10(abs(mpmath.mpf(printed) - reference) / abs(reference))
    assert digits >= 35, f"only {float(digits):.1f} digits agree"
    assert "evidence certified" in out  # an Arb enclosure fixes the 40 digits (before: the mpmath pair)


def test_eval_hessian_certified_prints_three_balls_that_agree_with_the_float64_hessian(capsys):
    from stumpcheck.numerics.population.quantities import loss_gradient_hessian_float64

    status, out, _ = run(["eval", "hessian", "--a", "25", "--b", "20", "--dps", "30", "--certified"], capsys)
    assert status == 0 and "evidence certified" in out
    _, _, hessian = loss_gradient_hessian_float64(25.0, 20.0)
    hessian = [hessian[0][0], hessian[0][1], hessian[1][1]]
    for name, value in zip(("d2L/da2", "d2L/dadb", "d2L/db2"), hessian):
        mid, rad = _ball(out, name)
        assert rad < abs(mid) * mpmath.mpf(10) ** -28
        assert abs(float(mid) - value) <= 1e-10 * abs(value), (name, mid, value)


@pytest.mark.parametrize("argv, fragment", [
    (["eval", "error", "--a", "1", "--b", "0", "--theta", "0.5"], "b must be > 0"),
    (["eval", "error", "--a", "1", "--b", "-2", "--theta", "0.5"], "b must be > 0"),
    (["eval", "error", "--a", "1", "--b", "2", "--theta", "1.5"], "theta must lie in [0, 1]"),
    (["eval", "error", "--a", "1", "--b", "2", "--theta", "-0.1"], "theta must lie in [0, 1]"),
    (["eval", "error", "--a", "abc", "--b", "2", "--theta", "0.5"], "a must be a decimal number"),
    (["eval", "error", "--a", "nan", "--b", "2", "--theta", "0.5"], "a must be finite"),
    (["eval", "error", "--a", "1", "--b", "inf", "--theta", "0.5"], "b must be finite"),
    (["eval", "error", "--a", "1", "--b", "2", "--theta", "0.5", "--dps", "14"], "outside [15, 10000]"),
    (["eval", "error", "--a", "1", "--b", "2", "--theta", "0.5", "--dps", "10001"], "outside [15, 10000]"),
    (["eval", "error", "--a", "1", "--b", "2", "--theta", "0.5", "--dps", "thirty"], "integer number of digits"),
    (["eval", "error", "--a", "1", "--b", "2"], "needs --theta"),
    (["eval", "loss", "--a", "1", "--b", "2", "--theta", "0.5"], "not used by eval loss"),
    (["eval", "volume", "--a", "1", "--b", "2"], "volume"),
    (["export", "--format", "pdf"], "pdf"),
])
def test_bad_input_exits_2_with_one_line(argv, fragment, capsys):
    status, out, err = run(argv, capsys)
    assert status == 2
    assert out == ""
    assert len(err.strip().splitlines()) == 1, err
    assert fragment in err
    assert "Traceback" not in err


def test_console_entry_point_runs_as_a_module():
    proc = subprocess.run([sys.executable, "-m", "stumpcheck", "eval", "error", "--a", "3", "--b", "2",
                           "--theta", "0.3", "--dps", "15"], capture_output=True, text=True, cwd=ROOT)
    assert proc.returncode == 0, proc.stderr
    assert float(_value(proc.stdout, "e")) == pytest.approx(0.24842663083124921, rel=1e-14)
    bad = subprocess.run([sys.executable, "-m", "stumpcheck", "eval", "error", "--a", "3", "--b", "0",
                          "--theta", "0.3"], capture_output=True, text=True, cwd=ROOT)
    assert bad.returncode == 2 and len(bad.stderr.strip().splitlines()) == 1


def test_eval_grad_prints_both_components_at_the_requested_digits(capsys):
    status, out, _ = run(["eval", "grad", "--a", "10", "--b", "10", "--dps", "15"], capsys)
    assert status == 0
    grad_a, grad_b = float(_value(out, "dL/da")), float(_value(out, "dL/db"))
    from stumpcheck.numerics.population.quantities import loss_and_gradient_float64

    _, reference = loss_and_gradient_float64(10.0, 10.0)
    assert grad_a == pytest.approx(reference[0], rel=1e-12)
    assert grad_b == pytest.approx(reference[1], rel=1e-12)


def _ball(out: str, name: str):
    line = next(line for line in out.splitlines() if line.startswith(f"{name} = ["))
    mid, rad = line.split("[", 1)[1].split("]", 1)[0].split(" +/- ")
    with mpmath.workdps(80):  # parse the printed digits exactly enough
        return mpmath.mpf(mid), mpmath.mpf(rad)


def test_eval_loss_certified_encloses_the_high_precision_value(capsys):
    """The interior-layer case of issue 3: a = 600, b = 1000."""
    status, out, _ = run(["eval", "loss", "--a", "600", "--b", "1000", "--dps", "30", "--certified"], capsys)
    assert status == 0
    assert "evidence certified" in out
    mid, rad = _ball(out, "L")
    with mpmath.workdps(45):
        from stumpcheck.numerics.population.quantities import loss

        reference = loss(600, 1000)
        assert abs(reference - mid) <= rad
    assert rad / abs(mid) < mpmath.mpf(10) ** -25


def test_eval_error_certified_encloses_the_independent_quadrature(capsys):
    status, out, _ = run(["eval", "error", "--a", "25", "--b", "20", "--theta", "0.95", "--dps", "40",
                          "--certified"], capsys)
    assert status == 0
    mid, rad = _ball(out, "e")
    with mpmath.workdps(60):
        reference = _independent_error(mpmath.mpf(25), mpmath.mpf(20), mpmath.mpf("0.95"))
        assert abs(reference - mid) <= rad
    assert rad < mpmath.mpf(10) ** -38


@pytest.mark.parametrize("argv, fragment", [
    (["eval", "hessian", "--a", "1", "--b", "0", "--certified"], "b must be"),
    (["eval", "loss", "--a", "1", "--b", "1e400", "--certified"], "supported for b <="),
    (["eval", "loss", "--a", "1", "--b", "1e400"], "supported for b <="),  # took minutes before
    (["eval", "loss", "--a", "1", "--b", "2", "--rel-width", "1e-5"], "only applies with --certified"),
    (["eval", "loss", "--a", "1", "--b", "2", "--certified", "--rel-width", "-1"], "must be > 0"),
])
def test_certified_bad_input_exits_2(argv, fragment, capsys):
    status, out, err = run(argv, capsys)
    assert status == 2 and fragment in err and len(err.strip().splitlines()) == 1


def test_too_narrow_a_certified_request_fails_with_status_1(capsys):
    status, out, err = run(["eval", "loss", "--a", "10", "--b", "10", "--dps", "15", "--certified",
                            "--rel-width", "1e-300"], capsys)
    assert status == 1
    assert "too wide" in err and len(err.strip().splitlines()) == 1


def test_certify_is_registered_and_bad_boxes_exit_2(capsys):
    status, out, err = run(["certify", "--predicate", "error_abs_le_c_over_b", "--a", "1,2", "--b", "-1,2",
                            "--param", "c=2"], capsys)
    assert status == 2 and "b must be > 0" in err and len(err.strip().splitlines()) == 1
    status, out, err = run(["certify", "--predicate", "error_abs_le_c_over_b", "--a", "109.2,111.3",
                            "--b", "100,101", "--theta", "0.05,0.95", "--param", "c=2"], capsys)
    assert status == 0 and "PROVED" in out


def test_a_command_that_exits_1_makes_main_return_1(capsys):
    """click's ctx.exit(1) must reach the shell: certify of a false bound |e| ≤ 0.5/b exits 1."""
    status, out, _ = run(["certify", "--predicate", "error_abs_le_c_over_b", "--a", "109.2,111.3",
                          "--b", "100,101", "--theta", "0.05,0.95", "--param", "c=0.5"], capsys)
    assert status == 1 and "failure box" in out


def test_flow_no_check_says_the_check_was_skipped(capsys):
    status = main(["flow", "--t-max", "1", "--no-check", "--quiet"])
    out = capsys.readouterr().out
    assert status == 0
    line = next(line for line in out.splitlines() if line.startswith("status:"))
    assert line.endswith("(rtol vs rtol/10): skipped (--no-check)") and "nan" not in line


def test_a_closed_stdout_ends_quietly_with_status_1(monkeypatch, capsys):
    """``stumpcheck … | head``: click swaps stdout and exits 1 when its reader went away; that is not a lemma
    file calling sys.exit, so nothing is printed about one."""
    import errno
    import io

    class Closed(io.StringIO):
        def write(self, text):
            raise BrokenPipeError(errno.EPIPE, "Broken pipe")

    monkeypatch.setattr(sys, "stdout", Closed())
    status = main(["eval", "error", "--a", "10", "--b", "10", "--theta", "0.5"])
    assert status == 1
    assert capsys.readouterr().err == ""


def test_export_names_writes_only_those_results_and_the_macros(tmp_path, capsys):
    code, out, err = run(["export", "--format", "tex", "--names", "loss, bulk_error", "--out", str(tmp_path)], capsys)
    assert code == 0, err
    assert sorted(p.name for p in (tmp_path / "tex").iterdir()) == ["bulk_error.tex", "loss.tex", "loss_split.tex",
                                                                   "macros.tex"]


@pytest.mark.parametrize("argv", [["--format", "tex", "--names", "nope"], ["--names", "loss"],
                                  ["--format", "py", "--names", "loss"]])
def test_export_names_refuses_an_unknown_name_or_another_format_in_one_line(tmp_path, capsys, argv):
    code, out, err = run(["export", *argv, "--out", str(tmp_path / "x")], capsys)
    assert code == 2 and len(err.strip().splitlines()) == 1, err
    assert not (tmp_path / "x").exists()
