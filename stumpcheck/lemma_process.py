"""A user lemma checked in a child process, with a time limit: its code cannot end the check without a verdict.

``verify --lemma FILE.py:NAME`` runs the check of a user lemma (its margin, its domain's strategies, its
certified proof) in a forked child process (:func:`run_isolated`), which sends its result back through a
pipe. The parent waits at most ``timeout`` seconds:

* a result: the row, as if the check had run in-process;
* bad input found by the check (:class:`~numerics.precision.InputError`, e.g. two margins that disagree, a
  margin calling ``sys.exit`` or raising a BaseException): the same one-line error, exit 2;
* no verdict within the time limit: the child's process group is killed, and the error names the limit
  (exit 2: the lemma, not the mathematics, is at fault; ``--timeout`` raises it);
* the child ends without a verdict (``os._exit`` in the margin, a crash, a signal): an error naming how it
  ended, exit 2.

The child runs in its own process group, so the workers of a certified proof are killed with it. Built-in
lemmas run in-process (their code is the toolkit's; a fork would only add its start-up).
"""

from __future__ import annotations

import os
import signal

from numerics.precision import InputError

__all__ = ["run_isolated", "DEFAULT_TIMEOUT"]

#: seconds a user lemma's check may take before it is stopped (``verify --timeout``)
DEFAULT_TIMEOUT = 600.0


def _child(connection, check) -> None:
    try:
        os.setpgid(0, 0)
    except PermissionError:
        pass
    try:
        outcome = ("result", check())
    except InputError as exc:
        outcome = ("input", str(exc))
    except BaseException as exc:  # noqa: BLE001 - anything the user's code raised: reported by the parent
        outcome = ("error", f"{type(exc).__name__}: {' '.join(str(exc).split())[:200]}")
    try:
        connection.send(outcome)
    finally:
        connection.close()
        os._exit(0)


def run_isolated(check, *, name: str, timeout: float):
    """``check()`` (returning a ClaimResult) in a forked child; see the module doc. InputError (one line) when
    no result comes back."""
    import multiprocessing

    context = multiprocessing.get_context("fork")
    receive, send = context.Pipe(duplex=False)
    process = context.Process(target=_child, args=(send, check), daemon=True)
    process.start()
    try:  # the child sets its group too; both, so that the group exists whichever runs first
        os.setpgid(process.pid, process.pid)
    except (ProcessLookupError, PermissionError):
        pass
    send.close()
    try:
        if not receive.poll(timeout):
            raise InputError(f"lemma {name}: no verdict within --timeout {timeout:g} s (its check was stopped; "
                             "a margin that loops or sleeps? raise --timeout if it needs longer)")
        try:
            kind, payload = receive.recv()
        except (EOFError, OSError):
            process.join(5)
            raise InputError(f"lemma {name}: its check ended without a verdict ({_how(process.exitcode)}; "
                             "os._exit or a crash in the lemma's code?)") from None
    finally:
        _stop(process)
        receive.close()
    if kind == "result":
        return payload
    if kind == "input":
        raise InputError(payload)
    raise InputError(f"lemma {name}: its check raised {payload}")


def _how(code) -> str:
    if code is None:
        return "the process did not exit"
    if code < 0:
        return f"the process was killed by signal {-code}"
    return f"the process exited with status {code}"


def _stop(process) -> None:
    """Kill the child's process group (it and any workers of its proof), then reap the child."""
    if process.pid is not None:
        try:
            os.killpg(process.pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass
        if process.is_alive():
            process.kill()
    process.join(5)
