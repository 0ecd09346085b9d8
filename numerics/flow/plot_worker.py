"""The PNG plots of ``stumpcheck flow --out`` drawn in a forked process that imports matplotlib during the flow.

After a flow to 10¹² (about 1.2 s on the 2-core machine) the four plots cost about 0.33 s of importing
matplotlib and 0.2 s of drawing and saving. :class:`PlotWorker` forks a child when the command starts; the
child imports matplotlib at once, while the parent computes the flow, then waits for the finished run, draws
and saves the files (:func:`~stumpcheck.numerics.flow.report.draw_flow_plots`) and sends back their paths. The
parent waits for it, so the files exist when the command ends, and an error in the child comes back as an
error of the command. Where ``fork`` is not available (Windows; macOS, where it is unsafe for some system
libraries and not Python's default) the plots are drawn in the parent, as without a worker.

The child ends with the command, however it ends (:func:`stumpcheck.numerics.processes.watch_parent`: the
kernel's parent-death signal, a thread polling the parent id). It ignores Ctrl-C, which is the parent's to
handle (it is started with SIGINT held back, so that not even its first instructions get a KeyboardInterrupt);
a parent that leaves the worker without :meth:`PlotWorker.draw` (an error, Ctrl-C) kills it at once.
"""

from __future__ import annotations

import multiprocessing
import os
import sys
from pathlib import Path

from stumpcheck.numerics.processes import (ignore_interrupts, interrupts_deferred, started_by_main_thread,
                                           watch_parent)

__all__ = ["PlotWorker"]


class PlotWorker:
    """A forked child that draws a flow's plots (module doc). Use as a context manager: leaving it without
    :meth:`draw` stops the child."""

    def __init__(self) -> None:
        self._process = None
        if not sys.platform.startswith("linux"):
            return
        context = multiprocessing.get_context("fork")
        self._connection, child_end = context.Pipe()
        self._process = context.Process(target=_serve, daemon=True, name="stumpcheck-plots",
                                        args=(child_end, self._connection, os.getpid(), started_by_main_thread()))
        with interrupts_deferred():
            self._process.start()
        child_end.close()

    def draw(self, run, out_dir) -> list[Path]:
        """Draw and save the plots of ``run`` into ``out_dir``; their paths (in the child when there is one)."""
        from stumpcheck.numerics.flow.report import draw_flow_plots

        if self._process is None or not self._process.is_alive():
            return draw_flow_plots(run, out_dir)
        self._connection.send((run, str(out_dir)))
        try:
            status, payload = self._connection.recv()
        except EOFError:
            self._process.join(5)
            status, payload = "error", f"the plotting process ended with status {self._process.exitcode}"
        self._stop(drawn=True)
        if status != "ok":
            raise RuntimeError(f"drawing the plots failed: {payload}")
        return [Path(p) for p in payload]

    def _stop(self, drawn: bool = False) -> None:
        """End the child: after :meth:`draw` it is exiting (it is waited for); otherwise it has nothing left
        to do, and is killed without waiting for its import of matplotlib."""
        if self._process is None:
            return
        if drawn:
            self._process.join(timeout=10)
        if self._process.is_alive():
            self._process.kill()
            self._process.join()
        self._connection.close()
        self._process = None

    def __enter__(self) -> PlotWorker:
        return self

    def __exit__(self, *exc) -> None:
        self._stop()


def _serve(connection, parent_end, parent_pid: int, kernel_signal: bool) -> None:
    """The child: import matplotlib, then draw the one job it is sent (None or the parent's end: nothing to
    draw)."""
    watch_parent(parent_pid, kernel_signal=kernel_signal)
    ignore_interrupts()  # Ctrl-C is the parent's to handle; it stops this child
    parent_end.close()  # the parent's end, inherited by the fork: closed, so that its end is this child's EOF
    from stumpcheck.numerics.flow.report import draw_flow_plots
    from stumpcheck.numerics.plotting import pyplot

    pyplot()
    try:
        job = connection.recv()
    except EOFError:
        return
    if job is None:
        return
    run, out_dir = job
    try:
        connection.send(("ok", [str(p) for p in draw_flow_plots(run, out_dir)]))
    except Exception as exc:  # sent to the parent, which raises it as the command's error
        connection.send(("error", f"{type(exc).__name__}: {exc}"))
