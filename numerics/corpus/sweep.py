"""A resumable sweep engine: run one function over a grid of cells.

A *cell* is a dict of JSON-serialisable parameters (for example
``{"m": 64, "n": 64, "N": 1000, "seed": 0}``); ``cell_function(cell)`` returns
a JSON-serialisable dict. :func:`run_sweep` runs every cell that is not yet in
the *store* and appends each record to it the moment the cell finishes, so an
interrupted sweep resumes where it stopped.

Store: JSON lines, one record per finished cell,
``{"key", "cell", "result", "seconds", "finished", "backend"}``, where ``key`` is
:func:`cell_key`, the SHA-256 of the cell's canonical JSON (sorted keys, no
whitespace), truncated to 20 hex digits. Each line is flushed and fsynced as
it is written; a truncated last line (a crash mid-write) is cut off on the
next load, a corrupt line before it is an :class:`InputError`.

Backends: in-process when ``workers == 1``; a local
:class:`concurrent.futures.ProcessPoolExecutor` otherwise (the default); Dask
distributed when ``scheduler`` (an address such as ``tcp://host:8786``, or a
``dask.distributed.Client``) is given or the environment variable
``DASK_SCHEDULER_ADDRESS`` is set. Dask is an optional extra
(``pip install 'stumpcheck[dask]'``). The cell function must be importable by
the workers (defined at module level). Pool workers watch their parent and
exit when it dies, SIGKILL included (:mod:`stumpcheck.numerics.processes`).
"""

from __future__ import annotations

import concurrent.futures
import datetime
import hashlib
import json
import os
import time
from pathlib import Path
from typing import Callable

import numpy as np

from stumpcheck.numerics.precision import InputError
from stumpcheck.numerics.processes import parent_watching_pool

__all__ = ["SCHEDULER_ENV", "cell_key", "load_store", "run_sweep"]

SCHEDULER_ENV = "DASK_SCHEDULER_ADDRESS"


def _plain(value):
    """JSON fallback for numpy scalars and arrays."""
    if isinstance(value, np.generic):
        return value.item()
    if isinstance(value, np.ndarray):
        return value.tolist()
    if isinstance(value, (set, frozenset)):
        return sorted(value)
    raise TypeError(f"not JSON-serialisable: {type(value).__name__}")


def _canonical(cell: dict) -> str:
    return json.dumps(cell, sort_keys=True, separators=(",", ":"), default=_plain, allow_nan=False)


def cell_key(cell: dict) -> str:
    """Stable key of a cell: SHA-256 of its canonical JSON, first 20 hex digits."""
    if not isinstance(cell, dict):
        raise InputError(f"a sweep cell must be a dict of parameters, got {type(cell).__name__}")
    try:
        text = _canonical(cell)
    except (TypeError, ValueError) as exc:
        raise InputError(f"sweep cell {cell!r} is not JSON-serialisable with finite numbers: {exc}") from None
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:20]


def load_store(store) -> dict:
    """Records of a store by key; cuts off a truncated last line, rejects corrupt earlier lines."""
    path = Path(store)
    if not path.exists():
        return {}
    if path.is_dir():
        raise InputError(f"sweep store {path} is a directory; give a file path")
    data = path.read_bytes()
    records, position, good_end, number = {}, 0, 0, 0
    while position < len(data):
        number += 1
        newline = data.find(b"\n", position)
        end = len(data) if newline == -1 else newline + 1
        segment = data[position:end].strip()
        if segment:
            try:
                record = json.loads(segment)
                if not isinstance(record, dict) or "key" not in record or "result" not in record:
                    raise ValueError("not a sweep record")
            except (ValueError, UnicodeDecodeError):
                if newline == -1:
                    break  # a record cut off mid-write: drop it
                raise InputError(f"sweep store {path} line {number} is corrupt (not a sweep record)") from None
            records[record["key"]] = record
        good_end = position = end
    if data and (good_end < len(data) or not data.endswith(b"\n")):
        with open(path, "r+b") as handle:
            handle.truncate(good_end)
            if good_end and not data[:good_end].endswith(b"\n"):
                handle.seek(good_end)
                handle.write(b"\n")
    return records


def _append(path: Path, record: dict) -> None:
    line = json.dumps(record, default=_plain, allow_nan=True) + "\n"
    with open(path, "a", encoding="utf-8") as handle:
        handle.write(line)
        handle.flush()
        os.fsync(handle.fileno())


def _timed_call(cell_function: Callable, cell: dict):
    start = time.perf_counter()
    result = cell_function(dict(cell))
    return result, time.perf_counter() - start


def _now() -> str:
    return datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds")


def _dask(scheduler, workers: int = 2):
    """(client, what to close when done or None, as_completed); ``"local"`` starts a Dask LocalCluster of
    ``workers`` processes here, as every other command's ``--scheduler local`` does."""
    try:
        from dask.distributed import Client, as_completed
    except ImportError:
        raise InputError("a Dask scheduler was requested (--scheduler or DASK_SCHEDULER_ADDRESS) but "
                         "dask.distributed is not installed; pip install 'stumpcheck[dask]'") from None
    if isinstance(scheduler, Client):
        return scheduler, None, as_completed
    if not isinstance(scheduler, str) or not scheduler.strip():
        raise InputError(f"the Dask scheduler must be an address such as tcp://host:8786, got {scheduler!r}")
    from stumpcheck.numerics.scheduling import LOCAL_CLUSTER, connect

    if scheduler.strip() == LOCAL_CLUSTER:
        cluster = connect(LOCAL_CLUSTER, workers)
        return cluster.client, cluster, as_completed
    try:
        client = Client(scheduler.strip(), timeout="10s")
    except (OSError, TimeoutError, ValueError) as exc:
        raise InputError(f"cannot connect to the Dask scheduler at {scheduler}: {exc}") from None
    return client, client, as_completed


def run_sweep(cell_function: Callable[[dict], dict], cells: list, *, store, scheduler=None, workers: int = 2,
              progress: Callable | None = None) -> list[dict]:
    """Run ``cell_function`` on every cell not yet in ``store``; return all records in cell order.

    ``progress(record, finished, total)`` is called after each newly finished
    cell has been stored (an exception raised there stops the sweep; the cells
    stored so far stay stored). Duplicate cells run once. Returns the records
    (``key``, ``cell``, ``result``, ``seconds``, ``finished``, ``backend``) of all
    ``cells``, those from earlier runs included.
    """
    if not isinstance(cells, (list, tuple)):
        raise InputError(f"cells must be a list of dicts, got {type(cells).__name__}")
    if isinstance(workers, bool) or not isinstance(workers, int) or workers < 1:
        raise InputError(f"workers must be a positive integer, got {workers!r}")
    path = Path(store)
    path.parent.mkdir(parents=True, exist_ok=True)
    keys = [cell_key(cell) for cell in cells]
    done = load_store(path)
    todo, seen = [], set(done)
    for key, cell in zip(keys, cells):
        if key not in seen:
            seen.add(key)
            todo.append((key, cell))
    if scheduler is None:
        scheduler = os.environ.get(SCHEDULER_ENV) or None
    backend = "dask" if scheduler is not None else ("in-process" if workers == 1 else f"process-pool({workers})")
    total, finished = len(todo), 0

    def record_of(key, cell, outcome):
        nonlocal finished
        result, seconds = outcome
        record = {"key": key, "cell": cell, "result": result, "seconds": seconds, "finished": _now(),
                  "backend": backend}
        _append(path, record)
        done[key] = json.loads(json.dumps(record, default=_plain))
        finished += 1
        if progress is not None:
            progress(done[key], finished, total)

    if todo:
        if scheduler is not None:
            _run_dask(cell_function, todo, scheduler, record_of, workers)
        elif workers == 1:
            for key, cell in todo:
                record_of(key, cell, _timed_call(cell_function, cell))
        else:
            _run_pool(cell_function, todo, workers, record_of)
    return [done[key] for key in keys]


def _run_pool(cell_function, todo, workers, record_of) -> None:
    # workers end with this process, even when it is killed with SIGKILL; leaving the block by an exception
    # (Ctrl-C, a failed cell) terminates the running cells instead of waiting for them (stumpcheck.numerics.processes);
    # the finished cells are already in the store
    with parent_watching_pool(min(workers, len(todo))) as executor:
        futures = {executor.submit(_timed_call, cell_function, cell): (key, cell) for key, cell in todo}
        for future in concurrent.futures.as_completed(futures):
            key, cell = futures[future]
            record_of(key, cell, future.result())


def _run_dask(cell_function, todo, scheduler, record_of, workers: int = 2) -> None:
    client, owned, as_completed = _dask(scheduler, workers)
    futures = {}
    try:
        for key, cell in todo:
            futures[client.submit(_timed_call, cell_function, cell, pure=False)] = (key, cell)
        for future in as_completed(list(futures)):
            key, cell = futures[future]
            record_of(key, cell, future.result())
    finally:
        pending = [f for f in futures if not f.done()]
        if pending:
            client.cancel(pending)
        if owned is not None:
            owned.close()
