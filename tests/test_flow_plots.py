"""The flow's figures drawn cheaply (fixed margins, plain-text log ticks, no unlabelled minor ticks) and
``stumpcheck flow --no-plots``."""

from __future__ import annotations

import pytest

from stumpcheck import api
from stumpcheck.cli.commands import main
from stumpcheck.numerics.flow.report import FLOW_PANELS, SINGLE_PANEL_MARGINS, plot_flow, write_flow_outputs
from stumpcheck.numerics.plotting import _plain_tick_text, pyplot


@pytest.fixture(scope="module")
def run():
    return api.run_population_flow(10.0, 10.0, 1e6)


@pytest.mark.parametrize("mathtext, plain", [
    (r"$\mathdefault{10^{6}}$", "10⁶"),
    (r"$\mathdefault{10^{-12}}$", "10⁻¹²"),
    (r"$\mathdefault{10^{0}}$", "10⁰"),
    (r"$\mathdefault{2\times10^{3}}$", "2×10³"),
    (r"$\mathdefault{1.5\times10^{-2}}$", "1.5×10⁻²"),
    (r"$\mathdefault{1}$", "1"),
    (r"$\mathdefault{-0.5}$", "−0.5"),
    ("", ""),
    ("0.4", "0.4"),
    (r"$\mathdefault{10^{2.50}}$", r"$\mathdefault{10^{2.50}}$"),  # not a decade label: left to mathtext
])
def test_log_tick_labels_become_plain_text(mathtext, plain):
    assert _plain_tick_text(mathtext) == plain


def test_one_panel_has_fixed_margins_plain_ticks_and_no_minor_ticks_on_wide_axes(run):
    plt = pyplot()
    for name in FLOW_PANELS:
        figure = plot_flow(run, panels=(name,))
        try:
            params = figure.subplotpars
            assert {k: getattr(params, k) for k in SINGLE_PANEL_MARGINS} == pytest.approx(SINGLE_PANEL_MARGINS)
            figure.canvas.draw()
            (ax,) = figure.axes
            assert ax.get_xscale() == "log"
            labels = [t.get_text() for t in ax.get_xticklabels() + ax.get_yticklabels() if t.get_text()]
            assert labels and not any("$" in text for text in labels), (name, labels)
            # t spans 1e-2 … 1e6 here: eight decades, so the t axis draws no minor ticks
            assert ax.xaxis.get_minorticklocs().size == 0
            assert any("10" in text for text in labels)
        finally:
            plt.close(figure)


def test_a_log_axis_within_a_few_decades_keeps_its_minor_ticks():
    plt = pyplot()
    figure, ax = plt.subplots()
    try:
        ax.loglog([10.0, 30.0], [1.0, 2.0])
        from stumpcheck.numerics.plotting import light_log_axes

        light_log_axes(ax)
        figure.canvas.draw()
        assert ax.xaxis.get_minorticklocs().size > 0
        labels = [t.get_text() for t in ax.get_xticklabels(minor=True) + ax.get_yticklabels(minor=True)]
        assert not any("$" in text for text in labels)
    finally:
        plt.close(figure)


def test_write_flow_outputs_without_plots_writes_the_data_only(run, tmp_path):
    paths = write_flow_outputs(run, tmp_path, provenance={}, plots=False)
    assert [p.name for p in paths] == ["flow.csv", "flow.json"]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["flow.csv", "flow.json"]


def test_flow_no_plots_on_the_command_line(tmp_path, capsys):
    status = main(["flow", "--t-max", "100", "--no-check", "--quiet", "--out", str(tmp_path), "--no-plots"])
    out = capsys.readouterr().out
    assert status == 0
    assert sorted(p.name for p in tmp_path.iterdir()) == ["flow.csv", "flow.json"]
    assert "wrote flow.csv, flow.json to" in out


@pytest.mark.parametrize("extra", [[], ["--certified", "--out", "somewhere"]])
def test_flow_no_plots_needs_out_and_a_plain_flow(extra, capsys):
    status = main(["flow", "--t-max", "100", "--quiet", "--no-plots", *extra])
    err = capsys.readouterr().err
    assert status == 2
    assert "--no-plots needs --out and a flow without --certified" in err
