"""LaTeX exports that drop into a paper (stumpcheck.theory.latex_exports, stumpcheck.theory.paper_latex).

* every ``tex/NAME.tex`` is ``lhs = rhs``, each of the 25 results with its own left-hand side;
* the model's symbols are the macros of ``tex/macros.tex``, which defines every macro the files use;
* the printed right-hand side is SymPy-equal to the derived one (simplify(new − old) == 0, proved here),
  never longer, and holds no terms that cancel (bulk_error held εr − εr);
* results wider than a line have a ``split`` variant whose lines fit, and so has everything over 400
  characters;
* ``export(names=[...], fmt="tex")`` writes a subset and validates the names;
* the sample paper compiles with pdflatex (skipped, with the reason, where there is none), also with a
  symbol restyled, without an overfull line.
"""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import pytest
import sympy as sp

from stumpcheck.numerics.precision import InputError
from stumpcheck.theory.catalogue import results
from stumpcheck.theory.codegen_rewrites import factored_rates
from stumpcheck.theory.export import export
from stumpcheck.theory.latex_exports import SAMPLE, is_long, printed_form
from stumpcheck.theory.paper_latex import LINE_WIDTH, MACROS, latex_width, paper_latex

ROOT = Path(__file__).resolve().parent.parent
DERIVATIONS = ROOT / "derivations"
BY_NAME = {r.name: r for r in results()}


def _body(path: Path) -> str:
    return "\n".join(line for line in path.read_text(encoding="utf-8").splitlines() if not line.startswith("%"))


def _derived(result):
    return result.expr.rhs if isinstance(result.expr, sp.Eq) else result.expr


def _entries(expr) -> list[sp.Expr]:
    if isinstance(expr, sp.MatrixBase):
        return list(expr)
    if isinstance(expr, sp.Integral):
        return [expr.function]
    return [expr]


def test_there_are_25_results_each_with_its_own_left_hand_side():
    lhs = [r.lhs for r in results()]
    assert len(lhs) == 25 and all(lhs)
    # the same symbol twice only where it is the same quantity: e(θ) in two forms
    assert sorted(name for name, r in BY_NAME.items() if lhs.count(r.lhs) > 1) == \
        ["error_one_head", "exact_error_layer_variables"]


@pytest.mark.parametrize("name", sorted(BY_NAME))
def test_every_export_is_lhs_equals_rhs(name):
    result = BY_NAME[name]
    body = _body(DERIVATIONS / "tex" / f"{name}.tex")
    assert "\n" not in body
    assert body == f"{result.lhs} = {paper_latex(printed_form(result))}"


def test_macros_tex_defines_every_macro_the_exports_use():
    defined = set(re.findall(r"\\newcommand\{\\(\w+)\}", (DERIVATIONS / "tex" / "macros.tex").read_text()))
    assert defined == {m.name for m in MACROS}
    used = set()
    for path in (DERIVATIONS / "tex").glob("*.tex"):
        if path.name != "macros.tex":
            used |= set(re.findall(r"\\([A-Za-z]+)", _body(path)))
    assert {"labelscore", "featurescore", "threshold", "logmass", "cumulant", "softmaxweight"} <= used
    latex_commands = {"frac", "left", "right", "log", "operatorname", "Bigl", "Bigr", "bigl", "bigr", "times",
                      "quad", "int", "limits", "zeta", "pi", "mathrm", "partial", "nabla", "begin", "end",
                      "text", "ell", "xi"}  # the split files' "where ℓ₁ = …, ξ₁ = …" rows
    assert used - defined <= latex_commands, used - defined - latex_commands
    # the model's symbols never appear as themselves: θ, β, ε, Ω, ρ are macros (ζ is also ζ(3))
    for path in (DERIVATIONS / "tex").glob("*.tex"):
        if path.name != "macros.tex":
            assert not re.search(r"\\(theta|beta|epsilon|varepsilon|Omega|rho|Lambda|kappa)(?![A-Za-z])", _body(path))


@pytest.mark.parametrize("name", sorted(BY_NAME))
def test_the_printed_form_is_proved_equal_to_the_derived_one_and_not_longer(name):
    result = BY_NAME[name]
    new, old = printed_form(result), _derived(result)
    for new_entry, old_entry in zip(_entries(new), _entries(old)):
        assert sp.simplify(new_entry - old_entry) == 0
    # never longer than the derived expression with its rates written b(1 − θ) (the paper's form)
    assert len(sp.latex(new)) <= len(sp.latex(old.applyfunc(factored_rates) if isinstance(old, sp.MatrixBase)
                                              else factored_rates(old)))


def _cancelling_sums(expr) -> list[sp.Add]:
    """Sums whose terms, each expanded, cancel when added: a − a hidden in a + … − a (expanded)."""
    out = []
    for node in sp.preorder_traversal(expr):
        if isinstance(node, sp.Add):
            separately = sum(len(sp.Add.make_args(sp.expand(term))) for term in node.args)
            if separately != len(sp.Add.make_args(sp.expand(node))):
                out.append(node)
    return out


@pytest.mark.parametrize("name", sorted(BY_NAME))
def test_no_printed_sum_hides_terms_that_cancel(name):
    for entry in _entries(printed_form(BY_NAME[name])):
        assert _cancelling_sums(entry) == []


def test_bulk_error_lost_its_cancelling_terms():
    derived = _derived(BY_NAME["bulk_error"])
    assert _cancelling_sums(derived)  # ε r v + ε r − ε v + ε(1 − r) − ε − r: the check sees εr − εr
    body = _body(DERIVATIONS / "tex" / "bulk_error.tex")
    assert r"\left(1 - \layerweight\right)" not in body
    assert sp.count_ops(printed_form(BY_NAME["bulk_error"])) < sp.count_ops(derived)


@pytest.mark.parametrize("name", sorted(BY_NAME))
def test_long_results_have_a_split_variant_whose_lines_fit(name):
    result = BY_NAME[name]
    one_line = _body(DERIVATIONS / "tex" / f"{name}.tex")
    split = DERIVATIONS / "tex" / f"{name}_split.tex"
    assert split.exists() == is_long(result) == (latex_width(one_line) > LINE_WIDTH)
    if len(one_line) > 400:
        assert split.exists()
    if split.exists():
        body = _body(split)
        assert body.startswith("\\begin{split}\n") and body.endswith("\n\\end{split}")
        rows = body.splitlines()[1:-1]
        assert len(rows) > 1
        assert rows[0].startswith(result.lhs + " &= ") or rows[0].startswith(r"\bigl(" + result.lhs + r"\bigr)")
        for row in rows:
            left, _, line = row.rstrip(" \\").partition("&")
            line = line.removeprefix("=").removeprefix("\\quad")
            assert latex_width(left) + 3 + latex_width(line) <= LINE_WIDTH, row


def test_export_writes_a_subset_of_names(tmp_path):
    paths = export(tmp_path, "tex", names=["bulk_error", "calibration", "bulk_error"])
    assert sorted(str(p.relative_to(tmp_path)) for p in paths) == \
        ["tex/bulk_error.tex", "tex/calibration.tex", "tex/macros.tex"]
    for path in paths:
        assert path.read_bytes() == (DERIVATIONS / path.relative_to(tmp_path)).read_bytes()
    paths = export(tmp_path / "json", "json", names=("loss",))
    assert [p.name for p in paths] == ["loss.json"]


@pytest.mark.parametrize("kwargs, message", [
    ({"fmt": "tex", "names": ["bulk_error", "no_such_result"]}, "unknown result 'no_such_result'; known: log_mass, "),
    ({"fmt": "tex", "names": "bulk_error"}, "names must be a list of result names"),
    ({"fmt": "tex", "names": [1]}, "names must be a list of result names"),
    ({"fmt": "tex", "names": 5}, "names must be a list of result names"),
    ({"fmt": "tex", "names": []}, "names is empty; known: "),
    ({"fmt": "py", "names": ["loss"]}, "names selects results for fmt 'tex' or 'json'"),
    ({"fmt": "pdf"}, "unknown format"),
])
def test_export_validates_its_options(tmp_path, kwargs, message):
    with pytest.raises(InputError, match=re.escape(message)) as info:
        export(tmp_path, **kwargs)
    assert "\n" not in str(info.value)
    assert not any(tmp_path.iterdir())  # nothing written before the check


def test_the_unknown_name_message_lists_every_known_name(tmp_path):
    with pytest.raises(InputError) as info:
        export(tmp_path, "tex", names=["nope"])
    assert all(name in str(info.value) for name in BY_NAME)


def test_the_sample_inputs_the_macros_and_every_result():
    sample = (DERIVATIONS / SAMPLE).read_text(encoding="utf-8")
    assert "\\input{../tex/macros}" in sample
    for name, result in BY_NAME.items():
        assert f"\\input{{../tex/{name}_split}}" in sample if is_long(result) else f"\\input{{../tex/{name}}}" in sample


def _compile(folder: Path) -> str:
    """pdflatex on folder/paper/sample.tex (from its folder, as the sample says); the log's text."""
    done = subprocess.run(["pdflatex", "-interaction=nonstopmode", "-halt-on-error", "sample.tex"],
                          cwd=folder / "paper", capture_output=True, text=True, timeout=300)
    log = (folder / "paper" / "sample.log").read_text(encoding="latin-1")
    assert done.returncode == 0, log[-3000:]
    assert (folder / "paper" / "sample.pdf").stat().st_size > 10_000
    return log


@pytest.mark.skipif(shutil.which("pdflatex") is None, reason="no pdflatex on PATH (install texlive-latex-base and "
                                                            "texlive-latex-recommended to compile the sample paper)")
def test_the_sample_paper_compiles_also_with_a_symbol_restyled(tmp_path):
    for folder in ("tex", "paper"):
        shutil.copytree(DERIVATIONS / folder, tmp_path / folder)
    log = _compile(tmp_path)
    assert "Overfull \\hbox" not in log, re.findall(r"Overfull \\hbox.*", log)
    sample = tmp_path / "paper" / "sample.tex"
    text = sample.read_text(encoding="utf-8")
    restyled = text.replace("\\begin{document}",
                            "\\renewcommand{\\featurescore}{{\\beta_{f}}}\n\\renewcommand{\\cumulant}[1]{K_{#1}}\n"
                            "\\begin{document}")
    sample.write_text(restyled, encoding="utf-8")
    _compile(tmp_path)


# --- named common subexpressions, normalised signs, the public splitter ------------------------------------


@pytest.mark.parametrize("name", sorted(name for name, r in BY_NAME.items() if is_long(r)))
def test_named_subexpressions_substituted_back_give_the_printed_form(name):
    from stumpcheck.theory.paper_latex import named_subexpressions

    printed = printed_form(BY_NAME[name])
    reduced, names = named_subexpressions(printed)
    for named in reversed(names):  # each definition uses only the names before it
        assert not named.expr.free_symbols & {n.symbol for n in names[names.index(named):]}
        reduced = reduced.xreplace({named.symbol: named.expr})
    for back, entry in zip(_entries(reduced), _entries(printed)):
        assert sp.expand(back - entry) == 0  # the same expression (up to SymPy's automatic regrouping)
    split = _body(DERIVATIONS / "tex" / f"{name}_split.tex")
    for named in names:  # each name defined once, in a row of its own
        assert split.count(f"{named.tex} &= ") == 1


def test_the_softmax_arguments_are_named_once_as_the_log_masses():
    split = _body(DERIVATIONS / "tex" / "error_grad_b_split.tex")
    one_line = _body(DERIVATIONS / "tex" / "error_grad_b.tex")
    assert one_line.count(r"\logmass\left(\featurescore \threshold\right)") >= 4  # written out each time
    assert split.count(r"\logmass\left(\featurescore \threshold\right)") == 1
    assert r"\text{where } \ell_{1} &= \log{\left(\threshold \right)} + \logmass" in split
    assert r"w_{1} &= \softmaxweight{1}\left(\ell_{1}, \ell_{2}\right)" in split
    pooled = _body(DERIVATIONS / "tex" / "error_pooled_split.tex")
    assert r"\softmaxweight{1}\left(\ell_{1}, \ell_{2}, \ell_{3}, \ell_{4}\right)" in pooled  # in argument order


def test_signs_are_normalised_by_the_printer():
    assert _body(DERIVATIONS / "tex" / "calibration.tex").endswith(
        r"- \frac{9 + 2 \pi^{2} - 18 \zeta\left(3\right)}{6 \featurescore}")
    from stumpcheck.theory.paper_latex import PaperLatexPrinter

    printer = PaperLatexPrinter({"macros": True})
    for result in results():  # no printed sum leads with a minus while it has a positive term
        for entry in _entries(printed_form(result)):
            for node in sp.preorder_traversal(entry):
                if isinstance(node, sp.Add) and printer._print(node).startswith("-"):
                    assert all(t.could_extract_minus_sign() for t in node.args), (result.name, node)
    a, b = sp.symbols("a b", positive=True)
    assert paper_latex(-a + b + 1, macros=False) == "b + 1 - a"
    assert paper_latex(-a - b, macros=False) == "- a - b"  # no positive term: SymPy's order
    assert paper_latex(a - b, macros=False) == "a - b"


def test_the_public_splitter_breaks_a_users_expression_and_checks_its_input():
    from stumpcheck.api import split_latex
    from stumpcheck.theory.model import stable_error
    from stumpcheck.theory.symbols import b, theta

    text = split_latex(stable_error("averaged"), "e_{\\mathrm{avg}}", width=50)
    rows = text.splitlines()[1:-1]
    assert text.startswith("\\begin{split}\n") and text.endswith("\n\\end{split}")
    assert rows[0].startswith("e_{\\mathrm{avg}} &= ") and any(r.startswith("\\text{where } \\ell_{1} &= ") for r in rows)
    for row in rows:
        left, _, line = row.rstrip(" \\").partition("&")
        assert latex_width(left) + 3 + latex_width(line.removeprefix("=").removeprefix("\\quad")) <= 50, row
    plain = split_latex(b * theta + 1, "y", where=False)
    assert plain == "\\begin{split}\ny &= b \\theta + 1\n\\end{split}"
    assert "\\featurescore" in split_latex(b * theta, "y", macros=True)
    for kwargs, message in [({"width": 5}, "width must be"), ({"where": 1}, "where must be"),
                            ({"macros": "yes"}, "macros must be")]:
        with pytest.raises(InputError, match=message):
            split_latex(b, "y", **kwargs)
    with pytest.raises(InputError, match="name must be"):
        split_latex(b, " ")
    with pytest.raises(InputError, match="expr must be"):
        split_latex("b", "y")
