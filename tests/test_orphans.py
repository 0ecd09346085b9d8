"""No process outlives its command, however the command ends (issue 37, item 9).

The five ways a command ends: ``timeout``'s SIGTERM, ``timeout -s KILL``, ``kill -9`` of its main process,
Ctrl-C (SIGINT to its process group, as a terminal sends it) and its normal end. For each, every child the
command started must be gone within :data:`GONE_SECONDS` of the command's end: the checking child of a user
lemma (stumpcheck/lemmas/process.py), the plotting process of ``flow --out`` (numerics/flow/plot_worker.py),
the workers of a local pool (numerics/scheduling.py, numerics/processes.py) and, under ``-m slow``, the
workers of a Dask LocalCluster.

Every wait here waits for an event, never for a time window that a loaded machine could miss: the children
say who they are by writing a file (or are found among the command's children in /proc), ``timeout`` is
made to time out by its own alarm signal (SIGALRM: it then does exactly what it does when its time runs
out), and a child's work ends only when the test writes a release file. The one time bound is the
requirement itself: the children are gone within a second of the command's end (the kernel's parent-death
signal, or the parent's own clean-up before it exits, does not depend on load).
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from tests.test_processes import _alive

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"),
                                reason="the kernel's parent-death signal, fork and /proc are Linux's")

REPO = Path(__file__).resolve().parent.parent

#: the requirement: a command's children are gone within this many seconds of its end
GONE_SECONDS = 1.0
#: guards against a hang only (a command or child that never ends); no test waits this long when it passes
HANG_SECONDS = 300.0

WAYS = ("timeout-term", "timeout-kill", "kill-9", "ctrl-c", "normal")
#: exit status of the command (or of ``timeout``, for its two ways) for each way of ending it
STATUS = {"timeout-term": 124, "timeout-kill": -signal.SIGKILL,  # timeout kills its group, itself included
           "kill-9": -signal.SIGKILL, "ctrl-c": 130,
          "normal": 0}

#: a parent that starts one kind of child and holds it busy until the test releases it (or ends the parent)
PARENT = textwrap.dedent("""
    import os, sys, time
    from pathlib import Path

    folder, kind = Path(sys.argv[1]), sys.argv[2]


    def hold(*_):
        Path(folder, f"child-{os.getpid()}").write_text("")
        while not Path(folder, "release").exists():
            time.sleep(0.02)
        return os.getpid()


    def main():
        if kind == "lemma":
            from stumpcheck.lemmas.process import run_isolated
            run_isolated(hold, name="held", timeout=3600)
        elif kind == "plot":
            from stumpcheck.numerics.flow.plot_worker import PlotWorker
            with PlotWorker() as worker:
                Path(folder, f"child-{worker._process.pid}").write_text("")
                hold()
        elif kind == "pool":
            from stumpcheck.numerics.scheduling import local
            with local(2) as scheduler:
                scheduler.map(hold, [(k,) for k in range(2)])
        elif kind == "warm-up":
            from stumpcheck.numerics.kernel_warmup import warm_up
            with warm_up(["population", "corpus"]) as warming:
                Path(folder, f"child-{warming.process.pid}").write_text("")
                hold()
        elif kind == "dask":
            from stumpcheck.numerics.scheduling import connect
            with connect("local", 2) as scheduler:
                scheduler.map(hold, [(k,) for k in range(2)])


    if __name__ == "__main__":
        try:
            main()
        except KeyboardInterrupt:
            print("interrupted", file=sys.stderr)
            sys.exit(130)
""")

#: how many children of each kind the parent reports
CHILDREN = {"lemma": 1, "plot": 1, "pool": 2, "warm-up": 1, "dask": 2}


def _children_of(pid: int) -> list[int]:
    """The live processes whose parent is ``pid``."""
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
            except (OSError, IndexError):
                continue
            if int(fields[1]) == pid and fields[0] not in ("Z", "X"):
                found.append(int(entry.name))
    return found


def _start(argv: list[str], way: str, folder: Path, **extra_env) -> subprocess.Popen:
    """The command, in a session of its own (as a terminal's job is), its stderr in ``folder``/stderr."""
    if way.startswith("timeout"):
        argv = ["timeout", "-s", "TERM" if way == "timeout-term" else "KILL", "3600", *argv]
    env = {**os.environ, "PYTHONPATH": str(REPO), **extra_env}
    with open(folder / "stderr", "wb") as err:
        return subprocess.Popen(argv, cwd=folder, env=env, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                stderr=err, start_new_session=True)


def _wait_for(condition, process: subprocess.Popen, folder: Path, what: str):
    """Poll ``condition()`` until it gives something true; fail if the command ends first (or hangs)."""
    deadline = time.monotonic() + HANG_SECONDS
    while time.monotonic() < deadline:
        found = condition()
        if found:
            return found
        if process.poll() is not None:
            pytest.fail(f"the command ended (status {process.returncode}) before {what}: "
                        f"{(folder / 'stderr').read_text(errors='replace')[-2000:]}")
        time.sleep(0.05)
    pytest.fail(f"no {what} within {HANG_SECONDS} s")


def _end(process: subprocess.Popen, way: str, folder: Path) -> None:
    """End the command ``way``, then wait for its end."""
    if way == "kill-9":
        os.kill(process.pid, signal.SIGKILL)
    elif way == "ctrl-c":
        os.killpg(process.pid, signal.SIGINT)
    elif way.startswith("timeout"):
        os.kill(process.pid, signal.SIGALRM)  # timeout's own alarm: it acts as when its time runs out
    else:
        (folder / "release").write_text("")
    process.wait(HANG_SECONDS)


def _left_after_end(children: list[int]) -> list[int]:
    """The children still alive :data:`GONE_SECONDS` after the command's end (killed here, to clean up)."""
    deadline = time.monotonic() + GONE_SECONDS
    while any(_alive(pid) for pid in children) and time.monotonic() < deadline:
        time.sleep(0.01)
    left = [pid for pid in children if _alive(pid)]
    for pid in left:
        os.kill(pid, signal.SIGKILL)
    return left


def _check_end(process: subprocess.Popen, way: str, folder: Path, children: list[int]) -> None:
    left = _left_after_end(children)
    err = (folder / "stderr").read_text(errors="replace")
    assert not left, f"{way}: children {left} outlived the command; stderr: {err[-2000:]}"
    assert process.returncode == STATUS[way], (way, process.returncode, err[-2000:])
    assert "Traceback" not in err and "leaked" not in err, err[-3000:]


def _cleanup(process: subprocess.Popen) -> None:
    if process.poll() is None:
        os.killpg(process.pid, signal.SIGKILL)
        process.wait(30)


@pytest.fixture(autouse=True)
def _timeout_installed(request):
    if "timeout" in request.node.name and shutil.which("timeout") is None:
        pytest.skip("no timeout command (coreutils)")


def _mechanism(kind: str, way: str, tmp_path: Path) -> None:
    (tmp_path / "parent.py").write_text(PARENT)
    process = _start([sys.executable, str(tmp_path / "parent.py"), str(tmp_path), kind], way, tmp_path,
                     NUMBA_CACHE_DIR=str(tmp_path / "numba-cache"))
    try:
        def reported():
            pids = [int(p.name.split("-")[1]) for p in tmp_path.glob("child-*")]
            return pids if len(pids) >= CHILDREN[kind] else None

        children = _wait_for(reported, process, tmp_path, f"{CHILDREN[kind]} started {kind} children")
        _end(process, way, tmp_path)
        _check_end(process, way, tmp_path, children)
    finally:
        _cleanup(process)


@pytest.mark.parametrize("way", WAYS)
@pytest.mark.parametrize("kind", ["lemma", "plot", "pool", "warm-up"])
def test_no_child_outlives_its_parent(kind, way, tmp_path):
    """Each kind of child in a small parent script (a second to start), each way; the kernel warm-up
    (numerics/kernel_warmup.py) with a cache of its own, so that it has kernels to compile."""
    _mechanism(kind, way, tmp_path)


@pytest.mark.slow
@pytest.mark.parametrize("way", WAYS)
def test_no_dask_worker_outlives_its_parent(way, tmp_path):
    pytest.importorskip("dask.distributed")
    _mechanism("dask", way, tmp_path)


# --- the commands themselves (minutes under load: -m slow)

#: a user lemma whose margin says who it runs in and holds its check until the test's release file appears
HELD_LEMMA = textwrap.dedent("""
    import os, time
    from pathlib import Path
    from hypothesis import strategies as st
    from stumpcheck.lemmas import lemma

    HERE = Path(__file__).parent


    @lemma(name="held", statement="1 > 0, once released", domain={"x": st.integers(0, 3)})
    def held(x):
        Path(HERE, f"child-{os.getpid()}").write_text("")
        while not Path(HERE, "release").exists():
            time.sleep(0.02)
        return 1.0
""")


def _main_pid(process: subprocess.Popen, way: str) -> int | None:
    """The command's own process: the started one, or ``timeout``'s child."""
    if not way.startswith("timeout"):
        return process.pid
    children = _children_of(process.pid)
    return children[0] if children else None


def _command(argv: list[str], way: str, tmp_path: Path, children) -> None:
    """Run ``stumpcheck argv`` in ``tmp_path``, wait for ``children(main pid)`` to name its children, end it
    ``way``, and require them gone within a second, with the way's exit status and no traceback."""
    process = _start([sys.executable, "-m", "stumpcheck", *argv], way, tmp_path)
    try:
        def started():
            main = _main_pid(process, way)
            return None if main is None else children(main)

        found = _wait_for(started, process, tmp_path, "the command's children")
        _end(process, way, tmp_path)
        _check_end(process, way, tmp_path, found)
        if way == "ctrl-c":
            lines = (tmp_path / "stderr").read_text().strip().splitlines()
            assert "interrupted" in lines[-1], lines
    finally:
        _cleanup(process)


@pytest.mark.slow
@pytest.mark.parametrize("way", WAYS)
def test_verify_lemma_leaves_no_checking_child(way, tmp_path):
    (tmp_path / "held.py").write_text(HELD_LEMMA)

    def reported(_main):
        return [int(p.name.split("-")[1]) for p in tmp_path.glob("child-*")] or None

    _command(["verify", "--lemma", f"{tmp_path / 'held.py'}:held", "--out", str(tmp_path / "out")], way, tmp_path,
             reported)


@pytest.mark.slow
@pytest.mark.parametrize("way", [w for w in WAYS if w != "normal"])
def test_flow_out_leaves_no_plotting_process(way, tmp_path):
    """A 30-digit flow (minutes): its only child is the plotting process, forked at the start."""
    _command(["flow", "--dps", "30", "--t-max", "1e12", "--workers", "1", "--quiet", "--out", str(tmp_path / "o")],
             way, tmp_path, lambda main: _children_of(main) or None)


@pytest.mark.slow
@pytest.mark.parametrize("way", [w for w in WAYS if w != "normal"])
def test_interval_leaves_no_pool_worker(way, tmp_path):
    """Two spawned workers and their resource tracker: all children of the command."""
    _command(["interval", "--m", "64", "--n", "64", "--workers", "2", "--quiet", "--out", str(tmp_path / "o")],
             way, tmp_path, lambda main: (lambda kids: kids if len(kids) >= 3 else None)(_children_of(main)))


@pytest.mark.slow
@pytest.mark.parametrize("way", ["kill-9", "ctrl-c"])
def test_region_on_a_local_dask_cluster_leaves_no_worker(way, tmp_path):
    """Once the cluster is up (its line on stderr): its two workers and the resource tracker. (A Dask worker
    killed while it still imports Dask ends when the import is done, when it first looks at its parent.)"""
    pytest.importorskip("dask.distributed")

    def up(main):
        if "certified work on" not in (tmp_path / "stderr").read_text(errors="replace"):
            return None
        kids = _children_of(main)
        return kids if len(kids) >= 3 else None

    _command(["region", "--b-max", "1000", "--scheduler", "local", "--workers", "2", "--out", str(tmp_path / "o")],
             way, tmp_path, up)


def test_flow_interrupted_in_its_solve_exits_130_with_one_line(monkeypatch, capsys, tmp_path):
    """The solvers stop on Ctrl-C and return what they have (status INTERRUPTED): ``flow`` printed the table,
    wrote its files and exited 1; now it exits 130 with one line and writes nothing."""
    import types

    from stumpcheck.cli.commands import main
    from stumpcheck.numerics.flow import run as flow_run
    from stumpcheck.numerics.flow.ode.solution import Status

    monkeypatch.setattr(flow_run, "run_population_flow",
                        lambda *args, **kwargs: types.SimpleNamespace(status=Status.INTERRUPTED))
    status = main(["flow", "--t-max", "1e6", "--quiet", "--no-plots", "--out", str(tmp_path / "out")])
    out, err = capsys.readouterr()
    assert status == 130 and err.strip().splitlines() == ["stumpcheck: interrupted"], (status, out, err)
    assert out == "" and not any((tmp_path / "out").glob("flow.*"))


@pytest.mark.slow
@pytest.mark.parametrize("way", [w for w in WAYS if w != "normal"])
def test_verify_background_workers_end_with_it(way, tmp_path):
    """verify --quick starts two background workers for C2's re-check (stumpcheck/claims/background.py); once
    both are up (and the warm-up child, if any), every child goes with the command."""
    _command(["verify", "--quick", "--only", "C2", "--out", str(tmp_path / "o")], way, tmp_path,
             lambda main: (lambda kids: kids if len(kids) >= 2 else None)(_children_of(main)))
