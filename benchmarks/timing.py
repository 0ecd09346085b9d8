"""Timing rule shared by the benchmarks: the best of a few runs, one run if it is slow."""

from __future__ import annotations

import math
import time

__all__ = ["best_of", "interleaved"]


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


def interleaved(functions, repeats: int):
    """(best seconds of each, last result of each): ``repeats`` rounds, one run of every function per round,
    so that a change of machine load falls on all of them alike."""
    best = [math.inf] * len(functions)
    results = [None] * len(functions)
    for _ in range(repeats):
        for i, fn in enumerate(functions):
            start = time.perf_counter()
            results[i] = fn()
            best[i] = min(best[i], time.perf_counter() - start)
    return best, results
