"""Checkpoints of a corpus-interval proof: the proved columns and the centre so far, written atomically.

A run that is interrupted resumes from ``interval_checkpoint.json`` in its output folder when the
corpus (sha256) and every setting are the same; the resumed run ends with the same certificate as an
uninterrupted one (the centre's next node is fitted from the recorded last offset, the columns are
proved in the same order with the same code).
"""

from __future__ import annotations

import json
import os
from fractions import Fraction
from pathlib import Path

from stumpcheck.numerics.corpus.interval.centre import Centre
from stumpcheck.numerics.precision import InputError

__all__ = ["CHECKPOINT_NAME", "save_checkpoint", "load_checkpoint"]

CHECKPOINT_NAME = "interval_checkpoint.json"


def _state(run, settings: dict) -> dict:
    centre = run.centre
    return {"settings": settings, "b_end": str(run.b_end), "columns": run.columns,
            "eta": str(run.eta), "eta_rule": getattr(run, "eta_rule", None),
            "start_search": getattr(run, "start_search", None),
            "centre": {"nodes": [[str(b), str(a)] for b, a in centre.nodes], "fitted": centre.fitted,
                       "offset": centre.offset}}


def save_checkpoint(run, settings: dict, folder) -> Path:
    """Write the run's state to ``folder``/interval_checkpoint.json (temporary file, then rename)."""
    path = Path(folder) / CHECKPOINT_NAME
    tmp = path.with_suffix(".json.tmp")
    with open(tmp, "w", encoding="utf-8") as handle:
        json.dump(_state(run, settings), handle, allow_nan=False)
    os.replace(tmp, path)
    return path


def load_checkpoint(folder, settings: dict, x, theta, *, threads=None):
    """(centre, columns, b_end, chosen) from a checkpoint of the same settings, or None if there is none;
    InputError if there is one for other settings or it is unreadable. ``chosen``: the step, its rule and
    the start search the run had chosen (:mod:`~stumpcheck.numerics.corpus.interval.start`), or None."""
    path = Path(folder) / CHECKPOINT_NAME
    if not path.exists():
        return None
    try:
        state = json.loads(path.read_text(encoding="utf-8"))
        recorded = state["settings"]
        nodes = [(Fraction(b), Fraction(a)) for b, a in state["centre"]["nodes"]]
        if not nodes:
            raise ValueError("the centre has no node")
        columns, b_end = state["columns"], Fraction(state["b_end"])
        offset, fitted = float(state["centre"]["offset"]), list(state["centre"]["fitted"])
        chosen = None
        if state.get("eta") is not None and state.get("eta_rule") is not None:
            chosen = (Fraction(state["eta"]), str(state["eta_rule"]), state.get("start_search"))
    except (OSError, ValueError, KeyError, TypeError) as exc:
        raise InputError(f"{path}: unreadable checkpoint ({exc}); remove it to start again") from None
    if recorded != settings:
        raise InputError(f"{path} is a checkpoint of another run (other corpus or settings); remove it or use "
                         "another --out")
    centre = Centre(x, theta, nodes[0][0], nodes=nodes, threads=threads)   # b_start: the first node (chosen or given)
    centre.offset, centre.fitted = offset, fitted
    return centre, columns, b_end, chosen
