"""Every ```python block of the Markdown pages runs: README.md, docs/**/*.md (a page added later is picked
up by itself) and the READMEs of the repository's folders.

Each page runs in a fresh Python process, in a scratch directory that holds the repository's example
folders (`examples/`, `docs/examples/`), the page's blocks in order in one namespace, as a reader pasting
them into one session would run them. Sybil (the `test` extra) finds the blocks:

- a ```python (or ```pycon) block whose first line starts with `>>>` is a doctest: its shown output is
  compared (ELLIPSIS and NORMALIZE_WHITESPACE), so a stale figure fails;
- any other ```python block is executed, and must not raise;
- `<!-- invisible-code-block: python ... -->` is executed too, unseen in the rendered page (a setup line a
  block needs, e.g. an import the prose mentions);
- `<!-- skip: next "why" -->` before a block skips it (a run of hours, a path on the user's machine); the
  reason is required, and skips are listed by `test_skipped_blocks_are_few_and_say_why`. A block that
  waits for a feature not yet public says so: `<!-- skip: next "pending: what it waits for" -->`.

A fence such as ```py, ```python3 or ```python skip would be ignored by the runner: it is refused here, so
that no block goes unrun silently. docs/README.md says the same for writers.

Run one page by hand: `python tests/test_docs_blocks.py docs/lemmas.md` (from the repository root).
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent

#: the folders a page's blocks may name by their repository path, copied into the scratch directory
EXAMPLE_FOLDERS = ("examples", "docs/examples")
#: the languages whose fenced blocks run; other spellings of Python are refused
RUN_LANGUAGES = ("python", "pycon")
PYTHON_SPELLINGS = {"py", "py3", "python", "python3", "pycon", "ipython", "ipython3", "pyi"}
FENCE = re.compile(r"^[ \t]*(`{3,}|~{3,})[ \t]*([^\s`]*)([^\n]*)$", re.M)
# directives in HTML comments count where Sybil reads them: at the start of a line (not quoted in prose)
SKIP = re.compile(r"^[ \t]*<!--+\s*skip:\s*(\S+)(.*?)--+>", re.S | re.M)
INVISIBLE = re.compile(r"^[ \t]*<!--+\s*invisible-code-block:\s*python", re.M)
SKIP_REASON = re.compile(r'\s*"([^"]+)"\s*')


def markdown_pages() -> list[Path]:
    """README.md, every page under docs/ (but its build output), the READMEs of the top-level folders."""
    pages = [ROOT / "README.md", *sorted(p for p in (ROOT / "docs").rglob("*.md") if "_build" not in p.parts)]
    pages += sorted(p for p in ROOT.glob("*/README.md") if p.parent.name != "docs")
    return [p for p in pages if p.is_file()]


def _fences(text: str):
    """(line, language, rest of the info string) of each opening fence."""
    opened = None
    for match in FENCE.finditer(text):
        if opened is None:
            opened = match.group(1)
            yield text.count("\n", 0, match.start()) + 1, match.group(2).lower(), match.group(3).strip()
        elif match.group(1)[0] == opened[0] and len(match.group(1)) >= len(opened) and not match.group(2):
            opened = None


def _python_blocks(page: Path) -> list[int]:
    return [line for line, language, _ in _fences(page.read_text(encoding="utf-8")) if language in RUN_LANGUAGES]


PAGES_WITH_BLOCKS = [p for p in markdown_pages()
                     if _python_blocks(p) or INVISIBLE.search(p.read_text(encoding="utf-8"))]


def _name(page: Path) -> str:
    return page.relative_to(ROOT).as_posix()


def test_the_pages_are_found():
    names = [_name(p) for p in markdown_pages()]
    assert "README.md" in names and "docs/lemmas.md" in names and "docs/api.md" in names
    assert {"README.md", "docs/lemmas.md", "docs/api.md"} <= {_name(p) for p in PAGES_WITH_BLOCKS}


def test_every_python_block_is_one_the_runner_sees():
    wrong = []
    for page in markdown_pages():
        for line, language, rest in _fences(page.read_text(encoding="utf-8")):
            if language in PYTHON_SPELLINGS and (language not in RUN_LANGUAGES or rest):
                wrong.append(f"{_name(page)}:{line}: ```{language} {rest}".rstrip())
    assert not wrong, ("fences the runner would not run: write ```python (or ```pycon), and mark a block "
                       "that must not run with <!-- skip: next \"why\" --> before it:\n" + "\n".join(wrong))


def test_skipped_blocks_are_few_and_say_why():
    skips = []
    for page in markdown_pages():
        text = page.read_text(encoding="utf-8")
        for match in SKIP.finditer(text):
            where = f"{_name(page)}:{text.count(chr(10), 0, match.start()) + 1}"
            action, reason = match.group(1), match.group(2)
            if action == "end":
                continue
            assert SKIP_REASON.fullmatch(reason), f'{where}: a skip says why: <!-- skip: {action} "reason" -->'
            skips.append(f"{where}: {SKIP_REASON.fullmatch(reason).group(1)}")
    print("\n".join(skips))
    assert len(skips) <= 8, "more than 8 blocks are skipped; make them quick instead:\n" + "\n".join(skips)


def _scratch(tmp_path: Path) -> Path:
    for folder in EXAMPLE_FOLDERS:
        source, target = ROOT / folder, tmp_path / folder
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copytree(source, target, ignore=shutil.ignore_patterns("__pycache__"))
    return tmp_path


@pytest.mark.parametrize("page", PAGES_WITH_BLOCKS, ids=_name)
def test_the_python_blocks_of_a_page_run(page, tmp_path):
    if os.environ.get("CI"):  # CI installs the test extra: there a missing sybil fails, it does not skip
        import sybil  # noqa: F401
    else:
        pytest.importorskip("sybil", reason="the test extra is not installed: pip install -e '.[test]'")
    env = {**os.environ, "MPLBACKEND": "Agg"}
    # -P: the runner's folder (tests/) is not put on sys.path; the blocks see the installed package only
    result = subprocess.run([sys.executable, "-P", str(Path(__file__).resolve()), str(page)],
                            cwd=_scratch(tmp_path), env=env, capture_output=True, text=True, timeout=600)
    print(result.stdout)
    assert result.returncode == 0, result.stdout[-6000:] + result.stderr[-4000:]
    summary = re.search(r"ran (\d+) examples, skipped (\d+)$", result.stdout, re.M)
    assert summary, result.stdout[-2000:]
    # every fenced block was seen: a code block is one example, a doctest block one per >>> (at least one)
    assert int(summary.group(1)) + int(summary.group(2)) >= len(_python_blocks(page)), result.stdout[-2000:]


# --- the runner: one page, in this process -------------------------------------------------------------


def _sybil_parsers():
    import doctest

    from sybil.evaluators.python import PythonEvaluator
    from sybil.parsers.markdown import CodeBlockParser, PythonCodeBlockParser, SkipParser

    flags = doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE

    class PyconParser(PythonCodeBlockParser):
        """```pycon blocks: doctests, as ```python blocks that start with >>>."""

        def __init__(self):
            super().__init__(doctest_optionflags=flags)
            self.codeblock_parser = CodeBlockParser("pycon", PythonEvaluator())

    return [PythonCodeBlockParser(doctest_optionflags=flags), PyconParser(), SkipParser()]


def run_page(path: str) -> int:
    """Run the blocks of the Markdown page ``path`` in order; print one line a block; 1 on the first failure."""
    import time
    import traceback
    from unittest import SkipTest

    from sybil import Document

    document = Document.parse(path, *_sybil_parsers())
    document.namespace["__name__"] = "__main__"
    ran = skipped = 0
    for example in document:
        kind = type(example.region.evaluator).__name__
        start = time.perf_counter()
        try:
            example.evaluate()
        except SkipTest as skip:
            skipped += 1
            print(f"{path}:{example.line}: skipped ({skip})")
            continue
        except Exception:
            print(f"{path}:{example.line}: FAILED ({kind})")
            traceback.print_exc(file=sys.stdout)
            return 1
        if kind != "Skipper":
            ran += 1
            print(f"{path}:{example.line}: ok ({kind}, {time.perf_counter() - start:.1f} s)")
    print(f"{path}: ran {ran} examples, skipped {skipped}")
    return 0


if __name__ == "__main__":
    sys.exit(run_page(sys.argv[1]))
