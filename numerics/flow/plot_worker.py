"""The PNG plots of ``stumpcheck flow --out`` drawn in a forked process that imports matplotlib during the flow.

After a flow to 10¹² (about 1.2 s on the 2-core machine) the four plots cost about 0.33 s of importing
matplotlib and 0.2 s of drawing and saving. :class:`PlotWorker` forks a child when the command starts; the
child imports matplotlib at once, while the parent computes the flow, then waits for the finished run, draws
and saves the files (:func:`~stumpcheck.numerics.flow.report.draw_flow_plots`) and sends back their paths. The
parent waits for it, so the files exist when the command ends, and an error in the child comes back as an
error of the command. Where ``fork`` is not available (Windows; macOS, where it is unsafe for some system
libraries and not Python's default) the plots are drawn in the parent, as without a worker.
"""

from __future__ import annotations

import multiprocessing
import signal
import sys
from pathlib import Path

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
        self._process = context.Process(target=_serve, args=(child_end,), daemon=True, name="stumpcheck-plots")
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
            status, payload = "error", f"the plotting process ended with status {self._process.exitcode}"
        self._stop()
        if status != "ok":
            raise RuntimeError(f"drawing the plots failed: {payload}")
        return [Path(p) for p in payload]

    def _stop(self) -> None:
        if self._process is None:
            return
        if self._process.is_alive():
            try:
                self._connection.send(None)
            except (BrokenPipeError, OSError):
                pass
            self._process.join(timeout=10)
            if self._process.is_alive():
                self._process.terminate()
                self._process.join()
        self._connection.close()
        self._process = None

    def __enter__(self) -> PlotWorker:
        return self

    def __exit__(self, *exc) -> None:
        self._stop()


def _serve(connection) -> None:
    """The child: import matplotlib, then draw the one job it is sent (None: nothing to draw)."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C is the parent's to handle; it stops this child
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
