"""Worker processes that end with their parent.

A ``concurrent.futures`` pool's workers outlive a parent killed with SIGKILL
(no ``atexit``, no shutdown message reaches them): they keep computing and keep
the parent's stdout open. :func:`watch_parent` is a pool *initializer*: it
starts a daemon thread in the worker that polls ``os.getppid()`` every
``interval`` seconds and ends the worker with ``os._exit`` as soon as the
parent it was started by is gone (the worker is then re-parented, so its
parent id changes). Use it as
``ProcessPoolExecutor(initializer=watch_parent, initargs=(os.getpid(),))``.
"""

from __future__ import annotations

import os
import threading
import time

__all__ = ["PARENT_POLL_SECONDS", "watch_parent", "parent_watching_pool"]

#: how often a worker checks that its parent is alive (a killed parent's workers exit within this time)
PARENT_POLL_SECONDS = 0.5

#: exit status of a worker whose parent died
ORPHAN_EXIT_STATUS = 70


def watch_parent(parent_pid: int, interval: float = PARENT_POLL_SECONDS) -> None:
    """Pool initializer: end this process once its parent ``parent_pid`` is no longer its parent."""
    if os.getppid() != parent_pid:  # the parent died before the worker got here
        os._exit(ORPHAN_EXIT_STATUS)

    def poll() -> None:
        while True:
            time.sleep(interval)
            if os.getppid() != parent_pid:
                os._exit(ORPHAN_EXIT_STATUS)

    threading.Thread(target=poll, name="stumpcheck-parent-watch", daemon=True).start()


def parent_watching_pool(max_workers: int, *, mp_context=None):
    """A ProcessPoolExecutor whose workers run :func:`watch_parent` (they exit if this process dies)."""
    from concurrent.futures import ProcessPoolExecutor

    return ProcessPoolExecutor(max_workers=max_workers, mp_context=mp_context, initializer=watch_parent,
                               initargs=(os.getpid(),))
