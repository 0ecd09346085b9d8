"""A lemma as a pytest test: a lemma file doubles as a test module under the user's own pytest.

``test_x = x.as_test(max_examples=50, seed=0)`` (:meth:`stumpcheck.lemmas.Lemma.as_test`, which calls
:func:`lemma_test`) binds a test function that pytest collects like any other. When run, it checks the lemma
with :func:`~stumpcheck.lemmas.check.check_lemma` and

* passes when the check passes **at the level asked for** (a certified check that only sampled, e.g. on its
  quick sub-domain, does not pass a test asking for ``"certified"``);
* fails with :class:`LemmaFailure` (an AssertionError) otherwise: the message has the statement, the
  figure (the shrunk counterexample and its margin), the counterexample as data, and the recipe that
  replays the check (:func:`stumpcheck.lemmas.replay.replay_recipe`: ``check_lemma(load_lemma('FILE.py:NAME'),
  seed=…, max_examples=…)``, and the ``stumpcheck verify --lemma`` command line);
* raises :class:`~stumpcheck.numerics.precision.InputError` (an error, not a failure) on bad input: a margin
  calling ``sys.exit``, a domain Hypothesis cannot draw from, two margins that disagree.

The search is seeded and keeps no example database, so a test gives the same verdict on every run. Its
arguments are checked when the test is made (at import of the test module), as Hypothesis checks a
strategy's. The pytest plugin (:mod:`stumpcheck.pytest_plugin`) runs lemma files named in its ini setting
through :func:`check_as_test` as well.
"""

from __future__ import annotations

import json
import re

from stumpcheck.claims.result import ClaimResult
from stumpcheck.lemmas.check import check_lemma
from stumpcheck.lemmas.definitions import DEFAULT_DPS, EVIDENCE_LEVELS, Lemma, python_only_refusal
from stumpcheck.lemmas.replay import lemma_source, replay_recipe
from stumpcheck.numerics.precision import InputError

__all__ = ["LemmaFailure", "lemma_test", "check_as_test", "lemma_test_options"]


class LemmaFailure(AssertionError):
    """A lemma's check did not pass at the level its test asked for; the message says why and how to replay it.
    ``result`` is the :class:`~stumpcheck.claims.result.ClaimResult`."""

    def __init__(self, message: str, result: ClaimResult):
        super().__init__(message)
        self.result = result


def lemma_test_options(entry: Lemma, *, level=None, max_examples=None, seed=0, dps=DEFAULT_DPS, quick=True) -> dict:
    """The checked options of a lemma's test: ``level`` (default the lemma's first evidence level) among those
    the lemma supports, ``max_examples`` (default the lemma's own) a positive int, ``seed`` a non-negative
    int, ``dps`` an int in [15, 10000], ``quick`` a bool. InputError (one line) otherwise."""
    if not isinstance(entry, Lemma):
        raise InputError(f"a lemma test needs a Lemma, got {type(entry).__name__}")
    level = entry.evidence[0] if level is None else level
    if level not in EVIDENCE_LEVELS:
        raise InputError(f"lemma {entry.name}: level must be one of {', '.join(EVIDENCE_LEVELS)}, got {level!r}")
    if level not in entry.evidence:
        if entry.sympy_margin is None and level != "sampled":
            raise InputError(python_only_refusal(entry.name, level))
        raise InputError(f"lemma {entry.name} supports the evidence levels {', '.join(entry.evidence)}, not {level}")
    max_examples = entry.max_examples if max_examples is None else max_examples
    for name, value, least in (("max_examples", max_examples, 1), ("seed", seed, 0)):
        if isinstance(value, bool) or not isinstance(value, int) or value < least:
            raise InputError(f"lemma {entry.name}: {name} must be an int >= {least}, got {value!r}")
    if isinstance(dps, bool) or not isinstance(dps, int) or not 15 <= dps <= 10_000:
        raise InputError(f"lemma {entry.name}: dps must be an int in [15, 10000], got {dps!r}")
    if not isinstance(quick, bool):
        raise InputError(f"lemma {entry.name}: quick must be True or False, got {quick!r}")
    return {"level": level, "max_examples": max_examples, "seed": seed, "dps": dps, "quick": quick}


def _command_line(source: str, entry: Lemma, options: dict) -> str | None:
    """The ``stumpcheck verify`` command that runs the same check (None where it has no option for it)."""
    if options["dps"] != DEFAULT_DPS:
        return None
    line = f"stumpcheck verify --lemma {source} --seed {options['seed']} --max-examples {options['max_examples']}"
    if options["level"] != entry.evidence[0]:
        line += f" --level {options['level']}"
    return line + ("" if options["quick"] else " --full")


def failure_message(entry: Lemma, result: ClaimResult, options: dict, source: str | None) -> str:
    """What a failed lemma test prints: verdict, statement, figure, counterexample, replay recipe."""
    level = options["level"]
    if result.status == "PASS":  # passed, but below the level asked for
        head = f"lemma {entry.name}: reached {result.evidence} evidence only, not {level}"
    else:
        head = f"lemma {entry.name}: FAIL at level {result.evidence}"
    lines = [head, f"statement: {entry.statement}", f"figure: {result.figure}"]
    details = result.details or {}
    if details.get("counterexample") is not None:
        point = json.dumps(details["counterexample"], ensure_ascii=False)
        lines.append(f"counterexample: {point}, margin {details.get('counterexample_margin')!r}"
                     + (f" ({details['error']})" if details.get("error") else ""))
    recipe = details.get("replay") or replay_recipe(entry, level=level, seed=options["seed"],
                                                    max_examples=options["max_examples"], dps=options["dps"])
    names = ", ".join(sorted({"check_lemma", *re.findall(r"\b(load_lemma|get)\(", recipe)}))
    lines.append(f"replay: from stumpcheck.lemmas import {names}; {recipe}")
    command = _command_line(source, entry, options) if source else None
    if command:
        lines.append(f"    or: {command}")
    return "\n".join(lines)


def check_as_test(entry: Lemma, options: dict, *, namespace=None) -> ClaimResult:
    """Run the check of a lemma test (``options`` from :func:`lemma_test_options`); the result if it passes at the
    level asked for, else :class:`LemmaFailure`. ``namespace`` is the globals of the module the test is in
    (where the replay recipe looks for the lemma when nothing else names its file)."""
    __tracebackhide__ = True  # pytest: show the message, not this frame
    source = lemma_source(entry, namespace)
    recipe = replay_recipe(entry, namespace=namespace, **{k: options[k] for k in ("level", "seed", "max_examples",
                                                                                   "dps")})
    result = check_lemma(entry, replay=recipe, **options)
    if result.status != "PASS" or result.evidence != options["level"]:
        raise LemmaFailure(failure_message(entry, result, options, source), result)
    return result


def lemma_test(entry: Lemma, *, level: str | None = None, max_examples: int | None = None, seed: int = 0,
               dps: int = DEFAULT_DPS, quick: bool = True, namespace=None):
    """A test function (no arguments, so pytest collects it as is) that checks ``entry``; see the module doc.

    ``namespace``: the globals of the test module (:meth:`Lemma.as_test` passes its caller's). The function's
    ``lemma`` and ``options`` attributes are the lemma and the checked options.
    """
    options = lemma_test_options(entry, level=level, max_examples=max_examples, seed=seed, dps=dps, quick=quick)

    def test():
        __tracebackhide__ = True
        check_as_test(entry, options, namespace=namespace)

    name = "test_" + re.sub(r"\W", "_", entry.name)
    test.__name__ = test.__qualname__ = name
    test.__doc__ = f"lemma {entry.name} at level {options['level']}: {entry.statement}"
    if isinstance(namespace, dict) and isinstance(namespace.get("__name__"), str):
        test.__module__ = namespace["__name__"]
    test.lemma, test.options = entry, options
    return test
