"""``stumpcheck interval --workers 2`` and ``--scheduler local`` prove the same columns as one process.

The certificates agree field for field except ``seconds``, ``versions`` (wall clock, date) and ``digest``
(which covers them): the columns are proved where the scheduler puts them and read back in order.
"""

from __future__ import annotations

import json

import pytest

from stumpcheck.cli.commands import main

ARGS = ["interval", "--m", "48", "--n", "48", "--seed", "2", "--b-max", "16", "--quiet"]
VOLATILE = ("seconds", "versions", "digest")


def _certificate(folder):
    document = json.loads((folder / "interval_certificate.json").read_text(encoding="utf-8"))
    return {k: v for k, v in document.items() if k not in VOLATILE}


@pytest.mark.parametrize("where", [["--workers", "2"], ["--scheduler", "local", "--workers", "2"]],
                         ids=["local-processes", "dask-local-cluster"])
def test_same_certificate_wherever_the_columns_run(tmp_path, where):
    if "--scheduler" in where:
        pytest.importorskip("distributed")
    assert main([*ARGS, "--out", str(tmp_path / "one")]) in (0, 1)
    assert main([*ARGS, "--out", str(tmp_path / "many"), *where]) in (0, 1)
    one, many = _certificate(tmp_path / "one"), _certificate(tmp_path / "many")
    assert one["leaves"] and one == many


def test_a_scheduler_address_with_workers_is_refused(tmp_path, capsys):
    status = main([*ARGS, "--out", str(tmp_path / "o"), "--scheduler", "tcp://127.0.0.1:1", "--workers", "2"])
    assert status == 2 and capsys.readouterr().err.count("\n") == 1
