"""Fuzzed lemma files and verify options (issue "Trust", item 6): each ends within 30 s with exit 2 and one
error line on stderr (after verify's own "running ..." progress line, printed once a check has run 10 s), never a
traceback, hang or silent exit 0."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent

_HEADER = '''
from hypothesis import strategies as st
from stumpcheck.lemmas import lemma
'''


def _file(tmp_path, body: str, header: str = _HEADER) -> str:
    path = tmp_path / "fuzz_lemma.py"
    path.write_text(header + body)
    return str(path)


#: a hang guard (the lemmas below sleep or loop for an hour or forever): a loaded machine can take more than the
#: 30 s the fuzz contract names for starting Python, importing and forking, so the bound is wider here
LIMIT = 300.0


def _verify(*args, limit: float = LIMIT):
    """Run ``stumpcheck verify`` in a fresh process; (exit status, stderr lines, seconds)."""
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    start = time.perf_counter()
    done = subprocess.run([sys.executable, "-m", "stumpcheck", "verify", *args], capture_output=True, text=True,
                          timeout=limit, env=env, cwd=ROOT)
    return done.returncode, done.stderr.strip().splitlines(), time.perf_counter() - start


def _one_error_line(lines) -> str:
    """verify prints "[1/1] NAME: running ..." before a lemma runs; the rest must be one error line."""
    assert not any("Traceback" in line for line in lines), lines
    rest = [line for line in lines if not line.endswith(": running ...")]
    assert len(rest) == 1, lines
    assert rest[0].startswith("stumpcheck: error: "), rest
    return rest[0]


def test_a_lemma_that_sleeps_forever_is_stopped_by_the_timeout(tmp_path):
    spec = _file(tmp_path, '''
import time

@lemma(name="sleeps", statement="s", domain={"x": st.integers(0, 3)})
def sleeps(x):
    time.sleep(3600)
    return 1.0
''') + ":sleeps"
    code, lines, seconds = _verify("--lemma", spec, "--timeout", "3", "--out", str(tmp_path / "out"))
    assert code == 2 and seconds < LIMIT
    assert "no verdict within --timeout 3 s" in _one_error_line(lines)


def test_a_lemma_that_loops_forever_is_stopped_by_the_timeout(tmp_path):
    spec = _file(tmp_path, '''
@lemma(name="loops", statement="s", domain={"x": st.integers(0, 3)})
def loops(x):
    while True:
        x += 1
''') + ":loops"
    code, lines, seconds = _verify("--lemma", spec, "--timeout", "2", "--out", str(tmp_path / "out"))
    assert code == 2 and seconds < LIMIT
    assert "no verdict within --timeout 2 s" in _one_error_line(lines)


def test_a_lemma_raising_a_base_exception_is_one_line(tmp_path):
    spec = _file(tmp_path, '''
class Stop(BaseException):
    pass

@lemma(name="stops", statement="s", domain={"x": st.integers(0, 3)})
def stops(x):
    raise Stop("not an Exception")
''') + ":stops"
    code, lines, _ = _verify("--lemma", spec, "--out", str(tmp_path / "out"))
    assert code == 2
    assert "raised Stop (not an Exception): not an Exception" in _one_error_line(lines)


def test_os_exit_in_a_lemma_is_no_silent_exit_0(tmp_path):
    spec = _file(tmp_path, '''
import os

@lemma(name="exits", statement="s", domain={"x": st.integers(0, 3)})
def exits(x):
    os._exit(0)
''') + ":exits"
    code, lines, _ = _verify("--lemma", spec, "--out", str(tmp_path / "out"))
    assert code == 2
    assert "ended without a verdict (the process exited with status 0" in _one_error_line(lines)


def test_a_lambda_margin_is_refused_before_any_work(tmp_path):
    spec = _file(tmp_path, '''
from stumpcheck.numerics.certified.proofs.domains import Domain
from stumpcheck.numerics.certified.proofs.margins import Margin
from stumpcheck.lemmas import certified

@lemma(name="lam_margin", statement="s", domain={"b": st.floats(20, 30), "lam": st.floats(-1, 1),
       "theta": st.floats(0.2, 0.8)}, evidence=("sampled", "certified"),
       certify=certified(lambda: Margin.from_sympy("Lambda(b, b**2)", coordinates="calibration"),
                         lambda: Domain({"b": ("20", "30"), "lam": ("-1", "1"), "theta": ("0.2", "0.8")},
                                        coordinates="calibration")))
def lam_margin(b, lam, theta):
    return 1.0
''') + ":lam_margin"
    for extra in ((), ("--certified",)):
        code, lines, _ = _verify("--lemma", spec, *extra, "--out", str(tmp_path / "out"))
        assert code == 2
        assert lines == [lines[0]] and "must be one scalar SymPy expression" in lines[0], lines
        assert not (tmp_path / "out").exists()


def test_a_taylor_order_the_integrals_cannot_give_is_refused_when_loaded(tmp_path):
    """progress_direction's margin (in L_a, L_b) with order 3 needs κ_5: refused up front (was an internal error)."""
    spec = _file(tmp_path, '''
from stumpcheck.numerics.certified.proofs.domains import Domain
from stumpcheck.numerics.certified.proofs.margins import Margin
from stumpcheck.lemmas import certified

@lemma(name="order3", statement="s", domain={"b": st.floats(20, 30), "lam": st.just(0.0)},
       evidence=("certified", "sampled"),
       certify=certified(lambda: Margin.from_sympy("5 - b*Max(Abs(-2*b**3*L_a - 1), Abs(-2*b**3*L_b - 1))",
                                                   coordinates="calibration", theta_integral=True, taylor_order=3),
                         lambda: Domain({"b": ("20", "20.25"), "lam": ("0", "0")}, coordinates="calibration")))
def order3(b, lam):
    return 1.0
''') + ":order3"
    code, lines, _ = _verify("--lemma", spec, "--out", str(tmp_path / "out"))
    assert code == 2
    assert lines == [lines[0]] and "taylor_order 3 is not supported for this margin" in lines[0], lines
    assert "orders 1..2" in lines[0]


@pytest.mark.parametrize("args, message", [
    (("--only", "C3", "--level", "high-precision"), "--only C3: supports certified, not --level high-precision"),
    (("--only", "C3", "--level", "sampled"), "--only C3: supports certified, not --level sampled"),
    (("--quick", "--full"), "--quick and --full exclude each other"),
    (("--timeout", "0"), "--timeout must be in (0, 86400] seconds"),
])
def test_options_verify_would_have_ignored_are_refused(tmp_path, args, message):
    code, lines, seconds = _verify(*args, "--out", str(tmp_path / "out"))
    assert code == 2 and seconds < LIMIT
    assert lines == [f"stumpcheck: error: {message}"] or (len(lines) == 1 and message in lines[0]), lines


# --- code at a lemma file's top level: the file is imported only in a child process, under --timeout


@pytest.mark.parametrize("body, timeout, message", [
    ("import os\nos._exit(0)\n", "600",
     "importing its file ended without an answer (the process exited with status 0; os._exit or a crash in its "
     "top-level code?)"),
    ("while True:\n    pass\n", "3", "importing its file gave no answer within --timeout 3 s (it was stopped; "),
    ("import time\ntime.sleep(3600)\n", "3", "importing its file gave no answer within --timeout 3 s"),
    ("raise KeyboardInterrupt('at import')\n", "600", "importing its file raised KeyboardInterrupt: at import"),
])
def test_a_lemma_file_whose_top_level_code_never_returns_is_one_line(tmp_path, body, timeout, message):
    spec = _file(tmp_path, body, header="") + ":anything"
    code, lines, seconds = _verify("--lemma", spec, "--timeout", timeout, "--out", str(tmp_path / "out"))
    assert code == 2 and seconds < LIMIT, (code, lines, seconds)
    assert lines == [f"stumpcheck: error: --lemma {spec}: {message}"] or message in _one_error_line(lines), lines
    assert len(lines) == 1 and not (tmp_path / "out").exists()


def test_the_parent_does_not_import_a_user_file(tmp_path):
    """A file that writes a marker with its process id at import: only child processes import it."""
    marker = tmp_path / "imported_by"
    spec = _file(tmp_path, f'''
import os
with open({str(marker)!r}, "a") as f:
    f.write(f"{{os.getpid()}}\\n")

@lemma(name="marks", statement="s", domain={{"x": st.integers(0, 3)}})
def marks(x):
    return 1.0
''') + ":marks"
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    done = subprocess.Popen([sys.executable, "-m", "stumpcheck", "verify", "--lemma", spec, "--out",
                             str(tmp_path / "out")], env=env, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    _, err = done.communicate(timeout=LIMIT)
    assert done.returncode == 0, err
    importers = marker.read_text().split()
    assert importers and str(done.pid) not in importers


def test_a_python_only_lemma_asked_for_a_higher_level_names_the_fix(tmp_path):
    spec = f"{ROOT / 'examples' / 'lemma_example.py'}:overshoot_in_the_interior"
    for flag in (("--level", "high-precision"), ("--certified",)):
        code, lines, _ = _verify("--lemma", spec, *flag, "--out", str(tmp_path / "out"))
        level = flag[-1] if len(flag) == 2 else "certified"
        assert code == 2 and lines == [
            f"stumpcheck: error: --lemma {spec}: lemma overshoot_in_the_interior: a lemma with a Python function only "
            f"is sampled-only, not {level}: give it a SymPy margin (sympy_margin=Margin.from_sympy(...), or define "
            f"it with sympy_lemma(...))" + (" or a SymPy proof of its statement (certify=symbolic(...))"
                                            if level == "certified" else "")], lines
