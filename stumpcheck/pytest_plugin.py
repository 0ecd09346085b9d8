"""stumpcheck's pytest plugin: fixtures for mpmath and the model's strategies, and lemma files as tests.

Installing stumpcheck registers this module with pytest (entry point ``pytest11``, named ``stumpcheck``;
``-p no:stumpcheck`` turns it off). It adds nothing a test suite does not ask for: no autouse fixture, no
hook that acts unless its ini setting is given, and importing it imports none of the numeric stack (numpy,
mpmath, SymPy, python-flint): each fixture imports what it needs when a test requests it.

Fixtures
--------
``stumpcheck_precision`` (function scope)
    mpmath's working precision for one test, restored afterwards (``mp.prec``, ``mp.pretty``,
    ``mp.trap_complex``), also when the test fails. Set it in the test (``stumpcheck_precision.dps = 50``
    or ``.prec = 170``) or by indirect parametrization
    (``@pytest.mark.parametrize("stumpcheck_precision", [30, 60], indirect=True)`` sets ``mp.dps``).
``stumpcheck_strategies`` (session scope)
    the module :mod:`stumpcheck.strategies` (its functions build strategies with other bounds).
``stumpcheck_parameters``, ``stumpcheck_scales``, ``stumpcheck_thresholds``, ``stumpcheck_offsets``, ``stumpcheck_precisions``, ``stumpcheck_rates``, ``stumpcheck_corpora`` (session scope)
    the strategies of :mod:`stumpcheck.strategies` with their default bounds, to draw from with
    ``@given(data=st.data())`` and ``data.draw(stumpcheck_parameters)``. Session-scoped, so that Hypothesis
    accepts them in a ``@given`` test (strategies hold no state between examples).

Lemma files
-----------
A lemma file doubles as a test module through :meth:`stumpcheck.lemmas.Lemma.as_test`
(``test_x = x.as_test(max_examples=50)``), with no setting at all. Files that only define lemmas can be
collected instead: the ini setting ``stumpcheck_lemma_files`` lists glob patterns (matched from the right
of the path, as :meth:`pathlib.PurePath.match` does: ``lemmas_*.py``, ``lemmas/*.py``), and every lemma a
matching file defines (:func:`stumpcheck.lemmas.files.load_lemmas`) becomes one test item, checked as
:meth:`~stumpcheck.lemmas.Lemma.as_test` checks it. Only files pytest visits are matched (those under its
arguments or ``testpaths``); do not also match them with ``python_files``. ``stumpcheck_level`` (default:
each lemma's first evidence level; a lemma without that level is skipped), ``stumpcheck_max_examples``
(default: each lemma's own) and ``stumpcheck_seed`` (default 0) set the checks; ``-o NAME=VALUE`` sets any
of them for one run.
"""

from __future__ import annotations

from pathlib import Path

import pytest

_STRATEGIES = ("parameters", "scales", "thresholds", "offsets", "precisions", "rates", "corpora")


# --------------------------------------------------------------------------------------------------------
# mpmath precision


class WorkingPrecision:
    """mpmath's working precision inside a test that requests ``stumpcheck_precision``.

    ``dps`` (decimal digits) and ``prec`` (bits) read and set ``mpmath.mp``; a value must be an int ≥ 1
    (:class:`~stumpcheck.numerics.precision.InputError` otherwise). ``saved_prec`` is the precision the
    test started with, restored when it ends.
    """

    def __init__(self, saved_prec: int):
        self.saved_prec = saved_prec

    @staticmethod
    def _checked(name: str, value) -> int:
        if isinstance(value, bool) or not isinstance(value, int) or value < 1:
            from stumpcheck.numerics.precision import InputError

            raise InputError(f"stumpcheck_precision.{name} must be an int >= 1, got {value!r}")
        return value

    @property
    def dps(self) -> int:
        import mpmath

        return mpmath.mp.dps

    @dps.setter
    def dps(self, value: int) -> None:
        import mpmath

        mpmath.mp.dps = self._checked("dps", value)

    @property
    def prec(self) -> int:
        import mpmath

        return mpmath.mp.prec

    @prec.setter
    def prec(self, value: int) -> None:
        import mpmath

        mpmath.mp.prec = self._checked("prec", value)

    def __repr__(self) -> str:
        return f"WorkingPrecision(dps={self.dps}, prec={self.prec}, saved_prec={self.saved_prec})"


@pytest.fixture
def stumpcheck_precision(request):
    """mpmath's working precision, restored after the test (also when it fails); see :class:`WorkingPrecision`.
    With indirect parametrization the parameter is the test's ``mp.dps``."""
    import mpmath

    saved = (mpmath.mp.prec, mpmath.mp.pretty, mpmath.mp.trap_complex)
    precision = WorkingPrecision(saved[0])
    try:
        if getattr(request, "param", None) is not None:
            precision.dps = request.param
        yield precision
    finally:
        mpmath.mp.prec, mpmath.mp.pretty, mpmath.mp.trap_complex = saved


# --------------------------------------------------------------------------------------------------------
# strategies


@pytest.fixture(scope="session")
def stumpcheck_strategies():
    """The module :mod:`stumpcheck.strategies`: ``stumpcheck_strategies.parameters(min_b=10.0)`` etc."""
    import stumpcheck.strategies

    return stumpcheck.strategies


def _strategy_fixture(name: str):
    def fixture():
        import stumpcheck.strategies

        return getattr(stumpcheck.strategies, name)()

    fixture.__name__ = f"stumpcheck_{name}"
    fixture.__doc__ = (f"The strategy ``stumpcheck.strategies.{name}()`` (default bounds); draw from it with "
                       f"``data.draw(stumpcheck_{name})`` in a ``@given(data=st.data())`` test.")
    return pytest.fixture(scope="session", name=f"stumpcheck_{name}")(fixture)


for _name in _STRATEGIES:
    globals()[f"_stumpcheck_{_name}_fixture"] = _strategy_fixture(_name)
del _name


# --------------------------------------------------------------------------------------------------------
# lemma files


def pytest_addoption(parser) -> None:
    parser.addini("stumpcheck_lemma_files", type="args", default=[],
                  help="stumpcheck: glob patterns of lemma files whose lemmas are collected as tests")
    parser.addini("stumpcheck_level", default="",
                  help="stumpcheck: evidence level of collected lemmas (default: each lemma's first)")
    parser.addini("stumpcheck_max_examples", default="",
                  help="stumpcheck: Hypothesis examples per collected lemma (default: each lemma's own)")
    parser.addini("stumpcheck_seed", default="0", help="stumpcheck: seed of collected lemmas' searches")


def _ini_int(config, name: str, least: int) -> int | None:
    text = str(config.getini(name)).strip()
    if not text:
        return None
    try:
        value = int(text)
    except ValueError:
        value = None
    if value is None or value < least:
        raise pytest.UsageError(f"stumpcheck: ini {name} must be an int >= {least}, got {text!r}")
    return value


_SETTINGS = pytest.StashKey[dict]()


def pytest_configure(config) -> None:
    """Read the lemma-file settings once (bad values: a usage error before any test runs)."""
    level = str(config.getini("stumpcheck_level")).strip() or None
    if level is not None:
        from stumpcheck.lemmas.definitions import EVIDENCE_LEVELS

        if level not in EVIDENCE_LEVELS:
            raise pytest.UsageError(f"stumpcheck: ini stumpcheck_level must be one of {', '.join(EVIDENCE_LEVELS)}, "
                                    f"got {level!r}")
    config.stash[_SETTINGS] = {"level": level, "max_examples": _ini_int(config, "stumpcheck_max_examples", 1),
                               "seed": _ini_int(config, "stumpcheck_seed", 0) or 0}


def pytest_collect_file(file_path: Path, parent):
    patterns = parent.config.getini("stumpcheck_lemma_files")
    if patterns and file_path.suffix == ".py" and any(file_path.match(pattern) for pattern in patterns):
        return LemmaFile.from_parent(parent, path=file_path)
    return None


class LemmaFile(pytest.File):
    """A lemma file named by ``stumpcheck_lemma_files``: one :class:`LemmaItem` per lemma it defines."""

    def collect(self):
        from stumpcheck.lemmas.files import load_lemmas
        from stumpcheck.lemmas.replay import shown_path

        for name, entry in load_lemmas(shown_path(self.path)).items():
            yield LemmaItem.from_parent(self, name=name, entry=entry)

    def repr_failure(self, excinfo):
        from stumpcheck.numerics.precision import InputError

        if isinstance(excinfo.value, InputError):  # the file does not import, or defines a bad lemma: one line
            return str(excinfo.value)
        return super().repr_failure(excinfo)


class LemmaItem(pytest.Item):
    """One lemma of a lemma file, checked by :func:`stumpcheck.lemmas.testing.check_as_test`."""

    def __init__(self, *, entry, **kwargs):
        super().__init__(**kwargs)
        self.entry = entry

    def runtest(self) -> None:
        from stumpcheck.lemmas.testing import check_as_test, lemma_test_options

        settings = self.config.stash[_SETTINGS]
        if settings["level"] is not None and settings["level"] not in self.entry.evidence:
            pytest.skip(f"lemma {self.entry.name} supports {', '.join(self.entry.evidence)}, not {settings['level']}")
        check_as_test(self.entry, lemma_test_options(self.entry, **settings))

    def repr_failure(self, excinfo):
        from stumpcheck.lemmas.testing import LemmaFailure
        from stumpcheck.numerics.precision import InputError

        if isinstance(excinfo.value, (LemmaFailure, InputError)):
            return str(excinfo.value)
        return super().repr_failure(excinfo)

    def reportinfo(self):
        return self.path, None, f"lemma {self.entry.name}"
