"""Fuzz items of issue 27 for `train`, `sweep`, worker processes, progress output and C6's k.

Each case is an input that used to hang, exit 0 past a documented limit, leave
an empty --out folder behind, or leave worker processes running; here each
must end within :data:`CASE_SECONDS` with exit 2 (or 1 for a failed check)
and one line on stderr, and a refused request must leave nothing behind.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import numpy as np
import pytest

from stumpcheck.cli.commands import MAX_ERROR_LINE, main

REPO = Path(__file__).resolve().parent.parent
#: most seconds one refused command may take
CASE_SECONDS = 30.0
SAMPLED = ["--m", "8", "--n", "8", "--seed", "0"]


@pytest.fixture()
def corpus(tmp_path):
    """A valid 8 × 8 corpus file, in a folder of its own."""
    folder = tmp_path / "inputs"
    folder.mkdir()
    path = folder / "c.npz"
    np.savez(path, x=np.random.default_rng(0).random((8, 8)), theta=np.linspace(0.1, 0.9, 8))
    return str(path)


def _refused(argv, work: Path, capsys, *, status: int = 2) -> str:
    """Run ``argv`` in ``work`` (empty); require ``status``, one stderr line, no traceback, nothing written."""
    before = sorted(work.iterdir())
    start = time.perf_counter()
    got = main(argv)
    seconds = time.perf_counter() - start
    out, err = capsys.readouterr()
    assert got == status, f"exit {got}, expected {status}; stderr: {err[-600:]}"
    assert seconds < CASE_SECONDS, f"took {seconds:.1f} s"
    assert "Traceback" not in out + err and "internal error" not in err
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("stumpcheck: error: "), err[-2000:]
    assert len(lines[0]) <= MAX_ERROR_LINE
    assert sorted(work.iterdir()) == before, "a refused request left files behind"
    return lines[0]


# --- train: ranges, horizons, the large-resolution start, nothing left behind

@pytest.mark.parametrize("option, value, fragment", [
    ("--a0", "1e151", "|a0| <= 1e+150"),
    ("--a0", "-1e151", "|a0| <= 1e+150"),
    ("--b0", "1e151", "(0, 1e+150]"),
])
def test_train_start_outside_the_documented_range_is_refused(option, value, fragment, corpus, tmp_path,
                                                             monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    line = _refused(["train", "--quiet", "--corpus", corpus, option, value, "--out", "run"], tmp_path, capsys)
    assert fragment in line and option in line


def test_train_horizon_beyond_the_step_cap_is_refused_up_front(corpus, tmp_path, monkeypatch, capsys):
    """--t-max 1e300 used to run without end (k·η ≥ 1e300 needs about 1e296 steps)."""
    from stumpcheck.numerics.corpus.gd import MAX_STEPS

    monkeypatch.chdir(tmp_path)
    line = _refused(["train", "--quiet", "--corpus", corpus, "--t-max", "1e300", "--out", "run"], tmp_path, capsys)
    assert "--t-max" in line and f"{MAX_STEPS:.0e}" in line and "steps" in line


def test_train_steps_above_the_cap_are_refused(corpus, tmp_path, monkeypatch, capsys):
    from stumpcheck.numerics.corpus.gd import MAX_STEPS

    monkeypatch.chdir(tmp_path)
    line = _refused(["train", "--quiet", "--corpus", corpus, "--steps", str(MAX_STEPS + 1), "--out", "run"],
                    tmp_path, capsys)
    assert "--steps" in line


def test_train_horizon_within_the_cap_runs(corpus, tmp_path, monkeypatch, capsys):
    """The cap refuses only what it must: a t-max a few steps long runs and stops by t_max."""
    monkeypatch.chdir(tmp_path)
    assert main(["train", "--quiet", "--corpus", corpus, "--eta", "1", "--t-max", "3", "--out", "run"]) == 0
    assert "stopped because: t_max; 3 steps" in capsys.readouterr().out


@pytest.mark.parametrize("size", [["--m", "1", "--n", "1"], ["--m", "7", "--n", "100"], ["--m", "100", "--n", "4"]])
def test_train_large_resolution_needs_m_and_n_at_least_8(size, tmp_path, monkeypatch, capsys):
    """b0 = (m ∧ n)/4 below 2 is no large-resolution start (sweep refuses such cells too)."""
    monkeypatch.chdir(tmp_path)
    line = _refused(["train", "--quiet", *size, "--seed", "0", "--init", "large-resolution", "--out", "run"],
                    tmp_path, capsys)
    assert "m ∧ n" in line and ">= 8" in line and "b0" in line


def test_sweep_and_train_share_the_large_resolution_minimum():
    from stumpcheck.numerics.corpus.steps import MIN_LARGE_RESOLUTION_SIZE, large_resolution_start
    from stumpcheck.numerics.precision import InputError

    assert MIN_LARGE_RESOLUTION_SIZE == 8
    assert large_resolution_start(8, 8)[1] == 2.0
    with pytest.raises(InputError):
        large_resolution_start(7, 8)


@pytest.mark.parametrize("extra, fragment", [
    (["--resume"], "no checkpoint"),                                  # resume with nothing to resume
    (["--b0", "1e150"], "no curvature"),                              # the corpus rule: a flat start
    (["--eta-rule", "population", "--b0", "1e100"], "no positive eigenvalue"),
    (["--eta-rule", "lookahead", "--a0", "-1e100"], "no positive eigenvalue"),
])
@pytest.mark.parametrize("out", ["run", "new/deeper/run"])
def test_train_failures_after_the_folder_check_leave_nothing_behind(extra, fragment, out, corpus, tmp_path,
                                                                    monkeypatch, capsys):
    """These passed the --out check, created the folder, then failed with exit 2 and left it (empty) behind."""
    monkeypatch.chdir(tmp_path)
    line = _refused(["train", "--quiet", "--corpus", corpus, *extra, "--out", out], tmp_path, capsys)
    assert fragment in line


def test_train_failure_in_an_existing_folder_removes_only_what_it_wrote(corpus, tmp_path, monkeypatch, capsys):
    """A folder that existed keeps what it held; the run's own checkpoint folder goes."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "run").mkdir()
    (tmp_path / "run" / "notes.txt").write_text("mine\n")
    line = _refused(["train", "--quiet", "--corpus", corpus, "--b0", "1e150", "--out", "run"], tmp_path, capsys)
    assert "no curvature" in line
    assert sorted(p.name for p in (tmp_path / "run").iterdir()) == ["notes.txt"]


def test_train_failure_at_the_first_evaluation_leaves_nothing(tmp_path, monkeypatch, capsys):
    """L̂ that cannot be evaluated at the start (with --eta, so no step rule looks first) after the checkpoint
    folder was made: the folder goes."""
    from stumpcheck.numerics.corpus import gd

    def broken(*args, **kwargs):
        raise ArithmeticError("overflow")

    monkeypatch.setattr("stumpcheck.numerics.corpus.empirical.loss_and_gradient", broken)
    monkeypatch.chdir(tmp_path)
    assert gd.MAX_STEPS >= 1
    line = _refused(["train", "--quiet", *SAMPLED, "--eta", "1", "--steps", "3", "--out", "run"], tmp_path, capsys)
    assert "cannot be evaluated" in line


# --- worker processes end with their parent, even inside a long C call


#: a parent whose two spawned workers each sit in one C call that holds the GIL (no Python thread can run)
GIL_PARENT = textwrap.dedent("""
    import multiprocessing, os, sys, time
    from pathlib import Path
    from stumpcheck.numerics.processes import parent_watching_pool

    def busy(folder):
        Path(folder, str(os.getpid())).write_text("")
        return sum(range(10 ** 13))

    if __name__ == "__main__":
        with parent_watching_pool(2, mp_context=multiprocessing.get_context("spawn")) as pool:
            futures = [pool.submit(busy, sys.argv[1]) for _ in range(2)]
            from multiprocessing import resource_tracker
            Path(sys.argv[1], "tracker").write_text(str(resource_tracker._resource_tracker._pid))
            if sys.argv[2] == "interrupt":
                while len([p for p in Path(sys.argv[1]).iterdir() if p.name.isdigit()]) < 2:
                    time.sleep(0.05)
                raise KeyboardInterrupt
            time.sleep(600)
""")


from tests.test_processes import _alive  # noqa: E402  (one reading of /proc for both kill tests)


def _start_parent(tmp_path: Path, mode: str):
    source = tmp_path / "parent.py"
    source.write_text(GIL_PARENT)
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    parent = subprocess.Popen([sys.executable, str(source), str(tmp_path), mode], cwd=tmp_path, env=env,
                              stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    deadline = time.monotonic() + 300  # a hang guard: the loop waits for the workers' files
    while time.monotonic() < deadline:
        pids = [int(p.name) for p in tmp_path.iterdir() if p.name.isdigit()]
        if len(pids) >= 2 and (tmp_path / "tracker").exists():
            return parent, pids, int((tmp_path / "tracker").read_text())
        if parent.poll() is not None and mode != "interrupt":
            pytest.fail(f"the parent exited early: {parent.stderr.read().decode()[-2000:]}")
        time.sleep(0.05)
    parent.kill()
    pytest.fail("the workers did not start within 300 s")


def _gone_within(pids, seconds: float) -> list[int]:
    deadline = time.monotonic() + seconds
    while any(_alive(pid) for pid in pids) and time.monotonic() < deadline:
        time.sleep(0.05)
    left = [pid for pid in pids if _alive(pid)]
    for pid in left:  # clean up before failing
        os.kill(pid, signal.SIGKILL)
    return left


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the kernel's parent-death signal is Linux's")
def test_kill_9_of_the_parent_ends_workers_busy_in_c_within_2_seconds(tmp_path):
    """`flow --certified`'s workers sit in Arb calls; after kill -9 they computed on for 5-9 s and their resource
    tracker lived on. A polling thread cannot run while a C call holds the GIL; the kernel's signal can."""
    parent, pids, tracker = _start_parent(tmp_path, "kill")
    try:
        assert all(_alive(pid) for pid in pids)
        parent.send_signal(signal.SIGKILL)
        parent.wait(10)
        assert not _gone_within(pids, 2.0), "workers outlived their SIGKILLed parent by more than 2 s"
        assert not _gone_within([tracker], 3.0), "the resource tracker outlived the workers"
    finally:
        if parent.poll() is None:
            parent.kill()
            parent.wait(10)


def test_an_exception_in_the_pool_block_terminates_busy_workers_at_once(tmp_path):
    """Ctrl-C (KeyboardInterrupt) inside `with parent_watching_pool(...)` does not wait for the running tasks."""
    parent, pids, _ = _start_parent(tmp_path, "interrupt")
    try:
        parent.wait(300)  # the workers' sums take hours: a parent that waited for them does not end in time
    except subprocess.TimeoutExpired:
        pass
    try:
        assert parent.poll() is not None, "the parent waited for its busy workers after KeyboardInterrupt"
        assert not _gone_within(pids, 2.0)
    finally:
        if parent.poll() is None:
            parent.kill()
            parent.wait(10)


def test_certified_tube_runs_its_pieces_on_a_parent_watching_pool():
    """The tube's local pool (flow --certified) is the scheduler's parent-watching one (the kill -9 test above
    covers its workers)."""
    tube = (REPO / "numerics" / "certified" / "tube" / "workers.py").read_text(encoding="utf-8")
    scheduling = (REPO / "numerics" / "scheduling.py").read_text(encoding="utf-8")
    assert "for_workers(" in tube and "ProcessPoolExecutor(" not in tube
    assert "parent_watching_pool(" in scheduling and "ProcessPoolExecutor(" not in scheduling


# --- progress bars only on a terminal

def test_fraction_bar_draws_nothing_into_a_stderr_that_is_not_a_terminal(capsys):
    """`recheck` of a flow certificate wrote its tube bar (carriage returns and all) into a redirected stderr."""
    from stumpcheck.progress import fraction_bar, progress_bar

    with fraction_bar("re-checking") as progress:
        progress(0.5)
        progress(1.0)
    bar = progress_bar(total=10, desc="GD steps")
    bar.update(10)
    bar.close()
    assert capsys.readouterr().err == ""


@pytest.mark.skipif(sys.platform == "win32", reason="pseudo-terminals")
def test_bars_are_drawn_on_a_terminal(tmp_path):
    import fcntl
    import pty
    import struct
    import termios

    master, slave = pty.openpty()
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 24, 100, 0, 0))
    code = ("from stumpcheck.progress import fraction_bar\n"
            "with fraction_bar('re-checking') as progress:\n    progress(0.5)\n")
    child = subprocess.Popen([sys.executable, "-c", code], env={**os.environ, "PYTHONPATH": str(REPO)},
                             stderr=slave, stdout=subprocess.DEVNULL)
    os.close(slave)
    shown = b""
    try:
        child.wait(60)
        while True:
            try:
                chunk = os.read(master, 4096)
            except OSError:
                break
            if not chunk:
                break
            shown += chunk
    finally:
        os.close(master)
    assert b"re-checking" in shown and b"%|" in shown


@pytest.mark.slow
def test_recheck_of_a_flow_certificate_keeps_a_piped_stderr_clean(tmp_path):
    """The whole command, stderr a pipe: PASS on stdout, nothing on stderr (was 279 bytes of bar redraws)."""
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    done = subprocess.run([sys.executable, "-m", "stumpcheck", "recheck", str(REPO / "tests" / "flow_certificate_v1.json")],
                          cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0 and done.stdout.startswith("PASS"), done.stderr[-2000:]
    assert done.stderr == ""


# --- sweep: Ctrl-C says how to resume, and exits promptly

def test_ctrl_c_in_sweep_says_the_same_command_resumes(tmp_path):
    """SIGINT to the process group (a terminal's Ctrl-C) once a cell is stored: exit 130 within seconds, and one
    line saying that the same command resumes (there was none)."""
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    argv = [sys.executable, "-m", "stumpcheck", "sweep", "--quiet", "--m", "8", "--n", "8", "--N", "16",
            "--seeds", "0,1,2,3,4,5,6,7,8,9,10,11", "--reps", "200000", "--workers", "2", "--out", "sw"]
    child = subprocess.Popen(argv, cwd=tmp_path, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                             text=True, start_new_session=True)
    store = tmp_path / "sw" / "sweep.jsonl"
    try:
        deadline = time.monotonic() + 300
        while not (store.exists() and store.read_text().count("\n") >= 1) and time.monotonic() < deadline:
            assert child.poll() is None, child.stderr.read()[-2000:]
            time.sleep(0.1)
        assert store.exists(), "no cell finished within 300 s"
        start = time.monotonic()
        os.killpg(child.pid, signal.SIGINT)
        out, err = child.communicate(timeout=300)
        seconds = time.monotonic() - start
    finally:
        if child.poll() is None:
            os.killpg(child.pid, signal.SIGKILL)
            child.wait(10)
    assert child.returncode == 130, err[-2000:]
    assert seconds < 60, f"took {seconds:.1f} s to stop"  # about a second unloaded; a wide margin for load
    assert "Traceback" not in err
    hints = [line for line in err.splitlines() if "same command" in line]
    assert len(hints) == 1 and "resume" in hints[0] and "sweep.jsonl" in hints[0], err
    assert len(err.strip().splitlines()) == 1, err  # the hint is the one line


# --- C6's k: one value, to the digits its interval supports, in the text, the plot title and the JSON

def test_interval_decimals():
    from stumpcheck.claims.c6_fit import DEFAULT_DECIMALS, interval_decimals

    assert interval_decimals([1.5, 2.1]) == 1          # half-width 0.3
    assert interval_decimals([1.70, 1.80]) == 2        # 0.05
    assert interval_decimals([0.0, 6.0]) == 0          # 3
    assert interval_decimals([float("nan"), 1.0]) == DEFAULT_DECIMALS
    assert interval_decimals([1.0, 1.0]) == DEFAULT_DECIMALS


def test_c6_k_is_one_value_in_text_plot_and_json(monkeypatch, tmp_path):
    """k read 1.76 in the text, 1.8 in the plot title and 1.763... in the JSON."""
    import re

    from stumpcheck.claims import c6
    from stumpcheck.claims.c6_plots import rates_title
    from tests.test_claim_c6 import NS, _synthetic_cell

    monkeypatch.setitem(c6.C6_SETTINGS, "quick", dict(c6.C6_SETTINGS["quick"], sizes=(64, 128, 256, 512),
                                                      mechanism_sizes=(64, 128, 256, 512), control_sizes=(64, 128),
                                                      reps=4, bootstrap=20, N=tuple(int(N) for N in NS[::3])))
    monkeypatch.setattr(c6, "c6_cell", _synthetic_cell(1.0))
    monkeypatch.setattr("stumpcheck.claims.c6_controls.FIXED_SCALES", (32.0,))
    titles = []
    monkeypatch.setattr("stumpcheck.claims.c6_plots.rates_title",
                        lambda row, fit: titles.append(rates_title(row, fit)) or titles[-1])
    result = c6.check_c6(quick=True, seed=0, out_dir=tmp_path, workers=1)
    for key, row in (("power_mean_fit", "large-resolution"), ("mechanism_fit", "mechanism")):
        fit = result.details[key]
        decimals = fit["k_decimals"]
        assert fit["k"] == round(fit["k"], decimals) and abs(fit["k"] - fit["k_fit"]) <= 0.5 * 10 ** -decimals
        shown = f"{fit['k']:.{decimals}f}"
        in_text = re.search(rf"{row} \([^)]*\): p = [^;]*?k = ([0-9.]+) \[", result.figure).group(1)  # "(its values' source)"
        in_title = re.search(r"k = ([0-9.]+) ", [t for t in titles if t.startswith(row)][0]).group(1)
        assert in_text == in_title == shown, (in_text, in_title, shown)
        assert f"k = {shown}" in result.details["explanation"] or f"and {shown})" in result.details["explanation"]
