"""The sweep engine: store, resume, truncated lines, local pool and Dask LocalCluster."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from stumpcheck.numerics.precision import InputError
from stumpcheck.numerics.corpus.sweep import SCHEDULER_ENV, cell_key, load_store, run_sweep


def square_cell(cell: dict) -> dict:
    """A cheap cell: records its own call in a log file (one line per call) and squares x."""
    log = cell.get("log")
    if log:
        with open(log, "a", encoding="utf-8") as handle:
            handle.write(json.dumps(cell["x"]) + "\n")
    return {"square": cell["x"] ** 2, "pid": os.getpid()}


def _cells(tmp_path: Path, count: int) -> list[dict]:
    return [{"x": i, "log": str(tmp_path / "calls.log")} for i in range(count)]


def _calls(tmp_path: Path) -> list[int]:
    path = tmp_path / "calls.log"
    return [json.loads(line) for line in path.read_text().splitlines()] if path.exists() else []


class _Stop(Exception):
    pass


def _stop_after(k):
    def progress(record, finished, total):
        if finished >= k:
            raise _Stop
    return progress


@pytest.fixture(autouse=True)
def _no_env_scheduler(monkeypatch):
    monkeypatch.delenv(SCHEDULER_ENV, raising=False)


def test_cell_key_is_stable_and_order_free():
    assert cell_key({"m": 64, "n": 128, "seed": 0}) == cell_key({"seed": 0, "n": 128, "m": 64})
    assert cell_key({"m": 64}) != cell_key({"m": 65})
    assert len(cell_key({"m": 64})) == 20
    with pytest.raises(InputError):
        cell_key({"x": float("nan")})
    with pytest.raises(InputError):
        cell_key([1, 2])


def test_in_process_sweep_stores_each_cell_and_resumes(tmp_path):
    store = tmp_path / "store.jsonl"
    cells = _cells(tmp_path, 6)
    with pytest.raises(_Stop):
        run_sweep(square_cell, cells, store=store, workers=1, progress=_stop_after(2))
    assert len(load_store(store)) == 2
    assert _calls(tmp_path) == [0, 1]
    records = run_sweep(square_cell, cells, store=store, workers=1)
    assert _calls(tmp_path) == [0, 1, 2, 3, 4, 5]  # the rerun did only the rest
    assert [r["result"]["square"] for r in records] == [i * i for i in range(6)]
    assert [r["cell"]["x"] for r in records] == list(range(6))
    run_sweep(square_cell, cells, store=store, workers=1)
    assert len(_calls(tmp_path)) == 6  # nothing left to do


def test_duplicate_cells_run_once(tmp_path):
    cells = _cells(tmp_path, 2) * 2
    records = run_sweep(square_cell, cells, store=tmp_path / "s.jsonl", workers=1)
    assert len(records) == 4 and len(_calls(tmp_path)) == 2


def test_truncated_last_line_is_dropped_and_redone(tmp_path):
    store = tmp_path / "store.jsonl"
    cells = _cells(tmp_path, 3)
    run_sweep(square_cell, cells[:2], store=store, workers=1)
    text = store.read_text()
    store.write_text(text[: len(text) - 15])  # cut the second record mid-write
    assert list(load_store(store)) == [cell_key(cells[0])]
    assert store.read_text().endswith("\n")
    records = run_sweep(square_cell, cells, store=store, workers=1)
    assert [r["result"]["square"] for r in records] == [0, 1, 4]
    assert _calls(tmp_path) == [0, 1, 1, 2]
    assert len(store.read_text().splitlines()) == 3


def test_corrupt_middle_line_is_an_input_error(tmp_path):
    store = tmp_path / "store.jsonl"
    run_sweep(square_cell, _cells(tmp_path, 2), store=store, workers=1)
    lines = store.read_text().splitlines()
    store.write_text("\n".join([lines[0], "{not json", lines[1]]) + "\n")
    with pytest.raises(InputError, match="line 2"):
        load_store(store)


def test_bad_arguments(tmp_path):
    with pytest.raises(InputError):
        run_sweep(square_cell, _cells(tmp_path, 1), store=tmp_path / "s.jsonl", workers=0)
    with pytest.raises(InputError):
        run_sweep(square_cell, "cells", store=tmp_path / "s.jsonl")
    with pytest.raises(InputError):
        run_sweep(square_cell, _cells(tmp_path, 1), store=tmp_path)  # a directory


def test_process_pool_sweep(tmp_path):
    store = tmp_path / "store.jsonl"
    records = run_sweep(square_cell, _cells(tmp_path, 4), store=store, workers=2)
    assert [r["result"]["square"] for r in records] == [0, 1, 4, 9]
    assert all(r["backend"] == "process-pool(2)" for r in records)
    assert {r["result"]["pid"] for r in records} != {os.getpid()}
    assert sorted(_calls(tmp_path)) == [0, 1, 2, 3]


def test_dask_requested_without_dask_is_input_error(tmp_path, monkeypatch):
    import builtins

    real_import = builtins.__import__

    def fake_import(name, *args, **kwargs):
        if name.startswith("dask"):
            raise ImportError(name)
        return real_import(name, *args, **kwargs)

    monkeypatch.setattr(builtins, "__import__", fake_import)
    with pytest.raises(InputError, match="not installed"):
        run_sweep(square_cell, _cells(tmp_path, 1), store=tmp_path / "s.jsonl", scheduler="tcp://127.0.0.1:1")
    monkeypatch.setenv(SCHEDULER_ENV, "tcp://127.0.0.1:1")
    with pytest.raises(InputError, match="not installed"):
        run_sweep(square_cell, _cells(tmp_path, 1), store=tmp_path / "s.jsonl")


def test_dask_local_cluster_sweep_with_resume(tmp_path, monkeypatch):
    distributed = pytest.importorskip("dask.distributed")
    store = tmp_path / "store.jsonl"
    cells = _cells(tmp_path, 6)
    with distributed.LocalCluster(n_workers=2, processes=False, threads_per_worker=1, dashboard_address=None) as cluster:
        address = cluster.scheduler_address
        with pytest.raises(_Stop):
            run_sweep(square_cell, cells, store=store, scheduler=address, progress=_stop_after(2))
        first = load_store(store)
        assert len(first) >= 2
        ran_before = len(_calls(tmp_path))
        monkeypatch.setenv(SCHEDULER_ENV, address)  # the environment variable selects Dask too
        records = run_sweep(square_cell, cells, store=store)
    assert [r["result"]["square"] for r in records] == [i * i for i in range(6)]
    assert all(r["backend"] == "dask" for r in records)
    redone = _calls(tmp_path)[ran_before:]
    assert not set(redone) & {r["cell"]["x"] for r in first.values()}  # stored cells were not redone
    assert sorted(set(_calls(tmp_path))) == list(range(6))


# ---------------------------------------------------------------- the `stumpcheck sweep` command

def _cli(argv, capsys):
    from stumpcheck.cli.commands import main

    status = main(argv)
    captured = capsys.readouterr()
    return status, captured.out, captured.err


def test_sweep_command_runs_and_resumes(tmp_path, capsys):
    out = tmp_path / "run"
    args = ["sweep", "--m", "16", "--n", "16", "--N", "8,32", "--reps", "16", "--k-max", "1", "--step-cap", "5",
            "--out", str(out), "--workers", "1", "--quiet"]
    status, text, _ = _cli(args + ["--seeds", "0"], capsys)
    assert status == 0, text
    assert "horizon rule" in text and "1 cells" in text
    status, text, _ = _cli(args + ["--seeds", "0,1"], capsys)
    assert status == 0 and "2 cells" in text
    store = [json.loads(line) for line in (out / "sweep.jsonl").read_text().splitlines()]
    assert [r["cell"]["seed"] for r in store] == [0, 1]  # the second run did only seed 1
    summary = json.loads((out / "summary.json").read_text())
    assert [c["seed"] for c in summary["cells"]] == [0, 1]
    assert set(summary["cells"][0]["interior_error_by_N"]) == {"8", "32"}


def test_sweep_command_grid_file(tmp_path, capsys):
    grid = tmp_path / "grid.json"
    grid.write_text(json.dumps({"m": [16], "n": [16], "seeds": [2], "N": [8], "reps": 16, "k_max": 1}))
    status, text, _ = _cli(["sweep", "--grid", str(grid), "--out", str(tmp_path / "o"), "--workers", "1",
                            "--quiet"], capsys)
    assert status == 0 and "1 cells" in text


@pytest.mark.parametrize("extra", [
    [],  # neither --grid nor --m/--n/--N
    ["--m", "16", "--n", "16"],
    ["--m", "16", "--n", "16", "--N", "0"],
    ["--m", "4", "--n", "16", "--N", "8"],
    ["--m", "16", "--n", "16", "--N", "8", "--workers", "0"],
    ["--m", "16", "--n", "16", "--N", "8", "--seeds", "a"],
    ["--grid", "/nonexistent/grid.json"],
])
def test_sweep_command_bad_input_exits_2(extra, tmp_path, capsys):
    status, _, err = _cli(["sweep", "--out", str(tmp_path / "o"), "--quiet", *extra], capsys)
    assert status == 2, err
    assert err.count("\n") == 1 and err.startswith("stumpcheck: error:")


def test_sweep_command_bad_grid_files(tmp_path, capsys):
    for content in ("{not json", json.dumps({"m": [16]}), json.dumps([{"m": 16}]), json.dumps({"m": [16], "n": [16],
                    "seeds": [0], "N": [8], "colour": 1}), json.dumps([])):
        grid = tmp_path / "grid.json"
        grid.write_text(content)
        status, _, err = _cli(["sweep", "--grid", str(grid), "--out", str(tmp_path / "o"), "--quiet"], capsys)
        assert status == 2, (content, err)
