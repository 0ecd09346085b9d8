"""Fuzz items of issue 27 for ``flow`` and ``eval``: each input ends within 30 s with one line and exit 2 (bad
input), or computes what it says (the fit's caveat, eval's verified digits from an Arb enclosure).

Run as subprocesses (a hang is a timeout, a traceback is visible on stderr).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import mpmath
import pytest

ROOT = Path(__file__).resolve().parent.parent


def _cli(argv, timeout=300):  # a hang guard (these inputs used to hang); a loaded machine starts Python slowly
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    env.pop("STUMPCHECK_DEBUG", None)
    start = time.monotonic()
    done = subprocess.run([sys.executable, "-m", "stumpcheck", *argv], capture_output=True, text=True,
                          timeout=timeout, cwd=ROOT, env=env)
    return done.returncode, done.stdout, done.stderr, time.monotonic() - start


@pytest.mark.parametrize("argv, fragments", [
    (["flow", "--t-max", "1e-308", "--no-check"], ["t-max", "1e-100"]),  # hung in LSODA
    (["flow", "--quiet", "--t-max", "1e-150"], ["t-max"]),
    (["flow", "--quiet", "--t-max", "1", "--rel-goal", "1e-3"], ["--rel-goal", "--certified"]),
    (["flow", "--quiet", "--t-max", "1", "--time-limit", "5"], ["--time-limit", "--certified"]),
    (["flow", "--quiet", "--t-max", "1", "--rhs", "mpmath"], ["--rhs", "--dps"]),
    (["flow", "--quiet", "--t-max", "1", "--workers", "2"], ["--workers", "--dps"]),
    (["flow", "--certified", "--quiet", "--t-max", "1", "--rtol", "1e-20"], ["--rtol", "--certified"]),
    (["flow", "--certified", "--quiet", "--t-max", "1", "--solver", "bogus"], ["--solver", "--certified"]),
    (["flow", "--certified", "--quiet", "--t-max", "1", "--no-check"], ["--no-check"]),
])
def test_flow_refuses_in_one_line(argv, fragments):
    status, out, err, _ = _cli(argv)
    assert status == 2, (status, out[-500:], err[-500:])
    lines = err.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in err, err
    for fragment in fragments:
        assert fragment in lines[0], lines[0]


def test_flow_fit_outside_the_calibrated_window_has_a_caveat(tmp_path):
    """flow --t-max 10 printed scale_constant: -48.78 as a fit of the law; now the summary and flow.json say the
    window is not calibrated (the JSON key stays, with its validity)."""
    status, out, err, _ = _cli(["flow", "--quiet", "--t-max", "10", "--out", str(tmp_path)])
    assert status == 0, err
    assert "scale_constant:" in out
    caveat = [line for line in out.splitlines() if line.startswith("caveat")]
    assert len(caveat) == 1 and "not yet calibrated" in caveat[0] and "[0.01, 10]" in caveat[0], out
    fits = json.loads((tmp_path / "flow.json").read_text(encoding="utf-8"))["fits"]
    assert fits["scale_constant"]["value"] < 0  # the fitted number is kept, and flagged
    assert fits["scale_constant"]["valid"] is False and "not yet calibrated" in fits["scale_constant"]["validity"]


def test_flow_fit_on_the_calibrated_window_is_valid():
    from stumpcheck.numerics.flow.run import run_population_flow

    run = run_population_flow(10.0, 10.0, 1e8, check=False, per_decade=4)
    fit = run.fits["scale_constant"]
    assert fit["valid"] is True and abs(fit["value"] - 2.0) < 0.01


def test_eval_grad_30_digits_from_an_arb_enclosure():
    """eval grad --a 400 --b 100 --dps 30 took 435 s and printed 13 verified digits (exit 1); now 30 digits from an
    Arb enclosure, each the correct rounding of the value a 60-digit enclosure gives. Its time is measured by the
    benchmarks, not asserted here; the subprocess's timeout is only a guard against a hang."""
    from stumpcheck.numerics.certified import enclosures as certified
    from stumpcheck.cli.evaluate_arb import switch_layer_bits
    from decimal import Decimal

    status, out, err, _ = _cli(["eval", "grad", "--a", "400", "--b", "100", "--dps", "30"], timeout=120)
    assert status == 0, err
    header = out.splitlines()[0]
    assert "evidence certified" in header and "Arb enclosure" in header
    printed = dict(line.split(" = ", 1) for line in out.splitlines()[1:])
    balls = certified.certified_loss_gradient("400", "100", dps=60, rel_width=1e-55,
                                              extra_bits=switch_layer_bits(Decimal(400), Decimal(100)))
    for name, ball in zip(("dL/da", "dL/db"), balls):
        text = printed[name]
        assert len(text.lstrip("-").split("e")[0].replace(".", "").lstrip("0")) == 30, text
        with mpmath.workdps(80):
            assert mpmath.nstr(ball.mid, 30, strip_zeros=False, min_fixed=-3, max_fixed=3) == text


def test_eval_names_the_mpmath_method_when_asked():
    status, out, err, _ = _cli(["eval", "loss", "--a", "10", "--b", "10", "--dps", "20", "--method", "mpmath"])
    assert status == 0, err
    assert "evidence high-precision" in out.splitlines()[0]


def test_eval_method_arb_without_a_tight_enclosure_fails_in_one_line(monkeypatch, capsys):
    """An Arb enclosure that stays too wide (at both working precisions) with --method arb: exit 1, one line, no
    digits. (At b = 1e-30 the first precision misses and twice the digits succeed, so the width is forced here.)"""
    from stumpcheck.numerics.certified import enclosures
    from stumpcheck.numerics.certified.enclosures import balls
    from stumpcheck.cli.commands import main

    def too_wide(*args, **kwargs):
        raise balls.EnclosureTooWide("the enclosure [0 +/- 1] has relative radius inf, wider than the requested 1e-21")

    monkeypatch.setattr(enclosures, "certified_loss_gradient", too_wide)
    status = main(["eval", "grad", "--a", "10", "--b", "1e-30", "--dps", "20", "--method", "arb"])
    out, err = capsys.readouterr()
    assert status == 1 and len(err.strip().splitlines()) == 1 and "Arb enclosure" in err, err
    assert " = " not in out


def test_eval_grad_at_small_b_gets_its_digits_from_twice_the_working_precision():
    """At b = 1e-30, ∂L/∂a = O(b) cancels: 35 working digits give a ball 1e-3 wide, 70 digits fix all 30 (it fell
    back to the two-precision mpmath path, about 27 s)."""
    status, out, err, _ = _cli(["eval", "grad", "--a", "10", "--b", "1e-30", "--dps", "30", "--method", "arb"])
    assert status == 0, err
    assert "Arb enclosure at 70 digits" in out.splitlines()[0]
    assert "dL/da = -1.88771199067608098161035581389e-36" in out
