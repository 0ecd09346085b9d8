"""``stumpcheck interval`` and ``stumpcheck recheck CERT --corpus FILE`` (stumpcheck/cli/interval.py).

Small corpora (m = n ≤ 32) and short b ranges, so the file runs in seconds: a proof up to --b-max and its
re-check; bad input (exit 2, one line, before any work); a too-large η and a too-small corpus (exit 1, the
stop reason printed, no certificate); a proof that stops below --b-max (exit 1, a certificate of the
proved part only, which re-checks); checkpoint and resume (a run interrupted after some columns ends with
the same statement and leaves as an uninterrupted one; a checkpoint of other settings is refused).
"""

from __future__ import annotations

import json
import re
from fractions import Fraction

import pytest

from stumpcheck.cli.commands import main
from stumpcheck.numerics.certified.certificates.lemma_certificate import digest, read_certificate
from stumpcheck.numerics.corpus.checkpoint import corpus_fingerprint
from stumpcheck.numerics.corpus.corpora import make_corpus
from stumpcheck.numerics.corpus.interval import prover
from stumpcheck.numerics.corpus.interval.centre import Centre, eta_half_curvature
from stumpcheck.numerics.corpus.interval.checkpoint import CHECKPOINT_NAME, save_checkpoint
from stumpcheck.numerics.corpus.interval.prover import IntervalRun

F = Fraction
SMALL = ["--m", "32", "--n", "32", "--seed", "1", "--b-max", "10"]
CERT = "interval_certificate.json"


def _run(argv, capsys):
    status = main(argv)
    captured = capsys.readouterr()
    return status, captured.out, captured.err


@pytest.fixture(scope="module")
def proved(tmp_path_factory):
    """An uninterrupted run (the reference of the resume tests): its folder, stdout lines and certificate."""
    import contextlib
    import io

    out = tmp_path_factory.mktemp("interval")
    buffer = io.StringIO()
    with contextlib.redirect_stdout(buffer):
        status = main(["interval", *SMALL, "--out", str(out), "--quiet"])
    assert status == 0
    return out, buffer.getvalue().splitlines(), read_certificate(out / CERT)


def test_prove_writes_the_certificate_and_one_summary_line(proved):
    out, lines, document = proved
    assert lines[0] == f"corpus: m = 32, n = 32, seed = 1, written to {out / 'corpus.npz'}"
    assert len(lines) == 2
    assert re.fullmatch(
        r"PROVED b in \[8, 10\] = \[\.\., 0\.312·\(m∧n\)\] for eta = 340: GD from S reaches b_end within "
        r"4\.700e\+01 steps; 96 leaves, smallest margins drift [0-9.e+-]+, inward [0-9.e+-]+, gd [0-9.e+-]+; "
        r"[0-9.]+ s wall, [0-9.]+ s CPU; start chosen: b_start = 8 \(1 first-column trial\(s\)\); "
        r"reached the target --b-max 10; wrote " + re.escape(str(out / CERT)), lines[1])
    assert sorted(p.name for p in out.iterdir()) == ["corpus.npz", "interval.png", CERT]   # no checkpoint left
    st = document["statement"]
    assert document["format"] == "stumpcheck-interval-certificate/1" and document["digest"] == digest(document)
    assert {k: st[k] for k in ("b_start", "b_end", "eta", "steps")} == {"b_start": "8", "b_end": "10", "eta": "340",
                                                                         "steps": 47}
    assert st["band"] == {"c_minus": "1/20", "c_plus": "1/2"} and st["centre"]["nodes"][0][0] == "8"
    assert st["start"] == [st["centre"]["nodes"][0][1], "8"]
    corpus = make_corpus(32, 32, seed=1)
    assert document["corpus"]["sha256"] == corpus_fingerprint(corpus.x, corpus.theta)
    assert (document["corpus"]["m"], document["corpus"]["n"]) == (32, 32)
    assert document["end"] == {"status": "b_max reached", "b_max": "10"}
    assert document["proof"]["leaf_count"] == len(document["leaves"]) == 96
    assert {"fast_layer", "margins", "gd"} <= set(document["arithmetic"]) and "versions" in document
    small = document["proof"]["smallest_margins"]
    assert small["drift"] == min(float(F(lf["drift"])) for lf in document["leaves"])
    assert all(v > 0 for v in small.values())


@pytest.mark.parametrize("arb", [[], ["--arb"]])
def test_recheck_passes(proved, capsys, arb):
    out, _, document = proved
    path = str(out / CERT)
    status, stdout, _ = _run(["recheck", path, "--corpus", str(out / "corpus.npz"), *arb], capsys)
    lines = stdout.splitlines()
    assert status == 0 and len(lines) == 2
    assert lines[0] == f"PASS {path}: {document['statement']['text']}"
    assert "within at most 47 steps" in lines[0] and "S = {8 <= b <= 10, A(b) - 1/20 <= a <= A(b) + 1/2}" in lines[0]
    where = "every leaf" if arb else "the tightest leaves"
    assert re.fullmatch(rf"  every leaf re-proved; the leaves tile S; every other field checked; the corpus's seed "
                        rf"and prior are the file's; Arb checked the fast layer at {where}; [0-9.]+ s", lines[1])


# ---------------------------------------------------------------- bad input: exit 2, one line, before work

BAD = [
    (["--c", "abc"], "--c must be a decimal number, got 'abc'"),
    (["--c", "0"], "--c values must lie in [0.001, 10], got '0'"),
    (["--c", "0.05,0.5,1"], "--c must be C or C_MINUS,C_PLUS (decimals), got '0.05,0.5,1'"),
    (["--c", "0.05,"], "--c must be C or C_MINUS,C_PLUS (decimals), got '0.05,'"),
    (["--b-max", "8"], "--b-max (8) must exceed --b-start (8) on the grid"),
    (["--b-max", "4"], "--b-max (4) must exceed --b-start (8) on the grid"),
    (["--b-start", "16", "--b-max", "16.1"], "--b-max (16) must exceed --b-start (16) on the grid"),
    (["--eta", "0"], "--eta must be > 0 and <= 1e30, got '0'"),
    (["--eta", "-1"], "--eta must be > 0 and <= 1e30, got '-1'"),
    (["--eta=-0.5"], "--eta must be > 0 and <= 1e30, got '-0.5'"),
    (["--eta", "abc"], "--eta must be a decimal number, got 'abc'"),
    (["--max-depth", "0"], "--max-depth must be >= 1, got 0"),
    (["--b-start", "0.5"], "--b-start must lie in [1, 65536), got '0.5'"),
]


@pytest.fixture
def no_work(monkeypatch):
    """Any start of the proof (fitting the centre, proving a column) fails the test."""
    def refuse(*args, **kwargs):
        raise AssertionError("the work started before the input was checked")
    monkeypatch.setattr(Centre, "__init__", refuse)
    monkeypatch.setattr(IntervalRun, "run", refuse)


@pytest.mark.parametrize("extra, message", BAD, ids=[" ".join(b[0]) for b in BAD])
def test_bad_input_exits_2_with_one_line(tmp_path, capsys, no_work, extra, message):
    out = tmp_path / "out"
    argv = ["interval", "--m", "32", "--n", "32", "--seed", "1", "--quiet", "--out", str(out), *extra]
    status, stdout, stderr = _run(argv, capsys)
    assert status == 2 and stdout == ""
    assert stderr == f"stumpcheck: error: {message}\n"
    assert not out.exists()


def test_corpus_and_m_together(tmp_path, capsys, no_work, proved):
    status, _, stderr = _run(["interval", "--corpus", str(proved[0] / "corpus.npz"), "--m", "32", "--n", "32",
                              "--out", str(tmp_path / "o")], capsys)
    assert status == 2 and stderr == "stumpcheck: error: give either --corpus FILE or --m M --n N [--seed S], not both\n"
    status, _, stderr = _run(["interval", "--out", str(tmp_path / "o")], capsys)
    assert status == 2 and stderr == "stumpcheck: error: give --corpus FILE, or --m and --n (and --seed, default 0)\n"


def test_unwritable_out_is_refused_before_work(tmp_path, capsys, no_work):
    blocker = tmp_path / "a-file"
    blocker.write_text("not a folder")
    status, stdout, stderr = _run(["interval", *SMALL, "--out", str(blocker / "sub")], capsys)
    assert status == 2 and stdout == ""
    assert stderr == f"stumpcheck: error: --out: cannot create {blocker / 'sub'}: {blocker} is not a directory\n"
    status, _, stderr = _run(["interval", *SMALL, "--out", str(blocker)], capsys)
    assert status == 2 and stderr.count("\n") == 1 and "is a file" in stderr
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a-file"]


def test_recheck_of_an_interval_certificate_needs_its_corpus(proved, capsys):
    path = str(proved[0] / CERT)
    status, stdout, stderr = _run(["recheck", path], capsys)
    assert status == 2 and stdout == ""
    assert stderr == (f"stumpcheck: error: {path}: an interval certificate is re-checked against its corpus: "
                      "give --corpus FILE.npz\n")


# ---------------------------------------------------------------- honest failures: exit 1

def test_too_large_eta_is_certainly_false_and_leaves_no_certificate(tmp_path, capsys):
    out = tmp_path / "out"
    status, stdout, _ = _run(["interval", "--m", "32", "--n", "32", "--seed", "1", "--b-max", "16", "--eta", "1e6",
                              "--out", str(out), "--quiet"], capsys)
    assert status == 1
    assert re.fullmatch(r"NOT PROVED: no column of S above b = 8 could be proved; stopped: gd certainly false at "
                        r"b = 8\.00391, mu = [-0-9.e]+ \(margin <= -[0-9.e+]+; confirmed in Arb\); no certificate", stdout.splitlines()[-1])
    assert not (out / CERT).exists() and not (out / CHECKPOINT_NAME).exists()


def test_a_corpus_far_too_small_for_b_max(tmp_path, capsys):
    """m = n = 8 with --b-max 64 (8·(m∧n)): the drift is certainly false in the first column; exit 1, no
    certificate."""
    out = tmp_path / "out"
    status, stdout, _ = _run(["interval", "--m", "8", "--n", "8", "--seed", "1", "--b-max", "64", "--b-start", "8",
                              "--out", str(out), "--quiet"], capsys)
    assert status == 1
    assert re.fullmatch(r"NOT PROVED: no column of S above b = 8 could be proved; stopped: drift certainly false at "
                        r"b = 8\.00391, mu = [-0-9.e]+ \(margin <= -[0-9.e+]+; confirmed in Arb\); no certificate", stdout.splitlines()[-1])
    assert not (out / CERT).exists()


def test_the_start_is_chosen_where_the_first_column_proves(tmp_path, capsys):
    """m = n = 8, seed 1, --b-max 64, no --b-start: the drift is certainly false in the first column at b = 8,
    whatever the step (five tried), and the search takes b_start = 16 with the unhalved step; the proof stops
    below the target (exit 1), the certificate records the trials and re-checks."""
    out = tmp_path / "out"
    status, stdout, _ = _run(["interval", "--m", "8", "--n", "8", "--seed", "1", "--b-max", "64",
                              "--out", str(out), "--quiet"], capsys)
    assert status == 1
    assert "start chosen: b_start = 16 (6 first-column trial(s))" in stdout.splitlines()[-1]
    document = read_certificate(out / CERT)
    assert document["statement"]["b_start"] == "16"
    search = document["start_search"]
    assert [t[0] for t in search["tried"]] == ["8"] * 5 + ["16"]
    assert [t[2] for t in search["tried"]] == ["not proved"] * 5 + ["proved"]
    assert search["chosen"] == {"b_start": "16", "eta": document["statement"]["eta"], "halvings": 0}
    status, stdout, _ = _run(["recheck", str(out / CERT), "--corpus", str(out / "corpus.npz")], capsys)
    assert status == 0 and "S = {16 <= b <= " in stdout


def test_a_proof_that_stops_below_b_max_certifies_only_the_proved_part(tmp_path, capsys):
    """m = n = 16, seed 2, --b-max 16: the columns up to b = 14 are proved, the next one stays undecided at
    the finest box; exit 1, the stop printed, and a certificate of [8, 14] only, which re-checks."""
    out = tmp_path / "out"
    status, stdout, _ = _run(["interval", "--m", "16", "--n", "16", "--seed", "2", "--b-max", "16",
                              "--out", str(out), "--quiet"], capsys)
    assert status == 1
    line = stdout.splitlines()[-1]
    assert line.startswith("PROVED b in [8, 14] = [.., 0.875·(m∧n)] for eta = 79: ")
    assert "stopped: undecided at the finest box b in [14.0859, 14.0938], mu in [-0.05, -0.04312]" in line
    document = read_certificate(out / CERT)
    assert document["statement"]["b_end"] == "14"
    assert document["end"]["status"] == "undecided" and F(document["end"]["b"][0]) >= 14
    assert max(F(lf["b"][1]) for lf in document["leaves"]) == 14
    status, stdout, _ = _run(["recheck", str(out / CERT), "--corpus", str(out / "corpus.npz")], capsys)
    assert status == 0 and "S = {8 <= b <= 14," in stdout


# ---------------------------------------------------------------- checkpoint and resume

def _settings(x, theta, **changes) -> dict:
    """The CLI's settings of ``SMALL`` with its defaults (stumpcheck/cli/interval.py)."""
    from fractions import Fraction

    from stumpcheck.numerics.corpus.interval.run import settings_of

    settings = settings_of(x, theta, b_start="auto", b_max=Fraction(10), band=(Fraction(1, 20), Fraction(1, 2)),
                           eta=None, max_depth=8)
    assert settings["corpus_sha256"] == corpus_fingerprint(x, theta)
    settings.update(changes)
    return settings


class _Stop(Exception):
    pass


def _interrupted_run(columns: int):
    """An IntervalRun of ``SMALL``'s settings stopped after ``columns`` proved columns."""
    corpus = make_corpus(32, 32, seed=1)
    band = (F(1, 20), F(1, 2))
    centre = Centre(corpus.x, corpus.theta, F(8))
    eta = eta_half_curvature(corpus.x, corpus.theta, centre, *band)
    run = IntervalRun(corpus.x, corpus.theta, b_start=F(8), b_max=F(10), band=band, eta=eta, centre=centre)

    def stop(r):
        if len(r.columns) == columns:
            raise _Stop
    with pytest.raises(_Stop):
        run.run(on_column=stop)
    assert len(run.columns) == columns and run.b_end == F(8) + F(columns, 8)
    return corpus, run


def _same_proof(document, reference):
    assert document["statement"] == reference["statement"]
    assert document["leaves"] == reference["leaves"]
    assert document["proof"]["leaf_count"] == reference["proof"]["leaf_count"]
    assert document["end"] == reference["end"]


def test_resume_from_a_checkpoint_ends_as_an_uninterrupted_run(tmp_path, capsys, proved):
    out = tmp_path / "out"
    out.mkdir()
    corpus, run = _interrupted_run(5)
    save_checkpoint(run, _settings(corpus.x, corpus.theta), out)
    status, _, stderr = _run(["interval", *SMALL, "--out", str(out), "--quiet"], capsys)
    assert status == 0
    assert f"resuming from {out / CHECKPOINT_NAME}: 5 columns proved, b = 8.625" in stderr
    _same_proof(read_certificate(out / CERT), proved[2])
    assert not (out / CHECKPOINT_NAME).exists()


def test_an_interrupted_command_saves_and_resumes(tmp_path, capsys, monkeypatch, proved):
    """Ctrl-C in the eighth column (the seventh the run proves: the first is the start search's): exit 130
    with a checkpoint of 7 columns; the same command again resumes from it and writes the uninterrupted
    run's proof."""
    out = tmp_path / "out"
    real, calls = prover.prove_column, []

    def interrupted(*args, **kwargs):
        calls.append(1)
        if len(calls) == 7:
            raise KeyboardInterrupt
        return real(*args, **kwargs)
    monkeypatch.setattr(prover, "prove_column", interrupted)
    status, _, stderr = _run(["interval", *SMALL, "--out", str(out), "--quiet"], capsys)
    lines = stderr.strip().splitlines()  # one line, naming the checkpoint the same command resumes from
    assert status == 130 and len(lines) == 1 and "interrupted" in lines[0], stderr
    assert f"{out / CHECKPOINT_NAME}: the same command resumes" in lines[0]
    assert not (out / CERT).exists()
    state = json.loads((out / CHECKPOINT_NAME).read_text(encoding="utf-8"))
    assert len(state["columns"]) == 7 and state["b_end"] == "71/8"
    monkeypatch.setattr(prover, "prove_column", real)
    status, _, stderr = _run(["interval", *SMALL, "--out", str(out), "--quiet"], capsys)
    assert status == 0 and "7 columns proved, b = 8.875" in stderr
    _same_proof(read_certificate(out / CERT), proved[2])


@pytest.mark.parametrize("change", [{"c_plus": "3/5"}, {"b_max": "12"}, {"eta": "300"}, {"corpus_sha256": "0" * 64},
                                    {"code": "0" * 64}],
                         ids=["band", "b_max", "eta", "corpus", "code"])
def test_a_checkpoint_of_other_settings_is_refused(tmp_path, capsys, change):
    out = tmp_path / "out"
    out.mkdir()
    corpus = make_corpus(32, 32, seed=1)
    settings = _settings(corpus.x, corpus.theta, **change)
    (out / CHECKPOINT_NAME).write_text(json.dumps({"settings": settings, "b_end": "8", "columns": [],
                                                   "centre": {"nodes": [["8", "12"]], "fitted": [True], "offset": 0.0}}))
    status, _, stderr = _run(["interval", *SMALL, "--out", str(out), "--quiet"], capsys)
    assert status == 2 and stderr.count("\n") == 1
    assert stderr == (f"stumpcheck: error: {out / CHECKPOINT_NAME} is a checkpoint of another run (other corpus or "
                      "settings); remove it or use another --out\n")
    assert not (out / CERT).exists()


def test_an_unreadable_checkpoint_is_refused(tmp_path, capsys):
    out = tmp_path / "out"
    out.mkdir()
    (out / CHECKPOINT_NAME).write_text("{not json")
    status, _, stderr = _run(["interval", *SMALL, "--out", str(out), "--quiet"], capsys)
    assert status == 2 and stderr.count("\n") == 1
    assert stderr.startswith(f"stumpcheck: error: {out / CHECKPOINT_NAME}: unreadable checkpoint (")
    assert stderr.endswith("); remove it to start again\n")


# ---------------------------------------------------------------- longer runs (-m slow)

@pytest.mark.slow
def test_issue_target_256(tmp_path, capsys):
    """The issue's check: m = n = 256, seed 0, defaults (target (m∧n)/2 = 128, start chosen per corpus): the
    target is reached (exit 0) and the certificate, whose upper columns are pruned (b > 64), re-checks."""
    out = tmp_path / "out"
    status, stdout, _ = _run(["interval", "--m", "256", "--n", "256", "--seed", "0", "--out", str(out), "--quiet"],
                             capsys)
    assert status == 0 and stdout.splitlines()[-1].startswith("PROVED b in [8, 128]")
    document = read_certificate(out / CERT)
    assert document["statement"]["b_end"] == "128" and document["end"]["status"] == "b_max reached"
    status, stdout, _ = _run(["recheck", str(out / CERT), "--corpus", str(out / "corpus.npz")], capsys)
    assert status == 0 and stdout.startswith(f"PASS {out / CERT}: ")


@pytest.mark.slow
def test_arb_at_every_leaf_64(tmp_path, capsys):
    """m = n = 64, seed 1, defaults (target 32): the re-check with Arb at every leaf's centre passes."""
    out = tmp_path / "out"
    status, _, _ = _run(["interval", "--m", "64", "--n", "64", "--seed", "1", "--out", str(out), "--quiet"], capsys)
    assert status in (0, 1) and (out / CERT).exists()
    status, stdout, _ = _run(["recheck", str(out / CERT), "--corpus", str(out / "corpus.npz"), "--arb"], capsys)
    assert status == 0 and "Arb checked the fast layer at every leaf" in stdout


def test_no_positive_curvature_is_a_result_not_bad_input(tmp_path, capsys):
    """m = n = 32, seed 0: the corpus Hessian is not positive anywhere sampled on S's first octave, so the
    half-curvature rule has no step: exit 1 with that reason and no certificate (an explicit --eta proceeds)."""
    status, stdout, _ = _run(["interval", "--m", "32", "--n", "32", "--seed", "0", "--out", str(tmp_path / "o"),
                              "--quiet"], capsys)
    assert status == 1 and not (tmp_path / "o" / CERT).exists()
    assert stdout.splitlines()[-1].startswith("NOT PROVED: the corpus Hessian has no positive curvature")
