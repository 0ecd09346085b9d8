"""JSON that every reader accepts: finite numbers only (NaN and ±inf become null).

Used by every file the toolkit writes (flow.json, trajectory.json,
results.json): numpy scalars and arrays become Python numbers and lists,
tuples become lists, dictionary keys become strings.
"""

from __future__ import annotations

import math

__all__ = ["finite_json"]


def finite_json(value):
    """``value`` with NaN/±inf replaced by None, tuples by lists, numpy scalars and arrays by Python ones."""
    if isinstance(value, dict):
        return {str(k): finite_json(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [finite_json(v) for v in value]
    if isinstance(value, bool) or value is None or isinstance(value, str):
        return value
    if isinstance(value, int):
        return value
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    tolist = getattr(value, "tolist", None)
    if callable(tolist):
        return finite_json(tolist())
    try:
        number = float(value)
    except (TypeError, ValueError):
        return str(value)
    return number if math.isfinite(number) else None
