"""Start-up cost: ``stumpcheck --help`` against ``python -c "import numpy"``.

``run(quick)``: wall seconds of a fresh process printing ``stumpcheck --help`` (the installed
console script, or ``python -m stumpcheck`` when there is none) against a fresh process that only
imports numpy (the bound: target ours/bound ≤ 2.5), interleaved, best of 5 (quick) or 15. The
details say which heavy packages the help process loaded (it should load none: tests/test_startup.py
checks that too). Usage: ``python benchmarks/bench_startup.py``.
"""

from __future__ import annotations

import json
import math
import shutil
import subprocess
import sys
import time
from pathlib import Path

if __package__ in (None, ""):  # run as a script
    sys.path[:0] = [str(Path(__file__).resolve().parent.parent)]
from benchmarks.rows import format_rows, row  # noqa: E402

HEAVY = ("numpy", "mpmath", "sympy", "flint", "scipy", "matplotlib", "tqdm", "numba")


def _help_command() -> list[str]:
    script = Path(sys.executable).with_name("stumpcheck")
    if script.exists():
        return [str(script), "--help"]
    found = shutil.which("stumpcheck")
    return [found, "--help"] if found else [sys.executable, "-m", "stumpcheck", "--help"]


def _seconds(argv: list[str]) -> float:
    start = time.perf_counter()
    subprocess.run(argv, check=True, capture_output=True)
    return time.perf_counter() - start


def _loaded_by_help() -> list[str]:
    probe = ("import sys\nfrom stumpcheck.cli import main\nmain(['--help'])\n"
             f"print(sorted({{m.split('.')[0] for m in sys.modules}} & set({HEAVY!r})))")
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True)
    return json.loads(done.stdout.strip().splitlines()[-1].replace("'", '"'))


def run(quick: bool = False) -> list[dict]:
    """One row: ``stumpcheck --help`` against ``python -c "import numpy"`` (both fresh processes)."""
    ours_argv, bound_argv = _help_command(), [sys.executable, "-c", "import numpy"]
    _seconds(ours_argv), _seconds(bound_argv)  # warm the file cache
    ours = bound = math.inf
    repeats = 5 if quick else 15
    for _ in range(repeats):
        ours = min(ours, _seconds(ours_argv))
        bound = min(bound, _seconds(bound_argv))
    return [row("stumpcheck --help", ours, 'python -c "import numpy"', bound, kind="ours/bound",
                target=("<=", 2.5), note="fresh processes, best of {}".format(repeats),
                details={"command": " ".join(Path(ours_argv[0]).name if i == 0 else x
                                             for i, x in enumerate(ours_argv)),
                         "heavy_packages_loaded_by_help": _loaded_by_help(), "repeats": repeats})]


if __name__ == "__main__":
    print(format_rows(run(quick="--quick" in sys.argv)))
