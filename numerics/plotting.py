"""matplotlib for the toolkit's figures: pyplot on the user's backend (Agg only when none was chosen), and saving.

Every public plot function (:func:`~stumpcheck.numerics.flow.report.plot_flow`,
:func:`~stumpcheck.numerics.corpus.training_report.plot_training`,
:func:`~stumpcheck.numerics.population.error_profile.plot_error_profile`, :func:`stumpcheck.claims.figures.plot_claim`)
returns :class:`matplotlib.figure.Figure` objects made by pyplot, so that a notebook shows them and a script can
``fig.savefig`` or ``plt.show()`` them; close one with ``matplotlib.pyplot.close(fig)``. matplotlib is imported
inside the functions (``import stumpcheck`` stays light). The backend is left alone when the user chose one
(``MPLBACKEND``, as a Jupyter kernel sets it; a ``backend`` in matplotlibrc; ``matplotlib.use``; or pyplot
already imported); otherwise it is set to Agg, which draws without a display. The ``write_*`` functions save
the same figures as PNG files through :func:`save_figure`, which closes them.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

__all__ = ["pyplot", "backend_chosen", "save_figure", "light_log_axes"]


def backend_chosen() -> bool:
    """True when a matplotlib backend was chosen by the user (or pyplot is already in use), else False."""
    import matplotlib

    if "matplotlib.pyplot" in sys.modules or os.environ.get("MPLBACKEND"):
        return True
    requested = getattr(matplotlib.rcParams, "_get_backend_or_none", None)  # read without resolving "auto"
    if requested is not None:
        return requested() is not None
    sentinel = getattr(matplotlib.rcsetup, "_auto_backend_sentinel", None)
    return sentinel is None or dict.get(matplotlib.rcParams, "backend", sentinel) is not sentinel


def pyplot():
    """``matplotlib.pyplot``, on the user's backend when one was chosen (:func:`backend_chosen`), else on Agg."""
    import matplotlib

    if not backend_chosen():
        matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def save_figure(fig, path, *, dpi: int = 110, tight: bool = True) -> Path:
    """Save ``fig`` to ``path`` (PNG at ``dpi``; ``tight``: :meth:`~matplotlib.figure.Figure.tight_layout`
    first) and close it; the path."""
    path = Path(path)
    if tight:
        fig.tight_layout()
    fig.savefig(path, dpi=dpi)
    pyplot().close(fig)
    return path


#: Unicode superscripts of the exponent digits, for tick labels drawn without mathtext.
_SUPERSCRIPT = str.maketrans("0123456789-", "⁰¹²³⁴⁵⁶⁷⁸⁹⁻")
_DECADE = r"^\$\\mathdefault\{(?:(-?[0-9.]+)\\times)?10\^\{(-?[0-9]+)\}\}\$$"
_PLAIN = r"^\$\\mathdefault\{(-?[0-9.]+)\}\$$"


def _plain_tick_text(text: str) -> str:
    """A log axis' mathtext tick label (``$\\mathdefault{10^{-6}}$``, ``$\\mathdefault{2\\times10^{3}}$``)
    as plain Unicode text (``10⁻⁶``, ``2×10³``); any other label unchanged."""
    import re

    decade = re.match(_DECADE, text)
    if decade:
        coefficient, exponent = decade.groups()
        prefix = "" if coefficient is None else coefficient.replace("-", "−") + "×"
        return f"{prefix}10{exponent.translate(_SUPERSCRIPT)}"
    plain = re.match(_PLAIN, text)
    return plain.group(1).replace("-", "−") if plain else text


def _plain_log_formatter(**kwargs):
    """matplotlib's :class:`~matplotlib.ticker.LogFormatterSciNotation` with its labels as plain text."""
    from matplotlib.ticker import LogFormatterSciNotation

    class PlainLogFormatter(LogFormatterSciNotation):
        def __call__(self, x, pos=None):
            return _plain_tick_text(super().__call__(x, pos))

    return PlainLogFormatter(**kwargs)


def light_log_axes(ax, *, minor_decades: float = 3.0) -> None:
    """Make the log axes of ``ax`` cheap to draw, after its data are plotted: tick labels as plain Unicode
    text (``10⁶`` rather than mathtext, whose parsing was most of a flow figure's drawing time) and no minor
    ticks on an axis whose view spans more than ``minor_decades`` decades (there they carry no label, and
    each is an artist to draw). Linear axes are left alone."""
    from matplotlib.ticker import NullLocator

    for axis, limits in ((ax.xaxis, ax.get_xlim()), (ax.yaxis, ax.get_ylim())):
        if axis.get_scale() != "log":
            continue
        axis.set_major_formatter(_plain_log_formatter())
        low, high = sorted(limits)
        if low > 0 and high / low > 10.0**minor_decades:
            axis.set_minor_locator(NullLocator())
        else:
            axis.set_minor_formatter(_plain_log_formatter(labelOnlyBase=False))
