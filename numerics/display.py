"""How results show themselves: a short text, a small HTML table, JSON-ready dicts, CSV rows, DataFrames.

The result classes (:class:`~stumpcheck.numerics.flow.integrate.FlowSolution`,
:class:`~stumpcheck.numerics.flow.run.FlowRun`, :class:`~stumpcheck.numerics.corpus.gd.TrainResult`,
:class:`~stumpcheck.numerics.corpus.fresh.FreshResult`, :class:`~stumpcheck.claims.result.ClaimResult`)
take :class:`Display` as a base and define three methods:

* ``_display_rows()``: the summary, a list of (label, text) pairs, the status first; ``repr()`` joins them
  as ``Name(label: text; …)`` wrapped at :data:`WIDTH` characters, ``_repr_html_`` (what a notebook shows)
  puts them in a two-column ``<table>`` (a row ``arrays`` gives the shapes of the arrays, never their values);
* ``to_dict()``: every field, JSON-ready (:func:`~stumpcheck.numerics.json_output.finite_json`: finite
  numbers only, NaN and ±inf as null, arrays as lists), so that ``json.dumps(d, allow_nan=False)`` works;
* ``_display_columns()``: the rows of :meth:`Display.to_csv` and :meth:`Display.to_dataframe`, a dict of
  equal-length 1-D columns (None: the result has no rows, and both raise
  :class:`~stumpcheck.numerics.precision.InputError`).

CSV: a header line, then one line a row; integers as integers, floats by ``repr`` (the shortest text that
reads back to the same double, so a column round-trips exactly), NaN as ``nan``. pandas is optional: without
it :meth:`Display.to_dataframe` is an :class:`~stumpcheck.numerics.precision.InputError` that names it.
"""

from __future__ import annotations

import csv
import html
import math
import numbers
from pathlib import Path

from stumpcheck.numerics.precision import InputError

__all__ = ["Display", "WIDTH", "last", "brief_text", "figure_text", "shape_text", "html_table", "write_columns_csv",
           "columns_dataframe"]

#: Width at which a result's ``repr`` wraps its ``label=text`` items onto a new line.
WIDTH = 100


def figure_text(value, digits: int = 6) -> str:
    """A number as short text: ints as they are, floats to ``digits`` significant digits (``nan``/``inf`` too)."""
    if value is None:
        return "—"
    if isinstance(value, bool) or isinstance(value, str):
        return str(value)
    if isinstance(value, numbers.Integral):
        return str(int(value))
    try:
        number = float(value)
    except (TypeError, ValueError):
        return str(value)
    if math.isnan(number) or math.isinf(number):
        return str(number)
    return f"{number:.{digits}g}"


def last(values):
    """The last of ``values``, None when there is none (so that a result with empty arrays still shows itself)."""
    return values[-1] if len(values) else None


def brief_text(text, limit: int = 60, *, clause: bool = True) -> str:
    """``text`` (with ``clause``: up to its first ``:`` or ``;``) cut to ``limit`` characters (an ellipsis marks
    a cut)."""
    text = str(text)
    for mark in (": ", "; ") if clause else ():
        text = text.split(mark)[0]
    return text if len(text) <= limit else text[:limit - 1].rstrip() + "…"


def shape_text(arrays: dict) -> str:
    """``name: shape`` of each array, names of one shape grouped: ``t, a, b: (412,); grad: (412, 2)``."""
    groups: dict[tuple, list[str]] = {}
    for name, value in arrays.items():
        shape = tuple(getattr(value, "shape", (len(value),)))
        groups.setdefault(shape, []).append(name)
    return "; ".join(f"{', '.join(names)}: {shape}" for shape, names in groups.items())


def html_table(title: str, rows) -> str:
    """A two-column HTML ``<table>`` captioned ``title``, one ``<tr>`` per (label, text); every text escaped."""
    body = "".join(f"<tr><th style=\"text-align:left\">{html.escape(str(label))}</th>"
                   f"<td style=\"text-align:left\">{html.escape(str(text))}</td></tr>" for label, text in rows)
    return (f"<table class=\"stumpcheck-result\"><caption style=\"text-align:left\"><b>{html.escape(title)}</b>"
            f"</caption>{body}</table>")


def _repr_text(title: str, rows) -> str:
    items = [f"{label}: {text}" for label, text in rows]
    lines, line = [], f"{title}("
    indent = " " * len(line)
    for k, item in enumerate(items):
        piece = item + ("; " if k < len(items) - 1 else ")")
        if len(line) + len(piece) > WIDTH and line.strip() not in ("", f"{title}("):
            lines.append(line.rstrip())
            line = indent
        line += piece
    if not items:
        line += ")"
    lines.append(line)
    return "\n".join(lines)


def _cell(value) -> object:
    if isinstance(value, bool):
        return str(value)
    if isinstance(value, numbers.Integral):
        return int(value)
    if isinstance(value, numbers.Real) or hasattr(value, "__float__"):
        return repr(float(value))
    return "" if value is None else str(value)


def _checked_columns(columns, name: str) -> dict:
    if columns is None:
        raise InputError(f"a {name} has no rows to write (see to_dict)")
    lengths = {len(values) for values in columns.values()}
    if len(lengths) > 1:
        raise InputError(f"the columns of a {name} differ in length: {sorted(lengths)}")
    return columns


def write_columns_csv(columns: dict, path) -> Path:
    """Write equal-length ``columns`` (name → 1-D values) to ``path`` as CSV (header, then one line a row)."""
    path = Path(path)
    with path.open("w", newline="", encoding="utf-8") as handle:
        writer = csv.writer(handle)
        writer.writerow(list(columns))
        for row in zip(*columns.values()):
            writer.writerow([_cell(v) for v in row])
    return path


def columns_dataframe(columns: dict):
    """A pandas DataFrame of ``columns``; InputError naming pandas when it is not installed."""
    try:
        import pandas
    except ImportError:
        raise InputError("to_dataframe needs pandas, which is not installed (pip install pandas); "
                         "to_csv and to_dict need nothing more") from None
    return pandas.DataFrame(dict(columns))


class Display:
    """Base of the result classes: ``repr``, the notebook's HTML table, CSV and DataFrame rows (see the module)."""

    def _display_rows(self) -> list:
        raise NotImplementedError

    def _display_columns(self):
        return None

    def _display_title(self) -> str:
        return type(self).__name__

    def __repr__(self) -> str:
        return _repr_text(self._display_title(), self._display_rows())

    def _repr_html_(self) -> str:
        return html_table(self._display_title(), self._display_rows())

    def to_csv(self, path) -> Path:
        """Write the result's rows to ``path`` as CSV (header, then one line a row; floats by ``repr``); the path.

        The columns are those of :meth:`to_dataframe` (docs/api.md lists them for each result).
        """
        return write_columns_csv(_checked_columns(self._display_columns(), self._display_title()), path)

    def to_dataframe(self):
        """The result's rows as a :class:`pandas.DataFrame` (pandas is optional: InputError naming it if absent)."""
        return columns_dataframe(_checked_columns(self._display_columns(), self._display_title()))
