"""The tube's interval bounds in worker processes: a piece serialised exactly, the bounds of many intervals
computed at once (on local processes or a Dask cluster), and the checkpoint of finished intervals (one JSON
line each, keyed by piece and settings) that lets an interrupted tube resume.

The bounds themselves are :func:`stumpcheck.numerics.certified.tube.piece.interval_bounds` (rigorous: the fast
float64 layer with Arb fallbacks, or Arb only, :mod:`stumpcheck.numerics.certified.tube.arithmetic`);
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
           "run_bounds"]


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


def interval_key(piece: ChebyshevPiece, settings: Settings, arithmetic: str = "fast") -> str:
    """The checkpoint key of one interval: a hash of its piece, the settings and the arithmetic of its integrals
    (so that a run in one arithmetic never resumes from the other's intervals)."""
    text = json.dumps([piece_json(piece), settings.as_json(), arithmetic], sort_keys=True)
    return hashlib.sha256(text.encode()).hexdigest()[:32]


def bound_bits(settings: Settings) -> int:
    """The working precision (bits) of an interval's integrals at the settings' digits."""
    return working_bits(settings.dps, 200, 200)


def compute_bounds(piece_data: dict, settings_data: dict, arithmetic: str = "fast") -> dict:
    """Worker entry point: the serialised :func:`interval_bounds` of one piece in ``arithmetic``, with the counts
    of the integrals by arithmetic (``counts``), or {"error": reason}."""
    from stumpcheck.numerics.certified.tube.arithmetic import Counts, check_arithmetic

    piece, settings = piece_from_json(piece_data), Settings.from_json(settings_data)
    counts = Counts()
    started = time.process_time()
    try:
        out = interval_bounds(piece, settings, bound_bits(settings), check_arithmetic(arithmetic), counts)
    except ArithmeticError as exc:
        return {"error": str(exc)[:300], "cpu": time.process_time() - started}
    return {"p": [ball_to_json(x) for x in out["p"]], "m": [ball_to_json(x) for x in out["m"]],
            "delta": ball_to_json(out["delta"]), "g": ball_to_json(out["g"]),
            "hessians": [[ball_to_json(x) for x in h] for h in out["hessians"]], "counts": counts.as_json(),
            "cpu": time.process_time() - started}


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


def run_bounds(pieces, settings, checkpoint, workers, deadline, progress, s_end, arithmetic: str = "fast"):
    """Bounds for every piece not in the checkpoint, each added to it as its turn comes (in the order of the
    pieces; no new piece is sent out after the deadline), on
    :func:`stumpcheck.numerics.scheduling.for_workers` (``workers``): the command's scheduler (a Dask
    cluster), else this process or ``workers`` local processes. Ctrl-C ends local workers at once; the
    intervals already added stay in the checkpoint. A local worker that dies (memory?) leaves the rest to
    this process."""
    from concurrent.futures.process import BrokenProcessPool

    from stumpcheck.numerics.scheduling import InProcess, for_workers

    todo = [p for p in pieces if interval_key(p, settings, arithmetic) not in checkpoint.done]
    done_s = [0.0]

    def report(piece):
        done_s[0] += piece.s1 - piece.s0
        if progress is not None:
            progress(min(1.0, done_s[0] / s_end))

    for p in pieces:
        if interval_key(p, settings, arithmetic) in checkpoint.done:
            report(p)

    def fill(scheduler) -> None:
        left = [p for p in todo if interval_key(p, settings, arithmetic) not in checkpoint.done]

        def jobs():
            for piece in left:
                if time.perf_counter() >= deadline:
                    return
                yield piece_json(piece), settings.as_json(), arithmetic

        for piece, bounds in zip(left, scheduler.imap(compute_bounds, jobs())):
            checkpoint.add(interval_key(piece, settings, arithmetic), bounds)
            report(piece)

    try:
        with for_workers(workers if len(todo) > 1 else 1) as scheduler:
            fill(scheduler)
    except BrokenProcessPool:
        fill(InProcess())
