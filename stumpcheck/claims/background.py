"""Certified work that ``verify`` starts ahead, in two worker processes, while its entries run.

Some entries' most expensive parts do not depend on anything the run computes before them: C6's cells (seeded),
C2–C4's re-check of the committed certificate under ``--quick`` (the tube; the region and the tail), C5's corpus
intervals under ``--full``, C7's bracket table of the one head's exact risk and C8's of the pooled estimator
and of the averaged one's ends (fixed grids of (θ, N)); ``stumpcheck.cli.verify._background_tasks`` lists
them. ``verify``
submits them at its start (:func:`start`, from the main thread, before any entry has run a compiled kernel's
threads, so the forked workers are safe), and each entry collects its part when it gets there (:func:`take`);
an entry that finds nothing started computes the part itself, the same way. The results are the same
functions' results either way: only where they run changes.

The workers end with the command (:mod:`stumpcheck.numerics.processes`); :func:`stop` ends them and drops
whatever nobody collected.
"""

from __future__ import annotations

__all__ = ["start", "take", "stop", "started"]

#: the pool and the futures by key, while a run has background work
_STATE: dict = {}


def start(tasks: list[tuple[object, object, tuple]], *, workers: int = 2) -> None:
    """Submit ``tasks`` — (key, function, arguments), the first needed first — to a new pool of ``workers`` processes.
    Functions and arguments must pickle. Replaces (and ends) any background work already started."""
    from stumpcheck.numerics.processes import parent_watching_pool

    stop()
    pool = parent_watching_pool(workers, ignore_interrupt=True)
    _STATE["pool"] = pool
    _STATE["futures"] = {key: pool.submit(function, *args) for key, function, args in tasks}


def started(key) -> bool:
    """Whether the work under ``key`` was started and not yet collected."""
    return key in _STATE.get("futures", {})


def take(key, function, *args):
    """The result of the work started under ``key`` (waiting for it), or ``function(*args)`` computed here if
    none was started. An exception raised in the worker is raised here."""
    future = _STATE.get("futures", {}).pop(key, None)
    if future is None:
        return function(*args)
    try:
        return future.result()
    finally:
        if not _STATE.get("futures"):
            stop()


def stop() -> None:
    """End the background pool (its running tasks are abandoned) and forget its futures."""
    pool = _STATE.pop("pool", None)
    _STATE.pop("futures", None)
    if pool is not None:
        from stumpcheck.numerics.processes import terminate_workers

        terminate_workers(pool)
        pool.shutdown(wait=True, cancel_futures=True)
