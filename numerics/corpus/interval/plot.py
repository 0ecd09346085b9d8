"""``interval.png``: each obligation's smallest margin against b, the proved and unproved parts shaded.

Margins are scaled to be of order one along S: drift as 2b³·κ (κ the lower bound of ḃ = −∂L̂/∂b;
1 on the population's relation), inward as b³·min g, gd as b³·(GD margin)/η (the distance to the
band's edge after a step, in units of the step), each the minimum over a column's leaves, at the
column's lower end. The proved range [b_start, b_end] is shaded green; the column where the proof
stopped red (an obligation certainly false there) or grey (undecided). A second axis shows the
sampled C5 figure of this corpus, |along| at (calibration_a(b), b), with its limit ½.
"""

from __future__ import annotations

from fractions import Fraction

from stumpcheck.numerics.plotting import pyplot, save_figure

__all__ = ["plot_interval", "column_margins"]


def column_margins(document: dict) -> dict:
    """Per column (lower end b): the scaled smallest margins (module docstring), from the certificate."""
    eta = Fraction(document["statement"]["eta"])
    rows: dict = {}
    for leaf in document["leaves"]:
        b0 = Fraction(leaf["b"][0])
        r = rows.setdefault(b0, {"drift": [], "inward": [], "gd": []})
        r["drift"].append(float(2 * b0 ** 3 * Fraction(leaf["drift"])))
        r["gd"].append(float(b0 ** 3 * Fraction(leaf["gd"]) / eta))
        if leaf["inward"] is not None:
            r["inward"].append(float(b0 ** 3 * Fraction(leaf["inward"])))
    out = {"b": sorted(rows)}
    for key in ("drift", "inward", "gd"):
        out[key] = [min(rows[b][key]) if rows[b][key] else None for b in out["b"]]
    out["b"] = [float(b) for b in out["b"]]
    return out


def plot_interval(document: dict, path, *, along=None) -> None:
    """Draw the certificate's margins (and ``along`` = (b values, along values), if given) to ``path``."""
    plt = pyplot()
    fig, ax = plt.subplots(figsize=(7.5, 4.2))
    st = document["statement"]
    margins = column_margins(document) if document.get("leaves") else {"b": []}
    labels = {"drift": "drift 2b³·min ḃ", "inward": "inward b³·min g (edges)", "gd": "gd b³·margin/η"}
    for key, label in labels.items():
        if margins["b"]:
            pts = [(b, v) for b, v in zip(margins["b"], margins[key]) if v is not None and v > 0]
            if pts:
                ax.plot(*zip(*pts), marker=".", lw=1, ms=3, label=label)
    b_start, b_end = float(Fraction(st["b_start"])), float(Fraction(st["b_end"]))
    if b_end > b_start:
        ax.axvspan(b_start, b_end, color="tab:green", alpha=0.08, label="proved")
    end = document.get("end") or {}
    if "b" in end and end.get("status") in ("false", "undecided"):
        lo, hi = (float(Fraction(v)) for v in end["b"])
        colour = "tab:red" if end["status"] == "false" else "grey"
        ax.axvspan(lo, max(hi, lo * 1.02), color=colour, alpha=0.35, label=f"stopped: {end['status']}")
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("b")
    ax.set_ylabel("smallest scaled margin (certified lower bounds)")
    if along is not None and len(along[0]):
        twin = ax.twinx()
        twin.plot(along[0], [abs(v) for v in along[1]], color="black", ls="--", lw=1,
                  label="C5 |along| (sampled)")
        twin.axhline(0.5, color="black", lw=0.6, ls=":")
        twin.set_ylabel("C5 |along| at the relation (sampled)")
        twin.legend(loc="lower right", fontsize=7)
    ax.legend(loc="lower left", fontsize=7)
    ax.set_title(f"corpus interval: b in [{st['b_start']}, {st['b_end']}], eta = {st['eta']}", fontsize=9)
    save_figure(fig, path)
