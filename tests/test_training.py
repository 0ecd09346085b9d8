"""Constant-step GD on corpora: η rule, exact Hessian, stop rules, checkpoints and resume, CLI."""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from stumpcheck.numerics.corpus.corpora import make_corpus, save_corpus
from stumpcheck.numerics.corpus.empirical import loss_and_gradient
from stumpcheck.numerics.precision import InputError
from stumpcheck.numerics.corpus.gd import default_eta, step_bound, train_gd
from stumpcheck.numerics.corpus.checkpoint import CHECKPOINT_NAME, read_checkpoint
from stumpcheck.numerics.corpus.curvature import ESTIMATORS, loss_gradient_hessian, spectral_curvature
from stumpcheck.cli.commands import main
from tests.strategies import corpora


@pytest.fixture(scope="module")
def corpus():
    return make_corpus(12, 16, seed=5)


def _same(first, second):
    assert first.a == second.a and first.b == second.b and first.steps == second.steps
    assert first.stopped_because == second.stopped_because
    for key in ("step", "t", "a", "b", "loss"):
        assert np.array_equal(first.trajectory[key], second.trajectory[key]), key


# ------------------------------------------------------------ exact Hessian and the η rule

@pytest.mark.parametrize("estimator", ESTIMATORS)
@pytest.mark.parametrize("a, b", [(10.0, 10.0), (14.0, 9.0), (60.0, 55.0)])
def test_curvature_gradient_matches_empirical(corpus, estimator, a, b):
    loss, grad, _ = loss_gradient_hessian(corpus.x, corpus.theta, a, b, estimator=estimator)
    loss_ref, grad_ref = loss_and_gradient(corpus.x, corpus.theta, a, b, estimator=estimator)
    assert loss == pytest.approx(loss_ref, rel=1e-12)
    scale = np.max(np.abs(grad_ref))
    assert np.max(np.abs(grad - grad_ref)) <= 1e-11 * scale


def _central_difference_hessian(corpus, a, b, estimator, h=1e-4):
    """Columns (∇L̂(z + h eⱼ) − ∇L̂(z − h eⱼ))/(2h) of stumpcheck.numerics.corpus.empirical's exact gradient."""
    columns = []
    for da, db in ((h, 0.0), (0.0, h)):
        plus = loss_and_gradient(corpus.x, corpus.theta, a + da, b + db, estimator=estimator)[1]
        minus = loss_and_gradient(corpus.x, corpus.theta, a - da, b - db, estimator=estimator)[1]
        columns.append((plus - minus) / (2 * h))
    return np.column_stack(columns)


@pytest.mark.parametrize("estimator", ESTIMATORS)
@pytest.mark.parametrize("a, b", [(10.0, 10.0), (16.0, 12.0)])
def test_hessian_matches_central_differences_of_the_exact_gradient(corpus, estimator, a, b):
    _, _, hessian = loss_gradient_hessian(corpus.x, corpus.theta, a, b, estimator=estimator)
    finite_difference = _central_difference_hessian(corpus, a, b, estimator)
    assert np.max(np.abs(hessian - finite_difference)) <= 1e-6 * np.max(np.abs(hessian))
    assert hessian[0, 1] == hessian[1, 0]


@given(corpus=corpora(min_m=1, max_m=12, min_n=2, max_n=20), b=st.floats(1.0, 100.0),
       offset=st.floats(-5.0, 20.0), estimator=st.sampled_from(ESTIMATORS))
def test_hessian_property_against_the_exact_gradient(corpus, b, offset, estimator):
    """∇²L̂ (third cumulants) = central differences (h = 1e-4) of stumpcheck.numerics.corpus.empirical's exact ∇L̂.

    The derivatives of θ̂ in (a, b) are cumulants of bounded features (y, x ∈ [0, 1]), so the
    truncation error is O(h²) and the rounding error O(2⁻⁵²/h): both far below the tolerance.
    """
    a = b + offset
    _, grad, hessian = loss_gradient_hessian(corpus.x, corpus.theta, a, b, estimator=estimator)
    assert np.max(np.abs(hessian - _central_difference_hessian(corpus, a, b, estimator))) <= 1e-6 * np.max(np.abs(hessian)) + 1e-8
    grad_ref = loss_and_gradient(corpus.x, corpus.theta, a, b, estimator=estimator)[1]
    assert np.max(np.abs(grad - grad_ref)) <= 1e-10 * np.max(np.abs(grad_ref)) + 1e-15


def test_default_eta_is_inverse_spectral_curvature_at_the_start(corpus):
    eta, rule = default_eta(corpus.x, corpus.theta, 10.0, 10.0)
    curvature = spectral_curvature(loss_gradient_hessian(corpus.x, corpus.theta, 10.0, 10.0)[2])
    assert eta * curvature == pytest.approx(1.0, rel=1e-15)
    assert "Hess" in rule and f"{eta:.6g}" in rule
    half, _ = default_eta(corpus.x, corpus.theta, 10.0, 10.0, safety=0.5)
    assert half == pytest.approx(eta / 2, rel=1e-15)
    other, _ = default_eta(corpus.x, corpus.theta, 30.0, 25.0)
    assert other != eta  # it depends on the start, not a constant


def test_default_eta_looks_ahead_to_where_the_first_step_lands(corpus):
    a0, b0 = 30.0, 30.0  # a start where the corpus curvature grows along the first step
    eta, rule = default_eta(corpus.x, corpus.theta, a0, b0)
    _, grad, hessian = loss_gradient_hessian(corpus.x, corpus.theta, a0, b0)
    eta0 = 1.0 / spectral_curvature(hessian)
    assert eta < eta0 and "lowered" in rule
    ahead = spectral_curvature(loss_gradient_hessian(corpus.x, corpus.theta, a0 - eta * grad[0],
                                                     b0 - eta * grad[1])[2])
    assert eta * ahead <= 1.0 + 1e-12
    assert default_eta(corpus.x, corpus.theta, a0, b0, look_ahead=0)[0] == eta0


def test_step_bound_is_two_over_the_largest_curvature(corpus):
    a, b = np.array([10.0, 14.0, 20.0]), np.array([10.0, 11.0, 16.0])
    bound = step_bound(corpus.x, corpus.theta, a, b)
    singles = [step_bound(corpus.x, corpus.theta, [ai], [bi]).bound for ai, bi in zip(a, b)]
    assert bound.bound == min(singles)
    assert bound.bound * bound.curvature == pytest.approx(2.0, rel=1e-15)
    assert bound.points == 3


# ------------------------------------------------------------ GD itself and the stop rules

def test_first_step_is_exactly_one_gradient_step(corpus):
    result = train_gd(corpus.x, corpus.theta, a0=10.0, b0=10.0, eta=50.0, steps=1)
    loss, grad = loss_and_gradient(corpus.x, corpus.theta, 10.0, 10.0)
    assert result.trajectory["a"][0] == 10.0 and result.trajectory["b"][0] == 10.0
    assert result.trajectory["loss"][0] == loss
    assert result.a == 10.0 - 50.0 * grad[0] and result.b == 10.0 - 50.0 * grad[1]
    assert list(result.trajectory["t"]) == [0.0, 50.0]


def test_descent_at_the_default_step(corpus):
    result = train_gd(corpus.x, corpus.theta, steps=80)
    loss = result.trajectory["loss"]
    assert result.stopped_because == "steps" and len(loss) == 81
    assert np.all(np.diff(loss) < 0)
    assert result.a > 10.0  # the calibration phase raises the label score first


def test_stop_rules(corpus):
    eta = 40.0
    by_t = train_gd(corpus.x, corpus.theta, eta=eta, t_max=1000.0)
    assert by_t.stopped_because == "t_max" and by_t.steps == math.ceil(1000.0 / eta)
    assert by_t.trajectory["t"][-1] >= 1000.0 > by_t.trajectory["t"][-2]
    free = train_gd(corpus.x, corpus.theta, eta=eta, steps=200)
    target = float(free.trajectory["b"][150])
    by_b = train_gd(corpus.x, corpus.theta, eta=eta, b_target=target, steps=1000)
    k = int(np.argmax(free.trajectory["b"] >= target))
    assert by_b.stopped_because == "b_target" and by_b.steps == k and by_b.b >= target
    assert np.all(by_b.trajectory["b"][:-1] < target)
    first = train_gd(corpus.x, corpus.theta, eta=eta, steps=30, t_max=1e9, b_target=1e9)
    assert first.stopped_because == "steps"


def test_record_every_keeps_multiples_and_the_last_step(corpus):
    result = train_gd(corpus.x, corpus.theta, eta=40.0, steps=23, record_every=5)
    assert list(result.trajectory["step"]) == [0, 5, 10, 15, 20, 23]
    full = train_gd(corpus.x, corpus.theta, eta=40.0, steps=23)
    assert np.array_equal(full.trajectory["loss"][[0, 5, 10, 15, 20, 23]], result.trajectory["loss"])


def test_leaving_b_positive_ends_the_run_at_the_last_good_iterate(corpus):
    result = train_gd(corpus.x, corpus.theta, eta=1e5, steps=10)
    assert result.stopped_because.startswith("diverged")
    assert result.steps == 0 and result.b == 10.0 and len(result.trajectory["step"]) == 1
    free = train_gd(corpus.x, corpus.theta, eta=1e5, steps=3, keep_b_positive=False)
    assert free.stopped_because == "steps" and np.min(free.trajectory["b"]) <= 0


@pytest.mark.parametrize("kwargs, match", [
    ({"steps": None}, "stop rule"),
    ({"steps": 0}, "steps"),
    ({"steps": 2.5}, "steps"),
    ({"eta": 0.0}, "eta"),
    ({"eta": -1.0}, "eta"),
    ({"eta": float("nan")}, "eta"),
    ({"b0": 0.0}, "b0"),
    ({"a0": float("inf")}, "a0"),
    ({"t_max": -3.0}, "t_max"),
    ({"estimator": "two-head"}, "estimator"),
    ({"checkpoint_every": 0}, "checkpoint_every"),
    ({"resume": True}, "checkpoint"),
])
def test_bad_input_raises_input_error(corpus, kwargs, match):
    settings = {"steps": 5, **kwargs}
    with pytest.raises(InputError, match=match):
        train_gd(corpus.x, corpus.theta, **settings)


def test_bad_corpus_raises_input_error(corpus):
    x = np.array(corpus.x)
    x[0, 0] = np.nan
    with pytest.raises(InputError):
        train_gd(x, corpus.theta, steps=3)
    with pytest.raises(InputError):
        default_eta(corpus.x, corpus.theta[:-1], 10.0, 10.0)


# ------------------------------------------------------------ checkpoints and resume

def test_resume_after_a_pause_is_bit_identical(corpus, tmp_path):
    whole = train_gd(corpus.x, corpus.theta, steps=60)
    paused = train_gd(corpus.x, corpus.theta, steps=60, checkpoint_dir=tmp_path, checkpoint_every=7,
                      max_steps_this_run=30)
    assert paused.stopped_because == "max_steps_this_run" and paused.steps == 30
    assert read_checkpoint(tmp_path).step == 30
    resumed = train_gd(corpus.x, corpus.theta, steps=60, checkpoint_dir=tmp_path, checkpoint_every=7, resume=True)
    assert resumed.resumed_from_step == 30
    _same(whole, resumed)
    names = sorted(p.name for p in tmp_path.iterdir())
    assert CHECKPOINT_NAME in names and not [n for n in names if n.endswith(".tmp")]  # no temporary files left
    # the trajectory is appended in parts (records 0–6, 7–13, …), not rewritten at every checkpoint
    assert "trajectory-000000000000.npz" in names and "trajectory-000000000007.npz" in names


def test_resume_after_keyboard_interrupt_is_bit_identical(corpus, tmp_path):
    whole = train_gd(corpus.x, corpus.theta, steps=50, record_every=3)

    def interrupt(step, a, b, loss):
        if step == 37:
            raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        train_gd(corpus.x, corpus.theta, steps=50, record_every=3, checkpoint_dir=tmp_path, checkpoint_every=10,
                 progress=interrupt)
    assert read_checkpoint(tmp_path).step == 30
    resumed = train_gd(corpus.x, corpus.theta, steps=50, record_every=3, checkpoint_dir=tmp_path,
                       checkpoint_every=10, resume=True)
    assert resumed.resumed_from_step == 30
    _same(whole, resumed)
    again = train_gd(corpus.x, corpus.theta, steps=50, record_every=3, checkpoint_dir=tmp_path, resume=True,
                     checkpoint_every=10)
    _same(whole, again)  # resuming a finished run returns the same result


def test_resume_refuses_other_settings_or_corpus(corpus, tmp_path):
    train_gd(corpus.x, corpus.theta, steps=20, checkpoint_dir=tmp_path, checkpoint_every=5, max_steps_this_run=10)
    with pytest.raises(InputError, match="other settings"):
        train_gd(corpus.x, corpus.theta, steps=21, checkpoint_dir=tmp_path, resume=True)
    with pytest.raises(InputError, match="other settings"):
        train_gd(corpus.x, corpus.theta, steps=20, eta=1.0, checkpoint_dir=tmp_path, resume=True)
    other = make_corpus(12, 16, seed=6)
    with pytest.raises(InputError, match="different corpus"):
        train_gd(other.x, other.theta, steps=20, checkpoint_dir=tmp_path, resume=True)
    with pytest.raises(InputError, match="no checkpoint"):
        train_gd(corpus.x, corpus.theta, steps=20, checkpoint_dir=tmp_path / "empty", resume=True)


@pytest.mark.parametrize("which", [CHECKPOINT_NAME, "trajectory-000000000000.npz"])
@pytest.mark.parametrize("damage", ["garbage", "truncated", "empty"])
def test_corrupt_checkpoint_is_one_line_input_error(corpus, tmp_path, damage, which):
    train_gd(corpus.x, corpus.theta, steps=10, checkpoint_dir=tmp_path, checkpoint_every=5, max_steps_this_run=5)
    path = tmp_path / which
    data = path.read_bytes()
    path.write_bytes({"garbage": b"not a zip file at all" * 10, "truncated": data[: len(data) // 2],
                      "empty": b""}[damage])
    with pytest.raises(InputError, match="corrupt checkpoint") as info:
        train_gd(corpus.x, corpus.theta, steps=10, checkpoint_dir=tmp_path, resume=True)
    assert "\n" not in str(info.value)


def test_missing_trajectory_part_is_input_error(corpus, tmp_path):
    train_gd(corpus.x, corpus.theta, steps=10, checkpoint_dir=tmp_path, checkpoint_every=5, max_steps_this_run=5)
    (tmp_path / "trajectory-000000000000.npz").unlink()
    with pytest.raises(InputError, match="corrupt checkpoint"):
        train_gd(corpus.x, corpus.theta, steps=10, checkpoint_dir=tmp_path, resume=True)


def test_a_part_written_without_its_state_is_ignored(corpus, tmp_path):
    """An interruption between writing a trajectory part and the state file loses nothing."""
    whole = train_gd(corpus.x, corpus.theta, steps=30)
    train_gd(corpus.x, corpus.theta, steps=30, checkpoint_dir=tmp_path, checkpoint_every=10, max_steps_this_run=20)
    state = (tmp_path / CHECKPOINT_NAME).read_bytes()
    train_gd(corpus.x, corpus.theta, steps=30, checkpoint_dir=tmp_path, checkpoint_every=10, resume=True)
    (tmp_path / CHECKPOINT_NAME).write_bytes(state)  # as if the last state write never happened
    resumed = train_gd(corpus.x, corpus.theta, steps=30, checkpoint_dir=tmp_path, checkpoint_every=10, resume=True)
    assert resumed.resumed_from_step == 20
    _same(whole, resumed)


# ------------------------------------------------------------ the CLI

def _train(args, capsys):
    status = main(["train", "--quiet", *args])
    captured = capsys.readouterr()
    return status, captured.out, captured.err


def test_cli_writes_trajectory_frozen_and_plot(tmp_path, capsys):
    out = tmp_path / "run"
    status, text, err = _train(["--m", "10", "--n", "12", "--seed", "3", "--steps", "25", "--out", str(out)], capsys)
    assert status == 0, err
    assert "step size: eta = 1/||Hess" in text and "stopped because: steps" in text
    names = {p.name for p in out.iterdir()}
    assert {"trajectory.csv", "trajectory.json", "frozen.json", "training.png", "checkpoints"} <= names
    payload = json.loads((out / "trajectory.json").read_text())
    frozen = json.loads((out / "frozen.json").read_text())
    assert payload["steps"] == 25 and len(payload["loss"]) == 26 and payload["corpus"]["seed"] == 3
    assert payload["provenance"]["seed"] == 3 and "eta_rule" in payload
    corpus = make_corpus(10, 12, seed=3)
    direct = train_gd(corpus.x, corpus.theta, steps=25)
    assert frozen["a"] == direct.a and frozen["b"] == direct.b and frozen["eta"] == direct.eta
    assert frozen["corpus_seed"] == 3 and frozen["estimator"] == "one-head"
    rows = (out / "trajectory.csv").read_text().splitlines()
    assert rows[0] == "step,t,a,b,loss" and len(rows) == 27
    assert float(rows[-1].split(",")[3]) == direct.b  # repr round-trips exactly


def test_cli_resume_matches_an_uninterrupted_run(tmp_path, capsys):
    corpus = make_corpus(10, 12, seed=4)
    corpus_file = save_corpus(corpus, tmp_path / "corpus.npz")
    whole, part = tmp_path / "whole", tmp_path / "part"
    status, _, err = _train(["--corpus", str(corpus_file), "--steps", "40", "--out", str(whole)], capsys)
    assert status == 0, err
    train_gd(corpus.x, corpus.theta, steps=40, checkpoint_dir=part / "checkpoints", checkpoint_every=1000,
             max_steps_this_run=17)
    status, _, err = _train(["--corpus", str(corpus_file), "--steps", "40", "--out", str(part)], capsys)
    assert status == 2 and "--resume" in err
    status, text, err = _train(["--corpus", str(corpus_file), "--steps", "40", "--out", str(part), "--resume"],
                               capsys)
    assert status == 0, err
    assert "resumed from the checkpoint at step 17" in text
    assert (whole / "trajectory.csv").read_bytes() == (part / "trajectory.csv").read_bytes()


def test_cli_b_target_stops_early_and_is_capped_by_the_default_steps(tmp_path, capsys):
    status, text, err = _train(["--m", "16", "--n", "16", "--seed", "1", "--b-target", "10.5",
                                "--out", str(tmp_path / "hit")], capsys)
    assert status == 0, err
    frozen = json.loads((tmp_path / "hit" / "frozen.json").read_text())
    assert frozen["stopped_because"] == "b_target" and frozen["b"] >= 10.5 and frozen["steps"] < 1000
    status, text, err = _train(["--m", "16", "--n", "16", "--seed", "1", "--b-target", "1e6", "--steps", "30",
                                "--out", str(tmp_path / "cap")], capsys)
    assert status == 0, err
    assert "stopped because: steps; 30 steps" in text


@pytest.mark.parametrize("args, match", [
    (["--m", "5", "--n", "5", "--seed", "1", "--corpus", "x.npz"], "not both"),
    ([], "--corpus FILE"),
    (["--m", "5", "--n", "5"], "missing --seed"),
    (["--m", "5", "--n", "5", "--seed", "1", "--steps", "0"], "--steps"),
    (["--m", "5", "--n", "5", "--seed", "1", "--steps", "3", "--t-max", "10"], "not both"),
    (["--m", "5", "--n", "5", "--seed", "1", "--eta", "-2"], "--eta"),
    (["--m", "5", "--n", "5", "--seed", "1", "--eta", "nan"], "--eta"),
    (["--m", "5", "--n", "5", "--seed", "1", "--b0", "0"], "--b0"),
    (["--m", "5", "--n", "5", "--seed", "1", "--a0", "1e999"], "--a0"),
    (["--m", "0", "--n", "5", "--seed", "1"], "--m"),
    (["--m", "5", "--n", "5", "--seed", "-1"], "--seed"),
    (["--corpus", "does-not-exist.npz"], "does not exist"),
    (["--m", "5", "--n", "5", "--seed", "1", "--resume"], "no checkpoint"),
])
def test_cli_bad_input_exits_2_with_one_line(tmp_path, capsys, args, match):
    status, _, err = _train([*args, "--out", str(tmp_path / "o")], capsys)
    assert status == 2
    assert match in err and err.count("\n") == 1


def test_cli_corrupt_corpus_file_exits_2(tmp_path, capsys):
    bad = tmp_path / "bad.npz"
    bad.write_bytes(b"garbage")
    status, _, err = _train(["--corpus", str(bad), "--out", str(tmp_path / "o")], capsys)
    assert status == 2 and err.count("\n") == 1


def test_module_files_exist():
    root = Path(__file__).resolve().parent.parent
    assert "stumpcheck.cli.train:train" in (root / "stumpcheck" / "cli" / "commands.py").read_text()


# ------------------------------------------------------------ the empirical flow as a stand-in for GD

def test_gd_converges_to_the_empirical_flow_at_first_order(corpus):
    from stumpcheck.numerics.corpus.gradient_flow import empirical_flow

    horizon = 200.0
    flow = empirical_flow(corpus.x, corpus.theta, t_max=horizon, rtol=1e-11, solver="dopri5")
    assert flow.stopped_because == "t_max" and flow.t_final == pytest.approx(horizon, rel=1e-14)
    errors = []
    for eta in (2.0, 1.0):
        gd = train_gd(corpus.x, corpus.theta, eta=eta, t_max=horizon)
        assert gd.steps * eta == pytest.approx(horizon)
        errors.append(math.hypot(gd.a - flow.a, gd.b - flow.b))
    # Euler: global error ∝ η, so halving η halves the distance to the flow
    assert errors[0] / errors[1] == pytest.approx(2.0, rel=0.05)
    assert errors[1] < 1e-2 * math.hypot(flow.a - 10.0, flow.b - 10.0)
    stiff = empirical_flow(corpus.x, corpus.theta, t_max=horizon, rtol=1e-11, solver="rodas4")
    assert math.hypot(stiff.a - flow.a, stiff.b - flow.b) < 1e-7


def test_empirical_flow_stops_at_b_target():
    from stumpcheck.numerics.corpus.gradient_flow import empirical_flow

    grows = make_corpus(16, 16, seed=1)
    hit = empirical_flow(grows.x, grows.theta, b_target=11.0, rtol=1e-8, solver="dopri5")
    assert hit.stopped_because == "b_target" and hit.kind == "empirical gradient flow"
    assert hit.b == pytest.approx(11.0, rel=1e-11) and np.all(hit.b_path[:-1] < 11.0)
    assert hit.loss[-1] < hit.loss[0]
    with pytest.raises(InputError, match="t_max or b_target"):
        empirical_flow(grows.x, grows.theta)
    with pytest.raises(InputError, match="solver"):
        empirical_flow(grows.x, grows.theta, t_max=1.0, solver="euler")


def test_interruption_before_the_first_interval_resumes_from_step_zero(corpus, tmp_path):
    whole = train_gd(corpus.x, corpus.theta, steps=12)

    def interrupt(step, a, b, loss):
        if step == 3:
            raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        train_gd(corpus.x, corpus.theta, steps=12, checkpoint_dir=tmp_path, checkpoint_every=10, progress=interrupt)
    assert read_checkpoint(tmp_path).step == 0
    _same(whole, train_gd(corpus.x, corpus.theta, steps=12, checkpoint_dir=tmp_path, checkpoint_every=10,
                          resume=True))


# ------------------------------------------------------------ step rules and the large-resolution start

def test_step_rules_population_corpus_and_lookahead(corpus):
    from stumpcheck.numerics.corpus.steps import LOOKAHEAD_POWERS, choose_eta, population_eta

    a0, b0 = 14.0, 8.0
    eta_pop, rule = choose_eta(corpus.x, corpus.theta, a0, b0, "population")
    assert (eta_pop, rule) == population_eta(a0, b0) and "population" in rule
    assert choose_eta(corpus.x, corpus.theta, a0, b0, "corpus") == default_eta(corpus.x, corpus.theta, a0, b0)
    eta, rule = choose_eta(corpus.x, corpus.theta, a0, b0, "lookahead")
    powers = [eta_pop * 2.0 ** j for j in LOOKAHEAD_POWERS]
    assert eta in powers and "lower L̂" in rule
    run = train_gd(corpus.x, corpus.theta, a0=a0, b0=b0, eta=eta, steps=2)
    assert np.all(np.diff(run.trajectory["loss"]) < 0)  # the rule's promise: two steps, each lowers L̂
    bigger = [p for p in powers if p > eta]
    if bigger:  # the next larger candidate breaks the promise
        run = train_gd(corpus.x, corpus.theta, a0=a0, b0=b0, eta=min(bigger), steps=2)
        assert run.steps < 2 or not np.all(np.diff(run.trajectory["loss"]) < 0)
    with pytest.raises(InputError, match="step rule"):
        train_gd(corpus.x, corpus.theta, steps=2, step_rule="fastest")


def test_a_huge_step_stops_naming_the_step_and_the_rule(corpus, tmp_path, capsys):
    run = train_gd(corpus.x, corpus.theta, eta=1e9, steps=10)
    assert run.stopped_because.startswith("diverged: step 1 would leave the model")
    assert "the user's step" in run.stopped_because and "eta = 1e+09" in run.stopped_because
    assert run.steps == 0 and math.isfinite(run.b) and run.b > 0
    status, text, err = _train(["--m", "12", "--n", "16", "--seed", "5", "--eta", "1e9", "--steps", "5",
                                "--out", str(tmp_path / "o")], capsys)
    assert status == 1 and err.count("\n") == 1 and "diverged: step 1" in err
    assert json.loads((tmp_path / "o" / "frozen.json").read_text())["stopped_because"].startswith("diverged")


def test_the_population_step_makes_progress_at_a_large_start():
    """At a calibrated start b0 = 32 on m = n = 128 the corpus Hessian is tiny and indefinite; the corpus rule's
    look-ahead lowers its step far below the population step (measured: 369 vs 3.5e4), which advances b."""
    from stumpcheck.numerics.corpus.steps import large_resolution_start

    big = make_corpus(128, 128, seed=3)
    a0, b0 = large_resolution_start(128, 128)
    corpus_rule = train_gd(big.x, big.theta, a0=a0, b0=b0, steps=30, step_rule="corpus", method="pruned")
    population = train_gd(big.x, big.theta, a0=a0, b0=b0, steps=30, step_rule="population", method="pruned")
    assert population.stopped_because == corpus_rule.stopped_because == "steps"
    assert population.b - b0 > 10 * (corpus_rule.b - b0) > 0
    assert np.all(np.diff(population.trajectory["loss"]) <= 0)


def test_cli_init_large_resolution(tmp_path, capsys):
    status, text, err = _train(["--m", "64", "--n", "64", "--seed", "3", "--init", "large-resolution",
                                "--out", str(tmp_path / "lr")], capsys)
    assert status == 0, err
    assert "population loss" in text and "at (a0, b0) = (" in text and "stopped because: b_target" in text
    frozen = json.loads((tmp_path / "lr" / "frozen.json").read_text())
    trajectory = json.loads((tmp_path / "lr" / "trajectory.json").read_text())
    assert trajectory["settings"]["b0"] == 16.0 and trajectory["settings"]["b_target"] == 32.0
    assert frozen["b"] >= 32.0 and frozen["steps"] < 20000
    loss = np.array(trajectory["loss"])
    assert np.all(np.diff(loss) <= 4 * np.finfo(float).eps * loss[:-1])  # no increase beyond rounding
    for extra, match in ((["--b0", "20"], "--init"), (["--eta", "1", "--eta-rule", "corpus"], "not both")):
        status, _, err = _train(["--m", "64", "--n", "64", "--seed", "3", "--init", "large-resolution", *extra,
                                 "--out", str(tmp_path / "bad")], capsys)
        assert status == 2 and match in err and err.count("\n") == 1


def test_population_rule_resume_is_bit_identical(tmp_path):
    from stumpcheck.numerics.corpus.steps import large_resolution_start

    big = make_corpus(64, 64, seed=2)
    a0, b0 = large_resolution_start(64, 64)
    kwargs = dict(a0=a0, b0=b0, b_target=32.0, steps=20000, step_rule="population", method="pruned")
    whole = train_gd(big.x, big.theta, **kwargs)
    train_gd(big.x, big.theta, checkpoint_dir=tmp_path, checkpoint_every=7, max_steps_this_run=20, **kwargs)
    _same(whole, train_gd(big.x, big.theta, checkpoint_dir=tmp_path, checkpoint_every=7, resume=True, **kwargs))
    assert whole.stopped_because == "b_target" and whole.steps > 20


def test_b_target_alone_ends_at_the_step_cap_with_the_reason(monkeypatch):
    """A b_target that b never reaches ends at the step cap (it ran without end before), with a status saying so."""
    from stumpcheck.numerics.corpus import gd

    corpus = make_corpus(8, 8, seed=1)
    monkeypatch.setattr(gd, "MAX_STEPS", 30)
    run = gd.train_gd(corpus.x, corpus.theta, b_target=1e9)
    assert run.steps == 30 and run.stopped_because.startswith("step cap: b = ")
    assert run.b < 1e9 and "b_target = 1e+09" in run.stopped_because
    monkeypatch.setattr(gd, "MAX_STEPS", 10**7)
    monkeypatch.setattr(gd, "MAX_RECORDS", 12)
    run = gd.train_gd(corpus.x, corpus.theta, b_target=1e9, record_every=2)
    assert run.steps == 24 and len(run.trajectory["step"]) <= 13
