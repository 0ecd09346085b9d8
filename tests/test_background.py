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
    assert [plan[i][1].name for i in order] == ["C1", "C6", "C7", "C8", "bulk_error", "C2", "C3", "C4"]
    keys = [key for key, _, _ in submitted]
    assert keys[0] == ("C6", True, 3, str(Path(tmp_path) / "c6_sweep.jsonl"))  # needed first
    assert ("C2", "region") in keys and ("C2", "tube") in keys
    assert [k[:2] for k in keys if k[0] in ("C7", "C8")] == [("C7", "one-head"), ("C8", "pooled"), ("C8", "averaged")]
    # --full, a Dask scheduler or --workers 1 (background False), or no C2-C4: nothing is started, plan order
    submitted.clear()
    with click.Context(click.Command("verify")):
        assert verify._order(plan, False, True) == list(range(len(plan)))
        assert verify._order(plan, True, False) == list(range(len(plan)))
        assert verify._order(_plan("C1", "C7"), True, True) == [0, 1]
    assert submitted == []
