"""Progress bars on stderr, drawn only when stderr is a terminal.

Every command's bars go through :func:`progress_bar` (or :func:`fraction_bar`
for work measured as a fraction done, the flows' log-time progress). A bar is
drawn when --quiet is not given *and* stderr is a terminal: redirected to a
file, a pipe or a log, stderr receives no carriage-return redraws, only the
commands' own lines (errors, interruption notices).
"""

from __future__ import annotations

import sys
from contextlib import contextmanager

__all__ = ["bars_shown", "fraction_bar", "progress_bar"]


def bars_shown(quiet: bool | None = False, stream=None) -> bool:
    """True when a progress bar is to be drawn on ``stream`` (default stderr): not quiet, and a terminal."""
    if quiet:
        return False
    stream = sys.stderr if stream is None else stream
    try:
        return bool(stream.isatty())
    except (AttributeError, ValueError, OSError):  # no isatty, or a closed stream
        return False


def progress_bar(*, quiet: bool | None = False, **options):
    """A tqdm bar on stderr (``options`` are tqdm's), disabled unless :func:`bars_shown`."""
    from tqdm import tqdm

    return tqdm(file=sys.stderr, disable=not bars_shown(quiet), **options)


@contextmanager
def fraction_bar(desc: str, *, quiet: bool | None = False, leave: bool = True):
    """Yield ``progress(fraction)`` drawing a bar of 1000 ticks on stderr (a terminal); the bar is closed on exit."""
    bar = progress_bar(quiet=quiet, total=1000, desc=desc, leave=leave,
                       bar_format="{l_bar}{bar}| {elapsed}<{remaining}", mininterval=1.0)
    try:
        yield lambda fraction: bar.update(int(fraction * 1000) - bar.n)
    finally:
        bar.close()
