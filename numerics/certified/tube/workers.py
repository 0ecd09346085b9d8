"""The tube's interval bounds in worker processes: a piece serialised exactly, the parent-watching pool that
computes the bounds of many intervals at once, and the checkpoint of finished intervals (one JSON line each,
keyed by piece and settings) that lets an interrupted tube resume.

The bounds themselves are :func:`stumpcheck.numerics.certified.tube.piece.interval_bounds` (rigorous, in Arb);
nothing here decides a bound, only where and in which order it is computed.
"""

from __future__ import annotations

import hashlib
import json
import math
import time
from pathlib import Path

from stumpcheck.numerics.certified.enclosures.balls import working_bits
from stumpcheck.numerics.certified.tube.chebyshev import ChebyshevPiece
from stumpcheck.numerics.certified.tube.piece import Settings, ball_to_json, interval_bounds

__all__ = ["piece_json", "piece_from_json", "interval_key", "bound_bits", "compute_bounds", "BoundsCheckpoint",
           "spawn_pool", "stop_pool", "run_bounds"]


def piece_json(piece: ChebyshevPiece) -> dict:
    """A piece as JSON: its interval in s and its Chebyshev coefficients as exact hexadecimal floats."""
    return {"s": [piece.s0.hex(), piece.s1.hex()], "a": [c.hex() for c in piece.ca], "b": [c.hex() for c in piece.cb]}


def piece_from_json(data) -> ChebyshevPiece:
    """The piece of a record; ValueError/TypeError/KeyError if malformed (callers turn it into InputError)."""
    s0, s1 = (float.fromhex(x) for x in data["s"])
    ca = tuple(float.fromhex(x) for x in data["a"])
    cb = tuple(float.fromhex(x) for x in data["b"])
    if not (len(ca) == len(cb) >= 1 and all(map(math.isfinite, (s0, s1, *ca, *cb)))):
        raise ValueError("a piece needs finite s and equally many finite coefficients for a and b")
    return ChebyshevPiece(s0, s1, ca, cb)


def interval_key(piece: ChebyshevPiece, settings: Settings) -> str:
    """The checkpoint key of one interval: a hash of its piece and the settings."""
    text = json.dumps([piece_json(piece), settings.as_json()], sort_keys=True)
    return hashlib.sha256(text.encode()).hexdigest()[:32]


def bound_bits(settings: Settings) -> int:
    """The working precision (bits) of an interval's integrals at the settings' digits."""
    return working_bits(settings.dps, 200, 200)


def compute_bounds(piece_data: dict, settings_data: dict) -> dict:
    """Worker entry point: the serialised :func:`interval_bounds` of one piece, or {"error": reason}."""
    piece, settings = piece_from_json(piece_data), Settings.from_json(settings_data)
    started = time.process_time()
    try:
        out = interval_bounds(piece, settings, bound_bits(settings))
    except ArithmeticError as exc:
        return {"error": str(exc)[:300], "cpu": time.process_time() - started}
    return {"p": [ball_to_json(x) for x in out["p"]], "m": [ball_to_json(x) for x in out["m"]],
            "delta": ball_to_json(out["delta"]), "g": ball_to_json(out["g"]),
            "hessians": [[ball_to_json(x) for x in h] for h in out["hessians"]], "cpu": time.process_time() - started}


class BoundsCheckpoint:
    """Finished intervals' integrals, one JSON line each, keyed by piece and settings."""

    def __init__(self, path):
        self.path = None if path is None else Path(path)
        self.done = {}
        if self.path is not None and self.path.exists():
            for line in self.path.read_text(encoding="utf-8").splitlines():
                try:
                    item = json.loads(line)
                    self.done[item["key"]] = item["bounds"]
                except (ValueError, KeyError, TypeError):
                    continue  # a line cut by an interruption

    def add(self, key: str, bounds: dict) -> None:
        self.done[key] = bounds
        if self.path is not None and "error" not in bounds:
            with self.path.open("a", encoding="utf-8") as handle:
                handle.write(json.dumps({"key": key, "bounds": bounds}) + "\n")


def spawn_pool(workers: int):
    """A pool of ``workers`` spawned processes for the intervals' integrals: they ignore Ctrl-C (the parent stops
    them at once, :func:`stop_pool`) and end with their parent, SIGKILL included
    (:func:`stumpcheck.numerics.processes.parent_watching_pool`)."""
    import multiprocessing

    from stumpcheck.numerics.processes import parent_watching_pool

    return parent_watching_pool(workers, mp_context=multiprocessing.get_context("spawn"), ignore_interrupt=True)


def stop_pool(pool) -> None:
    """End the pool's workers now, without waiting for the intervals they are computing (an interval takes
    seconds; its integrals are recomputed by the next run)."""
    from stumpcheck.numerics.processes import terminate_workers

    terminate_workers(pool)
    pool.shutdown(wait=False, cancel_futures=True)


def run_bounds(pieces, settings, checkpoint, workers, deadline, progress, s_end):
    """Bounds for every piece (in order; stops launching at the deadline), with the checkpoint."""
    todo = [p for p in pieces if interval_key(p, settings) not in checkpoint.done]
    done_s = [0.0]

    def report(piece):
        done_s[0] += piece.s1 - piece.s0
        if progress is not None:
            progress(min(1.0, done_s[0] / s_end))

    for p in pieces:
        if interval_key(p, settings) in checkpoint.done:
            report(p)
    if workers > 1 and len(todo) > 1:
        from concurrent.futures import as_completed
        from concurrent.futures.process import BrokenProcessPool

        try:
            with spawn_pool(workers) as pool:
                futures = {}
                queue = list(todo)
                while queue or futures:
                    while queue and len(futures) < 2 * workers and time.perf_counter() < deadline:
                        piece = queue.pop(0)
                        futures[pool.submit(compute_bounds, piece_json(piece), settings.as_json())] = piece
                    if not futures:
                        break
                    try:
                        future = next(as_completed(futures))
                    except KeyboardInterrupt:  # at once: the finished intervals are in the checkpoint
                        stop_pool(pool)
                        raise
                    piece = futures.pop(future)
                    checkpoint.add(interval_key(piece, settings), future.result())
                    report(piece)
        except BrokenProcessPool:  # a worker died (memory?): the rest in this process
            todo = [p for p in todo if interval_key(p, settings) not in checkpoint.done]
            workers = 1
    if workers <= 1 or len(todo) <= 1:
        for piece in todo:
            if interval_key(piece, settings) in checkpoint.done:
                continue
            if time.perf_counter() >= deadline:
                break
            checkpoint.add(interval_key(piece, settings), compute_bounds(piece_json(piece), settings.as_json()))
            report(piece)
