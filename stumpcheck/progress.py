"""A progress bar on stderr for work measured as a fraction done in [0, 1] (the flows' log-time progress)."""

from __future__ import annotations

import sys
from contextlib import contextmanager

__all__ = ["fraction_bar"]


@contextmanager
def fraction_bar(desc: str, *, quiet: bool = False, leave: bool = True):
    """Yield ``progress(fraction)`` drawing a tqdm bar of 1000 ticks on stderr; the bar is closed on exit."""
    from tqdm import tqdm

    bar = tqdm(total=1000, desc=desc, disable=quiet, file=sys.stderr, leave=leave,
               bar_format="{l_bar}{bar}| {elapsed}<{remaining}", mininterval=1.0)
    try:
        yield lambda fraction: bar.update(int(fraction * 1000) - bar.n)
    finally:
        bar.close()
