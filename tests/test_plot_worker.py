"""The forked plotting process of ``stumpcheck flow --out`` (numerics/flow/plot_worker.py)."""

from __future__ import annotations

import sys

import pytest

from stumpcheck.numerics.flow.plot_worker import PlotWorker
from stumpcheck.numerics.flow.report import FLOW_PANELS, draw_flow_plots


@pytest.fixture(scope="module")
def run():
    from stumpcheck.numerics.flow.population_flow import run_population_flow

    return run_population_flow(10.0, 10.0, 1e4, check=False)


def test_the_worker_draws_the_same_files_as_this_process(run, tmp_path):
    (tmp_path / "here").mkdir()
    (tmp_path / "child").mkdir()
    here = draw_flow_plots(run, tmp_path / "here")
    with PlotWorker() as worker:
        if sys.platform.startswith("linux"):
            assert worker._process is not None and worker._process.is_alive()
        child = worker.draw(run, tmp_path / "child")
    assert [p.name for p in child] == [p.name for p in here] == [f"{name}.png" for name in FLOW_PANELS]
    assert all(a.read_bytes() == b.read_bytes() for a, b in zip(here, child))


def test_an_error_in_the_child_is_the_callers_error(run, tmp_path):
    with PlotWorker() as worker, pytest.raises((RuntimeError, OSError), match="No such file|plots"):
        worker.draw(run, tmp_path / "missing" / "folder")


def test_a_worker_left_unused_stops(tmp_path):
    worker = PlotWorker()
    process = worker._process
    with worker:
        pass
    assert process is None or not process.is_alive()
