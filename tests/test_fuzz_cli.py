"""A table-driven fuzz of the command line: bad and extreme input to every command.

The contract (``stumpcheck.cli.commands.main``): exit status 0 when everything asked for
was computed and passed, 1 when a claim, lemma or certificate failed or a
value could not be verified, 2 for bad input or an impossible request, with
ONE line on stderr. Each case below runs in-process in an empty working
folder and asserts the status, that an error is one line (at most
``MAX_ERROR_LINE`` characters, with the expected fragment), that no traceback
or "internal error" is printed, that a rejected request leaves no file behind,
and that it returns within :data:`CASE_SECONDS`.

Placeholders in the argument lists: ``{good}`` a valid corpus, ``{bad}`` a
corpus holding a NaN, ``{text}`` a file that is not a corpus, ``{file}`` a
regular file (an output folder below it cannot be created), ``{big}`` a
100 000-character argument, ``{lemmas}`` a file of misbehaving lemmas,
``{exits}`` / ``{broken}`` lemma files that call sys.exit(3) / raise on import,
``{grid_*}`` sweep grids. Outputs are written relative to the working folder.
"""

from __future__ import annotations

import re
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

from stumpcheck.cli.commands import MAX_ERROR_LINE, main

#: most seconds one case may take (rejections happen before any work; some import SymPy or Hypothesis first)
CASE_SECONDS = 20.0

BIG = "9" * 100_000
PROGRESS = re.compile(r"^\[\d+/\d+\] \S+: running \.\.\.$")
REPO = Path(__file__).resolve().parent.parent

# option values that are never a number
NOT_NUMBERS = ["", "abc", "nan", "inf", "-inf", "1e999999999", "0x10", "1,2", "{big}"]
# a sampled corpus big enough to be valid and small enough to be instant
SAMPLED = ["--m", "8", "--n", "8", "--seed", "0"]

LEMMA_FILE = '''
from hypothesis import strategies as st
from stumpcheck.lemmas import lemma

@lemma(name="inf_margin", statement="inf", domain={"x": st.floats(0, 1)}, max_examples=5)
def inf_margin(x):
    return float("inf")

@lemma(name="nan_margin", statement="nan", domain={"x": st.floats(0, 1)}, max_examples=5)
def nan_margin(x):
    return float("nan")

@lemma(name="exits", statement="exits", domain={"x": st.floats(0, 1)}, max_examples=5)
def exits(x):
    raise SystemExit(3)

@lemma(name="fine", statement="x + 1 > 0", domain={"x": st.floats(0, 1)}, max_examples=5)
def fine(x):
    return x + 1

not_a_lemma = 42
'''


def _cases():
    """(id, argv, expected status, fragment of stderr or None)."""
    cases = []

    def add(name, argv, status=2, fragment=None):
        cases.append(pytest.param(argv, status, fragment, id=name))

    # --- the program and its groups
    add("root-no-args", [], 2)
    add("root-help", ["--help"], 0)
    add("root-version", ["--version"], 0)
    add("root-unknown-command", ["frobnicate"], 2, "No such command")
    add("root-unknown-option", ["--frobnicate"], 2, "No such option")
    add("corpus-no-args", ["corpus"], 2)
    add("corpus-unknown", ["corpus", "shuffle"], 2, "No such command")
    add("unknown-huge-command", ["{big}"], 2)
    for command in ("derive", "export", "eval", "flow", "fresh", "sweep", "certify", "verify", "grad", "train"):
        add(f"{command}-help", [command, "--help"], 0)
        add(f"{command}-unknown-option", [command, "--no-such-option", "1"], 2, "No such option")

    # --- eval: input errors only (its numerics are checked elsewhere)
    add("eval-missing-b", ["eval", "loss", "--a", "1"], 2, "--b")
    add("eval-bad-quantity", ["eval", "entropy", "--a", "1", "--b", "1"], 2)
    add("eval-theta-for-loss", ["eval", "loss", "--a", "1", "--b", "1", "--theta", "0.5"], 2, "--theta")
    add("eval-error-needs-theta", ["eval", "error", "--a", "1", "--b", "1"], 2, "--theta")
    add("eval-rel-width-alone", ["eval", "loss", "--a", "1", "--b", "1", "--rel-width", "0.1"], 2, "--rel-width")
    for value in NOT_NUMBERS:
        if value != "1e999999999":  # finite as a decimal: eval's own domain check (its issue) decides
            add(f"eval-a-{value[:12] or 'empty'}", ["eval", "loss", "--a", value, "--b", "1"], 2)
    for value in ("0", "-0", "-5", "abc", "nan"):
        add(f"eval-b-{value}", ["eval", "loss", "--a", "1", "--b", value], 2)
    for value in ("1.5", "-1", "nan"):
        add(f"eval-theta-{value}", ["eval", "error", "--a", "1", "--b", "1", "--theta", value], 2)
    for value in ("14", "10001", "abc", "-30", "1e3", "{big}"):
        add(f"eval-dps-{value[:12]}", ["eval", "loss", "--a", "1", "--b", "1", "--dps", value], 2)

    # --- flow
    for value in ("1e-17", "1e-30", "1e-14", "0", "-1e-8", "1e-3", "1", "nan", "abc"):
        add(f"flow-rtol-{value}", ["flow", "--quiet", "--rtol", value], 2, "rtol")
    add("flow-rtol-below-dps", ["flow", "--quiet", "--dps", "30", "--rtol", "1e-40"], 2, "rtol")
    for value in ("1e300", "1e22", "0", "-1", "inf", "nan", "abc", "1e999999999"):
        add(f"flow-t-max-{value}", ["flow", "--quiet", "--t-max", value], 2, "t-max")
    for value in ("0", "-0", "-5", "1e6", "1e308", "nan", "abc"):
        add(f"flow-b0-{value}", ["flow", "--quiet", "--b0", value], 2)
    for value in ("1e7", "-1e308", "nan", "{big}"):
        add(f"flow-a0-{value[:12]}", ["flow", "--quiet", "--a0", value], 2)
    for value in ("0", "0.5", "-0.1", "abc"):
        add(f"flow-delta-{value}", ["flow", "--quiet", "--delta", value], 2, "delta")
    add("flow-solver", ["flow", "--quiet", "--solver", "euler"], 2, "solver")
    add("flow-dps-14", ["flow", "--quiet", "--dps", "14"], 2)
    add("flow-dps-abc", ["flow", "--quiet", "--dps", "abc"], 2)
    add("flow-workers-3", ["flow", "--quiet", "--workers", "3"], 2)
    add("flow-rhs", ["flow", "--quiet", "--rhs", "fortran"], 2)
    add("flow-out-under-file", ["flow", "--quiet", "--t-max", "1", "--out", "{file}/sub"], 2, "--out")
    add("flow-out-is-file", ["flow", "--quiet", "--t-max", "1", "--out", "{file}"], 2)
    add("flow-out-in-proc", ["flow", "--quiet", "--t-max", "1", "--out", "/proc/stumpcheck-out"], 2, "--out")

    # --- export
    add("export-out-under-file", ["export", "--out", "{file}/sub"], 2, "--out")
    add("export-out-in-proc", ["export", "--out", "/proc/stumpcheck-out"], 2, "--out")
    add("export-format", ["export", "--format", "docx"], 2)

    # --- fresh
    fresh = ["fresh", "--quiet", "--a", "10", "--b", "10", "--theta", "0.5", "--N", "16"]

    def fresh_with(option, value):
        argv = list(fresh)
        if option in argv:
            argv[argv.index(option) + 1] = value
        else:
            argv += [option, value]
        return argv

    for value in ("1e308", "-1e308", "1e151", "nan", "inf", "abc", "{big}"):
        add(f"fresh-a-{value[:12]}", fresh_with("--a", value), 2, "--a")
    for value in ("1e308", "0", "-0", "-5", "nan", "abc"):
        add(f"fresh-b-{value}", fresh_with("--b", value), 2)
    for value in ("1.5", "-0.1", "nan", "abc"):
        add(f"fresh-theta-{value}", fresh_with("--theta", value), 2, "theta")
    for value in ("0", "-1", "2097152", "1,,2", "abc", "16,0"):
        add(f"fresh-N-{value}", fresh_with("--N", value), 2, "--N")
    for value in ("1000000000000", "100000001", "1", "0", "abc", "{big}"):
        add(f"fresh-reps-{value[:12]}", fresh_with("--reps", value), 2, "--reps")
    add("fresh-draws-1e11", fresh_with("--N", "1000,1000") + ["--reps", "50000000"], 2, "draws")
    for value in ("-1", str(2 ** 63), str(2 ** 70), "abc"):
        add(f"fresh-seed-{value[:12]}", fresh_with("--seed", value), 2, "--seed")
    add("fresh-estimator", fresh_with("--estimator", "tripled"), 2)
    exact = fresh + ["--exact"]
    for option, value, names in (("--a", "1e9", "at most"), ("--a", "nan", "--a"), ("--a", "3,2", "lo <= hi"),
                                 ("--a", "1,2,3", "--a"), ("--b", "0", "b must be > 0"), ("--b", "-1,1", "b must be > 0"),
                                 ("--theta", "1.5", "theta"), ("--N", "1000000001", "--N"), ("--N", "0", "--N"),
                                 ("--dps", "10", "--dps"), ("--dps", "abc", "--dps"), ("--rel-width", "0", "rel_width"),
                                 ("--rel-width", "2", "rel_width"), ("--estimator", "averaged", "averaged"),
                                 ("--reps", "100", "--reps"), ("--seed", "1", "--seed")):
        argv = list(exact)
        if option in argv:
            argv[argv.index(option) + 1] = value
        else:
            argv += [option, value]
        add(f"fresh-exact{option}-{value[:12]}", argv, 2, names)
    add("fresh-dps-without-exact", fresh_with("--dps", "30"), 2, "--exact")

    # --- corpus make
    make = ["corpus", "make", "--m", "4", "--n", "3", "--seed", "1", "--out", "c.npz"]

    def make_with(option, value):
        argv = list(make)
        argv[argv.index(option) + 1] = value
        return argv

    for value in ("0", "-1", "abc", "2000000001", "{big}"):
        add(f"make-m-{value[:12]}", make_with("--m", value), 2, "--m")
    for value in ("0", "x", "1.5"):
        add(f"make-n-{value}", make_with("--n", value), 2, "--n")
    add("make-tokens", ["corpus", "make", "--m", "100000", "--n", "100000", "--seed", "1", "--out", "c.npz"], 2,
        "tokens")
    for value in ("-1", str(2 ** 63), str(2 ** 70), "1e3", "abc"):
        add(f"make-seed-{value[:12]}", make_with("--seed", value), 2, "--seed")
    for value in ("0.5,0.5", "0.9,0.1", "-1,1", "0,2", "0", "a,b", "0,1,2"):
        add(f"make-prior-{value}", make + ["--prior", value], 2, "prior")
    add("make-out-missing-folder", make_with("--out", "no/such/c.npz"), 2, "--out")
    add("make-out-is-dir", make_with("--out", "."), 2)
    add("make-out-under-file", make_with("--out", "{file}/c.npz"), 2)

    # --- grad
    grad = ["grad", "--corpus", "{good}", "--a", "10", "--b", "10"]

    def grad_with(option, value):
        argv = list(grad)
        argv[argv.index(option) + 1] = value
        return argv

    for value in ("0", "-0", "-5", "1e308", "1e151", "nan", "inf", "abc", "{big}"):
        add(f"grad-b-{value[:12]}", grad_with("--b", value), 2, "--b")
    for value in ("1e308", "-1e308", "nan", "abc"):
        add(f"grad-a-{value}", grad_with("--a", value), 2, "--a")
    add("grad-corpus-missing", grad_with("--corpus", "missing.npz"), 2, "does not exist")
    add("grad-corpus-nan", grad_with("--corpus", "{bad}"), 2, "non-finite")
    add("grad-corpus-text", grad_with("--corpus", "{text}"), 2)
    add("grad-method", grad + ["--method", "sparse"], 2)

    # --- train
    train = ["train", "--quiet", *SAMPLED, "--out", "run"]

    def train_with(option, value):
        argv = list(train)
        argv[argv.index(option) + 1] = value
        return argv

    add("train-size-1e10", ["train", "--quiet", "--m", "100000", "--n", "100000", "--seed", "0", "--out", "run"], 2,
        "tokens")
    for value in ("0", "-1", "abc"):
        add(f"train-m-{value}", train_with("--m", value), 2, "--m")
    for value in ("-1", str(2 ** 70), "abc"):
        add(f"train-seed-{value[:12]}", train_with("--seed", value), 2, "--seed")
    for option in ("--eta", "--b0", "--t-max", "--b-target"):
        for value in ("0", "-1", "nan", "abc"):
            add(f"train{option}-{value}", train + [option, value], 2, option)
    add("train-steps-0", train + ["--steps", "0"], 2, "--steps")
    add("train-steps-and-t-max", train + ["--steps", "5", "--t-max", "1"], 2)
    add("train-both-sources", train + ["--corpus", "{good}"], 2)
    add("train-no-source", ["train", "--quiet", "--out", "run"], 2)
    add("train-out-under-file", train_with("--out", "{file}/run"), 2)
    add("train-corpus-nan", ["train", "--quiet", "--corpus", "{bad}", "--out", "run"], 2, "non-finite")

    # --- sweep
    sweep = ["sweep", "--quiet", "--m", "8", "--n", "8", "--N", "16", "--out", "sw"]

    def sweep_with(option, value):
        argv = list(sweep)
        argv[argv.index(option) + 1] = value
        return argv

    add("sweep-nothing", ["sweep", "--quiet", "--out", "sw"], 2)
    add("sweep-grid-and-m", sweep + ["--grid", "{grid_ok}"], 2)
    add("sweep-grid-missing", ["sweep", "--quiet", "--grid", "missing.json", "--out", "sw"], 2, "--grid")
    for name in ("grid_not_json", "grid_missing_keys", "grid_unknown_key", "grid_big_seed", "grid_small_m",
                 "grid_bad_theta", "grid_empty_list", "grid_tokens"):
        add(f"sweep-{name}", ["sweep", "--quiet", "--grid", "{" + name + "}", "--out", "sw"], 2)
    for value in ("4", "0", "abc"):
        add(f"sweep-m-{value}", sweep_with("--m", value), 2)
    add("sweep-seeds-2^70", sweep + ["--seeds", str(2 ** 70)], 2, "--seeds")
    add("sweep-workers-0", sweep + ["--workers", "0"], 2, "--workers")
    add("sweep-reps-1", sweep + ["--reps", "1"], 2, "--reps")
    add("sweep-out-under-file", sweep_with("--out", "{file}/sw"), 2, "--out")
    add("sweep-empty-scheduler", sweep + ["--scheduler", " "], 2)

    # --- certify
    certify = ["certify", "--predicate", "error_gradient_b_negative", "--a", "10,11", "--b", "10,11"]
    for value in ("1000000000000", "1000001", "0", "-1", "abc"):
        add(f"certify-max-boxes-{value}", certify + ["--max-boxes", value], 2, "--max-boxes")
    for value in ("14", "10001", "abc"):
        add(f"certify-dps-{value}", certify + ["--dps", value], 2)
    add("certify-predicate", ["certify", "--predicate", "is_true", "--a", "1,2", "--b", "1,2"], 2)
    for value in ("1", "2,1", "a,b", "1,2,3"):
        add(f"certify-a-{value}", ["certify", "--predicate", "error_gradient_b_negative", "--a", value,
                                   "--b", "10,11"], 2)
    add("certify-b-negative", ["certify", "--predicate", "error_gradient_b_negative", "--a", "10,11",
                               "--b", "-1,1"], 2)
    add("certify-a-1e400", ["certify", "--predicate", "error_gradient_b_negative", "--a", "1e400,1e401",
                            "--b", "10,11"], 2)
    add("certify-theta-outside", certify + ["--theta", "0.5,1.5"], 2)
    add("certify-param-malformed", certify + ["--param", "c"], 2, "--param")
    add("certify-out-missing-folder", certify + ["--out", "no/such/cert.json"], 2, "--out")

    # --- verify
    add("verify-only-unknown", ["verify", "--only", "C99", "--out", "rep"], 2, "unknown id")
    add("verify-only-empty", ["verify", "--only", ",", "--out", "rep"], 2)
    add("verify-seed-negative", ["verify", "--seed", "-1", "--out", "rep"], 2, "--seed")
    add("verify-seed-2^70", ["verify", "--seed", str(2 ** 70), "--out", "rep"], 2, "--seed")
    add("verify-max-examples-0", ["verify", "--max-examples", "0", "--out", "rep"], 2, "--max-examples")
    add("verify-level", ["verify", "--level", "proved", "--out", "rep"], 2)
    add("verify-lemma-no-colon", ["verify", "--lemma", "file.py", "--out", "rep"], 2, "--lemma")
    add("verify-lemma-missing-file", ["verify", "--lemma", "missing.py:x", "--out", "rep"], 2, "no such file")
    add("verify-lemma-missing-name", ["verify", "--lemma", "{lemmas}:nothing", "--out", "rep"], 2, "no attribute")
    add("verify-lemma-not-a-lemma", ["verify", "--lemma", "{lemmas}:not_a_lemma", "--out", "rep"], 2, "not a Lemma")
    add("verify-lemma-import-exits", ["verify", "--lemma", "{exits}:x", "--out", "rep"], 2, "sys.exit(3)")
    add("verify-lemma-import-raises", ["verify", "--lemma", "{broken}:x", "--out", "rep"], 2, "importing")
    add("verify-lemma-margin-exits", ["verify", "--lemma", "{lemmas}:exits", "--out", "rep"], 2, "sys.exit(3)")
    add("verify-lemma-level", ["verify", "--lemma", "{lemmas}:fine", "--level", "certified", "--out", "rep"], 2)
    add("verify-out-under-file", ["verify", "--only", "label_encoding", "--out", "{file}/rep"], 2, "--out")
    add("verify-empty-scheduler", ["verify", "--scheduler", " ", "--out", "rep"], 2)
    # results, not errors: exit 1 with the failure named, exit 0 when the lemma holds
    add("verify-lemma-inf-margin", ["verify", "--lemma", "{lemmas}:inf_margin", "--out", "rep"], 1, "FAIL: inf_margin")
    add("verify-lemma-nan-margin", ["verify", "--lemma", "{lemmas}:nan_margin", "--out", "rep"], 1, "FAIL: nan_margin")
    add("verify-lemma-fine", ["verify", "--lemma", "{lemmas}:fine", "--out", "rep"], 0)
    return cases


CASES = _cases()


@pytest.fixture(scope="module")
def inputs(tmp_path_factory):
    """The files the placeholders name (in a folder of their own, checked for changes after every case)."""
    folder = tmp_path_factory.mktemp("fuzz-inputs")
    good = folder / "good.npz"
    np.savez(good, x=np.random.default_rng(0).random((8, 8)), theta=np.linspace(0.1, 0.9, 8))
    bad = folder / "bad.npz"
    np.savez(bad, x=np.array([[0.2, np.nan]]), theta=np.array([0.5]))
    (folder / "text.npz").write_text("not a corpus\n")
    (folder / "plain-file").write_text("a file, not a folder\n")
    (folder / "lemmas.py").write_text(LEMMA_FILE)
    (folder / "exits.py").write_text("import sys\nsys.exit(3)\n")
    (folder / "broken.py").write_text("raise RuntimeError('this lemma file is broken')\n")
    grids = {
        "grid_ok": '{"m": [8], "n": [8], "seeds": [0], "N": [16]}',
        "grid_not_json": "{not json",
        "grid_missing_keys": '{"m": [8]}',
        "grid_unknown_key": '{"m": [8], "n": [8], "seeds": [0], "N": [16], "colour": "red"}',
        "grid_big_seed": '{"m": [8], "n": [8], "seeds": [%d], "N": [16]}' % 2 ** 70,
        "grid_small_m": '{"m": [4], "n": [8], "seeds": [0], "N": [16]}',
        "grid_bad_theta": '{"m": [8], "n": [8], "seeds": [0], "N": [16], "thetas": [1.5]}',
        "grid_empty_list": "[]",
        "grid_tokens": '{"m": [100000], "n": [100000], "seeds": [0], "N": [16]}',
    }
    names = {"good": good, "bad": bad, "text": folder / "text.npz", "file": folder / "plain-file",
             "lemmas": folder / "lemmas.py", "exits": folder / "exits.py", "broken": folder / "broken.py"}
    for name, text in grids.items():
        path = folder / f"{name}.json"
        path.write_text(text)
        names[name] = path
    return folder, {k: str(v) for k, v in names.items()}


def _snapshot(*folders: Path) -> dict:
    return {str(p): p.stat().st_mtime_ns for folder in folders for p in folder.rglob("*")}


def test_the_table_is_large_enough():
    assert len(CASES) >= 150
    assert len({c.id for c in CASES}) == len(CASES)


@pytest.mark.parametrize("argv, status, fragment", CASES)
def test_cli_contract(argv, status, fragment, inputs, tmp_path, monkeypatch, capsys):
    folder, names = inputs
    work = tmp_path / "work"
    work.mkdir()
    monkeypatch.chdir(work)
    argv = [a.replace("{big}", BIG).format(**names) if "{" in a else a for a in argv]
    before = _snapshot(work, folder)
    start = time.perf_counter()
    got = main(argv)
    seconds = time.perf_counter() - start
    out, err = capsys.readouterr()
    assert got == status, f"exit {got}, expected {status}; stderr: {err[-600:]}"
    assert "Traceback" not in out + err and "internal error" not in err, err[-2000:]
    assert seconds < CASE_SECONDS, f"took {seconds:.1f} s"
    if status == 2 and argv and argv != ["corpus"]:
        # verify's per-entry progress lines ("[1/1] name: running ...") may precede an error found while running
        lines = [line for line in err.strip().splitlines() if not PROGRESS.match(line)]
        assert len(lines) == 1 and lines[0].startswith("stumpcheck: error: "), err[-2000:]
        assert len(lines[0]) <= MAX_ERROR_LINE
        assert BIG[:1000] not in err
    if status != 0:
        assert "error:" not in out
    if fragment is not None:
        assert fragment in err + out, err[-2000:]
    if status == 2:
        assert _snapshot(work, folder) == before, "a rejected request left files behind"


@pytest.mark.parametrize("argv", [[], ["corpus"]])
def test_no_arguments_print_readable_help_on_stdout(argv, capsys):
    status = main(argv)
    out, err = capsys.readouterr()
    assert status == 2 and err == ""
    assert out.startswith("Usage: stumpcheck") and len(out.splitlines()) > 5 and "Commands:" in out


def test_verify_failure_is_a_result_not_an_error(inputs, tmp_path, monkeypatch, capsys):
    """A failed lemma: the table, then '0/1 PASS; FAIL: inf_margin ...' and exit 1, no 'error:' anywhere."""
    _, names = inputs
    monkeypatch.chdir(tmp_path)
    status = main(["verify", "--lemma", f"{names['lemmas']}:inf_margin", "--out", "rep"])
    out, err = capsys.readouterr()
    assert status == 1
    assert out.strip().splitlines()[-1].startswith("0/1 PASS; FAIL: inf_margin")
    assert "error" not in err.lower() and "not a finite number" in out


def test_verify_keeps_hypothesis_out_of_the_working_folder(tmp_path):
    """A fresh process (Hypothesis' caches start empty): nothing but --out appears in the working folder."""
    env = {**__import__("os").environ, "PYTHONPATH": str(REPO)}
    done = subprocess.run([sys.executable, "-m", "stumpcheck", "verify", "--only", "label_encoding", "--out", "rep"],
                          cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["rep"]


def test_case_counts_by_status():
    """The table covers every command and every status of the contract."""
    statuses = [c.values[1] for c in CASES]
    assert statuses.count(2) >= 150 and statuses.count(0) >= 10 and statuses.count(1) >= 2
    commands = {c.values[0][0] for c in CASES if c.values[0]}
    assert {"derive", "export", "eval", "flow", "fresh", "sweep", "certify", "verify", "corpus", "grad",
            "train"} <= commands


def test_error_lines_are_cut(capsys):
    """A 100 000-character argument is not echoed back whole."""
    status = main(["fresh", "--a", BIG, "--b", "1", "--theta", "0.5", "--N", "4"])
    err = capsys.readouterr().err
    assert status == 2 and len(err.strip()) <= MAX_ERROR_LINE and err.count("\n") == 1

