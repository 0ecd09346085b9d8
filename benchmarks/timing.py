"""Timing rule shared by the benchmarks: the best of a few runs, one run if it is slow."""

from __future__ import annotations

import time

__all__ = ["best_of"]


def best_of(fn, *, repeats: int = 3, slow_seconds: float = 20.0):
    """(best seconds, last result, runs): up to ``repeats`` runs of ``fn()``, just one if the
    first takes longer than ``slow_seconds``."""
    best, result, runs = None, None, 0
    while runs < repeats:
        start = time.perf_counter()
        result = fn()
        seconds = time.perf_counter() - start
        runs += 1
        best = seconds if best is None else min(best, seconds)
        if seconds > slow_seconds:
            break
    return best, result, runs
