"""How results show themselves (stumpcheck.numerics.display) and the public plot functions.

* the reprs are short (bounded length and lines, no arrays dumped) and informative (status and key figures);
* ``_repr_html_`` is a small table; ``to_dict`` goes through ``json.dumps(allow_nan=False)`` and back;
  ``to_csv`` writes the rows (floats read back exactly); ``to_dataframe`` names pandas when it is missing;
* an Enclosure's repr gives mid and rad at full precision (they read back to the same binary numbers);
* the plot functions return figures with the expected axes and lines, on the user's backend when one was
  chosen; the ``write_*`` functions and the claim checks write the same PNG files as the figures saved again.
"""

from __future__ import annotations

import csv
import json
import math
import re
import subprocess
import sys
from pathlib import Path

import mpmath
import numpy as np
import pytest

from stumpcheck import api
from stumpcheck.claims.result import ClaimResult
from stumpcheck.numerics.display import brief_text, figure_text, shape_text
from stumpcheck.numerics.flow.report import FLOW_PANELS
from stumpcheck.numerics.flow.run import FLOW_COLUMNS
from stumpcheck.numerics.plotting import save_figure
from stumpcheck.numerics.precision import InputError

ROOT = Path(__file__).resolve().parent.parent
#: Longest repr and most lines any result may show (a FlowSolution printed 36 KB of arrays before).
MAX_REPR, MAX_LINES = 800, 8


@pytest.fixture(scope="module")
def solution():
    return api.integrate_flow(10.0, 10.0, 1e4)


@pytest.fixture(scope="module")
def run():
    return api.run_population_flow(10.0, 10.0, 1e3)


@pytest.fixture(scope="module")
def trained():
    corpus = api.make_corpus(8, 16, seed=0)
    return api.train_gd(corpus.x, corpus.theta, steps=30)


@pytest.fixture(scope="module")
def fresh():
    return api.fresh_context_errors(20.0, 10.0, 0.5, 64, reps=100)


def _claim(**changes):
    fields = dict(id="C0", statement="a statement", figure="x" * 1000, tolerance="≤ 1", status="FAIL",
                  evidence="sampled", seconds=1.25,
                  details={"values": np.array([1.0, np.nan, np.inf]), "seed": np.int64(3), "pair": (1, 2)})
    return ClaimResult(**dict(fields, **changes))


def _short(text: str) -> None:
    assert len(text) <= MAX_REPR and text.count("\n") < MAX_LINES, text


def _table_rows(html: str) -> list[tuple[str, str]]:
    assert html.startswith("<table") and html.endswith("</table>")
    return re.findall(r"<tr><th[^>]*>(.*?)</th><td[^>]*>(.*?)</td></tr>", html)


def _read_csv(path) -> tuple[list[str], list[list[str]]]:
    with open(path, newline="", encoding="utf-8") as handle:
        rows = list(csv.reader(handle))
    return rows[0], rows[1:]


def _json_round_trip(result) -> dict:
    data = result.to_dict()
    assert json.loads(json.dumps(data, allow_nan=False)) == data
    return data


# ---------------------------------------------------------------------------------------------------
# repr, HTML, to_dict, to_csv, to_dataframe


def test_flow_solution_shows_its_status_and_final_state_not_its_arrays(solution):
    text = repr(solution)
    _short(text)
    assert text.startswith("FlowSolution(status: SUCCESS;")
    # the final state to the digits the rtol and rtol/10 solves earn, with the estimate (not 12 digits of a float)
    final_b = f"{solution.settings['final_b']} (estimated error {solution.settings['final_b_error']:.1e})"
    assert final_b in text and solution.settings["final_a"] in text
    assert figure_text(solution.b[-1], 12) not in text
    assert f"grad: ({len(solution.t)}, 2)" in text and "scipy LSODA" in text
    assert repr(float(solution.b[len(solution.b) // 2])) not in text  # no array values
    rows = dict(_table_rows(solution._repr_html_()))
    assert rows["status"] == "SUCCESS" and rows["final b"] == final_b
    assert "(goal 1e-09)" in rows["a_posteriori_rel_error_b"]


def test_flow_solution_to_dict_and_csv(solution, tmp_path):
    data = _json_round_trip(solution)
    assert data["t"] == solution.t.tolist() and data["grad"] == solution.grad.tolist()
    assert data["status"] == "SUCCESS" and data["settings"]["rtol"] == 1e-9
    header, rows = _read_csv(solution.to_csv(tmp_path / "flow.csv"))
    assert header == ["t", "a", "b", "loss", "grad_a", "grad_b"] and len(rows) == len(solution.t)
    assert [float(r[2]) for r in rows] == solution.b.tolist()  # repr of a float reads back exactly
    assert [float(r[5]) for r in rows] == solution.grad[:, 1].tolist()


def test_non_finite_numbers_become_null(solution):
    from dataclasses import replace

    unchecked = replace(solution, a_posteriori_rel_error_b=math.nan)
    assert "a_posteriori_rel_error_b: nan" in repr(unchecked)
    assert _json_round_trip(unchecked)["a_posteriori_rel_error_b"] is None
    data = _json_round_trip(_claim())
    assert data["details"] == {"values": [1.0, None, None], "seed": 3, "pair": [1, 2]}


def test_flow_run_shows_its_fits_and_writes_its_columns(run, tmp_path):
    text = repr(run)
    _short(text)
    assert text.startswith("FlowRun(status: SUCCESS;") and "scale_exponent" in text and "error_exponent" in text
    assert f"calibration_residual: ({len(run.t)},)" in text
    data = _json_round_trip(run)
    assert data["sup_error_interior"] == run.sup_error_interior.tolist() and data["fits"]["scale_exponent"]
    header, rows = _read_csv(run.to_csv(tmp_path / "run.csv"))
    assert tuple(header) == FLOW_COLUMNS and len(rows) == len(run.t)
    assert [float(r[6]) for r in rows] == run.sup_error_interior.tolist()


def test_training_result(trained, tmp_path):
    text = repr(trained)
    _short(text)
    assert text.startswith("TrainResult(stopped_because: steps; steps: 30;")
    assert figure_text(trained.b, 12) in text and "arrays: step, t, a, b, loss: (31,)" in text
    rows = dict(_table_rows(trained._repr_html_()))
    assert rows["loss L̂"] == figure_text(trained.loss, 6) and rows["eta"].startswith(figure_text(trained.eta, 6))
    data = _json_round_trip(trained)
    assert data["trajectory"]["step"] == list(range(31)) and data["loss"] == trained.loss
    header, rows = _read_csv(trained.to_csv(tmp_path / "trajectory.csv"))
    assert header == ["step", "t", "a", "b", "loss"] and [r[0] for r in rows] == [str(k) for k in range(31)]
    assert [float(r[4]) for r in rows] == trained.trajectory["loss"].tolist()


def test_fresh_result_is_one_row(fresh, tmp_path):
    text = repr(fresh)
    _short(text)
    assert figure_text(fresh.mean_abs_error, 6) in text and "N = 64" in text and "seed 0" in text
    assert _json_round_trip(fresh) == fresh.as_dict()
    header, rows = _read_csv(fresh.to_csv(tmp_path / "fresh.csv"))
    assert len(rows) == 1 and dict(zip(header, rows[0]))["mean_abs_error"] == repr(fresh.mean_abs_error)


def test_claim_result_cuts_long_texts_and_has_no_rows(tmp_path):
    result = _claim()
    text = repr(result)
    _short(text)
    assert text.startswith("ClaimResult C0(status: FAIL; evidence: sampled; seconds: 1.25;")
    assert "x" * 199 + "…" in text and "x" * 201 not in text
    assert dict(_table_rows(result._repr_html_()))["status"] == "FAIL"
    assert len(_json_round_trip(result)["figure"]) == 1000
    with pytest.raises(InputError, match="no rows"):
        result.to_csv(tmp_path / "claim.csv")


def test_html_escapes_its_texts():
    rows = _table_rows(_claim(statement="a < b & c")._repr_html_())
    assert ("statement", "a &lt; b &amp; c") in rows


def test_to_dataframe_names_pandas_when_it_is_missing(solution, monkeypatch):
    try:
        import pandas  # noqa: F401
    except ImportError:
        pass
    else:
        frame = solution.to_dataframe()
        assert list(frame.columns) == ["t", "a", "b", "loss", "grad_a", "grad_b"] and len(frame) == len(solution.t)
        assert frame["b"].tolist() == solution.b.tolist()
    monkeypatch.setitem(sys.modules, "pandas", None)  # import pandas now raises ImportError
    with pytest.raises(InputError, match=r"to_dataframe needs pandas.*pip install pandas"):
        solution.to_dataframe()


def test_enclosure_repr_keeps_full_precision_and_str_stays_the_ball():
    ball = api.certified_error(25, 20, "0.95", dps=30)
    text = repr(ball)
    _short(text)
    assert str(ball).startswith("[0.0173041141598585336360459429548 +/- ")
    mid = re.search(r"mid='([^']*)'", text).group(1)
    rad = re.search(r"rad='([^']*)'", text).group(1)
    assert len(mid) > 40 and f"prec_bits={ball.prec_bits}" in text and "evidence='certified'" in text
    for shown, value in ((mid, ball.mid), (rad, ball.rad)):
        with mpmath.workprec(value._mpf_[3]):  # read back at the mantissa's bits: the same binary number
            assert mpmath.mpf(shown) == value
    rows = dict(_table_rows(ball._repr_html_()))
    assert rows["ball"] == str(ball) and rows["mid"] == mid and rows["working precision"] == f"{ball.prec_bits} bits"


def test_enclosure_repr_of_a_thousand_bit_ball():
    from flint import arb, ctx

    from stumpcheck.numerics.certified.enclosures import Enclosure

    with ctx.workprec(1000):
        root = Enclosure.from_arb(arb(2).sqrt(), prec_bits=1000)
    mid = re.search(r"mid='([^']*)'", repr(root)).group(1)
    assert 300 <= len(mid) <= 305
    with mpmath.workprec(root.mid._mpf_[3]):
        assert mpmath.mpf(mid) == root.mid
    assert "mid='nan'" in repr(Enclosure.from_arb(arb.nan(), prec_bits=53))


def test_display_helpers():
    assert figure_text(np.float64(0.000123456789), 3) == "0.000123" and figure_text(np.int64(7)) == "7"
    assert figure_text(None) == "—" and figure_text(math.inf) == "inf"
    assert brief_text("rule: details; more") == "rule" and brief_text("x" * 70, 10) == "x" * 9 + "…"
    assert brief_text("diverged: at step 3", clause=False) == "diverged: at step 3"
    assert shape_text({"t": np.zeros(3), "a": np.zeros(3), "g": np.zeros((3, 2))}) == "t, a: (3,); g: (3, 2)"


# ---------------------------------------------------------------------------------------------------
# plot functions and the files they write


def test_plot_flow_of_a_solution_and_of_a_run(solution, run):
    figure = api.plot_flow(solution)
    assert [ax.get_ylabel() for ax in figure.axes] == ["b", "residual", "L·b²"]
    b_line = figure.axes[0].get_lines()[0]
    positive = solution.t > 0
    assert np.array_equal(b_line.get_xdata(), solution.t[positive]) and np.array_equal(b_line.get_ydata(),
                                                                                        solution.b[positive])
    assert len(figure.axes[1].get_lines()) == 3
    figure = api.plot_flow(run)
    assert [ax.get_ylabel() for ax in figure.axes] == ["b", "residual", "L·b²", "sup interior |e|"]
    assert np.array_equal(figure.axes[3].get_lines()[0].get_ydata(), run.sup_error_interior[run.t > 0])
    assert len(api.plot_flow(run, panels=("normalised_loss",)).axes) == 1
    with pytest.raises(InputError, match="panels must be some of"):
        api.plot_flow(solution, panels=("interior_error",))
    with pytest.raises(InputError, match="needs a FlowRun or a FlowSolution"):
        api.plot_flow({"t": [0, 1]})


def test_write_flow_outputs_saves_the_run_and_its_figures(run, tmp_path):
    paths = api.write_flow_outputs(run, tmp_path / "out", provenance={"machine": "test"})
    assert [p.name for p in paths] == ["flow.csv", "flow.json"] + [f"{name}.png" for name in FLOW_PANELS]
    assert (tmp_path / "out" / "flow.csv").read_text() == run.to_csv(tmp_path / "again.csv").read_text()
    assert json.loads((tmp_path / "out" / "flow.json").read_text()) == dict(run.to_dict(), provenance={"machine": "test"})
    for name in FLOW_PANELS:
        again = save_figure(api.plot_flow(run, panels=(name,)), tmp_path / f"again_{name}.png", tight=False)
        assert (tmp_path / "out" / f"{name}.png").read_bytes() == again.read_bytes(), name


def test_plot_training_and_write_training_outputs(trained, tmp_path):
    figure = api.plot_training(trained)
    top, bottom = figure.axes
    assert top.get_yscale() == "log" and np.array_equal(top.get_lines()[0].get_ydata(), trained.trajectory["loss"])
    assert [line.get_label() for line in bottom.get_lines()] == ["b (attention scale)", "a (label score)"]
    with pytest.raises(InputError, match="needs a TrainResult"):
        api.plot_training(trained.trajectory)
    paths = api.write_training_outputs(trained, tmp_path, corpus={"m": 8, "n": 16, "seed": 0}, provenance={})
    assert [p.name for p in paths] == ["trajectory.csv", "trajectory.json", "frozen.json", "training.png"]
    assert paths[0].read_text() == trained.to_csv(tmp_path / "again.csv").read_text()
    again = save_figure(api.plot_training(trained), tmp_path / "again.png")
    assert paths[3].read_bytes() == again.read_bytes()


def test_plot_error_profile_draws_the_float64_error():
    from stumpcheck.numerics.population.error_profile import error_profile

    figure = api.plot_error_profile(25.0, 20.0, estimator=["one-head", "pooled"])
    left, right = figure.axes
    assert left.get_legend_handles_labels()[1] == ["one-head", "pooled"]
    theta, error = (np.asarray(v) for v in (left.get_lines()[0].get_xdata(), left.get_lines()[0].get_ydata()))
    assert theta[0] == 0.0 and theta[-1] == 1.0 and np.all(np.diff(theta) > 0)
    assert np.array_equal((theta, error), error_profile(25.0, 20.0))
    k = int(np.argmin(abs(theta - 0.95)))
    reference = api.error(25, 20, float(theta[k]), dps=30)
    assert abs(error[k] - float(reference)) <= 1e-12
    assert right.get_xscale() == "log" and right.get_xlabel() == "1 − θ"
    assert np.sum((1 - theta > 20.0 ** -3 / 10) & (1 - theta < 20.0 ** -3 * 10)) >= 20  # the layer at 1 is drawn
    assert len(api.plot_error_profile(10, 10, near_one=False).axes) == 1
    for bad in ({"estimator": "three-head"}, {"points": 1}):
        with pytest.raises(InputError):
            api.plot_error_profile(25.0, 20.0, **bad)
    with pytest.raises(InputError, match="b must be > 0"):
        api.plot_error_profile(25.0, -1.0)


def test_plot_claim_draws_what_check_c5_wrote(tmp_path, monkeypatch):
    from stumpcheck.claims import c5_interval
    from stumpcheck.claims.c5 import check_c5

    monkeypatch.setitem(c5_interval.INTERVAL_SETTINGS, "quick", {"sizes": (64,), "corpora": 1})
    result = check_c5(quick=True, seed=0, out_dir=tmp_path)
    figures = api.plot_claim(result)
    assert list(figures) == result.details["plots"] == ["c5_gradient_error.png", "c5_certified_scale.png",
                                                        "c5_trajectory.png"]
    for name, figure in figures.items():
        again = save_figure(figure, tmp_path / f"again_{name}", dpi=100, tight=False)
        assert (tmp_path / name).read_bytes() == again.read_bytes(), name


@pytest.fixture
def small_c7_c8(monkeypatch):
    from stumpcheck.claims import boundary

    monkeypatch.setitem(boundary.C7_C8_SETTINGS, "quick", {"b": (10.0, 100.0, 1000.0), "N": (16, 64, 256), "reps": 64})


@pytest.mark.parametrize("claim, name", [("c7", "c7_boundary.png"), ("c8", "c8_symmetrized.png")])
def test_plot_claim_draws_what_check_c7_and_c8_wrote(claim, name, small_c7_c8, tmp_path):
    from stumpcheck.claims import boundary

    result = getattr(boundary, f"check_{claim}")(quick=True, seed=0, out_dir=tmp_path)
    figures = api.plot_claim(result)
    assert list(figures) == result.details["plots"] == [name]
    again = save_figure(figures[name], tmp_path / "again.png", tight=False)
    assert (tmp_path / name).read_bytes() == again.read_bytes()
    assert [ax.get_xscale() for ax in api.plot_claim(result)[name].axes] == ["log", "log"]


def test_plot_claim_draws_what_check_c6_wrote(monkeypatch, tmp_path):
    from stumpcheck.claims import c6
    from tests.test_claim_c6 import NS, _synthetic_cell

    monkeypatch.setitem(c6.C6_SETTINGS, "quick", dict(c6.C6_SETTINGS["quick"], sizes=(64, 128, 256),
                                                      mechanism_sizes=(64, 128, 256), control_sizes=(64, 128),
                                                      reps=4, bootstrap=10, N=tuple(int(N) for N in NS[::3])))
    monkeypatch.setattr(c6, "c6_cell", _synthetic_cell(1.0))
    monkeypatch.setattr("stumpcheck.claims.c6_controls.FIXED_SCALES", (32.0,))
    result = c6.check_c6(quick=True, seed=0, out_dir=tmp_path, workers=1)
    figures = api.plot_claim(result)
    assert list(figures) == result.details["plots"] == ["c6_rates.png", "c6_controls.png"]
    for name, figure in figures.items():
        again = save_figure(figure, tmp_path / f"again_{name}", dpi=80)
        assert (tmp_path / name).read_bytes() == again.read_bytes(), name


def test_plot_claim_refuses_claims_without_figures():
    with pytest.raises(InputError, match="C9 has no figure"):
        api.plot_claim(_claim(id="C9"))
    with pytest.raises(InputError, match="needs a ClaimResult"):
        api.plot_claim({"id": "C5"})


_BACKEND_PROBE = """
import json, sys
import matplotlib
{choose}
from stumpcheck.api import integrate_flow, plot_flow
figure = plot_flow(integrate_flow(10.0, 10.0, 10.0))
print(json.dumps([matplotlib.get_backend().lower(), type(figure).__name__]))
"""


@pytest.mark.parametrize("choose, env, backend", [
    ("", {}, "agg"),                                   # nothing chosen: Agg, drawing without a display
    ("", {"MPLBACKEND": "svg"}, "svg"),                # chosen by the environment (a Jupyter kernel sets it)
    ("matplotlib.use('pdf')", {}, "pdf"),              # chosen in the program
])
def test_the_users_backend_is_kept(choose, env, backend):
    import os

    environment = {k: v for k, v in os.environ.items() if k != "MPLBACKEND"} | env
    done = subprocess.run([sys.executable, "-c", _BACKEND_PROBE.format(choose=choose)], capture_output=True,
                          text=True, cwd=ROOT, env=environment, timeout=300)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout.strip().splitlines()[-1]) == [backend, "Figure"]


def test_the_plot_functions_docstring_examples_run():
    import doctest

    from stumpcheck.numerics.corpus import training_report
    from stumpcheck.numerics.flow import report
    from stumpcheck.numerics.population import error_profile

    for module in (report, training_report, error_profile):
        result = doctest.testmod(module, optionflags=doctest.ELLIPSIS)
        assert result.failed == 0 and result.attempted > 0, (module.__name__, result)


def test_results_with_empty_arrays_still_show_themselves(solution, trained):
    from dataclasses import replace

    empty = np.zeros(0)
    for result in (replace(solution, t=empty, a=empty, b=empty, loss=empty, grad=np.zeros((0, 2))),
                   replace(trained, trajectory={key: empty for key in trained.trajectory})):
        text = repr(result)
        assert "—" in text and _table_rows(result._repr_html_())
        _json_round_trip(result)
