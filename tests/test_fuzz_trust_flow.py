"""Fuzzed inputs of `flow --certified` and `region` (issue 27, item 6): each ends within seconds with exit 2
and one line on stderr (1 and one FAIL line for a failed check), before any work, and leaves nothing behind.

The region certificate here is the short one (b ∈ [30, 30.6], about a second to prove)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from fractions import Fraction
from pathlib import Path

import pytest

from stumpcheck.numerics.certified.region.invariant_region import DEFAULT_REGION
from stumpcheck.numerics.certified.region.certificate import region_certificate
from stumpcheck.numerics.certified.certificates.lemma_certificate import digest
from stumpcheck.cli.commands import main

ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture(scope="module")
def short_region(tmp_path_factory) -> Path:
    """A region certificate for B = 30.6 (the issue's "B = 31" case), no entry."""
    path = tmp_path_factory.mktemp("region") / "region_certificate.json"
    path.write_text(json.dumps(region_certificate(DEFAULT_REGION.with_b_max(Fraction("30.6")))), encoding="utf-8")
    return path


def _one_line(capsys, code, expected_code, text):
    captured = capsys.readouterr()
    stream = captured.err if expected_code == 2 else captured.out
    lines = stream.strip().splitlines()
    assert code == expected_code and len(lines) == 1 and text in lines[0], (code, captured.out, captured.err)


@pytest.mark.parametrize("t_max", ["1e-308", "1e-13", "0"])
def test_flow_certified_with_a_tiny_t_max_is_refused_and_leaves_no_folder(tmp_path, capsys, t_max):
    out = tmp_path / "out"
    started = time.perf_counter()
    code = main(["flow", "--certified", "--quiet", "--t-max", t_max, "--out", str(out)])
    _one_line(capsys, code, 2, "t-max must be in [1e-12, 1e+12]")
    assert not out.exists() and time.perf_counter() - started < 30  # refused before the tube's minutes of work


def test_flow_certified_with_dps_beyond_its_limit_is_refused_and_leaves_no_folder(tmp_path, capsys):
    out = tmp_path / "out"
    code = main(["flow", "--certified", "--quiet", "--t-max", "1", "--dps", "5000", "--out", str(out)])
    _one_line(capsys, code, 2, "--dps of the certified tube must be in [15, 50]")
    assert not out.exists()


@pytest.mark.parametrize("arguments, text", [
    (["--out", "/proc/x"], "--out"),
    (["--entry-t", "5", "--entry-box", "36.9,36.8,30.1,30.2"], "lo <= hi"),
    (["--entry-t", "5", "--entry-box", "36.8,36.9,-30.2,30.1"], "b > 0"),
    (["--entry-t", "1e999999999", "--entry-box", "36.8,36.9,30.1,30.2"], "beyond the limit"),
    (["--entry-t", "5", "--entry-box", "36.8,36.9,30.1"], "four decimals"),
])
def test_region_bad_input_is_refused_before_the_proof(tmp_path, capsys, monkeypatch, arguments, text):
    import stumpcheck.numerics.certified.region.certificate as certificates

    monkeypatch.setattr(certificates, "prove_obligation",
                        lambda *a, **k: pytest.fail("the proof started before the input was checked"))
    out = [] if "--out" in arguments else ["--out", str(tmp_path / "out")]
    code = main(["region", "--b-max", "30.6", *arguments, *out])
    _one_line(capsys, code, 2, text)


def test_region_recheck_of_another_b_max_fails_at_once(short_region, capsys, monkeypatch):
    import stumpcheck.numerics.certified.certificates.lemma_recheck as recheck_module

    monkeypatch.setattr(recheck_module, "recheck", lambda *a, **k: pytest.fail("a leaf was re-enclosed"))
    code = main(["region", "--recheck", str(short_region), "--b-max", "1000"])
    _one_line(capsys, code, 1, "the certificate proves B = 30.6, not the asked --b-max 1000")
    code = main(["region", "--recheck", str(short_region), "--entry-t", "5", "--entry-box", "36.8,36.9,30.1,30.2"])
    _one_line(capsys, code, 1, "the certificate's entry is not the asked --entry-t/--entry-box")


def test_region_recheck_with_the_asked_b_max_passes(short_region, capsys):
    assert main(["region", "--recheck", str(short_region), "--b-max", "30.6"]) == 0
    assert capsys.readouterr().out.startswith("PASS")


@pytest.mark.parametrize("entry, text", [
    ({"t": "5", "box": {"a": ["36.9", "36.8"], "b": ["30.1", "30.2"]}}, "lo <= hi"),
    ({"t": "5", "box": [1, 2]}, "an entry needs 't'"),
    ({"t": "5", "box": {"a": ["x", "1"], "b": ["30.1", "30.2"]}}, "exact decimal"),
    ({"box": {"a": ["36.8", "36.9"], "b": ["30.1", "30.2"]}}, "an entry box needs"),
])
def test_region_recheck_of_a_malformed_entry_is_exit_2_at_once(short_region, tmp_path, capsys, monkeypatch, entry,
                                                                text):
    import stumpcheck.numerics.certified.certificates.lemma_recheck as recheck_module

    monkeypatch.setattr(recheck_module, "recheck", lambda *a, **k: pytest.fail("a leaf was re-enclosed"))
    document = json.loads(short_region.read_text(encoding="utf-8"))
    document["entry"] = entry
    document["digest"] = digest(document)
    path = tmp_path / "forged.json"
    path.write_text(json.dumps(document), encoding="utf-8")
    code = main(["region", "--recheck", str(path)])
    _one_line(capsys, code, 2, text)


def test_flow_certified_ctrl_c_prints_the_resume_hint_and_stops_its_workers(tmp_path):
    """Ctrl-C while the workers compute: one line naming the checkpoint, exit 130 within seconds, no worker
    left (before: 15-20 s at load 6, the workers finishing their intervals, and no hint). The θ-integrals in
    Arb (``--arb``): with the fast layer the workers finish T = 1000 within the test's wait. The test waits
    for events (both workers and their resource tracker running), not for time; the one bound on the stop is
    wide (it takes about a second unloaded, and the workers' intervals minutes in Arb)."""
    out = tmp_path / "out"
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    process = subprocess.Popen([sys.executable, "-m", "stumpcheck", "flow", "--certified", "--arb", "--quiet",
                                "--t-max", "1000", "--workers", "2", "--out", str(out)], env=env, cwd=ROOT,
                               stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE, start_new_session=True)
    try:
        deadline = time.monotonic() + 300  # a hang guard
        while time.monotonic() < deadline and len(_children(process.pid)) < 3 and process.poll() is None:
            time.sleep(0.1)
        workers = _children(process.pid)
        assert len(workers) >= 3, "the two workers (and their resource tracker) were not started"
        os.killpg(process.pid, signal.SIGINT)  # as a terminal does: the whole group
        sent = time.monotonic()
        _, err = process.communicate(timeout=300)
        elapsed = time.monotonic() - sent
    finally:
        if process.poll() is None:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait(30)
    lines = err.decode().strip().splitlines()
    assert process.returncode == 130 and len(lines) == 1, err.decode()
    assert "interrupted" in lines[0] and "tube_checkpoint.jsonl: the same command resumes" in lines[0]
    assert elapsed < 60, elapsed
    deadline = time.monotonic() + 1.0  # gone within a second of the command's end
    while [pid for pid in workers if _alive(pid)] and time.monotonic() < deadline:
        time.sleep(0.01)
    assert [pid for pid in workers if _alive(pid)] == []


def _children(pid: int) -> list:
    result = subprocess.run(["pgrep", "-P", str(pid)], capture_output=True, text=True)
    return [int(x) for x in result.stdout.split()]


def _alive(pid: int) -> bool:
    try:
        status = Path(f"/proc/{pid}/status").read_text()
    except OSError:
        return False
    return "State:\tZ" not in status
