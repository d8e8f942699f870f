"""Figures a reader can use: every value visible, legends beside the data, counts on integer ticks, a caption.

The helpers every report figure uses (issue 28 item 6):

* :func:`mark_bars`: on a bar chart of ratios, an open circle where a value is 0 (a bar of no length is
  otherwise invisible) and a triangle with the true value written beside it where a value passes the axis
  limit (a capped bar otherwise looks like one that ends there);
* :func:`legend_below`: the legend under the axes (or the figure), out of the data's way, in a readable size;
* :func:`integer_ticks`: ticks only on whole numbers, for axes that count (records, flips, trees, depth);
* :func:`save`: saved with the legend inside the image (``bbox_inches="tight"``) and closed;
* :func:`captioned`: a figure's drawing function carries the caption the report prints under it, saying what
  the error bars are (or that there are none, and why).

The report's own figures (claims and mutants) are drawn here too, from the report's rows alone, so they can
be redrawn from a ``report.json``.
"""
from __future__ import annotations

import math
from pathlib import Path

import numpy as np

__all__ = ["mark_bars", "legend_below", "integer_ticks", "save", "captioned", "caption_of", "claims_figure",
           "mutants_figure", "CLAIMS_CAPTION", "MUTANTS_CAPTION", "pyplot", "redraw_from_json"]


def pyplot():
    """matplotlib's pyplot on the file-only Agg backend."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def captioned(draw, caption: str):
    """``draw`` (a callable saving one PNG at the path it is given) with the caption the report prints under
    the figure: what is drawn and what its error bars are."""
    draw.caption = caption
    return draw


def caption_of(entry) -> str | None:
    """The caption of a report figure entry ``(name, draw)`` or ``(name, draw, caption)``."""
    if len(entry) > 2 and entry[2]:
        return str(entry[2])
    return getattr(entry[1], "caption", None)


def integer_ticks(axis) -> None:
    """Ticks at whole numbers only (``ax.xaxis`` or ``ax.yaxis`` of an axis that counts)."""
    from matplotlib.ticker import MaxNLocator

    axis.set_major_locator(MaxNLocator(integer=True))


def legend_below(where, handles=None, labels=None, *, ncol: int = 2, fontsize: float = 8):
    """A legend under ``where`` (an Axes, or a Figure for one legend shared by its panels), below its tick
    labels and axis label, never over the data. Lays the figure out first (``tight_layout``); call it last."""
    import matplotlib.figure

    is_fig = isinstance(where, matplotlib.figure.Figure)
    fig = where if is_fig else where.figure
    if handles is None:
        handles, labels = [], []
        for ax in (where.axes if is_fig else [where]):
            for h, lab in zip(*ax.get_legend_handles_labels()):
                if lab not in labels and not lab.startswith("_"):
                    handles.append(h)
                    labels.append(lab)
    elif labels is None:
        labels = [h.get_label() for h in handles]
    if not getattr(fig, "_laid_out", False):
        fig.tight_layout()
        fig._laid_out = True
    renderer = fig.canvas.get_renderer()
    if is_fig:
        bottom = min(ax.get_tightbbox(renderer).y0 for ax in fig.axes)
        y = fig.transFigure.inverted().transform((0, bottom))[1]
        return fig.legend(handles, labels, loc="upper center", bbox_to_anchor=(0.5, y), ncol=ncol,
                          fontsize=fontsize, frameon=False)
    bottom = where.get_tightbbox(renderer).y0
    y = where.transAxes.inverted().transform((0, bottom))[1]
    return where.legend(handles, labels, loc="upper center", bbox_to_anchor=(0.5, y), ncol=ncol,
                        fontsize=fontsize, frameon=False)


def save(fig, path, dpi: int = 110) -> None:
    """Save with everything drawn outside the axes (legends below, captions) inside the image, and close."""
    fig.savefig(path, dpi=dpi, bbox_inches="tight")
    pyplot().close(fig)


def mark_bars(ax, y, values, *, cap: float, floor: float = 0.0, colours=None):
    """Marks for the values a horizontal bar cannot show: an open circle at ``floor`` where a value is 0 (or
    below ``floor`` on a log axis) and a triangle at ``cap`` with the true value beside it where a value is
    above ``cap``. Returns the legend handles of the marks drawn (``[]`` when none was needed)."""
    from matplotlib.lines import Line2D

    colours = colours or ["k"] * len(values)
    zero = [(yy, c) for yy, v, c in zip(y, values, colours) if not v > floor]
    over = [(yy, v, c) for yy, v, c in zip(y, values, colours) if v > cap]
    handles = []
    if zero:
        ax.scatter([floor] * len(zero), [z[0] for z in zero], marker="o", s=28, facecolors="white",
                   edgecolors=[z[1] for z in zero], linewidths=1.2, zorder=3, clip_on=False)
        handles.append(Line2D([], [], ls="", marker="o", mfc="white", mec="k", label="lower bound 0 (no bar)"))
    if over:
        ax.scatter([cap] * len(over), [o[0] for o in over], marker=">", s=34, c=[o[2] for o in over], zorder=3,
                   clip_on=False)
        for yy, v, _ in over:
            ax.annotate("∞" if math.isinf(v) else f"{v:.3g}", (cap, yy), xytext=(6, 0), textcoords="offset points",
                        va="center", fontsize=7)
        handles.append(Line2D([], [], ls="", marker=">", color="k", label=f"above {cap:g} (value written)"))
    return handles


def _ratio(lower, claimed) -> float:
    lower, claimed = float(lower), float(claimed)
    if claimed <= 0:
        return math.inf if lower > 0 else 0.0
    return lower / claimed


CLAIMS_CAPTION = ("Each bar is a claim's measured epsilon lower bound divided by its claimed epsilon: a one-sided "
                  "(1 - alpha) confidence bound (the exact loss for exact rows), so there are no error bars. Past "
                  "the dashed line at 1 the claim is violated. An open circle marks a lower bound of 0; a triangle "
                  "marks a ratio above 3, drawn at 3 with its value written beside it. A black diamond, where the "
                  "row's release has an exact law, marks its exact loss over the claim (the truth the bar bounds "
                  "from below; at most 1 for a private learner).")
MUTANTS_CAPTION = ("Each bar is a known-flawed variant's measured epsilon lower bound divided by the epsilon it "
                   "claims (log scale): a one-sided (1 - alpha) confidence bound, so there are no error bars. Every "
                   "bar must cross the dashed line at 1 (the flaw detected). An open circle marks a lower bound of "
                   "0; a triangle marks a ratio above 10, drawn at 10 with its value written beside it.")


def _upper(loss) -> float:
    """The upper end of an exact-loss interval (a JSON copy writes infinity as "inf")."""
    return float(loss[1])


def claims_figure(target: str, claims, path: Path, cap: float = 3.0) -> bool:
    """Each claim's measured lower bound as a fraction of its claimed epsilon: past the line at 1 is a violation."""
    if not claims:
        return False
    plt = pyplot()
    from matplotlib.patches import Patch

    y = np.arange(len(claims))
    # a row whose reading is ε = ∞ (kept state, a deterministic trace) is drawn as ∞, as its verdict reads, not
    # at the sampled bound that came with it
    ratio = [math.inf if c.get("epsilon_reading") == "∞" else _ratio(c["epsilon_lower"], c["epsilon_claimed"])
             for c in claims]
    kinds = {"pass": ("tab:green", "pass, as expected"), "known": ("tab:orange", "violation, as expected (known)"),
             "unexpected": ("tab:red", "NOT the expected verdict"), "passed": ("tab:green", "pass"),
             "inconclusive": ("yellowgreen", "pass, inconclusive (could not have caught 1.25 x the claim)"),
             "refuted": ("tab:red", "violation: the claim is refuted")}
    kind = [_claim_kind(c) for c in claims]
    colours = [kinds[k][0] for k in kind]
    fig, ax = plt.subplots(figsize=(8, 0.28 * len(claims) + 1.6))
    ax.barh(y, [min(r, cap) for r in ratio], color=colours, alpha=0.8, edgecolor="k",
            linewidth=[2.0 if k == "unexpected" else 0.0 for k in kind])
    marks = mark_bars(ax, y, ratio, cap=cap, colours=colours) + _exact_marks(ax, claims, cap)
    ax.axvline(1.0, color="k", lw=1, ls="--")
    ax.set_yticks(y, [c["id"] for c in claims], fontsize=7)
    ax.set_ylim(len(claims) - 0.5, -0.5)
    ax.set_xlim(0, cap)
    ax.set_xlabel(f"epsilon lower bound / claimed epsilon (capped at {cap:g}); past the dashed line: violation")
    ax.set_title(f"{target}: measured privacy loss of each claim", fontsize=9)
    legend_below(ax, [Patch(color=kinds[k][0], label=kinds[k][1]) for k in kinds if k in kind] + marks, ncol=3)
    save(fig, path)
    return True


def _claim_kind(c: dict) -> str:
    """How a claims-figure bar is drawn: against the verdict a target or a claims file expected, or, for a
    user's claim with no stated ``expected`` (``audit check``), as the gate's answer; an inconclusive pass apart
    from a conclusive one."""
    stated = c.get("expected_stated", True)
    if stated and c["verdict"] != c["expected"]:
        return "unexpected"
    if c["verdict"] == "violation":
        return "known" if stated else "refuted"
    if c.get("power") == "inconclusive":
        return "inconclusive"
    return "pass" if stated else "passed"


def _exact_marks(ax, rows, cap: float, floor: float = 0.0) -> list:
    """Black diamonds at each row's exact loss over its claim (upper end of the interval, within
    ``[floor, cap]``), for the rows that have one; the legend handle, or nothing."""
    exact = [(i, min(max(_ratio(_upper(r["exact_loss"]), r["epsilon_claimed"]), floor), cap))
             for i, r in enumerate(rows) if r.get("exact_loss") is not None]
    if not exact:
        return []
    from matplotlib.lines import Line2D

    ax.scatter([r for _, r in exact], [i for i, _ in exact], marker="D", color="k", s=18, zorder=3)
    return [Line2D([], [], marker="D", color="k", ls="", label="exact loss / claim (capped)")]


def mutants_figure(target: str, mutants, path: Path, cap: float = 10.0, floor: float = 0.1) -> bool:
    """Each mutant's lower bound as a multiple of its claim (log scale): every bar must cross the line at 1."""
    if not mutants:
        return False
    plt = pyplot()
    from matplotlib.patches import Patch

    y = np.arange(len(mutants))
    ratio = [_ratio(m["epsilon_lower"], m["epsilon_claimed"]) for m in mutants]
    colours = ["tab:orange" if m["detected"] else "tab:red" for m in mutants]
    fig, ax = plt.subplots(figsize=(8, 0.3 * len(mutants) + 1.6))
    shown = [min(max(r, floor), cap) for r in ratio]
    ax.barh(y, [s - floor for s in shown], left=floor, color=colours, alpha=0.8)
    marks = mark_bars(ax, y, ratio, cap=cap, floor=floor, colours=colours) + _exact_marks(ax, mutants, cap, floor)
    ax.axvline(1.0, color="k", lw=1, ls="--")
    ax.set_xscale("log")
    ax.set_xlim(floor, cap)
    ax.set_yticks(y, [m["id"] for m in mutants], fontsize=7)
    ax.set_ylim(len(mutants) - 0.5, -0.5)
    ax.set_xlabel(f"epsilon lower bound / claimed epsilon (log scale, {floor:g} to {cap:g}); past the dashed line: "
                  "detected")
    ax.set_title(f"{target}: how far each known-flawed variant was caught beyond its claim", fontsize=9)
    handles = [Patch(color="tab:orange", label="detected, as expected")]
    if not all(m["detected"] for m in mutants):
        handles.append(Patch(color="tab:red", label="MISSED"))
    legend_below(ax, handles + marks, ncol=3)
    save(fig, path)
    return True


def redraw_from_json(folder) -> list[str]:
    """Redraw a written report's own figures (claims, mutants) from its ``report.json``, in place: they need
    nothing but the rows. Returns the files redrawn."""
    import json

    folder = Path(folder)
    data = json.loads((folder / "report.json").read_text())
    done = []
    for name, draw, rows in (("claims", claims_figure, data.get("claims")),
                             ("mutants", mutants_figure, data.get("mutants"))):
        path = folder / "figures" / f"{name}.png"
        if rows and path.exists():
            draw(data["target"], rows, path)
            done.append(str(path))
    return done
