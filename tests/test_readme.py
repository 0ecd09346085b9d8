"""README's excerpt of `stumpcheck verify --quick` is generated (docs/readme_excerpt.py) from a run's
results.json, not typed: it must list exactly the registered claims and lemmas, in the registry's
order, with a summary line that counts them."""

import importlib.util
import re
from pathlib import Path

from stumpcheck.lemmas.catalogue import registry
from stumpcheck.claims.result import ClaimResult

ROOT = Path(__file__).resolve().parent.parent


def _excerpt_module():
    spec = importlib.util.spec_from_file_location("readme_excerpt", ROOT / "docs" / "readme_excerpt.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _block():
    text = (ROOT / "README.md").read_text()
    module = _excerpt_module()
    assert module.BEGIN in text and module.END in text
    return text.split(module.BEGIN, 1)[1].split(module.END, 1)[0]


def test_readme_excerpt_lists_every_registered_entry_in_order():
    block = _block()
    table = block.split("```text", 1)[1].split("```", 1)[0].strip().splitlines()
    assert table[0].split()[:2] == ["id", "statement"]
    ids = [line.split()[0] for line in table[1:-1]]
    assert ids == list(registry()), "README's verify excerpt is stale: regenerate it with docs/readme_excerpt.py"
    summary = table[-1]
    match = re.match(r"(\d+)/(\d+) PASS", summary)
    assert match and int(match.group(2)) == len(ids)
    failed = [i for i, line in zip(ids, table[1:-1]) if " FAIL " in line]
    assert int(match.group(1)) == len(ids) - len(failed)


def test_excerpt_is_rebuilt_from_results_json():
    module = _excerpt_module()
    result = ClaimResult(id="C1", statement="s", figure="f", tolerance="t", status="FAIL", evidence="sampled",
                         seconds=1.0)
    document = {"claims": [{**result.as_dict()}], "summary": {"total": 1, "passed": 0, "failed": ["C1"],
                                                              "seconds": 1.0},
                "provenance": {"mode": "quick", "seed": 0, "git_commit": "0123456789", "date": "2026-12-01T00:00"}}
    block = module.excerpt(document)
    assert block.startswith(module.BEGIN) and block.endswith(module.END)
    assert "0/1 PASS; FAIL: C1" in block and "commit 0123456" in block
    text = "head\n" + module.BEGIN + "\nold\n" + module.END + "\ntail\n"
    assert module.replace_block(text, block) == "head\n" + block + "\ntail\n"
