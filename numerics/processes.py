"""Worker processes that end with their parent.

A ``concurrent.futures`` pool's workers outlive a parent killed with SIGKILL
(no ``atexit``, no shutdown message reaches them): they keep computing and keep
the parent's stdout and the resource tracker open. Two guards, both installed
by :func:`watch_parent`, the pool *initializer* of :func:`parent_watching_pool`:

* **Kernel (Linux).** ``prctl(PR_SET_PDEATHSIG, SIGKILL)`` (through ctypes):
  the kernel kills the worker the moment the thread that started it ends.
  It needs no cooperation from the worker, so it also ends a worker that is
  inside a long C call holding the GIL (an Arb integral, a NumPy kernel),
  where no Python thread can run. Because the signal follows the starting
  *thread*, it is armed only for workers started by the parent's main thread
  (whose end is the process's end); :class:`ParentWatchingPool` records which
  thread starts each worker (workers are started inside ``submit``).
* **Polling (everywhere).** A daemon thread polls ``os.getppid()`` every
  ``interval`` seconds and ends the worker with ``os._exit`` once the parent
  it was started by is gone (the worker is then re-parented, so its parent id
  changes). Portable, but it only runs when the worker releases the GIL.

A worker whose parent died before the initializer ran exits at once. The
workers must be children of the pool's process ("spawn" or "fork" start
methods; a "forkserver" worker's parent is the server, so it would exit at once). The pool
is also a context manager that tears down promptly: leaving the ``with``
block by an exception (Ctrl-C included) terminates the running workers
instead of waiting for their tasks (:func:`terminate_workers`).

The same two guards serve every other child of a command: a forked child (the
checking child of a user lemma, the plotting process of ``flow --out``) calls
:func:`watch_parent` first thing, with the parent's id taken before the fork.
However the command ends (``timeout``'s SIGTERM or SIGKILL, ``kill -9`` of its
main process, Ctrl-C, its normal end), no child outlives it by more than the
kernel's reaction time.

Ctrl-C reaches the whole foreground process group. Children that the parent
stops itself (pool workers with ``ignore_interrupt``, a Dask LocalCluster's
workers, the plotting process) are started inside :func:`interrupts_deferred`:
SIGINT is blocked in the starting thread, the blocked mask is inherited through
fork and exec, so a child cannot get a KeyboardInterrupt (and print a traceback)
while it is still importing; it then ignores SIGINT (:func:`ignore_interrupts`).
A Ctrl-C pressed while the parent held it back is delivered to the parent when
the block ends: none is lost. :func:`quiet_resource_tracker` starts
multiprocessing's resource tracker without its "leaked semaphore" warning, which
a killed parent cannot avoid (the tracker still removes the semaphores).
"""

from __future__ import annotations

import functools
import os
import signal
import sys
import threading
import time
from concurrent.futures import InvalidStateError, ProcessPoolExecutor
from contextlib import contextmanager

__all__ = ["PARENT_POLL_SECONDS", "ORPHAN_EXIT_STATUS", "ParentWatchingPool", "arm_parent_death_signal",
           "ignore_interrupts", "interrupts_deferred", "parent_watching_pool", "quiet_resource_tracker",
           "started_by_main_thread", "terminate_workers", "watch_parent"]

#: how often a worker checks that its parent is alive (a killed parent's workers exit within this time)
PARENT_POLL_SECONDS = 0.5

#: exit status of a worker whose parent died
ORPHAN_EXIT_STATUS = 70

#: prctl option number of PR_SET_PDEATHSIG (linux/prctl.h)
_PR_SET_PDEATHSIG = 1


def arm_parent_death_signal(signal_number: int = signal.SIGKILL) -> bool:
    """Ask the kernel to send ``signal_number`` to this process when the thread that started it ends.

    Linux only (``prctl(PR_SET_PDEATHSIG)``); returns False where it is not
    available or the call fails, True once armed.
    """
    if not sys.platform.startswith("linux"):
        return False
    try:
        import ctypes

        libc = ctypes.CDLL(None, use_errno=True)
        return libc.prctl(_PR_SET_PDEATHSIG, int(signal_number), 0, 0, 0) == 0
    except (OSError, AttributeError, TypeError):
        return False


def started_by_main_thread() -> bool:
    """True in the main thread: the only thread whose end is this process's end, so the only one whose children
    may arm the kernel's parent-death signal (it follows the thread that started the child)."""
    return threading.current_thread() is threading.main_thread()


@contextmanager
def interrupts_deferred():
    """Within the block SIGINT is blocked in this thread (POSIX): processes and threads started here start with
    it blocked. A Ctrl-C that arrives meanwhile is delivered when the block ends (KeyboardInterrupt there)."""
    if not hasattr(signal, "pthread_sigmask"):
        yield
        return
    previous = signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT})
    try:
        yield
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, previous)


def ignore_interrupts() -> None:
    """In a child started inside :func:`interrupts_deferred`: ignore SIGINT from now on, then unblock it (a
    Ctrl-C held back meanwhile is the parent's, and is dropped here)."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    if hasattr(signal, "pthread_sigmask"):
        signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGINT})


def quiet_resource_tracker() -> None:
    """Start multiprocessing's resource tracker (if it is not running yet) with its "leaked semaphore" warning
    off: after a SIGKILL of this process the tracker removes the pool's semaphores, and says so on the
    terminal. Its warnings filter is passed as ``-W``, the only way into that process."""
    from multiprocessing import resource_tracker

    option = "ignore:resource_tracker:UserWarning"
    added = option not in sys.warnoptions
    if added:
        sys.warnoptions.append(option)
    try:
        resource_tracker.ensure_running()
    except (OSError, ValueError, AttributeError):  # no tracker on this platform, or it cannot start: not needed here
        pass
    finally:
        if added:
            sys.warnoptions.remove(option)


def watch_parent(parent_pid: int, interval: float = PARENT_POLL_SECONDS, kernel_signal: bool = False) -> None:
    """Pool initializer: end this process once its parent ``parent_pid`` is no longer its parent.

    ``kernel_signal`` also arms the kernel's parent-death signal (see the module
    docstring); pass it only when the worker was started by the parent's main thread.
    """
    if kernel_signal:
        arm_parent_death_signal()
    if os.getppid() != parent_pid:  # the parent died before the worker got here (or before the signal was armed)
        os._exit(ORPHAN_EXIT_STATUS)

    def poll() -> None:
        while True:
            time.sleep(interval)
            if os.getppid() != parent_pid:
                os._exit(ORPHAN_EXIT_STATUS)

    threading.Thread(target=poll, name="stumpcheck-parent-watch", daemon=True).start()


class _ParentWatch:
    """The picklable initializer of a :class:`ParentWatchingPool`; ``kernel_signal`` is set per started worker."""

    def __init__(self, parent_pid: int, interval: float, ignore_interrupt: bool = False):
        self.parent_pid, self.interval, self.kernel_signal = parent_pid, interval, False
        self.ignore_interrupt = ignore_interrupt

    def __call__(self) -> None:
        if self.ignore_interrupt:  # Ctrl-C reaches the whole process group: the parent alone decides what stops
            ignore_interrupts()
        watch_parent(self.parent_pid, self.interval, self.kernel_signal)


def terminate_workers(executor) -> None:
    """SIGTERM every worker process of a ProcessPoolExecutor (their running tasks are abandoned)."""
    for process in list((getattr(executor, "_processes", None) or {}).values()):
        try:
            process.terminate()
        except (OSError, ValueError, AttributeError):
            pass


def _set_exception_unless_cancelled(set_exception, exc) -> None:
    try:
        set_exception(exc)
    except InvalidStateError:  # cancelled: nobody waits for it (CPython 3.11 raised here, in the pool's thread)
        pass


class ParentWatchingPool(ProcessPoolExecutor):
    """A ProcessPoolExecutor whose workers end with this process (:func:`watch_parent`), SIGKILL included.

    As a context manager it waits for its tasks on a normal exit and terminates
    its workers at once when the block is left by an exception (KeyboardInterrupt
    included), so Ctrl-C does not wait for the running tasks.
    """

    def __init__(self, max_workers: int, *, mp_context=None, interval: float = PARENT_POLL_SECONDS,
                 ignore_interrupt: bool = False):
        import multiprocessing

        self._watch = _ParentWatch(os.getpid(), interval, ignore_interrupt)
        self._start_lock = threading.Lock()
        if (mp_context or multiprocessing.get_context()).get_start_method() != "fork":
            quiet_resource_tracker()  # a forked pool's semaphores are not tracked
        super().__init__(max_workers=max_workers, mp_context=mp_context, initializer=self._watch)

    def submit(self, fn, /, *args, **kwargs):
        # workers are started here, by the calling thread; the kernel signal follows that thread, so it is armed
        # only when it is the main thread (the initializer is pickled or forked with the flag as it is now)
        with self._start_lock:
            self._watch.kernel_signal = started_by_main_thread()
            if self._watch.ignore_interrupt:
                with interrupts_deferred():
                    future = super().submit(fn, *args, **kwargs)
            else:
                future = super().submit(fn, *args, **kwargs)
        # a pool whose workers were terminated marks its pending futures failed, the cancelled ones included;
        # CPython 3.11 then raised InvalidStateError in its manager thread (a traceback after Ctrl-C)
        future.set_exception = functools.partial(_set_exception_unless_cancelled, future.set_exception)
        return future

    def __exit__(self, exc_type, exc, traceback):
        if exc_type is not None:
            terminate_workers(self)
            self.shutdown(wait=True, cancel_futures=True)
        else:
            self.shutdown(wait=True)
        return False


def parent_watching_pool(max_workers: int, *, mp_context=None, ignore_interrupt: bool = False) -> ParentWatchingPool:
    """A :class:`ParentWatchingPool` of ``max_workers`` processes (they exit if this process dies).

    ``ignore_interrupt``: the workers ignore SIGINT, so that Ctrl-C (sent to the whole process group) reaches
    only the parent, which then ends them (:func:`terminate_workers`) instead of each dying with a traceback."""
    return ParentWatchingPool(max_workers, mp_context=mp_context, ignore_interrupt=ignore_interrupt)
