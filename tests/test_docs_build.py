"""The rendered reference (docs/conf.py) builds with warnings as errors.

CI builds it in `.ci/run` (html and doctest); this test is the same html build for local use, marked
slow. It needs the docs extra (`pip install -e '.[docs]'`) and is skipped without it.
"""

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


@pytest.mark.slow
def test_reference_builds_without_warnings(tmp_path):
    pytest.importorskip("sphinx", reason="the docs extra is not installed: pip install -e '.[docs]'")
    pytest.importorskip("myst_parser", reason="the docs extra is not installed: pip install -e '.[docs]'")
    result = subprocess.run(
        [sys.executable, "-m", "sphinx", "-W", "--keep-going", "-q", "-b", "html",
         "-d", str(tmp_path / "doctrees"), str(ROOT / "docs"), str(tmp_path / "html")],
        cwd=ROOT, capture_output=True, text=True, timeout=600)
    assert result.returncode == 0, result.stderr[-4000:]
    assert (tmp_path / "html" / "index.html").is_file()
    api = (tmp_path / "html" / "reference" / "api.html").read_text(encoding="utf-8")
    assert 'id="module-stumpcheck.api"' in api
