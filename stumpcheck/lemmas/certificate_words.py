"""The words a lemma certificate carries beside its proof (``author_statement``), checked against the lemma they name.

A certificate's ``statement`` is derived from what its re-check proves
(:mod:`stumpcheck.numerics.certified.certificates.lemma_recheck`); its ``author_statement`` is the lemma's own
words, which no proof derives. For a built-in certified lemma (:mod:`stumpcheck.lemmas.certified_builtins`) the
words are known, so ``stumpcheck recheck`` checks them (and that the certificate is that lemma's: margin, domain,
strictness); a user's lemma's words are not known here, and the re-check says so instead of passing them by.
This module sits above the catalogue (it reads the built-in lemmas' words), which imports nothing of it.
"""

from __future__ import annotations

__all__ = ["author_statement_check"]


def author_statement_check(document: dict) -> tuple[str | None, str]:
    """(why a lemma certificate's ``author_statement`` is not what it says, or None; a note of what was checked).

    A certificate whose margin is named after a certified built-in lemma (``verify --certified`` writes them)
    must be that lemma's: its margin, its domain or ``verify --quick``'s sub-domain, its strictness, and as
    ``author_statement`` the lemma's own words; then the words are checked. Any other certificate (a user's
    lemma) carries words no definition here can check: the note says so."""
    from stumpcheck.lemmas.catalogue import get
    from stumpcheck.lemmas.certified_builtins import CERTIFIED_NAMES, certified_specs, quick_domain
    from stumpcheck.numerics.certified.proofs.domains import Domain

    name = (document.get("margin") or {}).get("name")
    if name not in CERTIFIED_NAMES:
        return None, ("the author_statement (the author's words) is not checked: no built-in lemma is named "
                      f"{str(name)[:40]!r}; what passed is the derived statement")
    margin, domain, strict = certified_specs()[name]
    if document.get("margin") != margin.to_json() or document.get("strict") is not strict:
        return f"the margin named {name} is not the built-in lemma {name}'s margin (or strictness)", ""
    try:
        recorded = Domain.from_json(document.get("domain")).to_json()
    except Exception:  # a malformed domain was refused by the re-check already; here it only differs
        recorded = None
    if recorded not in (domain.to_json(), quick_domain(name).to_json()):
        return f"the domain is neither the built-in lemma {name}'s nor its --quick sub-domain", ""
    if document.get("author_statement") != get(name).statement:
        return f"the author_statement is not the built-in lemma {name}'s words", ""
    return None, f"the author_statement is the built-in lemma {name}'s words"
