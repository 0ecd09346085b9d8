"""Lazy imports: each command loads only what it uses (checked in sys.modules of a fresh process, not by time).

* ``stumpcheck --help``, ``stumpcheck eval --help`` and a text input that does not parse load none of the
  numeric stack (numpy, mpmath, SymPy, python-flint, SciPy, matplotlib, tqdm);
* ``stumpcheck eval error --dps D`` takes its digits from an Arb enclosure (``--method auto``): numpy, mpmath
  and flint, not SymPy, SciPy or matplotlib; with ``--method mpmath`` (the two-precision path) numpy and mpmath
  only; ``eval loss --certified`` adds flint and still not SymPy;
* SymPy is what ``derive`` loads (its work is SymPy's).
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
HEAVY = ("numpy", "mpmath", "sympy", "flint", "scipy", "matplotlib", "tqdm", "numba")

_PROBE = """
import json, sys
from stumpcheck.cli.commands import main
status = main({argv!r})
print(json.dumps({{"status": status, "loaded": sorted({{m.split('.')[0] for m in sys.modules}} & set({heavy!r}))}}))
"""


def _loaded(argv: list[str]) -> tuple[int, set[str]]:
    """(exit status, heavy top-level packages in sys.modules) after ``stumpcheck argv`` in a fresh process."""
    done = subprocess.run([sys.executable, "-c", _PROBE.format(argv=argv, heavy=HEAVY)], capture_output=True,
                          text=True, cwd=ROOT, timeout=300)
    report = json.loads(done.stdout.strip().splitlines()[-1])
    return report["status"], set(report["loaded"])


@pytest.mark.parametrize("argv", [["--help"], ["eval", "--help"], ["verify", "--help"],
                                  ["eval", "error", "--a", "x1", "--b", "1", "--theta", "0.5"],
                                  ["eval", "loss", "--a", "1", "--b", "1", "--dps", "0"]])
def test_help_and_input_errors_load_no_numeric_stack(argv):
    status, loaded = _loaded(argv)
    assert status in (0, 2)
    assert loaded == set(), f"stumpcheck {' '.join(argv)} loaded {sorted(loaded)}"


def test_eval_error_loads_only_the_population_code_and_arb():
    status, loaded = _loaded(["eval", "error", "--a", "10", "--b", "10", "--theta", "0.3", "--dps", "15"])
    assert status == 0
    assert loaded <= {"numpy", "mpmath", "flint"}, sorted(loaded)
    assert "flint" in loaded


def test_eval_error_by_mpmath_loads_only_the_population_code():
    status, loaded = _loaded(["eval", "error", "--a", "10", "--b", "10", "--theta", "0.3", "--dps", "15",
                              "--method", "mpmath"])
    assert status == 0
    assert loaded <= {"numpy", "mpmath"}, sorted(loaded)
    assert "mpmath" in loaded


def test_certified_eval_adds_flint_but_not_sympy():
    status, loaded = _loaded(["eval", "loss", "--a", "10", "--b", "10", "--dps", "15", "--certified"])
    assert status == 0
    assert "flint" in loaded
    assert not loaded & {"sympy", "scipy", "matplotlib"}, sorted(loaded)
