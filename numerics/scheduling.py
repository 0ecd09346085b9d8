"""Where independent units of certified work run: in this process, in local worker processes, or on Dask.

A :class:`Scheduler` maps a function over jobs and hands back the results **in the order of the jobs**,
whatever order they finish in (:meth:`Scheduler.imap`). The provers (the boxes of the margin prover and of
``certify``, the tube's intervals, a re-check's leaves) take every decision in that order in the calling
process and only send the evaluations out, a bisection's ahead of their turn (:class:`Lookahead`), so
what they record does not depend on where the evaluations ran: a proof on a Dask cluster writes the
same certificate, byte for byte, as the same proof in this process.

Three kinds, all with the same :meth:`~Scheduler.imap`:

* :class:`InProcess` (``workers = 1``): each job runs here when its result is asked for, so a consumer that
  stops early (a failed proof) has computed nothing more than it read;
* :class:`LocalProcesses` (``workers = N > 1``): N spawned processes of a parent-watching pool
  (:func:`stumpcheck.numerics.processes.parent_watching_pool`): they end with this process, SIGKILL
  included, and ignore Ctrl-C, which reaches the parent only and ends them at once;
* :class:`DaskScheduler`: dask.distributed futures, on the scheduler at an address (``tcp://host:8786``)
  or on a LocalCluster of N single-threaded worker processes started here (address ``"local"``).
  Dask is the optional extra ``stumpcheck[dask]``; :func:`connect` checks, before any work, that it is
  installed, that the scheduler answers within :data:`CONNECT_SECONDS`, that it has workers, and that
  they run the same versions of stumpcheck and python-flint as this process (else one-line
  :class:`~stumpcheck.numerics.precision.InputError`).

A task holds a process-wide lock while it runs (:func:`run_task`): Arb's working precision is global to a
process, so two tasks in threads of one Dask worker would change each other's precision; with the lock a
multi-threaded worker runs its tasks one at a time, and is as correct as a single-threaded one.

A command chooses one scheduler for all of its work (:func:`using`); a prover asks :func:`for_workers`
with its own ``workers`` argument and gets the command's scheduler if one was chosen, else
:func:`local` (``workers``). Inside a task the choice is cleared (a task that calls a prover runs it in
its own process, never submitting from a worker). In a forked child (a user lemma checked under a time
limit) the chosen scheduler is opened anew: a new client of the same Dask scheduler, or, for local
processes, the child itself (a daemonic process may not start processes).
"""

from __future__ import annotations

import os
import threading
import time
from collections import deque
from contextlib import contextmanager

from stumpcheck.numerics.precision import InputError

__all__ = ["CONNECT_SECONDS", "LOCAL_CLUSTER", "MIN_CHUNK", "Scheduler", "InProcess", "LocalProcesses",
           "DaskScheduler", "Lookahead", "local", "connect", "using", "chosen", "for_workers", "run_task"]

#: seconds :func:`connect` waits for a Dask scheduler to answer
CONNECT_SECONDS = 10
#: the address that asks :func:`connect` for a Dask LocalCluster started in this process
LOCAL_CLUSTER = "local"
#: items per task of a :class:`Lookahead`, at least (a box's enclosure takes a millisecond to a second)
MIN_CHUNK = 4

_TASK_LOCK = threading.RLock()
_in_task = threading.local()


def run_task(fn, args: tuple):
    """Run ``fn(*args)`` as one task: alone in its process (the lock), with no scheduler chosen inside it.

    The lock is re-entrant: a task that runs a prover in its own process (its jobs in-process, each again
    through this function) holds it already on the same thread."""
    with _TASK_LOCK:
        outer = getattr(_in_task, "active", False)
        _in_task.active = True
        try:
            return fn(*args)
        finally:
            _in_task.active = outer


class Scheduler:
    """Runs jobs and yields their results in job order; ``workers`` is how many run at once."""

    workers: int = 1
    kind: str = ""

    def imap(self, fn, jobs, *, window: int | None = None):
        """Yield ``fn(*job)`` for each argument tuple of ``jobs``, in the order of ``jobs``.

        At most ``window`` jobs (default ``2·workers``) are in flight ahead of the one being read; ``jobs``
        may be a lazy iterable (it is read only as far as the window reaches). A job that raises raises
        here, at its place in the order; leaving the iteration early cancels the jobs not yet started."""
        raise NotImplementedError

    def map(self, fn, jobs, *, window: int | None = None) -> list:
        """``list(imap(fn, jobs))``: every result, in the order of ``jobs``."""
        return list(self.imap(fn, jobs, window=window))

    def describe(self) -> str:
        """Where the work runs, in a few words (for progress lines; never recorded in a certificate)."""
        raise NotImplementedError

    def reopened(self) -> "Scheduler":
        """The same choice opened in this process (after a fork: a new pool or client)."""
        return self

    def close(self, abandon: bool = False) -> None:
        """Release the pool or the client (and a cluster started here); ``abandon``: without waiting for the
        jobs still running (the block was left by an exception, Ctrl-C included)."""

    def __enter__(self):
        return self

    def __exit__(self, exc_type, exc, traceback) -> bool:
        self.close(abandon=exc_type is not None)
        return False


class InProcess(Scheduler):
    """Every job in this process, when its result is read."""

    kind = "in-process"

    def imap(self, fn, jobs, *, window=None):
        for args in jobs:
            yield run_task(fn, tuple(args))

    def describe(self) -> str:
        return "1 process"


def _window(window, workers: int) -> int:
    return max(1, int(window) if window is not None else 2 * workers)


def _in_order(submit, jobs, limit: int, pending: deque):
    """Yield the results of ``submit(args)`` futures in job order, at most ``limit`` in flight; the
    futures not yet read stay in ``pending`` (the caller cancels them)."""
    queue = iter(jobs)
    while True:
        while len(pending) < limit:
            args = next(queue, None)
            if args is None:
                break
            pending.append(submit(tuple(args)))
        if not pending:
            return
        yield pending.popleft().result()


class LocalProcesses(Scheduler):
    """A parent-watching pool of ``workers`` spawned processes, started at the first job and kept until closed."""

    kind = "local processes"

    def __init__(self, workers: int):
        if isinstance(workers, bool) or not isinstance(workers, int) or workers < 2:
            raise InputError(f"local processes need workers >= 2, got {workers!r}")
        self.workers = workers
        self._pool = None

    def _open(self):
        if self._pool is None:
            import multiprocessing

            from stumpcheck.numerics.processes import parent_watching_pool

            self._pool = parent_watching_pool(self.workers, mp_context=multiprocessing.get_context("spawn"),
                                              ignore_interrupt=True)
        return self._pool

    def imap(self, fn, jobs, *, window=None):
        from concurrent.futures.process import BrokenProcessPool

        from stumpcheck.numerics.processes import terminate_workers

        pool, pending = self._open(), deque()
        try:
            yield from _in_order(lambda args: pool.submit(run_task, fn, args), jobs,
                                 _window(window, self.workers), pending)
        except KeyboardInterrupt:  # at once: the running jobs are abandoned with their processes
            terminate_workers(pool)
            pool.shutdown(wait=False, cancel_futures=True)
            self._pool = None
            raise
        except BrokenProcessPool:  # a worker died: the next imap starts a new pool
            self._pool = None
            raise
        finally:
            for future in pending:
                future.cancel()

    def describe(self) -> str:
        return f"{self.workers} local processes"

    def reopened(self) -> "Scheduler":
        return local(self.workers)

    def close(self, abandon: bool = False) -> None:
        if self._pool is not None:
            if abandon:
                from stumpcheck.numerics.processes import terminate_workers

                terminate_workers(self._pool)
            self._pool.shutdown(wait=not abandon, cancel_futures=True)
            self._pool = None


def _identity() -> dict:
    """What a Dask worker must share with this process for its results to be this process's results."""
    from importlib.metadata import PackageNotFoundError, version

    out = {}
    for name in ("stumpcheck", "python-flint"):
        try:
            out[name] = version(name)
        except PackageNotFoundError:
            out[name] = None
    return out


def _dask_error(exc: BaseException) -> str:
    return " ".join(str(exc).split())[:160] or type(exc).__name__


class DaskScheduler(Scheduler):
    """Jobs as dask.distributed futures on ``client`` (made by :func:`connect`)."""

    kind = "dask"

    def __init__(self, client, address: str, *, cluster=None):
        self.client, self.address, self._cluster = client, address, cluster
        self.workers = max(1, len(client.scheduler_info().get("workers", {})))

    def imap(self, fn, jobs, *, window=None):
        pending = deque()
        try:
            yield from _in_order(lambda args: self.client.submit(run_task, fn, args, pure=False), jobs,
                                 _window(window, self.workers), pending)
        finally:
            if pending:
                self.client.cancel(list(pending))

    def describe(self) -> str:
        where = "a local Dask cluster" if self._cluster is not None else f"the Dask scheduler at {self.address}"
        return f"{self.workers} workers of {where}"

    def reopened(self) -> "Scheduler":
        return connect(self.address, check=False)

    def close(self, abandon: bool = False) -> None:
        from stumpcheck.numerics.local_cluster import close_cluster

        if self._cluster is None:
            self.client.close()  # its futures are released: the scheduler forgets the tasks not yet run
            return
        # a cluster started here: its worker processes are killed first (their results, if any, are in; a
        # running task would hold a graceful close for seconds), then the client and the cluster close
        # without the connection errors that closing a scheduler under its workers logs
        close_cluster(self._cluster, self.client)


def _chunk(fn, args: tuple, payloads: list):
    started = time.process_time()
    return fn(*args, payloads), time.process_time() - started


class Lookahead:
    """The results of items that a sequential search takes one at a time, computed ahead of their turn.

    A prover (a bisection) decides everything in the order it takes its items; :meth:`get` hands it the
    result ``fn(*args, [payload])[0]`` of the item it takes now. With ``ahead``, that item goes out with the
    items the search will take next (``upcoming()``, in order), in chunks of at least :data:`MIN_CHUNK`
    (about 4 per worker) on ``scheduler``, and the results are kept until their turn; without it each item
    is computed in this process, when taken. Either way the search sees the same
    results in the same order. ``cpu_seconds``: the CPU time of the chunks run elsewhere."""

    def __init__(self, scheduler: Scheduler, fn, args: tuple, *, ahead: bool):
        self.scheduler, self.fn, self.args, self.ahead = scheduler, fn, tuple(args), bool(ahead)
        self.cpu_seconds = 0.0
        self._done, self._stream = {}, None

    def get(self, key, payload, upcoming=None):
        """The result of item ``key`` (its payload ``payload``); ``upcoming()``: [(key, payload), …] of the
        items to be taken next, in order (asked only when a new batch goes out)."""
        while key not in self._done:
            item = None if self._stream is None else next(self._stream, None)
            if item is None:
                later = upcoming() if self.ahead and upcoming is not None else ()
                batch = [(key, payload)] + [item for item in later if item[0] not in self._done and item[0] != key]
                self._stream = self._batch(batch)
                continue
            self._done[item[0]] = item[1]
        return self._done.pop(key)

    def _batch(self, items: list):
        size = max(MIN_CHUNK, -(-len(items) // (4 * self.scheduler.workers))) if self.ahead else 1
        chunks = [items[k:k + size] for k in range(0, len(items), size)]
        jobs = ((self.fn, self.args, [p for _, p in chunk]) for chunk in chunks)
        where = self.scheduler if self.ahead else InProcess()
        for chunk, (results, seconds) in zip(chunks, where.imap(_chunk, jobs)):
            self.cpu_seconds += seconds if self.ahead else 0.0
            yield from zip((k for k, _ in chunk), results)

    def close(self) -> None:
        """Cancel what was sent ahead and is not needed (the search stopped early)."""
        if self._stream is not None:
            self._stream.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc) -> bool:
        self.close()
        return False


def local(workers: int = 1) -> Scheduler:
    """This process (``workers = 1``) or a pool of ``workers`` local processes; this process also when it is a
    daemonic one (a user lemma's checking child), which may not start processes of its own."""
    import multiprocessing

    if isinstance(workers, bool) or not isinstance(workers, int) or workers < 1:
        raise InputError(f"workers must be a positive int, got {workers!r}")
    return InProcess() if workers == 1 or multiprocessing.current_process().daemon else LocalProcesses(workers)


def connect(address: str, workers: int | None = None, *, check: bool = True) -> DaskScheduler:
    """A :class:`DaskScheduler` on the scheduler at ``address``, or on a LocalCluster of ``workers``
    single-threaded processes (default 2) when ``address`` is ``"local"``.

    InputError (one line) when dask.distributed is not installed (naming the ``dask`` extra), when the
    scheduler does not answer within :data:`CONNECT_SECONDS`, has no workers, or (``check``) when its
    workers cannot import stumpcheck or run other versions of it or of python-flint than this process."""
    try:
        from dask.distributed import Client, LocalCluster

        from stumpcheck.numerics.local_cluster import close_cluster, local_cluster, watch_this_parent
    except ImportError:
        raise InputError("--scheduler needs dask.distributed, which is not installed: "
                         "pip install 'stumpcheck[dask]'") from None
    if not isinstance(address, str) or not address.strip():
        raise InputError(f"a Dask scheduler address looks like tcp://host:8786 (or {LOCAL_CLUSTER!r}), got {address!r}")
    address, cluster = address.strip(), None
    try:
        if address == LOCAL_CLUSTER:
            cluster = local_cluster(LocalCluster, workers or 2)
            client = Client(cluster, timeout=f"{CONNECT_SECONDS}s")
            address = cluster.scheduler_address
        else:
            client = Client(address, timeout=f"{CONNECT_SECONDS}s")
    except BaseException as exc:  # OSError, TimeoutError, ValueError, dask's own: one line; Ctrl-C: as it is
        if cluster is not None:
            close_cluster(cluster)
        if not isinstance(exc, Exception):
            raise
        raise InputError(f"--scheduler {address[:80]}: no Dask scheduler answered ({_dask_error(exc)})") from None
    scheduler = DaskScheduler(client, address, cluster=cluster)
    try:
        _check_workers(scheduler, check)
    except BaseException:
        scheduler.close(abandon=True)
        raise
    return scheduler


def _check_workers(scheduler: DaskScheduler, check: bool) -> None:
    """InputError unless the scheduler has workers and (``check``) they run what this process runs; the
    workers of a cluster started here are also made to end with this process."""
    client, address = scheduler.client, scheduler.address
    if scheduler._cluster is not None:
        try:
            client.run(watch_this_parent, os.getpid())
        except Exception:  # noqa: BLE001 - Dask's own pipe from the parent still ends the workers with it
            pass
    if not client.scheduler_info().get("workers"):
        raise InputError(f"--scheduler {address[:80]}: the Dask scheduler has no workers")
    if check:
        try:
            seen = client.run(_identity)
        except Exception as exc:  # noqa: BLE001 - a worker that cannot import stumpcheck, or died
            raise InputError(f"--scheduler {address[:80]}: its workers cannot run stumpcheck "
                             f"({_dask_error(exc)})") from None
        here = _identity()
        other = sorted({str(v) for v in seen.values() if v != here})
        if other:
            raise InputError(f"--scheduler {address[:80]}: its workers run {other[0][:100]}, this process {here}")


_chosen: list = []  # [(scheduler, pid, {pid: reopened})] while a command's choice is in force


@contextmanager
def using(scheduler: Scheduler):
    """Within the block, every prover that asks :func:`for_workers` runs on ``scheduler``."""
    if not isinstance(scheduler, Scheduler):
        raise InputError(f"expected a Scheduler, got {scheduler!r}")
    _chosen.append((scheduler, os.getpid(), {}))
    try:
        yield scheduler
    finally:
        _chosen.pop()


def chosen() -> Scheduler | None:
    """The scheduler a command chose (:func:`using`), or None: also None inside a task."""
    if not _chosen or getattr(_in_task, "active", False):
        return None
    scheduler, pid, copies = _chosen[-1]
    if os.getpid() == pid:
        return scheduler
    if os.getpid() not in copies:  # a forked child: the parent's pool and client are not its own
        copies[os.getpid()] = scheduler.reopened()
    return copies[os.getpid()]


@contextmanager
def for_workers(workers: int = 1):
    """The scheduler a prover runs on: the command's choice if any (:func:`chosen`), else :func:`local`
    (``workers``), which is closed when the block ends."""
    scheduler = chosen()
    if scheduler is not None:
        yield scheduler
        return
    with local(workers) as own:
        yield own
