"""A Dask LocalCluster started by a command (``--scheduler local``): workers that never see Ctrl-C, end with
the command, and are killed before it closes.

* Ctrl-C: the workers are started (by the cluster's own threads, which inherit the starting thread's signal
  mask) with SIGINT blocked (:func:`stumpcheck.numerics.processes.interrupts_deferred`), so only the command
  is interrupted; a Ctrl-C pressed while the cluster starts is delivered once it has started.
* The end of the command: each worker arms the kernel's parent-death signal (:func:`watch_this_parent`, run
  on the workers by :func:`stumpcheck.numerics.scheduling.connect`), on top of Dask's own pipe from its
  parent; closing (:func:`close_cluster`) kills the workers first.
"""

from __future__ import annotations

import os
from contextlib import contextmanager

__all__ = ["close_cluster", "local_cluster", "watch_this_parent"]


def local_cluster(cluster_class, workers: int):
    """A LocalCluster of ``workers`` single-threaded processes that never see Ctrl-C: they are started (by the
    cluster's own threads, which inherit this thread's signal mask) with SIGINT blocked, so the parent alone is
    interrupted, and kills them (:func:`close_cluster`). A Ctrl-C pressed while the cluster starts is
    delivered when it has started, and closes it. Each worker also ends with this process (the kernel's
    parent-death signal, on top of Dask's own pipe from its parent)."""
    import logging

    from stumpcheck.numerics.processes import interrupts_deferred, quiet_resource_tracker

    quiet_resource_tracker()
    cluster = None
    try:
        with interrupts_deferred():
            cluster = cluster_class(n_workers=workers, threads_per_worker=1, processes=True,
                                    dashboard_address=":0", silence_logs=logging.ERROR)
    except BaseException:
        if cluster is not None:
            close_cluster(cluster)
        raise
    return cluster


def close_cluster(cluster, client=None) -> None:
    """Kill the cluster's worker processes, then close ``client`` and the cluster, Dask's logs silent: quick
    (a running task would hold a graceful close for seconds) and without the connection errors that closing a
    scheduler under its workers logs. Their results, if any, are in: a task is done when its result is read."""
    with _quiet_dask_logs():
        _kill_workers(cluster)
        if client is not None:
            client.close()
        cluster.close()


def _worker_pids(cluster) -> list[int]:
    """The process ids of a LocalCluster's workers (each nanny's child; none where Dask keeps them elsewhere)."""
    pids = []
    for nanny in list(getattr(cluster, "workers", {}).values()):
        pid = getattr(getattr(getattr(nanny, "process", None), "process", None), "pid", None)
        if isinstance(pid, int):
            pids.append(pid)
    return pids


def _kill_workers(cluster) -> None:
    import signal

    for pid in _worker_pids(cluster):
        try:
            os.kill(pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass


@contextmanager
def _quiet_dask_logs():
    """dask.distributed's loggers silent within the block (closing a cluster whose workers were killed)."""
    import logging

    loggers = [logging.getLogger(name) for name in ("distributed", "tornado", "asyncio")]
    levels = [logger.level for logger in loggers]
    for logger in loggers:
        logger.setLevel(logging.CRITICAL + 1)
    try:
        yield
    finally:
        for logger, level in zip(loggers, levels):
            logger.setLevel(level)


def watch_this_parent(parent_pid: int) -> bool:
    """On a LocalCluster's worker: end with ``parent_pid`` (this process's parent), the kernel's signal included."""
    from stumpcheck.numerics.processes import arm_parent_death_signal

    armed = arm_parent_death_signal()
    if os.getppid() != parent_pid:  # the parent died before the signal was armed
        os._exit(70)
    return armed
