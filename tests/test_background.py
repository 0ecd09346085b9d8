"""Work verify starts ahead in two worker processes (stumpcheck/claims/background.py) and the order of
verify's entries when it does (stumpcheck/cli/verify.py)."""

from __future__ import annotations

import time
from pathlib import Path
from types import SimpleNamespace

import click
import pytest

from stumpcheck.claims import background


def _fail(message: str):
    raise ArithmeticError(message)


def test_take_without_start_computes_here():
    assert not background.started(("nothing",))
    assert background.take(("nothing",), pow, 2, 5) == 32


def test_started_work_is_collected_once_and_the_pool_ends():
    background.start([(("a",), pow, (2, 10)), (("b",), _fail, ("from the worker",))])
    try:
        assert background.started(("a",)) and background.started(("b",))
        assert background.take(("a",), pow, 3, 3) == 1024  # the worker's result, not the fallback's
        assert not background.started(("a",))
        with pytest.raises(ArithmeticError, match="from the worker"):
            background.take(("b",), pow, 1, 1)
        assert background._STATE == {}  # everything collected: the pool is gone
    finally:
        background.stop()


def test_stop_does_not_wait_for_running_work():
    background.start([(("sleep",), time.sleep, (60,))])
    time.sleep(0.5)
    started = time.perf_counter()
    background.stop()
    assert time.perf_counter() - started < 10
    assert not background.started(("sleep",))


def _plan(*names):
    return [(None, SimpleNamespace(name=name)) for name in names]


def test_verify_runs_c2_to_c4_last_and_starts_their_work(monkeypatch, tmp_path):
    from stumpcheck.cli import verify

    submitted = []
    monkeypatch.setattr(background, "start", lambda tasks, **_: submitted.extend(tasks))
    plan = _plan("C1", "C2", "C3", "C4", "C6", "C7", "C8", "bulk_error")
    with click.Context(click.Command("verify")):
        order = verify._order(plan, True, True, seed=3, out=tmp_path)
    assert [plan[i][1].name for i in order] == ["C1", "bulk_error", "C6", "C7", "C8", "C2", "C3", "C4"]
    keys = [key for key, _, _ in submitted]
    assert keys[0] == ("C6", True, 3, str(Path(tmp_path) / "c6_sweep.jsonl"))  # needed first
    assert ("C2", "region") in keys and ("C2", "tube") in keys
    assert [k[:2] for k in keys if k[0] in ("C7", "C8")] == [("C7", "one-head"), ("C8", "pooled"), ("C8", "averaged")]
    # --full: C5's intervals and C6's sweep too (C2 proves anew in the run); C7 and C8 read the full grid
    submitted.clear()
    with click.Context(click.Command("verify")):
        order = verify._order(_plan("C1", "C2", "C5", "C6", "C7"), False, True, seed=0, out=tmp_path)
    assert order == [0, 1, 2, 3, 4]
    keys = [key for key, _, _ in submitted]
    assert keys[:2] == [("C6", False, 0, str(Path(tmp_path) / "c6_sweep.jsonl")), ("C5", False, 0, str(tmp_path))]
    assert keys[2][:2] == ("C7", "one-head") and len(keys[2][2]) == 9 and len(keys) == 3
    # a Dask scheduler or --workers 1 (background False), no --out, or nothing to start: plan order
    submitted.clear()
    with click.Context(click.Command("verify")):
        assert verify._order(plan, True, False, out=tmp_path) == list(range(len(plan)))
        assert verify._order(plan, True, True, out=None) == list(range(len(plan)))
        assert verify._order(_plan("C1", "C9"), True, True, out=tmp_path) == [0, 1]
    assert submitted == []
