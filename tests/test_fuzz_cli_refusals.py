"""Bad input the command line once mishandled, each refused now: exit 2 (or 1 for a failed check), one line on
stderr, no traceback, within :data:`CASE_SECONDS`, nothing left behind.

Each case was reproduced before its fix: an internal error (``interval --b-start 0``), a check after the
work (``flow --out`` whose ``flow.csv`` is a folder), a hang (a FIFO where a file is read or written,
``/dev/zero`` as a grid, a θ-integral whose switch layer lies 2^-5787 from θ = 1), an option accepted and
ignored (``eval --certified --method mpmath``, ``verify --timeout`` without ``--lemma``, ``train
--within-interval`` with another estimator, ``region --recheck`` with ``--b-min``), a progress line before a
refusal, digits that are not ASCII. The cases that could hang run in a child process with a timeout; the
others in this process, as tests/test_fuzz_cli.py does.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from stumpcheck.cli.commands import MAX_ERROR_LINE, main

CASE_SECONDS = 30.0
REPO = Path(__file__).resolve().parent.parent

EXITS = '''
from hypothesis import strategies as st
from stumpcheck.lemmas import lemma

@lemma(name="exits", statement="exits", domain={"x": st.floats(0, 1)}, max_examples=5)
def exits(x):
    raise SystemExit(3)
'''


@pytest.fixture
def work(tmp_path, monkeypatch):
    folder = tmp_path / "work"
    folder.mkdir()
    monkeypatch.chdir(folder)
    (folder / "plain-file").write_text("a file\n")
    (folder / "exits.py").write_text(EXITS)
    from stumpcheck.numerics.certified.region.invariant_region import DEFAULT_REGION

    (folder / "region.json").write_text(json.dumps({"format": "stumpcheck-region-certificate/1",
                                                    "region": DEFAULT_REGION.to_json(), "obligations": {}}))
    (folder / "unknown.json").write_text(json.dumps({"format": "stumpcheck-lemma-certificate/9", "dps": 30}))
    return folder


def _snapshot(folder: Path) -> set:
    """The paths under ``folder`` (a writability probe may touch a folder's mtime; it must leave no path)."""
    return {str(p) for p in folder.rglob("*")}


def _one_line(err: str, fragment: str) -> None:
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("stumpcheck: error: "), err[-2000:]
    assert len(lines[0]) <= MAX_ERROR_LINE and fragment in lines[0], lines[0]
    assert "Traceback" not in err and "internal error" not in err


def _prepare(name: str, folder: Path) -> None:
    """The files a case needs besides the fixture's."""
    if name == "flow-out-csv-is-a-folder":
        (folder / "o" / "flow.csv").mkdir(parents=True)
    elif name == "flow-certified-checkpoint-is-a-folder":
        (folder / "t" / "tube_checkpoint.jsonl").mkdir(parents=True)
    elif name == "verify-results-json-is-a-folder":
        (folder / "rep" / "results.json").mkdir(parents=True)


IN_PROCESS = [
    ("interval-b-start-0", ["interval", "--m", "8", "--n", "8", "--b-start", "0", "--out", "iv"], 2,
     "--b-start must lie in [1, 65536), got '0'"),
    ("interval-b-start-negative", ["interval", "--m", "8", "--n", "8", "--b-start=-1", "--out", "iv"], 2,
     "--b-start must lie in [1, 65536)"),
    ("interval-b-start-1e999", ["interval", "--m", "8", "--n", "8", "--b-start", "1e999", "--out", "iv"], 2,
     "--b-start must lie in [1, 65536)"),
    ("flow-out-csv-is-a-folder", ["flow", "--quiet", "--t-max", "10", "--out", "o"], 2,
     "cannot write o/flow.csv: it is a directory"),
    ("flow-certified-checkpoint-is-a-folder", ["flow", "--certified", "--quiet", "--t-max", "0.05", "--out", "t"], 2,
     "cannot write t/tube_checkpoint.jsonl: it is a directory"),
    ("sweep-grid-dev-zero", ["sweep", "--quiet", "--grid", "/dev/zero", "--out", "sw"], 2,
     "--grid: cannot read /dev/zero: it is a device"),
    ("eval-grad-switch-beyond-resolution", ["eval", "grad", "--a", "1e9", "--b", "1e8", "--dps", "15"], 2,
     "softmax switch at 1 − θ* >= 2^-1000"),
    ("eval-certified-method", ["eval", "loss", "--a", "1", "--b", "1", "--certified", "--method", "mpmath"], 2,
     "--method mpmath does nothing with --certified"),
    ("eval-dps-full-width", ["eval", "loss", "--a", "1", "--b", "1", "--dps", "３０"], 2,
     "precision must be an integer number of digits"),
    ("eval-a-full-width", ["eval", "loss", "--a", "１", "--b", "1"], 2, "ASCII digits"),
    ("corpus-m-full-width", ["corpus", "make", "--m", "４", "--n", "3", "--seed", "1", "--out", "c.npz"], 2, "ASCII digits"),
    ("verify-timeout-without-lemma", ["verify", "--only", "C3", "--timeout", "5", "--out", "rep"], 2,
     "--timeout limits the --lemma checks only"),
    ("verify-results-json-is-a-folder", ["verify", "--only", "C3", "--out", "rep"], 2,
     "cannot write rep/results.json: it is a directory"),
    ("verify-lemma-refusal-is-one-line", ["verify", "--lemma", "exits.py:exits", "--out", "rep2"], 2,
     "called sys.exit(3)"),
    ("export-names-unknown", ["export", "--format", "tex", "--names", "bogus", "--out", "ex"], 2,
     "unknown result 'bogus'"),
    ("train-within-interval-pooled", ["train", "--quiet", "--m", "8", "--n", "8", "--seed", "0", "--within-interval", "plain-file",
                                      "--estimator", "pooled", "--out", "run"], 2,
     "--within-interval certifies GD on the one-head corpus loss"),
    ("region-recheck-b-min", ["region", "--recheck", "region.json", "--b-min", "40"], 1, None),
    ("region-recheck-out", ["region", "--recheck", "region.json", "--out", "elsewhere"], 2,
     "--out does nothing with --recheck"),
    ("recheck-unknown-format", ["recheck", "unknown.json"], 2,
     "unknown certificate format 'stumpcheck-lemma-certificate/9'; known: stumpcheck-KIND-certificate/N for lemma/1,2 flow/1,2,3 "),
]


@pytest.mark.parametrize("name, argv, status, fragment", IN_PROCESS, ids=[c[0] for c in IN_PROCESS])
def test_refused_in_one_line_before_any_work(name, argv, status, fragment, work, capsys):
    _prepare(name, work)
    before = _snapshot(work)
    started = time.perf_counter()
    got = main(argv)
    seconds = time.perf_counter() - started
    out, err = capsys.readouterr()
    assert got == status, f"exit {got}; stderr {err[-600:]}; stdout {out[-600:]}"
    assert seconds < CASE_SECONDS, f"took {seconds:.1f} s"
    if status == 2:
        _one_line(err, fragment)
        assert _snapshot(work) == before, "a refused request left files behind"
    else:
        assert out.startswith("FAIL region.json: the certificate proves b_start = 30, not the asked --b-min 40"), out


# ---------------------------------------------------------------- FIFOs: in a child, with a timeout


def _fifo_case(name: str, folder: Path) -> list:
    if name == "sweep-grid-fifo":
        os.mkfifo(folder / "grid.json")
        return ["sweep", "--quiet", "--grid", "grid.json", "--out", "sw"]
    if name == "corpus-make-out-fifo":
        os.mkfifo(folder / "c.npz")
        return ["corpus", "make", "--m", "4", "--n", "3", "--seed", "1", "--out", "c.npz"]
    if name == "train-trajectory-fifo":
        (folder / "run").mkdir()
        os.mkfifo(folder / "run" / "trajectory.csv")
        return ["train", "--quiet", "--m", "8", "--n", "8", "--seed", "0", "--out", "run"]
    if name == "flow-certified-checkpoint-fifo":
        (folder / "t").mkdir()
        os.mkfifo(folder / "t" / "tube_checkpoint.jsonl")
        return ["flow", "--certified", "--quiet", "--t-max", "0.05", "--out", "t"]
    raise AssertionError(name)


FIFOS = [("sweep-grid-fifo", "--grid: cannot read grid.json: it is a FIFO"),
         ("corpus-make-out-fifo", "cannot write c.npz: it is a FIFO"),
         ("train-trajectory-fifo", "cannot write run/trajectory.csv: it is a FIFO"),
         ("flow-certified-checkpoint-fifo", "cannot write t/tube_checkpoint.jsonl: it is a FIFO")]


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no FIFOs on this system")
@pytest.mark.parametrize("name, fragment", FIFOS, ids=[c[0] for c in FIFOS])
def test_a_fifo_is_refused_not_opened(name, fragment, tmp_path):
    argv = _fifo_case(name, tmp_path)
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    started = time.perf_counter()
    done = subprocess.run([sys.executable, "-m", "stumpcheck", *argv], cwd=tmp_path, env=env, capture_output=True,
                          text=True, timeout=90)
    assert done.returncode == 2, done.stderr[-2000:]
    _one_line(done.stderr, fragment)
    assert time.perf_counter() - started < 60  # a child's imports included


def test_a_trajectory_part_that_is_a_fifo_is_refused_on_resume(tmp_path):
    from stumpcheck.numerics.corpus.checkpoint import _read_part
    from stumpcheck.numerics.precision import InputError

    os.mkfifo(tmp_path / "trajectory-000000000000.npz")
    with pytest.raises(InputError, match="it is a FIFO"):
        _read_part(tmp_path, "trajectory-000000000000.npz", 0, 3)


# ---------------------------------------------------------------- export writes whole files or none


def test_an_interrupted_export_leaves_no_partial_file(tmp_path, monkeypatch):
    from stumpcheck.theory import export as export_module

    target = tmp_path / "population_numpy.py"

    def interrupted(source, destination):
        raise KeyboardInterrupt  # killed between writing the text and putting it in place

    monkeypatch.setattr(os, "replace", interrupted)
    with pytest.raises(KeyboardInterrupt):
        export_module._atomic_write(target, "x = 1\n" * 100_000)
    assert list(tmp_path.iterdir()) == []  # neither the file nor its temporary part
    monkeypatch.undo()
    export_module._atomic_write(target, "x = 1\n")
    assert target.read_text() == "x = 1\n" and [p.name for p in tmp_path.iterdir()] == ["population_numpy.py"]


def test_the_catalogue_names_are_known_without_deriving():
    from stumpcheck.theory.catalogue import NAMES, results

    assert tuple(r.name for r in results()) == NAMES


# ---------------------------------------------------------------- sweep --scheduler local, as every command


@pytest.mark.slow
def test_sweep_accepts_a_local_dask_cluster(tmp_path):
    pytest.importorskip("dask.distributed")
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    done = subprocess.run([sys.executable, "-m", "stumpcheck", "sweep", "--quiet", "--m", "8", "--n", "8", "--N", "16",
                           "--scheduler", "local", "--workers", "1", "--out", "sw"], cwd=tmp_path, env=env,
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    record = json.loads((tmp_path / "sw" / "sweep.jsonl").read_text().splitlines()[0])
    assert record["backend"] == "dask"
