"""Checking the lemmas of :mod:`stumpcheck.lemmas`: the Hypothesis search, the re-check, certificates.

:func:`check_lemma` runs one lemma at an evidence level and returns a
:class:`stumpcheck.claims.population.ClaimResult` (a FAIL is a result, with the shrunk
counterexample and the seed that replays it); :func:`run_entry` runs any
registry entry, a claim's check function or a lemma. Both are re-exported by
:mod:`stumpcheck.lemmas`.

A margin must be a finite real number: NaN, ±inf and an exception are
counterexamples. A margin or a user file that calls ``sys.exit`` is bad input
(:class:`~stumpcheck.numerics.precision.InputError` naming the file), never stumpcheck's
exit status.
"""

from __future__ import annotations

import math
import re
import time
from collections.abc import Mapping

from stumpcheck.claims.result import ClaimResult
from stumpcheck.numerics.precision import InputError
from stumpcheck.lemmas.definitions import (DEFAULT_DPS, EVIDENCE_LEVELS, CertifiedSpec, ClaimCheck, Lemma, _origin, _short_text,
                               python_only_refusal)
from stumpcheck.lemmas.replay import replay_recipe

__all__ = ["check_lemma", "run_entry"]

class _UserExit(BaseException):
    """A margin called sys.exit (turned into InputError once Hypothesis has let go)."""


class _Abort(BaseException):
    """Stop the search on bad input found at a point (turned into InputError once Hypothesis has let go)."""


class _Search:
    """Book-keeping of one Hypothesis search: examples run, smallest margin, last failure."""

    def __init__(self):
        self.user_exit = None
        self.examples = 0
        self.min_margin = math.inf
        self.argmin = None
        self.failure = None  # (point, margin or None, error text or None)
        self.margins: list = []  # every evaluated margin, in order (None where it raised)
        self.abort = None  # the one-line message of bad input found at a point


def _format_point(point) -> str:
    if not isinstance(point, Mapping):
        return repr(point)
    return "{" + ", ".join(f"{k}={_short(v)}" for k, v in point.items()) + "}"


def _short(value) -> str:
    text = repr(value)  # floats: the shortest decimal that round-trips
    return text if len(text) <= 80 else text[:77] + "..."


def _margin_file(entry: Lemma) -> str:
    code = getattr(entry.margin, "__code__", None)
    return code.co_filename if code is not None else getattr(entry.margin, "__module__", "?")


def _jsonable_point(point):
    if isinstance(point, Mapping):
        return {str(k): _jsonable_point(v) for k, v in point.items()}
    if isinstance(point, (list, tuple)):
        return [_jsonable_point(v) for v in point]
    if isinstance(point, (bool, int, str)) or point is None:
        return point
    try:
        return float(point)
    except (TypeError, ValueError):
        return repr(point)


def _one_value(entry: Lemma, point) -> float:
    """The lemma's margin at ``point``: its SymPy margin where it has one (the Python function, if the file
    gives one too, must agree with it: InputError with the point otherwise), else its Python function."""
    evaluator = entry.point_margin(tuple(point)) if entry.sympy_margin is not None else None
    if evaluator is None:
        return float(entry.margin(**point))
    value = evaluator(**point)
    python = entry.python_margin
    if python is not None:
        from stumpcheck.lemmas.margin import python_margin_tolerance

        tolerance = python_margin_tolerance(value)
        try:
            other = float(python(**point))
        except SystemExit:
            raise
        except Exception as exc:  # noqa: BLE001 - the Python margin fails where the SymPy one has a value
            other, why = math.nan, f"raised {type(exc).__name__}: {_short_text(str(exc), 80)}"
        else:
            why = f"is {other!r}"
        if not abs(other - value) <= tolerance:
            raise InputError(f"lemma {entry.name}: its Python margin and its SymPy margin disagree at "
                             f"{_format_point(point)}: the Python margin {why}, the SymPy margin is {value!r} "
                             f"(tolerance {tolerance:.2g}); a lemma has one margin: make the function compute the "
                             "SymPy expression, or drop the function (sympy_lemma)")
    return value


def _search(entry: Lemma, *, max_examples: int, seed: int, deadline, dps: int) -> tuple[_Search, str | None]:
    """Run Hypothesis on the lemma; returns the book-keeping and the reproduce_failure blob (if any)."""
    import mpmath
    from hypothesis import HealthCheck, Phase, given, settings, target
    from hypothesis import seed as hypothesis_seed
    from hypothesis.errors import InvalidArgument, Unsatisfiable

    state = _Search()
    try:
        strategy = entry.strategy()
    except Exception as exc:  # a user's domain callable: bad input, one line
        raise InputError(f"lemma {entry.name}: building its domain failed: {type(exc).__name__}: {exc}") from None

    if isinstance(entry.domain, Mapping):  # compile the SymPy margin before any point (bad margins: one line)
        entry.point_margin(tuple(entry.domain))

    def property_holds(point):
        state.examples += 1
        try:
            with mpmath.workdps(dps):
                value = _one_value(entry, point)
        except _Abort:
            raise
        except InputError as exc:
            state.abort = str(exc)
            raise _Abort() from None
        except SystemExit as exc:  # the user's margin called sys.exit: stop the search, report bad input
            state.user_exit = exc.code
            raise _UserExit() from None
        except KeyboardInterrupt:
            raise
        except Exception as exc:
            state.failure = (point, None, f"{type(exc).__name__}: {_short_text(str(exc))}")
            state.margins.append(None)
            raise
        except BaseException as exc:  # noqa: BLE001 - not an Exception: no counterexample, bad input
            state.abort = (f"lemma {entry.name}: its margin ({_margin_file(entry)}) raised "
                           f"{type(exc).__name__} (not an Exception): {_short_text(str(exc))}")
            raise _Abort() from None
        state.margins.append(value)
        if value < state.min_margin:
            state.min_margin, state.argmin = value, point
        if not math.isfinite(value):
            state.failure = (point, value, f"the margin is {value!r}, not a finite number")
            raise AssertionError(f"margin {value!r} is not finite at {_format_point(point)}")
        if value < 0:
            state.failure = (point, value, None)
            raise AssertionError(f"margin {value!r} < 0 at {_format_point(point)}")
        target(-min(value, 1e300), label="minus margin")

    run = settings(max_examples=max_examples, database=None, deadline=deadline, derandomize=False,
                   phases=(Phase.explicit, Phase.generate, Phase.target, Phase.shrink),
                   suppress_health_check=list(HealthCheck), report_multiple_bugs=False, print_blob=True)(
        hypothesis_seed(seed)(given(point=strategy)(property_holds)))
    blob = None
    try:
        run()
    except _UserExit:
        raise InputError(f"lemma {entry.name}: its margin ({_margin_file(entry)}) called "
                         f"sys.exit({state.user_exit!r})") from None
    except _Abort:
        raise InputError(state.abort) from None
    except (InvalidArgument, Unsatisfiable) as exc:
        if state.failure is None:  # the domain cannot be drawn from: bad input, one line
            raise InputError(f"lemma {entry.name}: hypothesis could not draw from its domain: "
                             f"{type(exc).__name__}: {str(exc).splitlines()[0] if str(exc) else ''}") from None
        raise
    except Exception as exc:
        if state.failure is None:
            raise
        for note in getattr(exc, "__notes__", []):
            match = re.search(r"@reproduce_failure\([^)]*\)", note)
            if match:
                blob = match.group(0)
    return state, blob


def check_lemma(entry: Lemma, *, level: str = "sampled", max_examples: int | None = None, seed: int = 0,
                deadline=None, dps: int = DEFAULT_DPS, replay: str | None = None, out_dir=None,
                quick: bool = True) -> ClaimResult:
    """Check one lemma at evidence ``level``; a FAIL is a result (with the shrunk counterexample).

    sampled / high-precision: Hypothesis searches ``entry.strategy()`` for a
    point with margin < 0, margins evaluated under ``mpmath.workdps(dps)``
    (``max_examples`` defaults to ``entry.max_examples``; ``seed`` replays the run). PASS reports the
    smallest margin found and the number of examples; FAIL the shrunk point,
    its margin and the seed. high-precision additionally re-evaluates the
    margin at the worst point at dps + 10 + dps // 10 digits and requires both
    values to be ≥ 0 (reporting the digits they share).
    certified: with ``entry.certify`` a :class:`~stumpcheck.lemmas.CertifiedSpec`,
    :func:`stumpcheck.lemmas.certified_check.check_certified` proves the margin over the
    whole domain (PASS at level certified only then; undecided boxes keep the
    sampled verdict) and writes ``<name>.certificate.json`` to ``out_dir``; with a
    callable, calls ``entry.certify(quick=quick)`` (or ``entry.certify()`` if it
    takes no ``quick``), which returns a :class:`stumpcheck.numerics.certified.proofs.box_prover.Certificate` or
    a list of them; PASS iff every certificate is proved.
    ``replay`` is the command line shown for replaying a failure (default: the call,
    :func:`stumpcheck.lemmas.replay.replay_recipe`; for a lemma loaded from a file it loads that file). With
    ``out_dir`` (created with its parents if missing; a path that exists and is not a folder is
    InputError), the sampled margins are plotted to ``lemma_<name>.png`` there
    (listed in ``details["plots"]``).
    """
    if not isinstance(entry, Lemma):
        raise InputError(f"check_lemma needs a Lemma, got {type(entry).__name__}")
    if level not in EVIDENCE_LEVELS:
        raise InputError(f"level must be one of {', '.join(EVIDENCE_LEVELS)}, got {level!r}")
    if level not in entry.evidence:
        if entry.sympy_margin is None and level != "sampled":
            raise InputError(python_only_refusal(entry.name, level))
        raise InputError(f"lemma {entry.name} supports the evidence levels {', '.join(entry.evidence)}, not {level}")
    if isinstance(seed, bool) or not isinstance(seed, int) or seed < 0:
        raise InputError(f"seed must be a non-negative int, got {seed!r}")
    max_examples = entry.max_examples if max_examples is None else max_examples
    if isinstance(max_examples, bool) or not isinstance(max_examples, int) or max_examples < 1:
        raise InputError(f"max_examples must be a positive int, got {max_examples!r}")
    if out_dir is not None:
        _make_out_dir(out_dir)
    start = time.perf_counter()
    if entry.sympy_margin is not None:  # the one margin: built, Taylor order checked, before any work
        from stumpcheck.lemmas.margin import resolve_margin

        resolve_margin(entry)
        if isinstance(entry.domain, Mapping):
            entry.point_margin(tuple(entry.domain))
    if level == "certified":
        if isinstance(entry.certify, CertifiedSpec):
            from stumpcheck.lemmas.certified_check import check_certified

            return check_certified(entry, entry.certify, start=start, quick=quick, seed=seed,
                                   max_examples=max_examples, out_dir=out_dir, replay=replay,
                                   sampled_check=check_lemma)
        return _check_certified(entry, start, quick)
    state, blob = _search(entry, max_examples=max_examples, seed=seed, deadline=deadline, dps=dps)
    one = entry.sympy_margin is not None
    label = "" if one else "; Python margin (sampled only: no SymPy margin to certify)"
    precision = entry.precision or f"mpmath dps {dps}"
    if one and isinstance(entry.domain, Mapping):
        precision = entry.point_margin(tuple(entry.domain)).precision
    details = {"reference": entry.reference, "seed": seed, "max_examples": max_examples,
               "examples_run": state.examples, "precision": precision,
               "margin": ("the SymPy margin (compared with the file's Python margin at every point)"
                          if one and entry.python_margin is not None else "the SymPy margin" if one else
                          "a Python function (sampled only)"),
               "level": level, "replay": replay or replay_recipe(entry, level=level, seed=seed,
                                                                  max_examples=max_examples, dps=dps)}
    if out_dir is not None and state.margins:
        from stumpcheck.report import plot_margins

        details["plots"] = [plot_margins(entry.name, state.margins, out_dir,
                                         title=f"{entry.name}: margins, seed {seed}, {level}").name]
    if state.failure is not None:
        point, value, error = state.failure
        details.update({"counterexample": _jsonable_point(point), "counterexample_margin": value,
                        "error": error, "reproduce_failure": blob})
        if error is None:
            what = f"margin {value:.6g}"
        elif value is not None:  # a non-finite margin
            what = error
        else:
            what = f"raised {error}"
        figure = (f"counterexample (shrunk) {_format_point(point)}: {what}; replay with seed {seed}, "
                  f"{max_examples} examples{label}")
        return ClaimResult(id=entry.name, statement=entry.statement, figure=figure, tolerance=entry.tolerance,
                           status="FAIL", evidence=level, seconds=time.perf_counter() - start, details=details)
    if state.argmin is None:  # no example ran: nothing was checked
        figure = f"no example was run (seed {seed}, max_examples {max_examples})"
        return ClaimResult(id=entry.name, statement=entry.statement, figure=figure, tolerance=entry.tolerance,
                           status="FAIL", evidence=level, seconds=time.perf_counter() - start, details=details)
    tight = entry.rounding > 0 and state.min_margin <= 2 * entry.rounding
    details.update({"min_margin": state.min_margin, "argmin": _jsonable_point(state.argmin),
                    "rounding_allowance": entry.rounding, "tight_to_rounding": tight})
    if tight:
        figure = (f"tight to rounding: smallest margin {state.min_margin:.6g} is within the rounding allowance "
                  f"{entry.rounding:g} of 0 (1 − ratio = {state.min_margin - entry.rounding:.2g} ± "
                  f"{math.ulp(state.min_margin):.1g}, the float64 margin's resolution) at "
                  f"{_format_point(state.argmin)} over {state.examples} examples (seed {seed})")
    else:
        figure = (f"smallest margin {state.min_margin:.6g} at {_format_point(state.argmin)} "
                  f"over {state.examples} examples (seed {seed})")
    figure += label
    status = "PASS"
    if level == "high-precision":
        check_dps, again, digits, text = _recheck(entry, state, dps)
        details.update({"check_dps": check_dps, "margin_at_check_dps": again, "agreeing_digits": digits})
        figure += f"; at {check_dps} digits {again:.6g} ({text})"
        if not (math.isfinite(again) and again >= 0):
            status = "FAIL"
            figure += "; the margin at the higher precision is " + ("negative" if again < 0 else "not finite")
    return ClaimResult(id=entry.name, statement=entry.statement, figure=figure, tolerance=entry.tolerance,
                       status=status, evidence=level, seconds=time.perf_counter() - start, details=details)


def _make_out_dir(out_dir) -> None:
    """Create ``out_dir`` with its parents; InputError (one line) if it is not a path, exists as something
    other than a folder, or cannot be created."""
    from pathlib import Path

    from stumpcheck.numerics.resources import check_writable_dir

    try:
        path = Path(out_dir)
    except TypeError:
        raise InputError(f"out_dir must be a path, got {type(out_dir).__name__}") from None
    check_writable_dir(path, "out_dir")
    try:
        path.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise InputError(f"out_dir: cannot create {path}: {exc.strerror or exc}") from None


#: significant digits a float64 margin carries
FLOAT64_DIGITS = -math.log10(2.0 ** -53)


def _recheck(entry: Lemma, state: _Search, dps: int) -> tuple[int, float, float, str]:
    """The margin at the worst point again at dps + 10 + dps // 10 digits, and the digits the two share.

    Margins come back as float64, so agreement is measured on what float64
    holds: relative digits, at most 15.95; for a lemma with a rounding
    allowance, absolute digits on the ratio's scale 1 (the margin is
    allowance + 1 − ratio), at most what the margin's ulp resolves.
    Returns (check_dps, margin, digits, text for the figure).
    """
    import mpmath

    check_dps = dps + 10 + dps // 10
    with mpmath.workdps(check_dps):
        try:
            evaluator = entry.point_margin(tuple(state.argmin)) if entry.sympy_margin is not None else None
            again = (float(evaluator.value(state.argmin, high_precision=True)) if evaluator is not None else
                     float(entry.margin(**state.argmin)))
        except SystemExit as exc:
            raise InputError(f"lemma {entry.name}: its margin ({_margin_file(entry)}) called "
                             f"sys.exit({exc.code!r})") from None
        except Exception as exc:
            return check_dps, math.nan, 0.0, f"raised {type(exc).__name__}: {_short_text(str(exc))}"
    first = state.min_margin
    if not math.isfinite(again):
        return check_dps, again, 0.0, "not finite"
    if entry.rounding > 0:
        resolution = max(math.ulp(first), math.ulp(again))
        difference = abs(first - again)
        digits = -math.log10(max(difference, resolution))
        bound = "float64 margins resolve no more" if difference <= resolution else "the margins differ beyond"
        return check_dps, again, digits, (f"the ratio agrees to {digits:.1f} digits on its scale 1; {bound}")
    if first == again:
        return check_dps, again, FLOAT64_DIGITS, f"all {FLOAT64_DIGITS:.1f} digits of the float64 margin agree"
    scale = max(abs(first), abs(again))
    digits = min(FLOAT64_DIGITS, -math.log10(abs(first - again) / scale))
    return check_dps, again, digits, f"{digits:.1f} digits agree"


def _check_certified(entry: Lemma, start: float, quick: bool) -> ClaimResult:
    import inspect

    try:
        takes_quick = "quick" in inspect.signature(entry.certify).parameters
    except (TypeError, ValueError):
        takes_quick = False
    outcome = entry.certify(quick=quick) if takes_quick else entry.certify()
    certificates = outcome if isinstance(outcome, (list, tuple)) else [outcome]
    rows = []
    for certificate in certificates:
        rows.append({"verdict": certificate.verdict(), "status": certificate.status, "box": certificate.box,
                     "boxes": certificate.boxes, "leaves": len(certificate.leaves), "prec_bits": certificate.prec_bits,
                     "dps": certificate.dps, "failure_box": certificate.failure_box,
                     "undecided_box": certificate.undecided_box, "seconds": certificate.seconds})
    ok = bool(certificates) and all(c.status == "proved" for c in certificates)
    boxes = "; ".join(f"a {r['box']['a']}, b {r['box']['b']}, θ {r['box']['theta']}: {r['status']}" for r in rows)
    figure = f"{sum(c.status == 'proved' for c in certificates)}/{len(certificates)} boxes proved ({boxes})"
    return ClaimResult(id=entry.name, statement=entry.statement, figure=figure,
                       tolerance="every box proved by Arb interval evaluation and bisection", status=(
                           "PASS" if ok else "FAIL"), evidence="certified", seconds=time.perf_counter() - start,
                       details={"reference": entry.reference, "certificates": rows,
                                # proved on the listed boxes, which need not cover the statement's domain
                                "evidence_reached": "certified on boxes" if ok else None})


def run_entry(entry: "Lemma | ClaimCheck", *, quick: bool = True, seed: int = 0, out_dir=None,
              scheduler: str | None = None, level: str | None = None, max_examples: int | None = None,
              replay: str | None = None) -> ClaimResult:
    """Run a registry entry: a claim's check function, or :func:`check_lemma` on a lemma.

    A claim whose check cannot be imported, raises (other than InputError) or
    returns something other than a ClaimResult is reported as FAIL with the
    reason in its figure. A lemma runs at ``level`` (default: its first
    evidence level); ``quick`` uses its ``max_examples``, full 5×.
    """
    if isinstance(entry, Lemma):
        chosen = level if level in entry.evidence else entry.evidence[0]
        if max_examples is None:
            max_examples = entry.max_examples if quick else 5 * entry.max_examples
        return check_lemma(entry, level=chosen, max_examples=max_examples, seed=seed, replay=replay,
                           out_dir=out_dir, quick=quick)
    start = time.perf_counter()

    def failed(figure: str, **details) -> ClaimResult:
        return ClaimResult(id=entry.name, statement=entry.statement, figure=figure, tolerance="the claim's own",
                           status="FAIL", evidence=entry.evidence[0] if entry.evidence else "sampled",
                           seconds=time.perf_counter() - start, details={"check": _origin(entry), **details})

    try:
        function = entry.resolve()
    except ImportError as exc:
        return failed(f"not available: {exc}")
    kwargs = {"quick": quick, "seed": seed, "out_dir": out_dir}
    if entry.takes_scheduler:
        kwargs["scheduler"] = scheduler
    try:
        result = function(**kwargs)
    except InputError:
        raise
    except Exception as exc:
        return failed(f"error: {type(exc).__name__}: {exc}", error=f"{type(exc).__name__}: {exc}")
    if not isinstance(result, ClaimResult):
        return failed(f"error: the check returned {type(result).__name__}, not a ClaimResult")
    return result
