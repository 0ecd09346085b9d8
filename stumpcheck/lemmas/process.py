"""A user lemma checked in a child process, with a time limit: its code cannot end the check without a verdict.

``verify --lemma FILE.py:NAME`` runs the check of a user lemma (its margin, its domain's strategies, its
certified proof) in a forked child process (:func:`run_isolated`), which sends its result back through a
pipe. The parent waits at most ``timeout`` seconds:

* a result: the row, as if the check had run in-process;
* bad input found by the check (:class:`~stumpcheck.numerics.precision.InputError`, e.g. two margins that disagree, a
  margin calling ``sys.exit`` or raising a BaseException): the same one-line error, exit 2;
* no verdict within the time limit: the child's process group is killed, and the error names the limit
  (exit 2: the lemma, not the mathematics, is at fault; ``--timeout`` raises it);
* the child ends without a verdict (``os._exit`` in the margin, a crash, a signal): an error naming how it
  ended, exit 2.

The child runs in its own process group, so the workers of a certified proof are killed with it. It also ends
with the parent, however the command ends (:func:`stumpcheck.numerics.processes.watch_parent`: the kernel's
parent-death signal on Linux, a thread polling the parent id everywhere): ``timeout``'s SIGTERM or SIGKILL
and ``kill -9`` of the command reach only the parent (the child's group is its own), Ctrl-C reaches only the
terminal's group, and the parent then kills the child's group. Built-in lemmas run in-process (their code is
the toolkit's; a fork would only add its start-up).

The parent never imports a user's file: :func:`describe` imports it in a child (under the same time limit),
builds and compiles its SymPy margin there, and sends back what ``verify`` needs to check the command line
before any work (:class:`UserLemma`: the name, the evidence levels, whether it is sampled-only); the check's
child imports the file again. Code at the file's top level that loops, sleeps, calls ``os._exit`` or raises a
BaseException is then one line and exit 2, like the same code in a margin.
"""

from __future__ import annotations

import os
import signal
from dataclasses import dataclass

from stumpcheck.numerics.precision import InputError

__all__ = ["run_isolated", "describe", "UserLemma", "DEFAULT_TIMEOUT"]

#: seconds a user lemma's check may take before it is stopped (``verify --timeout``)
DEFAULT_TIMEOUT = 600.0


def _child(connection, check, parent_pid: int, kernel_signal: bool) -> None:
    from stumpcheck.numerics.processes import watch_parent

    watch_parent(parent_pid, kernel_signal=kernel_signal)  # first: the parent may already be gone
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


@dataclass(frozen=True)
class UserLemma:
    """A ``--lemma FILE.py:NAME`` as the parent knows it (read in a child by :func:`describe`)."""

    spec: str
    name: str
    statement: str
    evidence: tuple
    sampled_only: bool  # a Python function only: no SymPy margin


def describe(spec: str, *, timeout: float) -> UserLemma:
    """Import the user's file in a child (at most ``timeout`` seconds), build and compile the lemma's SymPy
    margin (its Taylor order checked) there, and return its :class:`UserLemma`; InputError (one line) for
    anything the file does wrong, including no answer in time and a child that ends without one."""

    def load() -> UserLemma:
        from stumpcheck.lemmas.catalogue import load_lemma
        from stumpcheck.lemmas.margin import resolve_margin

        entry = load_lemma(spec)
        if entry.sympy_margin is not None:
            resolve_margin(entry)
            if isinstance(entry.domain, dict):
                entry.point_margin(tuple(entry.domain))
        return UserLemma(spec=spec, name=entry.name, statement=entry.statement, evidence=tuple(entry.evidence),
                         sampled_only=entry.sympy_margin is None)

    return run_isolated(load, name=spec, timeout=timeout, stage="load")


_WORDS = {  # stage -> (timed out, ended without an answer, raised); {name}, {timeout}, {how}, {payload}
    "check": ("lemma {name}: no verdict within --timeout {timeout:g} s (its check was stopped; a margin that loops "
              "or sleeps? raise --timeout if it needs longer)",
              "lemma {name}: its check ended without a verdict ({how}; os._exit or a crash in the lemma's code?)",
              "lemma {name}: its check raised {payload}"),
    "load": ("--lemma {name}: importing its file gave no answer within --timeout {timeout:g} s (it was stopped; "
             "top-level code that loops or sleeps? raise --timeout if it needs longer)",
             "--lemma {name}: importing its file ended without an answer ({how}; os._exit or a crash in its "
             "top-level code?)",
             "--lemma {name}: importing its file raised {payload}"),
}


def run_isolated(check, *, name: str, timeout: float, stage: str = "check"):
    """``check()`` (returning a ClaimResult, or what ``stage`` asks) in a forked child; see the module doc.
    InputError (one line) when no result comes back; ``stage`` ("check" or "load") words the error."""
    import multiprocessing

    from stumpcheck.numerics.processes import started_by_main_thread

    context = multiprocessing.get_context("fork")
    receive, send = context.Pipe(duplex=False)
    process = context.Process(target=_child, args=(send, check, os.getpid(), started_by_main_thread()),
                              daemon=True)
    process.start()
    try:  # the child sets its group too; both, so that the group exists whichever runs first
        os.setpgid(process.pid, process.pid)
    except (ProcessLookupError, PermissionError):
        pass
    send.close()
    try:
        timed_out, ended, _ = _WORDS[stage]
        if not receive.poll(timeout):
            raise InputError(timed_out.format(name=name, timeout=timeout))
        try:
            kind, payload = receive.recv()
        except (EOFError, OSError):
            process.join(5)
            raise InputError(ended.format(name=name, how=_how(process.exitcode))) from None
    finally:
        _stop(process)
        receive.close()
    if kind == "result":
        return payload
    if kind == "input":
        raise InputError(payload)
    raise InputError(_WORDS[stage][2].format(name=name, payload=payload))


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
