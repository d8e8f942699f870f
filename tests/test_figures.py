"""Figures a reader can use (issue 28 item 6): zero and capped values marked, legends beside the data, integer
ticks on counting axes, and a caption under every figure saying what its error bars are."""
import ast
import math
from pathlib import Path

import numpy as np
import pytest

from audit.engine.presentation import figures
from audit.results.report import Report, write_report

ROOT = Path(__file__).resolve().parents[1]


def _claim(i, lower, claimed=1.0, verdict="pass"):
    return {"id": f"c{i}", "subject": "s", "neighbouring": "add-remove", "epsilon_claimed": claimed, "delta": 0.0,
            "epsilon_lower": lower, "epsilon_point": lower, "n_samples": 10, "alpha": 0.05, "verdict": verdict,
            "expected": verdict}


def test_zero_and_capped_bars_get_a_visible_mark():
    plt = figures.pyplot()
    fig, ax = plt.subplots()
    handles = figures.mark_bars(ax, [0, 1, 2, 3], [0.0, 0.5, 7.2, math.inf], cap=3.0)
    offsets = [c.get_offsets().tolist() for c in ax.collections]
    assert [[0.0, 0.0]] in offsets  # an open circle where the bar has no length
    assert [[3.0, 2.0], [3.0, 3.0]] in offsets  # triangles at the cap
    assert {t.get_text() for t in ax.texts} == {"7.2", "∞"}  # the true values written beside them
    assert [h.get_label() for h in handles] == ["lower bound 0 (no bar)", "above 3 (value written)"]
    plt.close(fig)


def _captured(monkeypatch, module):
    """Run a figure's draw and keep the matplotlib figure instead of saving it."""
    kept = []
    monkeypatch.setattr(module, "save", lambda fig, path, dpi=110: kept.append(fig))
    return kept


def _legend_below_axes(ax_or_fig, ax):
    fig = ax.figure
    fig.canvas.draw()
    legends = [ax.get_legend()] if ax.get_legend() else list(fig.legends)
    assert legends
    return all(leg.get_window_extent().y1 <= ax.get_window_extent().y0 for leg in legends)


def test_claims_figure_marks_zeros_and_caps_and_keeps_its_legend_off_the_data(monkeypatch, tmp_path):
    kept = _captured(monkeypatch, figures)
    assert figures.claims_figure("demo", [_claim(0, 0.0), _claim(1, 0.4), _claim(2, 9.0, verdict="violation")],
                                 tmp_path / "c.png")
    (fig,) = kept
    ax = fig.axes[0]
    assert len(ax.collections) == 2 and ax.texts[0].get_text() == "9"
    assert _legend_below_axes(fig, ax)


def test_a_users_claims_are_drawn_as_the_gates_answer_and_an_inconclusive_pass_apart(monkeypatch, tmp_path):
    """``audit check`` without a stated ``expected``: a violation reads as a refuted claim, never as "NOT the
    expected verdict"; an inconclusive pass has its own colour and label."""
    kept = _captured(monkeypatch, figures)
    rows = [dict(_claim(0, 0.9), expected_stated=False, power="conclusive"),
            dict(_claim(1, 0.3), expected_stated=False, power="inconclusive"),
            dict(_claim(2, 2.0, verdict="violation"), expected="pass", expected_stated=False)]
    assert figures.claims_figure("check", rows, tmp_path / "c.png")
    labels = [h.get_label() for h in kept[0].axes[0].get_legend().legend_handles] if kept[0].axes[0].get_legend() \
        else [h.get_label() for leg in kept[0].legends for h in leg.legend_handles]
    assert labels[:3] == ["pass", "pass, inconclusive (could not have caught 1.25 x the claim)",
                          "violation: the claim is refuted"]
    assert not any("NOT the expected" in label for label in labels)


def test_poisoning_figures_count_on_integer_ticks_with_legends_below(monkeypatch, tmp_path):
    from audit.privatree import theorems as t

    kept = _captured(monkeypatch, t)
    rng = np.random.default_rng(0)
    acc = {x: list(0.9 + 0.01 * rng.standard_normal(5)) for x in t.POISON_X}
    asr = {x: list(0.3 + 0.01 * rng.standard_normal(5)) for x in t.POISON_X}
    draw = t.poison_figure(acc, asr, {x: 0.1 * x for x in t.POISON_X})
    assert "error bars" in draw.caption and "99%" in draw.caption
    draw(tmp_path / "p.png")
    curves = {"xs": np.arange(10), "dpa_certified": np.linspace(1, 0, 10), "dpa_acc": {x: 0.9 for x in t.POISON_X},
              "lr_acc": {x: [0.7, 0.71] for x in t.POISON_X}}
    t.comparison_figure(acc, curves)(tmp_path / "c.png")
    for fig in kept:
        fig.canvas.draw()
        for ax in fig.axes:
            ticks = [v for v in ax.get_xticks() if ax.get_xlim()[0] <= v <= ax.get_xlim()[1]]
            assert ticks and all(float(v).is_integer() for v in ticks), ticks
            assert _legend_below_axes(fig, ax)
            assert ax.get_legend().get_texts()[0].get_fontsize() >= 8


def test_utility_figure_has_a_title_and_one_legend_below_every_panel(monkeypatch, tmp_path):
    from audit.privatree import theorems as t

    kept = _captured(monkeypatch, t)
    res = {name: {("PrivaTree", 0.1): (0.6, 0.02), ("PrivaTree", 1.0): (0.8, 0.02),
                  ("histogram CART (non-private)", math.inf): (0.9, 0.01)} for name in ("a", "b")}
    draw = t.utility_figure(res)
    assert "standard error" in draw.caption
    draw(tmp_path / "u.png")
    (fig,) = kept
    assert fig._suptitle is not None and fig._suptitle.get_text()
    assert len(fig.legends) == 1 and all(ax.get_legend() is None for ax in fig.axes)
    assert all(_legend_below_axes(fig, ax) for ax in fig.axes)


def test_report_markdown_has_a_caption_line_under_each_figure(tmp_path):
    rep = Report("demo", "quick", 0)
    rep.claims.append(_claim(0, 0.0))
    rep.figures.append(("own", figures.captioned(lambda p: p.write_bytes(b"png"), "Error bars: NONE-MARK.")))
    rep.figures.append(("third", lambda p: p.write_bytes(b"png"), "Error bars: TUPLE-MARK."))
    md = (write_report(rep, tmp_path) / "report.md").read_text().splitlines()
    images = [i for i, line in enumerate(md) if line.startswith("![")]
    assert len(images) == 3
    for i in images:
        assert md[i + 1] == "" and md[i + 2].startswith("*Figure `"), md[i:i + 3]
    text = "\n".join(md)
    assert "NONE-MARK" in text and "TUPLE-MARK" in text and "error bars" in text  # claims: "no error bars"


def _figure_factories():
    """(path, function name) of every function in audit/ that builds a figure's ``draw``."""
    for path in sorted((ROOT / "audit").rglob("*.py")):
        tree = ast.parse(path.read_text())
        for node in ast.walk(tree):
            if isinstance(node, ast.FunctionDef) and any(
                    isinstance(n, ast.FunctionDef) and n.name == "draw" and [a.arg for a in n.args.args] == ["path"]
                    for n in node.body):
                yield path, node


def test_every_figure_factory_returns_a_captioned_draw_and_every_reproduction_figure_has_a_caption():
    missing = []
    for path, fn in _figure_factories():
        returns = [n for n in ast.walk(fn) if isinstance(n, ast.Return) and n.value is not None]
        if not any("captioned(" in ast.unparse(r.value) for r in returns):
            missing.append(f"{path.relative_to(ROOT)}:{fn.name}")
    assert not missing, missing
    for path in sorted((ROOT / "audit").rglob("reproduce.py")):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Call) and ast.unparse(node.func).endswith("figures.append"):
                assert isinstance(node.args[0], ast.Tuple) and len(node.args[0].elts) == 3, \
                    f"{path.relative_to(ROOT)}:{node.lineno}: a reproduction figure without a caption"


@pytest.mark.parametrize("target", ["privatree", "mechanisms", "diprime"])
def test_committed_claims_and_mutants_figures_can_be_redrawn_from_their_json(target, tmp_path):
    (tmp_path / "figures").mkdir()
    (tmp_path / "report.json").write_text((ROOT / "reports" / target / "report.json").read_text())
    for name in ("claims", "mutants"):
        (tmp_path / "figures" / f"{name}.png").write_bytes(b"old")
    done = figures.redraw_from_json(tmp_path)
    assert len(done) == 2 and all(Path(p).read_bytes().startswith(b"\x89PNG") for p in done)
