"""A --quick sub-domain of a θ-integral lemma is proved in Arb alone; a whole domain with the fast layer."""

from __future__ import annotations

import json

from click.testing import CliRunner

from stumpcheck.cli import cli


def test_the_quick_sub_domain_is_proved_in_arb(tmp_path):
    result = CliRunner().invoke(cli, ["verify", "--quick", "--only", "progress_direction", "--out", str(tmp_path)])
    assert result.exit_code == 0, result.output
    document = json.loads((tmp_path / "progress_direction.certificate.json").read_text(encoding="utf-8"))
    assert document["status"] == "proved" and document["leaves"]
    assert "arithmetic" not in document  # the Arb prover records no fast-layer arithmetic
    assert all(leaf.get("arithmetic") in (None, "arb") for leaf in document["leaves"])
