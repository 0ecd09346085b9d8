"""Worker pools end with their parent, including when the parent is killed with SIGKILL.

Each test starts a parent process (a small script) that runs a pool of two
workers on slow cells, waits until both workers have reported their process
ids, kills the parent with SIGKILL and then requires both workers to be gone
within a few poll intervals of :data:`stumpcheck.numerics.processes.PARENT_POLL_SECONDS`.
"""

from __future__ import annotations

import os
import select
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from stumpcheck.numerics.processes import PARENT_POLL_SECONDS

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="POSIX signals and /proc")

REPO = Path(__file__).resolve().parent.parent

#: a sweep over slow cells: each worker writes its pid to PIDS/<pid> and then sleeps
SWEEP_PARENT = textwrap.dedent("""
    import os, sys, time
    from pathlib import Path

    def slow_cell(cell):
        Path(sys.argv[1], str(os.getpid())).write_text("")
        time.sleep(600)
        return {"x": cell["x"]}

    if __name__ == "__main__":
        from stumpcheck.numerics.corpus.sweep import run_sweep
        run_sweep(slow_cell, [{"x": i} for i in range(4)], store=Path(sys.argv[1], "store.jsonl"), workers=2)
""")

#: a spawn-context pool of stumpcheck.numerics.processes (as the population flow's second process uses); each
#: worker reports its pid from a task, that is once its initializer (the parent watch) has run
SPAWN_PARENT = textwrap.dedent("""
    import multiprocessing, os, sys, time
    from pathlib import Path
    from stumpcheck.numerics.processes import parent_watching_pool


    def hold(folder):
        Path(folder, str(os.getpid())).write_text("")
        time.sleep(600)


    if __name__ == "__main__":
        pool = parent_watching_pool(2, mp_context=multiprocessing.get_context("spawn"))
        futures = [pool.submit(hold, sys.argv[1]) for _ in range(2)]
        time.sleep(600)
""")

#: guards against a hang only: no test waits this long when it passes
HANG_SECONDS = 300


def _alive(pid: int) -> bool:
    """True if ``pid`` runs and is not a zombie."""
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (OSError, IndexError):
        return False
    return state not in ("Z", "X")


def _worker_pids(folder: Path, parent: subprocess.Popen, count: int, timeout: float = HANG_SECONDS) -> list[int]:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        pids = [int(p.name) for p in folder.iterdir() if p.name.isdigit()]
        if len(pids) >= count:
            return pids
        if parent.poll() is not None:
            pytest.fail(f"the parent exited early: {parent.stderr.read().decode()[-2000:]}")
        time.sleep(0.1)
    pytest.fail(f"the workers did not report within {timeout} s")


def _kill_parent_and_wait(script: str, tmp_path: Path) -> None:
    source = tmp_path / "parent.py"
    source.write_text(script)
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    parent = subprocess.Popen([sys.executable, str(source), str(tmp_path)], cwd=tmp_path, env=env,
                              stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    try:
        pids = _worker_pids(tmp_path, parent, 2)
        assert all(_alive(pid) for pid in pids)
        parent.send_signal(signal.SIGKILL)
        parent.wait(10)
        deadline = time.monotonic() + 10 * PARENT_POLL_SECONDS + 5
        while any(_alive(pid) for pid in pids) and time.monotonic() < deadline:
            time.sleep(0.1)
        left = [pid for pid in pids if _alive(pid)]
        for pid in left:  # clean up before failing
            os.kill(pid, signal.SIGKILL)
        assert not left, f"workers {left} outlived their SIGKILLed parent"
    finally:
        if parent.poll() is None:
            parent.kill()
            parent.wait(10)


def test_sweep_pool_workers_exit_when_the_parent_is_sigkilled(tmp_path):
    _kill_parent_and_wait(SWEEP_PARENT, tmp_path)


def test_spawned_pool_workers_exit_when_the_parent_is_sigkilled(tmp_path):
    _kill_parent_and_wait(SPAWN_PARENT, tmp_path)


def test_watch_parent_leaves_a_live_parent_alone():
    """In a process whose parent is alive the watcher does nothing (it only starts a daemon thread)."""
    import threading

    from stumpcheck.numerics.processes import watch_parent

    before = threading.active_count()
    watch_parent(os.getppid(), interval=0.05)
    time.sleep(0.2)
    assert threading.active_count() == before + 1


def _stumpcheck(args, cwd, *, preexec_fn=None, timeout=120):
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    return subprocess.run([sys.executable, "-m", "stumpcheck", *args], cwd=cwd, env=env, capture_output=True,
                          text=True, timeout=timeout, preexec_fn=preexec_fn)


def _cap_address_space(limit_bytes):
    def apply():
        import resource

        resource.setrlimit(resource.RLIMIT_AS, (limit_bytes, limit_bytes))

    return apply


@pytest.mark.parametrize("args, cap_gib", [
    (["corpus", "make", "--m", "40000", "--n", "50000", "--seed", "0", "--out", "c.npz"], 4),
    (["train", "--quiet", "--m", "40000", "--n", "50000", "--seed", "0", "--out", "run"], 4),
    (["fresh", "--quiet", "--a", "10", "--b", "10", "--theta", "0.5", "--N", "1", "--reps", "100000000"], 2),
])
def test_sizes_at_the_documented_limits_are_refused_under_a_memory_cap(args, cap_gib, tmp_path):
    """m·n = 2e9 tokens (the limit: 16 GB of x) under 4 GiB and 1e8 fresh contexts (about 3.2 GB of errors)
    under 2 GiB: exit 2, one line naming memory, nothing written, no MemoryError."""
    done = _stumpcheck(args, tmp_path, preexec_fn=_cap_address_space(cap_gib * 2 ** 30))
    assert done.returncode == 2, done.stderr[-2000:]
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and "of memory" in lines[0] and "MemoryError" not in done.stderr
    assert list(tmp_path.iterdir()) == []


def _read_pty(fd: int, timeout: float) -> str:
    """What the child wrote into its pseudo-terminal within ``timeout`` s ('' at its end)."""
    ready, _, _ = select.select([fd], [], [], timeout)
    if not ready:
        return ""
    try:
        return os.read(fd, 4096).decode(errors="replace")
    except OSError:  # EIO: the child closed the terminal
        return ""


def test_long_fresh_run_stops_cleanly_on_sigint(tmp_path):
    """10^10 draws are allowed (with a progress bar on a terminal); Ctrl-C ends them with status 130 and one line.

    stderr is a pseudo-terminal here: progress bars are drawn only on a terminal (stumpcheck.progress)."""
    import fcntl
    import pty
    import struct
    import termios

    env = {**os.environ, "PYTHONPATH": str(REPO)}
    master, slave = pty.openpty()
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 24, 100, 0, 0))  # tqdm draws nothing 0 columns wide
    child = subprocess.Popen([sys.executable, "-m", "stumpcheck", "fresh", "--a", "10", "--b", "10", "--theta",
                              "0.5", "--N", "1000", "--reps", "10000000"], cwd=tmp_path, env=env,
                             stdout=subprocess.PIPE, stderr=slave, text=True)
    os.close(slave)
    try:
        # interrupt once the progress bar is up (start-up time varies with the machine's load)
        shown, deadline = "", time.monotonic() + HANG_SECONDS
        while "fresh contexts" not in shown and time.monotonic() < deadline and child.poll() is None:
            shown += _read_pty(master, 1.0)
        child.send_signal(signal.SIGINT)
        child.wait(HANG_SECONDS)
        while chunk := _read_pty(master, 1.0):
            shown += chunk
        err = shown.replace("\r\n", "\n")
    finally:
        os.close(master)
        if child.poll() is None:
            child.kill()
            child.wait(10)
    assert child.returncode == 130, err[-2000:]
    assert "Traceback" not in err and err.strip().splitlines()[-1].strip() == "stumpcheck: interrupted"
    assert "fresh contexts" in err  # the progress bar was shown


def test_ctrl_c_stops_a_sweep_without_waiting_for_its_running_cells(tmp_path):
    """SIGINT to the process group (a terminal's Ctrl-C): the parent returns before its cells end (they sleep
    600 s, longer than the test waits for a hang), no cell is stored, and no worker is left."""
    source = tmp_path / "parent.py"
    source.write_text(SWEEP_PARENT)
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    parent = subprocess.Popen([sys.executable, str(source), str(tmp_path)], cwd=tmp_path, env=env,
                              stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, start_new_session=True)
    try:
        pids = _worker_pids(tmp_path, parent, 2)
        os.killpg(parent.pid, signal.SIGINT)
        parent.wait(HANG_SECONDS)  # TimeoutExpired if it waited for its cells
        store = tmp_path / "store.jsonl"
        assert not store.exists() or not store.read_text().strip()
        deadline = time.monotonic() + 5
        while any(_alive(pid) for pid in pids) and time.monotonic() < deadline:
            time.sleep(0.1)
        assert not [pid for pid in pids if _alive(pid)]
    finally:
        if parent.poll() is None:
            os.killpg(parent.pid, signal.SIGKILL)
            parent.wait(10)


#: a pool whose running task is abandoned with cancelled tasks behind it (Ctrl-C in ``Scheduler.imap``)
ABANDONED_PARENT = textwrap.dedent("""
    import multiprocessing, os, sys, time
    from pathlib import Path
    from stumpcheck.numerics.processes import parent_watching_pool, terminate_workers


    def hold(folder):
        Path(folder, str(os.getpid())).write_text("")
        time.sleep(600)


    if __name__ == "__main__":
        pool = parent_watching_pool(1, mp_context=multiprocessing.get_context("spawn"), ignore_interrupt=True)
        futures = [pool.submit(hold, sys.argv[1]) for _ in range(4)]
        while not [p for p in Path(sys.argv[1]).iterdir() if p.name.isdigit()]:
            time.sleep(0.05)
        assert all(f.cancel() for f in futures[2:])
        terminate_workers(pool)
        pool.shutdown(wait=True, cancel_futures=True)
        print("done")
""")


def test_an_abandoned_pool_with_cancelled_tasks_ends_without_a_traceback(tmp_path):
    """CPython 3.11's pool thread raised InvalidStateError on the cancelled futures of a pool whose workers were
    terminated: a traceback after `interval --workers 2` had exited 130 on Ctrl-C."""
    source = tmp_path / "parent.py"
    source.write_text(ABANDONED_PARENT)
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    done = subprocess.run([sys.executable, str(source), str(tmp_path)], cwd=tmp_path, env=env, capture_output=True,
                          text=True, timeout=HANG_SECONDS)
    assert done.returncode == 0 and done.stdout.strip() == "done", done.stderr[-2000:]
    assert "Traceback" not in done.stderr and "InvalidStateError" not in done.stderr, done.stderr[-2000:]
