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

__all__ = ["pyplot", "backend_chosen", "save_figure"]


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
