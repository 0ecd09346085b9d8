"""``stumpcheck verify``: run the claims C1–C9 and the registered lemmas, write the report.

Registered in :mod:`stumpcheck.cli.commands`. What runs:

* no ``--only`` and no ``--lemma``: every registry entry (C1–C9, then the
  built-in lemmas of :mod:`stumpcheck.lemmas.builtin`);
* ``--only C3,C5``: those entries (ids of C1–C9 or lemma names);
* ``--lemma FILE.py:NAME`` (repeatable): the user's lemmas *alone*; add
  ``--only`` to run registry entries as well.

Lemmas run at their first evidence level, or at ``--level`` where they support
it. A ``--lemma`` or ``--only`` entry that does not support ``--level`` is bad input; the other entries
without it (the claims, the sampled-only lemmas) run at their own level: the table's ``evidence`` column
shows the level each row ran at, their ``details`` record ``level_requested``, and a line before the
summary names them (``note: 7 entries do not support --level certified and ran at their own level
(evidence column): C2 sampled, …``). A lemma with a Python function only is sampled-only: asking it for
high-precision or certified is bad input naming the fix (a SymPy margin).
``--certified`` is ``--level certified``: a lemma with ``certify=certified(...)``
is proved over its whole domain and its certificate written to
``--out/<lemma>.certificate.json`` (re-checked by ``stumpcheck recheck``); one
left undecided keeps its sampled verdict. The table's ``reached`` column (the
``evidence_reached`` key of ``results.json``) is the highest level each
statement reached on its whole domain. Prints one
progress line per entry to stderr and the table to stdout; writes
``results.json``, ``report.md`` and the checks' PNG plots to ``--out`` (and
keeps Hypothesis' caches in ``--out/.hypothesis``, not in the current folder).
A ``--lemma``'s file is imported, and its lemma checked, only in forked child processes
(:mod:`stumpcheck.lemmas.process`), each with the time limit ``--timeout`` (default 600 s): no answer by
then, a child that ends without one (``os._exit``, at the file's top level or in a margin) and a
BaseException are one-line errors, exit 2; built-in lemmas run in-process. A lemma's
margin is its one SymPy expression (:mod:`stumpcheck.lemmas.margin`), built and compiled before any work.
``--only ID`` with a ``--level`` ID does not support, and ``--quick`` with ``--full``, are bad input.
Exit status 0 when all pass, 1 when any fails (a result: the last line reads
``14/15 PASS; FAIL: C6 …``), 2 on bad input.

Time (seed 0, measured on an idle 2-core machine): ``--quick`` 40 s end to
end, 37 s of checks (C1 5 s, C6 12 s, interior_error_bound certified 3 s,
progress_along_error 4 s), before C2–C4 re-checked the committed certificate (about 35 s of CPU more, on two
processes: +24.6 s wall, +34.8 s CPU measured on a shared machine, benchmarks/README.md); a new environment first
compiles the numba kernels
(about 12 s of CPU, once; they are cached on disk). At 3bdefb2 on the idle machine (benchmarks/README.md):
``--quick`` 63 s wall, 122 s CPU, and ``--full`` 441 s wall, 822 s CPU, with two background worker processes
(:func:`_order`). ``--full``: 40 C1
points, the flow with its a-posteriori second solve at rtol/10, 5× the
Hypothesis examples and the claims' full modes; C6–C8 can use Dask through
``--scheduler``. ``--full`` also runs the certified tube to t = 10⁶ for the certified part of C2–C4
(:mod:`stumpcheck.claims.population_shared`; at most 30 min, then read as certified up to where it
stopped), into ``--out/certified_tube/``, and the region beyond T: a region certificate embedded in the
tube's certificate or in ``--out/certified_region/`` is re-checked and reused, else the default region
(b ∈ [30, 1000], 2 processes, about 635 s of CPU) is proved into ``--out/certified_region/``, and the tail
b ≥ 1000 joined to it; C2–C4's verdicts are their certified statements for every t ≥ T from these. ``--quick``
proves neither: it re-checks the committed certificate (the tube to 10⁶ with the region and the tail,
:mod:`stumpcheck.claims.population_all_time`) for the same verdicts. C5's verdict is its certified corpus
intervals in both modes. Lemmas certified with ``certified(...)`` are proved on their
``quick_domain`` under ``--quick`` and on their whole domain under ``--full``
(not timed here).

Built-in lemmas run their highest level, certified, where they have one
(:mod:`stumpcheck.lemmas.certified_builtins`): ``interior_error_bound``,
``bulk_error`` and ``right_layer`` over their whole domains under ``--quick``
too (about 4 500, 100 and 13 boxes), ``label_encoding`` by its symbolic
proof, and ``leading_loss`` and ``progress_direction`` on b ∈ [20, 20.25]
under ``--quick`` (their rows keep the sampled verdict) and on their whole
b ∈ [20, 10⁴] under ``--full``.
"""

from __future__ import annotations

import shutil
import sys
import threading
import time
from pathlib import Path

import click

from stumpcheck.numerics.precision import InputError
from stumpcheck.lemmas.process import DEFAULT_TIMEOUT
from stumpcheck.cli.options import make_out_dir, parse_float, parse_int, parse_scheduler, parse_seed, scheduled

#: seconds a --lemma check runs before its "running ..." line is printed (its refusals come earlier)
USER_PROGRESS_SECONDS = 10.0

__all__ = ["verify"]

_LEVELS = ("auto", "sampled", "high-precision", "certified")


def select(only: str | None, lemma_specs, timeout: float = DEFAULT_TIMEOUT) -> list:
    """The entries to run, in order, as (spec, entry) pairs; InputError for an unknown id or a bad --lemma. A
    --lemma's entry is its :class:`~stumpcheck.lemmas.process.UserLemma`, read from its file in a child process
    (at most ``timeout`` seconds): the file is not imported here."""
    from stumpcheck.lemmas.catalogue import registry
    from stumpcheck.lemmas.process import describe

    entries = registry()
    chosen = []
    if only is not None:
        ids = [part.strip() for part in only.split(",")]
        if not all(ids):
            raise InputError(f"--only must be a comma-separated list of ids, got {only!r}")
        unknown = [i for i in ids if i not in entries]
        if unknown:
            raise InputError(f"--only: unknown id {', '.join(unknown)}; known: {', '.join(entries)}")
        chosen = [entries[i] for i in dict.fromkeys(ids)]
    user = [(spec, describe(spec, timeout=timeout)) for spec in lemma_specs]
    if only is None and not user:
        chosen = list(entries.values())
    return [(None, entry) for entry in chosen] + user


@click.command("verify")
@click.option("--quick", "quick_flag", is_flag=True, help="Quick settings (the default; 1-3 min on 2 cores, "
              "depending on load).")
@click.option("--full", "full_flag", is_flag=True, help="Full settings (7-12 min); not with --quick.")
@click.option("--only", "only", default=None, help="Comma-separated ids to run, e.g. C3,C5 or a lemma name.")
@click.option("--lemma", "lemma_specs", multiple=True, metavar="FILE:NAME",
              help="Check a user lemma from a Python file (repeatable); runs alone unless --only is given too.")
@click.option("--out", "out_dir", default="stumpcheck-report", show_default=True,
              type=click.Path(file_okay=False), help="Folder for results.json, report.md and the PNG plots.")
@click.option("--scheduler", default=None, metavar="ADDR",
              help="Dask scheduler for C6-C8's cells and for certified work (boxes and tube intervals as Dask "
                   "tasks): tcp://host:port, or 'local' for a Dask cluster of --workers processes started here "
                   "(needs the 'dask' extra); certificates are byte for byte a local run's.")
@click.option("--workers", "workers_text", default=None, metavar="N",
              help="Local processes for all certified work (the tube, the region, lemma proofs; default: each "
                   "part's own); with --scheduler local, the Dask cluster's processes.")
@click.option("--seed", "seed_text", default="0", show_default=True, help="Seed of every random experiment.")
@click.option("--level", default="auto", show_default=True, type=click.Choice(_LEVELS),
              help="Evidence level for lemmas (auto: each lemma's first level). A --lemma or --only entry without "
                   "it is refused; other entries without it run at their own level (the evidence column), "
                   "listed in a note before the summary.")
@click.option("--max-examples", "max_examples_text", default=None,
              help="Hypothesis examples per lemma (default: the lemma's own; --full: 5x).")
@click.option("--certified", "certified", is_flag=True,
              help="Prove lemmas over their whole domains (same as --level certified); writes "
                   "<lemma>.certificate.json to --out for `stumpcheck recheck`.")
@click.option("--timeout", "timeout_text", default=None, metavar="SECONDS",
              help=f"Time limit per --lemma check (default {DEFAULT_TIMEOUT:g} s); a user lemma runs in a child "
                   "process and one without a verdict by then is an error.")
def verify(quick_flag, full_flag, only, lemma_specs, out_dir, scheduler, workers_text, seed_text, level,
           max_examples_text, certified, timeout_text) -> None:
    """Check the claims C1-C9 and the lemmas; print the table, write the report.

    Exit status 0 when every entry passes, 1 when any fails, 2 on bad input.
    A failing lemma is reported with its shrunk counterexample and the seed
    that replays it.
    """
    try:
        import hypothesis  # noqa: F401  (the lemma search and the strategies need it at run time)
    except ImportError:
        raise click.ClickException("stumpcheck verify needs hypothesis: pip install 'hypothesis>=6.80'") from None
    from hypothesis.configuration import set_hypothesis_home_dir

    if quick_flag and full_flag:
        raise InputError("--quick and --full exclude each other; give one (--quick is the default)")
    quick = not full_flag
    timeout = DEFAULT_TIMEOUT if timeout_text is None else parse_float(timeout_text, "timeout")
    if not 0 < timeout <= 86400:
        raise InputError(f"--timeout must be in (0, 86400] seconds, got {timeout_text}")
    if timeout_text is not None and not lemma_specs:
        raise InputError("--timeout limits the --lemma checks only (each runs in a child process); without --lemma "
                         "it does nothing: drop it")
    seed = parse_seed(seed_text)
    max_examples = None if max_examples_text is None else parse_int(max_examples_text, "max-examples", minimum=1)
    scheduler = parse_scheduler(scheduler)
    if certified:
        if level not in ("auto", "certified"):
            raise InputError(f"--certified is --level certified; it cannot be combined with --level {level}")
        level = "certified"
    plan = select(only, lemma_specs, timeout)
    chosen_level = None if level == "auto" else level
    for spec, entry in plan:
        if chosen_level is not None and chosen_level not in entry.evidence and (spec is not None or only is not None):
            flag = "--certified" if certified else f"--level {chosen_level}"
            named = f"--lemma {spec}" if spec is not None else f"--only {entry.name}"
            if not entry.evidence:
                raise InputError(f"{named}: runs its own check, not at a chosen level; drop {flag}")
            if _sampled_only(entry) and chosen_level != "sampled":
                from stumpcheck.lemmas.definitions import python_only_refusal

                raise InputError(f"{named}: {python_only_refusal(entry.name, chosen_level)}")
            raise InputError(f"{named}: supports {', '.join(entry.evidence)}, not {flag}")
    workers = None if workers_text is None else parse_int(workers_text, "workers", minimum=1, maximum=64)
    on = click.get_current_context().with_resource(scheduled(  # where certified work runs, until verify ends
        scheduler, workers, workers_given=workers is not None, echo=lambda text: click.echo(text, err=True)))
    if on is not None and on.kind == "dask":
        scheduler = on.address  # C6-C8's cells on the same Dask scheduler (a local cluster's address)
    from stumpcheck.lemmas.certified_check import CERTIFICATE_SUFFIX
    from stumpcheck.numerics.resources import check_output_files

    # every file the run writes, checked before any entry runs (not after minutes of work)
    check_output_files(out_dir, ["results.json", "report.md"] + [f"{entry.name}{CERTIFICATE_SUFFIX}"
                                                                  for _, entry in plan], "--out")
    out, created = make_out_dir(out_dir)
    # Hypothesis keeps its caches under --out, not in the current directory
    set_hypothesis_home_dir(out / ".hypothesis")
    try:
        failed = _run_plan(plan, out, quick=quick, seed=seed, scheduler=scheduler, level=chosen_level,
                           max_examples=max_examples, timeout=timeout,
                           background=scheduler is None and (workers is None or workers >= 2))
    except InputError:
        if created:  # bad input found while running (e.g. a lemma calling sys.exit): leave nothing behind
            shutil.rmtree(out, ignore_errors=True)
        raise
    finally:
        set_hypothesis_home_dir(None)
    if failed:
        # a failed check is a result, not an error of the program: the summary line is printed, status 1
        click.get_current_context().exit(1)


def _sampled_only(entry) -> bool:
    """A lemma (built-in or --lemma) with a Python function only, no SymPy margin."""
    from stumpcheck.lemmas import Lemma

    if isinstance(entry, Lemma):
        return entry.sympy_margin is None
    return bool(getattr(entry, "sampled_only", False))


#: the entries decided by the committed certificate's re-check under --quick (stumpcheck.claims.population_all_time)
_ALL_TIME_ENTRIES = ("C2", "C3", "C4")
#: the order, at the end of a run, of the entries whose work runs in the background (the first finished first)
_LATE = ("C5", "C6", "C7", "C8", "C2", "C3", "C4")


def _background_tasks(names: set, quick: bool, seed: int, out: Path) -> list:
    """The work of the entries ``names`` that needs nothing a run computes first, as background tasks, the first
    needed first: C6's sweep, C5's corpus intervals (--full), the committed certificate's re-check (--quick: the
    region, then the tube), C7's and C8's exact-risk tables."""
    from stumpcheck.claims.boundary import C7_C8_SETTINGS
    from stumpcheck.claims.boundary_fresh import background_tasks as table_tasks
    from stumpcheck.claims.c5 import background_task as c5_task
    from stumpcheck.claims.c6 import background_task as c6_task
    from stumpcheck.claims.population_all_time import BACKGROUND_TASKS

    tasks = [c6_task(seed, out, quick=quick)] if "C6" in names else []
    if "C5" in names and not quick:  # --quick's six corpora take seconds: the second core is busy enough
        tasks.append(c5_task(seed, out, quick=quick))
    if quick and names & set(_ALL_TIME_ENTRIES):
        tasks += list(BACKGROUND_TASKS)
    return tasks + table_tasks(names, C7_C8_SETTINGS["quick" if quick else "full"]["N"])


def _order(plan, quick: bool, background: bool, *, seed: int = 0, out: Path | None = None) -> list[int]:
    """The order the entries run in. With ``background`` (no Dask scheduler, not --workers 1), the work of the
    entries that needs nothing a run computes first starts now in two worker processes
    (:func:`_background_tasks`, :mod:`stumpcheck.claims.background`), and those entries run last (in the
    order of :data:`_LATE`), so that it overlaps the others; the table keeps the plan's order."""
    indices = list(range(len(plan)))
    if not background or out is None:
        return indices
    names = {entry.name for _, entry in plan}
    tasks = _background_tasks(names, quick, seed, out)
    if not tasks:
        return indices
    from stumpcheck.claims import background as work

    work.start(tasks)
    click.get_current_context().call_on_close(work.stop)
    owners = {key[0] for key, _, _ in tasks}  # the re-check's keys are C2's; C3 and C4 read it too
    owners |= set(_ALL_TIME_ENTRIES) if "C2" in owners else set()
    late = [name for name in _LATE if name in names and name in owners]
    click.echo(f"{', '.join(late)}: their certified work runs in two background processes beside the other entries; "
               "their rows run last", err=True)
    ahead = [i for i in indices if plan[i][1].name not in late]
    return ahead + [i for name in late for i in indices if plan[i][1].name == name]


def _run_plan(plan, out: Path, *, quick, seed, scheduler, level, max_examples, timeout=None,
              background: bool = False) -> list[str]:
    """Run the entries, print the table and the summary, write the report; returns the ids that failed.
    ``background``: work that needs nothing a run computes first may run in two worker processes beside the
    other entries (:func:`_order`)."""
    from stumpcheck.lemmas import builtin as builtin_lemmas
    from stumpcheck.lemmas.check import run_entry
    from stumpcheck.lemmas import Lemma
    from stumpcheck.numerics.kernel_warmup import warm_up
    from stumpcheck.report import run_provenance, table, write_report

    chosen_level = level
    mode = "quick" if quick else "full"
    run = run_provenance(seed=seed, mode=mode)
    builtin_lemmas.clear_flow_cache()
    own_level = []  # entries without --level's level, which ran at their own
    # the compiled kernels of the entries after the first, compiled by a child while the entries before them run
    # (a new environment's first run otherwise compiles them in their turn; numerics/kernel_warmup.py). Not the
    # workloads "tube" and "region": C2 compiles those itself, in this process and its worker at once, sooner
    # than one child compiling them in turn while C2 waits (the install step compiles them ahead)
    kernels = {"C2": ("population",), "C5": ("corpus",), "C6": ("corpus", "training")}
    warming = warm_up(dict.fromkeys(name for _, entry in plan[1:] for name in kernels.get(entry.name, ())))
    click.get_current_context().call_on_close(warming.stop)
    results = [None] * len(plan)
    for position in _order(plan, quick, background, seed=seed, out=out):
        index, (spec, entry) = position + 1, plan[position]
        running = f"[{index}/{len(plan)}] {entry.name}: running ..."
        # a user lemma's refusals (a margin calling sys.exit, say) come in its first seconds: its progress line
        # waits USER_PROGRESS_SECONDS, so that a refusal is the command's one line
        shown = threading.Timer(USER_PROGRESS_SECONDS, lambda text=running: click.echo(text, err=True))
        if spec is None:
            click.echo(running, err=True)
        else:
            shown.daemon = True
            shown.start()
        start = time.perf_counter()
        for name in kernels.get(entry.name, ()):  # in the entry's seconds, as compiling them there would be
            warming.wait_for(name)
        replay = None
        if spec is not None:
            replay = f"stumpcheck verify --lemma {spec} --seed {seed}" + ("" if quick else " --full")
            if chosen_level is not None:
                replay += f" --level {chosen_level}"
        elif isinstance(entry, Lemma):
            replay = f"stumpcheck verify --only {entry.name} --seed {seed}" + ("" if quick else " --full")
        def check(entry=entry, spec=spec, replay=replay):
            if spec is not None:  # a user lemma: its file is imported here, in the child
                from stumpcheck.lemmas.catalogue import load_lemma

                entry = load_lemma(spec)
            return run_entry(entry, quick=quick, seed=seed, out_dir=str(out), scheduler=scheduler,
                             level=chosen_level, max_examples=max_examples, replay=replay)

        if spec is not None:  # a user lemma: its code runs where it cannot end verify
            from stumpcheck.lemmas.process import run_isolated

            try:
                result = run_isolated(check, name=entry.name, timeout=DEFAULT_TIMEOUT if timeout is None else timeout)
            finally:
                shown.cancel()
        else:
            result = check()
        if chosen_level is not None and chosen_level not in entry.evidence:  # ran at its own level: say so
            result.details = {**(result.details or {}), "level_requested": chosen_level}
            own_level.append(f"{entry.name} {result.evidence}")
        click.echo(f"[{index}/{len(plan)}] {entry.name}: {result.status} ({time.perf_counter() - start:.1f} s) "
                   f"{result.figure[:160]}", err=True)
        sys.stderr.flush()
        results[position] = result
    builtin_lemmas.clear_flow_cache()
    paths = write_report(results, out, run=run)
    click.echo(table(results))
    failed = [r.id for r in results if r.status != "PASS"]
    for result in results:
        if result.status != "PASS":
            click.echo(f"FAIL {result.id}: {result.figure}")
    if own_level:
        click.echo(f"note: {len(own_level)} entr{'y does' if len(own_level) == 1 else 'ies do'} not support --level "
                   f"{chosen_level} and ran at {'its' if len(own_level) == 1 else 'their'} own level (evidence "
                   f"column): {', '.join(own_level)}")
    written = [p.name for p in paths] + [r.details["certified"]["certificate"] for r in results
                                         if "certificate" in ((r.details or {}).get("certified") or {})]
    click.echo(f"{len(results) - len(failed)}/{len(results)} PASS" + (f"; FAIL: {', '.join(failed)}" if failed else "")
               + f"; wrote {', '.join(written)} to {out}")
    if failed:
        click.echo(f"stumpcheck verify: {len(results) - len(failed)}/{len(results)} PASS; FAIL: {', '.join(failed)} "
                   f"(see {out / 'report.md'})", err=True)
    return failed
